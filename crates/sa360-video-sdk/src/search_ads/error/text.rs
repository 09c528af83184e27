//! Text helpers shared by the error messages of this module and its
//! submodules (a file of its own, so `reporting.rs` needs nothing from
//! `mod.rs`, which imports it).

/// `text` without the period (and spaces) it may end with, so a message
/// that goes on with `. ` after it never shows `..` (a server's message or an
/// id list that already ends a sentence).
pub(crate) fn clause(text: &str) -> &str {
    text.trim_end().trim_end_matches('.').trim_end()
}

/// `text` whole when it has at most `max` characters, else cut after its last whole word (or
/// at `max` characters when it has no space) and ended with `…`: never cut mid-word.
pub(crate) fn shortened(text: &str, max: usize) -> String {
    let Some((end, _)) = text.char_indices().nth(max) else {
        return text.to_owned();
    };
    let head = &text[..end];
    let head = match head.rfind(' ') {
        Some(space) if !text[end..].starts_with(' ') => &head[..space],
        _ => head,
    };
    format!("{}…", head.trim_end_matches([' ', ',']))
}

#[cfg(test)]
mod tests {
    use super::{clause, shortened};

    #[test]
    fn a_long_text_is_cut_after_a_whole_word() {
        let ranges = "TODAY, YESTERDAY, LAST_7_DAYS, LAST_WEEK_SUN_SAT, LAST_WEEK_MON_SUN";
        assert_eq!(shortened(ranges, 200), ranges);
        assert_eq!(
            shortened(ranges, 52),
            "TODAY, YESTERDAY, LAST_7_DAYS, LAST_WEEK_SUN_SAT…"
        );
        assert_eq!(shortened("ééééé", 3), "ééé…");
    }

    #[test]
    fn a_trailing_period_and_spaces_go() {
        assert_eq!(clause("no access. "), "no access");
        assert_eq!(clause("ids 1, 2.."), "ids 1, 2");
        assert_eq!(clause("plain"), "plain");
    }
}

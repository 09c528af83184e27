//! Text helpers shared by the error messages of this module and its
//! submodules (a file of its own, so `reporting.rs` needs nothing from
//! `mod.rs`, which imports it).

/// `text` without the period (and spaces) it may end with, so a message
/// that goes on with `. ` after it never shows `..` (a server's message or an
/// id list that already ends a sentence).
pub(crate) fn clause(text: &str) -> &str {
    text.trim_end().trim_end_matches('.').trim_end()
}

#[cfg(test)]
mod tests {
    use super::clause;

    #[test]
    fn a_trailing_period_and_spaces_go() {
        assert_eq!(clause("no access. "), "no access");
        assert_eq!(clause("ids 1, 2.."), "ids 1, 2");
        assert_eq!(clause("plain"), "plain");
    }
}

//! [`printable`]: text from a server, made safe to print on a terminal.
//!
//! An error body, a header or any other text a server chose can hold escape
//! sequences (`ESC [ 31 m` recolours the terminal, `ESC ] 0 ; … BEL` sets its
//! title, some terminals answer queries into their input) or characters that
//! reorder what is shown (bidirectional overrides). Before such text reaches
//! a message that may be printed, every control character (C0, DEL, C1) and
//! every bidirectional control is replaced by its Rust escape (`\u{1b}`),
//! so it shows as text and does nothing.

use std::borrow::Cow;

/// True for characters that must not reach a terminal raw: controls and the
/// bidirectional formatting characters (U+061C, U+200E, U+200F,
/// U+202A..=U+202E, U+2066..=U+2069).
fn is_unsafe(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{061C}' | '\u{200E}' | '\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}'
        )
}

/// `text` with every control character and bidirectional control replaced
/// by its escape (`\u{1b}`, `\n`, `\t`, …); unchanged (borrowed) when it has
/// none.
///
/// ```
/// assert_eq!(sa360_video_client_support::printable("plain"), "plain");
/// assert_eq!(sa360_video_client_support::printable("\u{1b}]0;pwned\u{7}x"), "\\u{1b}]0;pwned\\u{7}x");
/// assert_eq!(sa360_video_client_support::printable("a\nb"), "a\\nb");
/// ```
pub fn printable(text: &str) -> Cow<'_, str> {
    if !text.chars().any(is_unsafe) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        if is_unsafe(c) {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn controls_and_bidi_overrides_are_escaped() {
        assert_eq!(printable("\u{1b}[31mred"), "\\u{1b}[31mred");
        assert_eq!(printable("\u{9b}31m"), "\\u{9b}31m");
        assert_eq!(printable("a\u{202e}b"), "a\\u{202e}b");
        assert_eq!(printable("a\u{7f}"), "a\\u{7f}");
        assert_eq!(printable("héllo → ok"), "héllo → ok");
        assert!(matches!(printable("ok"), Cow::Borrowed(_)));
    }
}

//! [`printable`]: text from a server, made safe to print on a terminal.
//!
//! An error body, a header or any other text a server chose can hold escape
//! sequences (`ESC [ 31 m` recolours the terminal, `ESC ] 0 ; … BEL` sets its
//! title, some terminals answer queries into their input) or characters that
//! reorder what is shown (bidirectional overrides). Before such text reaches
//! a message that may be printed, every control character (C0, DEL, C1) and
//! every bidirectional control is replaced by its Rust escape (`\u{1b}`),
//! so it shows as text and does nothing.
//!
//! [`sh_quote`]: a value made one word for a POSIX shell (the `NAME='value'` lines `apictl sandbox`
//! and the fakes print, the paths in `apictl auth`'s hints).

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

/// Quotes `value` for a POSIX shell: the result is one word that `eval` turns back into `value`.
///
/// Values made only of characters that are never special to `sh` stay as they are; everything else
/// is wrapped in single quotes, with each embedded `'` written as `'\''`.
pub fn sh_quote(value: &str) -> String {
    let plain = !value.is_empty()
        && value
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_./:@%+,=".contains(&b));
    if plain {
        return value.to_owned();
    }
    let mut out = String::with_capacity(value.len() + 2);
    out.push('\'');
    for c in value.chars() {
        if c == '\'' {
            out.push_str("'\\''");
        } else {
            out.push(c);
        }
    }
    out.push('\'');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sh_quote_plain_and_special() {
        assert_eq!(sh_quote("http://127.0.0.1:80/x"), "http://127.0.0.1:80/x");
        assert_eq!(sh_quote(""), "''");
        assert_eq!(sh_quote("a b"), "'a b'");
        assert_eq!(sh_quote("it's"), "'it'\\''s'");
        assert_eq!(sh_quote("$HOME!"), "'$HOME!'");
    }

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

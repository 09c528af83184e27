//! Formats: added, removed, widened (`int32` → `int64`, `float` →
//! `double`), narrowed or changed.

use super::facets::Facets;
use crate::diff::compare::differ::{Differ, Site};
use crate::diff::rules as r;

/// How a format change moves the value set.
#[derive(Debug, PartialEq, Eq)]
enum Moved {
    Narrowed,
    Widened,
    Unrelated,
}

/// `int32` → (signed, 32); `uint64` → (unsigned, 64).
fn int_width(format: &str) -> Option<(bool, u32)> {
    let (signed, bits) = match format.strip_prefix('u') {
        Some(rest) => (false, rest.strip_prefix("int")?),
        None => (true, format.strip_prefix("int")?),
    };
    Some((signed, bits.parse().ok()?))
}

/// Whether every value of format `a` is a value of format `b`.
fn format_within(a: &str, b: &str) -> bool {
    if let (Some((sa, ba)), Some((sb, bb))) = (int_width(a), int_width(b)) {
        return (sa == sb && ba <= bb) || (!sa && sb && ba < bb);
    }
    a == b || (a == "float" && b == "double")
}

fn format_moved(old: &str, new: &str) -> Moved {
    if format_within(old, new) {
        Moved::Widened
    } else if format_within(new, old) {
        Moved::Narrowed
    } else {
        Moved::Unrelated
    }
}

impl<'a> Differ<'a> {
    pub(super) fn format(&mut self, site: &Site, o: &Facets<'a>, n: &Facets<'a>) {
        match (&o.format, &n.format) {
            (None, Some(f)) => self.at(
                site,
                &r::FORMAT_NARROWED,
                format_args!("format `{f}` added"),
            ),
            (Some(f), None) => self.at(
                site,
                &r::FORMAT_WIDENED,
                format_args!("format `{f}` removed"),
            ),
            (Some(a), Some(b)) if a != b => {
                let rule = match format_moved(a, b) {
                    Moved::Narrowed => &r::FORMAT_NARROWED,
                    Moved::Widened => &r::FORMAT_WIDENED,
                    Moved::Unrelated => &r::FORMAT_CHANGED,
                };
                self.at(
                    site,
                    rule,
                    format_args!("format changed from `{a}` to `{b}`"),
                );
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_move_by_their_value_sets() {
        assert_eq!(int_width("int32"), Some((true, 32)));
        assert_eq!(int_width("uint64"), Some((false, 64)));
        assert_eq!(int_width("date-time"), None);
        assert_eq!(format_moved("int32", "int64"), Moved::Widened);
        assert_eq!(format_moved("uint32", "int64"), Moved::Widened);
        assert_eq!(format_moved("int64", "int32"), Moved::Narrowed);
        assert_eq!(format_moved("float", "double"), Moved::Widened);
        assert_eq!(format_moved("uint32", "int32"), Moved::Unrelated);
        assert_eq!(format_moved("date", "date-time"), Moved::Unrelated);
    }
}

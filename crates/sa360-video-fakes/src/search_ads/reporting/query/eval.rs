//! Typed conditions and how a value meets them (the operator semantics of GRAM): comparisons,
//! `IN` / `NOT IN`, `BETWEEN` (inclusive), `LIKE` with `%`, `_` and `[c]` for a literal
//! character, `IS [NOT] NULL`. A field without a value meets only `IS NULL`.

use std::borrow::Cow;
use std::cmp::Ordering;

use chrono::NaiveDate;

use super::parser::Op;

/// A constant of a condition, read for the field's data type.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Const {
    Int(i64),
    Float(f64),
    Str(String),
    Bool(bool),
    Date(NaiveDate),
}

/// A field's value in one row.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Val<'a> {
    Int(i64),
    Float(f64),
    Str(Cow<'a, str>),
    Bool(bool),
    Date(NaiveDate),
}

impl Val<'_> {
    /// The order of two values of one field (values of different kinds do not compare).
    pub(crate) fn cmp_to(&self, other: &Val<'_>) -> Option<Ordering> {
        match (self, other) {
            (Val::Int(a), Val::Int(b)) => Some(a.cmp(b)),
            (Val::Float(a), Val::Float(b)) => a.partial_cmp(b),
            (Val::Str(a), Val::Str(b)) => Some(a.cmp(b)),
            (Val::Bool(a), Val::Bool(b)) => Some(a.cmp(b)),
            (Val::Date(a), Val::Date(b)) => Some(a.cmp(b)),
            _ => None,
        }
    }

    fn cmp_const(&self, c: &Const) -> Option<Ordering> {
        match (self, c) {
            (Val::Int(a), Const::Int(b)) => Some(a.cmp(b)),
            (Val::Int(a), Const::Float(b)) => (*a as f64).partial_cmp(b),
            (Val::Float(a), Const::Float(b)) => a.partial_cmp(b),
            (Val::Float(a), Const::Int(b)) => a.partial_cmp(&(*b as f64)),
            (Val::Str(a), Const::Str(b)) => Some(a.as_ref().cmp(b.as_str())),
            (Val::Bool(a), Const::Bool(b)) => Some(a.cmp(b)),
            (Val::Date(a), Const::Date(b)) => Some(a.cmp(b)),
            _ => None,
        }
    }
}

/// A condition whose values were read for the field's type.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Filter {
    pub field: String,
    pub op: Op,
    /// One value for comparisons, LIKE and DURING/BETWEEN's two bounds, the list for IN.
    pub values: Vec<Const>,
}

impl Filter {
    /// Whether `value` meets the condition.
    pub(crate) fn holds(&self, value: Option<&Val<'_>>) -> bool {
        let Some(v) = value else {
            return self.op == Op::IsNull;
        };
        let first = || self.values.first().and_then(|c| v.cmp_const(c));
        match self.op {
            Op::IsNull => false,
            Op::IsNotNull => true,
            Op::Eq => first() == Some(Ordering::Equal),
            Op::Ne => first().is_some_and(Ordering::is_ne),
            Op::Lt => first() == Some(Ordering::Less),
            Op::Gt => first() == Some(Ordering::Greater),
            Op::Le => first().is_some_and(Ordering::is_le),
            Op::Ge => first().is_some_and(Ordering::is_ge),
            Op::In => self
                .values
                .iter()
                .any(|c| v.cmp_const(c) == Some(Ordering::Equal)),
            Op::NotIn => self
                .values
                .iter()
                .all(|c| v.cmp_const(c).is_some_and(Ordering::is_ne)),
            Op::Between | Op::During => match self.values.as_slice() {
                [lo, hi] => {
                    v.cmp_const(lo).is_some_and(Ordering::is_ge)
                        && v.cmp_const(hi).is_some_and(Ordering::is_le)
                }
                _ => false,
            },
            Op::Like | Op::NotLike => {
                let (Val::Str(s), Some(Const::Str(p))) = (v, self.values.first()) else {
                    return false;
                };
                like(s, p) == (self.op == Op::Like)
            }
            // Refused by the checks for every field the fake catalogues.
            Op::ContainsAny
            | Op::ContainsAll
            | Op::ContainsNone
            | Op::RegexpMatch
            | Op::NotRegexpMatch => false,
        }
    }
}

#[derive(Debug, PartialEq)]
enum Piece {
    Any,
    One,
    Char(char),
}

fn pieces(pattern: &str) -> Vec<Piece> {
    let mut out = Vec::new();
    let mut chars = pattern.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '%' => out.push(Piece::Any),
            '_' => out.push(Piece::One),
            // `[x]` is the literal x (GRAM: "wrap the character in brackets").
            '[' => {
                let mut look = chars.clone();
                match (look.next(), look.next()) {
                    (Some(x), Some(']')) => {
                        out.push(Piece::Char(x));
                        chars = look;
                    }
                    _ => out.push(Piece::Char('[')),
                }
            }
            c => out.push(Piece::Char(c)),
        }
    }
    out
}

/// Whether `text` matches the LIKE `pattern` (linear-time wildcard matching, no backtracking
/// blow-up).
pub(crate) fn like(text: &str, pattern: &str) -> bool {
    let p = pieces(pattern);
    let t: Vec<char> = text.chars().collect();
    let (mut i, mut j) = (0usize, 0usize);
    let mut star: Option<(usize, usize)> = None;
    while i < t.len() {
        match p.get(j) {
            Some(Piece::Any) => {
                star = Some((j, i));
                j += 1;
            }
            Some(Piece::One) => {
                i += 1;
                j += 1;
            }
            Some(Piece::Char(c)) if *c == t[i] => {
                i += 1;
                j += 1;
            }
            _ => match star {
                Some((sj, si)) => {
                    j = sj + 1;
                    i = si + 1;
                    star = Some((sj, si + 1));
                }
                None => return false,
            },
        }
    }
    p[j..].iter().all(|x| *x == Piece::Any)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn filter(op: Op, values: Vec<Const>) -> Filter {
        Filter {
            field: "f".into(),
            op,
            values,
        }
    }

    #[test]
    fn like_patterns() {
        assert!(like("conversion.id", "conversion.%"));
        assert!(like("abc", "a_c"));
        assert!(!like("abc", "a_"));
        assert!(like("50%", "50[%]"));
        assert!(!like("500", "50[%]"));
        assert!(like("a_b", "a[_]b"));
        assert!(like("x[y", "x[y"));
        assert!(like("", "%"));
        assert!(like("aaaaaaaaaaaaaaaaaaaaaab", "%a%a%a%a%a%b"));
        assert!(!like("aaaaaaaaaaaaaaaaaaaaaaa", "%a%a%a%a%a%b"));
    }

    #[test]
    fn operators_on_values_and_nulls() {
        let v = Val::Int(5);
        assert!(filter(Op::Eq, vec![Const::Int(5)]).holds(Some(&v)));
        assert!(filter(Op::Ne, vec![Const::Int(4)]).holds(Some(&v)));
        assert!(filter(Op::Lt, vec![Const::Int(6)]).holds(Some(&v)));
        assert!(filter(Op::Ge, vec![Const::Int(5)]).holds(Some(&v)));
        assert!(!filter(Op::Gt, vec![Const::Int(5)]).holds(Some(&v)));
        assert!(filter(Op::In, vec![Const::Int(1), Const::Int(5)]).holds(Some(&v)));
        assert!(!filter(Op::NotIn, vec![Const::Int(1), Const::Int(5)]).holds(Some(&v)));
        assert!(filter(Op::Between, vec![Const::Int(5), Const::Int(9)]).holds(Some(&v)));
        assert!(!filter(Op::Between, vec![Const::Int(6), Const::Int(9)]).holds(Some(&v)));
        assert!(filter(Op::IsNull, vec![]).holds(None));
        assert!(!filter(Op::IsNotNull, vec![]).holds(None));
        assert!(!filter(Op::Ne, vec![Const::Int(4)]).holds(None));
        let s = Val::Str("ENABLED".into());
        assert!(filter(Op::NotLike, vec![Const::Str("REM%".into())]).holds(Some(&s)));
    }
}

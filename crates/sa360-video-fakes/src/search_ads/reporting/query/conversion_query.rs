//! A checked `FROM conversion` query: what [`checks`](super::checks) makes of a parsed one and
//! what the search reads rows with.

use chrono::NaiveDate;

use super::dates;
use super::eval::{self, Filter};
use super::parser;

/// A checked `searchAds360:search` query (of `conversion` or another served resource).
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct ConversionQuery {
    /// The `FROM` resource (one of `catalogue::SERVED`).
    pub from: &'static str,
    /// Selected fields, in order (query names, snake_case).
    pub select: Vec<String>,
    /// Every WHERE condition, typed (all must hold).
    pub filters: Vec<Filter>,
    /// ORDER BY fields and whether each sorts descending.
    pub order: Vec<(String, bool)>,
    /// `LIMIT`.
    pub limit: Option<u64>,
    /// The range the core-date filters allow.
    pub bounds: dates::Bounds,
    /// First day of rows to read (set by the service from `bounds` and its window).
    pub start: NaiveDate,
    /// Last day of rows to read.
    pub end: NaiveDate,
}

/// The order rows are stored in: by conversion time, then id.
const NATURAL: [&str; 2] = ["conversion.conversion_date_time", "conversion.id"];

impl ConversionQuery {
    /// Whether ORDER BY asks for nothing but the rows' stored order (so pages can be read from a
    /// cursor instead of sorting).
    pub(crate) fn natural_order(&self) -> bool {
        self.order.len() <= NATURAL.len()
            && self
                .order
                .iter()
                .zip(NATURAL)
                .all(|((f, desc), n)| f == n && !desc)
    }

    /// The single values that `=` or a one-element `IN` fixes for an integer field.
    pub(crate) fn fixed_int<'a>(&'a self, field: &'a str) -> impl Iterator<Item = i64> + 'a {
        self.filters
            .iter()
            .filter_map(move |f| match (&f.op, f.values.as_slice()) {
                (parser::Op::Eq | parser::Op::In, [eval::Const::Int(v)]) if f.field == field => {
                    Some(*v)
                }
                _ => None,
            })
    }
}

//! The Search Ads 360 query language, as Google documents it, for what the fake serves.
//!
//! Sources: "Query grammar reference" (GRAM,
//! <https://developers.google.com/search-ads/reporting/query/query-grammar>), "Query structure and
//! clauses" (QS, …/query/query-structure), "Date ranges" (…/query/date-ranges), the conversion
//! resource's field page (CF) and the `queryError` / `dataType` values of the discovery document;
//! `specs/SOURCES.md` restates them.
//!
//! One file per job: [`lexer`] (tokens), [`parser`] (clauses), [`catalog`] (fields and resources,
//! read from discovery), [`checks`] (the rules and their error codes), [`dates`] (`DURING`
//! ranges, period alignment, the range a query covers), [`eval`] (operators on values). No input
//! panics them (the property tests below).

pub(crate) mod catalog;
pub(crate) mod checks;
pub(crate) mod dates;
pub(crate) mod eval;
pub(crate) mod lexer;
pub(crate) mod parser;

use chrono::NaiveDate;

pub(crate) use self::eval::Filter;

/// A query error: the error kind (`queryError` unless said), the code, a message and the
/// offending text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct QueryError {
    pub kind: &'static str,
    pub code: &'static str,
    pub message: String,
    pub trigger: Option<String>,
}

impl QueryError {
    pub(crate) fn new(code: &'static str, message: impl Into<String>) -> Self {
        Self {
            kind: "queryError",
            code,
            message: message.into(),
            trigger: None,
        }
    }

    /// `DATE_RANGE_TOO_WIDE`: a query segmented by date spans `days` days, more than 30.
    pub(crate) fn too_wide(days: i64) -> Self {
        Self::new(
            "DATE_RANGE_TOO_WIDE",
            format!(
                "Date filters fail to restrict date to a range smaller than 31 days ({days} days). \
                 Applicable if the query is segmented by date."
            ),
        )
    }

    pub(crate) fn at(mut self, trigger: impl Into<String>) -> Self {
        self.trigger = Some(trigger.into());
        self
    }
}

/// A checked `searchAds360:search` query (of `conversion` or another served resource).
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct ConversionQuery {
    /// The `FROM` resource (one of `catalog::SERVED`).
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

/// Parses and checks a `searchAds360:search` query; `today` is the account's date.
pub(crate) fn parse(text: &str, today: NaiveDate) -> Result<ConversionQuery, QueryError> {
    checks::conversion_query(parser::parse(text)?, today)
}

#[cfg(test)]
mod tests;

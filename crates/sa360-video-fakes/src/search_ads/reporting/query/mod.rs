//! The Search Ads 360 query language, as Google documents it, for what the fake serves.
//!
//! Sources: "Query grammar reference" (GRAM,
//! <https://developers.google.com/search-ads/reporting/query/query-grammar>), "Query structure and
//! clauses" (QS, …/query/query-structure), "Date ranges" (…/query/date-ranges), the conversion
//! resource's field page (CF) and the `queryError` / `dataType` values of the discovery document;
//! `specs/SOURCES.md` restates them.
//!
//! One file per job: [`lexer`] (tokens), [`parser`] (clauses), [`catalogue`] (fields and resources,
//! read from discovery), [`checks`] (the rules and their error codes), [`dates`] (`DURING`
//! ranges, period alignment, the range a query covers), [`eval`] (operators on values), `error`
//! (the error every step answers with), `conversion_query` (what the checks make of a query). No
//! input panics them (the property tests below).

pub(crate) mod catalogue;
pub(crate) mod checks;
mod conversion_query;
pub(crate) mod dates;
mod error;
pub(crate) mod eval;
pub(crate) mod lexer;
pub(crate) mod parser;

use chrono::NaiveDate;

pub(crate) use self::conversion_query::ConversionQuery;
pub(crate) use self::error::QueryError;
pub(crate) use self::eval::Filter;

/// Parses and checks a `searchAds360:search` query; `today` is the account's date.
pub(crate) fn parse(text: &str, today: NaiveDate) -> Result<ConversionQuery, QueryError> {
    checks::conversion_query(parser::parse(text)?, today)
}

#[cfg(test)]
mod tests;

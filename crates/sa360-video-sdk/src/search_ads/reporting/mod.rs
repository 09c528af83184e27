//! Conversion reads that survive the v2 shutdown: reports on the `conversion` resource of the
//! Search Ads 360 Reporting API (v0), yielding the same typed [`Conversion`](super::Conversion)s as
//! [`SearchAdsClient::list_conversions`](super::SearchAdsClient::list_conversions).
//!
//! - [`SearchAdsClient::conversion_report`](super::SearchAdsClient::conversion_report): a typed query
//!   ([`ReportFilters`], never spliced text), paged with `pageToken`, split by date into shards
//!   fetched concurrently and yielded in order ([`ConversionReport`]).
//! - [`ConversionReportRequest`]'s setters (or a whole [`ReportOptions`]): page size 1..=10 000,
//!   shard length, shards in flight, `login-customer-id`, [`ReportFilters`].
//! - The 60-day window of event-level data is checked before sending.
//! - `RESOURCE_EXHAUSTED` is retried after the error's `retryDelay`; every failure is an
//!   [`Error::Reporting`](super::Error::Reporting) with the typed [`ReportingFailure`].
//! - [`IdLookup`]: legacy ids → new ids from the ID-mapping file.
//! - The field-by-field mapping to [`Conversion`](super::Conversion) is documented in [`mapping`].
//!
//! Reports of any resource:
//!
//! - [`SearchAdsClient::search`](super::SearchAdsClient::search): a [`Query`] (text, or built from
//!   the typed [`fields`]) → [`SearchRequest`] → `.stream::<Row>()` ([`SearchStream`]) or
//!   `.send::<Row>()`, each row deserialized into the caller's `serde` type.
//! - Checked before sending against the field catalogue ([`fields`], generated from the discovery
//!   document and Google's field reference pages, SR-30): [`Error::Query`](super::Error::Query)
//!   with the service's code and the nearest valid name.
//! - Fields newer than the catalogue ([`fields::REVISION`]): [`UnknownFields`] (SR-32) refuses a
//!   name near a catalogued one as a typo and sends any other with a warning (or sends every one,
//!   [`UnknownFields::Send`]); [`CheckedQuery::unknown`] lists them and [`WithUnknown`] brings
//!   their values to the caller beside a typed row.
//! - [`int64`]: `#[serde(with = "int64")]` for the caller's int64 members, which the service
//!   sends as strings of digits.

mod customers;
pub mod fields;
mod ids;
pub mod int64;
pub mod mapping;
mod options;
mod query;
mod query_check;
mod query_clauses;
#[cfg(test)]
mod query_injection_tests;
mod report;
mod request;
mod rpc;
mod search;
mod search_query;
mod source;
mod window;
mod with_unknown;

pub use super::error::{ReportingError, ReportingFailure};
pub use customers::AccessibleCustomersRequest;
pub use ids::{IdLookup, IdLookupRequest};
pub use options::{MAX_REPORT_PAGE_SIZE, MAX_SHARD_DAYS, MAX_SHARDS_IN_FLIGHT, ReportOptions};
pub use query::{
    ConversionStatus, MAX_FILTER_TEXT, MAX_FILTER_VALUES, ReportFilters, SELECTED_FIELDS,
};
pub use query_check::{CheckedQuery, MAX_QUERY_CHARS, UnknownFields};
pub use request::{ConversionReport, ConversionReportRequest};
pub use search::{
    MAX_COLLECTED_ROWS, MAX_SEARCH_PREFETCH, SearchOptions, SearchRequest, SearchStream,
};
pub use search_query::{Condition, DuringRange, Literal, OrderBy, Query};
pub use window::CONVERSION_WINDOW_DAYS;
pub use with_unknown::WithUnknown;

pub use super::client::DEFAULT_REPORTING_BASE_URL;

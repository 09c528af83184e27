//! Reports of any resource through the Search Ads 360 Reporting API (v0); the conversion report
//! is one of them: a sharded `search` over a [`Query`] whose rows are decoded into
//! [`Conversion`](super::Conversion)s.
//!
//! The parts:
//!
//! - The query (`query/`): [`Query`] (`builder.rs`, text or built from the typed [`fields`]; its
//!   literals are the one escaper of query text), [`ReportFilters`] (`filters.rs`: the report's typed
//!   filters, which produce a `Query`), the check against the field catalogue before sending
//!   (`check.rs`, `clauses.rs`: [`Error::Query`](super::Error::Query) with the
//!   service's code and the nearest valid name, `DURING` ranges included; [`UnknownFields`], SR-32).
//! - The pages: `source.rs`, the `searchAds360:search` page source of the page engine
//!   (`search_ads/pages/`: look-ahead, one memory budget, retries, restart after
//!   `EXPIRED_PAGE_TOKEN`); `report.rs`, the conversion report's date shard (restarted after its
//!   last row).
//! - The decoding: rows into the caller's `serde` type ([`WithUnknown`], [`int64`]); for the
//!   report, the generated `SearchAds360Row` mapped field by field ([`mapping`]). A row that does
//!   not fit the caller's type is an [`Error::RowType`](super::Error::RowType) naming the type and
//!   the selected fields.
//! - The requests: [`SearchAdsClient::search`](super::SearchAdsClient::search) →
//!   [`SearchRequest`] ([`SearchOptions`]) → `.stream::<Row>()` or `.send::<Row>()`;
//!   [`SearchAdsClient::conversion_report`](super::SearchAdsClient::conversion_report) →
//!   [`ConversionReportRequest`] ([`ReportOptions`]: page size, shards, filters; the 60-day window
//!   checked before sending) → `.stream()`; [`AccessibleCustomersRequest`]; [`IdLookup`] (legacy
//!   ids → new ids from the ID-mapping file).

mod batches;
mod customers;
pub mod fields;
mod ids;
pub mod int64;
pub mod mapping;
mod options;
mod query;
mod report;
mod request;
mod rpc;
mod search;
mod source;
mod stream;
mod window;
mod with_unknown;

pub use super::error::{ReportingError, ReportingFailure};
pub use customers::AccessibleCustomersRequest;
pub use ids::{IdLookup, IdLookupRequest};
pub use options::{MAX_REPORT_PAGE_SIZE, MAX_SHARD_DAYS, ReportOptions};
pub use query::builder::{Condition, DuringRange, Literal, OrderBy, Query};
pub use query::check::{CheckedQuery, MAX_QUERY_CHARS, UnknownFields};
pub use query::filters::{
    ConversionStatus, MAX_FILTER_TEXT, MAX_FILTER_VALUES, ReportFilters, SELECTED_FIELDS,
};
pub use request::{ConversionReport, ConversionReportRequest};
pub use search::{
    MAX_COLLECTED_ROWS, SearchOptions, SearchReport, SearchRequest, SearchStream, SummaryRow,
};
pub use stream::{ColumnHeader, ColumnHeaders};
pub use window::CONVERSION_WINDOW_DAYS;
pub use with_unknown::WithUnknown;

pub use super::client::DEFAULT_REPORTING_BASE_URL;

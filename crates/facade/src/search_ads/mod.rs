//! Search Ads 360 (legacy API v2): authentication, conversion streams, safe
//! batch uploads, availability, the ID-mapping file and saved columns, on top
//! of the generated `search-ads-client`.
//!
//! - **Auth**: a [`TokenSource`] is asked for a bearer token before every
//!   request: [`StaticToken`], or `ServiceAccount` (feature `service-account`; Google's JWT-bearer
//!   grant against the key file's `token_uri`).
//! - **Typed values** ([`values`]): integer ids that travel as strings, dates
//!   as [`chrono::NaiveDate`] (`yyyymmdd` on the wire), timestamps as
//!   [`chrono::DateTime<Utc>`](chrono::DateTime) (epoch milliseconds),
//!   [`Micros`], and open enums that keep unknown server values.
//! - **Reading**: [`SearchAdsClient::list_conversions`] and
//!   [`SearchAdsClient::list_conversions_by_customer`] return a [`ConversionStream`]
//!   that pages with `startRow`/`rowCount`, optionally several pages at once.
//! - **Writing**: [`SearchAdsClient::insert`] and [`SearchAdsClient::update`] take any
//!   iterator (or, `_stream`, any stream) of conversions and return a
//!   [`WriteRequest`] builder: `.options(..)`, `.progress(..)`,
//!   `.resubmission(..)`, then `.send()` for a [`WriteReport`] with one
//!   [`Outcome`] per conversion, or `.stream()` for a [`WriteBatch`] at a time
//!   in input order with bounded memory. Batches go out with bounded
//!   concurrency and retries; a repeated insert never stores twice (see
//!   [`mod@write`]).
//! - **JSON**: [`Conversion`] and [`Availability`] (de)serialize as the API's
//!   resources (field names, digits in strings), so files of conversions read
//!   and write through serde without a mapping of one's own.
//! - **Errors**: one [`Error`]; **tracing**: a `search_ads.request` span per
//!   attempt with `operation`, `attempt`, `status`, `duration_ms` and
//!   `outcome`, never a header or a token.
//!
//! See the crate documentation for a complete example.

mod auth;
mod availability;
mod call;
mod client;
mod conversion;
mod error;
mod id_mapping;
mod read;
pub mod reporting;
mod retry;
mod saved_columns;
#[cfg(feature = "service-account")]
mod service_account;
pub mod values;
mod wire;
pub mod write;
mod write_options;

pub use auth::{AccessToken, SCOPE, StaticToken, TokenSource};
pub use availability::UpdateAvailabilityRequest;
pub use client::{DEFAULT_BASE_URL, SearchAdsClient, SearchAdsClientBuilder};
pub use conversion::{Availability, Conversion, CustomDimension, CustomMetric, SavedColumn};
pub use error::{ConversionIssue, Error, IssueCode};
pub use id_mapping::{
    EntityIds, HEADER as ID_MAPPING_HEADER, IdMappingRequest, IdMappingRow, IdMappingStream,
    ProgressFn,
};
pub use read::{
    ConversionStream, DateRange, EngineAccount, ListConversionsRequest, ListOptions, MAX_PAGE_SIZE,
    MAX_PREFETCH,
};
pub use reporting::{
    AccessibleCustomersRequest, ConversionReport, ConversionReportRequest, ConversionStatus,
    DEFAULT_REPORTING_BASE_URL, IdLookup, IdLookupRequest, MAX_SHARD_DAYS, ReportFilters,
    ReportOptions, ReportingError, ReportingFailure,
};
pub use retry::RetryPolicy;
pub use saved_columns::SavedColumnsRequest;
#[cfg(feature = "service-account")]
pub use service_account::ServiceAccount;
pub use values::{
    AdGroupId, AdId, AdvertiserId, AgencyId, CampaignId, Channel, Consent, ConversionState,
    ConversionType, CriterionId, CustomerId, DeviceType, DsConversionId, EngineAccountId,
    EntityType, IdParseError, InventoryAccountId, Micros, ProductGroupId, SegmentationId,
    SegmentationType,
};
pub use write::{
    DEFAULT_BATCH_SIZE, InputCheck, MAX_BATCH_SIZE, MAX_CONCURRENCY, MAX_ID_CHARS, MAX_TEXT_CHARS,
    Outcome, WriteBatch, WriteOptions, WriteProgress, WriteProgressFn, WriteReport, WriteRequest,
    WriteStream, WriteStreamStats,
};

//! Search Ads 360 (legacy API v2): authentication, conversion streams, safe
//! batch uploads, availability, the ID-mapping file and saved columns, on top
//! of the generated `sa360-v2-client`.
//!
//! - **Auth**: a [`TokenSource`] is asked for a bearer token before every
//!   request: [`DefaultCredentials`] (Application Default Credentials:
//!   `GOOGLE_APPLICATION_CREDENTIALS`, gcloud's file, the metadata server),
//!   [`AuthorizedUser`] (client id + secret + refresh token, as Google's SA360
//!   guides sign in; [`auth::installed`] gets the refresh token), `ServiceAccount`
//!   (feature `service-account`; Google's JWT-bearer grant against the key
//!   file's `token_uri`), [`MetadataServer`] or a fixed [`StaticToken`].
//! - **Typed values**: integer ids that travel as strings, dates
//!   as [`chrono::NaiveDate`] (`yyyymmdd` on the wire), timestamps as
//!   [`chrono::DateTime<Utc>`](chrono::DateTime) (epoch milliseconds),
//!   [`Micros`], and open enums that keep unknown server values.
//! - **Every operation is a request builder**: a method of [`SearchAdsClient`] takes the
//!   required inputs and returns `<Operation>Request`; per-call options are its setters;
//!   `.send().await` returns one answer, `.stream()` a stream whose first and only item is the
//!   error when the input is refused (nothing is sent then).
//!
//!   | method | request | answer |
//!   |---|---|---|
//!   | [`conversion_report`](SearchAdsClient::conversion_report) | [`reporting::ConversionReportRequest`] | `.stream()`: [`reporting::ConversionReport`] |
//!   | [`search`](SearchAdsClient::search) (a report of any resource) | [`SearchRequest`](reporting::SearchRequest) | `.stream::<Row>()`: [`SearchStream`](reporting::SearchStream); `.send::<Row>()`: the rows |
//!   | [`list_conversions`](SearchAdsClient::list_conversions), [`list_conversions_by_customer`](SearchAdsClient::list_conversions_by_customer) (v2, deprecated upstream) | [`ListConversionsRequest`] | `.stream()`: [`ConversionStream`] |
//!   | [`insert`](SearchAdsClient::insert), [`update`](SearchAdsClient::update) (and `_stream`) | [`WriteRequest`] | `.send()`: [`WriteReport`]; `.stream()`: [`WriteStream`] |
//!   | [`update_availability`](SearchAdsClient::update_availability) | [`UpdateAvailabilityRequest`] | `.send()`: the echo |
//!   | [`saved_columns`](SearchAdsClient::saved_columns) | [`SavedColumnsRequest`] | `.send()`: [`SavedColumn`]s |
//!   | [`accessible_customers`](SearchAdsClient::accessible_customers) | [`reporting::AccessibleCustomersRequest`] | `.send()`: [`CustomerId`]s |
//!   | [`id_mapping`](SearchAdsClient::id_mapping) | [`IdMappingRequest`] | `.stream()`: [`IdMappingStream`]; `.save(path)`: bytes |
//!   | [`id_lookup`](SearchAdsClient::id_lookup) | [`reporting::IdLookupRequest`] | `.send()`: [`reporting::IdLookup`] |
//! - **Writing**: batches go out with bounded concurrency and retries; one [`Outcome`] per
//!   conversion, in input order; a repeated insert never stores twice (see [`WriteRequest`] and [`WriteJournal`]).
//! - **JSON**: [`Conversion`] and [`Availability`] (de)serialize as the API's
//!   resources (field names, digits in strings), so files of conversions read
//!   and write through serde without a mapping of one's own.
//! - **Errors**: one [`Error`]; every refused input (including an [`IdParseError`] or a
//!   refused base URL) converts into it. **Tracing**: a `search_ads.request` span per
//!   attempt with `operation`, `attempt`, `status`, `duration_ms` and
//!   `outcome`, never a header or a token.
//!
//! - **One path per item**: the v2 operations, the ids, dates and resources both APIs share,
//!   the credentials and the one error are here (`search_ads::CampaignId`); the Reporting
//!   API's reports, queries and field catalogue are in [`reporting`]; the environment
//!   variables, Google's endpoints and the installed-app flow are in [`auth`]. No item has a
//!   second public path (`cargo xtask api --rule one-path`).
//!
//! See the crate documentation for a complete example.
//!
//! # Where things live
//!
//! Modules depend one way: leaves first, operations on top, nothing imports a module that
//! imports it.
//!
//! - Leaves (import no operation module): `values.rs` (ids, dates, money), `conversion.rs`
//!   (the resources), `error/` (the one [`Error`], Google's detail lists, the Reporting API's
//!   typed failure), `wire/` (to and from the generated types, Google's error envelope),
//!   `retry.rs`, `call.rs` (deadline, retries, fresh tokens), `pages/` (the page engine every
//!   paged read goes through: [`Rows`]), `auth/`
//!   (token sources; `auth/token.rs` holds the token and the trait every source implements,
//!   `auth/credential_kind.rs` the kind of credential errors name), `write/options.rs` (the
//!   batching defaults the client holds).
//! - `client.rs`: [`SearchAdsClient`] and its builder; it imports no operation module.
//! - Operations, each adding its methods to `SearchAdsClient` in an `impl` block of its own:
//!   `read/` (v2 reads), `reporting/` (reports of any resource: `search.rs`; `request.rs`: the
//!   conversion report; `customers.rs`; `ids.rs`: the lookup; the query, its check, the page
//!   source and the decoding beside them), `write/` (inserts and
//!   updates), `availability.rs`, `saved_columns.rs`, `id_mapping/` (`request.rs`: the
//!   download; rows, parser, resumable save beside it). `reporting/ids.rs` uses the ID-mapping
//!   download, never the other way round.
//! - A `mod.rs` only declares its children and re-exports; children never import it, they
//!   name the sibling that defines an item. `cargo xtask api --rule module-cycles` checks all
//!   of this (CI runs it).

pub mod auth;
mod availability;
mod call;
mod client;
mod conversion;
mod date_range;
mod engine_account;
mod error;
mod id_mapping;
mod pages;
mod read;
pub mod reporting;
mod retry;
mod saved_columns;
#[cfg(test)]
mod test_support;
mod values;
mod wire;
mod write;

#[cfg(feature = "service-account")]
pub use auth::service_account::ServiceAccount;
pub use auth::{
    adc::{CredentialOrigin, DefaultCredentials, DefaultCredentialsBuilder},
    authorized_user::{AuthorizedUser, AuthorizedUserBuilder},
    credential_kind::CredentialKind,
    external_account::ExternalAccount,
    impersonated::ImpersonatedServiceAccount,
    metadata::{MetadataServer, MetadataServerBuilder},
    token::{AccessToken, StaticToken, TokenSource},
};
pub use availability::UpdateAvailabilityRequest;
pub use client::{
    BASE_URL_ENV, DEFAULT_BASE_URL, REPORTING_BASE_URL_ENV, SearchAdsClient, SearchAdsClientBuilder,
};
pub use conversion::{Availability, Conversion, CustomDimension, CustomMetric, SavedColumn};
pub use date_range::DateRange;
pub use engine_account::EngineAccount;
pub use error::{ConversionIssue, Error, IssueCode};
pub use id_mapping::{
    EntityIds, HEADER as ID_MAPPING_HEADER, IdMappingRequest, IdMappingRow, IdMappingStream,
    ProgressFn,
};
pub use pages::{Paging, Rows};
pub use read::{ConversionStream, ListConversionsRequest, ListOptions, MAX_PAGE_SIZE};
pub use retry::RetryPolicy;
pub use saved_columns::SavedColumnsRequest;
pub use values::{
    AdGroupId, AdId, AdvertiserId, AgencyId, CampaignId, Channel, Consent, ConversionState,
    ConversionType, CriterionId, CustomerId, DeviceType, DsConversionId, EngineAccountId,
    EntityType, IdParseError, InventoryAccountId, MAX_CUSTOMER_ID_DIGITS, MAX_DATE, MIN_DATE,
    Micros, ProductGroupId, SegmentationId, SegmentationType, from_epoch_millis, from_yyyymmdd,
    to_epoch_millis, to_yyyymmdd,
};
pub use write::{
    BeforeSendFn, DEFAULT_BATCH_SIZE, InputCheck, JournalState, MAX_BATCH_SIZE, MAX_CONCURRENCY,
    MAX_ID_CHARS, MAX_JOURNAL_TEXT, MAX_TEXT_CHARS, Outcome, Resume, WriteBatch, WriteJournal,
    WriteOptions, WriteProgress, WriteProgressFn, WriteReport, WriteRequest, WriteStream,
    WriteStreamStats,
};

//! Typed, safe clients for the search ads and video session services.
//!
//! This is the crate applications depend on. It sits on top of the clients that
//! `cargo xtask generate` writes from the reviewed OpenAPI specs and enforces what
//! the services' documents only state in prose:
//!
//! - [`video_session`]: login that never locks an account by itself, invitations
//!   that cannot name two channels, a typed call-experience builder, secrets that
//!   never print.
//! - [`search_ads`]: OAuth, conversion streams, safe batch uploads, the ID-mapping
//!   stream and one typed error; conversion reports through the Search Ads 360 Reporting API
//!   (see [the migration section](#migrating-conversion-reads-to-the-reporting-api)).
//!
//! # One call style
//!
//! Every operation is a method on its client that returns a request builder named after it
//! ([`ConversionReportRequest`](search_ads::reporting::ConversionReportRequest),
//! [`WriteRequest`](search_ads::WriteRequest), ...). Required inputs are the method's
//! arguments; per-call options are setters on the builder, named after the option and never
//! fallible; `.send().await` returns one answer and `.stream()` returns a stream (an invalid
//! input is then its first and only item, before anything is sent). Client-wide defaults are
//! setters on the client builder, checked by `build()`. Option structs
//! ([`ReportOptions`](search_ads::reporting::ReportOptions), [`WriteOptions`](search_ads::WriteOptions),
//! ...) are `#[non_exhaustive]` with public fields and setters of the same names:
//! `ReportOptions::default().shard_days(14)`. Every error of the search ads client, including
//! a refused input such as an unparsable id, is a [`search_ads::Error`].
//! - [`http`]: the transport rules both share (HTTPS, redirects, timeouts).
//!
//! # Cargo features
//!
//! - `service-account` (off by default): `search_ads::ServiceAccount`, Google's
//!   service-account key files, through the `gcp_auth` crate (it signs the
//!   assertion; the SDK exchanges it). Without it every other credential
//!   below still works, and the build skips `gcp_auth` (about 45 s of CPU on a clean build, SA-25).
//! - `redis` (off by default): `video_session::RedisStore`, the lockout store that replicas
//!   share on a Redis server (standalone, Sentinel or Cluster, TLS with `rediss://`).
//! - `phone-numbers` (on by default): `video_session::MobileNumber::new` checks a number
//!   against its country's numbering plan with libphonenumber's data (the `phonenumber`
//!   crate) and sends it in E.164; without it only the shape (6 to 15 digits) is checked.
//! - `test-util` (off by default): test seams for an application's own tests,
//!   `video_session::ManualClock` and `search_ads::reporting::ConversionReportRequest::today`; for
//!   `[dev-dependencies]` only.
//!
//! On docs.rs every feature is on, and each item that needs one says which.
//!
//! # Signing in to Search Ads 360
//!
//! Google's SA360 guides sign in as a Google **user**: an OAuth client of type
//! "Desktop app" (client id + secret) and a refresh token from the installed-app
//! flow. [`DefaultCredentials`](search_ads::DefaultCredentials) finds them the way
//! Google's libraries do (Application Default Credentials):
//!
//! 1. the file named by `GOOGLE_APPLICATION_CREDENTIALS` (`authorized_user`,
//!    `service_account`, `impersonated_service_account` or `external_account`;
//!    other types are refused by name), for example the file `apictl auth login`
//!    writes (`apictl auth status` shows where);
//! 2. gcloud's `application_default_credentials.json` (under `CLOUDSDK_CONFIG`, else
//!    `~/.config/gcloud`), written by
//!    `gcloud auth application-default login --scopes=https://www.googleapis.com/auth/doubleclicksearch`;
//! 3. the metadata server on Google Cloud (`GCE_METADATA_HOST` overrides its host),
//!    if it answers a short probe (once per process); a machine whose DMI product name
//!    (`/sys/class/dmi/id/product_name`) is readable and does not say `Google` is not
//!    probed. When nothing is found, the error is
//!    [`search_ads::Error::NoCredentials`].
//!
//! The quota project (`x-goog-user-project`) is `GOOGLE_CLOUD_QUOTA_PROJECT`, else the
//! file's `quota_project_id`.
//!
//! **A credentials file you did not write is code you run.** It names the URLs your
//! secrets are sent to (the refresh token, a key's assertion, a workload's identity
//! token) and the files and URLs they are read from. As Google's own documentation
//! now warns (<https://cloud.google.com/docs/authentication/external/externally-sourced-credentials>),
//! check any credentials file that comes from outside (a download, an upload, a
//! colleague) before you use it. This SDK sends secrets from a file only to
//! the Google hosts named for each field (`oauth2.googleapis.com`,
//! `sts.googleapis.com`, `iamcredentials.googleapis.com`); to loopback only when your
//! application points at local fakes; elsewhere only if you opt out with
//! [`allow_non_google_token_hosts`](search_ads::DefaultCredentialsBuilder::allow_non_google_token_hosts),
//! which hands that choice to the file's author (DECISIONS SA-36).
//!
//! ```no_run
//! use sa360_video_sdk::search_ads::{DefaultCredentials, SearchAdsClient};
//! let credentials = DefaultCredentials::new()?;
//! let client = SearchAdsClient::new(credentials)?;
//! # Ok::<(), sa360_video_sdk::search_ads::Error>(())
//! ```
//!
//! The sources one by one: [`AuthorizedUser`](search_ads::AuthorizedUser) (client id,
//! secret, refresh token, or an `authorized_user` file),
//! [`installed`](search_ads::auth::installed) (the installed-app flow with PKCE and a
//! loopback redirect, which gives that refresh token; `apictl auth login` runs it),
//! `ServiceAccount`, [`MetadataServer`](search_ads::MetadataServer), a fixed
//! [`StaticToken`](search_ads::StaticToken), or a [`TokenSource`](search_ads::TokenSource)
//! of your own. Tokens are cached and renewed 30 s before they expire; concurrent
//! calls share one refresh; a 401 drops exactly the refused token and the call is
//! sent once more. Token-endpoint and metadata answers have the API's bounds (size,
//! stall, timeouts, no redirect to another origin); an unreachable or busy token
//! endpoint is retried under the client's `RetryPolicy`; a revoked or expired refresh
//! token is [`Error::InvalidGrant`](search_ads::Error::InvalidGrant), whose message
//! says how to sign in again (refresh tokens of a client in "Testing" status expire
//! after 7 days). No secret appears in `Debug`, `Display`, errors or logs.
//!
//! # Search ads in one example
//!
//! Authenticate with a service-account key (feature `service-account`), stream
//! conversions, upload a batch and download the ID mapping. Here the in-process fake of `sa360-video-fakes`
//! stands in for Google: its key file's `token_uri` points at the fake's token
//! endpoint, so the real OAuth exchange runs. Against Google, read the key
//! with `ServiceAccount::from_file`
//! and keep the default base URL.
//!
//! ```
//! use chrono::{DateTime, NaiveDate};
//! use futures::TryStreamExt;
//! use sa360_video_sdk::search_ads::{
//!     AdvertiserId, AgencyId, Conversion, DateRange, EngineAccount, Outcome, SearchAdsClient,
//!     SegmentationId, ServiceAccount,
//! };
//!
//! # #[tokio::main(flavor = "multi_thread", worker_threads = 2)]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let fake = sa360_video_fakes::SearchAdsFake::builder()
//!     .conversions_per_account(1_500)
//!     .start()
//!     .await?;
//! let account = &fake.accounts()[0];
//!
//! // Authenticate: the client asks the token source before every request.
//! let tokens = ServiceAccount::from_json(&fake.service_account_key_json())?;
//! let client = SearchAdsClient::builder(tokens).base_url(fake.base_url()).build()?;
//!
//! // Stream conversions, five pages of 300 at a time in flight.
//! let (agency, advertiser) = (AgencyId::new(account.agency_id), AdvertiserId::new(account.advertiser_id));
//! let engine = EngineAccount::new(agency, advertiser, account.engine_account_id);
//! let day = |d| NaiveDate::from_ymd_opt(2024, 1, d).ok_or("no such day");
//! let january = DateRange::new(day(1)?, day(31)?)?;
//! #[allow(deprecated)] // conversion.get is deprecated by Google, and still answers
//! let conversions: Vec<Conversion> = client
//!     .list_conversions(engine, january)
//!     .page_size(300)
//!     .look_ahead(5)
//!     .stream()
//!     .try_collect()
//!     .await?;
//! assert_eq!(conversions.len(), 1_500);
//!
//! // Upload a batch: one outcome per conversion, in input order.
//! let mut batch = Vec::new();
//! for i in 0..250 {
//!     let when = DateTime::from_timestamp_millis(1_717_200_000_000 + i).ok_or("bad time")?;
//!     batch.push(Conversion {
//!         agency_id: Some(agency),
//!         advertiser_id: Some(advertiser),
//!         segmentation_id: Some(SegmentationId::new(551_234)), // a Floodlight activity
//!         ..Conversion::new(format!("order-{i}"), when)
//!     });
//! }
//! let report = client.insert(&batch).send().await?;
//! assert!(report.all_stored(), "{report}");
//! for (i, outcome) in report.outcomes().iter().enumerate() {
//!     if let Outcome::Rejected(issue) = outcome {
//!         eprintln!("conversion {i} rejected: {issue}");
//!     }
//! }
//!
//! // Download the ID mapping as typed rows, in constant memory.
//! let mut rows = client
//!     .id_mapping(agency, advertiser)
//!     .progress(|bytes, total| eprintln!("{bytes} of {total:?} bytes"))
//!     .stream();
//! let mut campaigns = 0;
//! while let Some(row) = rows.try_next().await? {
//!     if let (Some(legacy), Some(new)) = (row.legacy.campaign_id, row.new.campaign_id) {
//!         campaigns += 1;
//!         let _ = (legacy, new); // e.g. write the pair to your mapping table
//!     }
//! }
//! assert!(campaigns > 0);
//! # Ok(())
//! # }
//! ```
//!
//! # Migrating conversion reads to the Reporting API
//!
//! Google deprecated `conversion.get` and `conversion.getByCustomerId` (removal scheduled for
//! Q3 2025); conversions are now read with a report on the `conversion` resource of the Search
//! Ads 360 Reporting API. [`SearchAdsClient::conversion_report`](search_ads::SearchAdsClient::conversion_report)
//! is that report and yields the same [`Conversion`](search_ads::Conversion) type, so the change is
//! one line:
//!
//! ```text
//! - let stream = client.list_conversions(engine_account, dates).stream();
//! + let stream = client.conversion_report(customer_id, dates).stream();
//! ```
//!
//! What differs: the account is the new customer id (ten digits) instead of agency / advertiser /
//! engine account, campaign and ad-group ids are the new platform's (an
//! [`IdLookup`](search_ads::reporting::IdLookup) built from the ID-mapping file translates legacy ones and
//! names any it does not know), only the last 60 days are served, and fields v0 does not have
//! stay `None` (the list is in [`search_ads::reporting::mapping`]). A client account reached
//! through a manager needs
//! the client's
//! [`login_customer_id`](search_ads::SearchAdsClientBuilder::login_customer_id).
//!
//! ```
//! use chrono::Days;
//! use futures::TryStreamExt;
//! use sa360_video_sdk::search_ads::{
//!     AdvertiserId, AgencyId, Conversion, DateRange, EngineAccount, ListOptions, SearchAdsClient,
//!     StaticToken,
//! };
//!
//! # #[tokio::main(flavor = "multi_thread", worker_threads = 2)]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! # let today = chrono::DateTime::<chrono::Utc>::from(std::time::SystemTime::now()).date_naive();
//! // A fake whose conversions run up to today; against Google keep the default URLs.
//! let fake = sa360_video_fakes::SearchAdsFake::builder()
//!     .conversions_per_account(3_000)
//!     .conversions_per_day(100)
//!     .start_date(today - Days::new(29))
//!     .start()
//!     .await?;
//! let client = SearchAdsClient::builder(StaticToken::new(fake.dev_token()))
//!     .base_url(fake.base_url())
//!     .reporting_base_url(fake.reporting_url())
//!     .build()?;
//! let a = &fake.accounts()[0];
//! let (agency, advertiser) = (AgencyId::new(a.agency_id), AdvertiserId::new(a.advertiser_id));
//! let engine_account = EngineAccount::new(agency, advertiser, a.engine_account_id);
//! let dates = DateRange::new(today - Days::new(6), today)?;
//!
//! // Before: the deprecated v2 read.
//! #[allow(deprecated)]
//! let before: Vec<Conversion> =
//!     client.list_conversions(engine_account, dates).stream().try_collect().await?;
//!
//! // After: the legacy engine account's customer from the ID-mapping file, then the report.
//! let lookup = client.id_lookup(agency, advertiser).send().await?;
//! let (customer_id, filters) = lookup.translate(engine_account, &ListOptions::default())?;
//! let after: Vec<Conversion> = client
//!     .conversion_report(customer_id, dates)
//!     .filters(filters)
//!     .stream()
//!     .try_collect()
//!     .await?;
//!
//! assert_eq!(after.len(), before.len());
//! for (old, new) in before.iter().zip(&after) {
//!     assert_eq!(new.conversion_id, old.conversion_id);
//!     assert_eq!(new.conversion_timestamp, old.conversion_timestamp);
//!     assert_eq!(new.revenue_micros, old.revenue_micros);
//!     assert_eq!(new.campaign_id, old.campaign_id.and_then(|id| lookup.campaign(id)));
//! }
//! # Ok(())
//! # }
//! ```
//!
//! # Reports of any resource
//!
//! [`SearchAdsClient::search`](search_ads::SearchAdsClient::search) runs a query of the Search Ads
//! 360 query language and decodes each row into your own `serde` struct, nested as the service's
//! JSON is (members in camelCase). A [`Query`](search_ads::reporting::Query) is text, or built from
//! the generated field constants of [`fields`](search_ads::reporting::fields), so a misspelt field
//! does not compile; either way it is checked against the field catalogue before anything is sent,
//! and a misspelt name in text comes back as [`Error::Query`](search_ads::Error::Query) with the
//! nearest valid one. The service sends int64 values as strings of digits and leaves zero metrics
//! out: read them with [`int64`](search_ads::reporting::int64) and `default`.
//!
//! ```
//! use futures::TryStreamExt;
//! use sa360_video_sdk::search_ads::reporting::fields::{self, Resource};
//! use sa360_video_sdk::search_ads::reporting::{DuringRange, Query, int64};
//! use sa360_video_sdk::search_ads::{Error, SearchAdsClient, StaticToken};
//! use serde::Deserialize;
//!
//! #[derive(Deserialize)]
//! struct Row {
//!     campaign: Campaign,
//!     segments: Segments,
//!     #[serde(default)]
//!     metrics: Metrics,
//! }
//! #[derive(Deserialize)]
//! struct Campaign {
//!     #[serde(with = "int64")]
//!     id: i64,
//! }
//! #[derive(Deserialize)]
//! struct Segments {
//!     date: chrono::NaiveDate,
//! }
//! #[derive(Default, Deserialize)]
//! #[serde(rename_all = "camelCase")]
//! struct Metrics {
//!     #[serde(default, with = "int64")]
//!     impressions: i64,
//!     #[serde(default, with = "int64")]
//!     clicks: i64,
//!     #[serde(default, with = "int64")]
//!     cost_micros: i64,
//! }
//!
//! # #[tokio::main(flavor = "multi_thread", worker_threads = 2)]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! # let today = chrono::DateTime::<chrono::Utc>::from(std::time::SystemTime::now()).date_naive();
//! // The fake stands in for Google, with conversions up to today; against Google keep the
//! // default URL.
//! let fake = sa360_video_fakes::SearchAdsFake::builder()
//!     .start_date(today - chrono::Days::new(29))
//!     .start()
//!     .await?;
//! let client = SearchAdsClient::builder(StaticToken::new(fake.dev_token()))
//!     .reporting_base_url(fake.reporting_url())
//!     .build()?;
//! let customer = fake.accounts()[0].customer_id.parse()?;
//!
//! // Google's first example report: campaigns by day over the last 30 days.
//! let query = Query::select([
//!     fields::campaign::ID,
//!     fields::segments::DATE,
//!     fields::metrics::IMPRESSIONS,
//!     fields::metrics::CLICKS,
//!     fields::metrics::COST_MICROS,
//! ])
//! .from(Resource::Campaign)
//! .where_(fields::segments::DATE.during(DuringRange::Last30Days));
//! let rows: Vec<Row> = client.search(customer, query).stream().try_collect().await?;
//! assert!(!rows.is_empty());
//! assert!(rows.iter().all(|r| r.metrics.impressions >= r.metrics.clicks));
//! let spent: i64 = rows.iter().map(|r| r.metrics.cost_micros).sum();
//! assert!(spent > 0 && rows.iter().all(|r| r.segments.date <= today));
//!
//! // The same as text; a misspelt field is refused before sending, with the nearest name.
//! let text = Query::text("SELECT campaign.id, metrics.clikcs FROM campaign");
//! match client.search(customer, text).send::<Row>().await {
//!     Err(Error::Query { code, suggestion, .. }) => {
//!         assert_eq!(code, "UNRECOGNIZED_FIELD");
//!         assert_eq!(suggestion.as_deref(), Some("metrics.clicks"));
//!     }
//!     other => panic!("expected a refusal, got {:?}", other.map(|report| report.rows.len())),
//! }
//! # Ok(())
//! # }
//! ```
//!
//! # Evolving types
//!
//! Option structs ([`HttpOptions`](http::HttpOptions), [`RetryPolicy`](search_ads::RetryPolicy),
//! [`ListOptions`](search_ads::ListOptions), [`WriteOptions`](search_ads::WriteOptions),
//! [`ReportOptions`](search_ads::reporting::ReportOptions), [`ReportFilters`](search_ads::reporting::ReportFilters),
//! [`LockoutPolicy`](video_session::LockoutPolicy)) are `#[non_exhaustive]`: start from
//! `default()` and chain the setters. Enums that will grow are `#[non_exhaustive]` too
//! ([`Outcome`](search_ads::Outcome) — decide with `is_stored` / `is_definite` —,
//! [`ConversionStatus`](search_ads::reporting::ConversionStatus), [`search_ads::Error`], the open value enums
//! such as [`Channel`](search_ads::Channel), ...); a `match` on them needs a wildcard arm.
//! [`Resolution`](video_session::Resolution) and [`Hold`](video_session::Hold) stay exhaustive on
//! purpose: a lockout store must handle each of them.
//!
//! # Cargo features (test support)
//!
//! - `test-util`: seams for an application's own tests against the fakes, such as
//!   `ConversionReportRequest::today` (check the Reporting API's 60-day window against a fixed
//!   date). Not for production builds.

#![warn(missing_docs)]
// docs.rs (`[package.metadata.docs.rs]`): each feature-gated item says which feature it needs.
#![cfg_attr(docsrs, feature(doc_cfg))]

mod fs;
mod setters;

pub mod http;
pub mod search_ads;
pub mod video_session;

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
//!   stream and one typed error.
//! - [`http`]: the transport rules both share (HTTPS, redirects, timeouts).
//!
//! # Cargo features
//!
//! - `service-account` (off by default): `search_ads::ServiceAccount`, Google's
//!   service-account key files, through the `gcp_auth` crate. Without it the
//!   search ads client authenticates with a fixed token
//!   ([`StaticToken`](search_ads::StaticToken)) or a [`TokenSource`](search_ads::TokenSource)
//!   of your own, and the build is about 10 s shorter.
//!
//! # Search ads in one example
//!
//! Authenticate with a service-account key (feature `service-account`), stream
//! conversions, upload a batch and download the ID mapping. Here the in-process fake of `fake-services`
//! stands in for Google: its key file's `token_uri` points at the fake's token
//! endpoint, so the real OAuth exchange runs. Against Google, read the key
//! with `ServiceAccount::from_file`
//! and keep the default base URL.
//!
//! ```
//! use chrono::{DateTime, NaiveDate};
//! use futures::TryStreamExt;
//! use facade::search_ads::{
//!     AdvertiserId, AgencyId, Conversion, DateRange, EngineAccount, ListOptions, Outcome,
//!     SearchAds, SegmentationId, ServiceAccount,
//! };
//!
//! # #[tokio::main(flavor = "multi_thread", worker_threads = 2)]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let fake = fake_services::SearchAdsFake::builder()
//!     .conversions_per_account(1_500)
//!     .start()
//!     .await?;
//! let account = &fake.accounts()[0];
//!
//! // Authenticate: the client asks the token source before every request.
//! let tokens = ServiceAccount::from_json(&fake.service_account_key_json())?;
//! let client = SearchAds::builder(tokens).base_url(fake.base_url())?.build()?;
//!
//! // Stream conversions, five pages of 300 at a time in flight.
//! let (agency, advertiser) = (AgencyId::new(account.agency_id), AdvertiserId::new(account.advertiser_id));
//! let engine = EngineAccount::new(agency, advertiser, account.engine_account_id);
//! let day = |d| NaiveDate::from_ymd_opt(2024, 1, d).ok_or("no such day");
//! let january = DateRange::new(day(1)?, day(31)?)?;
//! let options = ListOptions { page_size: 300, prefetch: 5, ..ListOptions::default() };
//! #[allow(deprecated)] // conversion.get is deprecated by Google, and still answers
//! let conversions: Vec<Conversion> =
//!     client.list_conversions(engine, january, options)?.try_collect().await?;
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
//! let report = client.insert(&batch).await?;
//! assert!(report.all_stored(), "{report}");
//! for (i, outcome) in report.outcomes().iter().enumerate() {
//!     if let Outcome::Rejected(issue) = outcome {
//!         eprintln!("conversion {i} rejected: {issue}");
//!     }
//! }
//!
//! // Download the ID mapping as typed rows, in constant memory.
//! let progress: facade::search_ads::ProgressFn =
//!     std::sync::Arc::new(|bytes, total| eprintln!("{bytes} of {total:?} bytes"));
//! let mut rows = client.id_mapping(agency, advertiser, Some(progress)).await?;
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

#![warn(missing_docs)]

pub mod http;
pub mod private_file;
pub mod search_ads;
pub mod video_session;

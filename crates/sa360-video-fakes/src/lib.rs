//! Stateful local fakes of the two HTTP services this workspace talks to, for tests, demos and
//! benchmarks.
//!
//! - [`SearchAdsFake`]: the Search Ads 360 legacy v2 conversion API (`specs/search-ads.yaml`) with a
//!   fake OAuth token endpoint, seeded conversions generated on demand, best-effort insert and
//!   update with Google's error messages (SA-9), and a streamed ID-mapping CSV of any size.
//! - [`VideoSessionFake`]: the video session service (`specs/video-session.yaml`) with seeded
//!   domains and users, the login lockout (VS-3, VS-4) on a [`FakeClock`], and an [`Outbox`] of sent
//!   invitations.
//!
//! Both listen on `127.0.0.1` (port 0 by default), keep a ledger tests can read, inject faults
//! ([`Faults`]) that can be changed while they run, and stop when dropped or on `shutdown().await`.
//! [`FakeServices`] starts both with one shared clock; the `sa360-video-fakes` binary serves them and
//! prints shell-`eval`-able connection lines.
//!
//! ```no_run
//! # async fn demo() -> Result<(), sa360_video_fakes::FakeError> {
//! use sa360_video_fakes::{SearchAdsFake, VideoSessionFake};
//!
//! let ads = SearchAdsFake::builder().conversions_per_account(200_000).start().await?;
//! let url = format!("{}/conversion", ads.base_url());
//! let token = ads.dev_token();
//! # let _ = (url, token);
//! let video = VideoSessionFake::start_default().await?;
//! let demo = video.demo();
//! # let _ = demo;
//! # Ok(()) }
//! ```

// Validation helpers return a ready error `Response` on their (cold) error path; boxing it would only
// add noise to every handler.
#![allow(clippy::result_large_err)]
#![warn(missing_docs)]

mod clock;
mod error;
mod errors;
mod faults;
pub mod search_ads;
mod server;
mod util;
pub mod video_session;

pub use clock::FakeClock;
pub use error::FakeError;
pub use faults::{DetailsCut, FaultKind, FaultRecord, Faults, Truncation};
use sa360_video_client_support::sh_quote;
pub use search_ads::{
    ConversionKey, FAILURE_TYPE, IdMappingSize, KnownAccount, OAuthCounts, Origin, Owner,
    ReportingConfig, ReportingFaults, SearchAdsConfig, SearchAdsCounts, SearchAdsFake,
    SearchAdsFakeBuilder, SearchAdsLedger, StoredConversion,
};
pub use video_session::{
    AccountStats, Channel, DemoCredentials, DomainUser, Outbox, OutboxEntry, VideoCounts,
    VideoLedger, VideoSessionConfig, VideoSessionFake, VideoSessionFakeBuilder,
};

/// Builds [`FakeServices`]: both fakes, sharing one [`FakeClock`].
#[derive(Clone, Debug, Default)]
#[must_use]
pub struct FakeServicesBuilder {
    search_ads: SearchAdsFakeBuilder,
    video: VideoSessionFakeBuilder,
    clock: FakeClock,
}

impl FakeServicesBuilder {
    /// The search ads fake's builder (its clock is replaced by the shared one).
    pub fn search_ads(mut self, builder: SearchAdsFakeBuilder) -> Self {
        self.search_ads = builder;
        self
    }

    /// The video fake's builder (its clock is replaced by the shared one).
    pub fn video(mut self, builder: VideoSessionFakeBuilder) -> Self {
        self.video = builder;
        self
    }

    /// Starts both fakes.
    ///
    /// # Errors
    /// The first error of either fake.
    pub async fn start(self) -> Result<FakeServices, FakeError> {
        let search_ads = self.search_ads.clock(self.clock.clone()).start().await?;
        let video = self.video.clock(self.clock.clone()).start().await?;
        Ok(FakeServices {
            search_ads,
            video,
            clock: self.clock,
        })
    }
}

/// Both fakes, running, with a shared clock.
#[derive(Debug)]
pub struct FakeServices {
    /// The search ads fake.
    pub search_ads: SearchAdsFake,
    /// The video session fake.
    pub video: VideoSessionFake,
    clock: FakeClock,
}

impl FakeServices {
    /// A builder with both fakes' defaults.
    pub fn builder() -> FakeServicesBuilder {
        FakeServicesBuilder::default()
    }

    /// Starts both fakes with their defaults.
    ///
    /// # Errors
    /// The first error of either fake.
    pub async fn start_default() -> Result<Self, FakeError> {
        Self::builder().start().await
    }

    /// The clock both fakes share.
    #[must_use]
    pub fn clock(&self) -> &FakeClock {
        &self.clock
    }

    /// The connection values the binary prints, in order, as (name, value) pairs:
    /// `SEARCH_ADS_URL`, `VIDEO_SESSION_URL`, `SEARCH_ADS_TOKEN`, `VIDEO_SECRET_KEY`, `VIDEO_USER`,
    /// `VIDEO_PASSWORD`, `VIDEO_SESSION_ID`, then `SEARCH_ADS_TOKEN_URL`, `SEARCH_ADS_AGENCY_ID`,
    /// `SEARCH_ADS_ADVERTISER_ID`, `SEARCH_ADS_ENGINE_ACCOUNT_ID`, `SEARCH_ADS_CUSTOMER_ID`, and last
    /// `SEARCH_ADS_REPORTING_URL` (the Reporting API's server URL, SR-1).
    #[must_use]
    pub fn env_vars(&self) -> Vec<(&'static str, String)> {
        let demo = self.video.demo();
        let mut vars = vec![
            ("SEARCH_ADS_URL", self.search_ads.base_url().to_owned()),
            ("VIDEO_SESSION_URL", self.video.base_url().to_owned()),
            ("SEARCH_ADS_TOKEN", self.search_ads.dev_token().to_owned()),
            ("VIDEO_SECRET_KEY", demo.secret_key.clone()),
            ("VIDEO_USER", demo.user_name.clone()),
            ("VIDEO_PASSWORD", demo.password.clone()),
            ("VIDEO_SESSION_ID", demo.session_id.clone()),
            (
                "SEARCH_ADS_TOKEN_URL",
                self.search_ads.token_url().to_owned(),
            ),
        ];
        if let Some(account) = self.search_ads.accounts().first() {
            vars.extend([
                ("SEARCH_ADS_AGENCY_ID", account.agency_id.to_string()),
                (
                    "SEARCH_ADS_ADVERTISER_ID",
                    account.advertiser_id.to_string(),
                ),
                (
                    "SEARCH_ADS_ENGINE_ACCOUNT_ID",
                    account.engine_account_id.to_string(),
                ),
                ("SEARCH_ADS_CUSTOMER_ID", account.customer_id.clone()),
            ]);
        }
        vars.push((
            "SEARCH_ADS_REPORTING_URL",
            self.search_ads.reporting_url().to_owned(),
        ));
        vars
    }

    /// [`FakeServices::env_vars`] as `NAME=value` lines, values quoted for `sh` (`eval "$(...)"`).
    #[must_use]
    pub fn env_script(&self) -> String {
        self.env_vars()
            .into_iter()
            .map(|(name, value)| format!("{name}={}\n", sh_quote(&value)))
            .collect()
    }

    /// Stops both fakes at once and waits. Idle connections close right away; requests still
    /// running get up to 2 s to finish (the same grace for both fakes, not one after the other).
    pub async fn shutdown(self) {
        tokio::join!(self.search_ads.shutdown(), self.video.shutdown());
    }
}

//! Configuration of the search ads fake: accounts, seeded data sizes, OAuth, ID-mapping size.

use std::time::Duration;

use chrono::NaiveDate;

use crate::faults::Faults;

/// Seeded campaigns of each account: the ones its seeded conversions use, listed in the
/// ID-mapping file. [`SearchAdsConfig::report_campaigns`] adds synthetic ones after them.
pub const SEEDED_CAMPAIGNS: u64 = 4;

/// Most synthetic campaigns [`SearchAdsConfig::report_campaigns`] may add to each account (a bound
/// of the fake: a report's rows are computed per request).
pub const MAX_REPORT_CAMPAIGNS: u64 = 10_000;

/// Campaign numbers the ID-mapping file's new IDs keep their widths for (accounts of an advertiser
/// times campaigns of each account).
const MAX_NUMBERED_CAMPAIGNS: u64 = 10_000_000;

/// An account the fake knows: an engine account with its agency and advertiser, and the customer
/// ID of the same account in the new platform. `get` reads it by the first three,
/// `getByCustomerId` by the customer ID; both see the same seeded conversions.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KnownAccount {
    /// DS agency ID.
    pub agency_id: i64,
    /// DS advertiser ID.
    pub advertiser_id: i64,
    /// DS engine account ID.
    pub engine_account_id: i64,
    /// Customer ID of the same account in the new platform.
    pub customer_id: String,
}

/// A Floodlight activity of every configured advertiser (`segmentationId` / `segmentationName`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FloodlightActivity {
    /// The numeric segmentation ID.
    pub id: i64,
    /// The activity name (matched case-sensitively, like the real service).
    pub name: String,
}

/// A saved column returned by `savedColumns.list` for every configured advertiser.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SavedColumnDef {
    /// `savedColumnName`.
    pub name: String,
    /// `type`.
    pub column_type: String,
}

/// How big each advertiser's ID-mapping file is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IdMappingSize {
    /// This many data rows (after the header line), at most 210,000,000 (about 50 GB).
    Rows(u64),
    /// As many whole rows as fit in this many bytes, header included (the file is at most this
    /// long, and shorter by less than one row).
    Bytes(u64),
}

/// The refresh-token credentials the token endpoint accepts (an `authorized_user` client).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AuthorizedUser {
    /// OAuth client ID.
    pub client_id: String,
    /// OAuth client secret.
    pub client_secret: String,
    /// The refresh token.
    pub refresh_token: String,
}

/// Faults of the Reporting API (v0) `searchAds360:search` method, drawn per request from their own
/// seeded generator (independent of [`Faults`], which applies to every route).
#[derive(Clone, Debug, PartialEq)]
pub struct ReportingFaults {
    /// Seed of the generator.
    pub seed: u64,
    /// Share of search requests answered 429 `RESOURCE_EXHAUSTED` with a `quotaErrorDetails`
    /// `retryDelay` of [`retry_delay`](Self::retry_delay), without running the query.
    pub quota_exhausted: f64,
    /// Share of search requests that carry a page token answered 400 `EXPIRED_PAGE_TOKEN` (the
    /// token is then forgotten).
    pub expired_page_token: f64,
    /// The `retryDelay` of quota errors (sent as `"<seconds>s"` with up to 9 decimals).
    pub retry_delay: Duration,
}

impl Default for ReportingFaults {
    fn default() -> Self {
        Self {
            seed: 0,
            quota_exhausted: 0.0,
            expired_page_token: 0.0,
            retry_delay: Duration::from_secs(1),
        }
    }
}

impl ReportingFaults {
    /// Checks the probabilities.
    ///
    /// # Errors
    /// A readable description of the first problem.
    pub fn validate(&self) -> Result<(), String> {
        for (name, p) in [
            ("quota_exhausted", self.quota_exhausted),
            ("expired_page_token", self.expired_page_token),
        ] {
            if !(0.0..=1.0).contains(&p) {
                return Err(format!("reporting fault {name} must be within 0..=1"));
            }
        }
        if self.quota_exhausted + self.expired_page_token > 1.0 {
            return Err("reporting fault probabilities add up to more than 1".to_owned());
        }
        Ok(())
    }
}

/// The Reporting API (v0) side of the search ads fake: the customer hierarchy, page tokens, the
/// event-level data window and its own faults. The conversions are the v2 fake's (SR-12).
#[derive(Clone, Debug, PartialEq)]
pub struct ReportingConfig {
    /// The manager account above every configured customer (ten digits).
    pub manager_customer_id: String,
    /// The customers the caller reaches directly, without `login-customer-id` (SR-8);
    /// `listAccessibleCustomers` returns these. Every other known customer needs the manager's id
    /// in `login-customer-id`.
    pub direct_customer_ids: Vec<String>,
    /// How long a page token stays valid, on the fake's clock (SR-11).
    pub page_token_lifetime: Duration,
    /// Event-level data covers this many days back from today (UTC, today included).
    pub window_days: u32,
    /// Faults of the search method.
    pub faults: ReportingFaults,
}

impl Default for ReportingConfig {
    fn default() -> Self {
        Self {
            manager_customer_id: "2000012300".to_owned(),
            direct_customer_ids: vec!["2000012300".to_owned(), "2000012350".to_owned()],
            page_token_lifetime: Duration::from_secs(600),
            window_days: 60,
            faults: ReportingFaults::default(),
        }
    }
}

/// Everything the search ads fake is started with. Build it with
/// [`SearchAdsFake::builder`](crate::SearchAdsFake::builder); every field has a default.
#[derive(Clone, Debug)]
pub struct SearchAdsConfig {
    /// Seed of all generated data (conversions, ID-mapping rows, tokens).
    pub seed: u64,
    /// The known accounts. Advertisers not listed here get `0x0000011D` on insert and 403 on reads.
    pub accounts: Vec<KnownAccount>,
    /// Seeded conversions per account (generated on demand, never held in memory).
    pub conversions_per_account: u64,
    /// Seeded conversions per day, from `start_date` on (1 to 86,400).
    pub conversions_per_day: u64,
    /// The day of the first seeded conversion (UTC).
    pub start_date: NaiveDate,
    /// Floodlight activities of every advertiser.
    pub floodlight_activities: Vec<FloodlightActivity>,
    /// Custom dimension names every advertiser knows.
    pub custom_dimensions: Vec<String>,
    /// Custom metric names every advertiser knows.
    pub custom_metrics: Vec<String>,
    /// Saved columns of every advertiser.
    pub saved_columns: Vec<SavedColumnDef>,
    /// Size of each advertiser's ID-mapping file.
    pub id_mapping: IdMappingSize,
    /// Synthetic campaigns added to each account's seeded ones in the Reporting API's reports of
    /// `customer`, `campaign` and `ad_group` (DECISIONS SR-22): a setting for load tests, not
    /// something the service has. Each has one ad group, seeded metrics and no conversions; at
    /// most [`MAX_REPORT_CAMPAIGNS`]. Default 0.
    pub report_campaigns: u64,
    /// A bearer token that is always valid and never expires.
    pub dev_token: String,
    /// Lifetime of access tokens issued by the token endpoint (measured on the fake's clock).
    pub token_lifetime: Duration,
    /// The refresh-token grant's accepted credentials.
    pub authorized_user: AuthorizedUser,
    /// Accept an unexpired self-signed service-account JWT (scope or audience of this API) as a
    /// bearer token, as Google does. Signatures are never verified.
    pub accept_self_signed_jwt: bool,
    /// Refuse an insert of a conversion id already stored with `0x0000011A`, as the service does
    /// (SA-15). When false, the fake stores it again (counted in
    /// [`StoredConversion::copies`](super::StoredConversion::copies)), so tests can see every blind
    /// resend instead of relying on the fake's protection. Default true.
    pub deduplicate: bool,
    /// Bench mode (`--forget-conversions`): an insert checks and answers every conversion as
    /// usual (per-row outcomes, the echo with its `dsConversionId`) but keeps none, so a run of
    /// millions of rows holds no memory for them. Reads, updates and the ledger never see an
    /// inserted conversion, and only a repeat within one request (`0x0000011F`) or of a seeded
    /// conversion is refused as a duplicate. Default false.
    pub forget_conversions: bool,
    /// Initial fault configuration.
    pub faults: Faults,
    /// The Reporting API (v0) side.
    pub reporting: ReportingConfig,
    /// Port to listen on (on 127.0.0.1); 0 picks a free one.
    pub port: u16,
}

impl Default for SearchAdsConfig {
    fn default() -> Self {
        let agency_id = 20_700_000_000_000_125;
        let advertiser_id = 21_700_000_012_345;
        Self {
            seed: 42,
            accounts: vec![
                KnownAccount {
                    agency_id,
                    advertiser_id,
                    engine_account_id: 700_000_000_042_205,
                    customer_id: "2000012350".to_owned(),
                },
                KnownAccount {
                    agency_id,
                    advertiser_id,
                    engine_account_id: 700_000_000_042_206,
                    customer_id: "2000012351".to_owned(),
                },
            ],
            conversions_per_account: 10_000,
            conversions_per_day: 100,
            start_date: NaiveDate::from_ymd_opt(2024, 1, 1).unwrap_or_default(),
            floodlight_activities: vec![
                FloodlightActivity {
                    id: 551_234,
                    name: "Purchase".to_owned(),
                },
                FloodlightActivity {
                    id: 551_235,
                    name: "Sign-up".to_owned(),
                },
                FloodlightActivity {
                    id: 551_236,
                    name: "Lead Form".to_owned(),
                },
            ],
            custom_dimensions: vec!["Store Region".to_owned(), "Channel Partner".to_owned()],
            custom_metrics: vec!["Banking Account Opens".to_owned(), "Basket Size".to_owned()],
            saved_columns: vec![
                SavedColumnDef {
                    name: "Revenue incl. tax".to_owned(),
                    column_type: "double".to_owned(),
                },
                SavedColumnDef {
                    name: "Newsletter signups".to_owned(),
                    column_type: "integer".to_owned(),
                },
                SavedColumnDef {
                    name: "Campaign owner".to_owned(),
                    column_type: "string".to_owned(),
                },
            ],
            id_mapping: IdMappingSize::Rows(10_000),
            report_campaigns: 0,
            dev_token: "fake-sa360-dev-token".to_owned(),
            token_lifetime: Duration::from_secs(3600),
            authorized_user: AuthorizedUser {
                client_id: "fake-client-id.apps.googleusercontent.com".to_owned(),
                client_secret: "fake-client-secret".to_owned(),
                refresh_token: "fake-refresh-token".to_owned(),
            },
            accept_self_signed_jwt: true,
            deduplicate: true,
            forget_conversions: false,
            faults: Faults::none(),
            reporting: ReportingConfig::default(),
            port: 0,
        }
    }
}

impl SearchAdsConfig {
    /// Checks the configuration for values the generators cannot handle.
    ///
    /// # Errors
    /// A readable description of the first problem.
    pub fn validate(&self) -> Result<(), String> {
        if self.accounts.is_empty() {
            return Err("at least one engine account is needed".to_owned());
        }
        if self.accounts.len() > 1000 {
            return Err("at most 1000 engine accounts are supported".to_owned());
        }
        if !(1..=86_400).contains(&self.conversions_per_day) {
            return Err("conversions_per_day must be within 1..=86400".to_owned());
        }
        if self.conversions_per_account > 99_999_999_999 {
            return Err("conversions_per_account must be below 10^11".to_owned());
        }
        if self
            .conversions_per_account
            .div_ceil(self.conversions_per_day)
            > 2_000_000
        {
            return Err("the seeded conversions must fit in 2,000,000 days".to_owned());
        }
        for account in &self.accounts {
            if account.agency_id <= 0
                || account.advertiser_id <= 0
                || account.engine_account_id <= 0
            {
                return Err(format!("account IDs must be positive: {account:?}"));
            }
            if account.customer_id.is_empty()
                || !account.customer_id.bytes().all(|b| b.is_ascii_digit())
            {
                return Err(format!("customer IDs must be digits: {account:?}"));
            }
        }
        for (i, a) in self.accounts.iter().enumerate() {
            for b in &self.accounts[..i] {
                if a.engine_account_id == b.engine_account_id || a.customer_id == b.customer_id {
                    return Err(format!("duplicate engine account or customer ID: {a:?}"));
                }
                if a.advertiser_id == b.advertiser_id && a.agency_id != b.agency_id {
                    return Err(format!("advertiser {} is in two agencies", a.advertiser_id));
                }
            }
        }
        if self.report_campaigns > MAX_REPORT_CAMPAIGNS {
            return Err(format!(
                "report_campaigns is {}, more than the {MAX_REPORT_CAMPAIGNS} synthetic campaigns per account the fake allows (sa360-video-fakes --report-campaigns)",
                self.report_campaigns
            ));
        }
        let numbered =
            (SEEDED_CAMPAIGNS + self.report_campaigns).saturating_mul(self.accounts.len() as u64);
        if numbered > MAX_NUMBERED_CAMPAIGNS {
            return Err(format!(
                "report_campaigns is {}: with {} accounts that makes {numbered} campaigns, more than the {MAX_NUMBERED_CAMPAIGNS} the ID-mapping numbering holds",
                self.report_campaigns,
                self.accounts.len()
            ));
        }
        if self.floodlight_activities.is_empty() {
            return Err("at least one Floodlight activity is needed".to_owned());
        }
        if self.dev_token.is_empty() {
            return Err("the development token must not be empty".to_owned());
        }
        let manager = &self.reporting.manager_customer_id;
        if manager.len() != 10 || !manager.bytes().all(|b| b.is_ascii_digit()) {
            return Err("the reporting manager customer ID must be ten digits".to_owned());
        }
        if self.accounts.iter().any(|a| &a.customer_id == manager) {
            return Err("the reporting manager customer ID is also a client customer".to_owned());
        }
        if !(1..=36_500).contains(&self.reporting.window_days) {
            return Err("reporting window_days must be within 1..=36500".to_owned());
        }
        self.reporting.faults.validate()?;
        self.faults.validate()
    }
}

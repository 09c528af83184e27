//! The search ads (SA360 legacy v2) fake.
//!
//! Routes, relative to [`SearchAdsFake::base_url`] (`{origin}/doubleclicksearch/v2`, SA-1):
//! `GET /agency/{a}/advertiser/{b}/engine/{e}/conversion`, `GET /customer/{c}/conversion`,
//! `POST /conversion`, `PUT /conversion`, `POST /conversion/updateAvailability`,
//! `GET /agency/{a}/advertiser/{b}/idmapping`, `GET /agency/{a}/advertiser/{b}/savedcolumns`; all
//! need a bearer token. The token endpoint is `POST {origin}/token` ([`SearchAdsFake::token_url`]).
//!
//! Reads return the seeded conversions of the account first (in index order, which is timestamp
//! order), then the inserted conversions shown by that account (by timestamp, then conversion ID).
//! An inserted conversion is shown by the account named by its `engineAccountId`, or else by its
//! `customerId`. Updated seeded conversions are returned as updated.

mod auth;
mod config;
mod conversions;
mod data;
mod federation;
mod fields;
mod id_mapping;
mod ledger;
mod oauth;
mod oauth_state;
mod record;
mod reporting;
mod state;
mod tokens;

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::http::StatusCode;
use axum::middleware::from_fn_with_state;
use axum::response::Response;
use axum::routing::{get, post};
use serde_json::{Value, json};

pub use self::auth::JWT_BEARER_GRANT;
pub use self::config::{
    AuthorizedUser, FloodlightActivity, IdMappingSize, KnownAccount, MAX_REPORT_CAMPAIGNS,
    ReportingConfig, ReportingFaults, SEEDED_CAMPAIGNS, SavedColumnDef, SearchAdsConfig,
};
pub use self::ledger::{
    ConversionKey, Origin, Owner, SearchAdsCounts, SearchAdsLedger, StoredConversion,
};
pub use self::oauth::{AUTHORIZE_PATH, METADATA_TOKEN_PATH, REVOKE_PATH};
pub use self::oauth_state::OAuthCounts;
pub use self::reporting::FAILURE_TYPE;
pub use self::tokens::SCOPE;

use self::data::Generator;
use self::state::AppState;
use self::tokens::Grant;
use crate::clock::FakeClock;
use crate::error::FakeError;
use crate::errors::google_simple;
use crate::faults::{ErrorStyle, FaultInjector, FaultLayer, Faults, apply_faults};
use crate::server::{ServerHandle, bind, serve};
use crate::util::setters;

/// Path prefix of every API method (SA-1).
pub const API_PREFIX: &str = "/doubleclicksearch/v2";

/// Path prefix of every Reporting API (v0) method (SR-1); the API's server URL is the origin.
pub const REPORTING_PREFIX: &str = "/v0";

/// A test-only RSA key (never used anywhere real) for service-account key files pointing at the fake.
const FAKE_SERVICE_ACCOUNT_KEY: &str = include_str!("fake_service_account_key.pem");

/// Builds and starts a [`SearchAdsFake`]. Every setting has a default ([`SearchAdsConfig::default`]).
#[derive(Clone, Debug, Default)]
#[must_use]
pub struct SearchAdsFakeBuilder {
    config: SearchAdsConfig,
    clock: Option<FakeClock>,
}

impl SearchAdsFakeBuilder {
    /// Replaces the whole configuration.
    pub fn config(mut self, config: SearchAdsConfig) -> Self {
        self.config = config;
        self
    }

    setters! {
        /// Seed of all generated data.
        seed(u64) => config.seed;
        /// The known engine accounts.
        accounts(Vec<KnownAccount>) => config.accounts;
        /// Seeded conversions per account.
        conversions_per_account(u64) => config.conversions_per_account;
        /// Seeded conversions per day.
        conversions_per_day(u64) => config.conversions_per_day;
        /// Day of the first seeded conversion.
        start_date(chrono::NaiveDate) => config.start_date;
        /// Size of each advertiser's ID-mapping file.
        id_mapping_size(IdMappingSize) => config.id_mapping;
        /// Synthetic campaigns added to each account's seeded ones in the Reporting API's reports of
        /// `customer`, `campaign` and `ad_group`, for load tests (see
        /// [`SearchAdsConfig::report_campaigns`]; at most [`MAX_REPORT_CAMPAIGNS`], checked by
        /// [`start`](Self::start)).
        report_campaigns(u64) => config.report_campaigns;
        /// Lifetime of issued access tokens.
        token_lifetime(Duration) => config.token_lifetime;
        /// Whether a repeated insert is refused with `0x0000011A` (true, the default, as the service
        /// does) or stored again (see [`SearchAdsConfig::deduplicate`]).
        deduplicate(bool) => config.deduplicate;
        /// Bench mode: inserts answered but not kept (see [`SearchAdsConfig::forget_conversions`]).
        forget_conversions(bool) => config.forget_conversions;
        /// Initial faults.
        faults(Faults) => config.faults;
        /// The Reporting API (v0) side: customers, page tokens, window, faults.
        reporting(ReportingConfig) => config.reporting;
        /// Faults of the Reporting API's search method.
        reporting_faults(ReportingFaults) => config.reporting.faults;
        /// Port on 127.0.0.1 (0, the default, picks a free one).
        port(u16) => config.port;
    }

    /// The always-valid development bearer token.
    pub fn dev_token(mut self, token: impl Into<String>) -> Self {
        self.config.dev_token = token.into();
        self
    }

    /// Shares a clock (for example with the video fake).
    pub fn clock(mut self, clock: FakeClock) -> Self {
        self.clock = Some(clock);
        self
    }

    /// Binds 127.0.0.1 and starts serving.
    ///
    /// # Errors
    /// [`FakeError::Config`] for an unusable configuration, [`FakeError::Io`] when binding fails.
    pub async fn start(self) -> Result<SearchAdsFake, FakeError> {
        let config = self.config;
        config.validate().map_err(FakeError::Config)?;
        let listener = bind(config.port).await?;
        let addr = listener.local_addr()?;
        let origin = format!("http://{addr}");
        let token_url = format!("{origin}/token");
        let injector = Arc::new(FaultInjector::new(config.faults.clone()));
        let app = AppState::new(
            config,
            self.clock.unwrap_or_default(),
            token_url.clone(),
            injector.clone(),
        );
        let router = router(app.clone(), injector);
        let server = serve(listener, router)?;
        tracing::info!(%origin, "search ads fake listening");
        Ok(SearchAdsFake {
            base_url: format!("{origin}{API_PREFIX}"),
            origin,
            token_url,
            app,
            server,
        })
    }
}

fn is_id_mapping(path: &str) -> bool {
    path.ends_with("/idmapping")
}

async fn not_found() -> Response {
    google_simple(
        StatusCode::NOT_FOUND,
        "notFound",
        "The requested URL was not found on this server.",
    )
}

async fn method_not_allowed() -> Response {
    google_simple(
        StatusCode::METHOD_NOT_ALLOWED,
        "httpMethodNotAllowed",
        "The method is not allowed for this URL.",
    )
}

fn router(app: AppState, injector: Arc<FaultInjector>) -> Router {
    let api = Router::new()
        .route(
            "/agency/{agency}/advertiser/{advertiser}/engine/{engine}/conversion",
            get(conversions::get_conversions),
        )
        .route(
            "/customer/{customer}/conversion",
            get(conversions::get_by_customer_id),
        )
        .route(
            "/conversion",
            post(conversions::insert).put(conversions::update),
        )
        .route(
            "/conversion/updateAvailability",
            post(conversions::update_availability),
        )
        .route(
            "/agency/{agency}/advertiser/{advertiser}/idmapping",
            get(id_mapping::id_mapping),
        )
        .route(
            "/agency/{agency}/advertiser/{advertiser}/savedcolumns",
            get(conversions::saved_columns),
        )
        .route_layer(from_fn_with_state(app.clone(), fields::partial_response))
        .route_layer(from_fn_with_state(app.clone(), auth::require_bearer));
    let v0 = Router::new()
        .route(
            "/customers/{customer}/searchAds360:search",
            post(reporting::search).layer(DefaultBodyLimit::max(reporting::MAX_BODY)),
        )
        .route(
            "/customers/{customer}/searchAds360:searchStream",
            post(reporting::stream::search_stream)
                .layer(DefaultBodyLimit::max(reporting::MAX_BODY)),
        )
        .route(
            "/customers:listAccessibleCustomers",
            get(reporting::list_accessible_customers),
        )
        .route(
            "/customers/{customer}/customColumns",
            get(reporting::custom_columns),
        )
        .route("/searchAds360Fields/{name}", get(reporting::fields_get))
        .route("/searchAds360Fields:search", post(reporting::fields_search))
        .route_layer(from_fn_with_state(app.clone(), auth::require_bearer));
    Router::new()
        .route("/token", post(auth::token))
        .route(oauth::AUTHORIZE_PATH, get(oauth::authorize))
        .route(oauth::REVOKE_PATH, post(oauth::revoke))
        .route(oauth::METADATA_TOKEN_PATH, get(oauth::metadata_token))
        .route("/", get(oauth::metadata_root))
        .route(federation::STS_TOKEN_PATH, post(federation::sts_token))
        .route(
            "/v1/projects/{project}/serviceAccounts/{account}",
            post(federation::generate_access_token),
        )
        .nest(API_PREFIX, api)
        .nest(REPORTING_PREFIX, v0)
        .fallback(not_found)
        .method_not_allowed_fallback(method_not_allowed)
        .layer(DefaultBodyLimit::max(512 * 1024 * 1024))
        .layer(from_fn_with_state(
            FaultLayer {
                injector,
                style: ErrorStyle::Google,
                exempt: &[
                    "/token",
                    oauth::AUTHORIZE_PATH,
                    oauth::REVOKE_PATH,
                    oauth::METADATA_TOKEN_PATH,
                ],
                is_csv: is_id_mapping,
            },
            apply_faults,
        ))
        .with_state(app)
}

/// A running search ads fake. Dropping it stops the server (in the background);
/// [`SearchAdsFake::shutdown`] stops it and waits.
#[derive(Debug)]
pub struct SearchAdsFake {
    app: AppState,
    server: ServerHandle,
    origin: String,
    base_url: String,
    token_url: String,
}

impl SearchAdsFake {
    /// A builder with the default configuration.
    pub fn builder() -> SearchAdsFakeBuilder {
        SearchAdsFakeBuilder::default()
    }

    /// Starts a fake with the default configuration.
    ///
    /// # Errors
    /// See [`SearchAdsFakeBuilder::start`].
    pub async fn start_default() -> Result<Self, FakeError> {
        Self::builder().start().await
    }

    /// The API base URL, the spec's server URL: `http://127.0.0.1:PORT/doubleclicksearch/v2`
    /// (no trailing slash; append `/conversion` etc.).
    #[must_use]
    pub fn base_url(&self) -> &str {
        &self.base_url
    }

    /// The Reporting API (v0) server URL, the spec's server: `http://127.0.0.1:PORT` (paths start
    /// with `/v0/`).
    #[must_use]
    pub fn reporting_url(&self) -> &str {
        &self.origin
    }

    /// The current date (UTC) on the fake's clock and the first date of the Reporting API's
    /// event-level window (`window_days` back, today included).
    #[must_use]
    pub fn reporting_window(&self) -> (chrono::NaiveDate, chrono::NaiveDate) {
        reporting::window(&self.app)
    }

    /// `http://127.0.0.1:PORT`.
    #[must_use]
    pub fn origin(&self) -> &str {
        &self.origin
    }

    /// The OAuth token endpoint, `http://127.0.0.1:PORT/token` (use it as a key file's `token_uri`).
    #[must_use]
    pub fn token_url(&self) -> &str {
        &self.token_url
    }

    /// The bound address.
    #[must_use]
    pub fn addr(&self) -> SocketAddr {
        self.server.addr()
    }

    /// The authorization endpoint of the installed-app flow, `http://127.0.0.1:PORT/o/oauth2/v2/auth`.
    #[must_use]
    pub fn authorize_url(&self) -> String {
        format!("{}{AUTHORIZE_PATH}", self.origin)
    }

    /// The revoke endpoint, `http://127.0.0.1:PORT/revoke`.
    #[must_use]
    pub fn revoke_url(&self) -> String {
        format!("{}{REVOKE_PATH}", self.origin)
    }

    /// The value of `GCE_METADATA_HOST` that points Google's libraries at this fake's metadata
    /// server token endpoint: `127.0.0.1:PORT`.
    #[must_use]
    pub fn metadata_host(&self) -> String {
        self.addr().to_string()
    }

    /// The `x-goog-user-project` header of each API call so far, in order (`None`: absent); the
    /// fake records it and does not require it.
    #[must_use]
    pub fn user_projects(&self) -> Vec<Option<String>> {
        self.app.oauth.user_projects()
    }

    /// The Security Token Service's token endpoint (workload identity federation):
    /// `{origin}/v1/token`, the `token_url` of an `external_account` file.
    #[must_use]
    pub fn sts_token_url(&self) -> String {
        format!("{}{}", self.origin(), federation::STS_TOKEN_PATH)
    }

    /// IAM Credentials' `generateAccessToken` URL for the service account `email`, the
    /// `service_account_impersonation_url` of an `impersonated_service_account` or
    /// `external_account` file.
    #[must_use]
    pub fn impersonation_url(&self, email: &str) -> String {
        format!(
            "{}/v1/projects/-/serviceAccounts/{email}:generateAccessToken",
            self.origin()
        )
    }

    /// Requests to STS and to `generateAccessToken` so far.
    #[must_use]
    pub fn federation_counts(&self) -> (u64, u64) {
        (
            self.app
                .federation
                .sts_requests
                .load(std::sync::atomic::Ordering::Relaxed),
            self.app
                .federation
                .generate_access_token_requests
                .load(std::sync::atomic::Ordering::Relaxed),
        )
    }

    /// Requests the OAuth endpoints received.
    #[must_use]
    pub fn oauth_counts(&self) -> OAuthCounts {
        self.app.oauth.counts()
    }

    /// Revokes a refresh token as `POST /revoke` would: the token endpoint answers
    /// `invalid_grant` for it from now on.
    pub fn revoke_refresh_token(&self, refresh_token: &str) {
        self.app.oauth.revoke_refresh_token(refresh_token);
    }

    /// An `authorized_user` credentials file (JSON, as `gcloud auth application-default login`
    /// writes it) for this fake: the configured client id, secret and refresh token, and
    /// `token_uri` naming this fake's token endpoint (Google's libraries read that optional key).
    #[must_use]
    pub fn authorized_user_json(&self) -> String {
        let user = &self.app.config.authorized_user;
        json!({
            "type": "authorized_user",
            "client_id": user.client_id,
            "client_secret": user.client_secret,
            "refresh_token": user.refresh_token,
            "token_uri": self.token_url,
        })
        .to_string()
    }

    /// The always-valid development bearer token.
    #[must_use]
    pub fn dev_token(&self) -> &str {
        &self.app.config.dev_token
    }

    /// The configuration the fake runs with.
    #[must_use]
    pub fn config(&self) -> &SearchAdsConfig {
        &self.app.config
    }

    /// The known accounts (the first is a good default for tests).
    #[must_use]
    pub fn accounts(&self) -> &[KnownAccount] {
        &self.app.config.accounts
    }

    /// The refresh-token credentials the token endpoint accepts.
    #[must_use]
    pub fn authorized_user(&self) -> &AuthorizedUser {
        &self.app.config.authorized_user
    }

    /// The ledger: stored conversions, availabilities, counters, injected faults.
    #[must_use]
    pub fn ledger(&self) -> SearchAdsLedger {
        SearchAdsLedger {
            shared: self.app.shared.clone(),
        }
    }

    /// The clock that token lifetimes are measured on.
    #[must_use]
    pub fn clock(&self) -> &FakeClock {
        &self.app.clock
    }

    /// The current fault configuration.
    #[must_use]
    pub fn faults(&self) -> Faults {
        self.app.shared.faults.faults()
    }

    /// Replaces the fault configuration (and reseeds its generator) for the following requests.
    ///
    /// # Errors
    /// [`FakeError::Config`] when the probabilities are invalid; the old faults stay.
    pub fn set_faults(&self, faults: Faults) -> Result<(), FakeError> {
        faults.validate().map_err(FakeError::Config)?;
        self.app.shared.faults.set(faults);
        Ok(())
    }

    /// Turns all faults off.
    pub fn clear_faults(&self) {
        self.app.shared.faults.set(Faults::none());
    }

    /// Issues an access token directly (as if the token endpoint had), valid for the configured
    /// lifetime on the fake's clock.
    #[must_use]
    pub fn issue_token(&self) -> String {
        self.app.issue_token(Grant::Direct).0
    }

    /// Changes the lifetime of tokens issued from now on.
    pub fn set_token_lifetime(&self, lifetime: Duration) {
        self.app.set_token_lifetime(lifetime);
    }

    /// Changes the size of ID-mapping files served from now on.
    pub fn set_id_mapping_size(&self, size: IdMappingSize) {
        self.app.set_id_mapping_size(size);
    }

    /// The exact size in bytes of an advertiser's ID-mapping file (`None` for an unknown one).
    #[must_use]
    pub fn id_mapping_len(&self, agency_id: i64, advertiser_id: i64) -> Option<u64> {
        self.app
            .id_mapping_plan(agency_id, advertiser_id)
            .map(|p| p.total_len())
    }

    /// The number of data rows of an advertiser's ID-mapping file.
    #[must_use]
    pub fn id_mapping_rows(&self, agency_id: i64, advertiser_id: i64) -> Option<u64> {
        self.app
            .id_mapping_plan(agency_id, advertiser_id)
            .map(|p| p.rows())
    }

    /// A click ID the fake issued: click `n % 10^11` of account number `n / 10^11` (see
    /// [`SearchAdsFake::click`]). Insert rejects IDs it never issued with `0x00000101`.
    #[must_use]
    pub fn click_id(&self, n: u64) -> String {
        data::click_id(self.app.config.seed, n)
    }

    /// Click `index` of account number `account`: its ID and the epoch-millisecond time it
    /// happened (one hour before seeded conversion `index`, which carries it when it has a click).
    /// A conversion naming it is attributed to that account when it names no advertiser, and is
    /// accepted with a `conversionTimestamp` from the click's time up to 90 days after it (SA-17).
    /// `None` for an account number the fake does not have.
    #[must_use]
    pub fn click(&self, account: usize, index: u64) -> Option<(String, i64)> {
        if account >= self.app.config.accounts.len() || index >= data::CLICKS_PER_ACCOUNT {
            return None;
        }
        let generator = Generator {
            config: &self.app.config,
        };
        Some((
            data::click_id(
                self.app.config.seed,
                account as u64 * data::CLICKS_PER_ACCOUNT + index,
            ),
            generator.click_timestamp(account, index),
        ))
    }

    /// The `conversionId` of seeded conversion `index` of account number `account`.
    #[must_use]
    pub fn seeded_conversion_id(&self, account: usize, index: u64) -> Option<String> {
        let acc = self.app.config.accounts.get(account)?;
        (index < self.app.config.conversions_per_account)
            .then(|| data::seeded_conversion_id(acc, index))
    }

    /// Seeded conversion `index` of account number `account`, as reads return it unless updated.
    #[must_use]
    pub fn seeded_conversion(&self, account: usize, index: u64) -> Option<Value> {
        if account >= self.app.config.accounts.len()
            || index >= self.app.config.conversions_per_account
        {
            return None;
        }
        serde_json::to_value(
            Generator {
                config: &self.app.config,
            }
            .conversion(account, index),
        )
        .ok()
    }

    /// A service-account key file (JSON) whose `token_uri` is this fake's token endpoint. Its RSA
    /// key is a fixed test key; the fake never checks signatures.
    #[must_use]
    pub fn service_account_key_json(&self) -> String {
        json!({
            "type": "service_account",
            "project_id": "fake-project",
            "private_key_id": "fake-key-id",
            "private_key": FAKE_SERVICE_ACCOUNT_KEY,
            "client_email": "fake-sa@fake-project.iam.gserviceaccount.com",
            "client_id": "100000000000000000001",
            "auth_uri": "https://accounts.google.com/o/oauth2/auth",
            "token_uri": self.token_url,
        })
        .to_string()
    }

    /// Stops accepting, lets running requests finish (up to 2 s) and waits for the server to end.
    pub async fn shutdown(self) {
        self.server.shutdown().await;
    }
}

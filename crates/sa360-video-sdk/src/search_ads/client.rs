//! The search ads client: [`SearchAdsClient`], its builder and its
//! constructors. The operations live beside the rules they keep: reads in
//! `read/`, writes in `write/`, availability and saved columns in their own
//! files, the ID-mapping file in `id_mapping/`, reports in `reporting/`.

use std::sync::Arc;

use super::auth::TokenSource;
use super::call::Calls;
use super::error::Error;
use super::retry::RetryPolicy;
use super::values::CustomerId;
use super::wire::TokenAuthorizer;
use super::write::options::WriteOptions;
use crate::http::{BaseUrl, HttpOptions, TimeoutMode, build_client};

/// Google's endpoint (SA-1).
pub const DEFAULT_BASE_URL: &str = "https://doubleclicksearch.googleapis.com/doubleclicksearch/v2";

/// Google's Reporting API endpoint (SR-1).
pub const DEFAULT_REPORTING_BASE_URL: &str = "https://searchads360.googleapis.com";

/// The environment variable [`SearchAdsClientBuilder::endpoints_from_env`] reads for
/// [`SearchAdsClientBuilder::base_url`] (`apictl sandbox` prints it).
pub const BASE_URL_ENV: &str = "SEARCH_ADS_URL";

/// The environment variable [`SearchAdsClientBuilder::endpoints_from_env`] reads for
/// [`SearchAdsClientBuilder::reporting_base_url`] (`apictl sandbox` prints it).
pub const REPORTING_BASE_URL_ENV: &str = "SEARCH_ADS_REPORTING_URL";

/// The search ads client. Cheap to clone (clones share connections and the
/// token source, like [`VideoSessionClient`](crate::video_session::VideoSessionClient)).
/// `Debug` shows the URLs and settings, never a token.
///
/// Built like the video client: [`new`](Self::new) for the defaults, or
/// [`builder`](Self::builder) → setters ([`base_url`](SearchAdsClientBuilder::base_url),
/// [`http_options`](SearchAdsClientBuilder::http_options), …) →
/// [`build`](SearchAdsClientBuilder::build). It lives in `search_ads/client.rs`;
/// each operation sits beside the rules it keeps (`read/`, `write/`, …).
///
/// ```no_run
/// use sa360_video_sdk::search_ads::{SearchAdsClient, ServiceAccount};
/// # async fn run() -> Result<(), sa360_video_sdk::search_ads::Error> {
/// let client = SearchAdsClient::new(ServiceAccount::from_file("key.json")?)?;
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct SearchAdsClient {
    pub(super) inner: Arc<Inner>,
}

/// What the clones of one client share.
pub(super) struct Inner {
    /// Normal calls: connect and total timeouts.
    pub(super) api: sa360_v2_client::Client,
    /// The ID-mapping download: connect and read timeouts, no total.
    pub(super) download: sa360_v2_client::Client,
    /// The Reporting API (v0): connect and total timeouts.
    pub(super) reporting: sa360_reporting_client::Client,
    pub(super) base: BaseUrl,
    pub(super) reporting_base: BaseUrl,
    pub(super) retry: RetryPolicy,
    pub(super) write: WriteOptions,
    pub(super) login_customer_id: Option<CustomerId>,
    pub(super) tokens: Arc<dyn TokenSource>,
    /// Deadline, retries and re-authorization of normal calls.
    pub(super) calls: Calls,
    /// The same for opening the ID-mapping download (its attempts are bounded
    /// by the read timeout, not the total timeout).
    pub(super) download_calls: Calls,
}

impl std::fmt::Debug for SearchAdsClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SearchAdsClient")
            .field("base_url", &self.inner.base)
            .field("reporting_base_url", &self.inner.reporting_base)
            .field("retry", &self.inner.retry)
            .field("write", &self.inner.write)
            .field("tokens", &self.inner.tokens)
            .finish()
    }
}

/// Builds a [`SearchAdsClient`]; see [`SearchAdsClient::builder`].
///
/// ```
/// use std::time::Duration;
/// use sa360_video_sdk::http::HttpOptions;
/// use sa360_video_sdk::search_ads::{RetryPolicy, SearchAdsClient, StaticToken, WriteOptions};
///
/// let client = SearchAdsClient::builder(StaticToken::new("ya29.token"))
///     .base_url("http://127.0.0.1:8080/doubleclicksearch/v2")
///     .http_options(HttpOptions::default().timeout(Duration::from_secs(60)))
///     .retry_policy(RetryPolicy::default().max_attempts(6))
///     .write_options(WriteOptions::default().batch_size(200).concurrency(8))
///     .build()?;
/// assert_eq!(client.base_url().as_str(), "http://127.0.0.1:8080/doubleclicksearch/v2");
///
/// // Setters never fail; `build` names the setting at fault.
/// let refused = SearchAdsClient::builder(StaticToken::new("ya29.token"))
///     .base_url("http://example.com/doubleclicksearch/v2")
///     .build()
///     .unwrap_err();
/// assert!(matches!(&refused, sa360_video_sdk::search_ads::Error::Validation { field, .. } if field == "base_url"));
/// # Ok::<(), sa360_video_sdk::search_ads::Error>(())
/// ```
#[derive(Debug)]
pub struct SearchAdsClientBuilder {
    tokens: Arc<dyn TokenSource>,
    base: Option<String>,
    reporting_base: Option<String>,
    /// Where `base` came from, as `build` names it: `base_url` or [`BASE_URL_ENV`].
    base_setting: &'static str,
    /// Where `reporting_base` came from: `reporting_base_url` or [`REPORTING_BASE_URL_ENV`].
    reporting_base_setting: &'static str,
    http: HttpOptions,
    retry: RetryPolicy,
    write: WriteOptions,
    login_customer_id: Option<CustomerId>,
}

impl SearchAdsClientBuilder {
    /// The API's base URL, up to and including `/doubleclicksearch/v2`.
    /// Default [`DEFAULT_BASE_URL`]. `https://` is required except on loopback;
    /// [`build`](Self::build) checks it ([`Error::Validation`] with field `base_url`).
    pub fn base_url(mut self, url: impl Into<String>) -> Self {
        self.base = Some(url.into());
        self.base_setting = "base_url";
        self
    }

    /// The Search Ads 360 Reporting API's server URL (used by
    /// [`SearchAdsClient::conversion_report`]). Default [`DEFAULT_REPORTING_BASE_URL`].
    /// `https://` is required except on loopback; [`build`](Self::build) checks it
    /// ([`Error::Validation`] with field `reporting_base_url`).
    pub fn reporting_base_url(mut self, url: impl Into<String>) -> Self {
        self.reporting_base = Some(url.into());
        self.reporting_base_setting = "reporting_base_url";
        self
    }

    /// Takes the base URLs from the environment where they are set: [`BASE_URL_ENV`]
    /// (`SEARCH_ADS_URL`) for [`base_url`](Self::base_url) and [`REPORTING_BASE_URL_ENV`]
    /// (`SEARCH_ADS_REPORTING_URL`) for [`reporting_base_url`](Self::reporting_base_url), the
    /// variables `apictl sandbox` prints for the local fakes. A variable that is unset (or
    /// empty) leaves its URL as it was, so against Google set neither. Opt-in: a client never
    /// reads its endpoints from the environment unless asked, because the token goes wherever
    /// they point. [`build`](Self::build) checks them as it checks the setters' values, and a
    /// refused one names the variable ([`Error::Validation`] with field `SEARCH_ADS_URL` or
    /// `SEARCH_ADS_REPORTING_URL`).
    ///
    /// ```no_run
    /// use sa360_video_sdk::search_ads::{DefaultCredentials, SearchAdsClient};
    /// let client = SearchAdsClient::builder(DefaultCredentials::new()?)
    ///     .endpoints_from_env()
    ///     .build()?;
    /// # Ok::<(), sa360_video_sdk::search_ads::Error>(())
    /// ```
    pub fn endpoints_from_env(self) -> Self {
        self.endpoints_from(|name| std::env::var_os(name))
    }

    /// [`endpoints_from_env`](Self::endpoints_from_env) with the variables read by `lookup`.
    fn endpoints_from(mut self, lookup: impl Fn(&str) -> Option<std::ffi::OsString>) -> Self {
        let read = |name| {
            lookup(name)
                .filter(|v| !v.is_empty())
                .map(|v| v.to_string_lossy().into_owned())
        };
        if let Some(url) = read(BASE_URL_ENV) {
            self.base = Some(url);
            self.base_setting = BASE_URL_ENV;
        }
        if let Some(url) = read(REPORTING_BASE_URL_ENV) {
            self.reporting_base = Some(url);
            self.reporting_base_setting = REPORTING_BASE_URL_ENV;
        }
        self
    }

    /// Timeouts and user agent.
    pub fn http_options(mut self, options: HttpOptions) -> Self {
        self.http = options;
        self
    }

    /// Retries of transient failures (default: 4 attempts).
    pub fn retry_policy(mut self, policy: RetryPolicy) -> Self {
        self.retry = policy;
        self
    }

    /// Default batching of inserts and updates.
    pub fn write_options(mut self, options: WriteOptions) -> Self {
        self.write = options;
        self
    }

    /// The manager's id, sent as `login-customer-id` (its digits) by every Reporting API read,
    /// when the customers read are client accounts reached through that manager (SR-8, SR-36).
    /// One client reads through one manager: build one client per manager.
    pub fn login_customer_id(mut self, manager: CustomerId) -> Self {
        self.login_customer_id = Some(manager);
        self
    }

    /// Builds the client, checking every setting first: the base URLs, the
    /// [`RetryPolicy`] and the [`WriteOptions`] (an [`Error::Validation`] naming the setting).
    /// When a base URL is on loopback (local fakes), the token source's file
    /// URLs may be on loopback too ([`TokenSource::allow_loopback`]).
    pub fn build(self) -> Result<SearchAdsClient, Error> {
        self.retry.validate()?;
        self.write.validate()?;
        let parse = |setting: &str, url: Option<&str>, default: &str| {
            BaseUrl::parse(url.unwrap_or(default)).map_err(|e| Error::invalid_base_url(setting, &e))
        };
        let base = parse(self.base_setting, self.base.as_deref(), DEFAULT_BASE_URL)?;
        let reporting_base = parse(
            self.reporting_base_setting,
            self.reporting_base.as_deref(),
            DEFAULT_REPORTING_BASE_URL,
        )?;
        // Endpoints on loopback are the application's choice for local fakes:
        // the credentials' token URLs may then be there too.
        if base.is_loopback() || reporting_base.is_loopback() {
            self.tokens.allow_loopback();
        }
        let config = Error::Transport;
        let total = build_client(&base, &self.http, TimeoutMode::Total).map_err(config)?;
        let streaming = build_client(&base, &self.http, TimeoutMode::Streaming).map_err(config)?;
        let authorizer: Arc<dyn sa360_v2_client::AuthorizeRequest> = Arc::new(TokenAuthorizer {
            tokens: self.tokens.clone(),
        });
        let context = sa360_v2_client::ClientContext::new().with_authorizer(authorizer);
        let reporting_http =
            build_client(&reporting_base, &self.http, TimeoutMode::Total).map_err(config)?;
        let json_limits = self.http.body_limits(TimeoutMode::Total);
        let reporting = sa360_reporting_client::Client::new_with_client(
            reporting_base.as_str(),
            reporting_http,
            context.clone().with_body_limits(json_limits),
        );
        let api = sa360_v2_client::Client::new_with_client(
            base.as_str(),
            total,
            context.clone().with_body_limits(json_limits),
        );
        let download = sa360_v2_client::Client::new_with_client(
            base.as_str(),
            streaming,
            context.with_body_limits(self.http.body_limits(TimeoutMode::Streaming)),
        );
        let calls = Calls::new(
            self.retry.clone(),
            self.tokens.clone(),
            &self.http,
            self.http.timeout,
        );
        let download_calls = Calls::new(
            self.retry.clone(),
            self.tokens.clone(),
            &self.http,
            self.http.read_timeout,
        );
        Ok(SearchAdsClient {
            inner: Arc::new(Inner {
                api,
                download,
                reporting,
                base,
                reporting_base,
                retry: self.retry,
                write: self.write,
                login_customer_id: self.login_customer_id,
                tokens: self.tokens,
                calls,
                download_calls,
            }),
        })
    }
}

impl SearchAdsClient {
    /// A client for Google's endpoint with default options.
    pub fn new(tokens: impl TokenSource + 'static) -> Result<Self, Error> {
        Self::builder(tokens).build()
    }

    /// A builder, to set the base URL, timeouts, retries and batching.
    pub fn builder(tokens: impl TokenSource + 'static) -> SearchAdsClientBuilder {
        Self::builder_shared(Arc::new(tokens))
    }

    /// A builder with a shared token source.
    pub fn builder_shared(tokens: Arc<dyn TokenSource>) -> SearchAdsClientBuilder {
        SearchAdsClientBuilder {
            tokens,
            base: None,
            reporting_base: None,
            base_setting: "base_url",
            reporting_base_setting: "reporting_base_url",
            http: HttpOptions::default(),
            retry: RetryPolicy::default(),
            write: WriteOptions::default(),
            login_customer_id: None,
        }
    }

    /// The base URL requests go to.
    pub fn base_url(&self) -> &BaseUrl {
        &self.inner.base
    }

    /// The Reporting API's server URL.
    pub fn reporting_base_url(&self) -> &BaseUrl {
        &self.inner.reporting_base
    }

    /// The retry policy.
    pub fn retry_policy(&self) -> &RetryPolicy {
        &self.inner.retry
    }

    /// The default batching of [`insert`](Self::insert) and [`update`](Self::update)
    /// (a request's [`options`](super::WriteRequest::options) override it).
    pub fn write_options(&self) -> WriteOptions {
        self.inner.write
    }
}

#[cfg(test)]
mod tests {
    use std::ffi::OsString;

    use super::{BASE_URL_ENV, REPORTING_BASE_URL_ENV, SearchAdsClient};
    use crate::search_ads::{Error, StaticToken};

    fn from(vars: &[(&str, &str)]) -> Result<SearchAdsClient, Error> {
        let vars: Vec<(String, OsString)> = vars
            .iter()
            .map(|(k, v)| ((*k).to_owned(), OsString::from(v)))
            .collect();
        SearchAdsClient::builder(StaticToken::new("t"))
            .endpoints_from(|name| vars.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone()))
            .build()
    }

    #[test]
    fn endpoints_come_from_the_variables_that_are_set() {
        let both = from(&[
            (BASE_URL_ENV, "http://127.0.0.1:9/doubleclicksearch/v2"),
            (REPORTING_BASE_URL_ENV, "http://127.0.0.1:10"),
        ])
        .unwrap();
        assert_eq!(
            both.base_url().as_str(),
            "http://127.0.0.1:9/doubleclicksearch/v2"
        );
        assert_eq!(both.reporting_base_url().as_str(), "http://127.0.0.1:10");

        let none = from(&[(BASE_URL_ENV, "")]).unwrap();
        assert_eq!(none.base_url().as_str(), super::DEFAULT_BASE_URL);
        assert_eq!(
            none.reporting_base_url().as_str(),
            super::DEFAULT_REPORTING_BASE_URL
        );
    }

    #[test]
    fn a_refused_endpoint_names_its_variable_and_a_later_setter_wins() {
        let err = from(&[(REPORTING_BASE_URL_ENV, "http://example.com")]).unwrap_err();
        assert!(
            matches!(&err, Error::Validation { field, .. } if field == REPORTING_BASE_URL_ENV),
            "{err}"
        );
        let err = from(&[(BASE_URL_ENV, "ftp://127.0.0.1")]).unwrap_err();
        assert!(
            matches!(&err, Error::Validation { field, .. } if field == BASE_URL_ENV),
            "{err}"
        );

        // Issue 48: a refused endpoint showed its password and query values.
        for var in [BASE_URL_ENV, REPORTING_BASE_URL_ENV] {
            for url in [
                "https://alice:HUNTER2@example.com/v2?key=APIKEY",
                "http://alice:HUNTER2@exa mple?key=APIKEY",
            ] {
                let err = from(&[(var, url)]).unwrap_err();
                let shown = format!("{err} {err:?}");
                for secret in ["alice", "HUNTER2", "APIKEY"] {
                    assert!(!shown.contains(secret), "{shown}");
                }
            }
        }

        let vars = [(BASE_URL_ENV, OsString::from("http://example.com"))];
        let client = SearchAdsClient::builder(StaticToken::new("t"))
            .endpoints_from(|name| {
                vars.iter()
                    .find(|(k, _)| *k == name)
                    .map(|(_, v)| v.clone())
            })
            .base_url("http://127.0.0.1:9/doubleclicksearch/v2")
            .build()
            .unwrap();
        assert_eq!(
            client.base_url().as_str(),
            "http://127.0.0.1:9/doubleclicksearch/v2"
        );
    }
}

//! [`ServiceAccount`]: Google's JWT-bearer grant, signed through the
//! `gcp_auth` crate, exchanged by the facade itself.
//!
//! Behind the cargo feature `service-account` (off by default): it adds the
//! `gcp_auth` crate and its HTTP stack (about 10 s to a clean debug build on
//! two cores). Applications that authenticate with a service-account key file
//! turn it on; a fixed token ([`StaticToken`](super::StaticToken)) needs nothing.
//!
//! `gcp_auth` reads the key and signs the assertion; the exchange at the key
//! file's `token_uri` is a plain `reqwest` call here, because `gcp_auth`'s own
//! exchange retries every failure five times, has no timeout and keeps no
//! status code. Here each failure is classified once:
//!
//! - **transient** ([`Error::TokenUnavailable`]): the endpoint could not be
//!   reached, did not answer within [`HttpOptions::timeout`], or answered 408,
//!   429 or 5xx. The API call that needed the token is retried under the
//!   client's [`RetryPolicy`](super::RetryPolicy) (a `Retry-After` is honoured);
//! - **permanent** ([`Error::Auth`]): any other answer, such as 400
//!   `invalid_grant` or 401 `invalid_client`; the call fails at once.

use std::fmt;
use std::path::Path;
use std::sync::Mutex;
use std::time::{Duration, SystemTime};

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use futures::future::BoxFuture;
use secrecy::SecretString;

use super::auth::{AccessToken, SCOPE, TokenSource};
use super::error::Error;
use super::retry::parse_retry_after;
use crate::http::{BaseUrl, HttpOptions, TimeoutMode, build_client};

/// A cached token is renewed when less than this is left of its life.
const REFRESH_MARGIN: Duration = Duration::from_secs(30);

/// The JWT-bearer grant type (RFC 7523).
const JWT_BEARER_GRANT: &str = "urn:ietf:params:oauth:grant-type:jwt-bearer";

/// Lifetime asked for the signed assertion (Google's maximum is one hour).
const ASSERTION_LIFETIME_SECS: i64 = 3600 - 5;

/// Longest error text kept from the token endpoint's answer.
const MAX_ERROR_TEXT: usize = 200;

/// A Google service account: signs a JWT with the key file's private key and
/// exchanges it at the key file's `token_uri` for an access token with
/// [`SCOPE`] (OAuth 2.0 JWT-bearer grant, SA-14).
///
/// The token is reused until 30 s before it expires; concurrent requests
/// share one refresh. When the API answers 401, the client calls
/// [`TokenSource::invalidate`]: the cached token is dropped if it is the one
/// refused, and the call is retried once with a fresh token.
///
/// The `token_uri` must be `https://` (plain `http://` only on a loopback
/// host, for tests). The exchange uses [`HttpOptions::default`]'s timeouts;
/// [`ServiceAccount::with_http_options`] changes them.
///
/// ```no_run
/// use facade::search_ads::ServiceAccount;
/// let source = ServiceAccount::from_file("service-account.json")?;
/// println!("{}", source.client_email()); // the key is never printed
/// # Ok::<(), facade::search_ads::Error>(())
/// ```
pub struct ServiceAccount {
    provider: gcp_auth::CustomServiceAccount,
    client_email: String,
    token_uri: String,
    http: reqwest::Client,
    timeout: Duration,
    /// One refresh at a time; the others wait for it.
    refresh: tokio::sync::Mutex<()>,
    cached: Mutex<Option<AccessToken>>,
}

impl ServiceAccount {
    /// Reads a service-account key file (the JSON Google's console downloads).
    pub fn from_file(path: impl AsRef<Path>) -> Result<Self, Error> {
        let path = path.as_ref();
        let text = std::fs::read_to_string(path).map_err(|e| Error::Auth {
            message: format!("cannot read the key file {}: {e}", path.display()),
        })?;
        Self::from_json(&text)
    }

    /// Reads a service-account key from its JSON text.
    pub fn from_json(json: &str) -> Result<Self, Error> {
        // Check the shape ourselves so that no parser message can quote the
        // private key back.
        let value: serde_json::Value = serde_json::from_str(json).map_err(|e| Error::Auth {
            message: format!(
                "the key file is not JSON (line {}, column {})",
                e.line(),
                e.column()
            ),
        })?;
        let field = |name: &str| {
            value
                .get(name)
                .and_then(|v| v.as_str())
                .filter(|s| !s.is_empty())
                .map(str::to_owned)
                .ok_or_else(|| Error::Auth {
                    message: format!(
                        "the key file has no `{name}`: use a service-account key file \
                         (\"type\": \"service_account\")"
                    ),
                })
        };
        if let Some(kind) = value.get("type").and_then(|v| v.as_str())
            && kind != "service_account"
        {
            return Err(Error::Auth {
                message: format!("the key file is of type {kind:?}, not \"service_account\""),
            });
        }
        let client_email = field("client_email")?;
        let token_uri = field("token_uri")?;
        field("private_key")?;
        let provider =
            gcp_auth::CustomServiceAccount::from_json(json).map_err(|e| Error::Auth {
                message: format!("the service-account key could not be used: {e}"),
            })?;
        let endpoint = BaseUrl::parse(&token_uri).map_err(|e| Error::Auth {
            message: format!("the key file's token_uri is refused: {e}"),
        })?;
        let options = HttpOptions::default();
        let http = Self::client(&endpoint, &options)?;
        Ok(Self {
            provider,
            client_email,
            token_uri,
            http,
            timeout: options.timeout,
            refresh: tokio::sync::Mutex::new(()),
            cached: Mutex::new(None),
        })
    }

    /// Uses `options`' connect timeout, timeout and user agent for the token
    /// exchange (default [`HttpOptions::default`]).
    pub fn with_http_options(mut self, options: &HttpOptions) -> Result<Self, Error> {
        let endpoint = BaseUrl::parse(&self.token_uri).map_err(|e| Error::Auth {
            message: format!("the key file's token_uri is refused: {e}"),
        })?;
        self.http = Self::client(&endpoint, options)?;
        self.timeout = options.timeout;
        Ok(self)
    }

    fn client(endpoint: &BaseUrl, options: &HttpOptions) -> Result<reqwest::Client, Error> {
        build_client(endpoint, options, TimeoutMode::Total).map_err(|e| Error::Config {
            message: format!("the token endpoint's HTTP client could not be built: {e}"),
        })
    }

    /// The service account's e-mail address.
    pub fn client_email(&self) -> &str {
        &self.client_email
    }

    /// The token endpoint from the key file.
    pub fn token_uri(&self) -> &str {
        &self.token_uri
    }

    /// The signed JWT-bearer assertion (a secret: never logged).
    fn assertion(&self) -> Result<SecretString, Error> {
        let now = chrono::Utc::now().timestamp();
        let claims = serde_json::json!({
            "iss": self.client_email,
            "scope": SCOPE,
            "aud": self.token_uri,
            "iat": now,
            "exp": now + ASSERTION_LIFETIME_SECS,
        });
        let mut jwt = URL_SAFE_NO_PAD.encode(br#"{"alg":"RS256","typ":"JWT"}"#);
        jwt.push('.');
        URL_SAFE_NO_PAD.encode_string(claims.to_string(), &mut jwt);
        let signature = self
            .provider
            .signer()
            .sign(jwt.as_bytes())
            .map_err(|e| Error::Auth {
                message: format!("the service-account key could not sign the assertion: {e}"),
            })?;
        jwt.push('.');
        URL_SAFE_NO_PAD.encode_string(signature, &mut jwt);
        Ok(SecretString::from(jwt))
    }

    /// One exchange at the token endpoint, classified (see the module docs).
    async fn fetch(&self) -> Result<AccessToken, Error> {
        use secrecy::ExposeSecret as _;
        let assertion = self.assertion()?;
        let body = url::form_urlencoded::Serializer::new(String::new())
            .append_pair("grant_type", JWT_BEARER_GRANT)
            .append_pair("assertion", assertion.expose_secret())
            .finish();
        let unavailable =
            |status: Option<u16>, what: String, retry_after| Error::TokenUnavailable {
                status,
                message: format!("the token endpoint {} {what}", self.token_uri),
                retry_after,
            };
        let sent = self
            .http
            .post(&self.token_uri)
            .header(
                reqwest::header::CONTENT_TYPE,
                "application/x-www-form-urlencoded",
            )
            .body(body)
            .send()
            .await;
        let response = match sent {
            Ok(response) => response,
            Err(e) => {
                return Err(unavailable(
                    None,
                    describe_send_error(&e, self.timeout),
                    None,
                ));
            }
        };
        let status = response.status();
        let retry_after = response
            .headers()
            .get(reqwest::header::RETRY_AFTER)
            .and_then(|v| v.to_str().ok())
            .and_then(parse_retry_after);
        let text = match response.text().await {
            Ok(text) => text,
            Err(e) => {
                return Err(unavailable(
                    Some(status.as_u16()),
                    describe_send_error(&e, self.timeout),
                    None,
                ));
            }
        };
        if status.as_u16() == 408 || status.as_u16() == 429 || status.is_server_error() {
            return Err(unavailable(
                Some(status.as_u16()),
                format!("answered HTTP {status}{}", oauth_error_text(&text)),
                retry_after,
            ));
        }
        if !status.is_success() {
            return Err(Error::Auth {
                message: format!(
                    "the token endpoint {} refused the exchange for {} with HTTP {status}{}",
                    self.token_uri,
                    self.client_email,
                    oauth_error_text(&text)
                ),
            });
        }
        #[derive(serde::Deserialize)]
        struct Answer {
            access_token: String,
            expires_in: Option<u64>,
        }
        let answer: Answer = serde_json::from_str(&text).map_err(|e| Error::Auth {
            message: format!(
                "the token endpoint {} answered HTTP {status} without the documented token \
                 JSON (line {}, column {})",
                self.token_uri,
                e.line(),
                e.column()
            ),
        })?;
        let expires_at = answer
            .expires_in
            .and_then(|secs| SystemTime::now().checked_add(Duration::from_secs(secs)));
        Ok(AccessToken {
            secret: SecretString::from(answer.access_token),
            expires_at,
        })
    }
}

/// A transport failure at the token endpoint, without its URL.
fn describe_send_error(error: &reqwest::Error, timeout: Duration) -> String {
    if error.is_timeout() {
        format!("did not answer within {} s", timeout.as_secs_f64())
    } else if error.is_connect() {
        format!(
            "could not be reached ({})",
            client_support::ErrorWithoutUrl(error)
        )
    } else {
        format!("failed ({})", client_support::ErrorWithoutUrl(error))
    }
}

/// `: invalid_grant (Invalid JWT signature.)` from an OAuth error body, or a
/// short excerpt of any other body. Token endpoints do not echo secrets in
/// their errors; the text is still cut short.
fn oauth_error_text(body: &str) -> String {
    #[derive(serde::Deserialize)]
    struct OAuthError {
        error: String,
        error_description: Option<String>,
    }
    let shown = match serde_json::from_str::<OAuthError>(body) {
        Ok(e) => match e.error_description.filter(|d| !d.is_empty()) {
            Some(d) => format!("{} ({d})", e.error),
            None => e.error,
        },
        Err(_) => body.trim().to_owned(),
    };
    if shown.is_empty() {
        return String::new();
    }
    let cut: String = shown.chars().take(MAX_ERROR_TEXT).collect();
    let more = if cut.len() < shown.len() { "…" } else { "" };
    format!(": {cut}{more}")
}

impl fmt::Debug for ServiceAccount {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ServiceAccount")
            .field("client_email", &self.client_email)
            .field("token_uri", &self.token_uri)
            .finish_non_exhaustive()
    }
}

impl ServiceAccount {
    fn cached_fresh(&self) -> Option<AccessToken> {
        let cached = self.cached.lock().unwrap_or_else(|p| p.into_inner());
        cached
            .as_ref()
            .filter(|t| t.is_fresh(REFRESH_MARGIN))
            .cloned()
    }
}

impl TokenSource for ServiceAccount {
    fn token(&self) -> BoxFuture<'_, Result<AccessToken, Error>> {
        Box::pin(async move {
            if let Some(token) = self.cached_fresh() {
                return Ok(token);
            }
            // Concurrent callers wait for one refresh instead of each running
            // their own; the one that waited finds the new token cached.
            let _refreshing = self.refresh.lock().await;
            if let Some(token) = self.cached_fresh() {
                return Ok(token);
            }
            let token = self.fetch().await?;
            tracing::debug!(client_email = %self.client_email, "obtained a service-account access token");
            *self.cached.lock().unwrap_or_else(|p| p.into_inner()) = Some(token.clone());
            Ok(token)
        })
    }

    fn invalidate(&self, rejected: &AccessToken) -> bool {
        let mut cached = self.cached.lock().unwrap_or_else(|p| p.into_inner());
        if cached.as_ref().is_some_and(|t| t.same_token(rejected)) {
            *cached = None;
            tracing::info!(
                client_email = %self.client_email,
                "the API refused the cached access token (401): it is dropped"
            );
        }
        // A fresh token can always be asked for.
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_key_files_are_explained_without_echoing_the_key() {
        let e = ServiceAccount::from_json("{").unwrap_err();
        assert!(e.to_string().contains("not JSON"), "{e}");
        let e = ServiceAccount::from_json(
            r#"{"type":"service_account","client_email":"a@b","token_uri":"http://127.0.0.1:1/token","private_key":"SECRETKEYMATERIAL"}"#,
        )
        .unwrap_err();
        assert!(!e.to_string().contains("SECRETKEYMATERIAL"), "{e}");
        let e = ServiceAccount::from_json(r#"{"type":"authorized_user"}"#).unwrap_err();
        assert!(e.to_string().contains("authorized_user"), "{e}");
        let e = ServiceAccount::from_json(r#"{"client_email":"a@b"}"#).unwrap_err();
        assert!(e.to_string().contains("token_uri"), "{e}");
    }
}

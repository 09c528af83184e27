//! [`ServiceAccount`]: Google's JWT-bearer grant, signed through the
//! `gcp_auth` crate, exchanged by the SDK itself.
//!
//! Behind the cargo feature `service-account` (off by default): it adds the
//! `gcp_auth` crate and its HTTP stack (about 10 s to a clean debug build on
//! two cores). Applications that authenticate with a service-account key file
//! turn it on; a fixed token ([`StaticToken`](crate::search_ads::StaticToken)) needs nothing.
//!
//! `gcp_auth` reads the key and signs the assertion; the exchange at the key
//! file's `token_uri` goes through the SDK's one bounded token-endpoint
//! path (`auth/endpoint.rs`), because `gcp_auth`'s own exchange retries every
//! failure five times, has no timeout, reads the answer without a size limit
//! and keeps no status code (SA-25). Each failure is classified once:
//!
//! - **transient** ([`Error::TokenUnavailable`]): the endpoint could not be
//!   reached, did not answer within [`HttpOptions::timeout`], sent a body
//!   over [`HttpOptions::max_body_bytes`] or too slowly
//!   ([`HttpOptions::read_timeout`]), or answered 408, 429 or 5xx. The API
//!   call that needed the token is retried under the client's
//!   [`RetryPolicy`](crate::search_ads::RetryPolicy) (a `Retry-After` is honoured);
//! - **refused** ([`Error::InvalidGrant`]): 400 `invalid_grant` (a deleted or
//!   disabled key, a clock far off);
//! - **permanent** ([`Error::Auth`]): any other answer, such as 401
//!   `invalid_client`; the call fails at once.

use std::fmt;
use std::path::Path;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use secrecy::{ExposeSecret as _, SecretString};

use super::authorized_user::read_credentials_file;
use super::cache::TokenCache;
use super::credential_kind::CredentialKind;
use super::endpoint::{FileUrl, TokenEndpoint};
use super::token::{AccessToken, SCOPE};
use crate::http::HttpOptions;
use crate::search_ads::error::Error;

/// The JWT-bearer grant type (RFC 7523).
const JWT_BEARER_GRANT: &str = "urn:ietf:params:oauth:grant-type:jwt-bearer";

/// Lifetime asked for the signed assertion (Google's maximum is one hour).
const ASSERTION_LIFETIME_SECS: i64 = 3600 - 5;

fn auth_error(message: String) -> Error {
    Error::auth(CredentialKind::ServiceAccount, message)
}

/// A Google service account: signs a JWT with the key file's private key and
/// exchanges it at the key file's `token_uri` for an access token with
/// [`SCOPE`] (OAuth 2.0 JWT-bearer grant, SA-14).
///
/// The token is reused until 30 s before it expires; concurrent requests
/// share one refresh. When the API answers 401, the client calls
/// [`TokenSource::invalidate`](super::TokenSource::invalidate): the cached token is dropped if it is the one
/// refused, and the call is retried once with a fresh token.
///
/// The key file's `token_uri` receives the signed assertion, so it must be
/// Google's (`oauth2.googleapis.com`, or `accounts.google.com` in older
/// keys); on loopback (tests, the fake) it is used once the application opens
/// loopback ([`TokenSource::allow_loopback`](super::TokenSource::allow_loopback)). The exchange is bounded like the API's answers
/// ([`HttpOptions::default`]; [`ServiceAccount::http_options`] changes it).
///
/// ```no_run
/// use sa360_video_sdk::search_ads::ServiceAccount;
/// let source = ServiceAccount::from_file("service-account.json")?;
/// println!("{}", source.client_email()); // the key is never printed
/// # Ok::<(), sa360_video_sdk::search_ads::Error>(())
/// ```
#[cfg_attr(docsrs, doc(cfg(feature = "service-account")))]
pub struct ServiceAccount {
    provider: gcp_auth::CustomServiceAccount,
    client_email: String,
    endpoint: TokenEndpoint,
    quota_project_id: Option<String>,
    cache: TokenCache,
}

impl ServiceAccount {
    /// Reads a service-account key file (the JSON Google's console
    /// downloads; at most 64 KiB).
    pub fn from_file(path: impl AsRef<Path>) -> Result<Self, Error> {
        let path = path.as_ref();
        let text = read_credentials_file(
            path,
            CredentialKind::ServiceAccount,
            HttpOptions::default().timeout,
        )?;
        Self::from_json(&text)
    }

    /// Reads a service-account key from its JSON text (its `token_uri`: see
    /// the type's docs).
    pub fn from_json(json: &str) -> Result<Self, Error> {
        Self::parse(json, false)
    }

    /// [`from_json`](Self::from_json), accepting any `token_uri` host when
    /// `any_host` (`DefaultCredentialsBuilder::allow_non_google_token_hosts`).
    pub(crate) fn parse(json: &str, any_host: bool) -> Result<Self, Error> {
        // Check the shape ourselves so that no parser message can quote the
        // private key back.
        let value: serde_json::Value = serde_json::from_str(json).map_err(|e| {
            auth_error(format!(
                "the key file is not JSON (line {}, column {})",
                e.line(),
                e.column()
            ))
        })?;
        let field = |name: &str| {
            value
                .get(name)
                .and_then(|v| v.as_str())
                .filter(|s| !s.is_empty())
                .map(str::to_owned)
                .ok_or_else(|| {
                    auth_error(format!(
                        "the key file has no `{name}`: use a service-account key file \
                         (\"type\": \"service_account\")"
                    ))
                })
        };
        if let Some(kind) = value.get("type").and_then(|v| v.as_str())
            && kind != "service_account"
        {
            return Err(auth_error(format!(
                "the key file is of type {kind:?}, not \"service_account\""
            )));
        }
        let client_email = field("client_email")?;
        let token_uri = field("token_uri")?;
        field("private_key")?;
        let provider = gcp_auth::CustomServiceAccount::from_json(json)
            .map_err(|e| auth_error(format!("the service-account key could not be used: {e}")))?;
        let endpoint = TokenEndpoint::named_in_file(
            &token_uri,
            FileUrl::TokenUri,
            any_host,
            HttpOptions::default(),
            CredentialKind::ServiceAccount,
        )?;
        let quota_project_id = value
            .get("quota_project_id")
            .and_then(|v| v.as_str())
            .map(|id| super::quota_project::checked("quota_project_id", id))
            .transpose()?;
        Ok(Self {
            quota_project_id,
            provider,
            client_email,
            endpoint,
            cache: TokenCache::default(),
        })
    }

    /// The same key with other timeouts and body limits for the token
    /// exchange (default [`HttpOptions::default`]).
    pub fn http_options(mut self, options: HttpOptions) -> Self {
        self.endpoint = self.endpoint.with_options(options);
        self
    }

    /// The service account's e-mail address.
    pub fn client_email(&self) -> &str {
        &self.client_email
    }

    /// The token endpoint from the key file.
    pub fn token_uri(&self) -> &str {
        self.endpoint.url()
    }

    /// The signed JWT-bearer assertion (a secret: never logged).
    fn assertion(&self) -> Result<SecretString, Error> {
        let now = chrono::Utc::now().timestamp();
        let claims = serde_json::json!({
            "iss": self.client_email,
            "scope": SCOPE,
            "aud": self.endpoint.url(),
            "iat": now,
            "exp": now + ASSERTION_LIFETIME_SECS,
        });
        let mut jwt = URL_SAFE_NO_PAD.encode(br#"{"alg":"RS256","typ":"JWT"}"#);
        jwt.push('.');
        URL_SAFE_NO_PAD.encode_string(claims.to_string(), &mut jwt);
        let signature = self.provider.signer().sign(jwt.as_bytes()).map_err(|e| {
            auth_error(format!(
                "the service-account key could not sign the assertion: {e}"
            ))
        })?;
        jwt.push('.');
        URL_SAFE_NO_PAD.encode_string(signature, &mut jwt);
        Ok(SecretString::from(jwt))
    }

    /// One exchange at the token endpoint (bounded and classified by
    /// `auth/endpoint.rs`).
    async fn fetch(&self) -> Result<AccessToken, Error> {
        let assertion = self.assertion()?;
        let answer = self
            .endpoint
            .post_form(&[
                ("grant_type", JWT_BEARER_GRANT),
                ("assertion", assertion.expose_secret()),
            ])
            .await?;
        let token = self
            .endpoint
            .token(&answer, &format!("the assertion of {}", self.client_email))?;
        tracing::debug!(client_email = %self.client_email, "obtained a service-account access token");
        Ok(token)
    }
}

impl fmt::Debug for ServiceAccount {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ServiceAccount")
            .field("client_email", &self.client_email)
            .field("token_uri", &self.endpoint.shown())
            .finish_non_exhaustive()
    }
}

super::cache::cached_source!(ServiceAccount, CredentialKind::ServiceAccount, |s| s
    .endpoint
    .allow_loopback());

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

//! [`ImpersonatedServiceAccount`]: a service account's access token, minted
//! by IAM Credentials' `generateAccessToken` with the token of other
//! ("source") credentials, as `gcloud auth application-default login
//! --impersonate-service-account` sets up (an `impersonated_service_account`
//! file).
//!
//! The call, as Google documents it
//! (<https://cloud.google.com/iam/docs/reference/credentials/rest/v1/projects.serviceAccounts/generateAccessToken>,
//! <https://cloud.google.com/docs/authentication/use-service-account-impersonation>):
//! `POST …/v1/projects/-/serviceAccounts/EMAIL:generateAccessToken` with the
//! source's bearer token and `{"scope": [...], "delegates": [...],
//! "lifetime": "3600s"}`; the answer is `{"accessToken", "expireTime"}`. It
//! goes through the same bounded path as every token exchange
//! (`auth/endpoint.rs`).

use std::fmt;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use super::cache::TokenCache;
use super::endpoint::{FileUrl, TokenEndpoint};
use super::token::{AccessToken, SCOPE, TokenSource};
use crate::http::HttpOptions;
use crate::search_ads::auth::credential_kind::CredentialKind;
use crate::search_ads::error::Error;

/// The longest token lifetime `generateAccessToken` grants by default (and
/// the lifetime asked for unless set).
pub const MAX_IMPERSONATION_LIFETIME: Duration = Duration::from_secs(3600);

/// A service account impersonated with the token of `source` credentials.
///
/// ```
/// use std::sync::Arc;
/// use sa360_video_sdk::search_ads::{ImpersonatedServiceAccount, StaticToken};
///
/// let source = Arc::new(StaticToken::new("ya29.source"));
/// let target = ImpersonatedServiceAccount::new(
///     source,
///     "https://iamcredentials.googleapis.com/v1/projects/-/serviceAccounts/sa@p.iam.gserviceaccount.com:generateAccessToken",
/// )?;
/// assert_eq!(target.service_account(), "sa@p.iam.gserviceaccount.com");
/// # Ok::<(), sa360_video_sdk::search_ads::Error>(())
/// ```
pub struct ImpersonatedServiceAccount {
    source: Arc<dyn TokenSource>,
    service_account: String,
    endpoint: TokenEndpoint,
    delegates: Vec<String>,
    lifetime: Duration,
    quota_project_id: Option<String>,
    cache: TokenCache,
}

fn auth_error(message: String) -> Error {
    Error::auth(CredentialKind::ImpersonatedServiceAccount, message)
}

/// The service account's e-mail address in a `generateAccessToken` URL.
fn service_account_of(url: &str) -> Option<String> {
    let parsed = url::Url::parse(url).ok()?;
    let last = parsed.path_segments()?.next_back()?;
    let last = percent_encoding::percent_decode_str(last).decode_utf8_lossy();
    let email = last.strip_suffix(":generateAccessToken")?;
    (!email.is_empty()).then(|| email.to_owned())
}

impl ImpersonatedServiceAccount {
    /// Impersonates the service account of `impersonation_url` (IAM
    /// Credentials' `…/serviceAccounts/EMAIL:generateAccessToken`; `https://`,
    /// or `http://` on loopback) with `source`'s tokens; no delegates, a
    /// lifetime of one hour.
    pub fn new(source: Arc<dyn TokenSource>, impersonation_url: &str) -> Result<Self, Error> {
        let endpoint = TokenEndpoint::new(
            impersonation_url,
            HttpOptions::default(),
            CredentialKind::ImpersonatedServiceAccount,
        )?;
        Self::with_endpoint(source, endpoint)
    }

    /// The `service_account_impersonation_url` of a file: only IAM
    /// Credentials' host (`iamcredentials.googleapis.com`) unless `any_host`;
    /// loopback behind the loopback gate (`TokenEndpoint::named_in_file`).
    pub(crate) fn from_file_url(
        source: Arc<dyn TokenSource>,
        impersonation_url: &str,
        any_host: bool,
    ) -> Result<Self, Error> {
        let endpoint = TokenEndpoint::named_in_file(
            impersonation_url,
            FileUrl::ImpersonationUrl,
            any_host,
            HttpOptions::default(),
            CredentialKind::ImpersonatedServiceAccount,
        )?;
        Self::with_endpoint(source, endpoint)
    }

    fn with_endpoint(source: Arc<dyn TokenSource>, endpoint: TokenEndpoint) -> Result<Self, Error> {
        let service_account = service_account_of(endpoint.url()).ok_or_else(|| {
            Error::invalid(
                "service_account_impersonation_url",
                format!(
                    "{} is not an IAM Credentials URL ending in \
                     /serviceAccounts/EMAIL:generateAccessToken",
                    endpoint.shown()
                ),
            )
        })?;
        Ok(Self {
            source,
            service_account,
            endpoint,
            delegates: Vec::new(),
            lifetime: MAX_IMPERSONATION_LIFETIME,
            quota_project_id: None,
            cache: TokenCache::default(),
        })
    }

    /// The delegation chain: service accounts, each allowed to impersonate
    /// the next (e-mail addresses, or `projects/-/serviceAccounts/EMAIL`).
    #[must_use]
    pub fn delegates(mut self, delegates: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.delegates = delegates
            .into_iter()
            .map(Into::into)
            .map(|d: String| {
                if d.starts_with("projects/") {
                    d
                } else {
                    format!("projects/-/serviceAccounts/{d}")
                }
            })
            .collect();
        self
    }

    /// The lifetime asked for (1 s to one hour; default one hour).
    pub fn lifetime(mut self, lifetime: Duration) -> Result<Self, Error> {
        if lifetime < Duration::from_secs(1) || lifetime > MAX_IMPERSONATION_LIFETIME {
            return Err(Error::invalid(
                "lifetime",
                "must be between 1 s and 3600 s (IAM Credentials' default maximum)",
            ));
        }
        self.lifetime = lifetime;
        Ok(self)
    }

    /// Timeouts and body limits of the `generateAccessToken` call.
    #[must_use]
    pub fn http_options(mut self, options: HttpOptions) -> Self {
        self.endpoint = self.endpoint.with_options(options);
        self
    }

    /// The impersonated service account's e-mail address.
    pub fn service_account(&self) -> &str {
        &self.service_account
    }

    async fn fetch(&self) -> Result<AccessToken, Error> {
        let source = self.source.token().await?;
        let token = generate_access_token(
            &self.endpoint,
            source.expose_secret(),
            &self.delegates,
            self.lifetime,
        )
        .await;
        if let Err(Error::Auth { message, .. }) = &token
            && message.contains("HTTP 401")
        {
            // IAM refused the source token: drop it so the next try gets a fresh one.
            self.source.invalidate(&source);
        }
        token
    }
}

/// IAM Credentials' answer.
#[derive(serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct GeneratedToken {
    access_token: String,
    expire_time: String,
}

/// One `generateAccessToken` call at `endpoint` with `bearer` (shared with
/// `external_account`'s optional impersonation).
pub(crate) async fn generate_access_token(
    endpoint: &TokenEndpoint,
    bearer: &str,
    delegates: &[String],
    lifetime: Duration,
) -> Result<AccessToken, Error> {
    let mut body = serde_json::json!({
        "scope": [SCOPE],
        "lifetime": format!("{}s", lifetime.as_secs()),
    });
    if !delegates.is_empty() {
        body["delegates"] = serde_json::Value::from(delegates.to_vec());
    }
    let answer = endpoint.post_json(&body, bearer).await?;
    endpoint.check(&answer, "the impersonation (generateAccessToken)")?;
    let parsed: GeneratedToken = serde_json::from_slice(&answer.body).map_err(|e| {
        auth_error(format!(
            "{} answered without the documented generateAccessToken JSON (line {}, column {})",
            endpoint.shown(),
            e.line(),
            e.column()
        ))
    })?;
    let expires = chrono::DateTime::parse_from_rfc3339(&parsed.expire_time)
        .ok()
        .map(SystemTime::from);
    Ok(match expires {
        Some(at) => AccessToken::with_expiry(parsed.access_token, at),
        None => AccessToken::with_expiry(parsed.access_token, SystemTime::now() + lifetime),
    })
}

impl fmt::Debug for ImpersonatedServiceAccount {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ImpersonatedServiceAccount")
            .field("service_account", &self.service_account)
            .field("source", &self.source)
            .field("delegates", &self.delegates)
            .field("lifetime", &self.lifetime)
            .finish_non_exhaustive()
    }
}

super::cache::cached_source!(
    ImpersonatedServiceAccount,
    CredentialKind::ImpersonatedServiceAccount,
    |s| {
        s.endpoint.allow_loopback();
        s.source.allow_loopback();
    }
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_service_account_comes_from_the_url() {
        assert_eq!(
            service_account_of(
                "https://iamcredentials.googleapis.com/v1/projects/-/serviceAccounts/a%40b.iam.gserviceaccount.com:generateAccessToken"
            )
            .as_deref(),
            Some("a@b.iam.gserviceaccount.com")
        );
        assert!(service_account_of("https://x/v1/projects/-/serviceAccounts/a@b").is_none());
        let source: Arc<dyn TokenSource> = Arc::new(super::super::token::StaticToken::new("t"));
        let e = ImpersonatedServiceAccount::new(source.clone(), "https://x/other").unwrap_err();
        assert!(
            e.to_string().contains("service_account_impersonation_url"),
            "{e}"
        );
        let ok = ImpersonatedServiceAccount::new(
            source,
            "https://x/v1/projects/-/serviceAccounts/a@b:generateAccessToken",
        )
        .unwrap()
        .delegates(["d@p.iam.gserviceaccount.com"]);
        assert_eq!(
            ok.delegates,
            ["projects/-/serviceAccounts/d@p.iam.gserviceaccount.com"]
        );
        assert!(ok.lifetime(Duration::from_secs(7200)).is_err());
    }
}

//! What every credential gives: an [`AccessToken`], through the [`TokenSource`] trait; the fixed
//! [`StaticToken`]; the API's [`SCOPE`].

use std::fmt;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use futures::future::BoxFuture;
use secrecy::{ExposeSecret, SecretString};

use crate::search_ads::error::Error;

/// The OAuth scope of the API (SA-14); every method needs it.
pub const SCOPE: &str = "https://www.googleapis.com/auth/doubleclicksearch";

use crate::search_ads::auth::credential_kind::CredentialKind;

/// A bearer token and, when known, when it expires.
///
/// `Debug` never shows the token:
///
/// ```
/// use sa360_video_sdk::search_ads::AccessToken;
/// let t = AccessToken::new("ya29.secret-value");
/// assert!(!format!("{t:?}").contains("secret-value"));
/// assert_eq!(t.expose_secret(), "ya29.secret-value");
/// ```
#[derive(Clone)]
pub struct AccessToken {
    pub(super) secret: SecretString,
    pub(super) expires_at: Option<SystemTime>,
}

impl AccessToken {
    /// A token that does not expire (as far as the client knows).
    pub fn new(token: impl Into<String>) -> Self {
        Self {
            secret: SecretString::from(token.into()),
            expires_at: None,
        }
    }

    /// A token that expires at `expires_at`.
    pub fn with_expiry(token: impl Into<String>, expires_at: SystemTime) -> Self {
        Self {
            secret: SecretString::from(token.into()),
            expires_at: Some(expires_at),
        }
    }

    /// The token text, for the `Authorization` header. Do not log it.
    pub fn expose_secret(&self) -> &str {
        self.secret.expose_secret()
    }

    /// When the token expires, if known.
    pub fn expires_at(&self) -> Option<SystemTime> {
        self.expires_at
    }

    /// True when both are the same token (the secrets are compared; neither
    /// is shown).
    pub fn same_token(&self, other: &AccessToken) -> bool {
        self.expose_secret() == other.expose_secret()
    }

    /// True while the token has at least `margin` of life left.
    pub fn is_fresh(&self, margin: Duration) -> bool {
        match self.expires_at {
            None => true,
            Some(at) => SystemTime::now()
                .checked_add(margin)
                .is_some_and(|deadline| deadline < at),
        }
    }
}

impl fmt::Debug for AccessToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AccessToken")
            .field("token", &"[REDACTED]")
            .field("expires_at", &self.expires_at)
            .finish()
    }
}

/// Where the client gets its bearer token, asked before every request attempt.
///
/// Implementations should cache and refresh shortly before expiry; errors
/// should be [`Error::Auth`] or [`Error::InvalidGrant`] (permanent: bad
/// credentials, a revoked refresh token) or [`Error::TokenUnavailable`] (transient: the token endpoint could not be
/// reached, timed out, or answered 408, 429 or 5xx; the call is then retried
/// under the client's [`RetryPolicy`](crate::search_ads::RetryPolicy)), with a message that
/// never contains a secret.
/// The trait is object-safe: the client holds an `Arc<dyn TokenSource>`.
///
/// ```
/// use futures::future::BoxFuture;
/// use sa360_video_sdk::search_ads::{AccessToken, CredentialKind, Error, TokenSource};
///
/// /// Reads the token from an environment variable on every call.
/// #[derive(Debug)]
/// struct FromEnv;
///
/// impl TokenSource for FromEnv {
///     fn token(&self) -> BoxFuture<'_, Result<AccessToken, Error>> {
///         Box::pin(async {
///             std::env::var("SA360_TOKEN")
///                 .map(AccessToken::new)
///                 .map_err(|_| Error::Auth {
///                     credential: CredentialKind::Other,
///                     message: "SA360_TOKEN is not set".into(),
///                 })
///         })
///     }
/// }
/// ```
pub trait TokenSource: Send + Sync + fmt::Debug {
    /// A token that is valid now.
    fn token(&self) -> BoxFuture<'_, Result<AccessToken, Error>>;

    /// The API refused `rejected` with HTTP 401: forget it if it is the
    /// cached token, so the next [`token`](Self::token) call gets a fresh one.
    /// A source must not drop a different token (another caller may already
    /// have replaced the rejected one).
    ///
    /// Returns true when a later [`token`](Self::token) call may answer a
    /// different token, so the client retries the call once; false (the
    /// default, right for a fixed token) makes the 401 final at once.
    fn invalidate(&self, rejected: &AccessToken) -> bool {
        let _ = rejected;
        false
    }

    /// The kind of credential behind the source (default
    /// [`CredentialKind::Other`]), for status displays.
    fn kind(&self) -> CredentialKind {
        CredentialKind::Other
    }

    /// The quota project the API calls are billed to (sent as
    /// `x-goog-user-project`, never to a token endpoint), if any: a
    /// credentials file's `quota_project_id`, or `GOOGLE_CLOUD_QUOTA_PROJECT`
    /// (see [`DefaultCredentials`](crate::search_ads::DefaultCredentials)). Default: none.
    fn quota_project_id(&self) -> Option<&str> {
        None
    }

    /// Lets the token URLs a credentials file names be on loopback
    /// (`127.0.0.0/8`, `::1`, `localhost`): the application points at local
    /// fakes. Until then such a URL is refused before anything is sent to
    /// it, so a file alone never sends a secret to a local process. A
    /// [`SearchAdsClient`](crate::search_ads::SearchAdsClient) whose endpoints
    /// are on loopback calls it when it is built. Default: nothing (a source
    /// without file URLs).
    fn allow_loopback(&self) {}
}

impl<T: TokenSource + ?Sized> TokenSource for Arc<T> {
    fn token(&self) -> BoxFuture<'_, Result<AccessToken, Error>> {
        (**self).token()
    }

    fn invalidate(&self, rejected: &AccessToken) -> bool {
        (**self).invalidate(rejected)
    }

    fn kind(&self) -> CredentialKind {
        (**self).kind()
    }

    fn quota_project_id(&self) -> Option<&str> {
        (**self).quota_project_id()
    }

    fn allow_loopback(&self) {
        (**self).allow_loopback();
    }
}

/// A fixed token, e.g. from `gcloud auth print-access-token` or a test.
///
/// ```
/// use sa360_video_sdk::search_ads::StaticToken;
/// let source = StaticToken::new("ya29.a0...");
/// assert!(!format!("{source:?}").contains("ya29"));
/// ```
#[derive(Clone)]
pub struct StaticToken {
    token: AccessToken,
}

impl StaticToken {
    /// Always answers `token`.
    pub fn new(token: impl Into<String>) -> Self {
        Self {
            token: AccessToken::new(token),
        }
    }
}

impl fmt::Debug for StaticToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("StaticToken([REDACTED])")
    }
}

impl TokenSource for StaticToken {
    fn token(&self) -> BoxFuture<'_, Result<AccessToken, Error>> {
        let token = self.token.clone();
        Box::pin(async move { Ok(token) })
    }

    fn kind(&self) -> CredentialKind {
        CredentialKind::FixedToken
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_never_print() {
        let t = AccessToken::with_expiry("tok-123", SystemTime::now());
        assert!(!format!("{t:?}").contains("tok-123"));
        assert!(!format!("{:?}", StaticToken::new("tok-123")).contains("tok-123"));
    }

    #[test]
    fn freshness_uses_the_margin() {
        let soon = AccessToken::with_expiry("t", SystemTime::now() + Duration::from_secs(10));
        assert!(!soon.is_fresh(Duration::from_secs(30)));
        assert!(soon.is_fresh(Duration::from_secs(1)));
        assert!(AccessToken::new("t").is_fresh(Duration::from_secs(3600)));
    }

    #[tokio::test]
    async fn static_tokens_answer_their_token() {
        let s = StaticToken::new("abc");
        assert_eq!(s.token().await.unwrap().expose_secret(), "abc");
    }
}

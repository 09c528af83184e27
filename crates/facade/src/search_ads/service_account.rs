//! [`ServiceAccount`]: Google's JWT-bearer grant through the `gcp_auth` crate.
//!
//! Behind the cargo feature `service-account` (off by default): it adds the
//! `gcp_auth` crate and its HTTP stack (about 10 s to a clean debug build on
//! two cores). Applications that authenticate with a service-account key file
//! turn it on; a fixed token ([`StaticToken`](super::StaticToken)) needs nothing.

use std::fmt;
use std::path::Path;
use std::time::{Duration, SystemTime};

use futures::future::BoxFuture;
use secrecy::SecretString;

use super::auth::{AccessToken, SCOPE, TokenSource};
use super::error::Error;

/// A cached token is renewed when less than this is left of its life.
const REFRESH_MARGIN: Duration = Duration::from_secs(30);

/// Longest wait for the token endpoint (gcp_auth sets no timeout of its own).
const EXCHANGE_TIMEOUT: Duration = Duration::from_secs(30);

/// A Google service account: signs a JWT with the key file's private key and
/// exchanges it at the key file's `token_uri` for an access token with
/// [`SCOPE`] (OAuth 2.0 JWT-bearer grant, SA-14).
///
/// The exchange is done by the `gcp_auth` crate (ring for RSA, rustls for
/// HTTPS; plain `http://` is accepted for a loopback `token_uri` in tests).
/// The token is reused until 30 s before it expires; concurrent requests
/// share one refresh.
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
    cached: tokio::sync::Mutex<Option<AccessToken>>,
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
        Ok(Self {
            provider,
            client_email,
            token_uri,
            cached: tokio::sync::Mutex::new(None),
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

    async fn fetch(&self) -> Result<AccessToken, Error> {
        use gcp_auth::TokenProvider;
        let exchange = tokio::time::timeout(EXCHANGE_TIMEOUT, self.provider.token(&[SCOPE]));
        let token = match exchange.await {
            Ok(Ok(token)) => token,
            Ok(Err(e)) => {
                return Err(Error::Auth {
                    message: format!(
                        "the token endpoint {} refused or failed the exchange for {}: {e}",
                        self.token_uri, self.client_email
                    ),
                });
            }
            Err(_) => {
                return Err(Error::Auth {
                    message: format!(
                        "the token endpoint {} did not answer within {} s",
                        self.token_uri,
                        EXCHANGE_TIMEOUT.as_secs()
                    ),
                });
            }
        };
        let expires_at = SystemTime::UNIX_EPOCH.checked_add(Duration::from_millis(
            u64::try_from(token.expires_at().timestamp_millis()).unwrap_or(0),
        ));
        Ok(AccessToken {
            secret: SecretString::from(token.as_str()),
            expires_at,
        })
    }
}

impl fmt::Debug for ServiceAccount {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ServiceAccount")
            .field("client_email", &self.client_email)
            .field("token_uri", &self.token_uri)
            .finish_non_exhaustive()
    }
}

impl TokenSource for ServiceAccount {
    fn token(&self) -> BoxFuture<'_, Result<AccessToken, Error>> {
        Box::pin(async move {
            // Holding the lock across the exchange makes concurrent callers
            // wait for one refresh instead of each running its own.
            let mut cached = self.cached.lock().await;
            if let Some(token) = cached.as_ref().filter(|t| t.is_fresh(REFRESH_MARGIN)) {
                return Ok(token.clone());
            }
            let token = self.fetch().await?;
            tracing::debug!(client_email = %self.client_email, "obtained a service-account access token");
            *cached = Some(token.clone());
            Ok(token)
        })
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

//! [`MetadataServer`]: the access token of the service account attached to a
//! Google Cloud resource (Compute Engine, GKE, Cloud Run, Cloud Functions),
//! from the metadata server (Application Default Credentials' last step).

use std::fmt;

use futures::future::BoxFuture;

use super::cache::TokenCache;
use super::endpoint::TokenEndpoint;
use super::token::{AccessToken, SCOPE, TokenSource};
use crate::http::HttpOptions;
use crate::search_ads::auth::credential_kind::CredentialKind;
use crate::search_ads::error::Error;

/// The metadata server's host on Google's platforms.
pub const METADATA_HOST: &str = "metadata.google.internal";

/// The environment variable that overrides [`METADATA_HOST`] (`HOST[:PORT]`),
/// as in Google's own libraries; tests point it at a fake.
pub const METADATA_HOST_ENV: &str = "GCE_METADATA_HOST";

const TOKEN_PATH: &str = "/computeMetadata/v1/instance/service-accounts/default/token";

/// Tokens of the service account attached to the Google Cloud resource the
/// program runs on: `GET http://metadata.google.internal/computeMetadata/v1/instance/service-accounts/default/token`
/// with `Metadata-Flavor: Google`.
///
/// Cached, shared and invalidated like [`AuthorizedUser`](crate::search_ads::AuthorizedUser)'s
/// tokens; the answer is bounded by [`HttpOptions`] like the API's. Outside
/// Google Cloud the server cannot be reached: the error says so and names the
/// other ways to sign in.
///
/// ```
/// use sa360_video_sdk::search_ads::MetadataServer;
///
/// let source = MetadataServer::builder().host("127.0.0.1:8080").build()?;
/// assert_eq!(source.host(), "127.0.0.1:8080");
/// # Ok::<(), sa360_video_sdk::search_ads::Error>(())
/// ```
pub struct MetadataServer {
    host: String,
    endpoint: TokenEndpoint,
    cache: TokenCache,
}

/// Builds a [`MetadataServer`]; checked in [`build`](Self::build).
#[derive(Debug)]
#[must_use]
pub struct MetadataServerBuilder {
    host: Option<String>,
    options: HttpOptions,
}

impl MetadataServerBuilder {
    /// The server's `HOST[:PORT]` (default: `GCE_METADATA_HOST`, else
    /// [`METADATA_HOST`]).
    pub fn host(mut self, host: impl Into<String>) -> Self {
        self.host = Some(host.into());
        self
    }

    /// Timeouts and body limits (default [`HttpOptions::default`]).
    pub fn http_options(mut self, options: HttpOptions) -> Self {
        self.options = options;
        self
    }

    /// Checks the host (no scheme, no path).
    pub fn build(self) -> Result<MetadataServer, Error> {
        let host = self
            .host
            .or_else(|| {
                std::env::var(METADATA_HOST_ENV)
                    .ok()
                    .filter(|h| !h.is_empty())
            })
            .unwrap_or_else(|| METADATA_HOST.to_owned());
        let path = format!(
            "{TOKEN_PATH}?scopes={}",
            url::form_urlencoded::byte_serialize(SCOPE.as_bytes()).collect::<String>()
        );
        let endpoint = TokenEndpoint::metadata(&host, &path, self.options)?;
        Ok(MetadataServer {
            host,
            endpoint,
            cache: TokenCache::default(),
        })
    }
}

impl MetadataServer {
    /// A builder.
    pub fn builder() -> MetadataServerBuilder {
        MetadataServerBuilder {
            host: None,
            options: HttpOptions::default(),
        }
    }

    /// The server's `HOST[:PORT]`.
    pub fn host(&self) -> &str {
        &self.host
    }

    async fn fetch(&self) -> Result<AccessToken, Error> {
        let answer = self.endpoint.get(&[("Metadata-Flavor", "Google")]).await?;
        self.endpoint.token(&answer, "the token request")
    }
}

impl fmt::Debug for MetadataServer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MetadataServer")
            .field("host", &self.host)
            .finish_non_exhaustive()
    }
}

impl TokenSource for MetadataServer {
    fn token(&self) -> BoxFuture<'_, Result<AccessToken, Error>> {
        Box::pin(self.cache.get(|| self.fetch()))
    }

    fn invalidate(&self, rejected: &AccessToken) -> bool {
        self.cache.invalidate(rejected);
        true
    }

    fn kind(&self) -> CredentialKind {
        CredentialKind::MetadataServer
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_with_a_scheme_or_path_are_refused() {
        for bad in ["http://x", "x/y", "", "u@x"] {
            let e = MetadataServer::builder().host(bad).build().unwrap_err();
            assert!(e.to_string().contains("metadata server"), "{e}");
        }
        let ok = MetadataServer::builder()
            .host("metadata.google.internal")
            .build()
            .unwrap();
        assert!(format!("{ok:?}").contains("metadata.google.internal"));
    }
}

//! Access tokens: where the client gets the bearer token it sends.
//!
//! The client asks its [`TokenSource`] for a token before every request
//! attempt. The sources, one file each under `auth/`:
//!
//! | source | credential | file |
//! |---|---|---|
//! | [`StaticToken`](super::StaticToken) | a fixed access token (expires within the hour) | here |
//! | [`AuthorizedUser`](super::AuthorizedUser) | OAuth client id + secret + refresh token (Google's SA360 guides; `gcloud auth application-default login`; `apictl auth login`) | `auth/authorized_user.rs` |
//! | `ServiceAccount` (feature `service-account`) | a service-account key file (JWT-bearer grant) | `auth/service_account.rs` |
//! | [`ImpersonatedServiceAccount`](super::ImpersonatedServiceAccount) | a service account impersonated with other credentials (IAM Credentials `generateAccessToken`) | `auth/impersonated.rs` |
//! | [`ExternalAccount`](super::ExternalAccount) | workload identity federation: a file- or URL-sourced token exchanged at STS | `auth/external_account.rs` |
//! | [`MetadataServer`](super::MetadataServer) | the metadata server of Google's compute platforms | `auth/metadata.rs` |
//! | [`DefaultCredentials`](super::DefaultCredentials) | Application Default Credentials: the first of the above that is configured | `auth/adc.rs` |
//!
//! The sources that renew their token share one cache (`auth/cache.rs`):
//! a token is reused until 30 s before it expires (the refresh margin),
//! concurrent callers wait for one refresh, and a token the API refused
//! with 401 is dropped only if it is still the cached one. Every exchange
//! with a token endpoint or the metadata server goes through one bounded
//! HTTP path (`auth/endpoint.rs`): the client's timeouts, the body size and
//! stall limits of [`HttpOptions`](crate::http::HttpOptions), no redirect to
//! another origin, and failures sorted into transient
//! ([`Error::TokenUnavailable`](super::Error::TokenUnavailable), retried under the client's
//! [`RetryPolicy`](super::RetryPolicy)) and permanent ([`Error::Auth`](super::Error::Auth),
//! [`Error::InvalidGrant`](super::Error::InvalidGrant)). SA-25 says why this is not one of the OAuth crates.
//!
//! Tokens are secrets: [`AccessToken`] prints as `[REDACTED]`; no token,
//! refresh token, client secret, key or assertion is logged or part of an
//! error message.
//!
//! The sources are re-exported at `search_ads` (`search_ads::DefaultCredentials`); this module
//! holds what they read and where they send: the environment variables, Google's endpoints and
//! scope, and the installed-app flow ([`installed`]) that gets a refresh token.

pub(super) mod adc;
pub(crate) mod authorized_user;
pub(crate) mod cache;
pub(crate) mod credential_kind;
pub(crate) mod endpoint;
pub(super) mod external_account;
pub(super) mod impersonated;
pub mod installed;
pub(super) mod metadata;
pub(super) mod metadata_probe;
pub(crate) mod quota_project;
#[cfg(feature = "service-account")]
pub(super) mod service_account;
pub(crate) mod token;

pub use adc::CREDENTIALS_ENV;
pub use authorized_user::{GOOGLE_REVOKE_URI, GOOGLE_TOKEN_URI};
pub use impersonated::MAX_IMPERSONATION_LIFETIME;
pub use metadata::{METADATA_HOST, METADATA_HOST_ENV};
pub use metadata_probe::{METADATA_IP, METADATA_IP_ENV, NO_GCE_CHECK_ENV, PROBE_TIMEOUT};
pub use quota_project::{QUOTA_PROJECT_ENV, QUOTA_PROJECT_HEADER};
pub use token::SCOPE;

pub(crate) use token::{AccessToken, TokenSource};

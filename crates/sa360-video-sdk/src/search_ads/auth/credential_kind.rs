//! The kind of credential a token came from: a leaf, so the errors (whose hints depend on it)
//! and the token sources (which name it) both import it without importing each other.

use std::fmt;

/// The kind of credential a token came from, named by the errors it causes
/// so their hints point at the right fix.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum CredentialKind {
    /// A fixed access token ([`StaticToken`](crate::search_ads::StaticToken)).
    FixedToken,
    /// OAuth client id, client secret and refresh token ([`AuthorizedUser`](crate::search_ads::AuthorizedUser),
    /// an `authorized_user` file).
    AuthorizedUser,
    /// A service-account key file (`ServiceAccount`).
    ServiceAccount,
    /// The metadata server of Google's compute platforms ([`MetadataServer`](crate::search_ads::MetadataServer)).
    MetadataServer,
    /// A service account impersonated with other credentials
    /// ([`ImpersonatedServiceAccount`](crate::search_ads::ImpersonatedServiceAccount), an
    /// `impersonated_service_account` file).
    ImpersonatedServiceAccount,
    /// Workload identity federation ([`ExternalAccount`](crate::search_ads::ExternalAccount), an
    /// `external_account` file).
    ExternalAccount,
    /// A [`TokenSource`](super::TokenSource) of the application's own.
    Other,
}

impl CredentialKind {
    /// The kind's name as `apictl auth status` prints it: `fixed token`,
    /// `authorized_user`, `service_account`, `metadata server`, `token source`.
    pub fn name(self) -> &'static str {
        match self {
            CredentialKind::FixedToken => "fixed token",
            CredentialKind::AuthorizedUser => "authorized_user",
            CredentialKind::ServiceAccount => "service_account",
            CredentialKind::MetadataServer => "metadata server",
            CredentialKind::ImpersonatedServiceAccount => "impersonated_service_account",
            CredentialKind::ExternalAccount => "external_account",
            CredentialKind::Other => "token source",
        }
    }
}

impl fmt::Display for CredentialKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            CredentialKind::FixedToken => "the fixed access token",
            CredentialKind::AuthorizedUser => "the refresh-token credentials (authorized_user)",
            CredentialKind::ServiceAccount => "the service-account key",
            CredentialKind::MetadataServer => "the metadata server",
            CredentialKind::ImpersonatedServiceAccount => {
                "the impersonated service account (impersonated_service_account)"
            }
            CredentialKind::ExternalAccount => {
                "the workload identity federation credentials (external_account)"
            }
            CredentialKind::Other => "the token source",
        })
    }
}

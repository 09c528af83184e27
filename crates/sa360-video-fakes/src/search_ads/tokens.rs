//! What an access token of the fake is: the API's scope, the grant that issued it and when it
//! expires. The token endpoint (`auth.rs`), the sign-in endpoints (`oauth.rs`) and federation
//! (`federation.rs`) issue tokens through [`AppInner::issue_token`](super::state::AppInner::issue_token).

use std::time::Instant;

/// The one scope of the API (SA-14).
pub const SCOPE: &str = "https://www.googleapis.com/auth/doubleclicksearch";

/// Which grant issued a token.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Grant {
    JwtBearer,
    RefreshToken,
    AuthorizationCode,
    Metadata,
    Direct,
    /// STS token exchange (`federation.rs`).
    TokenExchange,
    /// IAM Credentials `generateAccessToken` (`federation.rs`).
    Impersonation,
}

/// An issued access token.
#[derive(Clone, Debug)]
pub(crate) struct IssuedToken {
    pub expires_at: Instant,
}

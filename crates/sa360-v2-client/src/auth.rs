//! Request authorization: the SDK supplies an [`AuthorizeRequest`] that
//! adds a (refreshing) OAuth bearer token to every request.

use std::fmt;
use std::future::Future;
use std::pin::Pin;

use progenitor_client::Error;

/// The future returned by [`AuthorizeRequest::authorize`].
pub type AuthorizeFuture<'a> =
    Pin<Box<dyn Future<Output = Result<(), AuthorizeError>> + Send + 'a>>;

/// Authorizes an outgoing request, typically by setting its `Authorization`
/// header (see [`set_bearer_token`]). Called once per request, right before
/// it is sent, so the implementation may refresh an expired token.
///
/// Install it with [`ClientContext::with_authorizer`](crate::ClientContext::with_authorizer).
/// A failure aborts the request; the operation then returns
/// [`Error::Custom`] which [`AuthorizeError::from_client_error`] decodes.
pub trait AuthorizeRequest: Send + Sync {
    /// Add credentials to `request`.
    fn authorize<'a>(&'a self, request: &'a mut reqwest::Request) -> AuthorizeFuture<'a>;
}

/// Set `Authorization: Bearer <token>` on `request`, marked sensitive (its
/// value is hidden from `Debug` output).
pub fn set_bearer_token(request: &mut reqwest::Request, token: &str) -> Result<(), AuthorizeError> {
    let mut value =
        reqwest::header::HeaderValue::try_from(format!("Bearer {token}")).map_err(|_| {
            AuthorizeError::new(
                AuthorizeErrorKind::Other,
                "access token contains characters not allowed in a header",
            )
        })?;
    value.set_sensitive(true);
    request
        .headers_mut()
        .insert(reqwest::header::AUTHORIZATION, value);
    Ok(())
}

/// What kind of authorization failure happened.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum AuthorizeErrorKind {
    /// The credentials were rejected (e.g. OAuth `invalid_grant`): retrying
    /// will not help until they are fixed.
    Credentials,
    /// The token endpoint could not be reached or failed transiently: a retry
    /// may succeed.
    Unavailable,
    /// Anything else.
    Other,
}

impl AuthorizeErrorKind {
    fn as_str(self) -> &'static str {
        match self {
            AuthorizeErrorKind::Credentials => "credentials",
            AuthorizeErrorKind::Unavailable => "unavailable",
            AuthorizeErrorKind::Other => "other",
        }
    }

    fn parse(s: &str) -> Option<Self> {
        [Self::Credentials, Self::Unavailable, Self::Other]
            .into_iter()
            .find(|k| k.as_str() == s)
    }
}

impl fmt::Display for AuthorizeErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Prefix of the [`Error::Custom`] message that carries an [`AuthorizeError`].
pub(crate) const CUSTOM_PREFIX: &str = "sa360-v2-client authorize failed: ";

/// Why a request could not be authorized.
///
/// Crossing progenitor's [`Error`] it is carried as
/// `Error::Custom("sa360-v2-client authorize failed: <kind>: <message>")`
/// (progenitor's hooks can only return `Custom(String)` for consumer errors),
/// and [`AuthorizeError::from_client_error`] turns it back into this type.
/// Never put secrets in the message.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct AuthorizeError {
    kind: AuthorizeErrorKind,
    message: String,
}

impl AuthorizeError {
    /// A new error.
    pub fn new(kind: AuthorizeErrorKind, message: impl Into<String>) -> Self {
        Self {
            kind,
            message: message.into(),
        }
    }

    /// The kind of failure.
    pub fn kind(&self) -> AuthorizeErrorKind {
        self.kind
    }

    /// The message (no secrets).
    pub fn message(&self) -> &str {
        &self.message
    }

    /// Whether retrying the request may succeed.
    pub fn is_retryable(&self) -> bool {
        self.kind == AuthorizeErrorKind::Unavailable
    }

    /// Encode as the progenitor error an operation returns.
    pub fn into_client_error<E>(self) -> Error<E> {
        Error::Custom(format!("{CUSTOM_PREFIX}{}: {}", self.kind, self.message))
    }

    /// Decode the error of a failed operation: `Some` iff the request was
    /// aborted because the [`AuthorizeRequest`] failed.
    pub fn from_client_error<E>(error: &Error<E>) -> Option<Self> {
        let Error::Custom(text) = error else {
            return None;
        };
        let rest = text.strip_prefix(CUSTOM_PREFIX)?;
        let (kind, message) = rest.split_once(": ").unwrap_or((rest, ""));
        Some(Self {
            kind: AuthorizeErrorKind::parse(kind).unwrap_or(AuthorizeErrorKind::Other),
            message: message.to_owned(),
        })
    }
}

impl fmt::Display for AuthorizeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "authorization failed ({}): {}", self.kind, self.message)
    }
}

impl std::error::Error for AuthorizeError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_through_client_error() {
        for kind in [
            AuthorizeErrorKind::Credentials,
            AuthorizeErrorKind::Unavailable,
            AuthorizeErrorKind::Other,
        ] {
            let original = AuthorizeError::new(kind, "token endpoint said: no: really");
            let error: Error<()> = original.clone().into_client_error();
            assert_eq!(AuthorizeError::from_client_error(&error), Some(original));
        }
    }

    #[test]
    fn other_errors_are_not_authorize_errors() {
        let custom: Error<()> = Error::Custom("something else".into());
        assert_eq!(AuthorizeError::from_client_error(&custom), None);
        let invalid: Error<()> = Error::InvalidRequest(format!("{CUSTOM_PREFIX}x"));
        assert_eq!(AuthorizeError::from_client_error(&invalid), None);
    }

    #[test]
    fn bearer_token_is_sensitive() {
        let mut request =
            reqwest::Request::new(reqwest::Method::GET, "http://127.0.0.1/".parse().unwrap());
        set_bearer_token(&mut request, "s3cr3t").unwrap();
        let value = &request.headers()[reqwest::header::AUTHORIZATION];
        assert_eq!(value, "Bearer s3cr3t");
        assert!(value.is_sensitive());
        assert!(!format!("{request:?}").contains("s3cr3t"));
        assert!(set_bearer_token(&mut request, "bad\ntoken").is_err());
    }
}

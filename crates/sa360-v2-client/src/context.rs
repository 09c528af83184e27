//! [`ClientContext`], the generated client's inner value: the authorizer and the body limits
//! every request of a [`Client`](crate::Client) uses.

use std::fmt;
use std::sync::Arc;

use sa360_video_client_support::{BodyLimits, TRACING_TARGET, install_crypto_provider};

use crate::auth::AuthorizeRequest;
/// The int64-in-a-string type, where the generated code looks for it (`crate::context::I64String`).
pub use crate::i64_string::I64String;
use progenitor_client::Error;

/// The generated [`Client`](crate::Client)'s inner value (`Client::new(url, context)`).
///
/// Constructing one installs the rustls crypto provider (see
/// [`install_crypto_provider`](crate::install_crypto_provider)), so a
/// client built with the plain generated `Client::new` can do HTTPS.
#[derive(Clone)]
pub struct ClientContext {
    authorizer: Option<Arc<dyn AuthorizeRequest>>,
    body_limits: BodyLimits,
}

impl ClientContext {
    /// A context without authorization, with the default [`BodyLimits`].
    pub fn new() -> Self {
        install_crypto_provider();
        Self {
            authorizer: None,
            body_limits: BodyLimits::default(),
        }
    }

    /// Bounds every answer's body with `limits` (see
    /// [`sa360_video_client_support::limit_body`]).
    pub fn with_body_limits(mut self, limits: BodyLimits) -> Self {
        self.body_limits = limits;
        self
    }

    /// The bounds on every answer's body.
    pub fn body_limits(&self) -> BodyLimits {
        self.body_limits
    }

    /// Authorize every request with `authorizer` (called right before each
    /// request is sent).
    pub fn with_authorizer(mut self, authorizer: Arc<dyn AuthorizeRequest>) -> Self {
        self.authorizer = Some(authorizer);
        self
    }

    /// The authorizer, if any.
    pub fn authorizer(&self) -> Option<&Arc<dyn AuthorizeRequest>> {
        self.authorizer.as_ref()
    }

    /// Runs the authorizer, if any, on `request` (the `pre` hook of this crate's client and of
    /// `sa360-reporting-client`, which shares this context). A failure is logged at WARN
    /// (target [`TRACING_TARGET`], without secrets) and returned as the [`Error::Custom`] that
    /// [`AuthorizeError::from_client_error`](crate::AuthorizeError::from_client_error) decodes.
    ///
    /// # Errors
    /// The authorizer's failure, encoded as [`Error::Custom`].
    pub async fn authorize<E>(
        &self,
        request: &mut reqwest::Request,
        operation_id: &str,
    ) -> Result<(), Error<E>> {
        let Some(authorizer) = &self.authorizer else {
            return Ok(());
        };
        authorizer.authorize(request).await.map_err(|error| {
            tracing::warn!(
                target: TRACING_TARGET,
                operation_id,
                kind = %error.kind(),
                message = error.message(),
                "request not sent: authorization failed"
            );
            error.into_client_error()
        })
    }
}

impl Default for ClientContext {
    fn default() -> Self {
        Self::new()
    }
}

impl fmt::Debug for ClientContext {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ClientContext")
            .field(
                "authorizer",
                &self.authorizer.as_ref().map(|_| "dyn AuthorizeRequest"),
            )
            .field("body_limits", &self.body_limits)
            .finish()
    }
}

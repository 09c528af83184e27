//! [`ClientContext`], the generated client's inner value: the body limits every request of a
//! [`Client`](crate::Client) uses.

use sa360_video_client_support::{BodyLimits, install_crypto_provider};

/// The generated [`Client`](crate::Client)'s inner value (`Client::new(url, context)`).
///
/// Constructing one installs the rustls crypto provider (see
/// [`install_crypto_provider`](crate::install_crypto_provider)), so a
/// client built with the plain generated `Client::new` can do HTTPS.
#[derive(Clone, Debug)]
pub struct ClientContext {
    body_limits: BodyLimits,
}

impl ClientContext {
    /// A new context with the default [`BodyLimits`].
    pub fn new() -> Self {
        install_crypto_provider();
        Self {
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
}

impl Default for ClientContext {
    fn default() -> Self {
        Self::new()
    }
}

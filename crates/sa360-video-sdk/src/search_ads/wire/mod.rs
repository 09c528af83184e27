//! The boundary with the generated client: the token hook (here),
//! progenitor errors to [`Error`] (`errors.rs`), typed values to and from the
//! wire types (`conversion.rs`) and their JSON form (`json.rs`).

mod conversion;
mod envelope;
mod errors;
mod json;

use std::sync::Arc;

use sa360_v2_client::{AuthorizeError, AuthorizeErrorKind, AuthorizeFuture, AuthorizeRequest};

use super::auth::TokenSource;
use super::error::Error;

pub(crate) use conversion::{
    availability_from_wire, availability_to_wire, conversion_from_wire, conversion_into_insert,
    conversion_into_update, saved_column_from_wire,
};
pub(crate) use envelope::Envelope;
pub(crate) use errors::{
    ClientError, OP_ID_MAPPING, body_limit_error, from_reqwest, map_error, send,
};

/// Puts the [`TokenSource`]'s token on every request (`Authorization: Bearer`,
/// marked sensitive so it never shows in `Debug` output), and its quota
/// project, if any, as `x-goog-user-project`.
pub(crate) struct TokenAuthorizer {
    pub(crate) tokens: Arc<dyn TokenSource>,
}

impl AuthorizeRequest for TokenAuthorizer {
    fn authorize<'a>(&'a self, request: &'a mut reqwest::Request) -> AuthorizeFuture<'a> {
        Box::pin(async move {
            let token = self.tokens.token().await.map_err(|e| {
                // The typed error goes to the error mapping through the
                // attempt scope; the generated client carries only text.
                super::call::record_token_error(&e);
                let kind = if e.is_transient() {
                    AuthorizeErrorKind::Unavailable
                } else {
                    AuthorizeErrorKind::Credentials
                };
                let message = match e {
                    Error::Auth { message, .. }
                    | Error::InvalidGrant { message, .. }
                    | Error::TokenUnavailable { message, .. } => message,
                    other => other.to_string(),
                };
                AuthorizeError::new(kind, message)
            })?;
            super::call::record_token(&token);
            sa360_v2_client::set_bearer_token(request, token.expose_secret())?;
            super::auth::quota_project::apply(request, self.tokens.quota_project_id());
            Ok(())
        })
    }
}

//! Generated-client and transport errors made into the SDK's [`Error`]:
//! the error envelope, the token hook's failures, body limits, timeouts.

use std::future::Future;

use sa360_v2_client::{AuthorizeError, AuthorizeErrorKind};
use sa360_v2_client::{ResponseValue, types};

use super::envelope::Envelope;
use crate::http::Bounds;
use crate::search_ads::error::Error;
use crate::search_ads::retry::parse_retry_after;

/// Maps a generated-client error to the SDK's error.
pub(crate) fn map_error(operation: &'static str, error: ClientError) -> Error {
    if let Some(auth) = AuthorizeError::from_client_error(&error) {
        if let Some(typed) = crate::search_ads::call::take_token_error() {
            return typed;
        }
        return match auth.kind() {
            AuthorizeErrorKind::Unavailable => Error::TokenUnavailable {
                credential: crate::search_ads::auth::credential_kind::CredentialKind::Other,
                status: None,
                message: auth.message().to_owned(),
                retry_after: None,
            },
            _ => Error::Auth {
                credential: crate::search_ads::auth::credential_kind::CredentialKind::Other,
                message: auth.message().to_owned(),
            },
        };
    }
    match error {
        sa360_v2_client::Error::ErrorResponse(value) => {
            let status = value.status().as_u16();
            let retry_after = value
                .headers()
                .get(reqwest::header::RETRY_AFTER)
                .and_then(|v| v.to_str().ok())
                .and_then(parse_retry_after);
            Envelope::from_wire(&value.into_inner().error).into_error(
                operation,
                status,
                retry_after,
            )
        }
        sa360_v2_client::Error::CommunicationError(e)
        | sa360_v2_client::Error::ResponseBodyError(e)
        | sa360_v2_client::Error::InvalidUpgrade(e) => from_reqwest(operation, e),
        sa360_v2_client::Error::InvalidResponsePayload(bytes, e) => {
            let body: String = String::from_utf8_lossy(&bytes).chars().take(200).collect();
            Error::unexpected(
                operation,
                None,
                format!("the answer is not the documented JSON ({e}); it begins {body:?}"),
            )
        }
        sa360_v2_client::Error::UnexpectedResponse(response) => {
            let status = response.status();
            let detail = if status.is_redirection() {
                "a redirect to another origin, which the client does not follow (check the base URL)"
                    .to_owned()
            } else {
                format!("the undocumented status {status}")
            };
            Error::unexpected(operation, Some(status.as_u16()), detail)
        }
        sa360_v2_client::Error::InvalidRequest(message) => {
            Error::validation("request", None, message)
        }
        sa360_v2_client::Error::Custom(message) => Error::Auth {
            credential: crate::search_ads::auth::credential_kind::CredentialKind::Other,
            message,
        },
    }
}

/// Maps a transport error; the URL (which carries the query) is left out.
pub(crate) fn from_reqwest(operation: &'static str, error: reqwest::Error) -> Error {
    let download = operation == OP_ID_MAPPING;
    let bounds = Bounds {
        connect_timeout: crate::search_ads::call::timeout_of_attempt(true),
        timeout: crate::search_ads::call::timeout_of_attempt(false),
        // A download's attempts are bounded by the read timeout (see `Calls`).
        timeout_setting: if download { "read_timeout" } else { "timeout" },
        body_setting: body_setting(operation),
    };
    Error::Transport(crate::http::from_reqwest(operation, error, bounds))
}

/// The SDK's error for a body that broke one of the [`HttpOptions`]
/// limits, when `error`'s source chain holds one.
///
/// [`HttpOptions`]: crate::http::HttpOptions
/// Awaits one generated call: records the answer's status on the current
/// attempt span and maps a failure to [`Error`].
pub(crate) async fn send<T>(
    operation: &'static str,
    call: impl Future<Output = Result<ResponseValue<T>, ClientError>>,
) -> Result<ResponseValue<T>, Error> {
    match call.await {
        Ok(answer) => {
            tracing::Span::current().record("status", answer.status().as_u16());
            Ok(answer)
        }
        Err(e) => Err(map_error(operation, e)),
    }
}

/// A failure of a call through the generated v2 client.
pub(crate) type ClientError = sa360_v2_client::Error<types::GoogleErrorResponse>;

/// The ID-mapping download's operation name in errors and traces (its body limit is a setting
/// of its own).
pub(crate) const OP_ID_MAPPING: &str = "reports.getIdMappingFile";

pub(crate) fn body_limit_error(
    operation: &'static str,
    error: &(dyn std::error::Error + 'static),
) -> Option<Error> {
    crate::http::body_limit_error(operation, error, body_setting(operation)).map(Error::Transport)
}

/// The `HttpOptions` field that bounds the answers of `operation`.
fn body_setting(operation: &str) -> &'static str {
    if operation == OP_ID_MAPPING {
        "max_download_bytes"
    } else {
        "max_body_bytes"
    }
}

impl Envelope {
    pub(crate) fn from_wire(error: &types::GoogleError) -> Self {
        Self {
            message: error.message.clone(),
            status: error.status.clone(),
            items: error
                .errors
                .iter()
                .map(|i| (i.reason.clone(), i.message.clone()))
                .collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[test]
    fn error_envelopes_from_the_wire_type() {
        let body: types::GoogleErrorResponse = serde_json::from_value(serde_json::json!({
            "error": {"code": 429, "message": "Rate Limit Exceeded",
                      "errors": [{"domain": "usageLimits", "reason": "rateLimitExceeded", "message": "Rate Limit Exceeded"}]}
        }))
        .unwrap();
        let e = Envelope::from_wire(&body.error).into_error(
            "conversion.get",
            429,
            Some(Duration::from_secs(1)),
        );
        assert!(e.is_transient());
        assert_eq!(e.retry_after(), Some(Duration::from_secs(1)));
        assert!(e.to_string().contains("rateLimitExceeded"), "{e}");
    }
}

//! Error bodies of both services: Google's JSON error envelope (search ads, SA-8) and the video
//! service's `ApiError` (VS-2).

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::Serialize;

/// One item of Google's `errors[]` array.
#[derive(Clone, Debug, Serialize)]
pub(crate) struct GoogleErrorItem {
    pub domain: &'static str,
    pub reason: &'static str,
    pub message: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub location: Option<String>,
    #[serde(rename = "locationType", skip_serializing_if = "Option::is_none")]
    pub location_type: Option<&'static str>,
}

impl GoogleErrorItem {
    pub(crate) fn new(reason: &'static str, message: impl Into<String>) -> Self {
        Self {
            domain: "global",
            reason,
            message: message.into(),
            location: None,
            location_type: None,
        }
    }

    pub(crate) fn at(mut self, location: impl Into<String>, location_type: &'static str) -> Self {
        self.location = Some(location.into());
        self.location_type = Some(location_type);
        self
    }

    pub(crate) fn in_domain(mut self, domain: &'static str) -> Self {
        self.domain = domain;
        self
    }
}

#[derive(Serialize)]
struct GoogleErrorBody<'a> {
    code: u16,
    message: &'a str,
    errors: &'a [GoogleErrorItem],
}

#[derive(Serialize)]
struct GoogleEnvelope<'a> {
    error: GoogleErrorBody<'a>,
}

/// A Google error envelope `{"error": {"code", "message", "errors": [...]}}` with `status`.
pub(crate) fn google_error(
    status: StatusCode,
    message: &str,
    items: &[GoogleErrorItem],
) -> Response {
    let body = GoogleEnvelope {
        error: GoogleErrorBody {
            code: status.as_u16(),
            message,
            errors: items,
        },
    };
    json_response(status, &body)
}

/// A Google error envelope with a single item whose message is the top-level message.
pub(crate) fn google_simple(status: StatusCode, reason: &'static str, message: &str) -> Response {
    google_error(status, message, &[GoogleErrorItem::new(reason, message)])
}

/// The video service's error body (VS-2).
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub(crate) struct ApiErrorBody<'a> {
    pub code: &'a str,
    pub message: &'a str,
    pub field: Option<&'a str>,
    pub retry_after_seconds: Option<u32>,
}

/// A video-service `ApiError` answer; with `retry_after` also the `Retry-After` header.
pub(crate) fn api_error(
    status: StatusCode,
    code: &str,
    message: &str,
    field: Option<&str>,
    retry_after: Option<u32>,
) -> Response {
    let mut response = json_response(
        status,
        &ApiErrorBody {
            code,
            message,
            field,
            retry_after_seconds: retry_after,
        },
    );
    if let Some(secs) = retry_after {
        response
            .headers_mut()
            .insert(header::RETRY_AFTER, HeaderValue::from(secs));
    }
    response
}

/// Serializes `body` as a JSON answer with `status`; a serialization failure becomes a bare 500.
pub(crate) fn json_response<T: Serialize + ?Sized>(status: StatusCode, body: &T) -> Response {
    match serde_json::to_vec(body) {
        Ok(bytes) => bytes_response(status, bytes),
        Err(error) => {
            tracing::error!(%error, "could not serialize a response body");
            StatusCode::INTERNAL_SERVER_ERROR.into_response()
        }
    }
}

/// A JSON answer already serialized.
pub(crate) fn bytes_response(status: StatusCode, bytes: Vec<u8>) -> Response {
    (
        status,
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json; charset=UTF-8"),
        )],
        bytes,
    )
        .into_response()
}

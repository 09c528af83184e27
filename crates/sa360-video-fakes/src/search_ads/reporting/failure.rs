//! A Reporting API error: one `SearchAds360Error` in a `google.rpc.Status` envelope with a
//! `SearchAds360Failure` detail (SR-6).

use axum::http::StatusCode;
use axum::response::Response;
use serde_json::{Value, json};

use super::query::QueryError;
use super::state::ReportingState;
use crate::errors::json_response;
use crate::search_ads::state::AppState;
use crate::util::hex_token;

/// The `@type` of the `SearchAds360Failure` detail (SR-6).
pub const FAILURE_TYPE: &str =
    "type.googleapis.com/google.ads.searchads360.v0.errors.SearchAds360Failure";

/// One `SearchAds360Error` of a failure.
pub(crate) struct Failure {
    status: StatusCode,
    rpc: &'static str,
    kind: &'static str,
    pub(super) code: &'static str,
    message: String,
    trigger: Option<String>,
    pub(super) details: Option<Value>,
}

impl Failure {
    pub(crate) fn new(
        status: StatusCode,
        kind: &'static str,
        code: &'static str,
        message: impl Into<String>,
    ) -> Self {
        let rpc = match status {
            StatusCode::UNAUTHORIZED => "UNAUTHENTICATED",
            StatusCode::FORBIDDEN => "PERMISSION_DENIED",
            StatusCode::NOT_FOUND => "NOT_FOUND",
            StatusCode::TOO_MANY_REQUESTS => "RESOURCE_EXHAUSTED",
            s if s.is_server_error() => "INTERNAL",
            _ => "INVALID_ARGUMENT",
        };
        Self {
            status,
            rpc,
            kind,
            code,
            message: message.into(),
            trigger: None,
            details: None,
        }
    }

    pub(super) fn query(e: QueryError) -> Self {
        let mut f = Self::new(StatusCode::BAD_REQUEST, e.kind, e.code, e.message);
        f.trigger = e.trigger;
        f
    }

    pub(crate) fn into_response(self, app: &AppState) -> Response {
        let request_id = {
            let mut rng = ReportingState::lock(&app.reporting.rng);
            hex_token(&mut rng, 8)
        };
        let mut error = json!({
            "errorCode": {self.kind: self.code},
            "message": self.message,
        });
        if let Some(trigger) = self.trigger {
            error["trigger"] = json!({"stringValue": trigger});
        }
        if let Some(details) = self.details {
            error["details"] = details;
        }
        let body = json!({
            "error": {
                "code": self.status.as_u16(),
                "message": "Request contains an invalid argument.",
                "status": self.rpc,
                "details": [{
                    "@type": FAILURE_TYPE,
                    "errors": [error],
                    "requestId": request_id,
                }],
            }
        });
        json_response(self.status, &body)
    }
}

//! The fault middleware: counts the request, sleeps, and replaces, drops or cuts the answer.

use std::sync::Arc;
use std::time::Duration;

use axum::body::{Body, HttpBody};
use axum::extract::{Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::Response;

use super::config::{FaultKind, FaultRecord};
use super::injector::{
    CsvTruncation, CsvTruncationApplied, DetailsTruncation, DetailsTruncationApplied, ErrorStyle,
    FaultInjector, RequestSeq,
};

use super::cut_stream::CutStream;
use crate::errors::{GoogleErrorItem, api_error, google_error};
use crate::server::AbortConnection;

/// State of the fault middleware of one fake.
#[derive(Clone, Debug)]
pub(crate) struct FaultLayer {
    pub injector: Arc<FaultInjector>,
    pub style: ErrorStyle,
    /// Paths that never get faults (but still latency-free and counted), e.g. the token endpoint.
    pub exempt: &'static [&'static str],
    /// Whether a path is an ID-mapping download (the only one that can be truncated).
    pub is_csv: fn(&str) -> bool,
}

/// The fault middleware: counts the request, sleeps, and replaces, drops or cuts the answer.
pub(crate) async fn apply_faults(
    State(layer): State<FaultLayer>,
    mut request: Request,
    next: Next,
) -> Response {
    let seq = layer.injector.next_request();
    request.extensions_mut().insert(RequestSeq(seq));
    let path = request.uri().path().to_owned();
    if layer.exempt.iter().any(|p| path.ends_with(p)) {
        return next.run(request).await;
    }
    let decision = layer.injector.decide((layer.is_csv)(&path));
    if !decision.latency.is_zero() {
        tokio::time::sleep(decision.latency).await;
    }
    let Some(kind) = decision.kind else {
        return next.run(request).await;
    };
    let method = request.method().to_string();
    let record = |processed: bool| FaultRecord {
        request: seq,
        method: method.clone(),
        path: path.clone(),
        kind,
        processed,
    };
    match kind {
        FaultKind::RateLimited | FaultKind::RateLimited403 | FaultKind::Unavailable => {
            layer.injector.record(record(false));
            fault_status_response(layer.style, kind, layer.injector.retry_after())
        }
        FaultKind::InternalError => {
            if decision.processed {
                drop(next.run(request).await);
            }
            layer.injector.record(record(decision.processed));
            fault_status_response(layer.style, kind, layer.injector.retry_after())
        }
        FaultKind::DropBeforeResponse => {
            if decision.processed {
                drop(next.run(request).await);
            }
            layer.injector.record(record(decision.processed));
            let mut response = Response::new(Body::empty());
            response.extensions_mut().insert(AbortConnection);
            response
        }
        FaultKind::DropMidBody => {
            let response = next.run(request).await;
            layer.injector.record(record(true));
            cut_response(response, decision.cut)
        }
        FaultKind::TruncatedCsv(truncation) => {
            request.extensions_mut().insert(CsvTruncation {
                truncation,
                at: decision.cut,
            });
            let response = next.run(request).await;
            if response
                .extensions()
                .get::<CsvTruncationApplied>()
                .is_some()
            {
                layer.injector.record(record(true));
            }
            response
        }
        FaultKind::TruncatedDetails(cut) => {
            request.extensions_mut().insert(DetailsTruncation(cut));
            let response = next.run(request).await;
            if response
                .extensions()
                .get::<DetailsTruncationApplied>()
                .is_some()
            {
                layer.injector.record(record(true));
            }
            response
        }
    }
}

fn fault_status_response(style: ErrorStyle, kind: FaultKind, retry_after: Duration) -> Response {
    let retry_secs = u32::try_from(retry_after.as_secs_f64().ceil() as u64).unwrap_or(u32::MAX);
    let (status, with_retry) = match kind {
        FaultKind::RateLimited => (StatusCode::TOO_MANY_REQUESTS, true),
        FaultKind::RateLimited403 => match style {
            ErrorStyle::Google => (StatusCode::FORBIDDEN, false),
            ErrorStyle::Video => (StatusCode::TOO_MANY_REQUESTS, true),
        },
        FaultKind::Unavailable => (StatusCode::SERVICE_UNAVAILABLE, true),
        _ => (StatusCode::INTERNAL_SERVER_ERROR, false),
    };
    match style {
        ErrorStyle::Google => {
            let (reason, domain, message) = match kind {
                FaultKind::RateLimited => (
                    "rateLimitExceeded",
                    "usageLimits",
                    "Rate Limit Exceeded (injected by the fake)",
                ),
                FaultKind::RateLimited403 => (
                    "userRateLimitExceeded",
                    "usageLimits",
                    "User Rate Limit Exceeded (injected by the fake)",
                ),
                FaultKind::Unavailable => (
                    "backendError",
                    "global",
                    "The service is currently unavailable (injected by the fake)",
                ),
                _ => (
                    "backendError",
                    "global",
                    "Backend Error (injected by the fake)",
                ),
            };
            let mut response = google_error(
                status,
                message,
                &[GoogleErrorItem::new(reason, message).in_domain(domain)],
            );
            if with_retry {
                response
                    .headers_mut()
                    .insert(header::RETRY_AFTER, HeaderValue::from(retry_secs));
            }
            response
        }
        ErrorStyle::Video => match kind {
            FaultKind::RateLimited | FaultKind::RateLimited403 => api_error(
                status,
                "TooManyRequests",
                "Too many requests (injected by the fake).",
                None,
                Some(retry_secs),
            ),
            FaultKind::Unavailable => {
                let mut response = api_error(
                    status,
                    "InternalError",
                    "The service is temporarily unavailable (injected by the fake).",
                    None,
                    None,
                );
                response
                    .headers_mut()
                    .insert(header::RETRY_AFTER, HeaderValue::from(retry_secs));
                response
            }
            _ => api_error(
                status,
                "InternalError",
                "Internal error (injected by the fake).",
                None,
                None,
            ),
        },
    }
}

/// Keeps the status and headers of `response`, sends about `cut` of its body and aborts.
fn cut_response(response: Response, cut: f64) -> Response {
    let (mut parts, body) = response.into_parts();
    let exact = body.size_hint().exact();
    let limit = match exact {
        Some(len) => {
            parts
                .headers
                .insert(header::CONTENT_LENGTH, HeaderValue::from(len));
            // At least one byte short, so the body can never look complete.
            let wanted = (len as f64 * cut) as u64;
            wanted.min(len.saturating_sub(1))
        }
        None => (65_536.0 * cut) as u64,
    };
    Response::from_parts(
        parts,
        Body::from_stream(CutStream::new(body.into_data_stream(), limit, true)),
    )
}

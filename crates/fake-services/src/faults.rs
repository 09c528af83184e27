//! Fault injection: latency, error statuses, dropped connections and truncated downloads.
//!
//! Each fake owns one [`Faults`] configuration that tests can replace at run time. Every request draws
//! from one seeded random generator, so a run with the same seed and the same request order injects the
//! same faults. Faults never change the ledger's truth: each injected fault is recorded as a
//! [`FaultRecord`] whose `processed` flag says whether the request's handler ran (and so whether an
//! insert stored its conversions or a login counted its failure).

use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};
use std::time::Duration;

use axum::body::{Body, Bytes, HttpBody};
use axum::extract::{Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::Response;
use futures::Stream;
use tokio::time::Sleep;

use crate::errors::{GoogleErrorItem, api_error, google_error};
use crate::server::AbortConnection;

/// What a truncated CSV download looks like to the client.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Truncation {
    /// The answer announces the full `Content-Length`, stops in the middle of a row and the
    /// connection is aborted: the client sees an I/O error, never a clean end of file.
    #[default]
    Abort,
    /// The answer is sent without `Content-Length` (chunked) and ends cleanly in the middle of a row:
    /// the client sees a normal end of file and must notice the broken last row itself. (A clean end
    /// that contradicts a `Content-Length` cannot be produced: the server closes the connection
    /// instead, which the client sees as [`Truncation::Abort`].)
    CleanEof,
}

/// Where a truncated list of details (the 400 answer of a conversion batch) is cut, the way Google
/// cuts long error messages.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum DetailsCut {
    /// Inside the code of the last detail (`…index=0, 0x0000`): every detail before it is whole.
    #[default]
    InsideCode,
    /// Inside the text of the last detail (`…index=0, 0x00000116: Custom met`).
    InsideText,
}

/// The fault configuration of one fake. All probabilities are in `0.0..=1.0`.
///
/// For each request one draw picks at most one of the status and connection faults
/// (`rate_limited`, `rate_limited_403`, `internal_error`, `unavailable`, `drop_before_response`,
/// `drop_mid_body`, in that order of the cumulative probabilities, which must add up to at most 1).
/// ID-mapping downloads that got none of them draw again for `truncated_csv`; other requests draw
/// again for `truncated_details`. Latency applies to every request.
#[derive(Clone, Debug, PartialEq)]
pub struct Faults {
    /// Seed of the generator that decides which requests fail.
    pub seed: u64,
    /// Added to every answer before it is produced.
    pub latency: Duration,
    /// A uniformly random extra delay in `0..=latency_jitter`, on top of `latency`.
    pub latency_jitter: Duration,
    /// Share of requests answered `429` with `Retry-After`, without running the handler.
    pub rate_limited: f64,
    /// Share of requests answered `403` with the reason `userRateLimitExceeded` (Google's per-user
    /// quota), without running the handler (search ads only; the video fake answers `429`).
    pub rate_limited_403: f64,
    /// Share of requests answered `500`. The handler runs or not at random (recorded in
    /// [`FaultRecord::processed`]), like a back end that fails before or after committing.
    pub internal_error: f64,
    /// Share of requests answered `503` with `Retry-After`, without running the handler.
    pub unavailable: f64,
    /// Share of requests whose connection is closed before any byte of the answer. The handler runs or
    /// not at random (recorded).
    pub drop_before_response: f64,
    /// Share of requests whose answer sends its status, headers and part of the body, then aborts
    /// the connection. The handler always ran.
    pub drop_mid_body: f64,
    /// Share of ID-mapping downloads cut in the middle of a row, as `truncation` says.
    pub truncated_csv: f64,
    /// How a truncated CSV ends.
    pub truncation: Truncation,
    /// Share of conversion batches answered `400` whose list of details is cut short, as
    /// `details_cut` says (the handler ran; only answers that list two or more details are cut).
    pub truncated_details: f64,
    /// Where a truncated list of details is cut.
    pub details_cut: DetailsCut,
    /// The `Retry-After` of `429` and `503` answers (whole seconds, rounded up; zero is allowed so
    /// retry tests need not wait). Default 1 s.
    pub retry_after: Duration,
}

impl Default for Faults {
    fn default() -> Self {
        Self::none()
    }
}

impl Faults {
    /// No faults at all (the default).
    #[must_use]
    pub fn none() -> Self {
        Self {
            seed: 0,
            latency: Duration::ZERO,
            latency_jitter: Duration::ZERO,
            rate_limited: 0.0,
            rate_limited_403: 0.0,
            internal_error: 0.0,
            unavailable: 0.0,
            drop_before_response: 0.0,
            drop_mid_body: 0.0,
            truncated_csv: 0.0,
            truncation: Truncation::Abort,
            truncated_details: 0.0,
            details_cut: DetailsCut::InsideCode,
            retry_after: Duration::from_secs(1),
        }
    }

    /// No faults yet, with the generator seeded by `seed`.
    #[must_use]
    pub fn seeded(seed: u64) -> Self {
        Self {
            seed,
            ..Self::none()
        }
    }

    /// Sets [`Faults::latency`] and [`Faults::latency_jitter`].
    #[must_use]
    pub fn with_latency(mut self, latency: Duration, jitter: Duration) -> Self {
        self.latency = latency;
        self.latency_jitter = jitter;
        self
    }

    /// Sets [`Faults::rate_limited`].
    #[must_use]
    pub fn with_rate_limited(mut self, p: f64) -> Self {
        self.rate_limited = p;
        self
    }

    /// Sets [`Faults::rate_limited_403`].
    #[must_use]
    pub fn with_rate_limited_403(mut self, p: f64) -> Self {
        self.rate_limited_403 = p;
        self
    }

    /// Sets [`Faults::truncated_details`] and [`Faults::details_cut`].
    #[must_use]
    pub fn with_truncated_details(mut self, p: f64, cut: DetailsCut) -> Self {
        self.truncated_details = p;
        self.details_cut = cut;
        self
    }

    /// Sets [`Faults::internal_error`].
    #[must_use]
    pub fn with_internal_error(mut self, p: f64) -> Self {
        self.internal_error = p;
        self
    }

    /// Sets [`Faults::unavailable`].
    #[must_use]
    pub fn with_unavailable(mut self, p: f64) -> Self {
        self.unavailable = p;
        self
    }

    /// Sets [`Faults::drop_before_response`].
    #[must_use]
    pub fn with_drop_before_response(mut self, p: f64) -> Self {
        self.drop_before_response = p;
        self
    }

    /// Sets [`Faults::drop_mid_body`].
    #[must_use]
    pub fn with_drop_mid_body(mut self, p: f64) -> Self {
        self.drop_mid_body = p;
        self
    }

    /// Sets [`Faults::truncated_csv`] and [`Faults::truncation`].
    #[must_use]
    pub fn with_truncated_csv(mut self, p: f64, truncation: Truncation) -> Self {
        self.truncated_csv = p;
        self.truncation = truncation;
        self
    }

    /// Sets [`Faults::retry_after`].
    #[must_use]
    pub fn with_retry_after(mut self, retry_after: Duration) -> Self {
        self.retry_after = retry_after;
        self
    }

    /// Whether this configuration injects anything at all.
    #[must_use]
    pub fn is_none(&self) -> bool {
        self.latency.is_zero()
            && self.latency_jitter.is_zero()
            && self.status_and_drop_total() == 0.0
            && self.truncated_csv == 0.0
            && self.truncated_details == 0.0
    }

    fn status_and_drop_total(&self) -> f64 {
        self.rate_limited
            + self.rate_limited_403
            + self.internal_error
            + self.unavailable
            + self.drop_before_response
            + self.drop_mid_body
    }

    /// Checks that every probability is in `0..=1` and that the exclusive ones add up to at most 1.
    ///
    /// # Errors
    /// A readable description of the first problem.
    pub fn validate(&self) -> Result<(), String> {
        let named = [
            ("rate_limited", self.rate_limited),
            ("rate_limited_403", self.rate_limited_403),
            ("internal_error", self.internal_error),
            ("unavailable", self.unavailable),
            ("drop_before_response", self.drop_before_response),
            ("drop_mid_body", self.drop_mid_body),
            ("truncated_csv", self.truncated_csv),
            ("truncated_details", self.truncated_details),
        ];
        for (name, p) in named {
            if !(0.0..=1.0).contains(&p) {
                return Err(format!(
                    "fault probability {name} = {p} is not within 0..=1"
                ));
            }
        }
        let total = self.status_and_drop_total();
        if total > 1.0 + 1e-9 {
            return Err(format!(
                "the status and drop fault probabilities add up to {total}, more than 1"
            ));
        }
        Ok(())
    }
}

/// A kind of injected fault.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FaultKind {
    /// `429` with `Retry-After`.
    RateLimited,
    /// `403` `userRateLimitExceeded`.
    RateLimited403,
    /// `500`.
    InternalError,
    /// `503` with `Retry-After`.
    Unavailable,
    /// Connection closed before the answer.
    DropBeforeResponse,
    /// Connection aborted in the middle of the body.
    DropMidBody,
    /// ID-mapping CSV cut in the middle of a row.
    TruncatedCsv(Truncation),
    /// The list of details of a conversion batch's `400` cut short.
    TruncatedDetails(DetailsCut),
}

/// One injected fault, as kept in a fake's ledger.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FaultRecord {
    /// The fake's 1-based request number (counting every request it received).
    pub request: u64,
    /// The request's HTTP method.
    pub method: String,
    /// The request's path (without the query).
    pub path: String,
    /// What was injected.
    pub kind: FaultKind,
    /// Whether the handler ran, so that its effects (stored conversions, counted login failures,
    /// outbox entries) happened although the client did not get its answer.
    pub processed: bool,
}

/// How error answers of injected faults look.
#[derive(Clone, Copy, Debug)]
pub(crate) enum ErrorStyle {
    Google,
    Video,
}

/// The decision for one request.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Decision {
    pub latency: Duration,
    pub kind: Option<FaultKind>,
    /// For faults that may or may not run the handler.
    pub processed: bool,
    /// Where to cut a body, as a share of its length.
    pub cut: f64,
}

/// The fake's 1-based number of the current request, put on every request by the fault middleware.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct RequestSeq(pub u64);

/// Handed to the ID-mapping handler when its download must be truncated.
#[derive(Clone, Copy, Debug)]
pub(crate) struct CsvTruncation {
    pub truncation: Truncation,
    /// Where to cut, as a share of the file's rows.
    pub at: f64,
}

/// Handed to the conversion write handlers when their list of details must be cut.
#[derive(Clone, Copy, Debug)]
pub(crate) struct DetailsTruncation(pub DetailsCut);

/// Put on a response by a handler that applied a [`DetailsTruncation`].
#[derive(Clone, Copy, Debug)]
pub(crate) struct DetailsTruncationApplied;

/// Put on a response by the ID-mapping handler when it applied a [`CsvTruncation`].
#[derive(Clone, Copy, Debug)]
pub(crate) struct CsvTruncationApplied;

struct InjectorState {
    faults: Faults,
    rng: fastrand::Rng,
}

/// The live fault configuration of one fake, its generator and the faults it injected.
pub(crate) struct FaultInjector {
    state: Mutex<InjectorState>,
    records: Mutex<Vec<FaultRecord>>,
    requests: AtomicU64,
}

impl std::fmt::Debug for FaultInjector {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FaultInjector")
            .field("faults", &self.faults())
            .field("requests", &self.requests())
            .finish_non_exhaustive()
    }
}

impl FaultInjector {
    pub(crate) fn new(faults: Faults) -> Self {
        let rng = fastrand::Rng::with_seed(faults.seed);
        Self {
            state: Mutex::new(InjectorState { faults, rng }),
            records: Mutex::new(Vec::new()),
            requests: AtomicU64::new(0),
        }
    }

    /// Replaces the configuration and reseeds the generator with its seed.
    pub(crate) fn set(&self, faults: Faults) {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        state.rng = fastrand::Rng::with_seed(faults.seed);
        state.faults = faults;
    }

    pub(crate) fn faults(&self) -> Faults {
        self.state
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .faults
            .clone()
    }

    pub(crate) fn retry_after(&self) -> Duration {
        self.state
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .faults
            .retry_after
    }

    pub(crate) fn requests(&self) -> u64 {
        self.requests.load(Ordering::Relaxed)
    }

    pub(crate) fn next_request(&self) -> u64 {
        self.requests.fetch_add(1, Ordering::Relaxed) + 1
    }

    pub(crate) fn records(&self) -> Vec<FaultRecord> {
        self.records
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    pub(crate) fn record(&self, record: FaultRecord) {
        tracing::info!(
            request = record.request,
            method = %record.method,
            path = %record.path,
            kind = ?record.kind,
            processed = record.processed,
            "fault injected"
        );
        self.records
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(record);
    }

    /// Draws the decision for one request. `csv` says whether it is an ID-mapping download.
    pub(crate) fn decide(&self, csv: bool) -> Decision {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        let InjectorState { faults, rng } = &mut *state;
        if faults.is_none() {
            return Decision {
                latency: Duration::ZERO,
                kind: None,
                processed: true,
                cut: 0.5,
            };
        }
        let jitter = if faults.latency_jitter.is_zero() {
            Duration::ZERO
        } else {
            faults.latency_jitter.mul_f64(rng.f64())
        };
        let latency = faults.latency + jitter;
        let r = rng.f64();
        let mut threshold = 0.0;
        let mut kind = None;
        for (p, k) in [
            (faults.rate_limited, FaultKind::RateLimited),
            (faults.rate_limited_403, FaultKind::RateLimited403),
            (faults.internal_error, FaultKind::InternalError),
            (faults.unavailable, FaultKind::Unavailable),
            (faults.drop_before_response, FaultKind::DropBeforeResponse),
            (faults.drop_mid_body, FaultKind::DropMidBody),
        ] {
            threshold += p;
            if p > 0.0 && r < threshold {
                kind = Some(k);
                break;
            }
        }
        if kind.is_none() && csv && faults.truncated_csv > 0.0 && rng.f64() < faults.truncated_csv {
            kind = Some(FaultKind::TruncatedCsv(faults.truncation));
        }
        if kind.is_none()
            && !csv
            && faults.truncated_details > 0.0
            && rng.f64() < faults.truncated_details
        {
            kind = Some(FaultKind::TruncatedDetails(faults.details_cut));
        }
        let processed = rng.bool();
        let cut = 0.05 + 0.9 * rng.f64();
        Decision {
            latency,
            kind,
            processed,
            cut,
        }
    }
}

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

enum CutState {
    Passing,
    Pausing(Pin<Box<Sleep>>),
    Done,
}

/// A body stream that passes `limit` bytes of `inner`, then either aborts (after a short pause so
/// the bytes already sent are flushed to the socket) or ends cleanly.
pub(crate) struct CutStream<S> {
    inner: S,
    remaining: u64,
    abort: bool,
    state: CutState,
}

impl<S> CutStream<S> {
    pub(crate) fn new(inner: S, limit: u64, abort: bool) -> Self {
        Self {
            inner,
            remaining: limit,
            abort,
            state: CutState::Passing,
        }
    }

    fn finish(&mut self) -> Poll<Option<Result<Bytes, std::io::Error>>> {
        if self.abort {
            self.state = CutState::Pausing(Box::pin(tokio::time::sleep(Duration::from_millis(30))));
            // Wake immediately so the pause timer gets registered by the next poll.
            Poll::Pending
        } else {
            self.state = CutState::Done;
            Poll::Ready(None)
        }
    }
}

impl<S, E> Stream for CutStream<S>
where
    S: Stream<Item = Result<Bytes, E>> + Unpin,
    E: std::fmt::Display,
{
    type Item = Result<Bytes, std::io::Error>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = &mut *self;
        loop {
            match &mut this.state {
                CutState::Done => return Poll::Ready(None),
                CutState::Pausing(sleep) => {
                    if sleep.as_mut().poll(cx).is_pending() {
                        return Poll::Pending;
                    }
                    this.state = CutState::Done;
                    return Poll::Ready(Some(Err(std::io::Error::new(
                        std::io::ErrorKind::ConnectionAborted,
                        "connection aborted by an injected fault",
                    ))));
                }
                CutState::Passing => {
                    if this.remaining == 0 {
                        let poll = this.finish();
                        if poll.is_pending() {
                            // Loop once more to poll (and so register) the pause timer.
                            continue;
                        }
                        return poll;
                    }
                    match Pin::new(&mut this.inner).poll_next(cx) {
                        Poll::Pending => return Poll::Pending,
                        Poll::Ready(None) => {
                            this.state = CutState::Done;
                            return Poll::Ready(None);
                        }
                        Poll::Ready(Some(Err(e))) => {
                            this.state = CutState::Done;
                            return Poll::Ready(Some(Err(std::io::Error::other(e.to_string()))));
                        }
                        Poll::Ready(Some(Ok(mut chunk))) => {
                            let len = chunk.len() as u64;
                            if len >= this.remaining {
                                let keep = usize::try_from(this.remaining).unwrap_or(usize::MAX);
                                chunk.truncate(keep);
                                this.remaining = 0;
                            } else {
                                this.remaining -= len;
                            }
                            if !chunk.is_empty() {
                                return Poll::Ready(Some(Ok(chunk)));
                            }
                        }
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn validate_rejects_bad_probabilities() {
        assert!(Faults::none().validate().is_ok());
        assert!(Faults::none().with_rate_limited(1.5).validate().is_err());
        assert!(
            Faults::none()
                .with_rate_limited(0.6)
                .with_unavailable(0.6)
                .validate()
                .is_err()
        );
    }

    #[test]
    fn decisions_are_deterministic_per_seed() {
        let faults = Faults::seeded(7)
            .with_rate_limited(0.3)
            .with_drop_mid_body(0.3);
        let a = FaultInjector::new(faults.clone());
        let b = FaultInjector::new(faults);
        let da: Vec<_> = (0..50).map(|_| a.decide(false).kind).collect();
        let db: Vec<_> = (0..50).map(|_| b.decide(false).kind).collect();
        assert_eq!(da, db);
        assert!(da.contains(&Some(FaultKind::RateLimited)));
        assert!(da.contains(&None));
    }

    #[test]
    fn probability_one_always_fires() {
        let inj = FaultInjector::new(Faults::seeded(1).with_unavailable(1.0));
        assert!((0..100).all(|_| inj.decide(false).kind == Some(FaultKind::Unavailable)));
    }
}

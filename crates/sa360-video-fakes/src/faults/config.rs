//! The fault configuration tests set ([`Faults`]), what a truncation looks like, and the record of an
//! injected fault.

use std::time::Duration;

use crate::util::setters;

/// What a truncated CSV download looks like to the client.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, clap::ValueEnum)]
pub enum Truncation {
    /// The answer announces the full `Content-Length`, stops in the middle of a row and the
    /// connection is aborted: the client sees an I/O error, never a clean end of file.
    #[default]
    Abort,
    /// The answer is sent without `Content-Length` (chunked) and ends cleanly in the middle of a row:
    /// the client sees a normal end of file and must notice the broken last row itself. (A clean end
    /// that contradicts a `Content-Length` cannot be produced: the server closes the connection
    /// instead, which the client sees as `Abort`.)
    CleanEof,
}

/// Where a truncated list of details (the 400 answer of a conversion batch) is cut, the way Google
/// cuts long error messages.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, clap::ValueEnum)]
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

    setters! {
        /// Sets [`Faults::rate_limited`].
        #[must_use]
        with_rate_limited(f64) => rate_limited;
        /// Sets [`Faults::rate_limited_403`].
        #[must_use]
        with_rate_limited_403(f64) => rate_limited_403;
        /// Sets [`Faults::internal_error`].
        #[must_use]
        with_internal_error(f64) => internal_error;
        /// Sets [`Faults::unavailable`].
        #[must_use]
        with_unavailable(f64) => unavailable;
        /// Sets [`Faults::drop_before_response`].
        #[must_use]
        with_drop_before_response(f64) => drop_before_response;
        /// Sets [`Faults::drop_mid_body`].
        #[must_use]
        with_drop_mid_body(f64) => drop_mid_body;
        /// Sets [`Faults::retry_after`].
        #[must_use]
        with_retry_after(Duration) => retry_after;
    }

    /// Sets [`Faults::truncated_details`] and [`Faults::details_cut`].
    #[must_use]
    pub fn with_truncated_details(mut self, p: f64, cut: DetailsCut) -> Self {
        self.truncated_details = p;
        self.details_cut = cut;
        self
    }

    /// Sets [`Faults::truncated_csv`] and [`Faults::truncation`].
    #[must_use]
    pub fn with_truncated_csv(mut self, p: f64, truncation: Truncation) -> Self {
        self.truncated_csv = p;
        self.truncation = truncation;
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

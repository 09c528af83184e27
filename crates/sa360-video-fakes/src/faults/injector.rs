//! The live configuration of one fake, its seeded generator, and the decision for each request;
//! the markers handlers and the middleware pass each other.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use super::config::{DetailsCut, FaultKind, FaultRecord, Faults, Truncation};

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

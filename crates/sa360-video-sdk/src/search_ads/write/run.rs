//! Sending one batch: attempts, retries of transient failures, and the stop
//! after an error that would fail every batch.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use futures::future::BoxFuture;

use super::super::error::Error;
use super::super::retry::{RetryPolicy, traced_attempt};
use super::batching::Batch;
use super::kind::WriteKind;
use super::mapping::{self, Context};
use super::report::{Outcome, WriteBatch};

/// Sends one attempt of a batch (`attempt` counts from 1); `Ok` when the
/// whole batch was stored.
pub(crate) type SendFn =
    Arc<dyn Fn(Arc<Batch>, u32) -> BoxFuture<'static, Result<(), Error>> + Send + Sync>;

/// Called with a batch's input range before its first request (see
/// [`WriteRequest::before_send`](super::WriteRequest::before_send)).
pub type BeforeSendFn = Arc<dyn Fn(std::ops::Range<usize>) -> Result<(), Error> + Send + Sync>;

/// What every batch of one call shares.
pub(crate) struct Shared {
    pub(crate) kind: WriteKind,
    pub(crate) resubmission: bool,
    pub(crate) retry: RetryPolicy,
    pub(crate) send: SendFn,
    pub(crate) before_send: Option<BeforeSendFn>,
    /// Set by an error that would fail every batch; later batches are not sent.
    aborted: AtomicBool,
    abort: Mutex<Option<Error>>,
    /// The first error of `before_send`: no batch starts after it.
    refused: Mutex<Option<Error>>,
}

impl Shared {
    pub(crate) fn new(
        kind: WriteKind,
        resubmission: bool,
        retry: RetryPolicy,
        send: SendFn,
        before_send: Option<BeforeSendFn>,
    ) -> Self {
        Self {
            kind,
            resubmission,
            retry,
            send,
            before_send,
            aborted: AtomicBool::new(false),
            abort: Mutex::new(None),
            refused: Mutex::new(None),
        }
    }

    /// Refuses every batch that has not started yet (a journal that cannot
    /// be written): they get [`Outcome::Failed`] with `error`, not sent.
    pub(crate) fn refuse(&self, error: Error) {
        let mut refused = self
            .refused
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        refused.get_or_insert(error);
    }

    /// The error that refuses every batch not started yet, if any (see
    /// [`refuse`](Self::refuse)).
    pub(crate) fn refusal(&self) -> Option<Error> {
        self.refused
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    fn stop(&self, error: &Error) {
        if let Ok(mut slot) = self.abort.lock() {
            slot.get_or_insert_with(|| error.clone());
        }
        self.aborted.store(true, Ordering::SeqCst);
    }

    fn stopped(&self) -> Option<Error> {
        if !self.aborted.load(Ordering::SeqCst) {
            return None;
        }
        Some(
            self.abort
                .lock()
                .ok()
                .and_then(|g| g.clone())
                .unwrap_or_else(|| Error::unexpected(self.kind.operation(), None, "aborted")),
        )
    }
}

/// Errors after which no other batch is started: they would fail every batch.
fn fails_every_batch(error: &Error) -> bool {
    match error {
        Error::Auth { .. } | Error::Config { .. } => true,
        Error::Api { status, .. } => (*status == 401 || *status == 403) && !error.is_transient(),
        _ => false,
    }
}

/// The input range [`before_send`] is called with for `batch`: `None` when
/// the batch sends nothing (every conversion refused or settled, or the
/// input differs from a journal's), so no hook is called for it.
pub(crate) fn hooked_rows(shared: &Shared, batch: &Batch) -> Option<std::ops::Range<usize>> {
    let sends = batch.sent() > 0 && batch.mismatch.is_none();
    (sends && shared.before_send.is_some()).then(|| batch.start..batch.start + batch.len)
}

/// Runs the [`BeforeSendFn`] for the rows of a batch that has conversions to
/// send ([`hooked_rows`]), before its first request; called in input order,
/// one batch at a time. `Err`: the batch must not be sent, nor any later one
/// (batches started before it are not affected).
pub(crate) fn before_send(
    shared: &Shared,
    rows: Option<std::ops::Range<usize>>,
) -> Result<(), Error> {
    let (Some(hook), Some(rows)) = (&shared.before_send, rows) else {
        return Ok(());
    };
    let mut refused = shared
        .refused
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some(error) = refused.as_ref() {
        return Err(error.clone());
    }
    hook(rows).inspect_err(|e| *refused = Some(e.clone()))
}

/// Sends `batch` (retrying transient failures) and returns one outcome per
/// input row of it: the locally refused rows as [`Outcome::Invalid`], the
/// rows an earlier run settled as [`Outcome::Settled`]. `refused`: the
/// [`before_send`] error that forbids sending it.
pub(crate) async fn run_batch(
    shared: Arc<Shared>,
    batch: Batch,
    refused: Option<Error>,
) -> WriteBatch {
    let batch = Arc::new(batch);
    let refused = batch.mismatch.clone().or(refused);
    let (sent, requests) = match refused.clone() {
        _ if batch.sent() == 0 => (Vec::new(), 0),
        Some(error) => {
            let failed = Outcome::Failed {
                error,
                attempts: 0,
                may_have_been_stored: false,
            };
            (vec![failed; batch.sent()], 0)
        }
        None => send_batch(&shared, &batch).await,
    };
    let mut outcomes: Vec<Option<Outcome>> = vec![None; batch.len];
    for (&offset, outcome) in batch.positions.iter().zip(sent) {
        outcomes[offset] = Some(outcome);
    }
    for (offset, error) in &batch.invalid {
        if let Some(slot) = outcomes.get_mut(*offset) {
            *slot = Some(Outcome::Invalid(error.clone()));
        }
    }
    for &offset in &batch.settled {
        if let Some(slot) = outcomes.get_mut(offset) {
            // A journal whose rows differ from the input's says nothing
            // about this row.
            *slot = Some(match &batch.mismatch {
                None => Outcome::Settled,
                Some(error) => Outcome::Failed {
                    error: error.clone(),
                    attempts: 0,
                    may_have_been_stored: false,
                },
            });
        }
    }
    let operation = shared.kind.operation();
    WriteBatch {
        range: batch.start..batch.start + batch.len,
        outcomes: outcomes
            .into_iter()
            .map(|o| {
                // Every row is either sent or refused; this is unreachable
                // but must not panic or drop a conversion.
                o.unwrap_or_else(|| Outcome::Failed {
                    error: Error::unexpected(operation, None, "no outcome was recorded"),
                    attempts: requests,
                    may_have_been_stored: true,
                })
            })
            .collect(),
        requests,
        fingerprint: batch.mismatch.is_none().then_some(batch.fingerprint),
    }
}

/// The attempts of one batch: its outcomes (one per sent conversion) and the
/// requests made.
async fn send_batch(shared: &Shared, batch: &Arc<Batch>) -> (Vec<Outcome>, u32) {
    let len = batch.sent();
    let operation = shared.kind.operation();
    // True once an attempt may have reached the server without an answer.
    let mut maybe_delivered = false;
    let mut attempt: u32 = 0;
    loop {
        if attempt == 0
            && let Some(cause) = shared.stopped()
        {
            let failed = Outcome::Failed {
                error: cause,
                attempts: 0,
                may_have_been_stored: false,
            };
            return (vec![failed; len], 0);
        }
        attempt += 1;
        let call = (shared.send)(batch.clone(), attempt);
        let error = match traced_attempt(operation, attempt, call).await {
            Ok(()) => return (vec![Outcome::Stored; len], attempt),
            Err(e) => e,
        };
        let ctx = Context {
            kind: shared.kind,
            resubmission: shared.resubmission,
            maybe_delivered,
            attempts: attempt,
        };
        if let Some(outcomes) = mapping::per_conversion(ctx, batch, &error) {
            return (outcomes, attempt);
        }
        if let Some(wait) = shared.retry.next_delay(attempt, &error) {
            maybe_delivered |= error.may_have_reached_server();
            tracing::warn!(
                operation,
                attempt,
                batch_start = batch.start,
                batch_len = len,
                wait_ms = u64::try_from(wait.as_millis()).unwrap_or(u64::MAX),
                error = %error,
                "transient failure, sending the batch again"
            );
            tokio::time::sleep(wait).await;
            continue;
        }
        if fails_every_batch(&error) {
            shared.stop(&error);
        }
        let may_have_been_stored = maybe_delivered || error.may_have_reached_server();
        let failed = Outcome::Failed {
            error,
            attempts: attempt,
            may_have_been_stored,
        };
        return (vec![failed; len], attempt);
    }
}

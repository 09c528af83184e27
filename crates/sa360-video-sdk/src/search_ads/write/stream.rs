//! [`WriteStream`]: batches sent with bounded concurrency, yielded in input
//! order through a bounded reorder buffer.

use std::collections::{BTreeMap, VecDeque};
use std::ops::Range;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use futures::future::BoxFuture;
use futures::stream::{BoxStream, FuturesUnordered};
use futures::{FutureExt, Stream, StreamExt};

use super::super::conversion::Conversion;
use super::super::error::Error;
use super::batching::{Batch, Batcher};
use super::journal::{Done, JournalFile, JournalParts};
use super::options::{WriteOptions, WriteProgress, WriteProgressFn};
use super::report::{Outcome, WriteBatch};
use super::resume::ResumeCursor;
use super::run::{Shared, before_send, hooked_rows, run_batch};

/// The outcomes of an insert or update, one [`WriteBatch`] at a time, in
/// input order, as the batches finish (from
/// [`WriteRequest::stream`](super::WriteRequest::stream)).
///
/// # Bounds
///
/// The input is read only as far as the next batch: at most `concurrency`
/// batches are in flight, the next one is read and checked while they are
/// (so it starts the moment one finishes), and a batch that finishes before
/// an earlier one waits in a reorder buffer. Batches in flight and waiting
/// together never exceed [`WriteOptions::max_held_batches`] (`2 ×
/// concurrency`), so at most `(2 × concurrency + 1) × batch_size` input
/// conversions are held at once, whatever the input's length.
/// [`stats`](Self::stats) shows the peaks.
///
/// # Dropping
///
/// Nothing runs in the background: every request is a future owned by the
/// stream, polled only while the stream is. Dropping the stream cancels the
/// requests in flight and sends nothing more; their conversions were never
/// yielded, so a caller that records what it got knows exactly which rows
/// have no outcome (a rerun with
/// [`resubmission`](super::WriteRequest::resubmission) on settles them).
/// Everything yielded before stays true.
pub struct WriteStream<'a> {
    input: Option<BoxStream<'a, Conversion>>,
    batcher: Batcher,
    /// Batches closed by the batcher, not started yet (at most two).
    ready: VecDeque<Batch>,
    /// The `before_send` hook (a journal's `send` record) of the next batch
    /// to start: the first one in `ready`, or (a journal's, see
    /// [`declare_ahead`](Self::declare_ahead)) the batch still being read;
    /// run ahead while earlier batches are in flight.
    gate: Option<Gate>,
    /// Rows a durable `send` record written ahead covers (see
    /// [`declare_ahead`](Self::declare_ahead)): a batch inside them needs no
    /// record of its own.
    declared: Range<usize>,
    in_flight: FuturesUnordered<BoxFuture<'static, (u64, WriteBatch)>>,
    /// Finished batches waiting for an earlier one, by sequence number.
    waiting: BTreeMap<u64, WriteBatch>,
    next_start: u64,
    next_yield: u64,
    /// Input conversions of the batches yielded so far.
    yielded_rows: usize,
    shared: Arc<Shared>,
    options: WriteOptions,
    progress: Option<WriteProgressFn>,
    done: WriteProgress,
    stats: WriteStreamStats,
    journal: Option<Journaling>,
    /// True once the stream returned `None`.
    ended: bool,
}

/// The `before_send` hook of the next batch to start (see
/// [`WriteStream::poll_gate`]).
struct Gate {
    /// The input rows the hook was called with (`None`: no hook was due).
    rows: Option<Range<usize>>,
    state: GateState,
}

enum GateState {
    /// Running on a blocking thread.
    Running(tokio::task::JoinHandle<Result<(), Error>>),
    /// Finished: the batch may be sent (`Ok`), or must not be (`Err`).
    Done(Result<(), Error>),
}

impl Gate {
    /// True when this hook's call stands for a batch whose hook is due for
    /// `rows`: no hook is due, or it was called with rows covering them.
    fn covers(&self, rows: Option<&Range<usize>>) -> bool {
        match (rows, &self.rows) {
            (None, _) => true,
            (Some(want), Some(had)) => had.start <= want.start && want.end <= had.end,
            (Some(_), None) => false,
        }
    }
}

/// The journal of a [`WriteStream`] (see [`WriteJournal`](super::WriteJournal)).
#[derive(Debug)]
struct Journaling {
    /// Shared with the `before_send` hook, which appends `send` records.
    file: Arc<JournalFile>,
    /// The record of the last batch yielded, written once the application
    /// handled it.
    pending: Option<Done>,
    mark: u64,
    /// Rows of this run without a definite outcome, or not recorded.
    open_rows: usize,
    /// The first error writing it.
    error: Option<Error>,
    /// Kept whatever happens (see [`WriteStream::keep_journal`]).
    keep: bool,
    /// Closed (removed, or kept and fsynced) by `finish` or the drop.
    closed: bool,
    /// The `send` record of the batch being read is written as it opens
    /// (see [`WriteStream::declare_ahead`]): the journal's own hook, with no
    /// application hook behind it that expects exact batch ranges.
    ahead: bool,
}

impl Journaling {
    fn commit(&mut self) -> Result<(), Error> {
        if let Some(e) = &self.error {
            return Err(e.clone());
        }
        let Some(mut done) = self.pending.take() else {
            return Ok(());
        };
        done.mark = self.mark;
        let written = self.file.done(&done);
        written.inspect_err(|e| self.error = Some(e.clone()))
    }
}

/// The peaks of a [`WriteStream`] so far: what it held at most at once.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct WriteStreamStats {
    /// Batches in flight (≤ `concurrency`).
    pub peak_in_flight: usize,
    /// Finished batches waiting for an earlier one (the reorder buffer;
    /// < [`WriteOptions::max_held_batches`]).
    pub peak_waiting: usize,
    /// Batches in flight and waiting together (≤
    /// [`WriteOptions::max_held_batches`]).
    pub peak_held: usize,
    /// Input conversions read but not yet yielded (≤ `(max_held_batches + 1)
    /// × batch_size`).
    pub peak_read_ahead: usize,
    /// Batches yielded.
    pub batches: usize,
    /// HTTP requests made, retries included, for the batches yielded.
    pub requests: usize,
}

impl std::fmt::Debug for WriteStream<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WriteStream")
            .field("operation", &self.shared.kind.operation())
            .field("options", &self.options)
            .field("rows_read", &self.batcher.rows())
            .field("in_flight", &self.in_flight.len())
            .field("waiting", &self.waiting.len())
            .field("stats", &self.stats)
            .finish()
    }
}

impl<'a> WriteStream<'a> {
    pub(crate) fn new(
        input: BoxStream<'a, Conversion>,
        total: Option<usize>,
        options: WriteOptions,
        progress: Option<WriteProgressFn>,
        shared: Shared,
        resume: Option<ResumeCursor>,
        journal: Option<JournalParts>,
    ) -> Self {
        let mut batcher = Batcher::resuming(shared.kind, options.batch_size, resume);
        let journal = journal.map(|(file, checkpoints, ahead)| {
            batcher = std::mem::replace(&mut batcher, Batcher::new(shared.kind, 1))
                .journaled(&checkpoints);
            Journaling {
                file,
                pending: None,
                mark: 0,
                open_rows: 0,
                error: None,
                keep: false,
                closed: false,
                ahead,
            }
        });
        Self {
            input: Some(input),
            batcher,
            ready: VecDeque::new(),
            gate: None,
            declared: 0..0,
            in_flight: FuturesUnordered::new(),
            waiting: BTreeMap::new(),
            next_start: 0,
            next_yield: 0,
            yielded_rows: 0,
            shared: Arc::new(shared),
            options,
            progress,
            done: WriteProgress::new(total),
            stats: WriteStreamStats::default(),
            journal,
            ended: false,
        }
    }

    /// With a [`journal`](super::WriteRequest::journal): the application's
    /// position once it handled the batches yielded so far (the length of its
    /// report file, say), recorded with the next `done` record and read back
    /// by [`JournalState::mark`](super::JournalState::mark) on a rerun.
    pub fn set_mark(&mut self, mark: u64) {
        if let Some(j) = self.journal.as_mut() {
            j.mark = mark;
        }
    }

    /// With a [`journal`](super::WriteRequest::journal): records now the
    /// outcomes of the last batch yielded, which the application has
    /// handled. Asking for the next batch does it too (an error is then only
    /// seen here, and stops sending: later batches get
    /// [`Outcome::Failed`](Outcome::Failed) with it). The record survives a
    /// kill of the process once this returns; against a power loss it is
    /// fsynced at once when the server rejected a row of the batch, and
    /// otherwise with the next batch's `send` record or when the stream
    /// ends. A batch not recorded when the process dies (or whose record a
    /// power loss took) is sent again by a rerun, safely: its rows may have
    /// been sent, so a stored one comes back "already stored", a success.
    pub fn commit(&mut self) -> Result<(), Error> {
        match self.journal.as_mut() {
            Some(j) => j.commit(),
            None => Ok(()),
        }
    }

    /// With a [`journal`](super::WriteRequest::journal): keeps it when the
    /// stream ends or is dropped, even if every row has its outcome (the
    /// application found its input incomplete, say).
    pub fn keep_journal(&mut self) {
        if let Some(j) = self.journal.as_mut() {
            j.keep = true;
        }
    }

    /// Ends the stream: with a [`journal`](super::WriteRequest::journal),
    /// records the last batch and, when the input ended and every row has its
    /// outcome, removes the journal (or ends it with its `finished` record,
    /// [`WriteJournal::keep_finished`](super::WriteJournal::keep_finished)).
    /// `Ok(true)` when it was so finished (or there
    /// is none and the input ended), `Ok(false)` when it is kept for a rerun
    /// (rows without a definite answer, the input not read to its end, or
    /// [`keep_journal`](Self::keep_journal)). Dropping the stream does the
    /// same without reporting errors.
    pub fn finish(mut self) -> Result<bool, Error> {
        self.close_journal()
    }

    fn close_journal(&mut self) -> Result<bool, Error> {
        let ended = self.ended;
        let Some(j) = self.journal.as_mut() else {
            return Ok(ended);
        };
        if j.closed {
            return Ok(false);
        }
        j.commit()?;
        j.closed = true;
        if !ended || j.keep || j.open_rows > 0 {
            // Kept for a rerun: its last records made durable once, here.
            j.file.sync_all()?;
            return Ok(false);
        }
        j.file.finish()?;
        Ok(true)
    }

    /// The peaks so far (see [Bounds](Self#bounds)).
    pub fn stats(&self) -> WriteStreamStats {
        self.stats
    }

    /// Input conversions read so far.
    pub fn conversions_read(&self) -> usize {
        self.batcher.rows()
    }

    fn held(&self) -> usize {
        self.in_flight.len() + self.waiting.len()
    }

    fn room(&self) -> bool {
        self.in_flight.len() < self.options.concurrency.max(1)
            && self.held() < self.options.max_held_batches()
    }

    /// Starts batches while there is room and input. Returns when there is
    /// no room, no more input, or the input is not ready (its waker is then
    /// registered).
    fn fill(&mut self, cx: &mut Context<'_>) {
        while self.room() {
            if !self.ready.is_empty() {
                if self.poll_gate(cx).is_pending() {
                    return; // its waker is registered
                }
                let Some(batch) = self.ready.pop_front() else {
                    return;
                };
                let refused = self.take_gate(&batch);
                let seq = self.next_start;
                self.next_start += 1;
                let shared = self.shared.clone();
                self.in_flight.push(
                    run_batch(shared, batch, refused)
                        .map(move |b| (seq, b))
                        .boxed(),
                );
                self.note();
                continue;
            }
            self.declare_ahead();
            if !self.read_one(cx) {
                return;
            }
        }
    }

    /// With a journal: starts the `send` record of the batch being read (no
    /// batch is ready to start) as soon as it holds a conversion to send, so
    /// that the `fdatasync` overlaps the reading and checking of the batch,
    /// not only the requests in flight. The record names the rows this
    /// batch may cover: from its first row, `batch_size` rows (a batch closes
    /// at `batch_size` rows or earlier, [`Batcher::open_reach`]). A batch
    /// still starts only once a durable record covers it
    /// ([`poll_gate`](Self::poll_gate) checks, and writes one for its exact
    /// rows when none does). The price (DECISIONS SA-23): when the batch
    /// closes early (before a repeated id) or at the input's end, the record
    /// names rows of the next batch or past the end, which a rerun after an
    /// interruption counts as possibly sent. Not more: a record naming the
    /// rows of several batches (one `fdatasync` for several) would stretch
    /// that to rows never sent, and was measured and left out (SA-23).
    fn declare_ahead(&mut self) {
        if !self.ahead() || self.gate.is_some() || !self.ready.is_empty() || self.input.is_none() {
            return;
        }
        let Some(reach) = self.batcher.open_reach() else {
            return;
        };
        if self.covered_ahead(&reach) {
            // The batch is checked against the gate's rows again as it starts.
            self.gate = Some(self.covered_gate());
            return;
        }
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return; // outside a runtime the hook runs as the batch starts
        };
        let rows = reach;
        let shared = self.shared.clone();
        let hooked = Some(rows.clone());
        self.gate = Some(Gate {
            rows: Some(rows),
            state: GateState::Running(runtime.spawn_blocking(move || before_send(&shared, hooked))),
        });
    }

    /// True when the `send` records are the journal's own, written ahead.
    fn ahead(&self) -> bool {
        self.journal.as_ref().is_some_and(|j| j.ahead)
    }

    /// True when a durable record written ahead covers `rows`.
    fn covered_ahead(&self, rows: &Range<usize>) -> bool {
        self.ahead() && self.declared.start <= rows.start && rows.end <= self.declared.end
    }

    /// The gate of a batch a durable record written ahead covers.
    fn covered_gate(&self) -> Gate {
        Gate {
            rows: Some(self.declared.clone()),
            state: GateState::Done(Ok(())),
        }
    }

    /// Runs the `before_send` hook (with a journal: appends the batch's `send`
    /// record and fsyncs it) of the first batch in `ready`, unless it ran or
    /// is running: on a blocking thread (`spawn_blocking`) within a Tokio
    /// runtime, so that it overlaps the batches in flight, else here. Hooks
    /// run one at a time, in input order: the next one starts once this
    /// batch started. `Ready` once the hook finished (its result is kept for
    /// [`take_gate`](Self::take_gate)); `Pending` registers the waker.
    fn poll_gate(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        let Some(batch) = self.ready.front() else {
            return Poll::Ready(());
        };
        let rows = hooked_rows(&self.shared, batch);
        if let Some(gate) = &self.gate
            && !gate.covers(rows.as_ref())
            && matches!(gate.state, GateState::Done(_))
        {
            // A record written ahead that does not cover the batch (not
            // expected: a batch never outgrows its reach): write its own.
            self.gate = None;
        }
        if self.gate.is_none()
            && let Some(r) = &rows
            && self.covered_ahead(r)
        {
            let covered = self.covered_gate();
            if covered.covers(rows.as_ref()) {
                self.gate = Some(covered);
            }
        }
        if self.gate.is_none() {
            let shared = self.shared.clone();
            let hooked = rows.clone();
            let state = match tokio::runtime::Handle::try_current() {
                Ok(runtime) if rows.is_some() => {
                    GateState::Running(runtime.spawn_blocking(move || before_send(&shared, hooked)))
                }
                _ => GateState::Done(before_send(&shared, hooked)),
            };
            self.gate = Some(Gate { rows, state });
        }
        let Some(Gate {
            state: GateState::Running(task),
            ..
        }) = self.gate.as_mut()
        else {
            return self.poll_gate_covering(cx);
        };
        let result = match task.poll_unpin(cx) {
            Poll::Pending => return Poll::Pending,
            Poll::Ready(Ok(result)) => result,
            Poll::Ready(Err(e)) if e.is_panic() => std::panic::resume_unwind(e.into_panic()),
            Poll::Ready(Err(e)) => Err(Error::unexpected(
                self.shared.kind.operation(),
                None,
                format!("the before_send hook did not finish: {e}"),
            )),
        };
        if let Some(gate) = self.gate.as_mut() {
            gate.state = GateState::Done(result);
        }
        self.poll_gate_covering(cx)
    }

    /// [`poll_gate`](Self::poll_gate) once the gate finished: `Ready` when
    /// it covers the first batch in `ready`, else a new one is started.
    fn poll_gate_covering(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        let covered = match (self.ready.front(), &self.gate) {
            (Some(batch), Some(gate)) => gate.covers(hooked_rows(&self.shared, batch).as_ref()),
            _ => true,
        };
        if covered {
            Poll::Ready(())
        } else {
            self.poll_gate(cx)
        }
    }

    /// The finished hook's verdict for the batch just taken from `ready`:
    /// `None` to send it, else the error that forbids it. Fails closed: a
    /// batch whose hook did not finish is not sent.
    fn take_gate(&mut self, batch: &Batch) -> Option<Error> {
        let rows = hooked_rows(&self.shared, batch);
        let unfinished = || {
            Error::unexpected(
                self.shared.kind.operation(),
                None,
                "a batch was about to start before its before_send hook finished for its rows",
            )
        };
        match self.gate.take() {
            Some(gate) if gate.covers(rows.as_ref()) => match gate.state {
                // A hook that ran ahead may have finished before an error
                // refused every later batch: that refusal wins.
                GateState::Done(Ok(())) if rows.is_some() => {
                    let refused = self.shared.refusal();
                    if let (None, Some(durable)) = (&refused, gate.rows)
                        && self.ahead()
                        && durable.end > self.declared.end
                    {
                        self.declared = durable;
                    }
                    refused
                }
                GateState::Done(result) => result.err(),
                GateState::Running(_) => Some(unfinished()),
            },
            _ => Some(unfinished()),
        }
    }

    /// True when the first batch in `ready` may start as far as its hook goes.
    fn gate_open(&self) -> bool {
        matches!(
            self.gate,
            Some(Gate {
                state: GateState::Done(_),
                ..
            })
        )
    }

    /// While batches are in flight and there is no room to start another,
    /// reads and checks the input as far as the next batch, so that it starts
    /// the moment a batch finishes instead of being read then (the reading
    /// overlaps the requests). Only while fewer than
    /// [`WriteOptions::max_held_batches`] batches are held, so the read-ahead
    /// stays within the bound in [Bounds](WriteStream#bounds).
    fn read_ahead(&mut self, cx: &mut Context<'_>) {
        while self.ready.is_empty() && self.held() < self.options.max_held_batches() {
            if !self.read_one(cx) {
                return;
            }
        }
    }

    /// Reads one input conversion into the batcher (a batch it closes joins
    /// `ready`). `false` when the input is finished or not ready (its waker is
    /// then registered).
    fn read_one(&mut self, cx: &mut Context<'_>) -> bool {
        let Some(input) = self.input.as_mut() else {
            return false;
        };
        match input.poll_next_unpin(cx) {
            Poll::Ready(Some(c)) => {
                if let Some(batch) = self.batcher.push(c) {
                    self.ready.push_back(batch);
                }
                self.done.conversions_read = self.batcher.rows();
                self.note();
                true
            }
            Poll::Ready(None) => {
                self.input = None;
                if let Some(batch) = self.batcher.finish() {
                    self.ready.push_back(batch);
                }
                true
            }
            Poll::Pending => false,
        }
    }

    /// Records the peaks.
    fn note(&mut self) {
        let s = &mut self.stats;
        s.peak_in_flight = s.peak_in_flight.max(self.in_flight.len());
        s.peak_waiting = s.peak_waiting.max(self.waiting.len());
        s.peak_held = s.peak_held.max(self.in_flight.len() + self.waiting.len());
        s.peak_read_ahead = s
            .peak_read_ahead
            .max(self.batcher.rows() - self.yielded_rows);
    }

    fn finished(&self) -> bool {
        self.input.is_none()
            && self.ready.is_empty()
            && self.in_flight.is_empty()
            && self.waiting.is_empty()
    }
}

impl Stream for WriteStream<'_> {
    type Item = WriteBatch;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<WriteBatch>> {
        let this = self.get_mut();
        if let Some(j) = this.journal.as_mut()
            && let Err(e) = j.commit()
        {
            // No batch starts after it: they get `Failed` with the error.
            this.shared.refuse(e);
        }
        loop {
            if let Some(batch) = this.waiting.remove(&this.next_yield) {
                if let Some(j) = this.journal.as_mut() {
                    let done = Done::of(&batch);
                    let unanswered = |o: &&Outcome| match done {
                        // Not recorded (the input differs from the journal's).
                        None => !matches!(o, Outcome::Settled),
                        Some(_) => matches!(o, Outcome::Failed { .. }),
                    };
                    j.open_rows += batch.outcomes().iter().filter(unanswered).count();
                    j.pending = done;
                }
                this.next_yield += 1;
                this.yielded_rows += batch.range.len();
                this.stats.batches += 1;
                this.stats.requests += batch.requests as usize;
                return Poll::Ready(Some(batch));
            }
            this.fill(cx);
            if this.finished() {
                this.ended = true;
                return Poll::Ready(None);
            }
            match this.in_flight.poll_next_unpin(cx) {
                Poll::Ready(Some((seq, batch))) => {
                    this.done.conversions_done += batch.range.len();
                    this.done.batches_done += 1;
                    if let Some(report) = &this.progress {
                        report(this.done);
                    }
                    this.waiting.insert(seq, batch);
                    this.note();
                }
                // Nothing in flight: the input is not ready (its waker is
                // registered), the next batch's hook is running (likewise), or
                // batches are ready to start next round.
                Poll::Ready(None) if !this.ready.is_empty() && this.gate_open() => continue,
                Poll::Ready(None) => return Poll::Pending,
                // Requests are in flight (their wakers are registered): read
                // the next batch meanwhile.
                Poll::Pending => {
                    // The record of the batch about to be read is written
                    // while it is read (with a journal).
                    this.declare_ahead();
                    this.read_ahead(cx);
                    // The next batch's hook (a journal's fsync) runs meanwhile.
                    let gated = this.poll_gate(cx).is_ready();
                    if this.room() && !this.ready.is_empty() && gated {
                        continue;
                    }
                    return Poll::Pending;
                }
            }
        }
    }
}

impl Drop for WriteStream<'_> {
    fn drop(&mut self) {
        // Dropped before its end: the last batch yielded may not have been
        // handled (a panic, say), so it is not recorded; a rerun resends it.
        if !self.ended {
            return;
        }
        if let Err(e) = self.close_journal() {
            tracing::warn!(error = %e, "the write journal could not be closed; it is kept for a rerun");
        }
    }
}

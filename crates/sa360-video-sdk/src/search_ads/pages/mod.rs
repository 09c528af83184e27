//! The page engine: every paged read of the SDK goes through [`Pages`] and reaches the caller
//! as [`Rows`] — a query's pages (`search`, cursor: the page token), the date shards of the
//! conversion report (each a query read page by page, restarted after its last row when its page
//! token expires) and the v2 listings (`startRow` pages, each page a source of its own).
//!
//! **Page sources.** A [`PageSource`] knows one read: [`fetch`](PageSource::fetch) brings the
//! page at a cursor (`None`: the first) with the client's retries and body limits, as a
//! [`Fetched`] page whose next cursor is known before its rows are decoded;
//! [`decode`](PageSource::decode) reads the rows; [`mark`](PageSource::mark) and
//! [`resume`](PageSource::resume) say where a read restarts after `EXPIRED_PAGE_TOKEN`;
//! [`ends_read`](PageSource::ends_read) ends a read of unknown length. The sources:
//! `reporting/source.rs` (`searchAds360:search`), `reporting/stream.rs` (the batches of one
//! `searchStream` answer, which cannot resume), `reporting/report.rs` (a shard of the conversion
//! report) and `read/mod.rs` (a v2 page). How far each runs ahead is its read's [`Paging`].
//!
//! **Look-ahead (one mechanism).** As soon as a page is in and its next cursor read (before its
//! rows are decoded), the next page is asked for on a task of its own if there is room for it in
//! the budget without waiting ([`Ahead`]): the service prepares it while this page is decoded.
//! Sources run side by side (`lanes` at once, or ramping 1, 2, 4, … with [`Budget::ramp`]); a
//! source that has its last page stops counting, so `lanes` requests are in flight whenever
//! there is room for their rows.
//!
//! **Memory (one budget).** Rows fetched ahead of the reader hold permits of one budget,
//! `lanes × ahead × page_rows` rows, taken before a page is asked for and given back when the
//! reader takes the page; with more than one lane, the front shard (the one being read) may also
//! use a reserve of one page, so shards ahead of the reader never stall it. At most
//! `(lanes × ahead + 1) × page_rows` rows wait for the reader (`ahead × page_rows` with one
//! lane), besides the page it reads; a page with more rows than `page_rows` is refused. Dropping the stream aborts every task and every
//! request ahead.

use std::collections::VecDeque;
use std::future::Future;
use std::ops::Range;
use std::pin::{Pin, pin};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::{Context, Poll};

use bytes::Bytes;
use futures::Stream;
use futures::future::{Either, select};
use futures::task::AtomicWaker;
use tokio::sync::{OwnedSemaphorePermit, Semaphore, mpsc, watch};
use tokio::task::JoinHandle;

use super::error::Error;

mod paging;

pub use paging::Paging;
pub(crate) use paging::paging_setters;

/// A future a source returns, sent to a task of its own.
pub(crate) type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send>>;

/// A page fetched, and the next page's cursor (`None`: this is the source's last page).
pub(crate) struct Fetched<P> {
    pub page: P,
    pub next: Option<String>,
}

/// A page of JSON, its rows not yet decoded: the bytes and where the rows are in them.
#[derive(Debug)]
pub(crate) struct Raw {
    pub body: Bytes,
    pub rows: Range<usize>,
}

impl Raw {
    /// The bytes of the rows (a JSON array, or empty when the page has none).
    pub(crate) fn rows(&self) -> &[u8] {
        &self.body[self.rows.clone()]
    }
}

/// One read, page by page (see the module's documentation).
pub(crate) trait PageSource: Send + Sync + Sized + 'static {
    /// A row as the reader gets it.
    type Row: Send + 'static;
    /// A page as fetched, before its rows are decoded ([`Raw`] for JSON bytes).
    type Page: Send + 'static;
    /// Where a restarted read goes on from (the last row yielded, as the source orders rows).
    type Mark: Send + 'static;

    /// The operation's name, for errors.
    fn operation(&self) -> &'static str;

    /// Whether `rows`, a page of this source, end the whole read: no source after this one is
    /// started (v2 listings end at the first short page).
    fn ends_read(&self, _rows: &[Self::Row]) -> bool {
        false
    }

    /// The page at `cursor` (`None`: the first), with retries: its bytes and its next cursor.
    fn fetch(
        self: Arc<Self>,
        cursor: Option<String>,
    ) -> BoxFuture<Result<Fetched<Self::Page>, Error>>;

    /// The rows of a page.
    fn decode(&self, page: Self::Page) -> Result<Vec<Self::Row>, Error>;

    /// The mark after `rows`, the rows of a page following `prev`; `Err` when they are out of
    /// the source's order (a restart could not then yield each row exactly once).
    fn mark(
        &self,
        _rows: &[Self::Row],
        _prev: Option<Self::Mark>,
    ) -> Result<Option<Self::Mark>, String> {
        Ok(None)
    }

    /// After `EXPIRED_PAGE_TOKEN`: the same read again from its start (`after` is `None`) or
    /// after `after`, yielding only the rows after it; `None` fails the read.
    fn resume(&self, _after: Option<&Self::Mark>) -> Option<Self> {
        None
    }
}

/// How far ahead of the reader a read may go.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Budget {
    /// Most rows of one page (the page size asked for).
    pub page_rows: u32,
    /// Pages each lane may hold ahead of the reader (at least 1).
    pub ahead: usize,
    /// Sources read at once (at least 1).
    pub lanes: usize,
    /// Start with one lane and double the lanes each time a source ends (up to `lanes`), so a
    /// read that fits in one page costs one request.
    pub ramp: bool,
}

impl Budget {
    fn page(&self) -> usize {
        usize::try_from(self.page_rows).unwrap_or(usize::MAX).max(1)
    }

    /// Rows any lane may hold ahead of the reader, besides the front's reserve.
    pub(crate) fn rows(&self) -> usize {
        self.lanes
            .max(1)
            .saturating_mul(self.ahead.max(1))
            .saturating_mul(self.page())
    }
}

/// Restarts after an expired page token without a new row before a read gives up.
const MAX_STALLED_RESTARTS: u32 = 8;

struct Shared {
    budget: Budget,
    rows: Arc<Semaphore>,
    reserve: Arc<Semaphore>,
    /// Sources started that have not fetched their last page (or failed) yet.
    fetching: AtomicUsize,
    /// Set when a source's page ended the whole read ([`PageSource::ends_read`]).
    ended: std::sync::atomic::AtomicBool,
    /// The reader, woken when a source stops fetching (room to start the next).
    reader: AtomicWaker,
}

/// What a source's task sends: rows with the budget they hold, or its end. A channel that closes
/// without `Done` means the task died (a panic), which the stream reports.
enum Msg<R> {
    Rows(Vec<R>, OwnedSemaphorePermit),
    Done,
}

type Sent<R> = Result<Msg<R>, Error>;

struct Running<R> {
    rx: mpsc::Receiver<Sent<R>>,
    task: JoinHandle<()>,
}

/// The rows of sources read in order, ahead of the reader within one [`Budget`]. After an error
/// the stream ends; dropping it aborts every request.
pub(crate) struct Pages<S: PageSource> {
    shared: Arc<Shared>,
    pending: Box<dyn Iterator<Item = S> + Send>,
    operation: &'static str,
    /// Sources that may fetch at once now: `lanes`, or (with [`Budget::ramp`]) 1 at first,
    /// doubled by each source that ends, up to `lanes`.
    lanes_now: usize,
    running: VecDeque<Running<S::Row>>,
    next_index: usize,
    /// The index of the source being read (it may use the reserve).
    front: watch::Sender<usize>,
    ready: std::vec::IntoIter<S::Row>,
    done: bool,
}

impl<S: PageSource> std::fmt::Debug for Pages<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pages")
            .field("operation", &self.operation)
            .field("budget", &self.shared.budget)
            .field("running", &self.running.len())
            .field("done", &self.done)
            .finish_non_exhaustive()
    }
}

impl<S: PageSource> Pages<S> {
    /// The rows of `sources`, in their order.
    pub(crate) fn new(
        operation: &'static str,
        sources: impl IntoIterator<Item = S, IntoIter: Send + 'static>,
        budget: Budget,
    ) -> Self {
        let budget = Budget {
            ahead: budget.ahead.max(1),
            lanes: budget.lanes.max(1),
            ..budget
        };
        let shared = Shared {
            rows: Arc::new(Semaphore::new(budget.rows())),
            // One page only the front may use, so lanes ahead of the reader never stall it.
            reserve: Arc::new(Semaphore::new(if budget.lanes > 1 {
                budget.page()
            } else {
                0
            })),
            fetching: AtomicUsize::new(0),
            ended: std::sync::atomic::AtomicBool::new(false),
            reader: AtomicWaker::new(),
            budget,
        };
        Self {
            shared: Arc::new(shared),
            pending: Box::new(sources.into_iter()),
            operation,
            lanes_now: if budget.ramp { 1 } else { budget.lanes },
            running: VecDeque::new(),
            next_index: 0,
            front: watch::Sender::new(0),
            ready: Vec::new().into_iter(),
            done: false,
        }
    }

    /// Starts sources in order while fewer than `lanes` are fetching, and always one when none
    /// is left to read.
    fn start(&mut self) {
        while self.running.is_empty()
            || self.shared.fetching.load(Ordering::Acquire) < self.lanes_now
        {
            if self.shared.ended.load(Ordering::Acquire) {
                return;
            }
            let Some(source) = self.pending.next() else {
                return;
            };
            // Every message holds a page of budget or reserve, so the channel never fills.
            let b = self.shared.budget;
            let (tx, rx) = mpsc::channel(b.lanes.saturating_add(1).saturating_mul(b.ahead) + 2);
            self.shared.fetching.fetch_add(1, Ordering::AcqRel);
            let lane = Lane {
                shared: self.shared.clone(),
                index: self.next_index,
                front: self.front.subscribe(),
            };
            self.next_index += 1;
            let task = tokio::spawn(lane.run(source, tx));
            self.running.push_back(Running { rx, task });
        }
    }

    fn stop(&mut self) {
        self.done = true;
        self.pending = Box::new(std::iter::empty());
        for r in self.running.drain(..) {
            r.task.abort();
        }
    }
}

impl<S: PageSource> Drop for Pages<S> {
    fn drop(&mut self) {
        for r in &self.running {
            r.task.abort();
        }
    }
}

impl<S: PageSource> Unpin for Pages<S> {}

impl<S: PageSource> Stream for Pages<S> {
    type Item = Result<S::Row, Error>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = &mut *self;
        loop {
            if !this.done {
                this.start();
            }
            if let Some(row) = this.ready.next() {
                return Poll::Ready(Some(Ok(row)));
            }
            if this.done {
                return Poll::Ready(None);
            }
            // Registered before the sources are counted again, so one that stops fetching
            // after this count still wakes the reader to start the next.
            this.shared.reader.register(cx.waker());
            this.start();
            let Some(front) = this.running.front_mut() else {
                this.done = true;
                return Poll::Ready(None);
            };
            match front.rx.poll_recv(cx) {
                Poll::Pending => return Poll::Pending,
                // The budget goes back as the rows move to the reader.
                Poll::Ready(Some(Ok(Msg::Rows(rows, _budget)))) => this.ready = rows.into_iter(),
                Poll::Ready(Some(Ok(Msg::Done))) => {
                    this.running.pop_front();
                    if this.shared.budget.ramp {
                        this.lanes_now = (this.lanes_now * 2).min(this.shared.budget.lanes);
                    }
                    this.front.send_modify(|front| *front += 1);
                }
                Poll::Ready(Some(Err(e))) => {
                    this.stop();
                    return Poll::Ready(Some(Err(e)));
                }
                Poll::Ready(None) => {
                    this.stop();
                    return Poll::Ready(Some(Err(Error::unexpected(
                        this.operation,
                        None,
                        "a page reader stopped before its end (its task panicked)",
                    ))));
                }
            }
        }
    }
}

/// Rows of a paged read, in order, each exactly once (`SearchStream`, `ConversionReport` and
/// `ConversionStream` are this type). After an error the stream ends; dropping it aborts its
/// requests.
#[must_use = "streams do nothing unless polled"]
pub struct Rows<T> {
    rows: futures::stream::BoxStream<'static, Result<T, Error>>,
}

impl<T> Rows<T> {
    pub(crate) fn new(rows: impl Stream<Item = Result<T, Error>> + Send + 'static) -> Self {
        Self {
            rows: Box::pin(rows),
        }
    }

    /// A stream whose first and only item is `error` (nothing is sent).
    pub(crate) fn refused(error: Error) -> Self
    where
        T: Send + 'static,
    {
        Self::new(futures::stream::once(std::future::ready(Err(error))))
    }
}

impl<T> std::fmt::Debug for Rows<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Rows").finish_non_exhaustive()
    }
}

impl<T> Stream for Rows<T> {
    type Item = Result<T, Error>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        self.rows.as_mut().poll_next(cx)
    }
}

/// A task aborted when its handle is dropped.
struct AbortOnDrop<T>(JoinHandle<T>);

impl<T> Drop for AbortOnDrop<T> {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// The next page's request, on its way, with the budget its rows hold. Dropping it aborts it.
struct Ahead<P> {
    permit: OwnedSemaphorePermit,
    answer: AbortOnDrop<Result<Fetched<P>, Error>>,
}

impl<P: Send + 'static> Ahead<P> {
    /// Spawns the request and yields once, so it leaves before the reader decodes its page (a
    /// task spawned from a Tokio worker waits in that worker's next-task slot, which the other
    /// workers never take from, until the spawning task yields).
    async fn send<S: PageSource<Page = P>>(
        permit: OwnedSemaphorePermit,
        source: Arc<S>,
        cursor: String,
    ) -> Self {
        let answer = AbortOnDrop(tokio::spawn(source.fetch(Some(cursor))));
        tokio::task::yield_now().await;
        Self { permit, answer }
    }

    async fn answer(
        mut self,
        operation: &'static str,
    ) -> (OwnedSemaphorePermit, Result<Fetched<P>, Error>) {
        let answer = (&mut self.answer.0).await.unwrap_or_else(|e| {
            Err(Error::unexpected(
                operation,
                None,
                format!("a page request's task stopped before its answer: {e}"),
            ))
        });
        (self.permit, answer)
    }
}

/// A source's task: what it needs of the read, and its index (the front may use the reserve).
struct Lane {
    shared: Arc<Shared>,
    index: usize,
    front: watch::Receiver<usize>,
}

/// Counts a source out of `fetching` and wakes the reader however its task ends.
struct FetchingGuard(Arc<Shared>);

impl Drop for FetchingGuard {
    fn drop(&mut self) {
        self.0.fetching.fetch_sub(1, Ordering::AcqRel);
        self.0.reader.wake();
    }
}

impl Lane {
    fn page_permits(&self) -> u32 {
        self.shared.budget.page_rows.max(1)
    }

    /// A page of budget (or of the reserve, for the front) if there is one now.
    fn room_now(&self) -> Option<OwnedSemaphorePermit> {
        let rows = self.page_permits();
        let s = &self.shared;
        s.rows
            .clone()
            .try_acquire_many_owned(rows)
            .ok()
            .or_else(|| {
                (*self.front.borrow() == self.index)
                    .then(|| s.reserve.clone().try_acquire_many_owned(rows).ok())
                    .flatten()
            })
    }

    /// A page of budget, or of the reserve once this lane is the front. `None`: the read is gone.
    async fn room(&mut self) -> Option<OwnedSemaphorePermit> {
        let rows = self.page_permits();
        loop {
            let budget = self.shared.rows.clone().acquire_many_owned(rows);
            if *self.front.borrow_and_update() == self.index {
                let reserve = self.shared.reserve.clone().acquire_many_owned(rows);
                return match select(pin!(budget), pin!(reserve)).await {
                    Either::Left((permit, _)) | Either::Right((permit, _)) => permit.ok(),
                };
            }
            match select(pin!(budget), pin!(self.front.changed())).await {
                Either::Left((permit, _)) => return permit.ok(),
                Either::Right((Ok(()), _)) => {} // the front moved: maybe here
                Either::Right((Err(_), _)) => return None,
            }
        }
    }

    async fn run<S: PageSource>(mut self, source: S, tx: mpsc::Sender<Sent<S::Row>>) {
        let fetching = FetchingGuard(self.shared.clone());
        let operation = source.operation();
        let fail = |detail: String| Error::unexpected(operation, Some(200), detail);
        let mut source = Arc::new(source);
        let mut cursor: Option<String> = None;
        let mut mark: Option<S::Mark> = None;
        let mut stalled = 0;
        let mut ahead: Option<Ahead<S::Page>> = None;
        loop {
            let (room, answer) = match ahead.take() {
                Some(sent) => sent.answer(operation).await,
                None => {
                    let Some(room) = self.room().await else {
                        return;
                    };
                    (room, source.clone().fetch(cursor.clone()).await)
                }
            };
            let Fetched { page, next } = match answer {
                Ok(fetched) => fetched,
                Err(e) => {
                    let expired = matches!(&e, Error::Reporting { failure, .. }
                        if failure.has_code("EXPIRED_PAGE_TOKEN"));
                    let again = (expired && cursor.is_some() && stalled < MAX_STALLED_RESTARTS)
                        .then(|| source.resume(mark.as_ref()))
                        .flatten();
                    let Some(again) = again else {
                        let _ = tx.send(Err(e)).await;
                        return;
                    };
                    stalled += 1;
                    source = Arc::new(again);
                    cursor = None;
                    tracing::info!(
                        operation,
                        stalled,
                        "page token expired; the read restarts after the last row it yielded"
                    );
                    continue;
                }
            };
            if let Some(next) = &next
                && let Some(permit) = self.room_now()
            {
                ahead = Some(Ahead::send(permit, source.clone(), next.clone()).await);
            }
            let rows = match source.decode(page) {
                Ok(rows) if rows.len() > self.page_permits() as usize => Err(fail(format!(
                    "the page has {} rows, more than the page size asked for ({})",
                    rows.len(),
                    self.shared.budget.page_rows
                ))),
                other => other,
            };
            let rows = match rows.and_then(|rows| {
                mark = source.mark(&rows, mark.take()).map_err(fail)?;
                Ok(rows)
            }) {
                Ok(rows) => rows,
                Err(e) => {
                    let _ = tx.send(Err(e)).await;
                    return;
                }
            };
            if !rows.is_empty() {
                stalled = 0;
            }
            if source.ends_read(&rows) {
                self.shared.ended.store(true, Ordering::Release);
            }
            if !rows.is_empty() && tx.send(Ok(Msg::Rows(rows, room))).await.is_err() {
                return; // the reader is gone
            }
            match next {
                Some(next) => cursor = Some(next),
                None => {
                    drop(fetching);
                    let _ = tx.send(Ok(Msg::Done)).await;
                    return;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests;

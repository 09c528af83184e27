//! The conversion report stream: the date range split into shards, up to `concurrency` shards
//! fetching at once (each page by page with `pageToken`), rows yielded in shard order.
//!
//! **Requests in flight.** A shard counts against `concurrency` while it fetches; once it has its
//! last page it stops counting, and the next shard starts the next time the reader asks for a row,
//! even though the reader has not reached the finished shard yet. So `concurrency` requests are in flight whenever there is room to buffer their rows,
//! which is what hides the latency of a page-by-page read.
//!
//! **Within a shard**, the next page is asked for as soon as an answer's `nextPageToken` is found
//! (read from the page's ends before its rows, [`SearchPage::token_hint`](super::decode::SearchPage::token_hint))
//! and there is room for it without waiting: the service prepares it while this page is decoded,
//! and that answer is read the same way on a task of its own. A page that is not the documented
//! JSON (cut short by a proxy, say) is asked for again like any transient failure; the request
//! its hint sent is dropped, as is one whose hint the decode does not confirm.
//!
//! **Memory.** Rows fetched ahead of the reader are bounded by one budget for the whole report,
//! [`buffer_rows`] (`concurrency × max(SHARD_BUFFER_ROWS, 2 × page_size)`), plus a reserve of two
//! pages that only the front shard (the one being read) may use: a shard takes a page's worth of
//! the budget before it asks for the page and gives it back when the reader takes the page. Shards
//! ahead of the reader wait once the budget is spent; the front shard can always go on with the
//! reserve, so a full budget never stalls the report. At most `buffer_rows + 3 × page_size` rows
//! are held at once (the budget, the reserve, and the page being read). Dropping the stream
//! aborts the tasks.
//!
//! Inside a shard: transient failures (5xx, 429, `RESOURCE_EXHAUSTED` after the error's retry
//! delay, connection failures) are retried by the [`RetryPolicy`](super::super::RetryPolicy); an
//! expired page token restarts the shard's query from the date of the last row yielded, skipping
//! the rows up to and including it (the report's order, SR-9, makes that exact), so every row is
//! yielded exactly once.

use std::collections::VecDeque;
use std::future::Future;
use std::pin::{Pin, pin};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::{Context, Poll};

use chrono::NaiveDate;
use futures::Stream;
use futures::future::{Either, select};
use futures::task::AtomicWaker;
use sa360_reporting_client::types;
use tokio::sync::{OwnedSemaphorePermit, Semaphore, mpsc, watch};
use tokio::task::JoinHandle;

use super::super::call::Calls;
use super::super::conversion::Conversion;
use super::super::error::Error;
use super::super::values::CustomerId;
use super::decode::DecodedRows;
use super::mapping::RowKey;
use super::page_ahead::Ahead;
use super::query::{ReportFilters, conversion_query};
use super::rpc::{OP_SEARCH, map_error};
use super::search_request::{self, SearchError};

/// Rows each shard in flight adds to the report's buffer budget (see [`buffer_rows`]).
pub(crate) const SHARD_BUFFER_ROWS: usize = 20_000;

/// Rows the whole report may fetch ahead of its reader, besides the front shard's reserve of two
/// pages: `concurrency × max(SHARD_BUFFER_ROWS, 2 × page_size)`.
pub(crate) fn buffer_rows(concurrency: usize, page_size: u32) -> usize {
    let page = usize::try_from(page_size).unwrap_or(usize::MAX).max(1);
    concurrency
        .max(1)
        .saturating_mul(SHARD_BUFFER_ROWS.max(page.saturating_mul(2)))
}

/// Consecutive page-token expiries without a new row before a shard gives up.
const MAX_STALLED_RESTARTS: u32 = 8;

/// What every shard task needs.
pub(crate) struct ShardContext {
    pub client: sa360_reporting_client::Client,
    pub calls: Calls,
    pub customer: CustomerId,
    pub login_customer_id: Option<CustomerId>,
    pub page_size: u32,
    pub filters: ReportFilters,
}

/// What the report and its shard tasks share.
struct Shared {
    ctx: ShardContext,
    /// Rows any shard may fetch ahead of the reader ([`buffer_rows`]).
    budget: Arc<Semaphore>,
    /// Two pages only the front shard may use, so the shard being read always goes on.
    reserve: Arc<Semaphore>,
    /// Shards started that have not fetched their last page (or failed) yet.
    fetching: AtomicUsize,
    /// The reader, woken when a shard stops fetching (room to start the next).
    reader: AtomicWaker,
}

/// What a shard task sends: rows (with the budget they hold), or that it finished. A channel
/// that closes without `Done` means the task died (a panic), which the stream reports instead
/// of ending short.
enum Msg {
    Rows(Vec<Conversion>, OwnedSemaphorePermit),
    Done,
}

type Batch = Result<Msg, Error>;

struct Running {
    rx: mpsc::Receiver<Batch>,
    task: JoinHandle<()>,
}

/// The shards of a running report, read in order: the engine of [`ConversionReport`](super::ConversionReport).
/// After an error the stream ends.
pub(crate) struct ReportShards {
    shared: Arc<Shared>,
    pending: VecDeque<(NaiveDate, NaiveDate)>,
    running: VecDeque<Running>,
    /// Index of the next shard to start; shards are numbered in date order from 0.
    next_index: usize,
    /// Index of the shard being read, told to the shard tasks (the front may use the reserve).
    front: watch::Sender<usize>,
    concurrency: usize,
    /// The rows of the page being read.
    ready: std::vec::IntoIter<Conversion>,
    done: bool,
}

impl std::fmt::Debug for ReportShards {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ReportShards")
            .field("customer", &self.shared.ctx.customer)
            .field("shards_pending", &self.pending.len())
            .field("shards_running", &self.running.len())
            .field("done", &self.done)
            .finish_non_exhaustive()
    }
}

impl ReportShards {
    pub(crate) fn new(
        ctx: ShardContext,
        shards: Vec<(NaiveDate, NaiveDate)>,
        concurrency: usize,
    ) -> Self {
        let concurrency = concurrency.max(1);
        let page = usize::try_from(ctx.page_size).unwrap_or(usize::MAX).max(1);
        let shared = Shared {
            budget: Arc::new(Semaphore::new(buffer_rows(concurrency, ctx.page_size))),
            reserve: Arc::new(Semaphore::new(page.saturating_mul(2))),
            fetching: AtomicUsize::new(0),
            reader: AtomicWaker::new(),
            ctx,
        };
        Self {
            shared: Arc::new(shared),
            pending: shards.into(),
            running: VecDeque::new(),
            next_index: 0,
            front: watch::Sender::new(0),
            concurrency,
            ready: Vec::new().into_iter(),
            done: false,
        }
    }

    /// Starts shards in date order while fewer than `concurrency` are fetching, and always one
    /// when none is left to read (a shard's task may still count as fetching for a moment after
    /// the reader took its last message).
    fn start_shards(&mut self) {
        while self.running.is_empty()
            || self.shared.fetching.load(Ordering::Acquire) < self.concurrency
        {
            let Some((start, end)) = self.pending.pop_front() else {
                return;
            };
            // Every batch holds at least one page of budget or reserve, so the channel never
            // fills: a shard waits for budget, not for the reader.
            let page = usize::try_from(self.shared.ctx.page_size)
                .unwrap_or(usize::MAX)
                .max(1);
            let capacity = buffer_rows(self.concurrency, self.shared.ctx.page_size) / page + 3;
            let (tx, rx) = mpsc::channel(capacity);
            self.shared.fetching.fetch_add(1, Ordering::AcqRel);
            let shard = Shard {
                pager: Pager {
                    shared: self.shared.clone(),
                    index: self.next_index,
                    front: self.front.subscribe(),
                },
                tx,
            };
            self.next_index += 1;
            let task = tokio::spawn(shard.run(start, end));
            self.running.push_back(Running { rx, task });
        }
    }

    fn stop(&mut self) {
        self.done = true;
        self.pending.clear();
        for r in self.running.drain(..) {
            r.task.abort();
        }
    }
}

impl Drop for ReportShards {
    fn drop(&mut self) {
        for r in &self.running {
            r.task.abort();
        }
    }
}

impl Stream for ReportShards {
    type Item = Result<Conversion, Error>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = &mut *self;
        loop {
            if !this.done {
                this.start_shards();
            }
            if let Some(c) = this.ready.next() {
                return Poll::Ready(Some(Ok(c)));
            }
            if this.done {
                return Poll::Ready(None);
            }
            // About to wait: registered before the shards are counted again, so a shard that
            // stops fetching after this count still wakes the reader to start the next one.
            this.shared.reader.register(cx.waker());
            this.start_shards();
            let Some(front) = this.running.front_mut() else {
                this.done = true;
                return Poll::Ready(None);
            };
            match front.rx.poll_recv(cx) {
                Poll::Pending => return Poll::Pending,
                // The budget goes back as the rows move to the reader.
                Poll::Ready(Some(Ok(Msg::Rows(batch, _budget)))) => this.ready = batch.into_iter(),
                Poll::Ready(Some(Ok(Msg::Done))) => {
                    this.running.pop_front();
                    this.front.send_modify(|front| *front += 1);
                }
                Poll::Ready(Some(Err(e))) => {
                    this.stop();
                    return Poll::Ready(Some(Err(e)));
                }
                Poll::Ready(None) => {
                    this.stop();
                    return Poll::Ready(Some(Err(Error::unexpected(
                        OP_SEARCH,
                        None,
                        "a report shard stopped before its end (its task panicked)".to_owned(),
                    ))));
                }
            }
        }
    }
}

/// A page read: its rows (or the first row that cannot be a `Conversion`), its next page token,
/// and the request for the next page if it was sent before this page was decoded.
struct Fetched {
    rows: Result<DecodedRows, String>,
    next_page_token: Option<String>,
    ahead: Option<Ahead<Fetched>>,
}

/// What a page request needs: the report, and which shard asks (the front one may use the
/// reserve).
#[derive(Clone)]
struct Pager {
    shared: Arc<Shared>,
    index: usize,
    front: watch::Receiver<usize>,
}

impl Pager {
    /// A page's worth of budget (or of the reserve, for the front shard) if there is one now.
    fn room_now(&self) -> Option<OwnedSemaphorePermit> {
        let rows = self.shared.ctx.page_size.max(1);
        if let Ok(permit) = self.shared.budget.clone().try_acquire_many_owned(rows) {
            return Some(permit);
        }
        if *self.front.borrow() == self.index {
            return self
                .shared
                .reserve
                .clone()
                .try_acquire_many_owned(rows)
                .ok();
        }
        None
    }

    /// One page (with retries, a page that is not the documented JSON included): the answer's
    /// bytes; as soon as its next page token is found ([`SearchPage::token_hint`](super::decode::SearchPage::token_hint)) and there is
    /// room for it without waiting, the request for the next page (which is read the same way,
    /// on a task of its own, started before this page is decoded: [`Ahead`]); then the page
    /// decoded. A next request sent with a hint that the
    /// decode does not confirm is dropped.
    fn fetch(
        self,
        query: Arc<str>,
        page_token: Option<String>,
    ) -> Pin<Box<dyn Future<Output = Result<Fetched, Error>> + Send>> {
        Box::pin(async move {
            let ctx = &self.shared.ctx;
            let capacity = usize::try_from(ctx.page_size).unwrap_or(usize::MAX);
            ctx.calls
                .run(OP_SEARCH, |_| {
                    let (pager, query, page_token) = (&self, &query, page_token.as_deref());
                    async move {
                        let body = types::SearchSearchAds360Request {
                            page_size: std::num::NonZeroU32::new(ctx.page_size.clamp(1, 10_000)),
                            page_token: page_token.map(str::to_owned),
                            query: query.to_string(),
                            return_total_results_count: None,
                            summary_row_setting: None,
                            validate_only: None,
                        };
                        let login = ctx.login_customer_id.as_ref().map(CustomerId::as_str);
                        let page = search_request::search(
                            &ctx.client,
                            ctx.customer.as_str(),
                            login,
                            &body,
                        )
                        .await
                        .map_err(|e| map_error(OP_SEARCH, e))?;
                        let mut ahead = None;
                        if let Some(hint) = page.token_hint()
                            && let Some(room) = pager.room_now()
                        {
                            let next = pager.clone().fetch(query.clone(), Some(hint.to_owned()));
                            ahead = Some((hint.to_owned(), Ahead::send(room, next).await));
                        }
                        let decoded = page.decode(capacity).map_err(|e| {
                            let error = SearchError::InvalidResponsePayload(page.body().clone(), e);
                            map_error(OP_SEARCH, error)
                        })?;
                        if ahead
                            .as_ref()
                            .is_some_and(|(hint, _)| decoded.next_page_token.as_ref() != Some(hint))
                        {
                            ahead = None; // not the page's token: dropped, aborted
                        }
                        Ok(Fetched {
                            rows: decoded.rows,
                            next_page_token: decoded.next_page_token,
                            ahead: ahead.map(|(_, sent)| sent),
                        })
                    }
                })
                .await
        })
    }
}

/// One shard's task: its pages in order, each after taking a page of budget.
struct Shard {
    pager: Pager,
    tx: mpsc::Sender<Batch>,
}

/// Counts a shard out of `fetching` and wakes the reader when the shard's task ends, however it
/// ends (last page, error, reader gone, panic).
struct FetchingGuard(Arc<Shared>);

impl Drop for FetchingGuard {
    fn drop(&mut self) {
        self.0.fetching.fetch_sub(1, Ordering::AcqRel);
        self.0.reader.wake();
    }
}

impl Shard {
    /// A page's worth of budget, or of the reserve once this shard is the front one. `None`
    /// when the report is gone.
    async fn room_for_a_page(&mut self) -> Option<OwnedSemaphorePermit> {
        let shared = &self.pager.shared;
        let rows = shared.ctx.page_size.max(1);
        loop {
            let budget = shared.budget.clone().acquire_many_owned(rows);
            if *self.pager.front.borrow_and_update() == self.pager.index {
                let reserve = shared.reserve.clone().acquire_many_owned(rows);
                return match select(pin!(budget), pin!(reserve)).await {
                    Either::Left((permit, _)) | Either::Right((permit, _)) => permit.ok(),
                };
            }
            match select(pin!(budget), pin!(self.pager.front.changed())).await {
                Either::Left((permit, _)) => return permit.ok(),
                Either::Right((Ok(()), _)) => {} // the front moved: maybe to this shard
                Either::Right((Err(_), _)) => return None, // the report is gone
            }
        }
    }

    async fn run(mut self, start: NaiveDate, end: NaiveDate) {
        let shared = self.pager.shared.clone();
        let fetching = FetchingGuard(shared.clone());
        let ctx = &shared.ctx;
        let mut query: Arc<str> = conversion_query(start, end, &ctx.filters).into();
        let mut token: Option<String> = None;
        let mut last: Option<(RowKey, NaiveDate)> = None;
        let mut skip_through: Option<RowKey> = None;
        let mut stalled = 0;
        let mut ahead: Option<Ahead<Fetched>> = None;
        loop {
            let (room, answer) = match ahead.take() {
                Some(sent) => sent.answer().await,
                None => {
                    let Some(room) = self.room_for_a_page().await else {
                        return;
                    };
                    let page = self.pager.clone().fetch(query.clone(), token.clone());
                    (room, page.await)
                }
            };
            let page = match answer {
                Ok(page) => page,
                Err(Error::Reporting { failure, .. })
                    if failure.has_code("EXPIRED_PAGE_TOKEN")
                        && token.is_some()
                        && stalled < MAX_STALLED_RESTARTS =>
                {
                    stalled += 1;
                    token = None;
                    if let Some((key, date)) = last {
                        query = conversion_query(date, end, &ctx.filters).into();
                        skip_through = Some(key);
                    }
                    tracing::info!(
                        operation = OP_SEARCH,
                        stalled,
                        "page token expired; the shard restarts after the last row it yielded"
                    );
                    continue;
                }
                Err(e) => {
                    let _ = self.tx.send(Err(e)).await;
                    return;
                }
            };
            let Fetched {
                rows,
                next_page_token,
                ahead: next,
            } = page;
            ahead = next;
            let tx = &self.tx;
            let DecodedRows {
                keys,
                conversions: mut batch,
            } = match rows {
                Ok(rows) => rows,
                Err(detail) => {
                    let _ = tx
                        .send(Err(Error::unexpected(OP_SEARCH, Some(200), detail)))
                        .await;
                    return;
                }
            };
            // Rows up to the last one yielded before a restart come first (the report's order):
            // a prefix to drop.
            let mut skipped = 0;
            for &(key, date) in &keys {
                if let Some(skip) = skip_through {
                    if key <= skip {
                        skipped += 1;
                        continue;
                    }
                    skip_through = None;
                }
                if let Some((prev, _)) = last
                    && key <= prev
                {
                    let _ = tx
                        .send(Err(Error::unexpected(
                            OP_SEARCH,
                            Some(200),
                            format!(
                                "rows out of order: conversion {} at {} came after conversion {} at {}",
                                key.1, key.0, prev.1, prev.0
                            ),
                        )))
                        .await;
                    return;
                }
                last = Some((key, date));
                stalled = 0;
            }
            batch.drain(..skipped);
            if !batch.is_empty() && tx.send(Ok(Msg::Rows(batch, room))).await.is_err() {
                return; // the consumer is gone
            }
            match next_page_token {
                Some(t) => token = Some(t),
                None => {
                    // No longer fetching before the reader can see the end of this shard.
                    drop(fetching);
                    let _ = tx.send(Ok(Msg::Done)).await;
                    return;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_budget_is_twenty_thousand_rows_or_two_pages_per_shard_in_flight() {
        assert_eq!(buffer_rows(4, 10_000), 80_000);
        assert_eq!(buffer_rows(4, 1_000), 80_000);
        assert_eq!(buffer_rows(1, 7_000), 20_000);
        assert_eq!(buffer_rows(2, 10_001), 40_004);
        assert_eq!(buffer_rows(0, 0), 20_000);
    }
}

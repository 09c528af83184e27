//! The conversion report stream: the date range split into shards, up to `concurrency` shards
//! fetched at once (each page by page with `pageToken`), rows yielded in shard order.
//!
//! Each shard runs as a task that sends its pages through a bounded channel of
//! [`shard_buffer_pages`] pages (two pages, or as many as hold [`SHARD_BUFFER_ROWS`] rows when
//! pages are smaller), so a shard that is ahead of the consumer waits once its buffer is full:
//! memory stays within `concurrency × (max(2 × page_size, SHARD_BUFFER_ROWS + page_size) +
//! page_size)` rows. The shards behind the one being read keep fetching meanwhile, which is what
//! hides the latency of a page-by-page read. Only the first `concurrency` unfinished shards run;
//! the next one starts when the consumer has read a shard to its end. Dropping the stream aborts
//! the tasks.
//!
//! Inside a shard: transient failures (5xx, 429, `RESOURCE_EXHAUSTED` after the error's retry
//! delay, connection failures) are retried by the [`RetryPolicy`]; an expired page token restarts
//! the shard's query from the date of the last row yielded, skipping the rows up to and including
//! it (the report's order, SR-9, makes that exact), so every row is yielded exactly once.

use std::collections::VecDeque;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use chrono::NaiveDate;
use futures::Stream;
use search_ads_reporting_client::types;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use super::super::call::Calls;
use super::super::conversion::Conversion;
use super::super::error::Error;
use super::super::values::CustomerId;
use super::OP_SEARCH;
use super::mapping::{RowKey, conversion_from_row};
use super::query::{ReportFilters, conversion_query};

/// Rows a shard may fetch ahead of the consumer (rounded up to whole pages, at least two pages).
pub(crate) const SHARD_BUFFER_ROWS: usize = 20_000;

/// Pages a shard may buffer ahead of the consumer for this page size.
pub(crate) fn shard_buffer_pages(page_size: u32) -> usize {
    let page = usize::try_from(page_size).unwrap_or(usize::MAX).max(1);
    SHARD_BUFFER_ROWS.div_ceil(page).max(2)
}

/// Consecutive page-token expiries without a new row before a shard gives up.
const MAX_STALLED_RESTARTS: u32 = 8;

/// What every shard task needs.
pub(crate) struct ShardContext {
    pub client: search_ads_reporting_client::Client,
    pub calls: Calls,
    pub customer: CustomerId,
    pub login_customer_id: Option<CustomerId>,
    pub page_size: u32,
    pub filters: ReportFilters,
}

/// What a shard task sends: rows, or that it finished. A channel that closes without `Done`
/// means the task died (a panic), which the stream reports instead of ending short.
enum Msg {
    Rows(Vec<Conversion>),
    Done,
}

type Batch = Result<Msg, Error>;

struct Running {
    rx: mpsc::Receiver<Batch>,
    task: JoinHandle<()>,
}

/// The conversions of a report, in order (see [`SearchAds::conversion_report`](super::super::SearchAds::conversion_report)).
/// After an error the stream ends.
pub struct ConversionReport {
    ctx: Arc<ShardContext>,
    pending: VecDeque<(NaiveDate, NaiveDate)>,
    running: VecDeque<Running>,
    concurrency: usize,
    ready: VecDeque<Conversion>,
    done: bool,
}

impl std::fmt::Debug for ConversionReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ConversionReport")
            .field("customer", &self.ctx.customer)
            .field("shards_pending", &self.pending.len())
            .field("shards_running", &self.running.len())
            .field("done", &self.done)
            .finish_non_exhaustive()
    }
}

impl ConversionReport {
    pub(crate) fn new(
        ctx: ShardContext,
        shards: Vec<(NaiveDate, NaiveDate)>,
        concurrency: usize,
    ) -> Self {
        Self {
            ctx: Arc::new(ctx),
            pending: shards.into(),
            running: VecDeque::new(),
            concurrency: concurrency.max(1),
            ready: VecDeque::new(),
            done: false,
        }
    }

    fn start_shards(&mut self) {
        while self.running.len() < self.concurrency {
            let Some((start, end)) = self.pending.pop_front() else {
                return;
            };
            let (tx, rx) = mpsc::channel(shard_buffer_pages(self.ctx.page_size));
            let task = tokio::spawn(run_shard(self.ctx.clone(), start, end, tx));
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

impl Drop for ConversionReport {
    fn drop(&mut self) {
        for r in &self.running {
            r.task.abort();
        }
    }
}

impl Stream for ConversionReport {
    type Item = Result<Conversion, Error>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = &mut *self;
        loop {
            if let Some(c) = this.ready.pop_front() {
                return Poll::Ready(Some(Ok(c)));
            }
            if this.done {
                return Poll::Ready(None);
            }
            this.start_shards();
            let Some(front) = this.running.front_mut() else {
                this.done = true;
                return Poll::Ready(None);
            };
            match front.rx.poll_recv(cx) {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(Some(Ok(Msg::Rows(batch)))) => this.ready.extend(batch),
                Poll::Ready(Some(Ok(Msg::Done))) => {
                    this.running.pop_front();
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

/// One search call (with retries).
async fn search_page(
    ctx: &ShardContext,
    query: &str,
    page_token: Option<&str>,
) -> Result<types::SearchSearchAds360Response, Error> {
    ctx.calls
        .run(OP_SEARCH, |_| async move {
            let body = types::SearchSearchAds360Request {
                page_size: std::num::NonZeroU32::new(ctx.page_size.clamp(1, 10_000)),
                page_token: page_token.map(str::to_owned),
                query: query.to_owned(),
                return_total_results_count: None,
                summary_row_setting: None,
                validate_only: None,
            };
            let mut call = ctx
                .client
                .customers_search_ads360_search()
                .customer_id(ctx.customer.as_str().to_owned())
                .body(body);
            if let Some(login) = &ctx.login_customer_id {
                call = call.login_customer_id(login.as_str().to_owned());
            }
            super::send(OP_SEARCH, call.send()).await
        })
        .await
}

async fn run_shard(
    ctx: Arc<ShardContext>,
    start: NaiveDate,
    end: NaiveDate,
    tx: mpsc::Sender<Batch>,
) {
    let mut query = conversion_query(start, end, &ctx.filters);
    let mut token: Option<String> = None;
    let mut last: Option<(RowKey, NaiveDate)> = None;
    let mut skip_through: Option<RowKey> = None;
    let mut stalled = 0;
    loop {
        let page = match search_page(&ctx, &query, token.as_deref()).await {
            Ok(page) => page,
            Err(Error::Reporting { failure, .. })
                if failure.has_code("EXPIRED_PAGE_TOKEN")
                    && token.is_some()
                    && stalled < MAX_STALLED_RESTARTS =>
            {
                stalled += 1;
                token = None;
                if let Some((key, date)) = last {
                    query = conversion_query(date, end, &ctx.filters);
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
                let _ = tx.send(Err(e)).await;
                return;
            }
        };
        let mut batch = Vec::with_capacity(page.results.len());
        for row in page.results {
            let date = row
                .segments
                .as_ref()
                .and_then(|s| s.date.as_deref())
                .and_then(|d| d.parse::<NaiveDate>().ok());
            let (key, conversion) = match (conversion_from_row(row), date) {
                (Ok(pair), Some(_)) => pair,
                (Err(detail), _) => {
                    let _ = tx
                        .send(Err(Error::unexpected(OP_SEARCH, Some(200), detail)))
                        .await;
                    return;
                }
                (Ok(_), None) => {
                    let _ = tx
                        .send(Err(Error::unexpected(
                            OP_SEARCH,
                            Some(200),
                            "segments.date is missing or not YYYY-MM-DD".to_owned(),
                        )))
                        .await;
                    return;
                }
            };
            if let Some(skip) = skip_through {
                if key <= skip {
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
            last = date.map(|d| (key, d));
            stalled = 0;
            batch.push(conversion);
        }
        if !batch.is_empty() && tx.send(Ok(Msg::Rows(batch))).await.is_err() {
            return; // the consumer is gone
        }
        match page.next_page_token {
            Some(t) if !t.is_empty() => token = Some(t),
            _ => {
                let _ = tx.send(Ok(Msg::Done)).await;
                return;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_shard_buffers_two_pages_or_twenty_thousand_rows() {
        assert_eq!(shard_buffer_pages(10_000), 2);
        assert_eq!(shard_buffer_pages(7_000), 3);
        assert_eq!(shard_buffer_pages(1_000), 20);
        assert_eq!(shard_buffer_pages(1), 20_000);
        assert_eq!(shard_buffer_pages(0), 20_000);
    }
}

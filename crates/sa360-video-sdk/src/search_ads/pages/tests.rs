//! The engine's rules on a source of numbered rows: the memory bound, restart after an expired
//! token (each row exactly once), a page larger than asked for, and drop aborting requests.

use std::sync::atomic::AtomicU64;
use std::time::Duration;

use futures::TryStreamExt;

use super::*;
use crate::search_ads::error::ReportingFailure;

const PAGE: u32 = 10;

/// `pages` pages of `PAGE` rows numbered in order from `first`; the cursor is the page's index.
/// A restarted source (after `EXPIRED_PAGE_TOKEN`, which `expire` pages answer once) starts again
/// at the page of the last row yielded and drops the rows up to it, as the report does.
struct Numbers {
    pages: u32,
    extra_row_on: Option<u32>,
    expire: Arc<std::sync::Mutex<Vec<u32>>>,
    fetched: Arc<AtomicU64>,
    hang_on: Option<u32>,
    in_flight: Arc<AtomicU64>,
    start_page: u32,
    after: Option<u32>,
}

fn numbers(pages: u32) -> Numbers {
    Numbers {
        pages,
        extra_row_on: None,
        expire: Arc::default(),
        fetched: Arc::default(),
        hang_on: None,
        in_flight: Arc::default(),
        start_page: 0,
        after: None,
    }
}

struct InFlight(Arc<AtomicU64>);

impl Drop for InFlight {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

fn expired() -> Error {
    Error::Reporting {
        operation: "test",
        status: 400,
        failure: ReportingFailure {
            rpc_status: None,
            message: "expired".into(),
            errors: vec![crate::search_ads::error::ReportingError {
                kind: "requestError".into(),
                code: "EXPIRED_PAGE_TOKEN".into(),
                message: String::new(),
                trigger: None,
                retry_delay: None,
            }],
            request_id: None,
        },
    }
}

impl PageSource for Numbers {
    type Row = u32;
    type Page = Raw;
    type Mark = u32;

    fn operation(&self) -> &'static str {
        "test"
    }

    fn fetch(self: Arc<Self>, cursor: Option<String>) -> BoxFuture<Result<Fetched<Raw>, Error>> {
        Box::pin(async move {
            let page = cursor.map_or(self.start_page, |c| c.parse().unwrap());
            self.fetched.fetch_add(1, Ordering::SeqCst);
            self.in_flight.fetch_add(1, Ordering::SeqCst);
            let _guard = InFlight(self.in_flight.clone());
            if self.hang_on == Some(page) {
                std::future::pending::<()>().await;
            }
            {
                let mut expire = self.expire.lock().unwrap();
                if let Some(i) = expire.iter().position(|&p| p == page) {
                    expire.remove(i);
                    return Err(expired());
                }
            }
            let extra = u32::from(self.extra_row_on == Some(page));
            let rows: Vec<u32> = (page * PAGE..(page + 1) * PAGE + extra).collect();
            let body = Bytes::from(serde_json::to_vec(&rows).unwrap());
            let next = (page + 1 < self.pages).then(|| (page + 1).to_string());
            Ok(Fetched {
                page: Raw {
                    rows: 0..body.len(),
                    body,
                },
                next,
            })
        })
    }

    fn decode(&self, raw: Raw) -> Result<Vec<u32>, Error> {
        let mut rows: Vec<u32> = serde_json::from_slice(raw.rows()).unwrap();
        rows.retain(|&r| self.after.is_none_or(|a| r > a));
        Ok(rows)
    }

    fn mark(&self, rows: &[u32], prev: Option<u32>) -> Result<Option<u32>, String> {
        Ok(rows.last().copied().or(prev))
    }

    fn resume(&self, after: Option<&u32>) -> Option<Self> {
        Some(Numbers {
            pages: self.pages,
            extra_row_on: self.extra_row_on,
            expire: self.expire.clone(),
            fetched: self.fetched.clone(),
            hang_on: self.hang_on,
            in_flight: self.in_flight.clone(),
            start_page: after.map_or(0, |a| a / PAGE),
            after: after.copied(),
        })
    }
}

fn budget(ahead: usize, lanes: usize) -> Budget {
    Budget {
        page_rows: PAGE,
        ahead,
        lanes,
        ramp: false,
    }
}

async fn settle() {
    tokio::time::sleep(Duration::from_millis(200)).await;
}

#[tokio::test]
async fn a_reader_that_stops_holds_at_most_the_budget() {
    let source = numbers(50);
    let fetched = source.fetched.clone();
    let mut pages = Pages::new("test", [source], budget(3, 1));
    assert_eq!(pages.try_next().await.unwrap(), Some(0));
    settle().await;
    // The page being read, and `ahead` pages of one lane.
    assert_eq!(fetched.load(Ordering::SeqCst), 1 + 3);

    let sources: Vec<_> = (0..4).map(|_| numbers(50)).collect();
    let counts: Vec<_> = sources.iter().map(|s| s.fetched.clone()).collect();
    let mut pages = Pages::new("test", sources, budget(2, 3));
    assert_eq!(pages.try_next().await.unwrap(), Some(0));
    settle().await;
    let total: u64 = counts.iter().map(|c| c.load(Ordering::SeqCst)).sum();
    // The page being read, `lanes × ahead` pages and the front's reserve of one.
    assert!(total <= 1 + 3 * 2 + 1, "{total} pages fetched");
    assert!(total >= 3, "{total}: the lanes read ahead");
    let rest: Vec<u32> = pages.try_collect().await.unwrap();
    assert_eq!(rest.len(), 4 * 500 - 1);
}

#[tokio::test]
async fn an_expired_token_restarts_after_the_last_row_and_yields_each_row_once() {
    let source = numbers(10);
    source.expire.lock().unwrap().extend([4, 4, 7]);
    let rows: Vec<u32> = Pages::new("test", [source], budget(2, 1))
        .try_collect()
        .await
        .unwrap();
    assert_eq!(rows, (0..100).collect::<Vec<_>>());
}

#[tokio::test]
async fn a_page_larger_than_asked_for_is_refused() {
    let mut source = numbers(5);
    source.extra_row_on = Some(2);
    let error = Pages::new("test", [source], budget(2, 1))
        .try_collect::<Vec<_>>()
        .await
        .unwrap_err();
    assert!(
        error
            .to_string()
            .contains("more than the page size asked for (10)"),
        "{error}"
    );
}

#[tokio::test]
async fn dropping_the_stream_aborts_every_request() {
    let sources: Vec<_> = (0..3)
        .map(|_| Numbers {
            hang_on: Some(1),
            ..numbers(5)
        })
        .collect();
    let in_flight: Vec<_> = sources.iter().map(|s| s.in_flight.clone()).collect();
    let mut pages = Pages::new("test", sources, budget(2, 3));
    assert_eq!(pages.try_next().await.unwrap(), Some(0));
    settle().await;
    let hanging: u64 = in_flight.iter().map(|c| c.load(Ordering::SeqCst)).sum();
    assert!(hanging >= 1, "requests ahead are in flight");
    drop(pages);
    settle().await;
    let hanging: u64 = in_flight.iter().map(|c| c.load(Ordering::SeqCst)).sum();
    assert_eq!(hanging, 0, "every request was aborted");
}

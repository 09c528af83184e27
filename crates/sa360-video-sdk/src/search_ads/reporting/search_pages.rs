//! The pages of one `searchAds360:search` query, read in order into the caller's row type: the
//! engine of [`SearchStream`](super::SearchStream).
//!
//! Each page is the generated client's request (`search_request.rs`), with its hooks, body
//! limits and the client's retries (`Calls::run`: transient failures, `RESOURCE_EXHAUSTED` after
//! its retry delay, a page that is not the documented JSON). As in the conversion report, the
//! next page is asked for as soon as the answer's `nextPageToken` is found in its first or last
//! bytes ([`SearchPage::token_hint`](super::decode::SearchPage::token_hint)), while this page is
//! decoded, so the service prepares it meanwhile ([`Ahead`], which lets the request leave before
//! the decode starts); one request is in flight at a time.
//!
//! **Memory.** Pages fetched ahead of the reader hold one of `prefetch` permits each, from before
//! their request until the reader takes their rows; the request ahead is sent only when a permit
//! is free at once. So at most `prefetch` pages wait for the reader, besides the page it reads.
//! Dropping the stream aborts the task and any request ahead.
//!
//! An expired page token fails the stream (`EXPIRED_PAGE_TOKEN`): a query of any resource has no
//! order the facade can resume from exactly (the conversion report restarts from its own order).

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use sa360_reporting_client::types;
use serde::de::{DeserializeOwned, IgnoredAny};
use tokio::sync::{OwnedSemaphorePermit, Semaphore, mpsc};

use super::super::call::Calls;
use super::super::error::Error;
use super::super::values::CustomerId;
use super::decode::SearchPage;
use super::page_ahead::Ahead;
use super::rpc::{OP_SEARCH, map_error};
use super::search_request::{self, SearchError};

/// What every page request of a query needs.
pub(crate) struct PageContext {
    pub client: sa360_reporting_client::Client,
    pub calls: Calls,
    pub customer: CustomerId,
    pub login_customer_id: Option<CustomerId>,
    pub page_size: u32,
    pub query: Arc<str>,
    /// One per page fetched and not yet taken by the reader.
    pub permits: Arc<Semaphore>,
}

/// A page as the serde types see it: the rows in the caller's type and the token.
#[derive(serde::Deserialize)]
struct Page<T> {
    #[serde(default = "Vec::new")]
    results: Vec<T>,
    #[serde(rename = "nextPageToken", default)]
    next_page_token: Option<String>,
}

/// A page's rows, or why they do not fit the caller's type (not retried: the same page would
/// not fit either).
type Rows<T> = Result<Vec<T>, String>;

/// Decodes a page: `Err` when it is not the documented JSON (retried as a transient failure);
/// `Ok((Err(detail), token))` when it is, but a row does not fit `T`.
fn decode<T: DeserializeOwned>(
    page: &SearchPage,
) -> Result<(Rows<T>, Option<String>), serde_json::Error> {
    match serde_json::from_slice::<Page<T>>(page.body()) {
        Ok(page) => Ok((
            Ok(page.results),
            page.next_page_token.filter(|t| !t.is_empty()),
        )),
        Err(row_error) => {
            let envelope: Page<IgnoredAny> = serde_json::from_slice(page.body())?;
            Ok((
                Err(format!(
                    "a row of the page does not fit the row type {}: {row_error}",
                    std::any::type_name::<T>()
                )),
                envelope.next_page_token,
            ))
        }
    }
}

/// A page read, and the request for the next page if it went out early.
struct Fetched<T> {
    rows: Rows<T>,
    next_page_token: Option<String>,
    ahead: Option<Ahead<Fetched<T>>>,
}

type Boxed<T> = Pin<Box<dyn Future<Output = Result<Fetched<T>, Error>> + Send>>;

/// One page with retries; the next page's request sent early when its token is found and a
/// permit is free.
fn fetch<T: DeserializeOwned + Send + 'static>(
    ctx: Arc<PageContext>,
    page_token: Option<String>,
) -> Boxed<T> {
    Box::pin(async move {
        let limit = usize::try_from(ctx.page_size).unwrap_or(usize::MAX);
        ctx.calls
            .run(OP_SEARCH, |_| {
                let (ctx, page_token) = (&ctx, page_token.as_deref());
                async move {
                    let body = types::SearchSearchAds360Request {
                        page_size: std::num::NonZeroU32::new(ctx.page_size),
                        page_token: page_token.map(str::to_owned),
                        query: ctx.query.to_string(),
                        return_total_results_count: None,
                        summary_row_setting: None,
                        validate_only: None,
                    };
                    let login = ctx.login_customer_id.as_ref().map(CustomerId::as_str);
                    let page =
                        search_request::search(&ctx.client, ctx.customer.as_str(), login, &body)
                            .await
                            .map_err(|e| map_error(OP_SEARCH, e))?;
                    let mut ahead = None;
                    if let Some(hint) = page.token_hint()
                        && let Ok(permit) = ctx.permits.clone().try_acquire_owned()
                    {
                        let next = fetch::<T>(ctx.clone(), Some(hint.to_owned()));
                        ahead = Some((hint.to_owned(), Ahead::send(permit, next).await));
                    }
                    let (mut rows, next_page_token) = decode::<T>(&page).map_err(|e| {
                        map_error(
                            OP_SEARCH,
                            SearchError::InvalidResponsePayload(page.body().clone(), e),
                        )
                    })?;
                    if ahead
                        .as_ref()
                        .is_some_and(|(hint, _)| next_page_token.as_ref() != Some(hint))
                    {
                        ahead = None; // not the page's token: dropped, aborted
                    }
                    if let Ok(r) = &rows
                        && r.len() > limit
                    {
                        rows = Err(format!(
                            "the page has {} rows, more than the page size asked for ({limit})",
                            r.len()
                        ));
                    }
                    Ok(Fetched {
                        rows,
                        next_page_token,
                        ahead: ahead.map(|(_, sent)| sent),
                    })
                }
            })
            .await
    })
}

/// What the task sends the stream: a page's rows with their permit, the end, or the error that
/// ends it. A channel that closes without `Done` means the task died (a panic), which the stream
/// reports instead of ending short.
pub(crate) enum Msg<T> {
    Rows(Vec<T>, OwnedSemaphorePermit),
    Done,
}

/// One message of the task.
pub(crate) type Batch<T> = Result<Msg<T>, Error>;

/// Reads every page of the query in order and sends the rows; ends after the last page or the
/// first error (sent), or when the stream is gone.
pub(crate) async fn run<T: DeserializeOwned + Send + 'static>(
    ctx: Arc<PageContext>,
    tx: mpsc::Sender<Batch<T>>,
) {
    let mut token: Option<String> = None;
    let mut ahead: Option<Ahead<Fetched<T>>> = None;
    loop {
        let (permit, answer) = match ahead.take() {
            Some(sent) => sent.answer().await,
            None => {
                let Ok(permit) = ctx.permits.clone().acquire_owned().await else {
                    return;
                };
                (permit, fetch::<T>(ctx.clone(), token.clone()).await)
            }
        };
        let fetched = match answer {
            Ok(fetched) => fetched,
            Err(e) => {
                let _ = tx.send(Err(e)).await;
                return;
            }
        };
        ahead = fetched.ahead;
        let rows = match fetched.rows {
            Ok(rows) => rows,
            Err(detail) => {
                let _ = tx
                    .send(Err(Error::unexpected(OP_SEARCH, Some(200), detail)))
                    .await;
                return;
            }
        };
        if !rows.is_empty() && tx.send(Ok(Msg::Rows(rows, permit))).await.is_err() {
            return; // the stream is gone
        }
        match fetched.next_page_token {
            Some(next) => token = Some(next),
            None => {
                let _ = tx.send(Ok(Msg::Done)).await;
                return;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, serde::Deserialize, PartialEq)]
    struct Row {
        campaign: Campaign,
    }

    #[derive(Debug, serde::Deserialize, PartialEq)]
    struct Campaign {
        id: String,
    }

    fn page(body: &str) -> SearchPage {
        SearchPage::from_bytes(bytes::Bytes::from(body.to_owned()))
    }

    #[test]
    fn a_page_decodes_into_the_callers_type() {
        let (rows, token) = decode::<Row>(&page(
            r#"{"results":[{"campaign":{"id":"1"}},{"campaign":{"id":"2"}}],"nextPageToken":"t","fieldMask":"campaign.id"}"#,
        ))
        .unwrap();
        assert_eq!(rows.unwrap().len(), 2);
        assert_eq!(token.as_deref(), Some("t"));
        let (rows, token) = decode::<Row>(&page(r#"{"fieldMask":"campaign.id"}"#)).unwrap();
        assert!(rows.unwrap().is_empty());
        assert_eq!(token, None);
    }

    #[test]
    fn a_row_that_does_not_fit_is_not_a_broken_page() {
        let (rows, token) = decode::<Row>(&page(
            r#"{"results":[{"adGroup":{"id":"1"}}],"nextPageToken":"t"}"#,
        ))
        .unwrap();
        assert!(rows.unwrap_err().contains("missing field `campaign`"));
        assert_eq!(token.as_deref(), Some("t"));
        assert!(decode::<Row>(&page(r#"{"results":[{"campaign":"#)).is_err());
    }
}

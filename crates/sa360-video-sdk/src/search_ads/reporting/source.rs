//! The Reporting API's page source: one `searchAds360:search` query read page by page with
//! `pageToken` through the [page engine](super::super::pages), each row deserialized into the
//! row type `T` (the caller's, the generated `SearchAds360Row`, or the conversion report's).
//!
//! Each page is the request the generated client makes: the spec's `SearchSearchAds360Request`
//! body, its headers, its `pre` (authorization) and `exec` (tracing span, body size and stall
//! limits of [`HttpOptions`](crate::http::HttpOptions)) hooks, with the client's retries
//! (`Calls::run`: transient failures, `RESOURCE_EXHAUSTED` after its retry delay, a page that is
//! not the documented JSON). Only the 200 answer's body is taken as bytes, read once for its
//! `nextPageToken` (the rows kept as raw JSON, so the next page is asked for before they are
//! decoded), then the rows into `T`. Error answers go through the generated `ErrorResponse`. A
//! test holds the request equal to the generated builder's.

use std::marker::PhantomData;
use std::sync::Arc;

use bytes::Bytes;
use sa360_reporting_client::{ClientInfo, ResponseValue, types};
use sa360_v2_client::__glue::{ClientHooks, OperationInfo};
use serde::de::DeserializeOwned;
use serde_json::value::RawValue;

use super::super::call::Calls;
use super::super::client::SearchAdsClient;
use super::super::error::Error;
use super::super::pages::{BoxFuture, Fetched, PageSource, Raw};
use super::super::values::CustomerId;
use super::rpc::{OP_SEARCH, map_error};

/// The generated client's error type for the search call.
pub(crate) type SearchError = sa360_reporting_client::Error<types::ErrorResponse>;

/// What every page request of a report needs.
#[derive(Clone)]
pub(crate) struct SearchContext {
    pub client: sa360_reporting_client::Client,
    pub calls: Calls,
    pub customer: CustomerId,
    pub login_customer_id: Option<CustomerId>,
    pub page_size: u32,
}

impl SearchContext {
    /// The requests of `client` for `customer`, pages of `page_size` rows.
    pub(crate) fn new(client: &SearchAdsClient, customer: CustomerId, page_size: u32) -> Self {
        let inner = &client.inner;
        Self {
            client: inner.reporting.clone(),
            calls: inner.calls.clone(),
            customer,
            login_customer_id: inner.login_customer_id,
            page_size,
        }
    }
}

/// One query's pages, rows into `T`.
pub(crate) struct SearchSource<T> {
    ctx: Arc<SearchContext>,
    query: Arc<str>,
    /// The columns of `SELECT`, named when a row does not fit `T`.
    columns: Arc<[String]>,
    rows: PhantomData<fn() -> T>,
}

impl<T> SearchSource<T> {
    pub(crate) fn new(ctx: Arc<SearchContext>, query: Arc<str>, columns: Arc<[String]>) -> Self {
        Self {
            ctx,
            query,
            columns,
            rows: PhantomData,
        }
    }
}

/// The top level of a page as read before its rows: where they are, and the token.
#[derive(serde::Deserialize)]
struct Envelope<'a> {
    #[serde(borrow, default)]
    results: Option<&'a RawValue>,
    #[serde(rename = "nextPageToken", default)]
    next_page_token: Option<String>,
}

/// A page's bytes read for its rows and token; `Err` when it is not the documented JSON.
fn envelope(body: Bytes) -> Result<Fetched<Raw>, serde_json::Error> {
    let (rows, next) = {
        let page: Envelope<'_> = serde_json::from_slice(&body)?;
        let rows = page.results.map_or(0..0, |raw| {
            let start = raw.get().as_ptr() as usize - body.as_ptr() as usize;
            start..start + raw.get().len()
        });
        (rows, page.next_page_token.filter(|t| !t.is_empty()))
    };
    Ok(Fetched {
        page: Raw { body, rows },
        next,
    })
}

/// The rows of a page into `T`; a row that does not fit is the caller's type's fault.
pub(crate) fn decode_rows<T: DeserializeOwned>(
    raw: &Raw,
    columns: &[String],
) -> Result<Vec<T>, Error> {
    if raw.rows.is_empty() {
        return Ok(Vec::new());
    }
    serde_json::from_slice(raw.rows()).map_err(|e| Error::RowType {
        row_type: std::any::type_name::<T>(),
        columns: columns.join(", "),
        detail: e.to_string(),
    })
}

impl<T: DeserializeOwned + Send + 'static> PageSource for SearchSource<T> {
    type Row = T;
    type Page = Raw;
    type Mark = ();

    fn operation(&self) -> &'static str {
        OP_SEARCH
    }

    fn fetch(self: Arc<Self>, cursor: Option<String>) -> BoxFuture<Result<Fetched<Raw>, Error>> {
        Box::pin(async move { fetch_page(&self.ctx, &self.query, cursor.as_deref()).await })
    }

    fn decode(&self, raw: Raw) -> Result<Vec<T>, Error> {
        decode_rows(&raw, &self.columns)
    }
}

/// One page of `query` at `page_token`, with retries.
pub(crate) async fn fetch_page(
    ctx: &SearchContext,
    query: &str,
    page_token: Option<&str>,
) -> Result<Fetched<Raw>, Error> {
    ctx.calls
        .run(OP_SEARCH, |_| async move {
            let body = types::SearchSearchAds360Request {
                page_size: std::num::NonZeroU32::new(ctx.page_size),
                page_token: page_token.map(str::to_owned),
                query: query.to_owned(),
                return_total_results_count: None,
                summary_row_setting: None,
                validate_only: None,
            };
            let login = ctx.login_customer_id.as_ref().map(CustomerId::as_str);
            let bytes = search(&ctx.client, ctx.customer.as_str(), login, &body)
                .await
                .map_err(|e| map_error(OP_SEARCH, e))?;
            envelope(bytes.clone())
                .map_err(|e| map_error(OP_SEARCH, SearchError::InvalidResponsePayload(bytes, e)))
        })
        .await
}

/// A `searchAds360:{method}` request as the generated builder makes it (URL, accept, the JSON
/// body, then the spec's headers), authorized by the `pre` hook.
pub(crate) async fn authorized(
    client: &sa360_reporting_client::Client,
    method: &'static str,
    customer: &str,
    login_customer_id: Option<&str>,
    body: &impl serde::Serialize,
) -> Result<(reqwest::Request, OperationInfo), SearchError> {
    // The customer id is digits only (checked before the report starts), so it needs no
    // percent-encoding in the path.
    let url = format!(
        "{}/v0/customers/{customer}/searchAds360:{method}",
        client.baseurl()
    );
    let mut request = client
        .client()
        .post(url)
        .header(reqwest::header::ACCEPT, "application/json")
        .json(body)
        .header("api-version", sa360_reporting_client::Client::api_version());
    if let Some(login) = login_customer_id {
        request = request.header("login-customer-id", login);
    }
    let mut request = request.build()?;
    let info = OperationInfo {
        operation_id: match method {
            "search" => "customers_search_ads360_search",
            _ => "customers_search_ads360_search_stream",
        },
    };
    client
        .pre::<types::ErrorResponse>(&mut request, &info)
        .await?;
    Ok((request, info))
}

/// One `searchAds360:search` call with the generated client's request, hooks and limits; the
/// 200 answer's body comes back as bytes, not yet read.
pub(crate) async fn search(
    client: &sa360_reporting_client::Client,
    customer: &str,
    login_customer_id: Option<&str>,
    body: &types::SearchSearchAds360Request,
) -> Result<Bytes, SearchError> {
    let (request, info) = authorized(client, "search", customer, login_customer_id, body).await?;
    let result = client.exec(request, &info).await;
    client.post::<types::ErrorResponse>(&result, &info).await?;
    let response = result?;
    tracing::Span::current().record("status", response.status().as_u16());
    match response.status().as_u16() {
        200 => {
            let body = response
                .bytes()
                .await
                .map_err(SearchError::ResponseBodyError)?;
            Ok(body)
        }
        400..=599 => Err(SearchError::ErrorResponse(
            ResponseValue::from_response(response).await?,
        )),
        _ => Err(SearchError::UnexpectedResponse(response)),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::search_ads::test_support;

    /// A loopback server answering every request with `head` and `body` (then waiting), and a
    /// client with `limits` on it.
    async fn serve(
        head: String,
        body: Vec<u8>,
        limits: sa360_video_client_support::BodyLimits,
    ) -> sa360_reporting_client::Client {
        let url = test_support::serve_raw(head, body).await;
        let context = sa360_v2_client::ClientContext::new().with_body_limits(limits);
        sa360_reporting_client::Client::new_with_client(&url, reqwest::Client::new(), context)
    }

    fn request() -> types::SearchSearchAds360Request {
        types::SearchSearchAds360Request {
            page_size: None,
            page_token: None,
            query: "SELECT conversion.id FROM conversion".to_owned(),
            return_total_results_count: None,
            summary_row_setting: None,
            validate_only: None,
        }
    }

    /// The page is read through the generated client's `exec` hook, so `max_body_bytes` holds
    /// for the bytes this decoder reads, counted while they arrive.
    #[tokio::test]
    async fn a_page_larger_than_max_body_bytes_is_refused() {
        let body = format!(r#"{{"results": [], "fieldMask": "{}"}}"#, "x".repeat(8192));
        // No Content-Length: the limit counts the bytes as they come.
        let head = "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\nconnection: close\r\n\r\n";
        let limits = sa360_video_client_support::BodyLimits::default().with_max_bytes(4096);
        let client = serve(head.to_owned(), body.into_bytes(), limits).await;
        let error = search(&client, "1234567890", None, &request())
            .await
            .unwrap_err();
        let error = crate::search_ads::reporting::rpc::map_error(
            crate::search_ads::reporting::rpc::OP_SEARCH,
            error,
        );
        assert!(
            matches!(
                &error,
                crate::search_ads::error::Error::Transport(t)
                    if matches!(t.kind, crate::http::TransportErrorKind::TooLarge { limit: 4096, .. })
            ),
            "{error:?}"
        );
    }

    /// ... and so does the stall timeout: a page that stops arriving fails instead of hanging.
    #[tokio::test]
    async fn a_page_that_stalls_fails() {
        let head =
            "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 100000\r\n\r\n";
        let limits = sa360_video_client_support::BodyLimits::default()
            .with_stall_timeout(std::time::Duration::from_millis(300));
        let client = serve(head.to_owned(), br#"{"results": ["#.to_vec(), limits).await;
        let started = std::time::Instant::now();
        let error = search(&client, "1234567890", None, &request())
            .await
            .unwrap_err();
        let error = crate::search_ads::reporting::rpc::map_error(
            crate::search_ads::reporting::rpc::OP_SEARCH,
            error,
        );
        assert!(
            matches!(
                &error,
                crate::search_ads::error::Error::Transport(t)
                    if matches!(t.kind, crate::http::TransportErrorKind::Stalled { .. })
            ),
            "{error:?}"
        );
        assert!(started.elapsed() < std::time::Duration::from_secs(10));
    }

    /// The request of a page is the one the generated builder makes: method, URL, headers
    /// (with and without `login-customer-id`) and body.
    #[tokio::test]
    async fn the_request_is_the_generated_builders() {
        let (recorder, context) = test_support::recorder();
        let client = sa360_reporting_client::Client::new_with_client(
            "http://127.0.0.1:9",
            reqwest::Client::new(),
            context,
        );
        let body: types::SearchSearchAds360Request = serde_json::from_value(json!({
            "query": "SELECT conversion.id FROM conversion WHERE segments.date = '2026-11-01'",
            "pageSize": 10000,
            "pageToken": "t\"é"
        }))
        .unwrap();
        for login in [None, Some("1234567890")] {
            let mut call = client
                .customers_search_ads360_search()
                .customer_id("2000012350")
                .body(body.clone());
            if let Some(login) = login {
                call = call.login_customer_id(login);
            }
            assert!(call.send().await.is_err(), "nothing is sent");
            assert!(search(&client, "2000012350", login, &body).await.is_err());
            let requests = recorder.take();
            assert_eq!(requests.len(), 2, "{requests:?}");
            assert_eq!(requests[1], requests[0], "{login:?}");
        }
    }
}

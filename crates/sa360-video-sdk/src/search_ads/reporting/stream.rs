//! The `searchAds360:searchStream` page source (SR-33): one request and one quota operation for a
//! whole query. Each batch of its answer (a JSON array of response objects) is one page of the
//! [page engine](super::super::pages), split off the body as it arrives by
//! [`batches`](super::batches), so look-ahead and the memory budget hold for batches as for
//! pages. A batch may be as long as [`HttpOptions::max_body_bytes`](crate::http::HttpOptions) (a
//! whole page); the answer as a whole is not bounded by it, since it is never held whole, but the
//! stall timeout holds from the first byte to the last. The request is retried as `search`'s pages
//! are until its answer's status arrives; a failure after that fails the read, which has no cursor
//! to resume from ([`SearchRequest::stream`](super::SearchRequest::stream) pages with `pageToken`
//! where a read must survive one).

use std::marker::PhantomData;
use std::pin::Pin;
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use futures::{Stream, StreamExt};
use sa360_reporting_client::{ClientInfo, ResponseValue, types};
use sa360_v2_client::__glue::ClientHooks;
use serde::de::DeserializeOwned;
use serde_json::value::RawValue;

use super::super::error::Error;
use super::super::pages::{BoxFuture, Fetched, PageSource, Raw};
use super::super::values::CustomerId;
use super::batches::{BatchError, batches};
use super::rpc::map_error;
use super::source::{SearchContext, SearchError, authorized, decode_rows};

pub(crate) const OP_SEARCH_STREAM: &str = "customers.searchAds360.searchStream";

type Body = Pin<Box<dyn Stream<Item = Result<Bytes, BatchError<reqwest::Error>>> + Send>>;

/// The column headers of a report: custom columns, conversion custom metrics and dimensions, raw
/// event conversion metrics and dimensions, as the first batch (or page) names them.
#[derive(Debug, Clone, Default, PartialEq, serde::Deserialize)]
#[serde(rename_all = "camelCase", default)]
#[non_exhaustive]
pub struct ColumnHeaders {
    /// `customColumnHeaders`: the custom columns the query selects, in `custom_columns.id[N]`
    /// order.
    pub custom_column_headers: Vec<ColumnHeader>,
    /// `conversionCustomMetricHeaders`.
    pub conversion_custom_metric_headers: Vec<ColumnHeader>,
    /// `conversionCustomDimensionHeaders`.
    pub conversion_custom_dimension_headers: Vec<ColumnHeader>,
    /// `rawEventConversionMetricHeaders`.
    pub raw_event_conversion_metric_headers: Vec<ColumnHeader>,
    /// `rawEventConversionDimensionHeaders`.
    pub raw_event_conversion_dimension_headers: Vec<ColumnHeader>,
}

/// One column header: the five header lists share this shape (`id`, `name`; custom columns also
/// `referencesMetrics`).
#[derive(Debug, Clone, Default, PartialEq, serde::Deserialize)]
#[serde(rename_all = "camelCase", default)]
#[non_exhaustive]
pub struct ColumnHeader {
    /// `id` (an int64, sent as a string).
    #[serde(with = "super::int64::option")]
    pub id: Option<i64>,
    /// `name`: the name the user gave the column.
    pub name: Option<String>,
    /// `referencesMetrics`: whether a custom column references metrics (custom columns only).
    pub references_metrics: Option<bool>,
}

/// What a batch carries besides rows, read once per batch.
#[derive(serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct Batch<'a> {
    #[serde(borrow, default)]
    results: Option<&'a RawValue>,
    #[serde(borrow, default)]
    summary_row: Option<&'a RawValue>,
    #[serde(flatten)]
    headers: ColumnHeaders,
}

/// The summary row and headers a read found, for the caller once the rows are read.
#[derive(Default)]
pub(crate) struct Extras {
    pub summary_row: Option<Bytes>,
    pub headers: Option<ColumnHeaders>,
}

/// One query read with `searchStream`, rows into `T`.
pub(crate) struct StreamSource<T> {
    ctx: Arc<SearchContext>,
    body: types::SearchSearchAds360StreamRequest,
    columns: Arc<[String]>,
    answer: tokio::sync::Mutex<Option<Body>>,
    pub extras: Arc<Mutex<Extras>>,
    rows: PhantomData<fn() -> T>,
}

impl<T> StreamSource<T> {
    pub(crate) fn new(
        ctx: Arc<SearchContext>,
        body: types::SearchSearchAds360StreamRequest,
        columns: Arc<[String]>,
    ) -> Self {
        Self {
            ctx,
            body,
            columns,
            answer: tokio::sync::Mutex::new(None),
            extras: Arc::default(),
            rows: PhantomData,
        }
    }
}

impl<T: DeserializeOwned + Send + 'static> PageSource for StreamSource<T> {
    type Row = T;
    type Page = Raw;
    type Mark = ();

    fn operation(&self) -> &'static str {
        OP_SEARCH_STREAM
    }

    /// `None` opens the answer and hands out its first batch; a cursor, the next batch of the
    /// same answer (the cursor is only "more may follow": batches come in order).
    fn fetch(self: Arc<Self>, cursor: Option<String>) -> BoxFuture<Result<Fetched<Raw>, Error>> {
        Box::pin(async move {
            let mut answer = self.answer.lock().await;
            if cursor.is_none() {
                *answer = Some(self.open().await?);
            }
            let Some(body) = answer.as_mut() else {
                return Err(Error::unexpected(
                    OP_SEARCH_STREAM,
                    None,
                    "no answer to read",
                ));
            };
            let batch = match body.next().await {
                None => {
                    return Ok(Fetched {
                        page: Raw {
                            body: Bytes::new(),
                            rows: 0..0,
                        },
                        next: None,
                    });
                }
                Some(Ok(batch)) => batch,
                Some(Err(BatchError::Body(e))) => {
                    return Err(map_error(
                        OP_SEARCH_STREAM,
                        SearchError::ResponseBodyError(e),
                    ));
                }
                Some(Err(e)) => {
                    return Err(Error::unexpected(
                        OP_SEARCH_STREAM,
                        Some(200),
                        e.to_string(),
                    ));
                }
            };
            let rows = {
                let read: Batch<'_> = serde_json::from_slice(&batch).map_err(|e| {
                    map_error(
                        OP_SEARCH_STREAM,
                        SearchError::InvalidResponsePayload(batch.clone(), e),
                    )
                })?;
                let mut extras = self.extras.lock().unwrap_or_else(|p| p.into_inner());
                if let Some(summary) = read.summary_row {
                    extras.summary_row = Some(batch.slice_ref(summary.get().as_bytes()));
                }
                extras.headers.get_or_insert(read.headers);
                read.results.map_or(0..0, |raw| {
                    let start = raw.get().as_ptr() as usize - batch.as_ptr() as usize;
                    start..start + raw.get().len()
                })
            };
            Ok(Fetched {
                page: Raw { body: batch, rows },
                next: Some(String::new()),
            })
        })
    }

    fn decode(&self, raw: Raw) -> Result<Vec<T>, Error> {
        decode_rows(&raw, &self.columns)
    }
}

impl<T> StreamSource<T> {
    /// Sends the request, with retries until its answer's status: the answer's batches.
    async fn open(&self) -> Result<Body, Error> {
        let limit = self.ctx.client.inner().body_limits();
        self.ctx
            .calls
            .run(OP_SEARCH_STREAM, |_| async move {
                let response = send(&self.ctx, &self.body)
                    .await
                    .map_err(|e| map_error(OP_SEARCH_STREAM, e))?;
                let batch_limit = usize::try_from(limit.max_bytes).unwrap_or(usize::MAX);
                Ok(Box::pin(batches(response.bytes_stream(), batch_limit)) as Body)
            })
            .await
    }
}

/// One `searchAds360:searchStream` call as the generated client makes it (URL, headers, body,
/// the `pre` hook's authorization), its answer's body limited by the stall timeout only: the
/// batches are bounded one by one.
async fn send(
    ctx: &SearchContext,
    body: &types::SearchSearchAds360StreamRequest,
) -> Result<reqwest::Response, SearchError> {
    let client = &ctx.client;
    let login = ctx.login_customer_id.as_ref().map(CustomerId::as_str);
    let (request, info) =
        authorized(client, "searchStream", ctx.customer.as_str(), login, body).await?;
    let limits = client.inner().body_limits().with_max_bytes(u64::MAX);
    let result = sa360_video_client_support::trace_exec(
        client.client(),
        request,
        sa360_reporting_client::SERVICE,
        info.operation_id,
        limits,
    )
    .await;
    client.post::<types::ErrorResponse>(&result, &info).await?;
    let response = result?;
    match response.status().as_u16() {
        200 => Ok(response),
        // An error answer is read whole, so it keeps the client's size limit.
        400..=599 => Err(SearchError::ErrorResponse(
            ResponseValue::from_response(sa360_video_client_support::limit_body(
                response,
                client.inner().body_limits(),
            ))
            .await?,
        )),
        _ => Err(SearchError::UnexpectedResponse(response)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_batchs_headers_read_into_the_sdks_types() {
        let batch: Batch<'_> = serde_json::from_str(
            r#"{"results": [], "customColumnHeaders": [{"id": "12", "name": "Margin",
                "referencesMetrics": true}], "rawEventConversionDimensionHeaders": [{"id": 7}]}"#,
        )
        .unwrap();
        let custom = &batch.headers.custom_column_headers[0];
        assert_eq!(
            (custom.id, custom.name.as_deref(), custom.references_metrics),
            (Some(12), Some("Margin"), Some(true))
        );
        assert_eq!(
            batch.headers.raw_event_conversion_dimension_headers[0].id,
            Some(7)
        );
        assert!(batch.headers.conversion_custom_metric_headers.is_empty());
    }
}

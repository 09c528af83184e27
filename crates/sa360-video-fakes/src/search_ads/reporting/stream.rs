//! `POST /v0/customers/{customerId}/searchAds360:searchStream`: every row of a query in one
//! answer (<https://developers.google.com/search-ads/reporting/api/reference/rest/v0/customers.searchAds360/searchStream>,
//! DECISIONS SR-33). The request is checked as `search`'s is, with the same faults and the same
//! errors (SR-33 e), and each batch is a page of `search` ([`super::page`]) written without a page
//! token: one engine. The answer is a JSON array of batches (SR-33 a), at most `batchSize` rows
//! each (unset 10 000, the most 10 000, SR-33 b), then with a summary row asked for one batch
//! holding only it (SR-33 c); every batch carries the answer's `requestId` (SR-33 d).
//!
//! The body is written batch by batch as the client reads it: the first batch is computed before
//! the status is sent (so a refusal is an error answer), each later one when the previous has been
//! taken. A batch that fails after the first (the query's rows computed again: it cannot refuse
//! what the first page accepted, but a bound of the fake could) cuts the body short, as a
//! connection lost mid-answer would. A batch costs what the same page of `search` costs: with an
//! ORDER BY, and for the resources whose rows are all computed per page (SR-22 g), each batch
//! computes them again, so a small `batchSize` over a large report of those is slow in the fake.

use axum::body::{Body, Bytes};
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::Response;
use serde_json::{Value, json};

use super::entities::cells::Sums;
use super::failure::Failure;
use super::query::ConversionQuery;
use super::state::{PageToken, ReportingState};
use super::{MAX_PAGE, authorize_customer, checked_query, first_page, page, quota_fault};
use crate::search_ads::ledger::Counters;
use crate::search_ads::state::AppState;
use crate::util::hex_token;

/// Whether and how the summary row is sent (`summaryRowSetting`; another of its values, or none,
/// sends none: "By default, summary row is not returned").
#[derive(Clone, Copy, PartialEq, Eq)]
enum Summary {
    None,
    WithResults,
    Only,
}

/// `POST /v0/customers/{customerId}/searchAds360:searchStream`.
pub(crate) async fn search_stream(
    State(app): State<AppState>,
    Path(customer): Path<String>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let mut batches = match Batches::start(&app, &customer, &headers, &body) {
        Ok(batches) => batches,
        Err(failure) => return failure.into_response(&app),
    };
    // The first batch before the status: a refusal of it is an error answer (SR-33 e).
    let first = match batches.next_chunk() {
        Ok(chunk) => chunk,
        Err(failure) => return failure.into_response(&app),
    };
    let rest = futures::stream::unfold(batches, |mut batches| async move {
        match batches.next_chunk() {
            Ok(Some(chunk)) => Some((Ok::<_, std::io::Error>(Bytes::from(chunk)), batches)),
            Ok(None) => None,
            Err(failure) => {
                tracing::warn!(code = failure.code, "searchStream cut short");
                batches.done = true;
                Some((Err(std::io::Error::other(failure.code)), batches))
            }
        }
    });
    let first = futures::stream::iter(first.map(|c| Ok::<_, std::io::Error>(Bytes::from(c))));
    let body = Body::from_stream(futures::StreamExt::chain(first, rest));
    let mut response = Response::new(body);
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        header::HeaderValue::from_static("application/json"),
    );
    *response.status_mut() = StatusCode::OK;
    response
}

/// The batches of one answer, computed one at a time.
struct Batches {
    app: AppState,
    account: Option<usize>,
    query: ConversionQuery,
    /// The members every batch starts from: `fieldMask`, `requestId`.
    head: Value,
    batch_size: usize,
    summary: Summary,
    /// Where the next page of rows starts; `None` once the rows are all sent.
    next: Option<PageToken>,
    sums: Sums,
    /// Whether a chunk has been written (the next one starts with `,`, the first with `[`).
    started: bool,
    done: bool,
}

impl Batches {
    /// The checks of `search`, in its order, for the members `searchStream` has (SR-33 e).
    fn start(
        app: &AppState,
        customer: &str,
        headers: &HeaderMap,
        body: &[u8],
    ) -> Result<Self, Failure> {
        Counters::bump(&app.shared.counters.reporting_stream_requests);
        let account = authorize_customer(app, customer, headers)?;
        let (request, text, summary) = super::read_request(body)?;
        // An int32 in Google's JSON mapping: a number or a string of one (SR-33 b).
        let size = match request.get("batchSize") {
            None | Some(Value::Null) => Some(0),
            Some(Value::String(n)) => n.parse().ok(),
            Some(v) => v.as_i64().and_then(|n| i32::try_from(n).ok()),
        }
        .ok_or_else(|| super::invalid_payload("Invalid value at 'batch_size' (TYPE_INT32)"))?;
        // "When too large batch is requested, the server may decide to further limit the number
        // of returned rows": more than 10 000 is lowered; 0 (protobuf's unset) or less is the
        // default (SR-33 b).
        let batch_size = usize::try_from(size).map_or(MAX_PAGE, |n| match n {
            0 => MAX_PAGE,
            n => n.min(MAX_PAGE),
        });
        let summary = match summary {
            "SUMMARY_ROW_WITH_RESULTS" => Summary::WithResults,
            "SUMMARY_ROW_ONLY" => Summary::Only,
            _ => Summary::None,
        };
        quota_fault(app)?;
        let query = checked_query(app, account, &text)?;
        let request_id = hex_token(&mut ReportingState::lock(&app.reporting.rng), 8);
        Ok(Self {
            app: app.clone(),
            account,
            head: json!({
                "fieldMask": super::row::field_mask(&query.select),
                "requestId": request_id,
            }),
            next: Some(first_page(app, customer, &text, false)),
            query,
            batch_size,
            summary,
            sums: Sums::default(),
            started: false,
            done: false,
        })
    }

    /// The next piece of the array: `[` or `,` and a batch, or the closing `]`; `None` after it.
    fn next_chunk(&mut self) -> Result<Option<Vec<u8>>, Failure> {
        if self.done {
            return Ok(None);
        }
        let mut chunk = vec![if self.started { b',' } else { b'[' }];
        match self.next_batch()? {
            Some(batch) => chunk.extend_from_slice(&batch),
            None => {
                self.done = true;
                // Every batch has been written: close the array (`[` too if none was).
                chunk = if self.started {
                    b"]".to_vec()
                } else {
                    b"[]".to_vec()
                };
                return Ok(Some(chunk));
            }
        }
        self.started = true;
        Ok(Some(chunk))
    }

    /// The next batch: a page of rows, then the summary row alone (SR-33 c).
    fn next_batch(&mut self) -> Result<Option<Vec<u8>>, Failure> {
        while let Some(state) = self.next.take() {
            let page = page(
                &self.app,
                self.account,
                &self.query,
                state,
                self.batch_size,
                self.head.clone(),
                false,
            )?;
            self.sums.add(page.sums);
            self.next = page.next;
            // An empty result is one batch without `results` (SR-33 e); with the summary row
            // only, pages of rows are summed and not sent.
            if self.summary != Summary::Only {
                return Ok(Some(page.body));
            }
        }
        if self.summary == Summary::None {
            return Ok(None);
        }
        self.summary = Summary::None;
        let mut batch = self.head.clone();
        batch["summaryRow"] = match self.account {
            Some(a) => super::entities::summary_row(&self.app, a, &self.query, self.sums),
            None => json!({}),
        };
        serde_json::to_vec(&batch).map(Some).map_err(|e| {
            Failure::new(
                StatusCode::INTERNAL_SERVER_ERROR,
                "internalError",
                "INTERNAL_ERROR",
                format!("The summary row could not be written: {e}"),
            )
        })
    }
}

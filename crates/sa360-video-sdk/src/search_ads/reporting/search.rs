//! `search`: a report of any resource, the Reporting API's query language through the SDK.
//! The request builder ([`SearchRequest`]), its options ([`SearchOptions`]) and the stream of
//! rows in the caller's type ([`SearchStream`]).

use std::sync::Arc;

use futures::TryStreamExt;
use serde::de::DeserializeOwned;

use super::super::client::SearchAdsClient;
use super::super::error::Error;
use super::super::pages::{Budget, Pages, Paging, Rows, paging_setters};
use super::super::values::CustomerId;
use super::fields::REVISION;
use super::options::MAX_REPORT_PAGE_SIZE;
use super::query::builder::Query;
use super::query::check::{CheckedQuery, UnknownFields, check};
use super::rpc::OP_SEARCH;
use super::rpc::map_error;
use super::source::{SearchContext, SearchSource, search};
use super::stream::{ColumnHeaders, OP_SEARCH_STREAM, StreamSource};
use sa360_reporting_client::types;

/// Most pages `search` holds ahead of the reader ([`SearchOptions::paging`]).
const MAX_LOOK_AHEAD: usize = 16;

/// Most rows [`SearchRequest::send`] may collect ([`SearchOptions::max_rows`]).
pub const MAX_COLLECTED_ROWS: u64 = 10_000_000;

/// Reports of any resource through the Search Ads 360 Reporting API (v0).
impl SearchAdsClient {
    /// A report of any resource: the rows of `query` (text, or built from the typed
    /// [`fields`](super::fields)), each deserialized into the caller's own `serde` type — nested
    /// as the JSON is (`struct Row { campaign: Campaign, metrics: Metrics }`, members in
    /// camelCase, int64 values as strings) — or into the generated client's `SearchAds360Row`.
    ///
    /// The query is checked against the field catalogue before anything is sent: a field not
    /// usable in its clause, or one the `FROM` resource cannot select, is an [`Error::Query`]
    /// with the service's code. A name the catalogue does not have is what
    /// [`SearchOptions::unknown_fields`] says: by default refused as a typo when a catalogued
    /// name is near it (with that name), else sent as it is with a warning, since the service
    /// adds fields after each release of the catalogue (SR-32).
    /// Pages are fetched in order with `pageToken`, the next one asked for while this one is
    /// decoded, with the client's retries and body limits; [`SearchOptions`] bound the rest.
    ///
    /// ```no_run
    /// use futures::TryStreamExt;
    /// use sa360_video_sdk::search_ads::{CustomerId, SearchAdsClient};
    ///
    /// #[derive(serde::Deserialize)]
    /// struct Row {
    ///     campaign: Campaign,
    ///     segments: Segments,
    ///     metrics: Metrics,
    /// }
    /// #[derive(serde::Deserialize)]
    /// struct Campaign {
    ///     id: String,
    ///     name: String,
    /// }
    /// #[derive(serde::Deserialize)]
    /// struct Segments {
    ///     date: String,
    /// }
    /// #[derive(serde::Deserialize)]
    /// #[serde(rename_all = "camelCase")]
    /// struct Metrics {
    ///     #[serde(default)]
    ///     clicks: Option<String>,
    /// }
    ///
    /// # async fn run(client: SearchAdsClient) -> Result<(), sa360_video_sdk::search_ads::Error> {
    /// let mut rows = client
    ///     .search(
    ///         CustomerId::new("2000012350")?,
    ///         "SELECT campaign.id, campaign.name, segments.date, metrics.clicks \
    ///          FROM campaign WHERE segments.date DURING LAST_30_DAYS",
    ///     )
    ///     .page_size(5_000)
    ///     .stream::<Row>();
    /// while let Some(row) = rows.try_next().await? {
    ///     println!("{} {} {} {:?}", row.campaign.id, row.campaign.name, row.segments.date, row.metrics.clicks);
    /// }
    /// # Ok(()) }
    /// ```
    pub fn search(&self, customer: CustomerId, query: impl Into<Query>) -> SearchRequest {
        SearchRequest {
            client: self.clone(),
            customer,
            query: query.into(),
            options: SearchOptions::default(),
        }
    }
}

/// Paging, the bound of [`SearchRequest::send`] and what the check does with names the field
/// catalogue does not have.
///
/// ```
/// use sa360_video_sdk::search_ads::reporting::SearchOptions;
/// let options = SearchOptions::default().page_size(1_000).look_ahead(4);
/// options.validate()?;
/// assert!(SearchOptions::default().look_ahead(0).validate().is_err());
/// # Ok::<(), sa360_video_sdk::search_ads::Error>(())
/// ```
///
/// `#[non_exhaustive]`: build it from [`SearchOptions::default`] and the setters named after the
/// fields; a struct literal does not compile outside this crate.
///
/// ```compile_fail,E0639
/// use sa360_video_sdk::search_ads::reporting::SearchOptions;
/// let options = SearchOptions { max_rows: 5, ..SearchOptions::default() };
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct SearchOptions {
    /// Rows per page (1..=10 000, default 10 000; the batch size of [`SearchRequest::send`]) and
    /// pages held ahead of the reader (1..=16, default 2: the next page is asked for while this
    /// one is decoded). Rows held at once: at most `(look_ahead + 1) × page_size`.
    pub paging: Paging,
    /// Most rows [`SearchRequest::send`] collects, 1..=10 000 000 ([`MAX_COLLECTED_ROWS`]);
    /// more is an error naming this setting (the stream has no such bound). Default 1 000 000.
    pub max_rows: u64,
    /// A name the field catalogue does not have (one newer than its [`REVISION`], or a typo):
    /// by default refused as a typo only when a catalogued name is near it, else sent with a
    /// warning; [`UnknownFields::Send`] sends every one (SR-32).
    pub unknown_fields: UnknownFields,
    /// Whether [`SearchRequest::send`] asks for the summary row (the selected metrics over all
    /// rows). Default [`SummaryRow::None`]; `stream` pages and refuses any other.
    pub summary_row: SummaryRow,
}

/// The summary row of a report (`summaryRowSetting`): the selected metrics over all its rows,
/// sent alone in the last batch of a `searchStream` answer (SR-33).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SummaryRow {
    /// Rows only (`NO_SUMMARY_ROW`).
    #[default]
    None,
    /// The rows, then the summary row (`SUMMARY_ROW_WITH_RESULTS`).
    WithRows,
    /// The summary row only (`SUMMARY_ROW_ONLY`).
    Only,
}

impl SummaryRow {
    fn setting(self) -> types::SummaryRowSetting {
        match self {
            SummaryRow::None => types::SummaryRowSetting::NoSummaryRow,
            SummaryRow::WithRows => types::SummaryRowSetting::SummaryRowWithResults,
            SummaryRow::Only => types::SummaryRowSetting::SummaryRowOnly,
        }
    }
}

/// A whole search report, read by [`SearchRequest::send`] with one `searchStream` request.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct SearchReport<T> {
    /// The rows, in the service's order.
    pub rows: Vec<T>,
    /// The summary row, when [`SearchOptions::summary_row`] asked for it, in the same type (its
    /// members other than `metrics` are absent: make them `Option`s, or read `serde_json::Value`).
    pub summary_row: Option<T>,
    /// The custom-column and conversion-custom headers of the answer.
    pub headers: ColumnHeaders,
}

impl Default for SearchOptions {
    fn default() -> Self {
        Self {
            paging: Paging::new(MAX_REPORT_PAGE_SIZE, 2),
            max_rows: 1_000_000,
            unknown_fields: UnknownFields::default(),
            summary_row: SummaryRow::None,
        }
    }
}

crate::setters::field_setters!(SearchOptions {
    value {
        paging => paging: Paging,
        max_rows => max_rows: u64,
        unknown_fields => unknown_fields: UnknownFields,
        summary_row => summary_row: SummaryRow,
    }
});

impl SearchOptions {
    /// Checks every bound (before any request).
    pub fn validate(&self) -> Result<(), Error> {
        Error::check_range("max_rows", self.max_rows, MAX_COLLECTED_ROWS)?;
        self.paging.check(MAX_REPORT_PAGE_SIZE, MAX_LOOK_AHEAD)
    }

    paging_setters!(paging);
}

/// A report query, configured and not sent yet. Made by [`SearchAdsClient::search`]; nothing is
/// sent before its [`stream`](Self::stream) is polled or [`send`](Self::send) awaited.
#[derive(Debug, Clone)]
#[must_use = "a report does nothing until .stream() is polled or .send() awaited"]
pub struct SearchRequest {
    client: SearchAdsClient,
    customer: CustomerId,
    query: Query,
    options: SearchOptions,
}

impl SearchRequest {
    /// All options at once (replaces what the setters set before).
    pub fn options(mut self, options: SearchOptions) -> Self {
        self.options = options;
        self
    }

    /// Page size and look-ahead; see [`SearchOptions::paging`].
    pub fn paging(mut self, paging: Paging) -> Self {
        self.options = self.options.paging(paging);
        self
    }

    paging_setters!(options.paging);

    /// Most rows [`send`](Self::send) collects (default 1 000 000).
    pub fn max_rows(mut self, max_rows: u64) -> Self {
        self.options = self.options.max_rows(max_rows);
        self
    }

    /// What [`unknown_fields`](SearchOptions::unknown_fields) does with a name the field
    /// catalogue does not have; [`UnknownFields::Send`] sends every one as it is.
    ///
    /// ```
    /// use sa360_video_sdk::search_ads::reporting::UnknownFields;
    /// use sa360_video_sdk::search_ads::{CustomerId, SearchAdsClient, StaticToken};
    /// # fn main() -> Result<(), sa360_video_sdk::search_ads::Error> {
    /// let client = SearchAdsClient::builder(StaticToken::new("token")).build()?;
    /// // Near `metrics.clicks`: refused as a typo by default, sent when asked.
    /// let query = "SELECT campaign.id, metrics.clickz FROM campaign";
    /// let request = client.search(CustomerId::new("2000012350")?, query);
    /// assert!(request.checked_query().is_err());
    /// let checked = request.unknown_fields(UnknownFields::Send).checked_query()?;
    /// assert_eq!(checked.unknown, ["metrics.clickz"]);
    /// # Ok(()) }
    /// ```
    pub fn unknown_fields(mut self, unknown_fields: UnknownFields) -> Self {
        self.options = self.options.unknown_fields(unknown_fields);
        self
    }

    /// Whether [`send`](Self::send) asks for the summary row (default [`SummaryRow::None`]).
    pub fn summary_row(mut self, summary_row: SummaryRow) -> Self {
        self.options = self.options.summary_row(summary_row);
        self
    }

    /// The query as it would be sent, after the checks (options and query): its text, its
    /// columns and the names unknown to the catalogue it sends; nothing is sent.
    pub fn checked_query(&self) -> Result<CheckedQuery, Error> {
        self.options.validate()?;
        check(&self.query, self.options.unknown_fields)
    }

    /// The rows, in the service's order, each deserialized into `T`. Must be polled inside a
    /// Tokio runtime. A refused query or option is the stream's first and only item (nothing is
    /// sent); a row that does not fit `T` ends the stream with an
    /// [`Error::UnexpectedResponse`] naming the type and the member.
    pub fn stream<T: DeserializeOwned + Send + 'static>(self) -> SearchStream<T> {
        if self.options.summary_row != SummaryRow::None {
            return Rows::refused(Error::invalid(
                "summary_row",
                "is read only by .send() (one searchStream request, SR-33): .stream() reads \
                 pages and has no summary row",
            ));
        }
        let (ctx, text, columns, budget) = match self.prepare() {
            Ok(prepared) => prepared,
            Err(error) => return Rows::refused(error),
        };
        let source = SearchSource::new(ctx, text.into(), columns.into());
        Rows::new(Pages::new(OP_SEARCH, [source], budget))
    }

    /// The checked query (warning of names the catalogue does not have), what its requests
    /// need and the budget of its pages.
    fn prepare(&self) -> Result<(Arc<SearchContext>, String, Vec<String>, Budget), Error> {
        let checked = self.checked_query()?;
        if !checked.unknown.is_empty() {
            tracing::warn!(
                fields = %checked.unknown.join(", "),
                catalogue = REVISION,
                "sending names the field catalogue does not have, as they are: the service \
                 judges them"
            );
        }
        let Paging {
            page_size,
            look_ahead,
        } = self.options.paging;
        let ctx = SearchContext::new(&self.client, self.customer, page_size);
        let budget = Budget {
            page_rows: page_size,
            ahead: look_ahead,
            lanes: 1,
            ramp: false,
        };
        Ok((Arc::new(ctx), checked.text, checked.columns, budget))
    }

    /// The whole report with one `searchStream` request (one quota operation, SR-33): its rows
    /// (at most [`SearchOptions::max_rows`]; more is an error naming it), the summary row when
    /// [`SearchOptions::summary_row`] asks for it, and the column headers. Each batch of the
    /// answer is decoded as it arrives, the next read ahead within the page budget
    /// ([`SearchOptions::paging`]: look-ahead batches of `page_size` rows); the answer has no
    /// size limit, each batch has [`HttpOptions::max_body_bytes`](crate::http::HttpOptions).
    /// An answer cut short fails the call (nothing to resume from): [`stream`](Self::stream)
    /// pages with `pageToken` and restarts where a read must survive that.
    pub async fn send<T: DeserializeOwned + Send + 'static>(
        self,
    ) -> Result<SearchReport<T>, Error> {
        let (ctx, text, columns, budget) = self.prepare()?;
        let body = types::SearchSearchAds360StreamRequest {
            query: text,
            batch_size: i32::try_from(budget.page_rows).ok(),
            summary_row_setting: Some(self.options.summary_row.setting()),
        };
        let source = StreamSource::<T>::new(ctx, body, columns.clone().into());
        let extras = source.extras.clone();
        let max = self.options.max_rows;
        let mut stream = Pages::new(OP_SEARCH_STREAM, [source], budget);
        let mut rows = Vec::new();
        while let Some(row) = stream.try_next().await? {
            if rows.len() as u64 >= max {
                return Err(Error::invalid(
                    "max_rows",
                    format!(
                        "is {max}, and the report has more rows: raise it, or read the rows with \
                         .stream()"
                    ),
                ));
            }
            rows.push(row);
        }
        let extras = std::mem::take(&mut *extras.lock().unwrap_or_else(|p| p.into_inner()));
        let summary_row = match extras.summary_row {
            Some(summary) => {
                Some(
                    serde_json::from_slice(&summary).map_err(|e| Error::RowType {
                        row_type: std::any::type_name::<T>(),
                        columns: format!("the summary row of {}", columns.join(", ")),
                        detail: e.to_string(),
                    })?,
                )
            }
            None => None,
        };
        Ok(SearchReport {
            rows,
            summary_row,
            headers: extras.headers.unwrap_or_default(),
        })
    }

    /// Asks the service to check the query without running it (`validateOnly`): `Ok` with the
    /// query as sent when it is valid, else the service's error; no row is read.
    pub async fn validate(self) -> Result<CheckedQuery, Error> {
        let checked = self.checked_query()?;
        let (ctx, ..) = self.prepare()?;
        one_search(&ctx, checked.text.clone(), |body| {
            body.validate_only = Some(true)
        })
        .await?;
        Ok(checked)
    }

    /// How many rows the report has (`returnTotalResultsCount`, ignoring any `LIMIT`), with one
    /// request of one row.
    pub async fn total_results_count(self) -> Result<u64, Error> {
        let (ctx, text, ..) = self.prepare()?;
        let page = one_search(&ctx, text, |body| {
            body.return_total_results_count = Some(true);
            body.page_size = std::num::NonZeroU32::new(1);
        })
        .await?;
        #[derive(serde::Deserialize)]
        struct Count {
            #[serde(rename = "totalResultsCount", default, with = "super::int64::option")]
            total: Option<i64>,
        }
        let count: Count = serde_json::from_slice(&page).map_err(|e| {
            Error::unexpected(
                OP_SEARCH,
                Some(200),
                format!("the answer is not the documented JSON: {e}"),
            )
        })?;
        Ok(count.total.and_then(|n| u64::try_from(n).ok()).unwrap_or(0))
    }
}

/// One `searchAds360:search` request of `query` shaped by `shape`, with retries: its body.
async fn one_search(
    ctx: &SearchContext,
    query: String,
    shape: impl Fn(&mut types::SearchSearchAds360Request),
) -> Result<bytes::Bytes, Error> {
    let mut body = types::SearchSearchAds360Request {
        page_size: None,
        page_token: None,
        query,
        return_total_results_count: None,
        summary_row_setting: None,
        validate_only: None,
    };
    shape(&mut body);
    let login = ctx.login_customer_id.as_ref().map(CustomerId::as_str);
    ctx.calls
        .run(OP_SEARCH, |_| async {
            search(&ctx.client, ctx.customer.as_str(), login, &body)
                .await
                .map_err(|e| map_error(OP_SEARCH, e))
        })
        .await
}

/// The rows of a report query (see [`SearchAdsClient::search`]): the engine's [`Rows`]. After
/// an error the stream ends; dropping it stops its requests.
pub type SearchStream<T> = Rows<T>;

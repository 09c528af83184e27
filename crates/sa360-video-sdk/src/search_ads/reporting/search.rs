//! `search`: a report of any resource, the Reporting API's query language through the facade.
//! The request builder ([`SearchRequest`]), its options ([`SearchOptions`]) and the stream of
//! rows in the caller's type ([`SearchStream`]).

use std::sync::Arc;

use futures::TryStreamExt;
use serde::de::DeserializeOwned;

use super::super::client::SearchAdsClient;
use super::super::error::Error;
use super::super::pages::{Budget, Pages, Rows};
use super::super::values::CustomerId;
use super::fields::REVISION;
use super::options::{MAX_REPORT_PAGE_SIZE, check_page_size};
use super::query::builder::Query;
use super::query::check::{CheckedQuery, UnknownFields, check};
use super::rpc::OP_SEARCH;
use super::source::{SearchContext, SearchSource};

/// Most pages [`SearchOptions::prefetch`] may hold ahead of the reader.
pub const MAX_SEARCH_PREFETCH: usize = 16;

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

/// Page size, prefetch, `login-customer-id`, the bound of [`SearchRequest::send`] and what the
/// check does with names the field catalogue does not have.
///
/// ```
/// use sa360_video_sdk::search_ads::reporting::SearchOptions;
/// let options = SearchOptions::default().page_size(1_000).prefetch(4);
/// options.validate()?;
/// assert!(SearchOptions::default().prefetch(0).validate().is_err());
/// # Ok::<(), sa360_video_sdk::search_ads::Error>(())
/// ```
///
/// `#[non_exhaustive]`: build it from [`SearchOptions::default`] and the setters named after the
/// fields; a struct literal does not compile outside this crate.
///
/// ```compile_fail,E0639
/// use sa360_video_sdk::search_ads::reporting::SearchOptions;
/// let options = SearchOptions { page_size: 5, ..SearchOptions::default() };
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct SearchOptions {
    /// Rows per page, 1..=10 000. Default 10 000.
    pub page_size: u32,
    /// Pages fetched ahead of the reader, 1..=16 ([`MAX_SEARCH_PREFETCH`]). Default 2: the next
    /// page is asked for while this one is decoded (1 asks only once the reader took the page).
    /// Rows held at once: at most `(prefetch + 1) × page_size`.
    pub prefetch: usize,
    /// The manager's id when the customer is a client account reached through a manager (SR-8).
    pub login_customer_id: Option<CustomerId>,
    /// Most rows [`SearchRequest::send`] collects, 1..=10 000 000 ([`MAX_COLLECTED_ROWS`]);
    /// more is an error naming this setting (the stream has no such bound). Default 1 000 000.
    pub max_rows: u64,
    /// A name the field catalogue does not have (one newer than its [`REVISION`], or a typo):
    /// by default refused as a typo only when a catalogued name is near it, else sent with a
    /// warning; [`UnknownFields::Send`] sends every one (SR-32).
    pub unknown_fields: UnknownFields,
}

impl Default for SearchOptions {
    fn default() -> Self {
        Self {
            page_size: MAX_REPORT_PAGE_SIZE,
            prefetch: 2,
            login_customer_id: None,
            max_rows: 1_000_000,
            unknown_fields: UnknownFields::default(),
        }
    }
}

crate::setters::field_setters!(SearchOptions {
    value {
        page_size => page_size: u32,
        prefetch => prefetch: usize,
        max_rows => max_rows: u64,
        unknown_fields => unknown_fields: UnknownFields,
    }
    some {
        login_customer_id => login_customer_id: CustomerId,
    }
});

impl SearchOptions {
    /// Checks every bound (before any request).
    pub fn validate(&self) -> Result<(), Error> {
        check_page_size(self.page_size)?;
        Error::check_range("prefetch", self.prefetch, MAX_SEARCH_PREFETCH)?;
        Error::check_range("max_rows", self.max_rows, MAX_COLLECTED_ROWS)?;
        Ok(())
    }
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

    /// Rows per page, 1..=10 000 (default 10 000).
    pub fn page_size(mut self, page_size: u32) -> Self {
        self.options = self.options.page_size(page_size);
        self
    }

    /// Pages fetched ahead of the reader, 1..=16 (default 2); see [`SearchOptions::prefetch`].
    pub fn prefetch(mut self, prefetch: usize) -> Self {
        self.options = self.options.prefetch(prefetch);
        self
    }

    /// The manager's id (`login-customer-id`) when the customer is reached through a manager.
    pub fn login_customer_id(mut self, manager: CustomerId) -> Self {
        self.options = self.options.login_customer_id(manager);
        self
    }

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
        let (text, columns) = match self.checked_query() {
            Ok(checked) => {
                if !checked.unknown.is_empty() {
                    tracing::warn!(
                        fields = %checked.unknown.join(", "),
                        catalogue = REVISION,
                        "sending names the field catalogue does not have, as they are: the \
                         service judges them"
                    );
                }
                (checked.text, checked.columns)
            }
            Err(error) => return Rows::refused(error),
        };
        let inner = &self.client.inner;
        let ctx = SearchContext {
            client: inner.reporting.clone(),
            calls: inner.calls.clone(),
            customer: self.customer,
            login_customer_id: self.options.login_customer_id,
            page_size: self.options.page_size,
        };
        let source = SearchSource::new(Arc::new(ctx), text.into(), columns.into());
        let budget = Budget {
            page_rows: self.options.page_size,
            ahead: self.options.prefetch,
            lanes: 1,
            ramp: false,
        };
        Rows::new(Pages::new(OP_SEARCH, [source], budget))
    }

    /// Every row, collected: at most [`SearchOptions::max_rows`] (more is an error naming it).
    pub async fn send<T: DeserializeOwned + Send + 'static>(self) -> Result<Vec<T>, Error> {
        let max = self.options.max_rows;
        let mut stream = self.stream::<T>();
        let mut rows = Vec::new();
        while let Some(row) = stream.try_next().await? {
            if rows.len() as u64 >= max {
                return Err(Error::validation(
                    "max_rows",
                    None,
                    format!(
                        "is {max}, and the report has more rows: raise it, or read the rows with \
                         .stream()"
                    ),
                ));
            }
            rows.push(row);
        }
        Ok(rows)
    }
}

/// The rows of a report query (see [`SearchAdsClient::search`]): the engine's [`Rows`]. After
/// an error the stream ends; dropping it stops its requests.
pub type SearchStream<T> = Rows<T>;

//! Search Ads 360 (legacy API v2): authentication, conversion streams, safe
//! batch uploads, availability, the ID-mapping file and saved columns, on top
//! of the generated `search-ads-client`.
//!
//! - **Auth**: a [`TokenSource`] is asked for a bearer token before every
//!   request: [`StaticToken`], or `ServiceAccount` (feature `service-account`; Google's JWT-bearer
//!   grant against the key file's `token_uri`).
//! - **Typed values** ([`values`]): integer ids that travel as strings, dates
//!   as [`chrono::NaiveDate`] (`yyyymmdd` on the wire), timestamps as
//!   [`chrono::DateTime<Utc>`](chrono::DateTime) (epoch milliseconds),
//!   [`Micros`], and open enums that keep unknown server values.
//! - **Reading**: [`SearchAds::list_conversions`] and
//!   [`SearchAds::list_conversions_by_customer`] return a [`ConversionStream`]
//!   that pages with `startRow`/`rowCount`, optionally several pages at once.
//! - **Writing**: [`SearchAds::insert`] and [`SearchAds::update`] take any
//!   iterator (or, `_stream`, any stream) of conversions and return a
//!   [`WriteRequest`] builder: `.options(..)`, `.progress(..)`,
//!   `.resubmission(..)`, then `.send()` for a [`WriteReport`] with one
//!   [`Outcome`] per conversion, or `.stream()` for a [`WriteBatch`] at a time
//!   in input order with bounded memory. Batches go out with bounded
//!   concurrency and retries; a repeated insert never stores twice (see
//!   [`mod@write`]).
//! - **JSON**: [`Conversion`] and [`Availability`] (de)serialize as the API's
//!   resources (field names, digits in strings), so files of conversions read
//!   and write through serde without a mapping of one's own.
//! - **Errors**: one [`Error`]; **tracing**: a `search_ads.request` span per
//!   attempt with `operation`, `attempt`, `status`, `duration_ms` and
//!   `outcome`, never a header or a token.
//!
//! See the crate documentation for a complete example.

mod auth;
mod call;
mod conversion;
mod error;
mod id_mapping;
mod read;
pub mod reporting;
mod retry;
#[cfg(feature = "service-account")]
mod service_account;
pub mod values;
mod wire;
pub mod write;

use std::future::Future;
use std::path::Path;
use std::sync::Arc;

use search_ads_client::{ResponseValue, types};

use crate::http::{BaseUrl, HttpOptions, TimeoutMode, build_client};

pub use auth::{AccessToken, SCOPE, StaticToken, TokenSource};
pub use conversion::{Availability, Conversion, CustomDimension, CustomMetric, SavedColumn};
pub use error::{ConversionIssue, Error, IssueCode};
pub use id_mapping::{
    CHUNKS_IN_FLIGHT, EntityIds, HEADER as ID_MAPPING_HEADER, IdMappingRow, IdMappingStream,
    ProgressFn, ROWS_IN_FLIGHT,
};
pub use read::{
    ConversionStream, DateRange, EngineAccount, ListOptions, MAX_PAGE_SIZE, MAX_PREFETCH,
};
pub use reporting::{
    ConversionReport, ConversionStatus, DEFAULT_REPORTING_BASE_URL, IdLookup, MAX_SHARD_DAYS,
    ReportFilters, ReportOptions, ReportingError, ReportingFailure,
};
pub use retry::RetryPolicy;
#[cfg(feature = "service-account")]
pub use service_account::ServiceAccount;
pub use values::{
    AdGroupId, AdId, AdvertiserId, AgencyId, CampaignId, Channel, Consent, ConversionState,
    ConversionType, CriterionId, CustomerId, DeviceType, DsConversionId, EngineAccountId,
    EntityType, IdParseError, InventoryAccountId, Micros, ProductGroupId, SegmentationId,
    SegmentationType,
};
pub use write::{
    DEFAULT_BATCH_SIZE, InputCheck, MAX_BATCH_SIZE, MAX_CONCURRENCY, MAX_ID_CHARS, MAX_TEXT_CHARS,
    Outcome, WriteBatch, WriteOptions, WriteProgress, WriteProgressFn, WriteReport, WriteRequest,
    WriteStream, WriteStreamStats,
};

use call::Calls;
use wire::{TokenAuthorizer, map_error};
use write::WriteKind;

/// Google's endpoint (SA-1).
pub const DEFAULT_BASE_URL: &str = "https://doubleclicksearch.googleapis.com/doubleclicksearch/v2";

/// The search ads client. Cheap to clone (clones share connections and the
/// token source).
///
/// ```no_run
/// use facade::search_ads::{SearchAds, ServiceAccount};
/// # async fn run() -> Result<(), facade::search_ads::Error> {
/// let client = SearchAds::new(ServiceAccount::from_file("key.json")?)?;
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct SearchAds {
    inner: Arc<Inner>,
}

struct Inner {
    /// Normal calls: connect and total timeouts.
    api: search_ads_client::Client,
    /// The ID-mapping download: connect and read timeouts, no total.
    download: search_ads_client::Client,
    /// The Reporting API (v0): connect and total timeouts.
    reporting: search_ads_reporting_client::Client,
    base: BaseUrl,
    reporting_base: BaseUrl,
    retry: RetryPolicy,
    write: WriteOptions,
    tokens: Arc<dyn TokenSource>,
    /// Deadline, retries and re-authorization of normal calls.
    calls: Calls,
    /// The same for opening the ID-mapping download (its attempts are bounded
    /// by the read timeout, not the total timeout).
    download_calls: Calls,
}

impl std::fmt::Debug for SearchAds {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SearchAds")
            .field("base_url", &self.inner.base)
            .field("reporting_base_url", &self.inner.reporting_base)
            .field("retry", &self.inner.retry)
            .field("write", &self.inner.write)
            .field("tokens", &self.inner.tokens)
            .finish()
    }
}

/// Builds a [`SearchAds`] client.
///
/// ```
/// use std::time::Duration;
/// use facade::http::HttpOptions;
/// use facade::search_ads::{RetryPolicy, SearchAds, StaticToken, WriteOptions};
///
/// let client = SearchAds::builder(StaticToken::new("ya29.token"))
///     .base_url("http://127.0.0.1:8080/doubleclicksearch/v2")?
///     .http_options(HttpOptions { timeout: Duration::from_secs(60), ..HttpOptions::default() })
///     .retry_policy(RetryPolicy { max_attempts: 6, ..RetryPolicy::default() })
///     .write_options(WriteOptions { batch_size: 200, concurrency: 8 })
///     .build()?;
/// assert_eq!(client.base_url().as_str(), "http://127.0.0.1:8080/doubleclicksearch/v2");
/// # Ok::<(), facade::search_ads::Error>(())
/// ```
#[derive(Debug)]
pub struct SearchAdsBuilder {
    tokens: Arc<dyn TokenSource>,
    base: Option<BaseUrl>,
    reporting_base: Option<BaseUrl>,
    http: HttpOptions,
    retry: RetryPolicy,
    write: WriteOptions,
}

impl SearchAdsBuilder {
    /// The API's base URL, up to and including `/doubleclicksearch/v2`.
    /// Default [`DEFAULT_BASE_URL`]. `https://` is required except on loopback.
    pub fn base_url(mut self, url: &str) -> Result<Self, Error> {
        self.base = Some(BaseUrl::parse(url).map_err(|e| Error::Config {
            message: e.to_string(),
        })?);
        Ok(self)
    }

    /// The Search Ads 360 Reporting API's server URL (used by
    /// [`SearchAds::conversion_report`]). Default [`DEFAULT_REPORTING_BASE_URL`].
    /// `https://` is required except on loopback.
    pub fn reporting_base_url(mut self, url: &str) -> Result<Self, Error> {
        self.reporting_base = Some(BaseUrl::parse(url).map_err(|e| Error::Config {
            message: e.to_string(),
        })?);
        Ok(self)
    }

    /// The base URL, already checked.
    pub fn base(mut self, base: BaseUrl) -> Self {
        self.base = Some(base);
        self
    }

    /// Timeouts and user agent.
    pub fn http_options(mut self, options: HttpOptions) -> Self {
        self.http = options;
        self
    }

    /// Retries of transient failures (default: 4 attempts).
    pub fn retry_policy(mut self, policy: RetryPolicy) -> Self {
        self.retry = policy;
        self
    }

    /// Default batching of inserts and updates.
    pub fn write_options(mut self, options: WriteOptions) -> Self {
        self.write = options;
        self
    }

    /// Builds the client.
    pub fn build(self) -> Result<SearchAds, Error> {
        self.retry.validate()?;
        self.write.validate()?;
        let base = match self.base {
            Some(b) => b,
            None => BaseUrl::parse(DEFAULT_BASE_URL).map_err(|e| Error::Config {
                message: e.to_string(),
            })?,
        };
        let reporting_base = match self.reporting_base {
            Some(b) => b,
            None => BaseUrl::parse(DEFAULT_REPORTING_BASE_URL).map_err(|e| Error::Config {
                message: e.to_string(),
            })?,
        };
        let config = |e: reqwest::Error| Error::Config {
            message: format!("the HTTP client could not be built: {e}"),
        };
        let total = build_client(&base, &self.http, TimeoutMode::Total).map_err(config)?;
        let streaming = build_client(&base, &self.http, TimeoutMode::Streaming).map_err(config)?;
        let authorizer: Arc<dyn search_ads_client::AuthorizeRequest> = Arc::new(TokenAuthorizer {
            tokens: self.tokens.clone(),
        });
        let context = search_ads_client::ClientContext::new().with_authorizer(authorizer);
        let reporting_http =
            build_client(&reporting_base, &self.http, TimeoutMode::Total).map_err(config)?;
        let json_limits = self.http.body_limits(TimeoutMode::Total);
        let reporting = search_ads_reporting_client::Client::new_with_client(
            reporting_base.as_str(),
            reporting_http,
            context.clone().with_body_limits(json_limits),
        );
        let api = search_ads_client::Client::new_with_client(
            base.as_str(),
            total,
            context.clone().with_body_limits(json_limits),
        );
        let download = search_ads_client::Client::new_with_client(
            base.as_str(),
            streaming,
            context.with_body_limits(self.http.body_limits(TimeoutMode::Streaming)),
        );
        let calls = Calls::new(
            self.retry.clone(),
            self.tokens.clone(),
            &self.http,
            self.http.timeout,
        );
        let download_calls = Calls::new(
            self.retry.clone(),
            self.tokens.clone(),
            &self.http,
            self.http.read_timeout,
        );
        Ok(SearchAds {
            inner: Arc::new(Inner {
                api,
                download,
                reporting,
                base,
                reporting_base,
                retry: self.retry,
                write: self.write,
                tokens: self.tokens,
                calls,
                download_calls,
            }),
        })
    }
}

const OP_GET: &str = "conversion.get";
const OP_GET_BY_CUSTOMER: &str = "conversion.getByCustomerId";
const OP_AVAILABILITY: &str = "conversion.updateAvailability";
const OP_ID_MAPPING: &str = "reports.getIdMappingFile";
const OP_SAVED_COLUMNS: &str = "savedColumns.list";

/// Awaits one generated call: records the answer's status on the current
/// attempt span and maps a failure to [`Error`].
async fn send<T>(
    operation: &'static str,
    call: impl Future<Output = Result<ResponseValue<T>, wire::ClientError>>,
) -> Result<ResponseValue<T>, Error> {
    match call.await {
        Ok(answer) => {
            tracing::Span::current().record("status", answer.status().as_u16());
            Ok(answer)
        }
        Err(e) => Err(map_error(operation, e)),
    }
}

fn page_from_wire(
    operation: &'static str,
    list: types::ConversionList,
) -> Result<Vec<Conversion>, Error> {
    list.conversion
        .into_iter()
        .map(|w| {
            wire::conversion_from_wire(w).map_err(|d| Error::unexpected(operation, Some(200), d))
        })
        .collect()
}

impl SearchAds {
    /// A client for Google's endpoint with default options.
    pub fn new(tokens: impl TokenSource + 'static) -> Result<Self, Error> {
        Self::builder(tokens).build()
    }

    /// A builder, to set the base URL, timeouts, retries and batching.
    pub fn builder(tokens: impl TokenSource + 'static) -> SearchAdsBuilder {
        Self::builder_shared(Arc::new(tokens))
    }

    /// A builder with a shared token source.
    pub fn builder_shared(tokens: Arc<dyn TokenSource>) -> SearchAdsBuilder {
        SearchAdsBuilder {
            tokens,
            base: None,
            reporting_base: None,
            http: HttpOptions::default(),
            retry: RetryPolicy::default(),
            write: WriteOptions::default(),
        }
    }

    /// The base URL requests go to.
    pub fn base_url(&self) -> &BaseUrl {
        &self.inner.base
    }

    /// The Reporting API's server URL.
    pub fn reporting_base_url(&self) -> &BaseUrl {
        &self.inner.reporting_base
    }

    /// The retry policy.
    pub fn retry_policy(&self) -> &RetryPolicy {
        &self.inner.retry
    }

    /// The default batching of [`insert`](Self::insert) and [`update`](Self::update)
    /// (a request's [`options`](WriteRequest::options) override it).
    pub fn write_options(&self) -> WriteOptions {
        self.inner.write
    }

    /// The conversions of an engine account in a date range, as a stream.
    ///
    /// Bounds are checked before any request ([`DateRange`],
    /// [`ListOptions`]). Each page is retried on transient failures.
    #[deprecated(
        since = "0.1.0",
        note = "Google deprecated conversion.get (removal scheduled for Q3 2025): use \
                SearchAds::conversion_report (a report on the `conversion` resource of the Search \
                Ads 360 Reporting API; IdLookup translates legacy ids); see the crate docs' migration section"
    )]
    pub fn list_conversions(
        &self,
        account: EngineAccount,
        dates: DateRange,
        options: ListOptions,
    ) -> Result<ConversionStream, Error> {
        options.validate(false)?;
        let (start_date, end_date) = dates.wire();
        let (page_size, prefetch) = (options.page_size, options.prefetch);
        Ok(
            self.conversion_stream(OP_GET, page_size, prefetch, move |inner, start_row| {
                let options = options.clone();
                async move {
                    let mut call = inner
                        .api
                        .conversion_get()
                        .agency_id(account.agency_id)
                        .advertiser_id(account.advertiser_id)
                        .engine_account_id(account.engine_account_id)
                        .start_date(start_date)
                        .end_date(end_date)
                        .start_row(start_row)
                        .row_count(options.page_size);
                    if let Some(id) = options.campaign_id {
                        call = call.campaign_id(id);
                    }
                    if let Some(id) = options.ad_group_id {
                        call = call.ad_group_id(id);
                    }
                    if let Some(id) = options.ad_id {
                        call = call.ad_id(id);
                    }
                    if let Some(id) = options.criterion_id {
                        call = call.criterion_id(id);
                    }
                    if let Some(id) = &options.customer_id {
                        call = call.customer_id(id.as_str().to_owned());
                    }
                    call.send().await
                }
            }),
        )
    }

    /// The conversions of a customer of the new Search Ads 360 experience in a
    /// date range, as a stream. Like [`list_conversions`](Self::list_conversions).
    #[deprecated(
        since = "0.1.0",
        note = "Google deprecated conversion.getByCustomerId (removal scheduled for Q3 2025): use \
                SearchAds::conversion_report (a report on the `conversion` resource of the Search \
                Ads 360 Reporting API); see the crate docs' migration section"
    )]
    pub fn list_conversions_by_customer(
        &self,
        customer: CustomerId,
        dates: DateRange,
        options: ListOptions,
    ) -> Result<ConversionStream, Error> {
        options.validate(true)?;
        let (start_date, end_date) = dates.wire();
        let (page_size, prefetch) = (options.page_size, options.prefetch);
        Ok(self.conversion_stream(
            OP_GET_BY_CUSTOMER,
            page_size,
            prefetch,
            move |inner, start_row| {
                let (options, customer) = (options.clone(), customer.clone());
                async move {
                    let mut call = inner
                        .api
                        .conversion_get_by_customer_id()
                        .customer_id(customer.as_str().to_owned())
                        .start_date(start_date)
                        .end_date(end_date)
                        .start_row(start_row)
                        .row_count(options.page_size);
                    if let Some(id) = options.agency_id {
                        call = call.agency_id(id);
                    }
                    if let Some(id) = options.advertiser_id {
                        call = call.advertiser_id(id);
                    }
                    if let Some(id) = options.engine_account_id {
                        call = call.engine_account_id(id);
                    }
                    if let Some(id) = options.campaign_id {
                        call = call.campaign_id(id);
                    }
                    if let Some(id) = options.ad_group_id {
                        call = call.ad_group_id(id);
                    }
                    if let Some(id) = options.ad_id {
                        call = call.ad_id(id);
                    }
                    if let Some(id) = options.criterion_id {
                        call = call.criterion_id(id);
                    }
                    call.send().await
                }
            },
        ))
    }

    /// A stream of pages, each fetched by one `request(inner, start_row)`
    /// per attempt: retries, the status on the span and the wire conversion
    /// are the same for both read methods.
    fn conversion_stream<F, Fut>(
        &self,
        operation: &'static str,
        page_size: u32,
        prefetch: usize,
        request: F,
    ) -> ConversionStream
    where
        F: Fn(Arc<Inner>, u32) -> Fut + Clone + Send + Sync + 'static,
        Fut: Future<Output = Result<ResponseValue<types::ConversionList>, wire::ClientError>>
            + Send
            + 'static,
    {
        let inner = self.inner.clone();
        ConversionStream::new(page_size, prefetch, move |start_row| {
            let (inner, request) = (inner.clone(), request.clone());
            async move {
                let list = inner
                    .calls
                    .run(operation, |_| {
                        let call = request(inner.clone(), start_row);
                        async move { Ok(send(operation, call).await?.into_inner()) }
                    })
                    .await?;
                page_from_wire(operation, list)
            }
        })
    }

    /// An insert of `conversions`: any iterator of [`Conversion`]s or
    /// `&Conversion`s (a `Vec`, a slice, a generator). Configure it and end
    /// with [`send`](WriteRequest::send) (one [`WriteReport`]) or
    /// [`stream`](WriteRequest::stream) (a [`WriteBatch`] at a time, in input
    /// order, bounded memory). Nothing is read or sent before that.
    ///
    /// Each conversion gets exactly one [`Outcome`]. Conversions that an
    /// insert refuses locally (see [`insert_problems`](Self::insert_problems))
    /// are not sent and get [`Outcome::Invalid`]; the others are sent in
    /// batches with the client's [`WriteOptions`] unless
    /// [`options`](WriteRequest::options) says otherwise.
    ///
    /// ```no_run
    /// use facade::search_ads::{Conversion, SearchAds};
    /// # async fn run(client: SearchAds, conversions: Vec<Conversion>) -> Result<(), facade::search_ads::Error> {
    /// let report = client.insert(&conversions).send().await?;
    /// assert_eq!(report.len(), conversions.len());
    /// # Ok(()) }
    /// ```
    pub fn insert<'a, I>(&self, conversions: I) -> WriteRequest<'a>
    where
        I: IntoIterator,
        I::Item: Into<Conversion> + 'a,
        I::IntoIter: Send + 'a,
    {
        let (input, total) = write::from_iter(conversions);
        WriteRequest::new(self, WriteKind::Insert, input, total)
    }

    /// An insert of a [`Stream`](futures::Stream) of conversions (rows parsed
    /// from a file as it is read, say). Like [`insert`](Self::insert); the
    /// stream is polled only as far as the batches in flight need.
    pub fn insert_stream<'a, S>(&self, conversions: S) -> WriteRequest<'a>
    where
        S: futures::Stream + Send + 'a,
        S::Item: Into<Conversion> + 'a,
    {
        WriteRequest::new(
            self,
            WriteKind::Insert,
            write::from_stream(conversions),
            None,
        )
    }

    /// An update of `conversions` (each identified by its owner,
    /// `conversionId` and `conversionTimestamp`, the latter two required).
    /// Like [`insert`](Self::insert).
    pub fn update<'a, I>(&self, conversions: I) -> WriteRequest<'a>
    where
        I: IntoIterator,
        I::Item: Into<Conversion> + 'a,
        I::IntoIter: Send + 'a,
    {
        let (input, total) = write::from_iter(conversions);
        WriteRequest::new(self, WriteKind::Update, input, total)
    }

    /// An update of a [`Stream`](futures::Stream) of conversions. Like
    /// [`insert_stream`](Self::insert_stream).
    pub fn update_stream<'a, S>(&self, conversions: S) -> WriteRequest<'a>
    where
        S: futures::Stream + Send + 'a,
        S::Item: Into<Conversion> + 'a,
    {
        WriteRequest::new(
            self,
            WriteKind::Update,
            write::from_stream(conversions),
            None,
        )
    }

    /// The conversions an [`insert`](Self::insert) would refuse before sending
    /// (and report as [`Outcome::Invalid`]), each as [`Error::Validation`]
    /// naming the field and the input index, in input order: a missing
    /// `conversionId`, `conversionTimestamp` or `segmentationType`, a
    /// timestamp before 1970, a value outside a set the service closes, no
    /// owner (agency and advertiser, customer, or click ID), a control
    /// character or an over-long id or text (SA-22), the same (owner,
    /// conversion id, timestamp) earlier in the input (SA-15, SA-20). Empty
    /// when every conversion would be sent. Nothing is sent.
    ///
    /// ```
    /// use chrono::{TimeZone, Utc};
    /// use facade::search_ads::{Conversion, Error, SearchAds};
    ///
    /// let t = Utc.with_ymd_and_hms(2025, 3, 1, 12, 0, 0).unwrap();
    /// let clicked = Conversion {
    ///     click_id: Some("Cj0KCQiA-example".into()),
    ///     ..Conversion::new("order-1", t)
    /// };
    /// let input = [clicked.clone(), clicked];
    /// let problems = SearchAds::insert_problems(&input);
    /// assert!(matches!(
    ///     &problems[..],
    ///     [Error::Validation { field, index: Some(1), .. }] if field == "conversionId"
    /// ));
    /// ```
    pub fn insert_problems<'a>(
        conversions: impl IntoIterator<Item = &'a Conversion>,
    ) -> Vec<Error> {
        write::input_problems(WriteKind::Insert, conversions)
    }

    /// The conversions an [`update`](Self::update) would refuse before sending.
    /// Like [`insert_problems`](Self::insert_problems), except that
    /// `segmentationType` is not required.
    pub fn update_problems<'a>(
        conversions: impl IntoIterator<Item = &'a Conversion>,
    ) -> Vec<Error> {
        write::input_problems(WriteKind::Update, conversions)
    }

    /// Records that all conversions of each Floodlight activity have been
    /// uploaded up to its timestamp; returns the server's echo. Retried on
    /// transient failures (the call is idempotent).
    pub async fn update_availability(
        &self,
        availabilities: &[Availability],
    ) -> Result<Vec<Availability>, Error> {
        if availabilities.is_empty() {
            return Err(Error::validation(
                "availabilities",
                None,
                "is empty: give at least one availability",
            ));
        }
        for (i, a) in availabilities.iter().enumerate() {
            if a.availability_timestamp.timestamp_millis() < 0 {
                return Err(Error::validation(
                    "availabilityTimestamp",
                    Some(i),
                    "is before 1970-01-01: the API takes epoch milliseconds >= 0",
                ));
            }
        }
        let body = types::UpdateAvailabilityRequest {
            availabilities: availabilities
                .iter()
                .map(wire::availability_to_wire)
                .collect(),
        };
        let api = &self.inner.api;
        let answer = self
            .inner
            .calls
            .run(OP_AVAILABILITY, |_| {
                let body = body.clone();
                async move {
                    let call = api.conversion_update_availability().body(body).send();
                    Ok(send(OP_AVAILABILITY, call).await?.into_inner())
                }
            })
            .await?;
        answer
            .availabilities
            .into_iter()
            .map(|a| {
                wire::availability_from_wire(a)
                    .map_err(|d| Error::unexpected(OP_AVAILABILITY, Some(200), d))
            })
            .collect()
    }

    /// The saved columns of an advertiser.
    pub async fn saved_columns(
        &self,
        agency_id: AgencyId,
        advertiser_id: AdvertiserId,
    ) -> Result<Vec<SavedColumn>, Error> {
        let api = &self.inner.api;
        let list = self
            .inner
            .calls
            .run(OP_SAVED_COLUMNS, |_| async move {
                let call = api
                    .saved_columns_list()
                    .agency_id(agency_id)
                    .advertiser_id(advertiser_id)
                    .send();
                Ok(send(OP_SAVED_COLUMNS, call).await?.into_inner())
            })
            .await?;
        Ok(list
            .items
            .into_iter()
            .map(wire::saved_column_from_wire)
            .collect())
    }

    /// Starts the ID-mapping download (retried until the answer's headers
    /// arrive) and returns its rows as a stream, parsed in constant memory.
    /// `progress` is called with the bytes received so far and the total when
    /// known. A download that ends early ends the stream with
    /// [`Error::TruncatedDownload`]. Poll the stream steadily: back-pressure
    /// reaches the connection, and a consumer that stalls longer than
    /// [`HttpOptions::read_timeout`] ends the download that way too.
    pub async fn id_mapping(
        &self,
        agency_id: AgencyId,
        advertiser_id: AdvertiserId,
        progress: Option<ProgressFn>,
    ) -> Result<IdMappingStream, Error> {
        let opened = self.open_id_mapping(agency_id, advertiser_id).await?;
        Ok(IdMappingStream::spawn(
            opened.body,
            opened.expected,
            progress,
        ))
    }

    /// Downloads the ID-mapping file to `path` (through `<path>.part`, renamed
    /// only once the whole file arrived, see [`PartFile`](crate::fs::PartFile))
    /// and returns its size in bytes.
    ///
    /// A download that breaks off, stalls or loses its connection resumes
    /// where it stopped (`Range` with `If-Range` set to the answer's `ETag`)
    /// when the server announced `Accept-Ranges: bytes` and a strong `ETag`;
    /// otherwise, or when the file changed meanwhile (the server answers the
    /// whole file), it starts over. At most
    /// [`RetryPolicy::max_attempts`] − 1 resumes; a failure removes the
    /// `.part` file.
    pub async fn save_id_mapping(
        &self,
        agency_id: AgencyId,
        advertiser_id: AdvertiserId,
        path: impl AsRef<Path>,
        progress: Option<ProgressFn>,
    ) -> Result<u64, Error> {
        self.download_id_mapping(agency_id, advertiser_id, path.as_ref(), progress)
            .await
    }
}

//! `conversion_report`: the request builder of a conversion report and its checks.

use std::sync::Arc;

use chrono::{NaiveDate, Utc};
use futures::TryStreamExt;

use super::super::client::SearchAdsClient;
use super::super::conversion::Conversion;
use super::super::date_range::DateRange;
use super::super::error::Error;
use super::super::pages::{Budget, Pages, Paging, Rows, paging_setters};
use super::super::values::CustomerId;
use super::options::ReportOptions;
use super::query::filters::ReportFilters;
use super::report::ConversionShard;
use super::rpc::OP_SEARCH;
use super::source::SearchContext;
use super::window::{check_window, shards};

/// Conversion reads through the Search Ads 360 Reporting API (v0).
impl SearchAdsClient {
    /// The conversions of a customer in a date range, from a report on the `conversion`
    /// resource of the Search Ads 360 Reporting API: the replacement of
    /// [`list_conversions`](Self::list_conversions), yielding the same
    /// [`Conversion`](crate::search_ads::Conversion) type (mapping in
    /// [`mapping`](super::mapping)). Paging, sharding and filters are setters of the
    /// [`ConversionReportRequest`]; its [`stream`](ConversionReportRequest::stream) yields the rows
    /// (the manager a client account is reached through is the client's
    /// [`login_customer_id`](crate::search_ads::SearchAdsClientBuilder::login_customer_id)).
    ///
    /// ```no_run
    /// use futures::TryStreamExt;
    /// use sa360_video_sdk::search_ads::reporting::ReportFilters;
    /// use sa360_video_sdk::search_ads::{CampaignId, CustomerId, DateRange, SearchAdsClient};
    /// # async fn run(client: SearchAdsClient, dates: DateRange) -> Result<(), sa360_video_sdk::search_ads::Error> {
    /// let mut report = client
    ///     .conversion_report(CustomerId::new("2000012350")?, dates)
    ///     .page_size(5_000)
    ///     .look_ahead(4)
    ///     .shard_days(7)
    ///     .filters(ReportFilters::default().campaign_ids([CampaignId::new(10_000_000_123)]))
    ///     .stream();
    /// while let Some(conversion) = report.try_next().await? {
    ///     println!("{:?}", conversion.conversion_id);
    /// }
    /// # Ok(()) }
    /// ```
    pub fn conversion_report(
        &self,
        customer: CustomerId,
        dates: DateRange,
    ) -> ConversionReportRequest {
        ConversionReportRequest {
            client: self.clone(),
            customer,
            dates,
            options: ReportOptions::default(),
            today: None,
        }
    }
}

/// A conversion report, configured and not sent yet. Made by
/// [`SearchAdsClient::conversion_report`]; nothing is sent before its
/// [`stream`](Self::stream) is polled.
#[derive(Debug, Clone)]
#[must_use = "a report does nothing until its .stream() is polled"]
pub struct ConversionReportRequest {
    client: SearchAdsClient,
    customer: CustomerId,
    dates: DateRange,
    options: ReportOptions,
    /// The date the 60-day window is checked against (default: today on the system clock, UTC).
    today: Option<NaiveDate>,
}

impl ConversionReportRequest {
    /// All options at once (replaces what the setters set before).
    pub fn options(mut self, options: ReportOptions) -> Self {
        self.options = options;
        self
    }

    /// Page size and shards in flight; see [`ReportOptions::paging`].
    pub fn paging(mut self, paging: Paging) -> Self {
        self.options = self.options.paging(paging);
        self
    }

    paging_setters!(options.paging);

    /// Days per shard, 1..=30 (default 7); see [`ReportOptions::shard_days`].
    pub fn shard_days(mut self, shard_days: u32) -> Self {
        self.options = self.options.shard_days(shard_days);
        self
    }

    /// Which conversions (campaigns, ad groups, statuses, ...).
    pub fn filters(mut self, filters: ReportFilters) -> Self {
        self.options = self.options.filters(filters);
        self
    }

    /// Checks the 60-day window against `today` instead of the system clock (UTC): a test
    /// seam for fakes whose data is pinned to a date. Feature `test-util`.
    #[cfg(feature = "test-util")]
    #[cfg_attr(docsrs, doc(cfg(feature = "test-util")))]
    pub fn today(mut self, today: NaiveDate) -> Self {
        self.today = Some(today);
        self
    }

    /// The conversions, in the order of conversion time then `conversion.id`, each exactly
    /// once, also across expired page tokens and retried quota errors (see
    /// [`ConversionReport`]). Must be polled inside a Tokio runtime.
    ///
    /// Checked before any request: the options ([`ReportOptions::validate`]), the customer id
    /// (digits) and the 60-day window on today's date (UTC). A refusal is the stream's first
    /// and only item.
    pub fn stream(self) -> ConversionReport {
        let today = self.today.unwrap_or_else(|| {
            chrono::DateTime::<Utc>::from(std::time::SystemTime::now()).date_naive()
        });
        if let Err(error) = self.check(today) {
            return Rows::refused(error);
        }
        let Self {
            client,
            customer,
            dates,
            options,
            ..
        } = self;
        let Paging {
            page_size,
            look_ahead,
        } = options.paging;
        let ctx = Arc::new(SearchContext::new(&client, customer, page_size));
        let filters = Arc::new(options.filters);
        let shards = shards(dates, options.shard_days)
            .into_iter()
            .map(|days| ConversionShard::new(ctx.clone(), days, filters.clone()));
        let budget = Budget {
            page_rows: page_size,
            ahead: (SHARD_BUFFER_ROWS / usize::try_from(page_size).unwrap_or(1).max(1)).max(2),
            lanes: look_ahead,
            ramp: false,
        };
        Rows::new(
            Pages::new(OP_SEARCH, shards.collect::<Vec<_>>(), budget).map_ok(|row| row.conversion),
        )
    }

    fn check(&self, today: NaiveDate) -> Result<(), Error> {
        self.options.validate()?;
        check_window(self.dates, today)
    }
}

/// Rows each shard in flight may hold ahead of the reader (at least two pages):
/// [`ReportOptions::paging`].
pub(crate) const SHARD_BUFFER_ROWS: usize = 20_000;

/// The conversions of a report, in order (see [`SearchAdsClient::conversion_report`]).
/// After an error the stream ends; dropping it stops the shards' requests.
pub type ConversionReport = Rows<Conversion>;

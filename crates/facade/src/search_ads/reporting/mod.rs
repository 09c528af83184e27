//! Conversion reads that survive the v2 shutdown: reports on the `conversion` resource of the
//! Search Ads 360 Reporting API (v0), yielding the same typed [`Conversion`]s as
//! [`SearchAdsClient::list_conversions`](super::SearchAdsClient::list_conversions).
//!
//! - [`SearchAdsClient::conversion_report`](super::SearchAdsClient::conversion_report): a typed query
//!   ([`ReportFilters`], never spliced text), paged with `pageToken`, split by date into shards
//!   fetched concurrently and yielded in order ([`ConversionReport`]).
//! - [`ReportOptions`]: page size 1..=10 000, shard length, shards in flight, `login-customer-id`.
//! - The 60-day window of event-level data is checked before sending.
//! - `RESOURCE_EXHAUSTED` is retried after the error's `retryDelay`; every failure is an
//!   [`Error::Reporting`] with the typed [`ReportingFailure`].
//! - [`IdLookup`]: legacy ids → new ids from the ID-mapping file.
//! - The field-by-field mapping to [`Conversion`] is documented in [`mapping`].

mod decode;
mod failure;
mod ids;
pub mod mapping;
mod query;
mod stream;

use std::future::Future;

use chrono::{Days, NaiveDate, Utc};
use search_ads_reporting_client::{ResponseValue, types};

use super::conversion::Conversion;
use super::error::Error;
use super::read::DateRange;
use super::values::CustomerId;
use super::wire;

pub(crate) use failure::reporting_message;
pub use failure::{ReportingError, ReportingFailure, parse_google_duration};
pub use ids::IdLookup;
pub use query::{
    ConversionStatus, MAX_FILTER_TEXT, MAX_FILTER_VALUES, ReportFilters, SELECTED_FIELDS,
    conversion_query, quote,
};
pub use stream::ConversionReport;
pub(crate) use stream::ShardContext;

/// Google's Reporting API endpoint (SR-1).
pub const DEFAULT_REPORTING_BASE_URL: &str = "https://searchads360.googleapis.com";

/// Largest `pageSize` the Reporting API serves.
pub const MAX_REPORT_PAGE_SIZE: u32 = 10_000;

/// Most days one shard (one query) may span: the query selects `segments.date`, and a query
/// segmented by date must restrict it to fewer than 31 days (`DATE_RANGE_TOO_WIDE`, SR-13).
pub const MAX_SHARD_DAYS: u32 = 30;

/// Most shards fetched at once.
pub const MAX_SHARDS_IN_FLIGHT: usize = 16;

/// Days of event-level conversion data the Reporting API keeps, today included (SR-11).
pub const CONVERSION_WINDOW_DAYS: u64 = 60;

pub(crate) const OP_SEARCH: &str = "customers.searchAds360.search";
pub(crate) const OP_LIST_CUSTOMERS: &str = "customers.listAccessibleCustomers";

/// Page size, sharding, filters and `login-customer-id` of a conversion report.
///
/// ```
/// use facade::search_ads::{CampaignId, ConversionStatus, CustomerId, ReportFilters, ReportOptions};
/// let options = ReportOptions::default()
///     .with_page_size(5_000)
///     .with_shard_days(7)
///     .with_concurrency(4)
///     .with_login_customer_id(CustomerId::new("2000012300")?)
///     .with_filters(
///         ReportFilters::default()
///             .with_campaign_ids([CampaignId::new(10_000_000_123)])
///             .with_statuses([ConversionStatus::Enabled]),
///     );
/// options.validate()?;
/// assert!(ReportOptions::default().with_page_size(10_001).validate().is_err());
/// # Ok::<(), facade::search_ads::Error>(())
/// ```
///
/// `#[non_exhaustive]`: build it from [`ReportOptions::default`] and the
/// `with_<field>` setters; a struct literal does not compile outside this crate.
///
/// ```compile_fail,E0639
/// use facade::search_ads::ReportOptions;
/// let options = ReportOptions { page_size: 5_000, ..ReportOptions::default() };
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ReportOptions {
    /// Rows per page, 1..=10 000. Default 10 000.
    pub page_size: u32,
    /// Days per shard (each shard is its own query), 1..=30 ([`MAX_SHARD_DAYS`]). Default 7.
    pub shard_days: u32,
    /// Shards fetching at once, 1..=16. Default 4. A shard that has its last page no longer
    /// counts, so this is the number of requests in flight. It also sets how many rows may be
    /// fetched ahead of the reader: `concurrency × 20 000` (at least two pages per shard), plus
    /// two pages the shard being read keeps in reserve. Raise it when round trips dominate (a
    /// distant service, small pages): with 20 ms per answer and pages of 1 000 rows, 8 shards
    /// read 200 000 rows about 4× faster than one page after another (`cargo xtask bench`).
    pub concurrency: usize,
    /// The manager's id (ten digits, no dashes) when the customer is a client account reached
    /// through a manager (SR-8).
    pub login_customer_id: Option<CustomerId>,
    /// Which conversions.
    pub filters: ReportFilters,
}

impl Default for ReportOptions {
    fn default() -> Self {
        Self {
            page_size: MAX_REPORT_PAGE_SIZE,
            shard_days: 7,
            concurrency: 4,
            login_customer_id: None,
            filters: ReportFilters::default(),
        }
    }
}

crate::setters::with_setters!(ReportOptions {
    value {
        with_page_size => page_size: u32,
        with_shard_days => shard_days: u32,
        with_concurrency => concurrency: usize,
        with_filters => filters: ReportFilters,
    }
    some {
        with_login_customer_id => login_customer_id: CustomerId,
    }
});

impl ReportOptions {
    /// Checks every bound (before any request).
    pub fn validate(&self) -> Result<(), Error> {
        if !(1..=MAX_REPORT_PAGE_SIZE).contains(&self.page_size) {
            return Err(Error::validation(
                "page_size",
                None,
                format!("is {}, outside 1..={MAX_REPORT_PAGE_SIZE}", self.page_size),
            ));
        }
        if !(1..=MAX_SHARD_DAYS).contains(&self.shard_days) {
            return Err(Error::validation(
                "shard_days",
                None,
                format!(
                    "is {}, outside 1..={MAX_SHARD_DAYS} (a query segmented by date must span \
                     fewer than 31 days)",
                    self.shard_days
                ),
            ));
        }
        if !(1..=MAX_SHARDS_IN_FLIGHT).contains(&self.concurrency) {
            return Err(Error::validation(
                "concurrency",
                None,
                format!(
                    "is {}, outside 1..={MAX_SHARDS_IN_FLIGHT}",
                    self.concurrency
                ),
            ));
        }
        if let Some(login) = &self.login_customer_id {
            check_customer_digits("login_customer_id", login)?;
        }
        self.filters.validate()
    }
}

/// Reporting API customer ids are digits only (the UI shows `123-456-7890`; the API wants
/// `1234567890`).
pub(crate) fn check_customer_digits(field: &str, id: &CustomerId) -> Result<(), Error> {
    let s = id.as_str();
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) || s.len() > 20 {
        let digits: String = s.chars().filter(char::is_ascii_digit).collect();
        return Err(Error::validation(
            field,
            None,
            format!(
                "is {s:?}; the Reporting API takes the digits only{}",
                if digits.is_empty() {
                    String::new()
                } else {
                    format!(", e.g. {digits:?}")
                }
            ),
        ));
    }
    Ok(())
}

/// The first date of the 60-day window on `today` (UTC).
pub fn window_start(today: NaiveDate) -> NaiveDate {
    today
        .checked_sub_days(Days::new(CONVERSION_WINDOW_DAYS - 1))
        .unwrap_or(today)
}

/// Checks that `dates` lies in the Reporting API's window on `today` (UTC), before sending.
pub fn check_window(dates: DateRange, today: NaiveDate) -> Result<(), Error> {
    let first = window_start(today);
    if dates.start() < first {
        return Err(Error::validation(
            "startDate",
            None,
            format!(
                "is {}, outside the Reporting API's {CONVERSION_WINDOW_DAYS}-day window for \
                 conversions: the earliest date it serves today ({today}, UTC) is {first}. \
                 Start at {first} or later",
                dates.start()
            ),
        ));
    }
    Ok(())
}

/// Splits `dates` into consecutive shards of `days` days.
pub fn shards(dates: DateRange, days: u32) -> Vec<(NaiveDate, NaiveDate)> {
    let mut out = Vec::new();
    let mut start = dates.start();
    loop {
        let end = start
            .checked_add_days(Days::new(u64::from(days.max(1)) - 1))
            .map_or(dates.end(), |e| e.min(dates.end()));
        out.push((start, end));
        match end.succ_opt() {
            Some(next) if end < dates.end() => start = next,
            _ => return out,
        }
    }
}

/// Awaits one generated call and maps a failure to [`Error`].
pub(crate) async fn send<T>(
    operation: &'static str,
    call: impl Future<
        Output = Result<ResponseValue<T>, search_ads_reporting_client::Error<types::ErrorResponse>>,
    >,
) -> Result<T, Error> {
    match call.await {
        Ok(answer) => {
            tracing::Span::current().record("status", answer.status().as_u16());
            Ok(answer.into_inner())
        }
        Err(e) => Err(map_error(operation, e)),
    }
}

/// Maps a generated-client error: the Status body to [`Error::Reporting`], the rest as for v2.
pub(crate) fn map_error(
    operation: &'static str,
    error: search_ads_reporting_client::Error<types::ErrorResponse>,
) -> Error {
    use search_ads_reporting_client::Error as E;
    let v2 = |e: wire::ClientError| wire::map_error(operation, e);
    match error {
        E::ErrorResponse(value) => Error::Reporting {
            operation,
            status: value.status().as_u16(),
            failure: ReportingFailure::from_wire(&value.into_inner()),
        },
        E::CommunicationError(e) => v2(E::CommunicationError(e)),
        E::ResponseBodyError(e) => v2(E::ResponseBodyError(e)),
        E::InvalidUpgrade(e) => v2(E::InvalidUpgrade(e)),
        E::InvalidResponsePayload(b, e) => v2(E::InvalidResponsePayload(b, e)),
        E::UnexpectedResponse(r) => v2(E::UnexpectedResponse(r)),
        E::InvalidRequest(m) => v2(E::InvalidRequest(m)),
        E::Custom(m) => v2(E::Custom(m)),
    }
}

impl super::SearchAdsClient {
    /// The conversions of a customer in a date range, from a report on the `conversion`
    /// resource of the Search Ads 360 Reporting API: the replacement of
    /// [`list_conversions`](Self::list_conversions), yielding the same [`Conversion`] type
    /// (mapping in [`mapping`]).
    ///
    /// Checked before any request: the options ([`ReportOptions::validate`]), the customer id
    /// (digits) and the 60-day window on today's date (UTC). Rows come in the order of
    /// conversion time then `conversion.id`, each exactly once, also across expired page tokens
    /// and retried quota errors (see [`ConversionReport`]). Must be polled inside a Tokio runtime.
    pub fn conversion_report(
        &self,
        customer: CustomerId,
        dates: DateRange,
        options: ReportOptions,
    ) -> Result<ConversionReport, Error> {
        self.conversion_report_on(
            customer,
            dates,
            options,
            chrono::DateTime::<Utc>::from(std::time::SystemTime::now()).date_naive(),
        )
    }

    /// [`conversion_report`](Self::conversion_report) with the window checked against `today`
    /// instead of the system clock (for a service whose clock differs, or for tests).
    pub fn conversion_report_on(
        &self,
        customer: CustomerId,
        dates: DateRange,
        options: ReportOptions,
        today: NaiveDate,
    ) -> Result<ConversionReport, Error> {
        options.validate()?;
        check_customer_digits("customerId", &customer)?;
        check_window(dates, today)?;
        let ctx = ShardContext {
            client: self.inner.reporting.clone(),
            calls: self.inner.calls.clone(),
            customer,
            login_customer_id: options.login_customer_id.clone(),
            page_size: options.page_size,
            filters: options.filters.clone(),
        };
        Ok(ConversionReport::new(
            ctx,
            shards(dates, options.shard_days),
            options.concurrency,
        ))
    }

    /// The customers the caller reaches directly (`customers.listAccessibleCustomers`), as ids.
    pub async fn list_accessible_customers(&self) -> Result<Vec<CustomerId>, Error> {
        let client = &self.inner.reporting;
        let list = self
            .inner
            .calls
            .run(OP_LIST_CUSTOMERS, |_| async move {
                send(
                    OP_LIST_CUSTOMERS,
                    client.customers_list_accessible_customers().send(),
                )
                .await
            })
            .await?;
        list.resource_names
            .iter()
            .map(|name| {
                let id = name.strip_prefix("customers/").ok_or_else(|| {
                    Error::unexpected(
                        OP_LIST_CUSTOMERS,
                        Some(200),
                        format!("resource name {name:?} is not customers/{{id}}"),
                    )
                })?;
                CustomerId::new(id)
                    .map_err(|e| Error::unexpected(OP_LIST_CUSTOMERS, Some(200), e.to_string()))
            })
            .collect()
    }

    /// Downloads the advertiser's ID-mapping file and builds the legacy → new [`IdLookup`].
    pub async fn id_lookup(
        &self,
        agency_id: super::AgencyId,
        advertiser_id: super::AdvertiserId,
    ) -> Result<IdLookup, Error> {
        let rows = self.id_mapping(agency_id, advertiser_id, None).await?;
        IdLookup::from_rows(rows).await
    }
}

/// A report's conversions collected (for tests and small reports).
pub async fn collect(report: ConversionReport) -> Result<Vec<Conversion>, Error> {
    futures::TryStreamExt::try_collect(report).await
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(y: i32, m: u32, day: u32) -> NaiveDate {
        NaiveDate::from_ymd_opt(y, m, day).unwrap()
    }

    #[test]
    fn shards_cover_the_range_once() {
        let range = DateRange::new(d(2026, 1, 1), d(2026, 1, 10)).unwrap();
        assert_eq!(
            shards(range, 4),
            vec![
                (d(2026, 1, 1), d(2026, 1, 4)),
                (d(2026, 1, 5), d(2026, 1, 8)),
                (d(2026, 1, 9), d(2026, 1, 10))
            ]
        );
        assert_eq!(shards(range, 100), vec![(d(2026, 1, 1), d(2026, 1, 10))]);
        let day = DateRange::day(d(2026, 1, 1)).unwrap();
        assert_eq!(shards(day, 1), vec![(d(2026, 1, 1), d(2026, 1, 1))]);
    }

    #[test]
    fn the_window_is_sixty_days_including_today() {
        let today = d(2026, 11, 23);
        assert_eq!(window_start(today), d(2026, 9, 25));
        assert!(check_window(DateRange::new(d(2026, 9, 25), today).unwrap(), today).is_ok());
        let e = check_window(DateRange::new(d(2026, 9, 24), today).unwrap(), today)
            .unwrap_err()
            .to_string();
        assert!(e.contains("startDate") && e.contains("2026-09-25"), "{e}");
    }

    #[test]
    fn customer_ids_must_be_digits() {
        let e = check_customer_digits(
            "login_customer_id",
            &CustomerId::new("123-456-7890").unwrap(),
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("\"1234567890\""), "{e}");
    }
}

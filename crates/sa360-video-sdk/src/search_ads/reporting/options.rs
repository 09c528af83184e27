//! [`ReportOptions`]: the per-call options of a conversion report, and their bounds.

use super::super::error::Error;
use super::super::pages::{Paging, paging_setters};
use super::query::filters::ReportFilters;

/// Largest `pageSize` the Reporting API serves.
pub const MAX_REPORT_PAGE_SIZE: u32 = 10_000;

/// Most days one shard (one query) may span: the query selects `segments.date`, and a query
/// segmented by date must restrict it to fewer than 31 days (`DATE_RANGE_TOO_WIDE`, SR-13).
pub const MAX_SHARD_DAYS: u32 = 30;

/// Most shards in flight ([`ReportOptions::paging`]).
const MAX_SHARDS_IN_FLIGHT: usize = 16;

/// Paging, sharding and filters of a conversion report.
///
/// ```
/// use sa360_video_sdk::search_ads::CampaignId;
/// use sa360_video_sdk::search_ads::reporting::{ConversionStatus, ReportFilters, ReportOptions};
/// let options = ReportOptions::default()
///     .page_size(5_000)
///     .look_ahead(4)
///     .shard_days(7)
///     .filters(
///         ReportFilters::default()
///             .campaign_ids([CampaignId::new(10_000_000_123)])
///             .statuses([ConversionStatus::Enabled]),
///     );
/// options.validate()?;
/// assert!(ReportOptions::default().page_size(10_001).validate().is_err());
/// # Ok::<(), sa360_video_sdk::search_ads::Error>(())
/// ```
///
/// `#[non_exhaustive]`: build it from [`ReportOptions::default`] and the
/// setters named after the fields; a struct literal does not compile outside this crate.
///
/// ```compile_fail,E0639
/// use sa360_video_sdk::search_ads::reporting::ReportOptions;
/// let options = ReportOptions { shard_days: 5, ..ReportOptions::default() };
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ReportOptions {
    /// Rows per page (1..=10 000, default 10 000) and shards fetching at once (1..=16, default
    /// 4). A shard that has its last page no longer counts, so the look-ahead is the number of
    /// requests in flight. It also sets how many rows may be
    /// fetched ahead of the reader (the page engine's one budget): `look_ahead × 20 000` (at
    /// least two pages per shard), plus one page the shard being read keeps in reserve when more
    /// than one shard runs. Raise it when round trips dominate (a
    /// distant service, small pages); at the defaults, with 20 ms per answer, a report of 200 000
    /// rows reads more than twice as many rows a second as a loop over 30-day queries in pages of
    /// 10 000 (`cargo xtask bench`, `report-latency`).
    pub paging: Paging,
    /// Days per shard (each shard is its own query), 1..=30 ([`MAX_SHARD_DAYS`]). Default 7.
    pub shard_days: u32,
    /// Which conversions.
    pub filters: ReportFilters,
}

impl Default for ReportOptions {
    fn default() -> Self {
        Self {
            paging: Paging::new(MAX_REPORT_PAGE_SIZE, 4),
            shard_days: 7,
            filters: ReportFilters::default(),
        }
    }
}

crate::setters::field_setters!(ReportOptions {
    value {
        paging => paging: Paging,
        shard_days => shard_days: u32,
        filters => filters: ReportFilters,
    }
});

impl ReportOptions {
    paging_setters!(paging);

    /// Checks every bound (before any request).
    pub fn validate(&self) -> Result<(), Error> {
        self.paging
            .check(MAX_REPORT_PAGE_SIZE, MAX_SHARDS_IN_FLIGHT)?;
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
        self.filters.validate()
    }
}

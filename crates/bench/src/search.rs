//! The report-of-any-resource scenarios: [`SearchAdsClient::search`](sa360_video_sdk::search_ads::SearchAdsClient::search)
//! decoding each row into a caller's own struct, against the generated client's loop over the same
//! pages.
//!
//! | scenario | baseline | SDK |
//! |---|---|---|
//! | [`search_baseline`] / [`search_sdk`] | `POST …/searchAds360:search` page after page (`pageToken`), each body parsed with `serde_json::from_slice` into the generated `SearchSearchAds360Response` | `search(..).stream::<Row>()`, a caller's `serde` struct per row |
//!
//! Both read the same queries ([`search_queries`]): a campaign × day report of the bench fake,
//! [`SEARCH_RANGE_DAYS`] days of its seeded and synthetic campaigns (`--report-campaigns`, SR-22;
//! [`search_campaigns`] of them, so the report has the run's rows: 4 000 campaigns, 200 000 rows in
//! the full suite), in queries of at most [`SEARCH_QUERY_DAYS`] days (a query segmented by date
//! spans at most 30 days, SR-13), one after the other, in pages of 10 000.

use std::hint::black_box;
use std::time::Instant;

use anyhow::{Result, ensure};
use futures::TryStreamExt as _;
use serde::Deserialize;

use sa360_video_sdk::search_ads::reporting::SearchOptions;
use sa360_video_sdk::search_ads::{CustomerId, DateRange};

use crate::reporting::{baseline_pages, report_data_start, today_utc};
use crate::scenarios::{Measurement, SearchAdsTarget, plain_client, sdk_client};

/// Days per query on both sides: the widest a query segmented by date may span (SR-13).
pub const SEARCH_QUERY_DAYS: u32 = sa360_video_sdk::search_ads::reporting::MAX_SHARD_DAYS;

/// Rows per page on both sides: the API's largest (SR-11).
pub const SEARCH_PAGE_SIZE: u32 = 10_000;

/// Days the report covers: the days of the bench fake's seeded conversions (from
/// [`report_data_start`]), all inside the Reporting API's 60-day window.
pub const SEARCH_RANGE_DAYS: u64 = 50;

/// The fields each row selects.
pub const SEARCH_FIELDS: &str = "campaign.id, campaign.name, segments.date, \
metrics.impressions, metrics.clicks, metrics.cost_micros";

/// Campaigns the fake seeds in every account before the synthetic ones
/// (`sa360_video_fakes::search_ads::SEEDED_CAMPAIGNS`; a test holds the two equal).
pub const SEEDED_CAMPAIGNS: u64 = 4;

/// Most synthetic campaigns the fake adds (`sa360_video_fakes::search_ads::MAX_REPORT_CAMPAIGNS`).
pub const MAX_REPORT_CAMPAIGNS: u64 = 10_000;

/// The resource the report is of.
pub const SEARCH_RESOURCE: &str = "campaign";

/// The campaigns per account a report of `rows` rows needs ([`SEARCH_RANGE_DAYS`] rows each).
///
/// # Errors
/// When `rows` is not a whole number of campaigns, or fewer than the fake's seeded ones.
pub fn search_campaigns(rows: u64) -> Result<u64> {
    ensure!(
        rows.is_multiple_of(SEARCH_RANGE_DAYS),
        "a campaign × day report of {SEARCH_RANGE_DAYS} days cannot have {rows} rows"
    );
    let campaigns = rows / SEARCH_RANGE_DAYS;
    ensure!(
        campaigns >= SEEDED_CAMPAIGNS && campaigns - SEEDED_CAMPAIGNS <= MAX_REPORT_CAMPAIGNS,
        "a campaign × day report of {rows} rows needs {campaigns} campaigns: the fake serves {SEEDED_CAMPAIGNS} to {}",
        SEEDED_CAMPAIGNS + MAX_REPORT_CAMPAIGNS
    );
    Ok(campaigns)
}

/// The synthetic campaigns the bench fake adds (`--report-campaigns`) so the report has `rows`
/// rows.
///
/// # Errors
/// As [`search_campaigns`].
pub fn synthetic_campaigns(rows: u64) -> Result<u64> {
    Ok(search_campaigns(rows)? - SEEDED_CAMPAIGNS)
}

/// The query of one part of the range: the campaigns' rows by day.
pub fn search_query(dates: DateRange) -> String {
    format!(
        "SELECT {SEARCH_FIELDS} FROM {SEARCH_RESOURCE} WHERE segments.date BETWEEN '{}' AND '{}'",
        dates.start(),
        dates.end()
    )
}

/// The days of a run's report: [`SEARCH_RANGE_DAYS`] from the bench fake's first day.
pub fn search_range(today: chrono::NaiveDate) -> Result<DateRange> {
    let start = report_data_start(today);
    Ok(DateRange::new(
        start,
        start + chrono::Days::new(SEARCH_RANGE_DAYS - 1),
    )?)
}

/// The queries of a run: the report's days in [`SEARCH_QUERY_DAYS`]-day parts, in order.
pub fn search_queries() -> Result<Vec<String>> {
    let range = search_range(today_utc())?;
    let mut queries = Vec::new();
    let mut from = range.start();
    while from <= range.end() {
        let to = (from + chrono::Days::new(u64::from(SEARCH_QUERY_DAYS) - 1)).min(range.end());
        queries.push(search_query(DateRange::new(from, to)?));
        from = to + chrono::Days::new(1);
    }
    Ok(queries)
}

/// A caller's row: the members it selects, nested as the JSON is.
#[derive(Debug, Deserialize)]
pub struct Row {
    /// `campaign.id`, `campaign.name`.
    pub campaign: Campaign,
    /// `segments.date`.
    pub segments: Segments,
    /// `metrics.*`.
    pub metrics: Metrics,
}

/// The row's campaign.
#[derive(Debug, Deserialize)]
pub struct Campaign {
    /// `campaign.id` (int64, as a string).
    pub id: String,
    /// `campaign.name`.
    pub name: String,
}

/// The row's segments.
#[derive(Debug, Deserialize)]
pub struct Segments {
    /// `segments.date`.
    pub date: String,
}

/// The row's metrics (int64 values, as strings).
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Metrics {
    /// `metrics.impressions`.
    #[serde(default)]
    pub impressions: Option<String>,
    /// `metrics.clicks`.
    #[serde(default)]
    pub clicks: Option<String>,
    /// `metrics.cost_micros`.
    #[serde(default)]
    pub cost_micros: Option<String>,
}

/// Baseline: each query's pages one after the other, parsed into the generated type.
pub async fn search_baseline(target: &SearchAdsTarget) -> Result<Measurement> {
    let http = plain_client(true)?;
    let url = format!(
        "{}/v0/customers/{}/searchAds360:search",
        target.reporting_url.trim_end_matches('/'),
        target.customer_id
    );
    let auth = format!("Bearer {}", target.token);
    let queries = search_queries()?;
    let started = Instant::now();
    let mut rows: u64 = 0;
    for query in &queries {
        rows += baseline_pages(&http, &url, &auth, query, SEARCH_PAGE_SIZE).await?;
    }
    Ok(Measurement::new(rows, rows, started.elapsed()))
}

/// SDK: each query through `search(..).stream::<Row>()` with `options`, one after the other,
/// every row consumed.
pub async fn search_sdk(target: &SearchAdsTarget, options: SearchOptions) -> Result<Measurement> {
    let client = sdk_client(target)?;
    let customer = CustomerId::new(target.customer_id.clone())?;
    let queries = search_queries()?;
    let started = Instant::now();
    let mut rows: u64 = 0;
    for query in queries {
        let mut stream = client
            .search(customer, query)
            .options(options.clone())
            .stream::<Row>();
        while let Some(row) = stream.try_next().await? {
            black_box(row);
            rows += 1;
        }
    }
    Ok(Measurement::new(rows, rows, started.elapsed()))
}

/// SDK: each query read whole with `search(..).send::<Row>()` (one `searchStream` request,
/// default options), one after the other, every row consumed.
pub async fn search_stream_sdk(target: &SearchAdsTarget) -> Result<Measurement> {
    let client = sdk_client(target)?;
    let customer = CustomerId::new(target.customer_id.clone())?;
    let queries = search_queries()?;
    let started = Instant::now();
    let mut rows: u64 = 0;
    for query in queries {
        let report = client.search(customer, query).send::<Row>().await?;
        rows += report.rows.len() as u64;
        black_box(report);
    }
    Ok(Measurement::new(rows, rows, started.elapsed()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_queries_cover_the_range_in_parts_the_service_accepts() {
        let queries = search_queries().unwrap();
        assert_eq!(queries.len(), 2);
        for q in &queries {
            sa360_video_sdk::search_ads::reporting::Query::text(q.as_str())
                .columns()
                .expect("a query the SDK accepts");
        }
    }

    #[test]
    fn the_report_has_the_runs_rows_inside_the_window() {
        assert_eq!(search_campaigns(200_000).unwrap(), 4_000);
        assert_eq!(synthetic_campaigns(200_000).unwrap(), 3_996);
        assert_eq!(search_campaigns(3_000).unwrap(), 60);
        assert!(search_campaigns(200_001).is_err());
        assert!(search_campaigns(50).is_err());
        assert!(search_campaigns(50 * 10_004).is_ok());
        assert!(search_campaigns(50 * 10_005).is_err());
        assert_eq!(
            SEEDED_CAMPAIGNS,
            sa360_video_fakes::search_ads::SEEDED_CAMPAIGNS
        );
        assert_eq!(
            MAX_REPORT_CAMPAIGNS,
            sa360_video_fakes::search_ads::MAX_REPORT_CAMPAIGNS
        );
        let today = chrono::NaiveDate::from_ymd_opt(2026, 11, 23).unwrap();
        for today in [today, today + chrono::Days::new(2)] {
            let range = search_range(today).unwrap();
            let days = (range.end() - range.start()).num_days() + 1;
            assert_eq!(days, SEARCH_RANGE_DAYS as i64);
            assert!(range.end() < today);
            assert!(
                range.start() > today - chrono::Days::new(60),
                "inside the window"
            );
        }
    }
}

//! The Reporting API scenarios: a conversion report read by the SDK
//! ([`SearchAdsClient::conversion_report`](sa360_video_sdk::search_ads::SearchAdsClient::conversion_report)) against a plain loop over the same
//! pages.
//!
//! | scenario | baseline | SDK |
//! |---|---|---|
//! | [`report_baseline`] / [`report_sdk`] | `POST …/searchAds360:search` page after page (`pageToken`), each body parsed with `serde_json::from_slice` into the generated `SearchSearchAds360Response` | `SearchAdsClient::conversion_report` stream, typed `Conversion`s |
//!
//! Both send the query the SDK builds without filters (the baseline spells
//! it out in [`report_query`]). The query selects `segments.date`, so one query
//! may span at most 30 days (`DATE_RANGE_TOO_WIDE`, SR-13): the baseline reads
//! the range as consecutive queries, one after the other.
//!
//! Without added latency (the overhead row) both read the SDK's default 7-day shards
//! ([`REPORT_SHARD_DAYS`]) in pages of 10 000 one after the other (the SDK with one shard in
//! flight): the very same requests, so the ratio is the SDK's own cost per row. With 20 ms
//! per answer (the latency-hiding row) the baseline reads 30-day queries ([`REPORT_CHUNK_DAYS`],
//! the widest one query may span) in pages of 10 000 (the largest), and the SDK runs with
//! `ReportOptions::default()`.

use std::hint::black_box;
use std::time::Instant;

use anyhow::{Context as _, Result, bail};
use chrono::NaiveDate;
use futures::TryStreamExt as _;
use serde::Serialize;

use sa360_reporting_client::types as v0;
use sa360_video_sdk::search_ads::{CustomerId, DateRange, reporting::ReportOptions};

use crate::scenarios::{Measurement, SearchAdsTarget, plain_client, sdk_client};

/// Days back from today (UTC) of the first day every report asks for: inside
/// the Reporting API's 60-day window with two days to spare, so a run that
/// starts just before midnight is still inside it.
pub const REPORT_DAYS_BACK: u64 = 57;

/// Days back from the day the bench fake starts of the first seeded
/// conversion: the fake's data starts after the first day of every report,
/// and [`REPORT_ROWS_PER_DAY`] conversions a day end before today.
pub const REPORT_DATA_DAYS_BACK: u64 = 55;

/// Seeded conversions per day of the bench fakes: 200 000 conversions fill 50
/// days, all inside the 60-day window.
pub const REPORT_ROWS_PER_DAY: u64 = 4_000;

/// Rows per page of the report without added latency: the API's maximum
/// (SR-11) and the SDK's default.
pub const REPORT_PAGE_SIZE: u32 = 10_000;

/// Days per query of the baseline with added latency: the most one query may span.
pub const REPORT_CHUNK_DAYS: u32 = sa360_video_sdk::search_ads::reporting::MAX_SHARD_DAYS;

/// Days per shard of the SDK (its default) and, without added latency, per query of the
/// baseline.
pub const REPORT_SHARD_DAYS: u32 = 7;

/// The first day the bench fakes seed: [`REPORT_DATA_DAYS_BACK`] days before
/// `today`.
pub fn report_data_start(today: NaiveDate) -> NaiveDate {
    today - chrono::Days::new(REPORT_DATA_DAYS_BACK)
}

/// The range every report asks for on `today`: [`REPORT_DAYS_BACK`] days back
/// through today.
pub fn report_range(today: NaiveDate) -> Result<DateRange> {
    Ok(DateRange::new(
        today - chrono::Days::new(REPORT_DAYS_BACK),
        today,
    )?)
}

/// Today (UTC) on this machine's clock.
pub fn today_utc() -> NaiveDate {
    chrono::DateTime::<chrono::Utc>::from(std::time::SystemTime::now()).date_naive()
}

/// The query the SDK sends for `dates` without filters (SR-9), written
/// out as an application would.
pub fn report_query(dates: DateRange) -> String {
    format!(
        "SELECT conversion.id, conversion.advertiser_conversion_id, \
         conversion.conversion_date_time, conversion.conversion_last_modified_date_time, \
         conversion.conversion_revenue_micros, conversion.conversion_quantity, \
         conversion.status, conversion.click_id, conversion.floodlight_order_id, \
         conversion.ad_id, conversion.criterion_id, conversion.merchant_id, \
         conversion.product_id, conversion.product_channel, conversion.product_country_code, \
         conversion.product_language_code, conversion.product_store_id, segments.date, \
         customer.id, customer.currency_code, campaign.id, ad_group.id FROM conversion \
         WHERE segments.date BETWEEN '{}' AND '{}' \
         ORDER BY conversion.conversion_date_time, conversion.id",
        dates.start(),
        dates.end()
    )
}

/// The search body of the baseline.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct SearchBody<'a> {
    query: &'a str,
    page_size: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    page_token: Option<&'a str>,
}

/// Baseline report: for each `chunk_days`-day part of the range in
/// order, one `POST …/customers/{id}/searchAds360:search` after the other with
/// `pageSize` and the previous answer's `nextPageToken`, each answer read
/// whole and parsed with `serde_json::from_slice` into the generated
/// `SearchSearchAds360Response`, every row consumed, until an answer without
/// a token.
pub async fn report_baseline(
    target: &SearchAdsTarget,
    page_size: u32,
    chunk_days: u32,
) -> Result<Measurement> {
    let http = plain_client(true)?;
    let url = format!(
        "{}/v0/customers/{}/searchAds360:search",
        target.reporting_url.trim_end_matches('/'),
        target.customer_id
    );
    let auth = format!("Bearer {}", target.token);
    let range = report_range(today_utc())?;
    let mut queries = Vec::new();
    let mut from = range.start();
    while from <= range.end() {
        let to = (from + chrono::Days::new(u64::from(chunk_days.max(1)) - 1)).min(range.end());
        queries.push(report_query(DateRange::new(from, to)?));
        from = to + chrono::Days::new(1);
    }
    let started = Instant::now();
    let mut rows: u64 = 0;
    for query in &queries {
        rows += baseline_pages(&http, &url, &auth, query, page_size).await?;
    }
    Ok(Measurement::new(rows, rows, started.elapsed()))
}

/// The pages of one query, one after the other; returns the rows consumed.
pub(crate) async fn baseline_pages(
    http: &reqwest::Client,
    url: &str,
    auth: &str,
    query: &str,
    page_size: u32,
) -> Result<u64> {
    let mut rows: u64 = 0;
    let mut token: Option<String> = None;
    loop {
        let body = serde_json::to_vec(&SearchBody {
            query,
            page_size,
            page_token: token.as_deref(),
        })?;
        let response = http
            .post(url)
            .header(reqwest::header::AUTHORIZATION, auth)
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .body(body)
            .send()
            .await
            .context("searchAds360.search")?;
        let status = response.status();
        let body = response.bytes().await.context("searchAds360.search body")?;
        if !status.is_success() {
            bail!(
                "searchAds360.search answered {status}: {}",
                String::from_utf8_lossy(&body)
            );
        }
        let page: v0::SearchSearchAds360Response =
            serde_json::from_slice(&body).context("searchAds360.search JSON")?;
        rows += page.results.len() as u64;
        for row in page.results {
            black_box(row);
        }
        match page.next_page_token.filter(|t| !t.is_empty()) {
            Some(next) => token = Some(next),
            None => return Ok(rows),
        }
    }
}

/// SDK report: [`SearchAdsClient::conversion_report`](sa360_video_sdk::search_ads::SearchAdsClient::conversion_report)
/// over the same range with `page_size`, `shard_days` and `concurrency`,
/// every typed [`Conversion`](sa360_video_sdk::search_ads::Conversion) consumed.
pub async fn report_sdk(
    target: &SearchAdsTarget,
    page_size: u32,
    shard_days: u32,
    concurrency: usize,
) -> Result<Measurement> {
    let client = sdk_client(target)?;
    let customer = CustomerId::new(target.customer_id.clone())?;
    let dates = report_range(today_utc())?;
    let options = ReportOptions::default()
        .page_size(page_size)
        .shard_days(shard_days)
        .look_ahead(concurrency);
    let started = Instant::now();
    let mut stream = client
        .conversion_report(customer, dates)
        .options(options)
        .stream();
    let mut rows: u64 = 0;
    while let Some(conversion) = stream.try_next().await? {
        black_box(conversion);
        rows += 1;
    }
    Ok(Measurement::new(rows, rows, started.elapsed()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_no_latency_report_reads_the_sdks_default_pages() {
        let defaults = ReportOptions::default();
        assert_eq!(REPORT_SHARD_DAYS, defaults.shard_days);
        assert_eq!(REPORT_PAGE_SIZE, defaults.paging.page_size);
    }

    #[test]
    fn the_data_lies_inside_every_report_and_the_window() {
        let today = NaiveDate::from_ymd_opt(2026, 11, 23).unwrap();
        let range = report_range(today).unwrap();
        let start = report_data_start(today);
        assert!(range.start() < start);
        let days = 200_000 / REPORT_ROWS_PER_DAY;
        assert!(start + chrono::Days::new(days) <= today);
        // Two days later the range still starts before the data and inside the window.
        let later = today + chrono::Days::new(2);
        assert!(report_range(later).unwrap().start() <= start);
        assert!(report_range(later).unwrap().start() > later - chrono::Days::new(60));
    }
}

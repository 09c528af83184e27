//! The report-of-any-resource scenarios: [`SearchAdsClient::search`](sa360_video_sdk::search_ads::SearchAdsClient::search)
//! decoding each row into a caller's own struct, against the generated client's loop over the same
//! pages.
//!
//! | scenario | baseline | facade |
//! |---|---|---|
//! | [`search_baseline`] / [`search_facade`] | `POST …/searchAds360:search` page after page (`pageToken`), each body parsed with `serde_json::from_slice` into the generated `SearchSearchAds360Response` | `search(..).stream::<Row>()`, a caller's `serde` struct per row |
//!
//! Both read the same queries ([`search_queries`]): the bench fake's 200 000 rows in
//! [`SEARCH_QUERY_DAYS`]-day queries (a query segmented by date spans at most 30 days, SR-13), one
//! after the other, in pages of 10 000.

use std::hint::black_box;
use std::time::Instant;

use anyhow::Result;
use futures::TryStreamExt as _;
use serde::Deserialize;

use sa360_video_sdk::search_ads::reporting::SearchOptions;
use sa360_video_sdk::search_ads::{CustomerId, DateRange};

use crate::reporting::{baseline_pages, report_range, today_utc};
use crate::scenarios::{Measurement, SearchAdsTarget, facade_client, plain_client};

/// Days per query on both sides: the widest a query segmented by date may span (SR-13).
pub const SEARCH_QUERY_DAYS: u32 = sa360_video_sdk::search_ads::MAX_SHARD_DAYS;

/// Rows per page on both sides: the API's largest (SR-11).
pub const SEARCH_PAGE_SIZE: u32 = 10_000;

/// The fields each row selects.
pub const SEARCH_FIELDS: &str = "conversion.id, conversion.status, \
conversion.conversion_revenue_micros, segments.date, campaign.id";

/// The query of one part of the range: the rows of a resource by day.
pub fn search_query(dates: DateRange) -> String {
    format!(
        "SELECT {SEARCH_FIELDS} FROM conversion WHERE segments.date BETWEEN '{}' AND '{}'",
        dates.start(),
        dates.end()
    )
}

/// The queries of a run: the bench's report range in [`SEARCH_QUERY_DAYS`]-day parts, in order.
pub fn search_queries() -> Result<Vec<String>> {
    let range = report_range(today_utc())?;
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
    /// `conversion.*`.
    pub conversion: Conversion,
    /// `segments.date`.
    pub segments: Segments,
    /// `campaign.id`.
    pub campaign: Campaign,
}

/// The conversion's selected fields.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Conversion {
    /// `conversion.id` (int64, as a string).
    pub id: String,
    /// `conversion.status`.
    pub status: String,
    /// `conversion.conversion_revenue_micros` (int64, as a string).
    #[serde(default)]
    pub conversion_revenue_micros: Option<String>,
}

/// The row's segments.
#[derive(Debug, Deserialize)]
pub struct Segments {
    /// `segments.date`.
    pub date: String,
}

/// The row's campaign.
#[derive(Debug, Deserialize)]
pub struct Campaign {
    /// `campaign.id` (int64, as a string).
    pub id: String,
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

/// Facade: each query through `search(..).stream::<Row>()` with `options`, one after the other,
/// every row consumed.
pub async fn search_facade(
    target: &SearchAdsTarget,
    options: SearchOptions,
) -> Result<Measurement> {
    let client = facade_client(target)?;
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
                .expect("a query the facade accepts");
        }
    }
}

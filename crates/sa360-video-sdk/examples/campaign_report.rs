//! Runs the Reporting API guide's first report (campaigns by device and day over the last 30 days,
//! with impressions and clicks) through `SearchAdsClient::search`, each row decoded into this
//! program's own struct, and prints a line per campaign and the total.
//!
//! The query is built from the generated field constants, so a misspelt field does not compile;
//! it is the guide's text:
//!
//! ```text
//! SELECT campaign.id, campaign.name, segments.device, segments.date, metrics.impressions,
//!   metrics.clicks FROM campaign WHERE segments.date DURING LAST_30_DAYS
//! ```
//!
//! Run it against the local fakes:
//!
//! ```sh
//! cargo run -p sa360-video-cli -- sandbox > sandbox.env &     # both fakes; prints their settings
//! set -a; . ./sandbox.env; set +a
//! cargo run -p sa360-video-sdk --example campaign_report
//! ```
//!
//! Settings (environment): `GOOGLE_APPLICATION_CREDENTIALS` (a credentials file; unset, gcloud's
//! `application-default` login or the metadata server is used), `SEARCH_ADS_CUSTOMER_ID` (the
//! customer of the new Search Ads 360), `SEARCH_ADS_LOGIN_CUSTOMER_ID` (its manager, when it is
//! reached through one) and `SEARCH_ADS_REPORTING_URL` (leave it unset against Google).

use std::collections::BTreeMap;

use futures::TryStreamExt;
use sa360_video_sdk::search_ads::reporting::fields::{self, Resource};
use sa360_video_sdk::search_ads::reporting::{DuringRange, Query, int64};
use sa360_video_sdk::search_ads::{CustomerId, DefaultCredentials, SearchAdsClient};
use serde::Deserialize;

/// One row, nested as the Reporting API's JSON is (members in camelCase; int64 values arrive as
/// strings of digits, read by `int64`; a metric of zero is left out, read as 0 by `default`).
#[derive(Debug, Deserialize)]
struct Row {
    campaign: Campaign,
    segments: Segments,
    #[serde(default)]
    metrics: Metrics,
}

#[derive(Debug, Deserialize)]
struct Campaign {
    #[serde(with = "int64")]
    id: i64,
    #[serde(default)]
    name: String,
}

#[derive(Debug, Deserialize)]
struct Segments {
    #[serde(default)]
    device: Option<String>,
    date: String,
}

#[derive(Debug, Default, Deserialize)]
struct Metrics {
    #[serde(default, with = "int64")]
    impressions: i64,
    #[serde(default, with = "int64")]
    clicks: i64,
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let env = |name| std::env::var(name).map_err(|_| anyhow::anyhow!("{name} is not set"));
    // Sign in as Google's libraries do: Application Default Credentials.
    let mut builder = SearchAdsClient::builder(DefaultCredentials::new()?).endpoints_from_env(); // the fakes' URLs, when set (`apictl sandbox`)
    if let Ok(manager) = env("SEARCH_ADS_LOGIN_CUSTOMER_ID") {
        builder = builder.login_customer_id(manager.parse()?);
    }
    let client = builder.build()?;
    let customer: CustomerId = env("SEARCH_ADS_CUSTOMER_ID")?.parse()?;

    let query = Query::select([
        fields::campaign::ID,
        fields::campaign::NAME,
        fields::segments::DEVICE,
        fields::segments::DATE,
        fields::metrics::IMPRESSIONS,
        fields::metrics::CLICKS,
    ])
    .from(Resource::Campaign)
    .where_(fields::segments::DATE.during(DuringRange::Last30Days));

    // Rows arrive one at a time, page after page; memory stays bounded.
    let mut rows = client.search(customer, query).stream::<Row>();
    let mut per_campaign: BTreeMap<(i64, String), (i64, i64)> = BTreeMap::new();
    let (mut days, mut devices) = (
        std::collections::BTreeSet::new(),
        std::collections::BTreeSet::new(),
    );
    let mut total_rows = 0u64;
    while let Some(row) = rows.try_next().await? {
        let (impressions, clicks) = per_campaign
            .entry((row.campaign.id, row.campaign.name))
            .or_default();
        *impressions += row.metrics.impressions;
        *clicks += row.metrics.clicks;
        days.insert(row.segments.date);
        devices.insert(row.segments.device.unwrap_or_default());
        total_rows += 1;
    }

    println!(
        "{:<14} {:<30} {:>12} {:>10}",
        "campaign", "name", "impressions", "clicks"
    );
    let (mut impressions, mut clicks) = (0, 0);
    for ((id, name), (i, c)) in &per_campaign {
        println!("{id:<14} {name:<30} {i:>12} {c:>10}");
        (impressions, clicks) = (impressions + i, clicks + c);
    }
    println!(
        "{total_rows} rows: {} campaigns, {} days, {} devices, {impressions} impressions, {clicks} clicks",
        per_campaign.len(),
        days.len(),
        devices.len()
    );
    Ok(())
}

//! Reads the last 30 days of conversions through the Search Ads 360 Reporting API and prints
//! a line per campaign (conversions, revenue) and the total.
//!
//! Run it against the local fakes:
//!
//! ```sh
//! cargo run -p sa360-video-cli -- sandbox > sandbox.env &     # both fakes; prints their settings
//! set -a; . ./sandbox.env; set +a
//! cargo run -p sa360-video-sdk --example conversion_report
//! ```
//!
//! Settings (environment): `GOOGLE_APPLICATION_CREDENTIALS` (a credentials file; unset, gcloud's
//! `application-default` login or the metadata server is used), `SEARCH_ADS_CUSTOMER_ID`
//! (the customer of the new Search Ads 360), and `SEARCH_ADS_URL` / `SEARCH_ADS_REPORTING_URL`
//! (leave them unset against Google).

use std::collections::BTreeMap;

use futures::TryStreamExt;
use sa360_video_sdk::search_ads::{
    CampaignId, CustomerId, DateRange, DefaultCredentials, Micros, SearchAdsClient,
};

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let env = |name| std::env::var(name).map_err(|_| anyhow::anyhow!("{name} is not set"));
    // Sign in as Google's libraries do: Application Default Credentials.
    let client = SearchAdsClient::builder(DefaultCredentials::new()?)
        .endpoints_from_env() // the fakes' URLs, when set (`apictl sandbox`)
        .build()?;
    let customer: CustomerId = env("SEARCH_ADS_CUSTOMER_ID")?.parse()?;
    let dates = DateRange::last_days(30)?;

    // Rows arrive one at a time, in conversion-time order; memory stays bounded.
    let mut report = client.conversion_report(customer, dates).stream();
    let mut per_campaign: BTreeMap<Option<CampaignId>, (u64, i64)> = BTreeMap::new();
    while let Some(conversion) = report.try_next().await? {
        let revenue = conversion.revenue_micros.map_or(0, |m| m.get());
        let (count, total) = per_campaign.entry(conversion.campaign_id).or_default();
        (*count, *total) = (*count + 1, *total + revenue);
    }

    println!("{:<20} {:>12} {:>16}", "campaign", "conversions", "revenue");
    let (mut count, mut revenue) = (0, 0);
    for (campaign, (n, micros)) in &per_campaign {
        let campaign = campaign.map_or("-".to_owned(), |id| id.to_string());
        println!(
            "{campaign:<20} {n:>12} {:>16}",
            Micros::new(*micros).to_string()
        );
        (count, revenue) = (count + n, revenue + micros);
    }
    println!(
        "{count} conversions from {} to {}, revenue {}",
        dates.start(),
        dates.end(),
        Micros::new(revenue)
    );
    Ok(())
}

//! Downloads an advertiser's legacy-to-new ID-mapping file as typed rows (in constant memory,
//! with a progress line), builds an [`IdLookup`] from them, and uses it to find the new
//! customer id of a legacy engine account and the new ids of its campaigns: what moving
//! conversion reads from the v2 API to the Reporting API needs.
//!
//! Run it against the local fakes (see `conversion_report.rs` for `apictl sandbox`):
//!
//! ```sh
//! cargo run -p sa360-video-sdk --example id_mapping
//! ```
//!
//! Settings (environment): `GOOGLE_APPLICATION_CREDENTIALS`, `SEARCH_ADS_AGENCY_ID`,
//! `SEARCH_ADS_ADVERTISER_ID`, `SEARCH_ADS_ENGINE_ACCOUNT_ID`, and `SEARCH_ADS_URL` (leave it
//! unset against Google). When `SEARCH_ADS_CUSTOMER_ID` is set, the example checks that the
//! mapping gives that customer.

use std::collections::BTreeMap;

use futures::TryStreamExt;
use sa360_video_sdk::search_ads::reporting::IdLookup;
use sa360_video_sdk::search_ads::{
    AdvertiserId, AgencyId, DefaultCredentials, EngineAccountId, SearchAdsClient,
};

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let env = |name| std::env::var(name).map_err(|_| anyhow::anyhow!("{name} is not set"));
    // Sign in as Google's libraries do: Application Default Credentials.
    let client = SearchAdsClient::builder(DefaultCredentials::new()?)
        .endpoints_from_env() // the fakes' URLs, when set (`apictl sandbox`)
        .build()?;
    let agency: AgencyId = env("SEARCH_ADS_AGENCY_ID")?.parse()?;
    let advertiser: AdvertiserId = env("SEARCH_ADS_ADVERTISER_ID")?.parse()?;
    let engine_account: EngineAccountId = env("SEARCH_ADS_ENGINE_ACCOUNT_ID")?.parse()?;

    // Progress: bytes so far and the total the server announced, at most every 10 %.
    let last_tenth = std::sync::atomic::AtomicU64::new(0);
    let progress = move |bytes: u64, total: Option<u64>| {
        if let Some(total) = total.filter(|t| *t > 0) {
            let tenth = bytes * 10 / total;
            if last_tenth.fetch_max(tenth, std::sync::atomic::Ordering::Relaxed) < tenth {
                eprintln!("  {bytes} of {total} bytes");
            }
        }
    };

    // One pass over the rows: count them per entity type and feed the lookup.
    let mut rows = client
        .id_mapping(agency, advertiser)
        .progress(progress)
        .stream();
    let mut per_type: BTreeMap<String, u64> = BTreeMap::new();
    let mut lookup = IdLookup::default();
    let mut legacy_campaigns = Vec::new();
    while let Some(row) = rows.try_next().await? {
        *per_type
            .entry(row.entity_type.as_str().to_owned())
            .or_default() += 1;
        if row.legacy.engine_account_id == Some(engine_account) {
            legacy_campaigns.extend(row.legacy.campaign_id);
        }
        lookup.add(&row);
    }
    for (entity_type, count) in &per_type {
        println!("{entity_type:<10} {count:>8} rows");
    }

    let customer = lookup.customer(engine_account).ok_or_else(|| {
        anyhow::anyhow!("engine account {engine_account} is not in the ID-mapping file")
    })?;
    println!("legacy engine account {engine_account} is customer {customer}");
    if let Ok(expected) = env("SEARCH_ADS_CUSTOMER_ID") {
        anyhow::ensure!(
            customer.as_str() == expected,
            "the mapping gives customer {customer}, SEARCH_ADS_CUSTOMER_ID says {expected}"
        );
    }
    legacy_campaigns.sort_unstable();
    legacy_campaigns.dedup();
    for legacy in legacy_campaigns.iter().take(5) {
        match lookup.campaign(*legacy) {
            Some(new) => println!("  campaign {legacy} -> {new}"),
            None => println!("  campaign {legacy} has no new id"),
        }
    }
    if legacy_campaigns.len() > 5 {
        println!("  … and {} more campaigns", legacy_campaigns.len() - 5);
    }
    Ok(())
}

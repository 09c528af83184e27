//! The SDK keeps its own report queries (`segments.date BETWEEN` per shard, SR-9); a user who
//! writes the query the way Google's pages do (`segments.date DURING LAST_7_DAYS`, the date not
//! selected) gets the same conversions from the fake for the same days: the 7 days before today,
//! not today (issue 26).

use crate::search_ads_support as support;

use std::collections::BTreeSet;

use chrono::{DateTime, Days, Utc};
use futures::TryStreamExt;
use sa360_video_fakes::SearchAdsFake;
use sa360_video_sdk::search_ads::{
    Conversion, CustomerId, DateRange, SearchAdsClient, StaticToken,
};
use serde_json::{Value, json};

/// One conversion as both reads can state it: id, advertiser's id, instant (ms), revenue,
/// campaign and ad group (new ids).
type Key = (String, String, i64, String, String, String);

fn of_sdk(c: &Conversion) -> Key {
    let text = |v: Option<String>| v.unwrap_or_default();
    (
        text(c.ds_conversion_id.map(|v| v.to_string())),
        text(c.conversion_id.clone()),
        c.conversion_timestamp.map_or(0, |t| t.timestamp_millis()),
        text(c.revenue_micros.map(|v| v.get().to_string())),
        text(c.campaign_id.map(|v| v.to_string())),
        text(c.ad_group_id.map(|v| v.to_string())),
    )
}

fn of_row(row: &Value) -> Key {
    let text = |v: &Value| v.as_str().unwrap_or_default().to_owned();
    let when = row["conversion"]["conversionDateTime"]
        .as_str()
        .expect("time");
    let millis = DateTime::parse_from_str(when, "%Y-%m-%d %H:%M:%S%.f%:z")
        .expect("Google Ads' date-time form (SR-10)")
        .timestamp_millis();
    (
        text(&row["conversion"]["id"]),
        text(&row["conversion"]["advertiserConversionId"]),
        millis,
        text(&row["conversion"]["conversionRevenueMicros"]),
        text(&row["campaign"]["id"]),
        text(&row["adGroup"]["id"]),
    )
}

/// A user's own query, paged over raw HTTP.
async fn user_query(fake: &SearchAdsFake, customer: &str, query: &str) -> Vec<Value> {
    let http = reqwest::Client::new();
    let mut rows = Vec::new();
    let mut token: Option<String> = None;
    loop {
        let mut body = json!({"query": query, "pageSize": 500});
        if let Some(t) = &token {
            body["pageToken"] = json!(t);
        }
        let page: Value = http
            .post(format!(
                "{}/v0/customers/{customer}/searchAds360:search",
                fake.reporting_url()
            ))
            .bearer_auth(fake.dev_token())
            .header("login-customer-id", "2000012300")
            .json(&body)
            .send()
            .await
            .expect("sent")
            .json()
            .await
            .expect("JSON");
        assert!(page.get("error").is_none(), "{query}: {page}");
        rows.extend(page["results"].as_array().cloned().unwrap_or_default());
        match page["nextPageToken"].as_str() {
            Some(t) => token = Some(t.to_owned()),
            None => return rows,
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_sdk_report_and_a_during_query_read_the_same_conversions() {
    // Seeded data through today, so a range that wrongly held today would differ.
    let today = chrono::DateTime::<Utc>::from(std::time::SystemTime::now()).date_naive();
    let fake = support::start(
        SearchAdsFake::builder()
            .conversions_per_account(20 * 150)
            .conversions_per_day(150)
            .start_date(today - Days::new(19)),
    )
    .await;
    let today = fake.reporting_window().0;
    let client = SearchAdsClient::builder(StaticToken::new(fake.dev_token()))
        .base_url(fake.base_url())
        .reporting_base_url(fake.reporting_url())
        .retry_policy(support::fast_retries(4))
        .build()
        .expect("the client builds");
    let customer_id = fake.accounts()[0].customer_id.clone();
    let customer = CustomerId::new(customer_id.clone()).expect("digits");
    let dates = DateRange::new(today - Days::new(7), today - Days::new(1))
        .expect("the 7 days before today");
    let sdk: Vec<Conversion> = client
        .conversion_report(customer, dates)
        .today(today)
        .stream()
        .try_collect()
        .await
        .expect("the SDK's report");
    let user = user_query(
        &fake,
        &customer_id,
        "SELECT conversion.id, conversion.advertiser_conversion_id, conversion.conversion_date_time, \
         conversion.conversion_revenue_micros, campaign.id, ad_group.id FROM conversion \
         WHERE segments.date DURING LAST_7_DAYS",
    )
    .await;
    assert_eq!(sdk.len(), 7 * 150);
    assert_eq!(user.len(), sdk.len());
    let from_sdk: BTreeSet<Key> = sdk.iter().map(of_sdk).collect();
    let from_user: BTreeSet<Key> = user.iter().map(of_row).collect();
    assert_eq!(from_sdk.len(), sdk.len(), "each conversion once");
    assert!(
        from_sdk == from_user,
        "{} conversions differ, e.g. {:?} and {:?}",
        from_sdk.symmetric_difference(&from_user).count(),
        from_sdk.difference(&from_user).next(),
        from_user.difference(&from_sdk).next()
    );
}

//! Reports of `FROM customer`, `FROM campaign` and `FROM ad_group` (issue 35, DECISIONS SR-22),
//! over raw HTTP: metrics consistent with each other and with the conversion report, segmented
//! rows summing to the unsegmented ones, paging, LIMIT, ORDER BY and the manager rule. Google's
//! example queries and the refusals with their codes are in the query corpus
//! (`query_corpus.rs`).

use crate::common::{assert_rows_fit_the_catalogue, search_page, search_pages};

use std::collections::BTreeMap;

use chrono::Days;
use sa360_video_fakes::SearchAdsFake;
use serde_json::{Value, json};

const MANAGER: &str = "2000012300";

async fn fake() -> SearchAdsFake {
    let today = chrono::DateTime::<chrono::Utc>::from(std::time::SystemTime::now()).date_naive();
    SearchAdsFake::builder()
        .conversions_per_account(3_000)
        .conversions_per_day(150)
        .start_date(today - Days::new(19))
        .start()
        .await
        .expect("starts")
}

/// Every row of `query` in pages of `size`.
async fn rows(fake: &SearchAdsFake, query: &str, size: u32) -> Vec<Value> {
    search_pages(fake, query, size).await.0
}

fn range(fake: &SearchAdsFake) -> (String, String) {
    let (today, _) = fake.reporting_window();
    (
        (today - Days::new(10)).to_string(),
        (today - Days::new(1)).to_string(),
    )
}

fn int(row: &Value, member: &str) -> i64 {
    row["metrics"][member]
        .as_str()
        .unwrap_or_else(|| panic!("metrics.{member} is an int64 string: {row}"))
        .parse()
        .unwrap()
}

fn conversions(row: &Value) -> f64 {
    row["metrics"]["conversions"].as_f64().expect("a double")
}

const METRICS: &str =
    "metrics.impressions, metrics.clicks, metrics.cost_micros, metrics.conversions";

#[tokio::test]
async fn metrics_hold_together_and_agree_with_the_conversion_report() {
    let fake = fake().await;
    let (from, to) = range(&fake);
    let during = format!("WHERE segments.date BETWEEN '{from}' AND '{to}'");
    let daily = rows(
        &fake,
        &format!(
            "SELECT campaign.id, segments.date, segments.device, {METRICS} FROM campaign {during}"
        ),
        10_000,
    )
    .await;
    assert_eq!(daily.len(), 4 * 10 * 3, "4 campaigns x 10 days x 3 devices");
    let total = rows(
        &fake,
        &format!("SELECT campaign.id, {METRICS} FROM campaign {during}"),
        10_000,
    )
    .await;
    assert_eq!(total.len(), 4);
    for row in daily.iter().chain(&total) {
        let (impressions, clicks, cost) = (
            int(row, "impressions"),
            int(row, "clicks"),
            int(row, "costMicros"),
        );
        assert!(impressions >= clicks, "impressions >= clicks: {row}");
        assert!(
            clicks as f64 >= conversions(row),
            "clicks >= conversions: {row}"
        );
        assert!(
            cost >= 0 && cost % 10_000 == 0,
            "cost in whole cents of micros: {row}"
        );
    }
    // The per-day, per-device rows sum to the unsegmented ones.
    let mut sums: BTreeMap<String, (i64, i64, i64, f64)> = BTreeMap::new();
    for row in &daily {
        let s = sums
            .entry(row["campaign"]["id"].as_str().unwrap().to_owned())
            .or_default();
        s.0 += int(row, "impressions");
        s.1 += int(row, "clicks");
        s.2 += int(row, "costMicros");
        s.3 += conversions(row);
    }
    for row in &total {
        let id = row["campaign"]["id"].as_str().unwrap();
        let want = (
            int(row, "impressions"),
            int(row, "clicks"),
            int(row, "costMicros"),
            conversions(row),
        );
        assert_eq!(sums[id], want, "campaign {id}: daily rows vs the total");
    }
    // Conversions are the ENABLED rows of the conversion report over the same days.
    let events = rows(
        &fake,
        &format!("SELECT conversion.id, conversion.status, campaign.id FROM conversion {during}"),
        10_000,
    )
    .await;
    let enabled = events
        .iter()
        .filter(|r| r["conversion"]["status"] == "ENABLED")
        .count();
    assert!(enabled > 0);
    let customer = rows(
        &fake,
        &format!("SELECT customer.id, {METRICS} FROM customer {during}"),
        10_000,
    )
    .await;
    assert_eq!(customer.len(), 1);
    assert_eq!(conversions(&customer[0]), enabled as f64);
    let by_campaign: f64 = total.iter().map(conversions).sum();
    assert_eq!(by_campaign, enabled as f64);
}

#[tokio::test]
async fn pages_limit_and_order_by() {
    let fake = fake().await;
    let (from, to) = range(&fake);
    let query = format!(
        "SELECT ad_group.id, segments.date, metrics.clicks FROM ad_group \
         WHERE segments.date BETWEEN '{from}' AND '{to}'"
    );
    let whole = rows(&fake, &query, 10_000).await;
    assert_eq!(whole.len(), 12 * 10);
    assert_eq!(rows(&fake, &query, 7).await, whole, "pages of 7");
    let limited = rows(&fake, &format!("{query} LIMIT 10"), 3).await;
    assert_eq!(limited, whole[..10]);
    let sorted = rows(
        &fake,
        &format!("{query} ORDER BY metrics.clicks DESC, ad_group.id"),
        9,
    )
    .await;
    let clicks: Vec<i64> = sorted.iter().map(|r| int(r, "clicks")).collect();
    assert!(clicks.windows(2).all(|w| w[0] >= w[1]), "{clicks:?}");
    assert_eq!(sorted.len(), whole.len());
    // A metric condition holds on the aggregated rows.
    let many = rows(&fake, &format!("{query} AND metrics.clicks > 40"), 10_000).await;
    assert!(many.iter().all(|r| int(r, "clicks") > 40));
    assert_eq!(
        many.len(),
        whole.iter().filter(|r| int(r, "clicks") > 40).count()
    );
}

#[tokio::test]
async fn a_manager_has_no_metrics_of_its_own() {
    let fake = fake().await;
    let (status, body) = search_page(
        &fake,
        MANAGER,
        None,
        json!({"query": "SELECT customer.id, metrics.clicks FROM customer"}),
    )
    .await;
    assert_eq!(status, 400, "{body}");
    assert_eq!(
        body["error"]["details"][0]["errors"][0]["errorCode"]["queryError"],
        "REQUESTED_METRICS_FOR_MANAGER",
        "{body}"
    );
}

/// Every field the fake fills, selected from its resource: each value is filled and of the type the
/// fake's own catalogue (`searchAds360Fields.get`, read from discovery) gives, an ENUM value one of
/// the values it lists.
#[tokio::test]
async fn filled_enum_values_are_the_catalogues() {
    let fake = fake().await;
    let queries = [
        "SELECT customer.id, customer.resource_name, customer.descriptive_name, customer.currency_code, \
         customer.time_zone, customer.manager_id, customer.engine_id, customer.status FROM customer",
        "SELECT campaign.id, campaign.resource_name, campaign.name, campaign.status, \
         campaign.advertising_channel_type, campaign.bidding_strategy_type, campaign.bidding_strategy, \
         campaign.campaign_budget, bidding_strategy.id, bidding_strategy.resource_name, \
         bidding_strategy.name, bidding_strategy.status, bidding_strategy.type, \
         campaign_budget.resource_name, campaign_budget.amount_micros, campaign_budget.period, \
         campaign_budget.delivery_method FROM campaign",
        "SELECT ad_group.id, ad_group.resource_name, ad_group.name, ad_group.status, ad_group.type \
         FROM ad_group",
    ];
    let mut checked = 0;
    for query in queries {
        let rows = rows(&fake, query, 10_000).await;
        checked += assert_rows_fit_the_catalogue(&fake, query, &rows).await;
    }
    assert!(checked > 0);
}

//! Behaviour of the search ads fake, a module per operation or topic: reads, insert, update and
//! availability, saved columns, authentication, the ID-mapping download and the server itself.
//! The helpers they share are here.

mod auth;
mod id_mapping;
mod insert;
mod reads;
mod saved_columns;
mod server;
mod update;

use sa360_video_fakes::SearchAdsFake;
use serde_json::{Value, json};

use crate::common::{client, json};

async fn small_fake() -> SearchAdsFake {
    SearchAdsFake::builder()
        .conversions_per_account(2500)
        .conversions_per_day(100)
        .start()
        .await
        .expect("fake starts")
}

fn engine_url(fake: &SearchAdsFake, account: usize) -> String {
    let a = &fake.accounts()[account];
    format!(
        "{}/agency/{}/advertiser/{}/engine/{}/conversion",
        fake.base_url(),
        a.agency_id,
        a.advertiser_id,
        a.engine_account_id
    )
}

async fn get_page(fake: &SearchAdsFake, query: &str) -> (u16, Value) {
    let url = format!("{}?{query}", engine_url(fake, 0));
    json(client().get(url).bearer_auth(fake.dev_token())).await
}

fn rows(body: &Value) -> Vec<Value> {
    body["conversion"].as_array().cloned().unwrap_or_default()
}

fn ts(conversion: &Value) -> i64 {
    conversion["conversionTimestamp"]
        .as_str()
        .and_then(|s| s.parse().ok())
        .expect("timestamp")
}

fn conversion(fake: &SearchAdsFake, id: &str, ts: i64) -> Value {
    let a = &fake.accounts()[0];
    json!({
        "agencyId": a.agency_id.to_string(),
        "advertiserId": a.advertiser_id.to_string(),
        "engineAccountId": a.engine_account_id.to_string(),
        "conversionId": id,
        "conversionTimestamp": ts.to_string(),
        "segmentationType": "FLOODLIGHT",
        "segmentationName": "Purchase",
        "type": "TRANSACTION",
        "revenueMicros": "12500000",
        "currencyCode": "USD",
    })
}

async fn post_insert(fake: &SearchAdsFake, conversions: Vec<Value>) -> (u16, Value) {
    json(
        client()
            .post(format!("{}/conversion", fake.base_url()))
            .bearer_auth(fake.dev_token())
            .json(&json!({"kind": "doubleclicksearch#conversionList", "conversion": conversions})),
    )
    .await
}

async fn put_update(fake: &SearchAdsFake, conversions: Vec<Value>) -> (u16, Value) {
    json(
        client()
            .put(format!("{}/conversion", fake.base_url()))
            .bearer_auth(fake.dev_token())
            .json(&json!({"conversion": conversions})),
    )
    .await
}

const JAN_10: i64 = 1_704_844_800_000; // 2024-01-10T00:00:00Z

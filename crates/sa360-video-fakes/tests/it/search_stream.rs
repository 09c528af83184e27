//! `searchAds360:searchStream` (DECISIONS SR-33), read with the spec's generated types
//! (`sa360-reporting-client`'s `SearchSearchAds360StreamResponse`): the answer is a JSON array of
//! batches of at most `batchSize` rows (unset and at most 10 000), the rows those of `search` in
//! the same order, `requestId` in every batch, the summary row alone in a last batch, and the
//! refusals of `search`.

use crate::common;

use chrono::Days;
use common::{client, search_page};
use sa360_reporting_client::types::{ErrorResponse, SearchSearchAds360StreamResponse as Batch};
use sa360_video_fakes::SearchAdsFake;
use serde_json::{Value, json};

async fn fake(conversions: u64, per_day: u64) -> SearchAdsFake {
    let today = chrono::DateTime::<chrono::Utc>::from(std::time::SystemTime::now()).date_naive();
    SearchAdsFake::builder()
        .conversions_per_account(conversions)
        .conversions_per_day(per_day)
        .start_date(today - Days::new(conversions / per_day - 1))
        .start()
        .await
        .expect("starts")
}

/// The raw answer of a `searchStream` of the first account: status and body text.
async fn stream(fake: &SearchAdsFake, body: Value) -> (u16, String) {
    let response = client()
        .post(format!(
            "{}/v0/customers/{}/searchAds360:searchStream",
            fake.reporting_url(),
            fake.accounts()[0].customer_id
        ))
        .bearer_auth(fake.dev_token())
        .json(&body)
        .send()
        .await
        .expect("answer");
    let status = response.status().as_u16();
    if status == 200 {
        // Written batch by batch: no length known before the last one.
        assert!(response.content_length().is_none(), "a streamed body");
    }
    (status, response.text().await.expect("body"))
}

/// The batches of a successful answer, decoded with the spec's types, and checked for what every
/// answer has: a `requestId` and a `fieldMask` in each batch, the same in all, no page token.
async fn batches(fake: &SearchAdsFake, body: Value) -> Vec<Batch> {
    let (status, text) = stream(fake, body).await;
    assert_eq!(status, 200, "{text}");
    let raw: Vec<Value> = serde_json::from_str(&text).expect("a JSON array");
    assert!(
        raw.iter().all(|b| b.get("nextPageToken").is_none()),
        "{text}"
    );
    let batches: Vec<Batch> = serde_json::from_str(&text).expect("the spec's batches");
    assert!(!batches.is_empty(), "at least one batch");
    let first = &batches[0];
    assert!(first.request_id.as_deref().is_some_and(|id| !id.is_empty()));
    assert!(first.field_mask.is_some());
    for batch in &batches {
        assert_eq!(
            batch.request_id, first.request_id,
            "one requestId per answer"
        );
        assert_eq!(batch.field_mask, first.field_mask);
    }
    batches
}

fn sizes(batches: &[Batch]) -> Vec<usize> {
    batches.iter().map(|b| b.results.len()).collect()
}

fn conversion_query(fake: &SearchAdsFake, extra: &str) -> String {
    let (today, _) = fake.reporting_window();
    format!(
        "SELECT conversion.id, conversion.conversion_date_time, segments.date, campaign.id \
         FROM conversion WHERE segments.date BETWEEN '{}' AND '{today}'{extra}",
        today - Days::new(4)
    )
}

#[tokio::test]
async fn batches_hold_the_rows_of_search_in_order() {
    let fake = fake(2_000, 100).await;
    let query = conversion_query(&fake, "");
    let customer = fake.accounts()[0].customer_id.clone();
    let (status, page) = search_page(&fake, &customer, None, json!({"query": query})).await;
    assert_eq!(status, 200);
    let expected = page["results"].as_array().unwrap().clone();
    assert_eq!(expected.len(), 500);
    let before = fake.ledger().counts().reporting_stream_requests;
    let got = batches(&fake, json!({"query": query, "batchSize": 120})).await;
    assert_eq!(fake.ledger().counts().reporting_stream_requests, before + 1);
    assert_eq!(sizes(&got), [120, 120, 120, 120, 20]);
    assert!(
        got.iter().all(|b| b.summary_row.is_none()),
        "none asked for"
    );
    let rows: Vec<Value> = got
        .iter()
        .flat_map(|b| b.results.iter().map(|r| serde_json::to_value(r).unwrap()))
        .collect();
    let expected: Vec<Value> = expected
        .iter()
        .map(|r| {
            serde_json::to_value(
                serde_json::from_value::<sa360_reporting_client::types::SearchAds360Row>(r.clone())
                    .unwrap(),
            )
            .unwrap()
        })
        .collect();
    assert_eq!(rows, expected, "the rows of search, in its order");

    // LIMIT counts across batches.
    let limited = batches(
        &fake,
        json!({"query": conversion_query(&fake, " LIMIT 250"), "batchSize": 100}),
    )
    .await;
    assert_eq!(sizes(&limited), [100, 100, 50]);
    // An empty result is one batch without rows.
    let empty = batches(
        &fake,
        json!({"query": conversion_query(&fake, " AND conversion.id = 1")}),
    )
    .await;
    assert_eq!(sizes(&empty), [0]);
}

#[tokio::test]
async fn batch_size_is_ten_thousand_when_unset_and_at_most() {
    let fake = fake(12_000, 600).await;
    let (today, first) = fake.reporting_window();
    let query = format!(
        "SELECT conversion.id FROM conversion WHERE segments.date BETWEEN '{}' AND '{today}'",
        first.max(today - Days::new(25))
    );
    for body in [
        json!({"query": query}),
        json!({"query": query, "batchSize": 0}),
        json!({"query": query, "batchSize": -3}),
        json!({"query": query, "batchSize": 50_000}),
        json!({"query": query, "batchSize": "50000"}),
    ] {
        let got = batches(&fake, body.clone()).await;
        assert_eq!(sizes(&got), [10_000, 2_000], "{body}");
    }
}

#[tokio::test]
async fn the_summary_row_comes_alone_in_the_last_batch() {
    let fake = fake(2_000, 100).await;
    let query = "SELECT campaign.id, segments.date, metrics.impressions, metrics.clicks, \
                 metrics.cost_micros, metrics.ctr FROM campaign WHERE segments.date DURING LAST_7_DAYS";
    let plain = batches(&fake, json!({"query": query, "batchSize": 7})).await;
    let rows: usize = sizes(&plain).iter().sum();
    assert!(rows > 7, "{rows} rows: more than one batch");
    let got = batches(
        &fake,
        json!({"query": query, "batchSize": 7, "summaryRowSetting": "SUMMARY_ROW_WITH_RESULTS"}),
    )
    .await;
    let (last, rest) = got.split_last().unwrap();
    assert!(
        last.results.is_empty(),
        "the summary row's batch has no rows"
    );
    assert!(rest.iter().all(|b| b.summary_row.is_none()));
    assert_eq!(
        sizes(rest),
        sizes(&plain),
        "the batches of rows are unchanged"
    );
    assert!(sizes(rest).iter().all(|&n| n <= 7));
    let metric = |m: &sa360_reporting_client::types::Metrics, f: &str| match f {
        "clicks" => m.clicks.as_ref().map_or(0, |v| v.0),
        "impressions" => m.impressions.as_ref().map_or(0, |v| v.0),
        _ => m.cost_micros.as_ref().map_or(0, |v| v.0),
    };
    let summary = last.summary_row.as_ref().expect("a summary row");
    let totals = summary.metrics.as_ref().expect("the selected metrics");
    assert!(
        summary.campaign.is_none() && summary.segments.is_none(),
        "no attributes"
    );
    for field in ["clicks", "impressions", "cost_micros"] {
        let sum: i64 = rest
            .iter()
            .flat_map(|b| &b.results)
            .map(|r| metric(r.metrics.as_ref().unwrap(), field))
            .sum();
        assert_eq!(metric(totals, field), sum, "{field}");
        assert!(sum > 0, "{field}");
    }
    let (clicks, impressions) = (metric(totals, "clicks"), metric(totals, "impressions"));
    assert_eq!(totals.ctr, Some(clicks as f64 / impressions as f64));

    let only = batches(
        &fake,
        json!({"query": query, "batchSize": 7, "summaryRowSetting": "SUMMARY_ROW_ONLY"}),
    )
    .await;
    assert_eq!(sizes(&only), [0], "one batch");
    assert_eq!(only[0].summary_row, last.summary_row);
    for setting in ["NO_SUMMARY_ROW", "UNSPECIFIED"] {
        let none = batches(
            &fake,
            json!({"query": query, "batchSize": 7, "summaryRowSetting": setting}),
        )
        .await;
        assert!(none.iter().all(|b| b.summary_row.is_none()), "{setting}");
    }
}

#[tokio::test]
async fn members_of_the_wrong_type_are_refused() {
    let fake = fake(2_000, 100).await;
    let query = conversion_query(&fake, "");
    for (member, value) in [
        ("batchSize", json!("ten")),
        ("batchSize", json!(1.5)),
        ("batchSize", json!(3_000_000_000_u64)),
        ("summaryRowSetting", json!("SUMMARY_ROW")),
        ("summaryRowSetting", json!(9)),
    ] {
        let (status, text) = stream(&fake, json!({"query": query, member: value})).await;
        assert_eq!(status, 400, "{member}: {value}: {text}");
        let error: ErrorResponse = serde_json::from_str(&text).expect("the spec's error");
        assert!(error.error.message.is_some(), "{text}");
    }
    // A number of the enum is one of its values (Google's JSON mapping).
    let only = batches(&fake, json!({"query": query, "summaryRowSetting": 4})).await;
    assert!(only.len() == 1 && only[0].summary_row.is_some());
}

#[tokio::test]
async fn refusals_are_those_of_search() {
    let fake = fake(2_000, 100).await;
    let customer = fake.accounts()[0].customer_id.clone();
    for query in [
        "",
        "SELECT conversion.id FROM conversion WHERE conversion.nope = 1",
        "SELECT conversion.id, metrics.clicks FROM conversion",
        "SELECT conversion.id FROM conversion WHERE segments.date >= '2001-01-01'",
    ] {
        let (status, text) = stream(&fake, json!({"query": query})).await;
        let error: ErrorResponse = serde_json::from_str(&text).expect("the spec's error");
        let body: Value = serde_json::from_str(&text).unwrap();
        let (search_status, search) =
            search_page(&fake, &customer, None, json!({"query": query})).await;
        assert_eq!(status, search_status, "{query}: {text}");
        assert!(status >= 400, "{query}: refused");
        let code = |v: &Value| v["error"]["details"][0]["errors"][0]["errorCode"].clone();
        assert_eq!(code(&body), code(&search), "{query}");
        let search_status = search["error"]["status"].as_str().map(str::to_owned);
        assert_eq!(error.error.status, search_status, "{query}");
    }
}

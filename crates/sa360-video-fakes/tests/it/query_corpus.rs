//! The corpus of Google's example queries (`tests/fixtures/query_corpus.json`, each fixture naming
//! the page it comes from), sent over HTTP to the Reporting API fake: the ones the fake serves are
//! accepted with their documented meaning (a `days` fixture returns rows of exactly those days,
//! the same rows as the plain `BETWEEN` query over the hand-computed range), the others get the
//! documented error.

use crate::common::{client, json, search_page};

use std::collections::BTreeSet;
use std::time::{Duration, SystemTime};

use chrono::{NaiveDate, NaiveTime};
use sa360_video_fakes::{FakeClock, ReportingConfig, SearchAdsFake};
use serde_json::{Value, json};

const MANAGER: &str = "2000012300";

fn fixtures() -> Vec<Value> {
    let text = include_str!("../fixtures/query_corpus.json");
    let doc: Value = serde_json::from_str(text).expect("corpus is JSON");
    doc["fixtures"].as_array().expect("fixtures").clone()
}

/// The fake on Wednesday 2100-03-10, 12:00 UTC (60-day window).
async fn fake_in_2100() -> SearchAdsFake {
    let today: NaiveDate = "2100-03-10".parse().unwrap();
    let noon = today
        .and_time(NaiveTime::from_hms_opt(12, 0, 0).unwrap())
        .and_utc();
    let target = SystemTime::UNIX_EPOCH + Duration::from_secs(noon.timestamp() as u64);
    let clock = FakeClock::new();
    clock.advance(
        target
            .duration_since(SystemTime::now())
            .expect("2100 is ahead"),
    );
    let fake = SearchAdsFake::builder()
        .clock(clock)
        .conversions_per_account(2_000)
        .conversions_per_day(24)
        .start_date(today - chrono::Days::new(70))
        .start()
        .await
        .expect("starts");
    assert_eq!(fake.reporting_window().0, today);
    fake
}

/// The fake on the real clock with a 100-year window, for the pages' 2019 and 2021 dates.
async fn fake_with_long_window() -> SearchAdsFake {
    SearchAdsFake::builder()
        .conversions_per_account(4_000)
        .conversions_per_day(4)
        .start_date("2018-12-01".parse().unwrap())
        .reporting(ReportingConfig {
            window_days: 36_500,
            ..ReportingConfig::default()
        })
        .start()
        .await
        .expect("starts")
}

/// Every row of `query` (all pages), or the error body.
async fn search_all(fake: &SearchAdsFake, query: &str) -> Result<Vec<Value>, Value> {
    let customer = &fake.accounts()[0].customer_id;
    let mut rows = Vec::new();
    let mut token: Option<String> = None;
    for _ in 0..1_000 {
        let mut body = json!({"query": query, "pageSize": 1_000});
        if let Some(t) = &token {
            body["pageToken"] = json!(t);
        }
        let (status, page) = search_page(fake, customer, Some(MANAGER), body).await;
        if status != 200 {
            return Err(page);
        }
        rows.extend(page["results"].as_array().cloned().unwrap_or_default());
        match page["nextPageToken"].as_str() {
            Some(t) => token = Some(t.to_owned()),
            None => return Ok(rows),
        }
    }
    panic!("more than 1000 pages: {query}");
}

async fn fields(fake: &SearchAdsFake, query: &str) -> (u16, Value) {
    json(
        client()
            .post(format!(
                "{}/v0/searchAds360Fields:search",
                fake.reporting_url()
            ))
            .bearer_auth(fake.dev_token())
            .json(&json!({"query": query})),
    )
    .await
}

fn ids(rows: &[Value]) -> BTreeSet<String> {
    rows.iter()
        .map(|r| {
            r["conversion"]["id"]
                .as_str()
                .expect("conversion.id")
                .to_owned()
        })
        .collect()
}

fn error_code(body: &Value, kind: &str) -> String {
    body["error"]["details"][0]["errors"][0]["errorCode"][kind]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

#[tokio::test]
async fn every_example_of_googles_query_pages() {
    let in_2100 = fake_in_2100().await;
    let long = fake_with_long_window().await;
    let (mut accepted, mut refused) = (0, 0);
    for f in fixtures() {
        let query = f["query"].as_str().unwrap();
        let source = f["source"].as_str().unwrap();
        assert!(
            source.starts_with("https://") || source.starts_with("issue"),
            "{f}"
        );
        let expect = &f["expect"];
        let fake = match f["fake"].as_str().unwrap() {
            "long-window" => &long,
            _ => &in_2100,
        };
        if f["fake"] == "fields" {
            let (status, body) = fields(fake, query).await;
            if let Some(code) = expect["code"].as_str() {
                assert_eq!(status, 400, "{query}: {body}");
                assert_eq!(error_code(&body, "queryError"), code, "{query}: {body}");
                refused += 1;
            } else {
                assert_eq!(status, 200, "{query}: {body}");
                let names: Vec<&str> = body["results"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|r| {
                        r["resourceName"]
                            .as_str()
                            .unwrap()
                            .trim_start_matches("searchAds360Fields/")
                    })
                    .collect();
                assert_eq!(json!(names), expect["names"], "{query}");
                accepted += 1;
            }
            continue;
        }
        let answer = search_all(fake, query).await;
        if let Some(code) = expect["code"].as_str() {
            let body = answer.expect_err(query);
            let kind = expect["error"].as_str().unwrap();
            assert_eq!(error_code(&body, kind), code, "{query}: {body}");
            assert_eq!(body["error"]["code"], 400, "{query}");
            refused += 1;
            continue;
        }
        let rows = answer.unwrap_or_else(|e| panic!("{query} ({source}): {e}"));
        accepted += 1;
        if let Some(n) = expect["rows"].as_u64() {
            assert_eq!(rows.len() as u64, n, "{query}: rows");
        }
        let Some(days) = expect["days"].as_array() else {
            continue;
        };
        // The documented meaning: exactly the rows of these days, the same rows as BETWEEN.
        let (from, to) = (days[0].as_str().unwrap(), days[1].as_str().unwrap());
        let reference = search_all(
            fake,
            &format!(
                "SELECT conversion.id, conversion.conversion_date_time FROM conversion \
                 WHERE segments.date BETWEEN '{from}' AND '{to}'"
            ),
        )
        .await
        .expect("the reference query");
        assert!(!rows.is_empty(), "{query}: no rows");
        let (got, want) = (ids(&rows), ids(&reference));
        assert!(
            got == want,
            "{query}: {} rows, {} rows in {from}..{to}, {} in only one of them",
            got.len(),
            want.len(),
            got.symmetric_difference(&want).count()
        );
        let dates: BTreeSet<&str> = reference
            .iter()
            .map(|r| &r["conversion"]["conversionDateTime"].as_str().unwrap()[..10])
            .collect();
        let today = fake.reporting_window().0.to_string();
        let last = if to > today.as_str() {
            today.as_str()
        } else {
            to
        };
        assert_eq!(dates.first(), Some(&from), "{query}");
        assert_eq!(dates.last(), Some(&last), "{query}");
    }
    // The corpus size (reported in the closing note).
    eprintln!("query corpus: {accepted} accepted, {refused} documented errors");
    assert_eq!((accepted, refused), (44, 24));
}

//! The synthetic campaigns of `report_campaigns` (DECISIONS SR-22, a setting of the fake for load
//! tests): added after each account's seeded campaigns in the reports of `customer`, `campaign` and
//! `ad_group`, with one ad group each, deterministic attributes and metrics, no conversions; the
//! seeded campaigns' rows unchanged; bounded, on the builder and on the binary's flag and
//! environment variable.

use crate::common::{search_page, search_pages};

use std::collections::{BTreeMap, BTreeSet};

use chrono::Days;
use sa360_video_fakes::search_ads::{MAX_REPORT_CAMPAIGNS, SEEDED_CAMPAIGNS};
use sa360_video_fakes::{FakeError, SearchAdsFake};
use serde_json::{Value, json};

const SYNTHETIC: u64 = 21;

async fn fake(report_campaigns: u64) -> SearchAdsFake {
    let today = chrono::DateTime::<chrono::Utc>::from(std::time::SystemTime::now()).date_naive();
    SearchAdsFake::builder()
        .conversions_per_account(3_000)
        .conversions_per_day(150)
        .start_date(today - Days::new(19))
        .report_campaigns(report_campaigns)
        .start()
        .await
        .expect("starts")
}

/// Every row of `query` in pages of `size`, and the number of pages.
async fn rows(fake: &SearchAdsFake, query: &str, size: u32) -> (Vec<Value>, usize) {
    search_pages(fake, query, size).await
}

fn during(fake: &SearchAdsFake, days: u64) -> String {
    let (today, _) = fake.reporting_window();
    format!(
        "WHERE segments.date BETWEEN '{}' AND '{}'",
        today - Days::new(days),
        today - Days::new(1)
    )
}

fn int(row: &Value, resource: &str, member: &str) -> i64 {
    row[resource][member]
        .as_str()
        .unwrap_or_else(|| panic!("{resource}.{member} is an int64 string: {row}"))
        .parse()
        .unwrap()
}

const CAMPAIGN_DAY: &str = "SELECT campaign.id, campaign.name, campaign.status, segments.date, \
metrics.impressions, metrics.clicks, metrics.cost_micros, metrics.conversions FROM campaign";

#[tokio::test]
async fn synthetic_campaigns_follow_the_seeded_ones_with_consistent_metrics() {
    let (plain, scaled) = (fake(0).await, fake(SYNTHETIC).await);
    let query = format!("{CAMPAIGN_DAY} {}", during(&plain, 10));
    let (seeded, _) = rows(&plain, &query, 10_000).await;
    let (all, _) = rows(&scaled, &query, 10_000).await;
    let campaigns = (SEEDED_CAMPAIGNS + SYNTHETIC) as usize;
    assert_eq!(seeded.len(), SEEDED_CAMPAIGNS as usize * 10);
    assert_eq!(all.len(), campaigns * 10, "a row per campaign and day");
    // The seeded campaigns' rows come first and are the very rows of the fake without them.
    assert_eq!(all[..seeded.len()], seeded[..]);
    let mut ids = BTreeMap::new();
    let mut paused = 0;
    for row in &all[seeded.len()..] {
        let id = int(row, "campaign", "id");
        let name = row["campaign"]["name"].as_str().unwrap().to_owned();
        assert_eq!(ids.entry(id).or_insert_with(|| name.clone()), &name);
        if row["campaign"]["status"] == "PAUSED" {
            paused += 1;
        }
        let (impressions, clicks, cost) = (
            int(row, "metrics", "impressions"),
            int(row, "metrics", "clicks"),
            int(row, "metrics", "costMicros"),
        );
        assert!(impressions >= clicks && clicks >= 0, "{row}");
        assert!(cost >= 0 && cost % 10_000 == 0, "whole cents: {row}");
        assert_eq!(
            row["metrics"]["conversions"],
            json!(0.0),
            "no conversions: {row}"
        );
    }
    assert_eq!(
        ids.len(),
        SYNTHETIC as usize,
        "one id per synthetic campaign"
    );
    let seeded_ids: BTreeSet<i64> = seeded.iter().map(|r| int(r, "campaign", "id")).collect();
    assert!(ids.keys().all(|id| !seeded_ids.contains(id)), "ids are new");
    assert!(
        paused > 0 && paused < (SYNTHETIC * 10) as usize,
        "some paused: {paused}"
    );
    // Deterministic: another fake with the same seed answers the same rows; paging does not change
    // them.
    let again = fake(SYNTHETIC).await;
    let (paged, pages) = rows(&again, &query, 7).await;
    assert_eq!(pages, (campaigns * 10).div_ceil(7));
    assert_eq!(paged, all);
}

#[tokio::test]
async fn ad_group_and_customer_reports_count_the_synthetic_campaigns() {
    let (plain, scaled) = (fake(0).await, fake(SYNTHETIC).await);
    let range = during(&plain, 5);
    let ad_groups = format!(
        "SELECT ad_group.id, campaign.id, metrics.clicks, metrics.conversions FROM ad_group {range}"
    );
    let (seeded, _) = rows(&plain, &ad_groups, 10_000).await;
    let (all, _) = rows(&scaled, &ad_groups, 10_000).await;
    assert_eq!(seeded.len(), 12);
    assert_eq!(
        all.len(),
        12 + SYNTHETIC as usize,
        "one ad group per synthetic campaign"
    );
    assert_eq!(all[..12], seeded[..]);
    // The customer's totals are the sums of its campaigns', the synthetic ones included.
    let total = |rows: &[Value]| -> i64 { rows.iter().map(|r| int(r, "metrics", "clicks")).sum() };
    let customer = format!("SELECT customer.id, metrics.clicks FROM customer {range}");
    let (plain_customer, _) = rows(&plain, &customer, 10_000).await;
    let (scaled_customer, _) = rows(&scaled, &customer, 10_000).await;
    assert_eq!(total(&plain_customer), total(&seeded));
    assert_eq!(total(&scaled_customer), total(&all));
    assert!(total(&all) > total(&seeded));
}

#[tokio::test]
async fn the_builder_refuses_more_campaigns_than_the_bound() {
    let err = SearchAdsFake::builder()
        .report_campaigns(MAX_REPORT_CAMPAIGNS + 1)
        .start()
        .await
        .expect_err("over the bound");
    let FakeError::Config(message) = &err else {
        panic!("a configuration error: {err:?}");
    };
    assert!(message.contains("report_campaigns"), "{message}");
    assert!(message.contains("--report-campaigns"), "{message}");
    SearchAdsFake::builder()
        .report_campaigns(MAX_REPORT_CAMPAIGNS)
        .start()
        .await
        .expect("the bound itself is served");
}

#[test]
fn the_binary_refuses_more_campaigns_than_the_bound() {
    let over = (MAX_REPORT_CAMPAIGNS + 1).to_string();
    for (args, env) in [
        (vec!["--report-campaigns", over.as_str()], None),
        (Vec::new(), Some(("FAKE_REPORT_CAMPAIGNS", over.as_str()))),
    ] {
        let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_sa360-video-fakes"));
        command
            .args(["--search-ads-port", "0", "--video-port", "0"])
            .args(&args)
            .env("RUST_LOG", "warn")
            .stdin(std::process::Stdio::null());
        if let Some((name, value)) = env {
            command.env(name, value);
        }
        let mut child = command
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("runs");
        // A binary that accepted the setting would serve until killed: give it 30 s to exit.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
        while child.try_wait().expect("waits").is_none() {
            if std::time::Instant::now() > deadline {
                let _ = child.kill();
                let _ = child.wait();
                panic!("{args:?} {env:?}: still running after 30 s");
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        let out = child.wait_with_output().expect("output");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{args:?} {env:?}: {stderr}");
        assert!(stderr.contains("report_campaigns"), "{stderr}");
        assert!(out.stdout.is_empty(), "no connection lines: {args:?}");
    }
}

#[tokio::test]
async fn an_order_by_sorts_a_bounded_number_of_rows_and_the_natural_order_pages() {
    let fake = fake(MAX_REPORT_CAMPAIGNS).await;
    let customer = fake.accounts()[0].customer_id.clone();
    let query = format!(
        "SELECT campaign.id, segments.date, segments.device, metrics.clicks FROM campaign {}",
        during(&fake, 30)
    );
    let search = |query: String| {
        search_page(
            &fake,
            &customer,
            None,
            json!({"query": query, "pageSize": 10_000}),
        )
    };
    // 10 004 campaigns × 30 days × 3 devices: more rows than the fake sorts (SR-22 g, SR-16).
    let (status, body) = search(format!("{query} ORDER BY metrics.clicks")).await;
    assert_eq!(status, 400, "{}", body["error"]);
    assert_eq!(
        body["error"]["details"][0]["errors"][0]["errorCode"]["sizeLimitError"],
        "RESPONSE_SIZE_LIMIT_EXCEEDED",
        "{body}"
    );
    // In its own order the same query pages.
    let (status, body) = search(query).await;
    assert_eq!(status, 200, "{}", body["error"]);
    assert_eq!(body["results"].as_array().map(Vec::len), Some(10_000));
    assert!(body["nextPageToken"].is_string(), "{}", body["fieldMask"]);
}

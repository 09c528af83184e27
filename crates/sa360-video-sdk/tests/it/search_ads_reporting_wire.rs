//! Snapshots of the Reporting API search requests the SDK sends, one per filter, taken by a
//! capturing server: method, path, the relevant headers (`login-customer-id` included) and the
//! JSON body with the query text. The token is checked, then redacted. Also the second page's
//! request (same query, `pageToken`) and the requests of one report split into date shards.

use crate::local_server::{Log, header_text, read_request, serve};

use axum::Router;
use axum::extract::{Request, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use chrono::NaiveDate;
use futures::TryStreamExt;
use sa360_video_sdk::search_ads::{
    AdGroupId, AdId, CampaignId, CriterionId, CustomerId, DateRange, RetryPolicy, SearchAdsClient,
    StaticToken,
    reporting::{ConversionStatus, ReportFilters, ReportOptions},
};
use serde_json::{Value, json};

const TOKEN: &str = "wire-test-token";

async fn capture(State(log): State<Log>, request: Request) -> Response {
    let (parts, body) = read_request(request).await;
    assert_eq!(
        header_text(&parts.headers, "authorization"),
        json!(format!("Bearer {TOKEN}"))
    );
    let body: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let first_page = body.get("pageToken").is_none();
    log.0.lock().expect("not poisoned").push(json!({
        "method": parts.method.as_str(),
        "path": parts.uri.path(),
        "query_string": parts.uri.query(),
        "headers": {
            "api-version": header_text(&parts.headers, "api-version"),
            "authorization": "Bearer [redacted]",
            "content-type": header_text(&parts.headers, "content-type"),
            "login-customer-id": header_text(&parts.headers, "login-customer-id"),
        },
        "body": body,
    }));
    // One row; the first page says there is a second.
    let mut page = json!({
        "results": [{
            "conversion": {"id": "1", "conversionDateTime": "2026-11-01 10:00:00+00:00", "status": "ENABLED"},
            "segments": {"date": "2026-11-01"},
        }],
        "fieldMask": "conversion.id",
    });
    if first_page && parts.uri.path().ends_with(":search") && log.0.lock().expect("x").len() == 1 {
        page["nextPageToken"] = json!("page-2");
        page["results"][0]["conversion"]["id"] = json!("0");
    }
    (
        StatusCode::OK,
        [(header::CONTENT_TYPE, "application/json")],
        page.to_string(),
    )
        .into_response()
}

async fn server() -> (SearchAdsClient, Log) {
    server_through(None).await
}

/// The capturing server, and a client of it reading through `manager` when given.
async fn server_through(manager: Option<&str>) -> (SearchAdsClient, Log) {
    let log = Log::default();
    let app = Router::new().fallback(capture).with_state(log.clone());
    let origin = serve(app).await;
    let mut builder = SearchAdsClient::builder(StaticToken::new(TOKEN));
    if let Some(manager) = manager {
        builder = builder.login_customer_id(CustomerId::new(manager).expect("id"));
    }
    let client = builder
        .reporting_base_url(origin.clone())
        .retry_policy(RetryPolicy::no_retries())
        .build()
        .expect("builds");
    (client, log)
}

fn day(y: i32, m: u32, d: u32) -> NaiveDate {
    NaiveDate::from_ymd_opt(y, m, d).expect("a date")
}

const TODAY: (i32, u32, u32) = (2026, 11, 23);

async fn requests_for(filters: ReportFilters, login: Option<&str>) -> Vec<Value> {
    let (client, log) = server_through(login).await;
    let options = ReportOptions::default()
        .page_size(500)
        .shard_days(30)
        .look_ahead(1)
        .filters(filters);
    let dates = DateRange::new(day(2026, 11, 1), day(2026, 11, 7)).expect("range");
    let report = client
        .conversion_report(CustomerId::new("2000012350").expect("id"), dates)
        .options(options)
        .today(day(TODAY.0, TODAY.1, TODAY.2))
        .stream();
    let rows: Vec<_> = report.try_collect().await.expect("rows");
    assert_eq!(rows.len(), 2, "one row per page, two pages");
    log.take()
}

#[tokio::test]
async fn no_filter_and_the_next_page() {
    let requests = requests_for(ReportFilters::default(), None).await;
    assert_eq!(requests.len(), 2);
    assert_eq!(requests[0]["body"]["query"], requests[1]["body"]["query"]);
    insta::assert_yaml_snapshot!(requests);
}

#[tokio::test]
async fn campaign_filter_with_login_customer_id() {
    let filters = ReportFilters::default().campaign_ids(vec![CampaignId::new(10_000_000_123)]);
    let requests = requests_for(filters, Some("2000012300")).await;
    insta::assert_yaml_snapshot!(requests[0]);
}

#[tokio::test]
async fn ad_group_filter() {
    let filters = ReportFilters::default().ad_group_ids(vec![
        AdGroupId::new(100_000_000_001),
        AdGroupId::new(100_000_000_002),
    ]);
    insta::assert_yaml_snapshot!(requests_for(filters, None).await[0]["body"]);
}

#[tokio::test]
async fn ad_filter() {
    let filters = ReportFilters::default().ad_ids(vec![AdId::new(44_700_000_000_000_001)]);
    insta::assert_yaml_snapshot!(requests_for(filters, None).await[0]["body"]);
}

#[tokio::test]
async fn criterion_filter() {
    let filters =
        ReportFilters::default().criterion_ids(vec![CriterionId::new(43_700_000_000_000_002)]);
    insta::assert_yaml_snapshot!(requests_for(filters, None).await[0]["body"]);
}

#[tokio::test]
async fn status_filter() {
    let filters = ReportFilters::default().statuses(vec![ConversionStatus::Removed]);
    insta::assert_yaml_snapshot!(requests_for(filters, None).await[0]["body"]);
}

#[tokio::test]
async fn advertiser_conversion_id_filter_is_escaped() {
    let filters = ReportFilters::default()
        .advertiser_conversion_ids(vec!["order-1".into(), r"it's \ OR 1=1 --".into()]);
    insta::assert_yaml_snapshot!(requests_for(filters, None).await[0]["body"]);
}

#[tokio::test]
async fn shards_are_separate_queries_in_date_order() {
    let (client, log) = server().await;
    let options = ReportOptions::default()
        .page_size(10_000)
        .shard_days(3)
        .look_ahead(1);
    let dates = DateRange::new(day(2026, 11, 1), day(2026, 11, 7)).expect("range");
    let report = client
        .conversion_report(CustomerId::new("2000012350").expect("id"), dates)
        .options(options)
        .today(day(TODAY.0, TODAY.1, TODAY.2))
        .stream();
    let _: Vec<_> = report.try_collect().await.expect("rows");
    let queries: Vec<String> = log
        .take()
        .iter()
        .map(|r| {
            let q = r["body"]["query"].as_str().expect("query").to_owned();
            let start = q.find("segments.date BETWEEN").expect("date filter");
            q[start..start + 50].to_owned()
        })
        .collect();
    // The first shard answered with a next page (see `capture`), so it has two requests.
    insta::assert_yaml_snapshot!(queries);
}

/// A page cut short (a 200 whose JSON ends early: a proxy, a dropped connection) is asked for
/// again like any answer that is not the documented JSON, and its rows still arrive once, in
/// order, although its next page token was read (and the next page asked for) before the cut
/// was found.
#[tokio::test]
async fn a_page_cut_short_is_asked_for_again() {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};
    let first_pages = Arc::new(AtomicUsize::new(0));
    let seen = first_pages.clone();
    let app = Router::new().fallback(move |request: Request| {
        let first_pages = first_pages.clone();
        async move {
            let (_, body) = read_request(request).await;
            let body: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
            let second = body.get("pageToken").is_some();
            let (id, time) = if second { ("2", "11") } else { ("1", "10") };
            let page = json!({
                "nextPageToken": if second { Value::Null } else { json!("page-2") },
                "results": [{
                    "conversion": {"id": id, "conversionDateTime": format!("2026-11-01 {time}:00:00+00:00")},
                    "segments": {"date": "2026-11-01"},
                }],
            })
            .to_string();
            let cut = !second && first_pages.fetch_add(1, Ordering::SeqCst) == 0;
            let text = if cut { page[..page.len() - 30].to_owned() } else { page };
            (StatusCode::OK, [(header::CONTENT_TYPE, "application/json")], text).into_response()
        }
    });
    let origin = serve(app).await;
    let client = SearchAdsClient::builder(StaticToken::new(TOKEN))
        .reporting_base_url(origin)
        .retry_policy(RetryPolicy::default())
        .build()
        .expect("builds");
    let dates = DateRange::new(day(2026, 11, 1), day(2026, 11, 1)).expect("range");
    let rows: Vec<_> = client
        .conversion_report(CustomerId::new("2000012350").expect("id"), dates)
        .today(day(TODAY.0, TODAY.1, TODAY.2))
        .stream()
        .try_collect()
        .await
        .expect("the cut page is asked for again");
    let ids: Vec<_> = rows
        .iter()
        .map(|c| c.ds_conversion_id.map(|d| d.get()))
        .collect();
    assert_eq!(ids, [Some(1), Some(2)]);
    assert_eq!(seen.load(Ordering::SeqCst), 2, "the first page twice");
}

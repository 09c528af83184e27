//! Reports of any resource (`SearchAdsClient::search`) against the fake and a capturing server:
//! rows decoded into a caller's struct and into the generated row, every page read once, retried
//! quota errors, queries refused before anything is sent (with the nearest name), the builder's
//! text on the wire, custom columns, a row that does not fit, and the rows held ahead of a reader
//! that does not read.

use crate::local_server::{Log, read_request, serve};
use crate::search_ads_support as support;

use std::collections::BTreeSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use axum::Router;
use axum::extract::{Request, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use chrono::Days;
use futures::{StreamExt, TryStreamExt};
use sa360_video_fakes::{ReportingFaults, SearchAdsFake, SearchAdsFakeBuilder};
use sa360_video_sdk::search_ads::reporting::fields::{self, Resource};
use sa360_video_sdk::search_ads::reporting::{DuringRange, Query, SummaryRow, WithUnknown};
use sa360_video_sdk::search_ads::{CustomerId, Error, RetryPolicy, SearchAdsClient, StaticToken};
use serde::Deserialize;
use serde_json::{Value, json};
use test_support::TraceCapture;

/// A fake whose seeded data ends today: `per_day` conversions a day for `days` days.
fn recent(days: u64, per_day: u64) -> SearchAdsFakeBuilder {
    let today = chrono::DateTime::<chrono::Utc>::from(std::time::SystemTime::now()).date_naive();
    SearchAdsFake::builder()
        .conversions_per_account(days * per_day)
        .conversions_per_day(per_day)
        .start_date(today - Days::new(days - 1))
}

fn client(fake: &SearchAdsFake, retry: RetryPolicy) -> SearchAdsClient {
    SearchAdsClient::builder(StaticToken::new(fake.dev_token()))
        .base_url(fake.base_url())
        .reporting_base_url(fake.reporting_url())
        .retry_policy(retry)
        .build()
        .expect("the client builds")
}

fn customer(fake: &SearchAdsFake) -> CustomerId {
    CustomerId::new(fake.accounts()[0].customer_id.clone()).expect("digits")
}

fn searches(fake: &SearchAdsFake) -> u64 {
    fake.ledger().counts().reporting_search_requests
}

/// A caller's row, nested as the JSON is.
#[derive(Debug, Deserialize, PartialEq, Eq, PartialOrd, Ord)]
struct Row {
    conversion: Conv,
    segments: Segments,
}

#[derive(Debug, Deserialize, PartialEq, Eq, PartialOrd, Ord)]
#[serde(rename_all = "camelCase")]
struct Conv {
    id: String,
    status: String,
}

#[derive(Debug, Deserialize, PartialEq, Eq, PartialOrd, Ord)]
struct Segments {
    date: String,
}

const QUERY: &str = "SELECT conversion.id, conversion.status, segments.date FROM conversion \
                     WHERE segments.date DURING LAST_7_DAYS";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rows_decode_into_the_callers_struct_page_by_page() {
    let fake = support::start(recent(10, 40)).await;
    let client = client(&fake, support::fast_retries(3));
    let rows: Vec<Row> = client
        .search(customer(&fake), QUERY)
        .page_size(37)
        .stream()
        .try_collect()
        .await
        .expect("the report");
    // Seven days of 40 conversions, today excluded.
    assert_eq!(rows.len(), 7 * 40);
    let ids: BTreeSet<&str> = rows.iter().map(|r| r.conversion.id.as_str()).collect();
    assert_eq!(ids.len(), rows.len(), "every row once");
    assert!(
        rows.iter()
            .all(|r| r.conversion.status == "ENABLED" || r.conversion.status == "REMOVED")
    );
    let today = fake.reporting_window().0;
    assert!(rows.iter().all(|r| r.segments.date < today.to_string()));
    // 280 rows in pages of 37: 8 pages, each asked for once.
    assert_eq!(searches(&fake), 8);

    // The same rows into the generated row type, collected with send().
    let generated: Vec<sa360_reporting_client::types::SearchAds360Row> = client
        .search(customer(&fake), QUERY)
        .page_size(100)
        .send()
        .await
        .expect("the report")
        .rows;
    let generated_ids: BTreeSet<String> = generated
        .iter()
        .filter_map(|r| r.conversion.as_ref()?.id.map(|id| id.to_string()))
        .collect();
    assert_eq!(generated_ids.len(), rows.len());
    assert!(ids.iter().all(|id| generated_ids.contains(*id)));

    // send() is bounded by max_rows.
    let error = client
        .search(customer(&fake), QUERY)
        .max_rows(10)
        .send::<Row>()
        .await
        .unwrap_err();
    assert!(
        matches!(&error, Error::Validation { field, .. } if field == "max_rows"),
        "{error}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn quota_errors_are_retried_and_every_row_comes_once() {
    let fake = support::start(recent(10, 40).reporting_faults(ReportingFaults {
        seed: 3,
        quota_exhausted: 0.3,
        expired_page_token: 0.0,
        retry_delay: Duration::from_millis(2),
    }))
    .await;
    let client = client(&fake, support::fast_retries(12));
    let rows: Vec<Row> = client
        .search(customer(&fake), QUERY)
        .page_size(20)
        .look_ahead(3)
        .stream()
        .try_collect()
        .await
        .expect("the report");
    let ids: BTreeSet<&str> = rows.iter().map(|r| r.conversion.id.as_str()).collect();
    assert_eq!((rows.len(), ids.len()), (280, 280));
    assert!(
        searches(&fake) > 14,
        "some pages were retried: {}",
        searches(&fake)
    );
}

#[tokio::test]
async fn a_misspelt_field_is_refused_with_the_nearest_name_and_nothing_is_sent() {
    let fake = support::start(recent(3, 5)).await;
    let client = client(&fake, support::fast_retries(3));
    let cases = [
        (
            "SELECT conversion.idd FROM conversion",
            "UNRECOGNIZED_FIELD",
            "conversion.idd",
            Some("conversion.id"),
        ),
        (
            "SELECT campaign.id FROM campaing",
            "BAD_RESOURCE_TYPE_IN_FROM_CLAUSE",
            "campaing",
            Some("campaign"),
        ),
        (
            "SELECT conversion.id, metrics.clicks FROM conversion",
            "PROHIBITED_METRIC_IN_SELECT_OR_WHERE_CLAUSE",
            "metrics.clicks",
            None,
        ),
        (
            "SELECT ad_group.id FROM campaign",
            "PROHIBITED_RESOURCE_TYPE_IN_SELECT_CLAUSE",
            "ad_group.id",
            None,
        ),
        (
            "SELECT campaign.id FROM campaign WHERE campaign.resource_name = 'x'",
            "PROHIBITED_FIELD_IN_WHERE_CLAUSE",
            "campaign.resource_name",
            None,
        ),
    ];
    for (query, want_code, want_field, want_suggestion) in cases {
        let error = client
            .search(customer(&fake), query)
            .stream::<Value>()
            .try_collect::<Vec<_>>()
            .await
            .unwrap_err();
        match &error {
            Error::Query {
                code,
                field,
                suggestion,
                ..
            } => {
                assert_eq!(*code, want_code, "{query}");
                assert_eq!(field, want_field, "{query}");
                assert_eq!(suggestion.as_deref(), want_suggestion, "{query}");
            }
            other => panic!("{query}: {other:?}"),
        }
        assert!(error.to_string().contains("nothing was sent"), "{error}");
        if let Some(s) = want_suggestion {
            assert!(error.to_string().contains(s), "{error}");
        }
    }
    assert_eq!(searches(&fake), 0, "nothing reached the fake");
}

#[tokio::test]
async fn a_row_that_does_not_fit_the_callers_type_fails_without_retries() {
    #[derive(Debug, Deserialize)]
    #[allow(dead_code)]
    struct WantsCampaign {
        campaign: Value,
    }
    let fake = support::start(recent(10, 5)).await;
    let client = client(&fake, support::fast_retries(5));
    let error = client
        .search(customer(&fake), QUERY)
        .stream::<WantsCampaign>()
        .try_collect::<Vec<_>>()
        .await
        .unwrap_err();
    // The caller's type is named as the side at fault, with the fields the query selects.
    assert!(
        matches!(&error, Error::RowType { row_type, columns, detail }
            if row_type.ends_with("WantsCampaign")
                && columns == "conversion.id, conversion.status, segments.date"
                && detail.contains("missing field `campaign`")),
        "{error:?}"
    );
    let text = error.to_string();
    assert!(
        text.contains("does not fit the rows of the query"),
        "{text}"
    );
    assert!(!text.contains("server does not behave"), "{text}");
    assert!(!error.is_transient());
    assert_eq!(searches(&fake), 1, "not retried");
}

/// A capturing server: logs each request's body and answers every page with one row and a next
/// page token (the stream never ends by itself).
async fn endless(State((log, count)): State<(Log, Arc<AtomicU64>)>, request: Request) -> Response {
    let (_, body) = read_request(request).await;
    let n = count.fetch_add(1, Ordering::SeqCst);
    let body: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    log.0.lock().expect("not poisoned").push(body);
    let page = json!({
        "results": [{"campaign": {"id": n.to_string()}, "customColumns": [{"int64Value": "7"}, {"stringValue": "x"}]}],
        "nextPageToken": format!("page-{}", n + 1),
    });
    (
        StatusCode::OK,
        [(header::CONTENT_TYPE, "application/json")],
        page.to_string(),
    )
        .into_response()
}

async fn endless_server() -> (SearchAdsClient, Log, Arc<AtomicU64>) {
    let log = Log::default();
    let count = Arc::new(AtomicU64::new(0));
    let app = Router::new()
        .fallback(endless)
        .with_state((log.clone(), count.clone()));
    let origin = serve(app).await;
    let client = SearchAdsClient::builder(StaticToken::new("t"))
        .reporting_base_url(origin)
        .retry_policy(RetryPolicy::no_retries())
        .build()
        .expect("builds");
    (client, log, count)
}

#[tokio::test]
async fn the_builders_text_and_custom_columns_go_on_the_wire() {
    #[derive(Debug, Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct WithColumns {
        campaign: Value,
        custom_columns: Vec<Value>,
    }
    let (client, log, _) = endless_server().await;
    let query = Query::select([fields::campaign::ID, fields::metrics::CLICKS])
        .custom_columns([7, 11])
        .from(Resource::Campaign)
        .where_(fields::segments::DATE.during(DuringRange::Last30Days))
        .where_(fields::campaign::NAME.like("it's %"))
        .order_by(fields::metrics::CLICKS.desc())
        .limit(5);
    let mut rows = client
        .search(CustomerId::new("1234567890").expect("digits"), query)
        .look_ahead(1)
        .stream::<WithColumns>();
    let first = rows.next().await.expect("a row").expect("decodes");
    assert_eq!(first.campaign, json!({"id": "0"}));
    assert_eq!(
        first.custom_columns,
        [json!({"int64Value": "7"}), json!({"stringValue": "x"})]
    );
    drop(rows);
    let sent = log.take();
    assert_eq!(
        sent[0]["query"],
        json!(
            "SELECT campaign.id, metrics.clicks, custom_columns.id[7], custom_columns.id[11] \
             FROM campaign WHERE segments.date DURING LAST_30_DAYS AND campaign.name LIKE 'it\\'s %' \
             ORDER BY metrics.clicks DESC LIMIT 5"
        )
    );
    assert_eq!(sent[0]["pageSize"], json!(10_000));
    assert!(sent[0].get("pageToken").is_none());
}

/// Requests the server below has received (a count, and a signal for each).
static RECEIVED: (std::sync::Mutex<u64>, std::sync::Condvar) =
    (std::sync::Mutex::new(0), std::sync::Condvar::new());

/// A row of that server's first page blocks its own decode until the server has received the
/// request for the next page, for at most 10 s; whether it came in time.
static NEXT_CAME_DURING_DECODE: std::sync::OnceLock<bool> = std::sync::OnceLock::new();

/// A row that waits, while it is decoded, for the next page's request (see above).
struct WaitsForTheNextRequest;

impl<'de> Deserialize<'de> for WaitsForTheNextRequest {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let row = Value::deserialize(d)?;
        if row["campaign"]["id"] == json!("0") {
            let (count, signal) = &RECEIVED;
            let guard = count.lock().expect("not poisoned");
            let (guard, _) = signal
                .wait_timeout_while(guard, Duration::from_secs(10), |n| *n < 2)
                .expect("not poisoned");
            let _ = NEXT_CAME_DURING_DECODE.set(*guard >= 2);
        }
        Ok(Self)
    }
}

/// Answers page `n` with one row, `campaign.id` = `n`, and a next page token, for 3 pages.
async fn three_pages(request: Request) -> Response {
    let _ = read_request(request).await;
    let n = {
        let (count, signal) = &RECEIVED;
        let mut count = count.lock().expect("not poisoned");
        *count += 1;
        signal.notify_all();
        *count - 1
    };
    let mut page = json!({"results": [{"campaign": {"id": n.to_string()}}]});
    if n < 2 {
        page["nextPageToken"] = json!(format!("page-{}", n + 1));
    }
    (
        StatusCode::OK,
        [(header::CONTENT_TYPE, "application/json")],
        page.to_string(),
    )
        .into_response()
}

/// The next page's request leaves as soon as this page's token is read, before its rows are
/// decoded, on the runtime applications use (`#[tokio::main]`, one worker per core): a task
/// spawned from a worker waits in that worker's own slot until the spawner yields, so a reader
/// that went straight on to decode would send it only after the decode.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_next_page_is_asked_for_while_this_page_is_decoded() {
    let origin = serve(Router::new().fallback(three_pages)).await;
    let client = SearchAdsClient::builder(StaticToken::new("t"))
        .reporting_base_url(origin)
        .retry_policy(RetryPolicy::no_retries())
        .build()
        .expect("builds");
    let rows: Vec<WaitsForTheNextRequest> = client
        .search(
            CustomerId::new("1234567890").expect("digits"),
            "SELECT campaign.id FROM campaign",
        )
        .stream::<WaitsForTheNextRequest>()
        .try_collect()
        .await
        .expect("every page decodes");
    assert_eq!(rows.len(), 3);
    assert_eq!(
        NEXT_CAME_DURING_DECODE.get(),
        Some(&true),
        "the request for page 2 reached the server while page 1 was decoded"
    );
}

/// The pages fetched ahead of a reader that stops reading are bounded by `prefetch`.
#[tokio::test]
async fn a_reader_that_stops_holds_at_most_prefetch_pages() {
    for prefetch in [1, 3] {
        let (client, _log, count) = endless_server().await;
        let mut rows = client
            .search(
                CustomerId::new("1234567890").expect("digits"),
                "SELECT campaign.id FROM campaign",
            )
            .look_ahead(prefetch)
            .stream::<Value>();
        rows.next().await.expect("a row").expect("decodes");
        tokio::time::sleep(Duration::from_millis(400)).await;
        let fetched = count.load(Ordering::SeqCst);
        // The page being read, and `prefetch` more.
        assert_eq!(fetched, prefetch as u64 + 1, "prefetch {prefetch}");
        // Reading on fetches on.
        for _ in 0..5 {
            rows.next().await.expect("a row").expect("decodes");
        }
        assert!(count.load(Ordering::SeqCst) >= 6);
        drop(rows);
        tokio::time::sleep(Duration::from_millis(100)).await;
        let after_drop = count.load(Ordering::SeqCst);
        tokio::time::sleep(Duration::from_millis(300)).await;
        assert_eq!(
            count.load(Ordering::SeqCst),
            after_drop,
            "dropping the stream stops it"
        );
    }
}

/// The guide's first report, built from the typed fields, decoded into a caller's struct.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_guides_campaign_report_decodes_into_the_callers_struct() {
    #[derive(Debug, Deserialize)]
    struct CampaignRow {
        campaign: CampaignFields,
        segments: CampaignSegments,
        metrics: CampaignMetrics,
    }
    #[derive(Debug, Deserialize)]
    struct CampaignFields {
        id: String,
        name: String,
    }
    #[derive(Debug, Deserialize)]
    struct CampaignSegments {
        device: String,
        date: String,
    }
    #[derive(Debug, Deserialize)]
    struct CampaignMetrics {
        impressions: String,
        clicks: String,
    }
    let fake = support::start(recent(20, 30)).await;
    let client = client(&fake, support::fast_retries(3));
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
    let rows: Vec<CampaignRow> = client
        .search(customer(&fake), query)
        .page_size(7)
        .stream()
        .try_collect()
        .await
        .expect("the report");
    assert!(rows.len() > 7, "several pages: {}", rows.len());
    let campaigns: BTreeSet<&str> = rows.iter().map(|r| r.campaign.id.as_str()).collect();
    assert!(campaigns.len() > 1, "{campaigns:?}");
    for r in &rows {
        let impressions: u64 = r.metrics.impressions.parse().expect("int64 as text");
        let clicks: u64 = r.metrics.clicks.parse().expect("int64 as text");
        assert!(impressions >= clicks, "{r:?}");
        assert!(!r.campaign.name.is_empty() && !r.segments.device.is_empty());
        assert_eq!(r.segments.date.len(), 10);
    }
    // The same rows into the generated row type.
    let generated: Vec<sa360_reporting_client::types::SearchAds360Row> = client
        .search(
            customer(&fake),
            "SELECT campaign.id, campaign.name, segments.device, segments.date, \
             metrics.impressions, metrics.clicks FROM campaign \
             WHERE segments.date DURING LAST_30_DAYS",
        )
        .send()
        .await
        .expect("the report")
        .rows;
    assert_eq!(generated.len(), rows.len());
}

/// Issue 51's query, a segment revision 20260810 added, into the generated row (through
/// `WithUnknown`: nothing is unknown at this revision).
#[tokio::test]
async fn the_postal_code_segment_reaches_the_generated_row() {
    let fake = support::start(recent(3, 5)).await;
    let client = client(&fake, support::fast_retries(3));
    let rows: Vec<WithUnknown<sa360_reporting_client::types::SearchAds360Row>> = client
        .search(
            customer(&fake),
            "SELECT campaign.id, segments.geo_target_postal_code, metrics.clicks FROM campaign \
             WHERE segments.date DURING LAST_7_DAYS",
        )
        .send()
        .await
        .expect("the report")
        .rows;
    assert!(!rows.is_empty());
    for row in &rows {
        let code = row
            .row
            .segments
            .as_ref()
            .and_then(|s| s.geo_target_postal_code.as_deref());
        assert!(
            code.is_some_and(|c| c.starts_with("geoTargetConstants/")),
            "{row:?}"
        );
        assert!(row.unknown.is_empty(), "{row:?}");
    }
}

/// A name far from every catalogued one is sent as it is, with a warning naming it and the
/// catalogue's revision; the service (here the fake) judges it.
#[tokio::test(flavor = "current_thread")]
async fn a_name_newer_than_the_catalogue_is_sent_with_a_warning() {
    let captured = TraceCapture::start();
    let fake = support::start(recent(3, 5)).await;
    let client = client(&fake, support::fast_retries(3));
    let error = client
        .search(
            customer(&fake),
            "SELECT campaign.id, segments.zz_invented_for_this_test FROM campaign \
             WHERE segments.date DURING LAST_7_DAYS",
        )
        .send::<Value>()
        .await
        .unwrap_err();
    assert!(
        error.to_string().contains("UNRECOGNIZED_FIELD") && !matches!(error, Error::Query { .. }),
        "the service's refusal: {error}"
    );
    assert_eq!(streams(&fake), 1, "sent");
    let text = captured.text();
    assert!(
        text.contains("sending names the field catalogue does not have")
            && text.contains("segments.zz_invented_for_this_test")
            && text.contains(fields::REVISION),
        "{text}"
    );
}

fn streams(fake: &SearchAdsFake) -> u64 {
    fake.ledger().counts().reporting_stream_requests
}

/// `send` reads the whole report with one `searchStream` request (SR-33), batch by batch: the
/// same rows as the pages, and the summary row (the clicks summed) when asked for.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn send_reads_the_whole_report_with_one_search_stream_request() {
    let fake = support::start(recent(10, 40)).await;
    let client = client(&fake, support::fast_retries(3));
    let paged: Vec<Row> = client
        .search(customer(&fake), QUERY)
        .page_size(37)
        .stream()
        .try_collect()
        .await
        .expect("the pages");
    let before = searches(&fake);
    let report = client
        .search(customer(&fake), QUERY)
        .page_size(37)
        .send::<Row>()
        .await
        .expect("the report");
    assert_eq!(report.rows, paged, "the same rows in the same order");
    assert_eq!(report.summary_row, None);
    assert_eq!((streams(&fake), searches(&fake) - before), (1, 0));

    let query = "SELECT campaign.id, metrics.clicks FROM campaign WHERE segments.date DURING \
                 LAST_7_DAYS";
    let clicks = |row: &Value| {
        row["metrics"]["clicks"]
            .as_str()
            .map_or(0, |c| c.parse::<u64>().expect("int64 as text"))
    };
    let report = client
        .search(customer(&fake), query)
        .page_size(3)
        .summary_row(SummaryRow::WithRows)
        .send::<Value>()
        .await
        .expect("the report");
    let summary = report.summary_row.expect("asked for");
    assert!(
        report.rows.len() > 3,
        "several batches: {}",
        report.rows.len()
    );
    assert_eq!(
        clicks(&summary),
        report.rows.iter().map(clicks).sum::<u64>()
    );
    let only = client
        .search(customer(&fake), query)
        .summary_row(SummaryRow::Only)
        .send::<Value>()
        .await
        .expect("the summary");
    assert!(only.rows.is_empty());
    assert_eq!(only.summary_row, Some(summary));
    assert_eq!(streams(&fake), 3);

    // The summary row is `send`'s alone: `stream` pages and refuses it before sending.
    let error = client
        .search(customer(&fake), query)
        .summary_row(SummaryRow::WithRows)
        .stream::<Value>()
        .try_next()
        .await
        .unwrap_err();
    assert!(
        matches!(&error, Error::Validation { field, .. } if field == "summary_row"),
        "{error}"
    );
    assert_eq!(streams(&fake), 3);
}

/// `validate` asks the service to check the query (`validateOnly`); `total_results_count` asks
/// for the count with one row.
#[tokio::test]
async fn validate_and_count_ask_the_service_without_reading_rows() {
    let fake = support::start(recent(10, 40)).await;
    let client = client(&fake, support::fast_retries(3));
    let checked = client
        .search(customer(&fake), QUERY)
        .validate()
        .await
        .expect("valid");
    assert!(checked.text.contains("FROM conversion"));
    let refused = client
        .search(
            customer(&fake),
            "SELECT campaign.id, segments.zz_invented_for_this_test FROM campaign",
        )
        .validate()
        .await
        .unwrap_err();
    assert!(
        refused.to_string().contains("UNRECOGNIZED_FIELD"),
        "{refused}"
    );
    let count = client
        .search(customer(&fake), QUERY)
        .total_results_count()
        .await
        .expect("the count");
    assert_eq!(count, 7 * 40);
    assert_eq!(searches(&fake), 3);
}

/// A `searchStream` answer of `batches` batches of one row whose name is `name_len` bytes long,
/// cut before its `]` when `cut`; and a client whose answers may be 16 KiB.
async fn stream_answer(batches: usize, name_len: usize, cut: bool) -> SearchAdsClient {
    let batch = json!({"results": [{"campaign": {"name": "n".repeat(name_len)}}]}).to_string();
    let mut body = format!("[{}", vec![batch; batches].join(","));
    if !cut {
        body.push(']');
    }
    let app = Router::new().route(
        "/v0/customers/{customer}/searchAds360:searchStream",
        axum::routing::post(
            move || async move { ([(header::CONTENT_TYPE, "application/json")], body) },
        ),
    );
    let url = serve(app).await;
    SearchAdsClient::builder(StaticToken::new("token"))
        .reporting_base_url(&url)
        .http_options(sa360_video_sdk::http::HttpOptions::default().max_body_bytes(16 * 1024))
        .retry_policy(support::fast_retries(1))
        .build()
        .expect("the client builds")
}

/// The answer of `send` is bounded batch by batch, not as a whole: 200 batches of 1 KiB pass a
/// 16 KiB `max_body_bytes`; one batch of 20 KiB, or an answer cut short, fails.
#[tokio::test]
async fn a_search_stream_answer_is_bounded_batch_by_batch() {
    let query = "SELECT campaign.name FROM campaign";
    let customer = CustomerId::new("1234567890").expect("digits");
    let read = |client: SearchAdsClient| async move {
        client.search(customer, query).send::<Value>().await
    };
    let report = read(stream_answer(200, 1024, false).await)
        .await
        .expect("bounded batches");
    assert_eq!(report.rows.len(), 200);
    let error = read(stream_answer(1, 20 * 1024, false).await)
        .await
        .unwrap_err();
    assert!(
        error.to_string().contains("longer than 16384 bytes"),
        "{error}"
    );
    let error = read(stream_answer(3, 10, true).await).await.unwrap_err();
    assert!(
        error.to_string().contains("ended before its closing"),
        "{error}"
    );
}

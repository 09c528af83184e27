//! Snapshots of the wire requests of every operation, taken by a capturing
//! server: method, path, query in order, the relevant headers and the JSON
//! body. The token is checked, then redacted.

#![allow(deprecated)] // the read methods wrap Google's deprecated conversion.get

use crate::local_server::{Log, header_text, read_request, serve};

use axum::Router;
use axum::body::Bytes;
use axum::extract::{Request, State};
use axum::http::{Method, StatusCode, header};
use axum::response::{IntoResponse, Response};
use chrono::{DateTime, NaiveDate};
use futures::TryStreamExt;
use sa360_video_sdk::search_ads::{
    AdGroupId, AdId, AdvertiserId, AgencyId, Availability, CampaignId, Channel, Consent,
    Conversion, ConversionState, ConversionType, CriterionId, CustomDimension, CustomMetric,
    CustomerId, DateRange, DeviceType, EngineAccount, EngineAccountId, ListOptions, Micros,
    RetryPolicy, SearchAdsClient, SegmentationId, StaticToken,
};
use serde_json::{Value, json};

const TOKEN: &str = "wire-test-token";

async fn capture(State(log): State<Log>, request: Request) -> Response {
    let (parts, body) = read_request(request).await;
    let auth = header_text(&parts.headers, "authorization");
    assert_eq!(
        auth,
        json!(format!("Bearer {TOKEN}")),
        "the bearer token is sent"
    );
    let query: Vec<Value> = parts
        .uri
        .query()
        .unwrap_or("")
        .split('&')
        .filter(|p| !p.is_empty())
        .map(|p| Value::String(p.to_owned()))
        .collect();
    let body_json = if body.is_empty() {
        Value::Null
    } else {
        serde_json::from_slice(&body).unwrap_or_else(|_| json!("<not JSON>"))
    };
    log.0.lock().expect("not poisoned").push(json!({
        "method": parts.method.as_str(),
        "path": parts.uri.path(),
        "query": query,
        "headers": {
            "accept": header_text(&parts.headers, "accept"),
            "api-version": header_text(&parts.headers, "api-version"),
            "authorization": "Bearer [redacted]",
            "content-type": header_text(&parts.headers, "content-type"),
            "user-agent": header_text(&parts.headers, "user-agent"),
        },
        "body": body_json,
    }));
    answer(&parts.method, parts.uri.path(), body)
}

/// Canned answers: just enough for the SDK to finish each call.
fn answer(method: &Method, path: &str, body: Bytes) -> Response {
    let json_answer = |value: Value| {
        (
            StatusCode::OK,
            [(header::CONTENT_TYPE, "application/json")],
            value.to_string(),
        )
            .into_response()
    };
    if path.ends_with("/idmapping") {
        return (
            StatusCode::OK,
            [(header::CONTENT_TYPE, "text/csv")],
            "Entity Type,Legacy IDs,New IDs\nCAMPAIGN,\"{\"\"campaignId\"\":\"\"1\"\"}\",\"{\"\"customerId\"\":\"\"2\"\",\"\"campaignId\"\":\"\"3\"\"}\"\n",
        )
            .into_response();
    }
    if path.ends_with("/savedcolumns") {
        return json_answer(json!({
            "kind": "doubleclicksearch#savedColumnList",
            "items": [{"kind": "doubleclicksearch#savedColumn", "savedColumnName": "Revenue", "type": "double"}]
        }));
    }
    if path.ends_with("/updateAvailability") || *method != Method::GET {
        // Echo the request, as the service does.
        let echoed: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
        return json_answer(echoed);
    }
    json_answer(json!({
        "kind": "doubleclicksearch#conversionList",
        "conversion": [{"conversionId": "c-1", "conversionTimestamp": "1704103200000", "segmentationType": "FLOODLIGHT"}]
    }))
}

async fn server() -> (SearchAdsClient, Log) {
    let log = Log::default();
    let app = Router::new().fallback(capture).with_state(log.clone());
    let origin = serve(app).await;
    let client = SearchAdsClient::builder(StaticToken::new(TOKEN))
        .base_url(format!("{origin}/doubleclicksearch/v2"))
        .retry_policy(RetryPolicy::no_retries())
        .build()
        .expect("builds");
    (client, log)
}

fn only(log: &Log) -> Value {
    let mut requests = log.take();
    assert_eq!(requests.len(), 1, "{requests:#?}");
    requests.remove(0)
}

fn day(y: i32, m: u32, d: u32) -> NaiveDate {
    NaiveDate::from_ymd_opt(y, m, d).expect("a valid date")
}

fn full_conversion() -> Conversion {
    Conversion {
        agency_id: Some(AgencyId::new(20_700_000_000_000_125)),
        advertiser_id: Some(AdvertiserId::new(21_700_000_012_345)),
        engine_account_id: Some(EngineAccountId::new(700_000_000_042_205)),
        campaign_id: Some(CampaignId::new(71_700_000_001_899_732)),
        ad_group_id: Some(AdGroupId::new(58_700_000_000_000_001)),
        ad_id: Some(AdId::new(43_700_000_000_000_001)),
        criterion_id: Some(CriterionId::new(43_700_000_000_000_002)),
        segmentation_id: Some(SegmentationId::new(551_234)),
        segmentation_name: Some("Purchase".into()),
        conversion_type: Some(ConversionType::Transaction),
        state: Some(ConversionState::Active),
        revenue_micros: Some(Micros::new(19_990_000)),
        currency_code: Some("EUR".into()),
        quantity_millis: Some(2_000),
        click_id: Some("Cj0KCQiA-gclid".into()),
        floodlight_order_id: Some("order-1001".into()),
        channel: Some(Channel::Online),
        device_type: Some(DeviceType::Mobile),
        ad_user_data_consent: Some(Consent::Granted),
        custom_dimensions: vec![CustomDimension {
            name: "Store Region".into(),
            value: "North".into(),
        }],
        custom_metrics: vec![CustomMetric {
            name: "Basket Size".into(),
            value: 3.5,
        }],
        ..Conversion::new(
            "order-1001",
            DateTime::from_timestamp_millis(1_704_103_200_123).expect("a valid time"),
        )
    }
}

#[tokio::test]
async fn conversion_get() {
    let (client, log) = server().await;
    let account = EngineAccount::new(
        20_700_000_000_000_125,
        21_700_000_012_345,
        700_000_000_042_205,
    );
    let options = ListOptions::default()
        .page_size(10)
        .campaign_id(CampaignId::new(71_700_000_001_899_732))
        .ad_group_id(AdGroupId::new(58_700_000_000_000_001))
        .ad_id(AdId::new(43_700_000_000_000_001))
        .criterion_id(CriterionId::new(43_700_000_000_000_002))
        .customer_id(CustomerId::new("2000012350").expect("an id"));
    let range = DateRange::new(day(2024, 1, 1), day(2024, 1, 31)).expect("a range");
    let got: Vec<_> = client
        .list_conversions(account, range)
        .options(options)
        .stream()
        .try_collect()
        .await
        .expect("read");
    assert_eq!(got.len(), 1);
    insta::assert_yaml_snapshot!("conversion_get", only(&log));
}

#[tokio::test]
async fn conversion_get_by_customer_id() {
    let (client, log) = server().await;
    let options = ListOptions::default()
        .page_size(1000)
        .agency_id(AgencyId::new(20_700_000_000_000_125))
        .advertiser_id(AdvertiserId::new(21_700_000_012_345))
        .engine_account_id(EngineAccountId::new(700_000_000_042_205));
    let range = DateRange::day(day(2024, 2, 29)).expect("a day");
    let customer = CustomerId::new("2000012350").expect("an id");
    let got: Vec<_> = client
        .list_conversions_by_customer(customer, range)
        .options(options)
        .stream()
        .try_collect()
        .await
        .expect("read");
    assert_eq!(got.len(), 1);
    insta::assert_yaml_snapshot!("conversion_get_by_customer_id", only(&log));
}

#[tokio::test]
async fn conversion_insert() {
    let (client, log) = server().await;
    // The smallest insert Google's how-to shows: attributed from its click (SA-17).
    let minimal = Conversion {
        click_id: Some("Cj0KCQiA-minimal".into()),
        ..Conversion::new(
            "order-1002",
            DateTime::from_timestamp_millis(1_704_103_260_000).expect("a valid time"),
        )
    };
    let report = client
        .insert(&[full_conversion(), minimal])
        .send()
        .await
        .expect("valid");
    assert!(report.all_stored());
    insta::assert_yaml_snapshot!("conversion_insert", only(&log));
}

#[tokio::test]
async fn conversion_update() {
    let (client, log) = server().await;
    let update = Conversion {
        revenue_micros: Some(Micros::new(25_000_000)),
        currency_code: Some("EUR".into()),
        state: Some(ConversionState::Removed),
        conversion_type: Some(ConversionType::Transaction),
        segmentation_type: None,
        // The update how-to names the conversion by its click (SA-17).
        click_id: Some("Cj0KCQiA-order-1001".into()),
        ..Conversion::new(
            "order-1001",
            DateTime::from_timestamp_millis(1_704_103_200_123).expect("a valid time"),
        )
    };
    let report = client.update(&[update]).send().await.expect("valid");
    assert!(report.all_stored());
    insta::assert_yaml_snapshot!("conversion_update", only(&log));
}

#[tokio::test]
async fn conversion_update_availability() {
    let (client, log) = server().await;
    let availability = Availability {
        segmentation_id: Some(SegmentationId::new(551_234)),
        segmentation_name: Some("Purchase".into()),
        ..Availability::new(
            AgencyId::new(20_700_000_000_000_125),
            AdvertiserId::new(21_700_000_012_345),
            DateTime::from_timestamp_millis(1_704_153_600_000).expect("a valid time"),
        )
    };
    let echoed = client
        .update_availability(std::slice::from_ref(&availability).to_vec())
        .send()
        .await
        .expect("accepted");
    assert_eq!(echoed, vec![availability]);
    insta::assert_yaml_snapshot!("conversion_update_availability", only(&log));
}

#[tokio::test]
async fn reports_get_id_mapping_file() {
    let (client, log) = server().await;
    let rows: Vec<_> = client
        .id_mapping(
            AgencyId::new(20_700_000_000_000_125),
            AdvertiserId::new(21_700_000_012_345),
        )
        .stream()
        .try_collect()
        .await
        .expect("parsed");
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0].new.campaign_id, Some(CampaignId::new(3)));
    insta::assert_yaml_snapshot!("reports_get_id_mapping_file", only(&log));
}

#[tokio::test]
async fn saved_columns_list() {
    let (client, log) = server().await;
    let columns = client
        .saved_columns(
            AgencyId::new(20_700_000_000_000_125),
            AdvertiserId::new(21_700_000_012_345),
        )
        .send()
        .await
        .expect("listed");
    assert_eq!(columns[0].name, "Revenue");
    insta::assert_yaml_snapshot!("saved_columns_list", only(&log));
}

/// The client, its futures and its streams can move between tasks.
#[tokio::test]
async fn futures_and_streams_are_send() {
    fn assert_send<T: Send>(_: &T) {}
    fn assert_send_sync<T: Send + Sync + 'static>(_: &T) {}
    let (client, _log) = server().await;
    assert_send_sync(&client);
    let input = [Conversion::new(
        "x",
        DateTime::from_timestamp_millis(0).expect("a valid time"),
    )];
    assert_send(&client.insert(&input).send());
    assert_send(&client.update(&input).send());
    assert_send(&client.insert(&input).stream().expect("valid options"));
    assert_send(
        &client
            .saved_columns(AgencyId::new(1), AdvertiserId::new(2))
            .send(),
    );
    assert_send(
        &client
            .id_mapping(AgencyId::new(1), AdvertiserId::new(2))
            .stream(),
    );
    let account = EngineAccount::new(1, 2, 3);
    let range = DateRange::day(day(2024, 1, 1)).expect("a day");
    let stream = client.list_conversions(account, range).stream();
    assert_send(&stream);
    let read = tokio::spawn(async move { stream.try_collect::<Vec<_>>().await })
        .await
        .expect("the task ran")
        .expect("read");
    assert_eq!(read.len(), 1);
}

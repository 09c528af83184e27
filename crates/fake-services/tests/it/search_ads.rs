//! Behaviour of the search ads fake: reads, insert/update validation, availability, saved columns,
//! authentication and the ID-mapping download.

use crate::common;

use std::collections::HashSet;
use std::time::Duration;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use common::{client, form, google_message, json};
use fake_services::search_ads::{JWT_BEARER_GRANT, Origin, SCOPE};
use fake_services::{ConversionKey, IdMappingSize, SearchAdsFake};
use serde_json::{Value, json};

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

#[tokio::test]
async fn reads_page_through_seeded_conversions() {
    let fake = small_fake().await;
    let mut ids = HashSet::new();
    let mut last_ts = 0;
    for (start, expected) in [(0, 1000), (1000, 1000), (2000, 500)] {
        let (status, body) = get_page(
            &fake,
            &format!("startDate=20240101&endDate=20241231&startRow={start}&rowCount=1000"),
        )
        .await;
        assert_eq!(status, 200, "{body}");
        assert_eq!(body["kind"], "doubleclicksearch#conversionList");
        let page = rows(&body);
        assert_eq!(page.len(), expected);
        for (k, row) in page.iter().enumerate() {
            assert!(ids.insert(row["conversionId"].as_str().unwrap().to_owned()));
            assert!(ts(row) > last_ts, "timestamps increase");
            last_ts = ts(row);
            if k == 0 {
                assert_eq!(Some(row.clone()), fake.seeded_conversion(0, start));
            }
            for field in [
                "agencyId",
                "advertiserId",
                "engineAccountId",
                "dsConversionId",
            ] {
                assert!(row[field].is_string(), "{field} is an int64 string");
            }
        }
    }
    assert_eq!(ids.len(), 2500);
    let (status, body) = get_page(
        &fake,
        "startDate=20240101&endDate=20241231&startRow=2500&rowCount=10",
    )
    .await;
    assert_eq!(status, 200);
    assert!(body.get("conversion").is_none(), "empty lists are omitted");
    // Same seed, same data.
    let other = small_fake().await;
    assert_eq!(
        other.seeded_conversion(0, 77),
        fake.seeded_conversion(0, 77)
    );
}

#[tokio::test]
async fn date_range_selects_the_days_rows() {
    let fake = small_fake().await;
    let (status, body) = get_page(
        &fake,
        "startDate=20240103&endDate=20240103&startRow=0&rowCount=1000",
    )
    .await;
    assert_eq!(status, 200);
    let page = rows(&body);
    assert_eq!(page.len(), 100);
    let day_start = 1_704_240_000_000_i64; // 2024-01-03T00:00:00Z
    assert!(
        page.iter()
            .all(|r| (day_start..day_start + 86_400_000).contains(&ts(r)))
    );
    assert_eq!(
        page[0]["conversionId"],
        fake.seeded_conversion_id(0, 200).unwrap().as_str()
    );
    let (_, body) = get_page(
        &fake,
        "startDate=20230101&endDate=20231231&startRow=0&rowCount=1000",
    )
    .await;
    assert!(rows(&body).is_empty());
}

#[tokio::test]
async fn id_filters_select_matching_rows() {
    let fake = small_fake().await;
    let sample = fake.seeded_conversion(0, 7).unwrap();
    let campaign = sample["campaignId"].as_str().unwrap();
    let ad_group = sample["adGroupId"].as_str().unwrap();
    let criterion = sample["criterionId"].as_str().unwrap();
    let base = "startDate=20240101&endDate=20241231&rowCount=1000";
    let mut total = 0;
    for start in [0, 1000] {
        let (status, body) = get_page(
            &fake,
            &format!("{base}&startRow={start}&campaignId={campaign}"),
        )
        .await;
        assert_eq!(status, 200);
        let page = rows(&body);
        assert!(page.iter().all(|r| r["campaignId"] == campaign));
        total += page.len();
    }
    assert_eq!(total, 2500 / 4);
    let (_, body) = get_page(
        &fake,
        &format!("{base}&startRow=0&campaignId={campaign}&adGroupId={ad_group}"),
    )
    .await;
    let page = rows(&body);
    assert_eq!(page.len(), (0..2500).filter(|i| i % 12 == 7).count());
    assert!(page.iter().all(|r| r["adGroupId"] == ad_group));
    let (_, body) = get_page(&fake, &format!("{base}&startRow=0&criterionId={criterion}")).await;
    let page = rows(&body);
    assert!(!page.is_empty());
    assert!(page.iter().all(|r| r["criterionId"] == criterion));
    // A campaign and an ad group of another campaign contradict each other.
    let other = fake.seeded_conversion(0, 8).unwrap();
    let (_, body) = get_page(
        &fake,
        &format!(
            "{base}&startRow=0&campaignId={campaign}&adGroupId={}",
            other["adGroupId"].as_str().unwrap()
        ),
    )
    .await;
    assert!(rows(&body).is_empty());
    // Another account's campaign matches nothing here.
    let foreign = fake.seeded_conversion(1, 7).unwrap();
    let (_, body) = get_page(
        &fake,
        &format!(
            "{base}&startRow=0&campaignId={}",
            foreign["campaignId"].as_str().unwrap()
        ),
    )
    .await;
    assert!(rows(&body).is_empty());
}

#[tokio::test]
async fn get_by_customer_id_reads_the_same_account() {
    let fake = small_fake().await;
    let account = fake.accounts()[0].clone();
    let query = "startDate=20240101&endDate=20241231&startRow=10&rowCount=50";
    let (_, by_engine) = get_page(&fake, query).await;
    let url = format!(
        "{}/customer/{}/conversion?{query}",
        fake.base_url(),
        account.customer_id
    );
    let (status, by_customer) = json(client().get(&url).bearer_auth(fake.dev_token())).await;
    assert_eq!(status, 200);
    assert_eq!(by_engine, by_customer);
    let (_, filtered) = json(
        client()
            .get(format!(
                "{url}&engineAccountId={}",
                account.engine_account_id
            ))
            .bearer_auth(fake.dev_token()),
    )
    .await;
    assert_eq!(rows(&filtered).len(), 50);
    let (_, mismatched) = json(
        client()
            .get(format!("{url}&engineAccountId=1"))
            .bearer_auth(fake.dev_token()),
    )
    .await;
    assert!(rows(&mismatched).is_empty());
    let (status, body) = json(
        client()
            .get(format!(
                "{}/customer/999/conversion?{query}",
                fake.base_url()
            ))
            .bearer_auth(fake.dev_token()),
    )
    .await;
    assert_eq!(status, 403);
    assert_eq!(
        body["error"]["errors"][0]["reason"],
        "insufficientPermissions"
    );
    let (status, _) = json(
        client()
            .get(format!(
                "{}/agency/1/advertiser/2/engine/3/conversion?{query}",
                fake.base_url()
            ))
            .bearer_auth(fake.dev_token()),
    )
    .await;
    assert_eq!(status, 403);
}

#[tokio::test]
async fn out_of_range_parameters_are_request_validation_errors() {
    let fake = small_fake().await;
    let ok = "startDate=20240101&endDate=20240131&startRow=0&rowCount=10";
    let cases = [
        (
            "startDate=20240101&endDate=20240131&startRow=0&rowCount=0",
            "rowCount",
        ),
        (
            "startDate=20240101&endDate=20240131&startRow=0&rowCount=1001",
            "rowCount",
        ),
        (
            "startDate=20091031&endDate=20240131&startRow=0&rowCount=10",
            "startDate",
        ),
        (
            "startDate=20240101&endDate=100000000&startRow=0&rowCount=10",
            "endDate",
        ),
        (
            "startDate=20240101&endDate=20240131&startRow=-1&rowCount=10",
            "startRow",
        ),
        (
            "startDate=20240101&endDate=20240131&startRow=4294967296&rowCount=10",
            "startRow",
        ),
        (
            "startDate=20240231&endDate=20240301&startRow=0&rowCount=10",
            "startDate",
        ),
        (
            "startDate=20240301&endDate=20240201&startRow=0&rowCount=10",
            "endDate",
        ),
        (
            "startDate=20240101&endDate=20240131&startRow=0&rowCount=ten",
            "rowCount",
        ),
        (&format!("{ok}&campaignId=abc"), "campaignId"),
    ];
    for (query, field) in cases {
        let (status, body) = get_page(&fake, query).await;
        assert_eq!(status, 400, "{query}: {body}");
        let item = &body["error"]["errors"][0];
        assert_eq!(item["reason"], "requestValidation", "{query}");
        assert_eq!(item["location"], field, "{query}");
        assert_eq!(item["locationType"], "parameter");
        assert_eq!(body["error"]["code"], 400);
    }
    let (status, body) = get_page(&fake, "startDate=20240101&endDate=20240131&rowCount=10").await;
    assert_eq!(status, 400);
    assert_eq!(google_message(&body), "Required parameter: startRow");
    let (status, body) = get_page(
        &fake,
        "startDate=20240101&endDate=20240131&startRow=0&rowCount=1001",
    )
    .await;
    assert_eq!(status, 400);
    assert_eq!(
        google_message(&body),
        "Invalid value '1001'. Values must be within the range: [1, 1000]"
    );
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

async fn insert(fake: &SearchAdsFake, conversions: Vec<Value>) -> (u16, Value) {
    json(
        client()
            .post(format!("{}/conversion", fake.base_url()))
            .bearer_auth(fake.dev_token())
            .json(&json!({"kind": "doubleclicksearch#conversionList", "conversion": conversions})),
    )
    .await
}

async fn update(fake: &SearchAdsFake, conversions: Vec<Value>) -> (u16, Value) {
    json(
        client()
            .put(format!("{}/conversion", fake.base_url()))
            .bearer_auth(fake.dev_token())
            .json(&json!({"conversion": conversions})),
    )
    .await
}

const JAN_10: i64 = 1_704_844_800_000; // 2024-01-10T00:00:00Z

#[tokio::test]
async fn insert_stores_echoes_and_shows_in_reads() {
    let fake = small_fake().await;
    let a = fake.accounts()[0].clone();
    let mut with_numbers = conversion(&fake, "num-1", JAN_10 + 5);
    // int64 fields sent as JSON numbers are accepted.
    with_numbers["agencyId"] = json!(a.agency_id);
    with_numbers["advertiserId"] = json!(a.advertiser_id);
    with_numbers["engineAccountId"] = json!(a.engine_account_id);
    with_numbers["conversionTimestamp"] = json!(JAN_10 + 5);
    with_numbers["quantityMillis"] = json!(2000);
    let customer_only = json!({
        "customerId": a.customer_id,
        "conversionId": "cust-1",
        "conversionTimestamp": (JAN_10 + 7).to_string(),
        "segmentationType": "FLOODLIGHT",
        "clickId": fake.click_id(3),
        "customDimension": [{"name": "Store Region", "value": "north"}],
        "customMetric": [{"name": "Basket Size", "value": 3.5}],
    });
    let (status, body) = insert(
        &fake,
        vec![
            conversion(&fake, "str-1", JAN_10 + 1),
            with_numbers,
            customer_only,
        ],
    )
    .await;
    assert_eq!(status, 200, "{body}");
    let echoed = rows(&body);
    assert_eq!(echoed.len(), 3);
    assert!(echoed.iter().all(|c| c["dsConversionId"].is_string()));
    assert_eq!(echoed[1]["advertiserId"], a.advertiser_id.to_string());
    assert_eq!(echoed[1]["conversionTimestamp"], (JAN_10 + 5).to_string());
    assert_eq!(echoed[1]["quantityMillis"], "2000");

    let ledger = fake.ledger();
    assert_eq!(ledger.stored_count(), 3);
    let stored = ledger
        .conversion(&ConversionKey::advertiser(a.advertiser_id, "num-1"))
        .expect("stored");
    assert_eq!(stored.origin, Origin::Inserted);
    assert_eq!(stored.timestamp_ms, JAN_10 + 5);
    assert!(ledger.contains(&ConversionKey::customer(a.customer_id.clone(), "cust-1")));
    let counts = ledger.counts();
    assert_eq!(counts.insert_requests, 1);
    assert_eq!(counts.conversions_inserted, 3);

    // Reads of 2024-01-10 show the 100 seeded rows, then the inserted ones by timestamp.
    let (_, body) = get_page(
        &fake,
        "startDate=20240110&endDate=20240110&startRow=95&rowCount=100",
    )
    .await;
    let page = rows(&body);
    let ids: Vec<&str> = page
        .iter()
        .map(|c| c["conversionId"].as_str().unwrap())
        .collect();
    assert_eq!(page.len(), 8);
    assert_eq!(&ids[5..], &["str-1", "num-1", "cust-1"]);
    let (_, body) = get_page(
        &fake,
        "startDate=20240110&endDate=20240110&startRow=101&rowCount=100",
    )
    .await;
    assert_eq!(rows(&body).len(), 2);
}

#[tokio::test]
async fn insert_is_best_effort_and_names_every_rejected_index() {
    let fake = small_fake().await;
    let mut batch = vec![conversion(&fake, "ok-0", JAN_10)];
    let mut missing_ts = conversion(&fake, "bad-1", JAN_10);
    missing_ts
        .as_object_mut()
        .unwrap()
        .remove("conversionTimestamp");
    batch.push(missing_ts);
    let mut metric = conversion(&fake, "bad-2", JAN_10);
    metric["customMetric"] = json!([{"name": "Banking Account Openings", "value": 1.0}]);
    batch.push(metric);
    batch.push(conversion(&fake, "ok-0", JAN_10 + 1));
    let mut foreign = conversion(&fake, "bad-4", JAN_10);
    foreign["advertiserId"] = json!("999");
    batch.push(foreign);
    let mut activity = conversion(&fake, "bad-5", JAN_10);
    activity["segmentationName"] = json!("purchase");
    batch.push(activity);
    let mut click = conversion(&fake, "bad-6", JAN_10);
    click["clickId"] = json!("not-a-click");
    batch.push(click);
    let mut good_click = conversion(&fake, "ok-7", JAN_10);
    good_click["clickId"] = json!(fake.click_id(12));
    batch.push(good_click);
    let mut dimension = conversion(&fake, "bad-8", JAN_10);
    dimension["customDimension"] = json!([{"name": "Weather", "value": "sunny"}]);
    batch.push(dimension);
    let mut kind = conversion(&fake, "bad-9", JAN_10);
    kind["type"] = json!("SALE");
    batch.push(kind);
    let mut wrong_type = conversion(&fake, "bad-10", JAN_10);
    wrong_type["revenueMicros"] = json!("12.5");
    batch.push(wrong_type);
    let mut no_segmentation = conversion(&fake, "bad-11", JAN_10);
    no_segmentation
        .as_object_mut()
        .unwrap()
        .remove("segmentationType");
    batch.push(no_segmentation);

    let (status, body) = insert(&fake, batch).await;
    assert_eq!(status, 400);
    let expected = [
        "0x00000100: Field is missing or invalid: conversionTimestamp for conversion index=1",
        "0x00000116: Custom metric 'Banking Account Openings' is not found for conversion index=2",
        "0x0000011F: Advertiser conversion ID 'ok-0' is already specified in this request for conversion index=3",
        "0x0000011D: The user does not have permission to view advertiser 999 for conversion index=4",
        "0x0000010E: Floodlight activity 'purchase' is not found for conversion index=5",
        "0x00000101: Click ID 'not-a-click' is not found for conversion index=6",
        "0x00000115: Custom dimension 'Weather' is not found for conversion index=8",
        "0x00000100: Field is missing or invalid: type for conversion index=9",
        "0x00000100: Field is missing or invalid: revenueMicros for conversion index=10",
        "0x00000100: Field is missing or invalid: segmentationType for conversion index=11",
    ];
    assert_eq!(
        google_message(&body),
        format!(
            "The request was not valid. Details: [{}]",
            expected.join(", ")
        )
    );
    let items = body["error"]["errors"].as_array().unwrap();
    assert_eq!(items.len(), expected.len());
    for (item, detail) in items.iter().zip(expected) {
        assert_eq!(item["message"], detail);
        assert_eq!(item["reason"], "requestValidation");
    }
    // The valid ones were stored, exactly once each.
    let stored: Vec<String> = fake
        .ledger()
        .conversions()
        .into_iter()
        .map(|c| c.key.conversion_id)
        .collect();
    assert_eq!(stored, ["ok-0", "ok-7"]);
    assert_eq!(fake.ledger().counts().conversions_rejected, 10);
}

#[tokio::test]
async fn duplicate_id_and_timestamp_pairs_are_0x11a_and_stored_once() {
    // SA-15: (conversionId, conversionTimestamp) is unique per advertiser.
    let fake = small_fake().await;
    let (status, _) = insert(&fake, vec![conversion(&fake, "dup", JAN_10)]).await;
    assert_eq!(status, 200);
    let ds = fake.ledger().conversions()[0].ds_conversion_id;
    let (status, body) = insert(&fake, vec![conversion(&fake, "dup", JAN_10)]).await;
    assert_eq!(status, 400);
    assert_eq!(
        google_message(&body),
        format!(
            "The request was not valid. Details: [0x0000011A: Advertiser conversion ID 'dup' with conversion timestamp {JAN_10} is already used by another conversion with SA360 conversion ID {ds} for conversion index=0]"
        )
    );
    assert_eq!(fake.ledger().stored_count(), 1);
    // The same ID at another timestamp is another conversion.
    let (status, body) = insert(&fake, vec![conversion(&fake, "dup", JAN_10 + 99)]).await;
    assert_eq!(status, 200, "{body}");
    let ledger = fake.ledger();
    assert_eq!(ledger.stored_count(), 2);
    let key = ConversionKey::advertiser(fake.accounts()[0].advertiser_id, "dup");
    assert_eq!(ledger.conversion(&key).unwrap().timestamp_ms, JAN_10);
    let later = ledger.conversion_at(&key, JAN_10 + 99).expect("stored");
    assert_ne!(later.ds_conversion_id, ds);
    // Within one request an ID may appear once, whatever the timestamps (0x0000011F).
    let (status, body) = insert(
        &fake,
        vec![
            conversion(&fake, "twice", JAN_10),
            conversion(&fake, "twice", JAN_10 + 1),
        ],
    )
    .await;
    assert_eq!(status, 400);
    assert!(
        google_message(&body).contains("0x0000011F") && google_message(&body).contains("index=1"),
        "{body}"
    );
    // A seeded conversion's pair is taken too; its ID at another timestamp is not.
    let seeded = fake.seeded_conversion_id(0, 5).unwrap();
    let seeded_ts: i64 = fake.seeded_conversion(0, 5).unwrap()["conversionTimestamp"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap();
    let (status, body) = insert(&fake, vec![conversion(&fake, &seeded, seeded_ts)]).await;
    assert_eq!(status, 400);
    assert!(google_message(&body).contains("0x0000011A"), "{body}");
    let (status, body) = insert(&fake, vec![conversion(&fake, &seeded, seeded_ts + 1)]).await;
    assert_eq!(status, 200, "{body}");
    // Update names a conversion by the pair.
    let mut change = conversion(&fake, "dup", JAN_10 + 99);
    change["revenueMicros"] = json!("1000000");
    let (status, body) = update(&fake, vec![change]).await;
    assert_eq!(status, 200, "{body}");
    let ledger = fake.ledger();
    assert_eq!(ledger.conversion_at(&key, JAN_10 + 99).unwrap().updates, 1);
    assert_eq!(ledger.conversion_at(&key, JAN_10).unwrap().updates, 0);
}

#[tokio::test]
async fn empty_batches_and_unknown_fields_reject_the_request() {
    let fake = small_fake().await;
    for body in [json!({"conversion": []}), json!({}), json!({"kind": "x"})] {
        let (status, answer) = json(
            client()
                .post(format!("{}/conversion", fake.base_url()))
                .bearer_auth(fake.dev_token())
                .json(&body),
        )
        .await;
        assert_eq!(status, 400);
        assert_eq!(
            google_message(&answer),
            "The request was not valid. Details: [Empty batch encountered.]"
        );
        assert_eq!(answer["error"]["errors"][0]["reason"], "requestValidation");
    }
    let (status, _) = update(&fake, vec![]).await;
    assert_eq!(status, 400);
    let mut unknown = conversion(&fake, "u-1", JAN_10);
    unknown["sessionAttributes"] = json!("x");
    let (status, body) = insert(&fake, vec![conversion(&fake, "u-0", JAN_10), unknown]).await;
    assert_eq!(status, 400);
    assert_eq!(
        google_message(&body),
        "Invalid JSON payload received. Unknown name \"sessionAttributes\" at 'conversion[1]': Cannot find field."
    );
    let (status, body) = json(
        client()
            .post(format!("{}/conversion", fake.base_url()))
            .bearer_auth(fake.dev_token())
            .header("content-type", "application/json")
            .body("{\"conversion\": [}"),
    )
    .await;
    assert_eq!(status, 400);
    assert_eq!(body["error"]["errors"][0]["reason"], "parseError");
    assert_eq!(fake.ledger().stored_count(), 0);
}

#[tokio::test]
async fn update_changes_writable_fields_of_existing_conversions() {
    let fake = small_fake().await;
    let a = fake.accounts()[0].clone();
    insert(&fake, vec![conversion(&fake, "up-1", JAN_10)]).await;
    let mut change = conversion(&fake, "up-1", JAN_10);
    change["revenueMicros"] = json!(99_000_000);
    change["state"] = json!("REMOVED");
    change["segmentationName"] = json!("Sign-up"); // not writable: ignored
    let (status, body) = update(&fake, vec![change]).await;
    assert_eq!(status, 200, "{body}");
    let echoed = &rows(&body)[0];
    assert_eq!(echoed["revenueMicros"], "99000000");
    assert_eq!(echoed["state"], "REMOVED");
    assert_eq!(echoed["segmentationName"], "Purchase");
    let stored = fake
        .ledger()
        .conversion(&ConversionKey::advertiser(a.advertiser_id, "up-1"))
        .unwrap();
    assert_eq!(stored.updates, 1);
    assert_eq!(stored.conversion["state"], "REMOVED");

    // Wrong timestamp or unknown ID: 0x0000011B, nothing changes.
    let (status, body) = update(
        &fake,
        vec![
            conversion(&fake, "up-1", JAN_10 + 1),
            conversion(&fake, "nope", JAN_10),
        ],
    )
    .await;
    assert_eq!(status, 400);
    assert_eq!(
        google_message(&body),
        format!(
            "The request was not valid. Details: [0x0000011B: Advertiser conversion ID 'up-1' with conversion timestamp {} is not found for conversion index=0, 0x0000011B: Advertiser conversion ID 'nope' with conversion timestamp {JAN_10} is not found for conversion index=1]",
            JAN_10 + 1
        )
    );

    // A seeded conversion can be updated and reads return the update.
    let seeded = fake.seeded_conversion(0, 3).unwrap();
    let mut change = seeded.clone();
    for field in ["dsConversionId", "conversionModifiedTimestamp"] {
        change.as_object_mut().unwrap().remove(field);
    }
    change["quantityMillis"] = json!("7000");
    let (status, body) = update(&fake, vec![change]).await;
    assert_eq!(status, 200, "{body}");
    let (_, page) = get_page(
        &fake,
        "startDate=20240101&endDate=20240101&startRow=3&rowCount=1",
    )
    .await;
    assert_eq!(rows(&page)[0]["quantityMillis"], "7000");
    assert_eq!(rows(&page)[0]["conversionId"], seeded["conversionId"]);
    let key = ConversionKey::advertiser(a.advertiser_id, seeded["conversionId"].as_str().unwrap());
    assert_eq!(
        fake.ledger().conversion(&key).unwrap().origin,
        Origin::SeededUpdated
    );
    assert_eq!(fake.ledger().counts().conversions_updated, 2);
}

#[tokio::test]
async fn update_availability_records_and_echoes() {
    let fake = small_fake().await;
    let a = fake.accounts()[0].clone();
    let availability = json!({
        "agencyId": a.agency_id.to_string(),
        "advertiserId": a.advertiser_id,
        "segmentationType": "FLOODLIGHT",
        "segmentationId": "551234",
        "availabilityTimestamp": 1_704_844_800_000_i64,
    });
    let url = format!("{}/conversion/updateAvailability", fake.base_url());
    let (status, body) = json(
        client()
            .post(&url)
            .bearer_auth(fake.dev_token())
            .json(&json!({"availabilities": [availability]})),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        body["availabilities"][0]["advertiserId"],
        a.advertiser_id.to_string()
    );
    assert_eq!(
        body["availabilities"][0]["availabilityTimestamp"],
        "1704844800000"
    );
    assert_eq!(fake.ledger().availabilities().len(), 1);

    let mut missing = availability.clone();
    missing
        .as_object_mut()
        .unwrap()
        .remove("availabilityTimestamp");
    let (status, body) = json(
        client()
            .post(&url)
            .bearer_auth(fake.dev_token())
            .json(&json!({"availabilities": [availability, missing]})),
    )
    .await;
    assert_eq!(status, 400);
    assert_eq!(
        google_message(&body),
        "The request was not valid. Details: [0x00000100: Field is missing or invalid: availabilityTimestamp for availability index=1]"
    );
    assert_eq!(fake.ledger().availabilities().len(), 1, "all or nothing");
    let (status, _) = json(
        client()
            .post(&url)
            .bearer_auth(fake.dev_token())
            .json(&json!({"availabilities": []})),
    )
    .await;
    assert_eq!(status, 400);
}

#[tokio::test]
async fn saved_columns_list() {
    let fake = small_fake().await;
    let a = fake.accounts()[0].clone();
    let (status, body) = json(
        client()
            .get(format!(
                "{}/agency/{}/advertiser/{}/savedcolumns",
                fake.base_url(),
                a.agency_id,
                a.advertiser_id
            ))
            .bearer_auth(fake.dev_token()),
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!(body["kind"], "doubleclicksearch#savedColumnList");
    assert_eq!(body["items"].as_array().unwrap().len(), 3);
    assert_eq!(body["items"][0]["kind"], "doubleclicksearch#savedColumn");
    let (status, _) = json(
        client()
            .get(format!(
                "{}/agency/1/advertiser/2/savedcolumns",
                fake.base_url()
            ))
            .bearer_auth(fake.dev_token()),
    )
    .await;
    assert_eq!(status, 403);
}

fn jwt(claims: &Value) -> String {
    let header = URL_SAFE_NO_PAD.encode(br#"{"alg":"RS256","typ":"JWT"}"#);
    let payload = URL_SAFE_NO_PAD.encode(claims.to_string());
    format!("{header}.{payload}.c2lnbmF0dXJl")
}

fn now_secs() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

#[tokio::test]
async fn bearer_auth_is_required() {
    let fake = small_fake().await;
    let url = format!(
        "{}?startDate=20240101&endDate=20240101&startRow=0&rowCount=1",
        engine_url(&fake, 0)
    );
    let response = client().get(&url).send().await.unwrap();
    assert_eq!(response.status(), 401);
    assert!(
        response.headers()["www-authenticate"]
            .to_str()
            .unwrap()
            .starts_with("Bearer")
    );
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["error"]["code"], 401);
    assert_eq!(body["error"]["errors"][0]["reason"], "required");
    let (status, body) = json(client().get(&url).bearer_auth("ya29.wrong")).await;
    assert_eq!(status, 401);
    assert_eq!(body["error"]["errors"][0]["reason"], "authError");
    assert_eq!(body["error"]["errors"][0]["location"], "Authorization");
    let (status, _) = json(client().get(&url).bearer_auth(fake.dev_token())).await;
    assert_eq!(status, 200);
    assert_eq!(fake.ledger().counts().unauthorized, 2);
}

#[tokio::test]
async fn token_endpoint_grants_and_expiry() {
    let fake = small_fake().await;
    let read = format!(
        "{}?startDate=20240101&endDate=20240101&startRow=0&rowCount=1",
        engine_url(&fake, 0)
    );
    let claims = json!({
        "iss": "fake-sa@fake-project.iam.gserviceaccount.com",
        "scope": format!("https://www.googleapis.com/auth/userinfo.email {SCOPE}"),
        "aud": fake.token_url(),
        "iat": now_secs(),
        "exp": now_secs() + 3600,
    });
    let grant = |assertion: String| {
        form(
            client().post(fake.token_url()),
            &[
                ("grant_type", JWT_BEARER_GRANT),
                ("assertion", assertion.as_str()),
            ],
        )
    };
    let (status, body) = json(grant(jwt(&claims))).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["token_type"], "Bearer");
    assert_eq!(body["expires_in"], 3600);
    let token = body["access_token"].as_str().unwrap().to_owned();
    let (status, _) = json(client().get(&read).bearer_auth(&token)).await;
    assert_eq!(status, 200);

    let mut bad_aud = claims.clone();
    bad_aud["aud"] = json!("https://oauth2.googleapis.com/token");
    let mut expired = claims.clone();
    expired["exp"] = json!(now_secs() - 10);
    let mut no_scope = claims.clone();
    no_scope["scope"] = json!("https://www.googleapis.com/auth/cloud-platform");
    for (claims, error) in [
        (bad_aud, "invalid_grant"),
        (expired, "invalid_grant"),
        (no_scope, "invalid_scope"),
    ] {
        let (status, body) = json(grant(jwt(&claims))).await;
        assert_eq!(status, 400);
        assert_eq!(body["error"], error, "{body}");
        assert!(body["error_description"].is_string());
    }
    let (status, body) = json(grant("not.a-jwt".to_owned())).await;
    assert_eq!(
        (status, body["error"].as_str()),
        (400, Some("invalid_grant"))
    );
    let (status, body) = json(form(
        client().post(fake.token_url()),
        &[("grant_type", "client_credentials")],
    ))
    .await;
    assert_eq!(
        (status, body["error"].as_str()),
        (400, Some("unsupported_grant_type"))
    );

    // Refresh-token grant.
    let user = fake.authorized_user().clone();
    let refresh = |token: &str| {
        form(
            client().post(fake.token_url()),
            &[
                ("grant_type", "refresh_token"),
                ("refresh_token", token),
                ("client_id", user.client_id.as_str()),
                ("client_secret", user.client_secret.as_str()),
            ],
        )
    };
    let (status, body) = json(refresh(&user.refresh_token)).await;
    assert_eq!(status, 200);
    assert!(body["access_token"].as_str().unwrap().starts_with("ya29."));
    let (status, body) = json(refresh("stolen")).await;
    assert_eq!(
        (status, body["error"].as_str()),
        (400, Some("invalid_grant"))
    );

    // Issued tokens expire on the fake's clock.
    fake.set_token_lifetime(Duration::from_secs(60));
    let short = fake.issue_token();
    let (status, _) = json(client().get(&read).bearer_auth(&short)).await;
    assert_eq!(status, 200);
    fake.clock().advance(Duration::from_secs(61));
    let (status, body) = json(client().get(&read).bearer_auth(&short)).await;
    assert_eq!(status, 401);
    assert_eq!(body["error"]["errors"][0]["reason"], "authError");
    assert!(fake.ledger().counts().tokens_issued >= 3);
}

#[tokio::test]
async fn self_signed_jwts_and_key_files() {
    let fake = small_fake().await;
    let read = format!(
        "{}?startDate=20240101&endDate=20240101&startRow=0&rowCount=1",
        engine_url(&fake, 0)
    );
    let self_signed = jwt(&json!({
        "iss": "sa@p.iam.gserviceaccount.com",
        "sub": "sa@p.iam.gserviceaccount.com",
        "aud": "https://doubleclicksearch.googleapis.com/",
        "iat": now_secs(),
        "exp": now_secs() + 3600,
    }));
    let (status, _) = json(client().get(&read).bearer_auth(&self_signed)).await;
    assert_eq!(status, 200);
    let stale = jwt(&json!({"iss": "x", "scope": SCOPE, "exp": now_secs() - 1}));
    let (status, _) = json(client().get(&read).bearer_auth(&stale)).await;
    assert_eq!(status, 401);
    let key: Value = serde_json::from_str(&fake.service_account_key_json()).unwrap();
    assert_eq!(key["type"], "service_account");
    assert_eq!(key["token_uri"], fake.token_url());
    assert!(
        key["private_key"]
            .as_str()
            .unwrap()
            .starts_with("-----BEGIN PRIVATE KEY-----")
    );
}

/// Splits one CSV line of the ID-mapping file into its three cells.
pub fn split_row(line: &str) -> Vec<String> {
    let mut cells = Vec::new();
    let mut cell = String::new();
    let mut quoted = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match (c, quoted) {
            ('"', true) if chars.peek() == Some(&'"') => {
                cell.push('"');
                chars.next();
            }
            ('"', _) => quoted = !quoted,
            (',', false) => cells.push(std::mem::take(&mut cell)),
            _ => cell.push(c),
        }
    }
    assert!(!quoted, "unterminated quote in {line}");
    cells.push(cell);
    cells
}

#[tokio::test]
async fn id_mapping_file_is_a_csv_with_json_cells() {
    let fake = SearchAdsFake::builder()
        .id_mapping_size(IdMappingSize::Rows(1000))
        .start()
        .await
        .unwrap();
    let a = fake.accounts()[0].clone();
    let url = format!(
        "{}/agency/{}/advertiser/{}/idmapping",
        fake.base_url(),
        a.agency_id,
        a.advertiser_id
    );
    let response = client()
        .get(format!("{url}?alt=media"))
        .bearer_auth(fake.dev_token())
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    assert!(
        response.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/csv")
    );
    let expected_len = fake.id_mapping_len(a.agency_id, a.advertiser_id).unwrap();
    assert_eq!(response.content_length(), Some(expected_len));
    let text = response.text().await.unwrap();
    assert_eq!(text.len() as u64, expected_len);
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some("Entity Type,Legacy IDs,New IDs"));
    let mut kinds = HashSet::new();
    let mut count = 0;
    for line in lines {
        let cells = split_row(line);
        assert_eq!(cells.len(), 3, "{line}");
        kinds.insert(cells[0].clone());
        for cell in &cells[1..] {
            let object: serde_json::Map<String, Value> = serde_json::from_str(cell).unwrap();
            assert!(object.values().all(Value::is_string), "{cell}");
        }
        count += 1;
    }
    assert_eq!(count, 1000);
    assert_eq!(
        kinds,
        ["CUSTOMER", "CAMPAIGN", "AD_GROUP", "CRITERION"]
            .map(String::from)
            .into()
    );
    // Without alt=media the method answers an empty JSON object.
    let (status, body) = json(client().get(&url).bearer_auth(fake.dev_token())).await;
    assert_eq!((status, body), (200, json!({})));
    let (status, _) = json(
        client()
            .get(format!(
                "{}/agency/1/advertiser/2/idmapping?alt=media",
                fake.base_url()
            ))
            .bearer_auth(fake.dev_token()),
    )
    .await;
    assert_eq!(status, 403);
    // Sized in bytes.
    fake.set_id_mapping_size(IdMappingSize::Bytes(50_000));
    let len = fake.id_mapping_len(a.agency_id, a.advertiser_id).unwrap();
    assert!(len <= 50_000 && len > 49_000, "{len}");
    let body = client()
        .get(format!("{url}?alt=media"))
        .bearer_auth(fake.dev_token())
        .send()
        .await
        .unwrap()
        .bytes()
        .await
        .unwrap();
    assert_eq!(body.len() as u64, len);
    assert_eq!(fake.ledger().counts().id_mapping_downloads, 2);
}

#[tokio::test]
async fn shutdown_stops_serving() {
    let fake = small_fake().await;
    let url = format!("{}/conversion", fake.base_url());
    fake.shutdown().await;
    assert!(client().post(url).send().await.is_err());
}

#[tokio::test]
async fn dropping_the_handle_stops_the_server() {
    let fake = small_fake().await;
    let url = format!("{}/conversion", fake.base_url());
    drop(fake);
    let mut refused = false;
    for _ in 0..50 {
        if client().post(&url).send().await.is_err() {
            refused = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(refused, "the listener closes after the handle is dropped");
}

#[tokio::test]
async fn unknown_paths_and_methods_answer_in_the_envelope() {
    let fake = small_fake().await;
    let (status, body) = json(client().get(format!("{}/nothing", fake.base_url()))).await;
    assert_eq!(status, 404);
    assert_eq!(body["error"]["code"], 404);
    let (status, body) = json(
        client()
            .delete(format!("{}/conversion", fake.base_url()))
            .bearer_auth(fake.dev_token()),
    )
    .await;
    assert_eq!(status, 405);
    assert_eq!(body["error"]["code"], 405);
}

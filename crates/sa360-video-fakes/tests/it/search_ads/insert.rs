//! `conversion.insert`: storing and echoing, best-effort batches naming every rejected index,
//! duplicate ids (0x11A), empty batches and unknown fields.

use sa360_video_fakes::ConversionKey;
use sa360_video_fakes::search_ads::Origin;
use serde_json::json;

use super::{JAN_10, conversion, get_page, post_insert, put_update, rows, small_fake};
use crate::common::{client, google_message, json};

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
    let (status, body) = post_insert(
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

    let (status, body) = post_insert(&fake, batch).await;
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
    let (status, _) = post_insert(&fake, vec![conversion(&fake, "dup", JAN_10)]).await;
    assert_eq!(status, 200);
    let ds = fake.ledger().conversions()[0].ds_conversion_id;
    let (status, body) = post_insert(&fake, vec![conversion(&fake, "dup", JAN_10)]).await;
    assert_eq!(status, 400);
    assert_eq!(
        google_message(&body),
        format!(
            "The request was not valid. Details: [0x0000011A: Advertiser conversion ID 'dup' with conversion timestamp {JAN_10} is already used by another conversion with SA360 conversion ID {ds} for conversion index=0]"
        )
    );
    assert_eq!(fake.ledger().stored_count(), 1);
    // The same ID at another timestamp is another conversion.
    let (status, body) = post_insert(&fake, vec![conversion(&fake, "dup", JAN_10 + 99)]).await;
    assert_eq!(status, 200, "{body}");
    let ledger = fake.ledger();
    assert_eq!(ledger.stored_count(), 2);
    let key = ConversionKey::advertiser(fake.accounts()[0].advertiser_id, "dup");
    assert_eq!(ledger.conversion(&key).unwrap().timestamp_ms, JAN_10);
    let later = ledger.conversion_at(&key, JAN_10 + 99).expect("stored");
    assert_ne!(later.ds_conversion_id, ds);
    // Within one request an ID may appear once, whatever the timestamps (0x0000011F).
    let (status, body) = post_insert(
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
    let (status, body) = post_insert(&fake, vec![conversion(&fake, &seeded, seeded_ts)]).await;
    assert_eq!(status, 400);
    assert!(google_message(&body).contains("0x0000011A"), "{body}");
    let (status, body) = post_insert(&fake, vec![conversion(&fake, &seeded, seeded_ts + 1)]).await;
    assert_eq!(status, 200, "{body}");
    // Update names a conversion by the pair.
    let mut change = conversion(&fake, "dup", JAN_10 + 99);
    change["revenueMicros"] = json!("1000000");
    let (status, body) = put_update(&fake, vec![change]).await;
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
    let (status, _) = put_update(&fake, vec![]).await;
    assert_eq!(status, 400);
    let mut unknown = conversion(&fake, "u-1", JAN_10);
    unknown["sessionAttributes"] = json!("x");
    let (status, body) = post_insert(&fake, vec![conversion(&fake, "u-0", JAN_10), unknown]).await;
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

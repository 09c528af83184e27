//! `conversion.update` and `conversion.updateAvailability`.

use sa360_video_fakes::ConversionKey;
use sa360_video_fakes::search_ads::Origin;
use serde_json::json;

use super::{JAN_10, conversion, get_page, post_insert, put_update, rows, small_fake};
use crate::common::{client, google_message, json};

#[tokio::test]
async fn update_changes_writable_fields_of_existing_conversions() {
    let fake = small_fake().await;
    let a = fake.accounts()[0].clone();
    post_insert(&fake, vec![conversion(&fake, "up-1", JAN_10)]).await;
    let mut change = conversion(&fake, "up-1", JAN_10);
    change["revenueMicros"] = json!(99_000_000);
    change["state"] = json!("REMOVED");
    change["segmentationName"] = json!("Sign-up"); // not writable: ignored
    let (status, body) = put_update(&fake, vec![change]).await;
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
    let (status, body) = put_update(
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
    let (status, body) = put_update(&fake, vec![change]).await;
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

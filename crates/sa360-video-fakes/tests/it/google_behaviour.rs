//! Behaviour Google documents and the fake copies: click-ID attribution (SA-17), the `fields`
//! partial response (SA-18) and byte ranges on the ID-mapping download (SA-19).

use crate::common;

use common::{client, google_message, json, saved_columns_url};
use sa360_video_fakes::{ConversionKey, IdMappingSize, SearchAdsFake};
use serde_json::{Value, json};

const DAY_MS: i64 = 86_400_000;

async fn fake() -> SearchAdsFake {
    SearchAdsFake::builder()
        .conversions_per_account(2500)
        .conversions_per_day(100)
        .id_mapping_size(IdMappingSize::Rows(2_000))
        .start()
        .await
        .expect("fake")
}

async fn send(
    fake: &SearchAdsFake,
    put: bool,
    query: &str,
    conversions: Vec<Value>,
) -> (u16, Value) {
    let url = format!("{}/conversion{query}", fake.base_url());
    let request = if put {
        client().put(url)
    } else {
        client().post(url)
    };
    json(
        request
            .bearer_auth(fake.dev_token())
            .json(&json!({"kind": "doubleclicksearch#conversionList", "conversion": conversions})),
    )
    .await
}

/// A conversion shaped like the insert how-to's click-ID example: no agency, advertiser or
/// engine account.
fn click_only(click: &str, id: &str, ts: i64) -> Value {
    json!({
        "clickId": click,
        "conversionId": id,
        "conversionTimestamp": ts.to_string(),
        "segmentationType": "FLOODLIGHT",
        "segmentationName": "Purchase",
        "type": "ACTION",
    })
}

#[tokio::test]
async fn a_click_id_only_insert_is_attributed_to_the_clicks_account() {
    let fake = fake().await;
    let account = fake.accounts()[1].clone();
    let (click, clicked) = fake.click(1, 7).expect("click");
    let (status, body) = send(
        &fake,
        false,
        "",
        vec![click_only(&click, "ck-1", clicked + 6 * 3_600_000)],
    )
    .await;
    assert_eq!(status, 200, "{body}");
    let echoed = &body["conversion"][0];
    assert_eq!(echoed["agencyId"], account.agency_id.to_string());
    assert_eq!(echoed["advertiserId"], account.advertiser_id.to_string());
    assert_eq!(
        echoed["engineAccountId"],
        account.engine_account_id.to_string()
    );
    // The click's keyword: the seeded conversion behind click 7 has the same criterion.
    let seeded = fake.seeded_conversion(1, 7).unwrap();
    assert_eq!(echoed["criterionId"], seeded["criterionId"]);
    assert_eq!(echoed["campaignId"], seeded["campaignId"]);
    let key = ConversionKey::advertiser(account.advertiser_id, "ck-1");
    assert!(fake.ledger().contains(&key));

    // Reads of the click's engine account show it.
    let day = chrono::DateTime::from_timestamp_millis(clicked + 6 * 3_600_000)
        .unwrap()
        .format("%Y%m%d")
        .to_string();
    let (status, page) = json(
        client()
            .get(format!(
                "{}/agency/{}/advertiser/{}/engine/{}/conversion?startDate={day}&endDate={day}&startRow=100&rowCount=10",
                fake.base_url(),
                account.agency_id,
                account.advertiser_id,
                account.engine_account_id
            ))
            .bearer_auth(fake.dev_token()),
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!(page["conversion"][0]["conversionId"], "ck-1", "{page}");

    // Update by click ID (update how-to): conversionId + conversionTimestamp + type + clickId.
    let mut change = click_only(&click, "ck-1", clicked + 6 * 3_600_000);
    change["revenueMicros"] = json!("2000000");
    change["state"] = json!("REMOVED");
    let (status, body) = send(&fake, true, "", vec![change]).await;
    assert_eq!(status, 200, "{body}");
    let stored = fake.ledger().conversion(&key).unwrap();
    assert_eq!(stored.updates, 1);
    assert_eq!(stored.conversion["state"], "REMOVED");
}

#[tokio::test]
async fn unknown_late_early_and_foreign_clicks_are_0x101() {
    let fake = fake().await;
    let (click, clicked) = fake.click(0, 3).expect("click");
    let never_issued = {
        // A well-formed ID with a wrong check part.
        let mut c = click.clone();
        let last = c.pop().unwrap();
        c.push(if last == '0' { '1' } else { '0' });
        c
    };
    let beyond_accounts = fake.click_id(5 * 100_000_000_000 + 3);
    let mut foreign = click_only(&click, "ck-5", clicked + 1);
    foreign["agencyId"] = json!(fake.accounts()[0].agency_id.to_string());
    foreign["advertiserId"] = json!(fake.accounts()[0].advertiser_id.to_string());
    foreign["engineAccountId"] = json!(fake.accounts()[1].engine_account_id.to_string());
    let batch = vec![
        click_only(&never_issued, "ck-0", clicked + 1),
        click_only(&beyond_accounts, "ck-1", clicked + 1),
        click_only(&click, "ck-2", clicked + 90 * DAY_MS + 1),
        click_only(&click, "ck-3", clicked - 1),
        click_only(&click, "ck-4", clicked + 90 * DAY_MS),
        foreign,
    ];
    let (status, body) = send(&fake, false, "", batch).await;
    assert_eq!(status, 400);
    let message = google_message(&body);
    let details: Vec<&str> = body["error"]["errors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["message"].as_str().unwrap())
        .collect();
    assert_eq!(details.len(), 5, "{message}");
    for (detail, index) in details.iter().zip([0, 1, 2, 3, 5]) {
        assert!(
            detail.starts_with("0x00000101: Click ID '")
                && detail.ends_with(&format!("for conversion index={index}")),
            "{index}: {detail}"
        );
    }
    assert!(
        !message.contains("index=4"),
        "90 days exactly is still accepted: {message}"
    );
    assert!(message.contains("more than 90 days"), "{message}");
    assert_eq!(fake.ledger().stored_count(), 1);
    // Without a click there is nothing to derive the owner from.
    let mut plain = click_only(&click, "ck-6", clicked + 1);
    plain.as_object_mut().unwrap().remove("clickId");
    let (status, body) = send(&fake, false, "", vec![plain]).await;
    assert_eq!(status, 400);
    assert!(
        google_message(&body).contains("0x00000100: Field is missing or invalid: advertiserId")
    );
}

#[tokio::test]
async fn fields_selects_parts_of_json_answers() {
    let fake = fake().await;
    let a = fake.accounts()[0].clone();
    let url = format!(
        "{}/agency/{}/advertiser/{}/engine/{}/conversion?startDate=20240101&endDate=20240101&startRow=0&rowCount=5",
        fake.base_url(),
        a.agency_id,
        a.advertiser_id,
        a.engine_account_id
    );
    let get = |fields: &str| {
        client()
            .get(format!("{url}&fields={fields}"))
            .bearer_auth(fake.dev_token())
    };
    let (status, body) = json(get("conversion(conversionId%2CconversionTimestamp)")).await;
    assert_eq!(status, 200, "{body}");
    assert!(body.get("kind").is_none(), "{body}");
    let rows = body["conversion"].as_array().unwrap();
    assert_eq!(rows.len(), 5);
    for row in rows {
        let keys: Vec<&String> = row.as_object().unwrap().keys().collect();
        assert_eq!(keys, ["conversionId", "conversionTimestamp"]);
    }
    let (_, body) = json(get("kind,conversion/customDimension/name")).await;
    assert_eq!(body["kind"], "doubleclicksearch#conversionList");
    assert_eq!(
        body["conversion"][0],
        json!({"customDimension": [{"name": "Store Region"}]})
    );
    assert_eq!(body["conversion"][1], json!({}));

    // An unknown or malformed selection is refused before the method runs.
    for bad in ["conversion/nope", "conversion(", "kind/x"] {
        let (status, body) = json(get(bad)).await;
        assert_eq!(status, 400, "{bad}");
        assert_eq!(body["error"]["errors"][0]["reason"], "invalidParameter");
        assert_eq!(body["error"]["errors"][0]["location"], "fields");
    }
    let (click, clicked) = fake.click(0, 1).unwrap();
    let (status, _) = send(
        &fake,
        false,
        "?fields=conversion/bogus",
        vec![click_only(&click, "f-1", clicked + 1)],
    )
    .await;
    assert_eq!(status, 400);
    assert_eq!(
        fake.ledger().stored_count(),
        0,
        "a refused selection stores nothing"
    );

    // Writes, availability and saved columns filter too; errors never do.
    let (status, body) = send(
        &fake,
        false,
        "?fields=conversion/dsConversionId",
        vec![click_only(&click, "f-1", clicked + 1)],
    )
    .await;
    assert_eq!(status, 200);
    let row = body["conversion"][0].as_object().unwrap();
    assert_eq!(row.keys().collect::<Vec<_>>(), ["dsConversionId"]);
    let (status, body) = send(
        &fake,
        false,
        "?fields=kind",
        vec![click_only(&click, "f-1", clicked + 1)],
    )
    .await;
    assert_eq!(status, 400);
    assert!(google_message(&body).contains("0x0000011A"), "{body}");
    let (status, body) = json(
        client()
            .get(format!(
                "{}?fields=items/savedColumnName",
                saved_columns_url(&fake)
            ))
            .bearer_auth(fake.dev_token()),
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!(
        body,
        json!({"items": [
            {"savedColumnName": "Revenue incl. tax"},
            {"savedColumnName": "Newsletter signups"},
            {"savedColumnName": "Campaign owner"},
        ]})
    );
    let (status, body) = json(
        client()
            .post(format!(
                "{}/conversion/updateAvailability?fields=availabilities/segmentationId",
                fake.base_url()
            ))
            .bearer_auth(fake.dev_token())
            .json(&json!({"availabilities": [{
                "agencyId": a.agency_id.to_string(), "advertiserId": a.advertiser_id.to_string(),
                "segmentationType": "FLOODLIGHT", "segmentationId": "551234",
                "availabilityTimestamp": "1717200000000",
            }]})),
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!(
        body,
        json!({"availabilities": [{"segmentationId": "551234"}]})
    );
}

async fn download(fake: &SearchAdsFake, headers: &[(&str, &str)]) -> reqwest::Response {
    let a = &fake.accounts()[0];
    let mut request = client()
        .get(format!(
            "{}/agency/{}/advertiser/{}/idmapping?alt=media",
            fake.base_url(),
            a.agency_id,
            a.advertiser_id
        ))
        .bearer_auth(fake.dev_token());
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    request.send().await.expect("response")
}

fn header(response: &reqwest::Response, name: &str) -> String {
    response
        .headers()
        .get(name)
        .map(|v| v.to_str().unwrap().to_owned())
        .unwrap_or_default()
}

#[tokio::test]
async fn the_id_mapping_download_serves_byte_ranges() {
    let fake = fake().await;
    let full = download(&fake, &[]).await;
    assert_eq!(full.status(), 200);
    assert_eq!(header(&full, "accept-ranges"), "bytes");
    let etag = header(&full, "etag");
    assert!(etag.starts_with('"') && etag.ends_with('"'), "{etag}");
    let whole = full.bytes().await.unwrap();
    let total = whole.len();
    assert_eq!(
        fake.id_mapping_len(
            fake.accounts()[0].agency_id,
            fake.accounts()[0].advertiser_id
        ),
        Some(total as u64)
    );

    let part = download(&fake, &[("range", "bytes=10-99")]).await;
    assert_eq!(part.status(), 206);
    assert_eq!(
        header(&part, "content-range"),
        format!("bytes 10-99/{total}")
    );
    assert_eq!(header(&part, "content-length"), "90");
    assert_eq!(header(&part, "etag"), etag);
    assert_eq!(part.bytes().await.unwrap(), whole.slice(10..100));

    let tail = download(&fake, &[("range", "bytes=-25")]).await;
    assert_eq!(tail.status(), 206);
    assert_eq!(tail.bytes().await.unwrap(), whole.slice(total - 25..));

    // Resuming a cut download: the rest, on condition that the file is still the same.
    let half = total / 2 + 7;
    let rest = download(
        &fake,
        &[("range", &format!("bytes={half}-")), ("if-range", &etag)],
    )
    .await;
    assert_eq!(rest.status(), 206);
    assert_eq!(
        header(&rest, "content-range"),
        format!("bytes {half}-{}/{total}", total - 1)
    );
    let mut joined = whole.slice(..half).to_vec();
    joined.extend_from_slice(&rest.bytes().await.unwrap());
    assert_eq!(joined, whole);

    let beyond = download(&fake, &[("range", &format!("bytes={total}-"))]).await;
    assert_eq!(beyond.status(), 416);
    assert_eq!(header(&beyond, "content-range"), format!("bytes */{total}"));

    // The file changed: the old validator gets the whole new file, with a new tag.
    fake.set_id_mapping_size(IdMappingSize::Rows(1_000));
    let changed = download(&fake, &[("range", "bytes=0-9"), ("if-range", &etag)]).await;
    assert_eq!(changed.status(), 200);
    assert_ne!(header(&changed, "etag"), etag);
    assert!(changed.bytes().await.unwrap().len() < total);
}

#[tokio::test]
async fn an_update_names_a_click_at_most_60_days_old() {
    // Update how-to: a conversion is identified by its click ID "within 60 days of the click";
    // insert accepts clicks up to 90 days old (SA-17).
    let fake = fake().await;
    let account = fake.accounts()[0].clone();
    let (click, clicked) = fake.click(0, 9).expect("click");
    let late = clicked + 70 * DAY_MS;
    let (status, body) = send(&fake, false, "", vec![click_only(&click, "old-1", late)]).await;
    assert_eq!(status, 200, "{body}");
    let mut change = click_only(&click, "old-1", late);
    change["state"] = json!("REMOVED");
    let (status, body) = send(&fake, true, "", vec![change]).await;
    assert_eq!(status, 400);
    assert!(
        google_message(&body).contains("0x00000101")
            && google_message(&body).contains("more than 60 days"),
        "{body}"
    );
    let key = ConversionKey::advertiser(account.advertiser_id, "old-1");
    assert_eq!(fake.ledger().conversion(&key).unwrap().updates, 0);
    // Named by its owner instead of its click, the same change applies.
    let mut change = click_only(&click, "old-1", late);
    change.as_object_mut().unwrap().remove("clickId");
    change["agencyId"] = json!(account.agency_id.to_string());
    change["advertiserId"] = json!(account.advertiser_id.to_string());
    change["state"] = json!("REMOVED");
    let (status, body) = send(&fake, true, "", vec![change]).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(fake.ledger().conversion(&key).unwrap().updates, 1);
    // 60 days exactly is still accepted.
    let edge = clicked + 60 * DAY_MS;
    let (status, body) = send(&fake, false, "", vec![click_only(&click, "old-2", edge)]).await;
    assert_eq!(status, 200, "{body}");
    let (status, body) = send(&fake, true, "", vec![click_only(&click, "old-2", edge)]).await;
    assert_eq!(status, 200, "{body}");
}

//! Google's side of the contract (issue 15): the request shapes of Google's
//! conversion insert and update how-tos, sent to the search ads fake as a
//! discovery-based client would send them, and every answer checked against
//! the discovery document (`tests/fixtures/reference/sa360-v2-discovery.json`):
//! each member is a property of the discovery schema with its JSON type and
//! format, recursively.
//!
//! The shapes: click-ID attribution (no agency, advertiser or engine account,
//! SA-17), criterion (keyword) attribution, revenue with a currency, custom
//! metrics and dimensions, then updates by click ID and by criterion, and an
//! availability update.

use std::path::Path;

use sa360_video_fakes::{ConversionKey, SearchAdsFake};
use serde_json::{Value, json};

fn discovery() -> Value {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/reference/sa360-v2-discovery.json");
    serde_json::from_str(&std::fs::read_to_string(path).expect("discovery copy")).expect("JSON")
}

/// Every way `value` departs from discovery schema `schema` (by id), with its JSON path.
fn departures(discovery: &Value, schema: &str, value: &Value, at: &str) -> Vec<String> {
    let Some(properties) = discovery["schemas"][schema]["properties"].as_object() else {
        return vec![format!("{at}: discovery has no schema {schema}")];
    };
    let Some(object) = value.as_object() else {
        return vec![format!("{at}: {value} is not an object ({schema})")];
    };
    let mut found = Vec::new();
    for (name, member) in object {
        let path = format!("{at}.{name}");
        match properties.get(name) {
            None => found.push(format!("{path}: not a property of {schema} in discovery")),
            Some(property) => found.extend(member_departures(discovery, property, member, &path)),
        }
    }
    found
}

fn member_departures(discovery: &Value, property: &Value, member: &Value, at: &str) -> Vec<String> {
    if let Some(target) = property["$ref"].as_str() {
        return departures(discovery, target, member, at);
    }
    let format = property["format"].as_str();
    let ok = match property["type"].as_str() {
        Some("string") => member.as_str().is_some_and(|s| match format {
            // Google's int64/uint64 travel as strings of digits.
            Some("int64") => s.parse::<i64>().is_ok(),
            Some("uint64") => s.parse::<u64>().is_ok(),
            _ => true,
        }),
        Some("number") => member.is_number(),
        Some("integer") => member.is_i64() || member.is_u64(),
        Some("boolean") => member.is_boolean(),
        Some("array") => {
            return match member.as_array() {
                None => vec![format!("{at}: {member} is not an array")],
                Some(items) => items
                    .iter()
                    .enumerate()
                    .flat_map(|(i, item)| {
                        member_departures(
                            discovery,
                            &property["items"],
                            item,
                            &format!("{at}[{i}]"),
                        )
                    })
                    .collect(),
            };
        }
        other => return vec![format!("{at}: discovery type {other:?} not checked")],
    };
    let enum_ok = property["enum"]
        .as_array()
        .is_none_or(|values| values.contains(member));
    if ok && enum_ok {
        Vec::new()
    } else {
        vec![format!("{at}: {member} is not {property}")]
    }
}

async fn call(
    fake: &SearchAdsFake,
    method: reqwest::Method,
    path: &str,
    body: Value,
) -> (u16, Value) {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let response = reqwest::Client::new()
        .request(method, format!("{}{path}", fake.base_url()))
        .bearer_auth(fake.dev_token())
        .json(&body)
        .send()
        .await
        .expect("an answer");
    let status = response.status().as_u16();
    (status, response.json().await.expect("a JSON answer"))
}

/// Sends a batch to insert (POST) or update (PUT), requires 200 and a
/// discovery-conforming `ConversionList` echoing each conversion's members.
async fn batch(
    fake: &SearchAdsFake,
    discovery: &Value,
    method: reqwest::Method,
    sent: Vec<Value>,
) -> Value {
    let label = method.to_string();
    let body = json!({"kind": "doubleclicksearch#conversionList", "conversion": sent.clone()});
    let (status, answer) = call(fake, method, "/conversion", body).await;
    assert_eq!(status, 200, "{label}: {answer}");
    let problems = departures(discovery, "ConversionList", &answer, "$");
    assert!(
        problems.is_empty(),
        "{label} answer departs from discovery:\n{}",
        problems.join("\n")
    );
    assert_eq!(answer["kind"], "doubleclicksearch#conversionList");
    let echoed = answer["conversion"].as_array().expect("conversions");
    assert_eq!(echoed.len(), sent.len(), "one answer per conversion");
    for (i, (request, echo)) in sent.iter().zip(echoed).enumerate() {
        for (name, value) in request.as_object().expect("object") {
            assert_eq!(
                &echo[name], value,
                "{label} conversion {i}: {name} echoed as sent"
            );
        }
    }
    answer
}

#[tokio::test]
async fn the_insert_and_update_how_tos_conform_to_discovery() {
    let discovery = discovery();
    let fake = SearchAdsFake::builder()
        .conversions_per_account(2_000)
        .start()
        .await
        .expect("fake");
    let account = fake.accounts()[0].clone();
    let (click, clicked) = fake.click(0, 11).expect("a click the fake issued");
    let at = |hours: i64| (clicked + hours * 3_600_000).to_string();
    let criterion = fake.seeded_conversion(0, 12).expect("seeded")["criterionId"].clone();
    let owner = json!({
        "agencyId": account.agency_id.to_string(),
        "advertiserId": account.advertiser_id.to_string(),
        "engineAccountId": account.engine_account_id.to_string(),
    });
    let with_owner = |extra: Value| {
        let mut c = owner.clone();
        c.as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        c
    };

    // Insert how-to: attribute by click ID (no agency, advertiser or engine account).
    let by_click = json!({
        "clickId": click, "conversionId": "howto-click", "conversionTimestamp": at(7),
        "segmentationType": "FLOODLIGHT", "segmentationName": "Purchase", "type": "ACTION",
    });
    // Insert how-to: attribute to a keyword (criterion) of the engine account.
    let by_criterion = with_owner(json!({
        "criterionId": criterion, "conversionId": "howto-criterion",
        "conversionTimestamp": at(8), "segmentationType": "FLOODLIGHT",
        "segmentationName": "Sign-up", "type": "ACTION",
    }));
    // Insert how-to: a transaction with revenue in micros and its currency.
    let revenue = with_owner(json!({
        "clickId": click, "conversionId": "howto-revenue", "conversionTimestamp": at(9),
        "segmentationType": "FLOODLIGHT", "segmentationId": "551234", "type": "TRANSACTION",
        "revenueMicros": "10000000", "currencyCode": "USD", "quantityMillis": "2000",
    }));
    // Insert how-to: custom metrics and dimensions.
    let custom = with_owner(json!({
        "criterionId": criterion, "conversionId": "howto-custom", "conversionTimestamp": at(10),
        "segmentationType": "FLOODLIGHT", "segmentationName": "Lead Form", "type": "ACTION",
        "customMetric": [{"name": "Basket Size", "value": 3.0}],
        "customDimension": [{"name": "Store Region", "value": "North"}],
    }));
    let inserted = batch(
        &fake,
        &discovery,
        reqwest::Method::POST,
        vec![by_click.clone(), by_criterion, revenue, custom],
    )
    .await;
    // The click-ID-only conversion was attributed to the click's account (SA-17).
    let first = &inserted["conversion"][0];
    assert_eq!(first["advertiserId"], owner["advertiserId"]);
    assert_eq!(first["engineAccountId"], owner["engineAccountId"]);
    assert!(first["dsConversionId"].as_str().is_some(), "{first}");
    let ledger = fake.ledger();
    for id in [
        "howto-click",
        "howto-criterion",
        "howto-revenue",
        "howto-custom",
    ] {
        assert!(
            ledger.contains(&ConversionKey::advertiser(account.advertiser_id, id)),
            "{id} stored"
        );
    }

    // Update how-to: by click ID, with conversionId, conversionTimestamp and type, changing
    // the revenue; by criterion, removing the conversion.
    let change_by_click = json!({
        "clickId": click, "conversionId": "howto-revenue", "conversionTimestamp": at(9),
        "type": "TRANSACTION", "revenueMicros": "12500000", "currencyCode": "USD",
        "quantityMillis": "2000",
    });
    let remove_by_criterion = with_owner(json!({
        "criterionId": criterion, "conversionId": "howto-criterion",
        "conversionTimestamp": at(8), "type": "ACTION", "state": "REMOVED",
    }));
    batch(
        &fake,
        &discovery,
        reqwest::Method::PUT,
        vec![change_by_click, remove_by_criterion],
    )
    .await;
    let ledger = fake.ledger();
    let revenue = ledger
        .conversion(&ConversionKey::advertiser(
            account.advertiser_id,
            "howto-revenue",
        ))
        .expect("stored");
    assert_eq!(revenue.conversion["revenueMicros"], "12500000");
    let removed = ledger
        .conversion(&ConversionKey::advertiser(
            account.advertiser_id,
            "howto-criterion",
        ))
        .expect("stored");
    assert_eq!(removed.conversion["state"], "REMOVED");

    // updateAvailability with the members discovery requires.
    let availability = json!({
        "agencyId": account.agency_id.to_string(),
        "advertiserId": account.advertiser_id.to_string(),
        "segmentationType": "FLOODLIGHT", "segmentationId": "551234",
        "availabilityTimestamp": at(24),
    });
    let (status, answer) = call(
        &fake,
        reqwest::Method::POST,
        "/conversion/updateAvailability",
        json!({"availabilities": [availability]}),
    )
    .await;
    assert_eq!(status, 200, "{answer}");
    let problems = departures(&discovery, "UpdateAvailabilityResponse", &answer, "$");
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn the_shape_check_catches_departures() {
    // The check itself: a member discovery lacks, an int64 that is not digits, a wrong
    // array item, a value outside a discovery enum.
    let discovery = discovery();
    let bad = json!({
        "kind": "doubleclicksearch#conversionList",
        "conversion": [{
            "conversionId": "x", "agencyId": "12x", "clickIdentifier": "y",
            "customMetric": [{"name": "m", "value": "three"}], "adUserDataConsent": "MAYBE",
        }],
    });
    let mut found = departures(&discovery, "ConversionList", &bad, "$");
    found.sort();
    assert_eq!(found.len(), 4, "{found:#?}");
    assert!(
        found[0].starts_with("$.conversion[0].adUserDataConsent"),
        "{found:#?}"
    );
    assert!(
        found[1].starts_with("$.conversion[0].agencyId"),
        "{found:#?}"
    );
    assert!(
        found[2].contains("clickIdentifier: not a property"),
        "{found:#?}"
    );
    assert!(
        found[3].starts_with("$.conversion[0].customMetric[0].value"),
        "{found:#?}"
    );
}

//! Conformance: a response of every operation of both specs (success and error shapes) validates
//! against the schema the spec declares for that status.
//!
//! The YAML specs are parsed, OpenAPI 3.0 `nullable: true` is turned into `anyOf [schema, null]`,
//! `$ref`s resolve inside the spec document, and `jsonschema` validates, with formats checked
//! (`uuid`, `email`, and a custom `int64` = a string of decimal digits).

use crate::common;

use std::collections::BTreeSet;
use std::path::PathBuf;

use common::{client, invitation_request};
use sa360_video_fakes::{Faults, IdMappingSize, SearchAdsFake, VideoSessionFake};
use serde_json::{Map, Value, json};

struct Spec {
    doc: Value,
    covered: BTreeSet<String>,
}

fn spec_path(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../specs")
        .join(name)
}

/// Rewrites OpenAPI 3.0 `nullable: true` into JSON Schema.
fn convert_nullable(value: &mut Value) {
    match value {
        Value::Object(map) => {
            for v in map.values_mut() {
                convert_nullable(v);
            }
            if map.get("nullable") == Some(&Value::Bool(true)) {
                map.remove("nullable");
                let inner = Value::Object(std::mem::take(map));
                map.insert("anyOf".to_owned(), json!([inner, {"type": "null"}]));
            } else {
                map.remove("nullable");
            }
        }
        Value::Array(items) => items.iter_mut().for_each(convert_nullable),
        _ => {}
    }
}

impl Spec {
    fn load(name: &str) -> Self {
        let text = std::fs::read_to_string(spec_path(name)).expect("spec readable");
        let mut doc: Value = serde_norway::from_str(&text).expect("spec is YAML");
        convert_nullable(&mut doc);
        Self {
            doc,
            covered: BTreeSet::new(),
        }
    }

    fn resolve<'a>(&'a self, value: &'a Value) -> &'a Value {
        match value.get("$ref").and_then(Value::as_str) {
            Some(pointer) => self
                .doc
                .pointer(pointer.trim_start_matches('#'))
                .unwrap_or_else(|| panic!("unresolved {pointer}")),
            None => value,
        }
    }

    fn operation_ids(&self) -> BTreeSet<String> {
        let mut ids = BTreeSet::new();
        for item in self.doc["paths"].as_object().unwrap().values() {
            for op in item.as_object().unwrap().values() {
                if let Some(id) = op.get("operationId").and_then(Value::as_str) {
                    ids.insert(id.to_owned());
                }
            }
        }
        ids
    }

    /// The (path, method, operation) of an operationId.
    fn operation(&self, operation_id: &str) -> &Value {
        for item in self.doc["paths"].as_object().unwrap().values() {
            for op in item.as_object().unwrap().values() {
                if op.get("operationId").and_then(Value::as_str) == Some(operation_id) {
                    return op;
                }
            }
        }
        panic!("no operation {operation_id}");
    }

    /// The declared response of `status` (exact, else the `4XX`/`5XX` range).
    fn response(&self, operation_id: &str, status: u16) -> &Value {
        let responses = &self.operation(operation_id)["responses"];
        let range = format!("{}XX", status / 100);
        let declared = responses
            .get(status.to_string())
            .or_else(|| responses.get(&range))
            .unwrap_or_else(|| panic!("{operation_id} declares no {status}"));
        self.resolve(declared)
    }

    /// The schema violations of a JSON body of `operation_id` answered with `status`.
    fn violations(&self, operation_id: &str, status: u16, body: &Value) -> Vec<String> {
        let schema =
            self.response(operation_id, status)["content"]["application/json"]["schema"].clone();
        assert!(
            !schema.is_null(),
            "{operation_id} {status} has no JSON schema"
        );
        let mut root = match schema {
            Value::Object(map) => map,
            other => panic!("unexpected schema {other}"),
        };
        root.insert("components".to_owned(), self.doc["components"].clone());
        let validator = jsonschema::options()
            .should_validate_formats(true)
            .with_format("int64", |s: &str| {
                let digits = s.strip_prefix('-').unwrap_or(s);
                !digits.is_empty()
                    && digits.bytes().all(|b| b.is_ascii_digit())
                    && s.parse::<i64>().is_ok()
            })
            .build(&Value::Object(root))
            .expect("schema compiles");
        validator
            .iter_errors(body)
            .map(|e| format!("{e} at {}", e.instance_path()))
            .collect()
    }

    /// Validates a JSON body of `operation_id` answered with `status`.
    fn check_json(&mut self, operation_id: &str, status: u16, body: &Value) {
        let errors = self.violations(operation_id, status, body);
        assert!(
            errors.is_empty(),
            "{operation_id} {status}: {errors:#?}\nbody: {body:#}"
        );
        self.covered.insert(operation_id.to_owned());
    }

    /// Checks a non-JSON answer's media type is the one declared.
    fn check_media(&mut self, operation_id: &str, status: u16, content_type: &str) {
        let content = self.response(operation_id, status)["content"]
            .as_object()
            .unwrap();
        let media = content_type.split(';').next().unwrap().trim();
        assert!(
            content.contains_key(media),
            "{operation_id} {status} does not declare {media}"
        );
        self.covered.insert(operation_id.to_owned());
    }

    fn assert_all_covered(&self) {
        assert_eq!(
            self.covered,
            self.operation_ids(),
            "every operation is validated"
        );
    }
}

async fn call(request: reqwest::RequestBuilder) -> (u16, Value) {
    let response = request.send().await.expect("answer");
    let status = response.status().as_u16();
    let body = response.json().await.expect("JSON body");
    (status, body)
}

#[tokio::test]
async fn search_ads_responses_match_the_spec() {
    let mut spec = Spec::load("search-ads.yaml");
    let fake = SearchAdsFake::builder()
        .conversions_per_account(500)
        .id_mapping_size(IdMappingSize::Rows(50))
        .start()
        .await
        .unwrap();
    let a = fake.accounts()[0].clone();
    let base = fake.base_url().to_owned();
    let token = fake.dev_token().to_owned();
    let get = |url: String| client().get(url).bearer_auth(&token);

    let range = "startDate=20240101&endDate=20241231&startRow=0&rowCount=1000";
    let engine = format!(
        "{base}/agency/{}/advertiser/{}/engine/{}/conversion",
        a.agency_id, a.advertiser_id, a.engine_account_id
    );

    // Insert (200 with numbers for int64 fields, custom dimensions and metrics; 400).
    let conversion = json!({
        "agencyId": a.agency_id, "advertiserId": a.advertiser_id.to_string(),
        "engineAccountId": a.engine_account_id, "conversionId": "conf-1",
        "conversionTimestamp": 1_704_844_800_123_i64, "segmentationType": "FLOODLIGHT",
        "segmentationId": "551234", "type": "TRANSACTION", "revenueMicros": 5_000_000,
        "currencyCode": "EUR", "clickId": fake.click_id(1),
        "customDimension": [{"name": "Store Region", "value": "north"}],
        "customMetric": [{"name": "Basket Size", "value": "2.5"}],
    });
    let post = |body: Value| {
        client()
            .post(format!("{base}/conversion"))
            .bearer_auth(&token)
            .json(&body)
    };
    let (status, body) = call(post(json!({"conversion": [conversion.clone()]}))).await;
    assert_eq!(status, 200);
    spec.check_json("conversionInsert", status, &body);
    let (status, body) = call(post(
        json!({"conversion": [conversion.clone(), {"conversionId": "x"}]}),
    ))
    .await;
    assert_eq!(status, 400);
    spec.check_json("conversionInsert", status, &body);
    let (status, body) = call(post(json!({"conversion": []}))).await;
    assert_eq!(status, 400);
    spec.check_json("conversionInsert", status, &body);

    // Update (200 of an inserted and a seeded conversion; 400).
    let mut seeded = fake.seeded_conversion(0, 1).unwrap();
    seeded["state"] = json!("REMOVED");
    let mut changed = conversion.clone();
    changed["quantityMillis"] = json!(3000);
    let (status, body) = call(
        client()
            .put(format!("{base}/conversion"))
            .bearer_auth(&token)
            .json(&json!({"conversion": [changed, seeded]})),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    spec.check_json("conversionUpdate", status, &body);
    let (status, body) = call(
        client()
            .put(format!("{base}/conversion"))
            .bearer_auth(&token)
            .json(&json!({"conversion": [{"conversionId": "missing", "conversionTimestamp": "1", "advertiserId": a.advertiser_id.to_string(), "agencyId": a.agency_id.to_string()}]})),
    )
    .await;
    assert_eq!(status, 400);
    spec.check_json("conversionUpdate", status, &body);

    // Reads: seeded, updated and inserted rows; empty page; errors.
    let (status, body) = call(get(format!("{engine}?{range}"))).await;
    assert_eq!(status, 200);
    assert_eq!(body["conversion"].as_array().unwrap().len(), 501);
    spec.check_json("conversionGet", status, &body);
    let (status, body) = call(get(format!(
        "{engine}?startDate=20200101&endDate=20200102&startRow=0&rowCount=5"
    )))
    .await;
    spec.check_json("conversionGet", status, &body);
    let (status, body) = call(get(format!(
        "{engine}?startDate=20240101&endDate=20241231&startRow=0&rowCount=0"
    )))
    .await;
    assert_eq!(status, 400);
    spec.check_json("conversionGet", status, &body);
    let (status, body) = call(client().get(format!("{engine}?{range}"))).await;
    assert_eq!(status, 401);
    spec.check_json("conversionGet", status, &body);
    let (status, body) = call(get(format!(
        "{base}/customer/{}/conversion?{range}",
        a.customer_id
    )))
    .await;
    assert_eq!(status, 200);
    spec.check_json("conversionGetByCustomerId", status, &body);
    let (status, body) = call(get(format!("{base}/customer/1/conversion?{range}"))).await;
    assert_eq!(status, 403);
    spec.check_json("conversionGetByCustomerId", status, &body);

    // Availability.
    let availability = json!({"availabilities": [{
        "agencyId": a.agency_id.to_string(), "advertiserId": a.advertiser_id,
        "segmentationType": "FLOODLIGHT", "segmentationName": "Sign-up",
        "availabilityTimestamp": "1704844800000", "customerId": a.customer_id,
    }]});
    let url = format!("{base}/conversion/updateAvailability");
    let (status, body) = call(client().post(&url).bearer_auth(&token).json(&availability)).await;
    assert_eq!(status, 200);
    spec.check_json("conversionUpdateAvailability", status, &body);
    let (status, body) = call(
        client()
            .post(&url)
            .bearer_auth(&token)
            .json(&json!({"availabilities": [{"agencyId": "1"}]})),
    )
    .await;
    assert_eq!(status, 400);
    spec.check_json("conversionUpdateAvailability", status, &body);

    // Saved columns.
    let adv = format!(
        "{base}/agency/{}/advertiser/{}",
        a.agency_id, a.advertiser_id
    );
    let (status, body) = call(get(format!("{adv}/savedcolumns"))).await;
    assert_eq!(status, 200);
    spec.check_json("savedColumnsList", status, &body);
    let (status, body) = call(get(format!("{base}/agency/1/advertiser/1/savedcolumns"))).await;
    spec.check_json("savedColumnsList", status, &body);

    // ID mapping: text/csv with the SA-11 header; errors in the envelope.
    let response = get(format!("{adv}/idmapping?alt=media"))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let content_type = response.headers()["content-type"]
        .to_str()
        .unwrap()
        .to_owned();
    spec.check_media("reportsGetIdMappingFile", 200, &content_type);
    let text = response.text().await.unwrap();
    assert!(text.starts_with("Entity Type,Legacy IDs,New IDs\n"));
    let (status, body) = call(get(format!(
        "{base}/agency/1/advertiser/1/idmapping?alt=media"
    )))
    .await;
    assert_eq!(status, 403);
    spec.check_json("reportsGetIdMappingFile", status, &body);

    // Injected faults answer in the envelope too.
    for faults in [
        Faults::seeded(1).with_rate_limited(1.0),
        Faults::seeded(1).with_internal_error(1.0),
        Faults::seeded(1).with_unavailable(1.0),
    ] {
        fake.set_faults(faults).unwrap();
        let (status, body) = call(get(format!("{engine}?{range}"))).await;
        assert!(status >= 429, "{status}");
        spec.check_json("conversionGet", status, &body);
    }
    spec.assert_all_covered();
}

#[tokio::test]
async fn video_session_responses_match_the_spec() {
    let mut spec = Spec::load("video-session.yaml");
    let fake = VideoSessionFake::start_default().await.unwrap();
    let demo = fake.demo().clone();
    let login_url = format!("{}/api/login", fake.base_url());
    let login = |secret: &str, user: &str, password: &str| {
        client()
            .post(&login_url)
            .json(&json!({"SecretKey": secret, "UserName": user, "Password": password}))
    };
    let (status, body) = call(login(&demo.secret_key, &demo.user_name, &demo.password)).await;
    assert_eq!(status, 200);
    spec.check_json("login", status, &body);
    let token = body["UserToken"].as_str().unwrap().to_owned();
    for (secret, user, password, expected) in [
        ("nope", demo.user_name.as_str(), "x", 401),
        (
            demo.inactive_secret_key.as_deref().unwrap(),
            demo.inactive_user_name.as_deref().unwrap(),
            demo.inactive_password.as_deref().unwrap(),
            403,
        ),
        (
            demo.secret_key.as_str(),
            demo.user_name.as_str(),
            "wrong",
            401,
        ),
    ] {
        let (status, body) = call(login(secret, user, password)).await;
        assert_eq!(status, expected);
        spec.check_json("login", status, &body);
    }
    let (status, body) = call(client().post(&login_url).json(&json!({"SecretKey": "a"}))).await;
    assert_eq!(status, 400);
    spec.check_json("login", status, &body);
    for _ in 0..4 {
        call(login(&demo.secret_key, &demo.user_name, "wrong")).await;
    }
    let (status, body) = call(login(&demo.secret_key, &demo.user_name, "wrong")).await;
    assert_eq!(status, 423);
    spec.check_json("login", status, &body);

    let invite = |session: &str, token: Option<&str>, body: Value| {
        invitation_request(&fake, session, token, &body)
    };
    let session = demo.session_id.as_str();
    for body in [
        json!({"InvitationType": 1, "MobileNo": "+15551234567", "IsoCode": "US", "Message": "Hi", "QueryStringParameter": "?m=1&c=2&o=0&s=1"}),
        json!({"InvitationType": 2, "MobileNo": "5551234567", "IsoCode": "UK", "Message": null}),
        json!({"InvitationType": 3, "EmailAddress": "guest@example.com"}),
        json!({"InvitationType": 5}),
    ] {
        let (status, answer) = call(invite(session, Some(&token), body)).await;
        assert_eq!(status, 200, "{answer}");
        spec.check_json("sendSessionInvitation", status, &answer);
    }
    for (session, token, body, expected) in [
        (
            session,
            Some(token.as_str()),
            json!({"InvitationType": 6}),
            400,
        ),
        (session, None, json!({"InvitationType": 3}), 401),
        (
            "missing",
            Some(token.as_str()),
            json!({"InvitationType": 3}),
            404,
        ),
    ] {
        let (status, answer) = call(invite(session, token, body)).await;
        assert_eq!(status, expected);
        spec.check_json("sendSessionInvitation", status, &answer);
    }
    for faults in [
        Faults::seeded(1).with_rate_limited(1.0),
        Faults::seeded(1).with_unavailable(1.0),
    ] {
        fake.set_faults(faults).unwrap();
        let (status, body) =
            call(invite(session, Some(&token), json!({"InvitationType": 4}))).await;
        assert!(status >= 429);
        spec.check_json("sendSessionInvitation", status, &body);
    }
    spec.assert_all_covered();
}

#[test]
fn nullable_conversion_wraps_in_any_of() {
    let mut schema = json!({"type": "string", "nullable": true, "maxLength": 3});
    convert_nullable(&mut schema);
    assert_eq!(
        schema,
        json!({"anyOf": [{"type": "string", "maxLength": 3}, {"type": "null"}]})
    );
    let mut map = Map::new();
    map.insert("a".into(), json!(1));
    let mut plain = Value::Object(map.clone());
    convert_nullable(&mut plain);
    assert_eq!(plain, Value::Object(map));
}

#[test]
fn the_validator_catches_wrong_shapes() {
    let ads = Spec::load("search-ads.yaml");
    assert!(
        ads.violations(
            "conversionGet",
            200,
            &json!({"conversion": [{"agencyId": "12"}]})
        )
        .is_empty()
    );
    assert!(
        !ads.violations(
            "conversionGet",
            200,
            &json!({"conversion": [{"agencyId": 12}]})
        )
        .is_empty()
    );
    assert!(
        !ads.violations(
            "conversionGet",
            200,
            &json!({"conversion": [{"agencyId": "1x"}]})
        )
        .is_empty()
    );
    assert!(
        !ads.violations("conversionInsert", 400, &json!({"message": "no envelope"}))
            .is_empty()
    );
    let video = Spec::load("video-session.yaml");
    let login = json!({"UserId": "6f1c2d1e-9a3b-4c5d-8e7f-0a1b2c3d4e5f", "DomainId": 1, "LoginId": 2, "FirstName": null});
    assert!(video.violations("login", 200, &login).is_empty());
    let mut bad = login.clone();
    bad["UserId"] = json!("not-a-uuid");
    assert!(!video.violations("login", 200, &bad).is_empty());
    bad = login.clone();
    bad.as_object_mut().unwrap().remove("LoginId");
    assert!(!video.violations("login", 200, &bad).is_empty());
    assert!(
        !video
            .violations("login", 423, &json!({"Message": "no code"}))
            .is_empty()
    );
    assert!(
        video
            .violations(
                "sendSessionInvitation",
                200,
                &json!({"InvitationType": 2, "Message": null})
            )
            .is_empty()
    );
    assert!(
        !video
            .violations("sendSessionInvitation", 200, &json!({"InvitationType": 7}))
            .is_empty()
    );
    assert!(
        !video
            .violations(
                "sendSessionInvitation",
                200,
                &json!({"InvitationType": 1, "Message": "x".repeat(101)})
            )
            .is_empty()
    );
    assert!(
        !video
            .violations(
                "sendSessionInvitation",
                200,
                &json!({"InvitationType": 3, "EmailAddress": "not an address"})
            )
            .is_empty()
    );
}

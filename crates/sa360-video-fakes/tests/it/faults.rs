//! Fault injection on both fakes: statuses, dropped connections, cut bodies, truncated CSV,
//! latency, runtime changes, determinism, and that the ledger always tells the truth.

use crate::common;

use std::time::{Duration, Instant};

use common::{client, form, json};
use sa360_video_fakes::{
    ConversionKey, DomainUser, FaultKind, Faults, IdMappingSize, SearchAdsFake, Truncation,
    VideoSessionFake,
};
use serde_json::{Value, json};

fn conversion(fake: &SearchAdsFake, id: &str) -> Value {
    let a = &fake.accounts()[0];
    json!({
        "agencyId": a.agency_id.to_string(),
        "advertiserId": a.advertiser_id.to_string(),
        "conversionId": id,
        "conversionTimestamp": "1704844800000",
        "segmentationType": "FLOODLIGHT",
    })
}

fn insert(fake: &SearchAdsFake, id: &str) -> reqwest::RequestBuilder {
    client()
        .post(format!("{}/conversion", fake.base_url()))
        .bearer_auth(fake.dev_token())
        .json(&json!({"conversion": [conversion(fake, id)]}))
}

fn page(fake: &SearchAdsFake) -> reqwest::RequestBuilder {
    page_of(fake, 1000)
}

fn page_of(fake: &SearchAdsFake, rows: u32) -> reqwest::RequestBuilder {
    let a = &fake.accounts()[0];
    client()
        .get(format!(
            "{}/agency/{}/advertiser/{}/engine/{}/conversion?startDate=20240101&endDate=20241231&startRow=0&rowCount={rows}",
            fake.base_url(),
            a.agency_id,
            a.advertiser_id,
            a.engine_account_id
        ))
        .bearer_auth(fake.dev_token())
}

fn stored(fake: &SearchAdsFake, id: &str) -> bool {
    let advertiser = fake.accounts()[0].advertiser_id;
    fake.ledger()
        .contains(&ConversionKey::advertiser(advertiser, id))
}

#[tokio::test]
async fn rate_limited_and_unavailable_answers_carry_retry_after() {
    let fake = SearchAdsFake::builder()
        .faults(
            Faults::seeded(1)
                .with_rate_limited(1.0)
                .with_retry_after(Duration::from_secs(7)),
        )
        .start()
        .await
        .unwrap();
    let response = insert(&fake, "r-1").send().await.unwrap();
    assert_eq!(response.status(), 429);
    assert_eq!(response.headers()["retry-after"], "7");
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["error"]["code"], 429);
    assert_eq!(body["error"]["errors"][0]["reason"], "rateLimitExceeded");
    assert!(!stored(&fake, "r-1"), "a 429 never runs the handler");

    fake.set_faults(Faults::seeded(1).with_unavailable(1.0))
        .unwrap();
    let response = insert(&fake, "r-2").send().await.unwrap();
    assert_eq!(response.status(), 503);
    assert_eq!(response.headers()["retry-after"], "1");
    assert!(!stored(&fake, "r-2"));
    let records = fake.ledger().faults();
    assert_eq!(records.len(), 2);
    assert_eq!(records[0].kind, FaultKind::RateLimited);
    assert_eq!(records[1].kind, FaultKind::Unavailable);
    assert!(
        records
            .iter()
            .all(|r| !r.processed && r.path.ends_with("/conversion"))
    );

    // The token endpoint is exempt.
    fake.set_faults(Faults::seeded(1).with_rate_limited(1.0))
        .unwrap();
    let user = fake.authorized_user().clone();
    let (status, _) = json(form(
        client().post(fake.token_url()),
        &[
            ("grant_type", "refresh_token"),
            ("refresh_token", &user.refresh_token),
            ("client_id", &user.client_id),
            ("client_secret", &user.client_secret),
        ],
    ))
    .await;
    assert_eq!(status, 200);

    // Faults can be switched off at run time.
    fake.clear_faults();
    assert_eq!(insert(&fake, "r-3").send().await.unwrap().status(), 200);
    assert!(stored(&fake, "r-3"));
}

#[tokio::test]
async fn internal_errors_and_dropped_connections_keep_the_ledger_true() {
    let fake = SearchAdsFake::start_default().await.unwrap();
    for faults in [
        Faults::seeded(5).with_internal_error(1.0),
        Faults::seeded(6).with_drop_before_response(1.0),
    ] {
        fake.set_faults(faults.clone()).unwrap();
        let before = fake.ledger().faults().len();
        let mut processed = [0, 0];
        for n in 0..16 {
            let id = format!("{}-{n}", faults.seed);
            let result = insert(&fake, &id).send().await;
            if faults.internal_error > 0.0 {
                let response = result.expect("a 500 is an answer");
                assert_eq!(response.status(), 500);
                let body: Value = response.json().await.unwrap();
                assert_eq!(body["error"]["errors"][0]["reason"], "backendError");
            } else {
                assert!(result.is_err(), "the connection closes without an answer");
            }
            let record = fake.ledger().faults()[before + n].clone();
            assert_eq!(record.processed, stored(&fake, &id), "{record:?}");
            processed[usize::from(record.processed)] += 1;
        }
        assert!(processed[0] > 0 && processed[1] > 0, "{processed:?}");
    }
    // Every stored conversion is in the ledger once; a retried insert after a drop that stored
    // is answered 0x0000011A.
    fake.clear_faults();
    let stored_ids: Vec<String> = fake
        .ledger()
        .conversions()
        .into_iter()
        .map(|c| c.key.conversion_id)
        .collect();
    let id = stored_ids.first().expect("some were stored").clone();
    let (status, body) = json(insert(&fake, &id)).await;
    assert_eq!(status, 400);
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("0x0000011A")
    );
    assert_eq!(fake.ledger().stored_count(), stored_ids.len());
}

#[tokio::test]
async fn mid_body_drops_send_headers_and_part_of_the_body() {
    let fake = SearchAdsFake::builder()
        .faults(Faults::seeded(3).with_drop_mid_body(1.0))
        .start()
        .await
        .unwrap();
    for _ in 0..3 {
        let mut response = page(&fake).send().await.expect("status and headers arrive");
        assert_eq!(response.status(), 200);
        let announced = response.content_length().expect("length announced");
        let mut received = 0;
        let error = loop {
            match response.chunk().await {
                Ok(Some(chunk)) => received += chunk.len() as u64,
                Ok(None) => panic!("the body must not end cleanly"),
                Err(e) => break e,
            }
        };
        assert!(
            received > 0 && received < announced,
            "{received} of {announced}"
        );
        assert!(
            error.is_body() || error.is_request() || error.is_decode(),
            "{error:?}"
        );
    }
    // An insert cut mid-body has run: its conversion is stored.
    let result = insert(&fake, "mid-1").send().await;
    if let Ok(response) = result {
        assert!(response.bytes().await.is_err());
    }
    assert!(stored(&fake, "mid-1"));
    let last = fake.ledger().faults().pop().unwrap();
    assert_eq!((last.kind, last.processed), (FaultKind::DropMidBody, true));
}

async fn download(fake: &SearchAdsFake) -> reqwest::Response {
    let a = &fake.accounts()[0];
    let url = format!(
        "{}/agency/{}/advertiser/{}/idmapping?alt=media",
        fake.base_url(),
        a.agency_id,
        a.advertiser_id
    );
    client()
        .get(url)
        .bearer_auth(fake.dev_token())
        .send()
        .await
        .unwrap()
}

#[tokio::test]
async fn truncated_csv_aborts_or_ends_short() {
    let fake = SearchAdsFake::builder()
        .id_mapping_size(IdMappingSize::Rows(20_000))
        .faults(Faults::seeded(9).with_truncated_csv(1.0, Truncation::Abort))
        .start()
        .await
        .unwrap();
    let a = fake.accounts()[0].clone();
    let total = fake.id_mapping_len(a.agency_id, a.advertiser_id).unwrap();

    let mut response = download(&fake).await;
    assert_eq!(response.status(), 200);
    assert_eq!(response.content_length(), Some(total));
    let mut body = Vec::new();
    let outcome = loop {
        match response.chunk().await {
            Ok(Some(chunk)) => body.extend_from_slice(&chunk),
            Ok(None) => break Ok(()),
            Err(e) => break Err(e),
        }
    };
    assert!(outcome.is_err(), "an aborted download is an error, not EOF");
    assert!((body.len() as u64) < total);
    assert!(!body.ends_with(b"\n"), "cut in the middle of a row");

    fake.set_faults(Faults::seeded(9).with_truncated_csv(1.0, Truncation::CleanEof))
        .unwrap();
    let response = download(&fake).await;
    assert_eq!(response.status(), 200);
    assert_eq!(response.content_length(), None, "no length: chunked");
    let text = response.text().await.expect("ends cleanly");
    assert!((text.len() as u64) < total);
    let last = text.rsplit('\n').next().unwrap();
    assert!(
        !last.is_empty() && last.matches('"').count() % 2 == 1,
        "{last}"
    );
    let records = fake.ledger().faults();
    assert_eq!(
        records.iter().map(|r| r.kind).collect::<Vec<_>>(),
        [
            FaultKind::TruncatedCsv(Truncation::Abort),
            FaultKind::TruncatedCsv(Truncation::CleanEof)
        ]
    );
    // Other requests are not truncated.
    assert_eq!(page(&fake).send().await.unwrap().status(), 200);
    assert_eq!(fake.ledger().faults().len(), 2);
}

#[tokio::test]
async fn latency_is_added() {
    let fake = VideoSessionFake::builder()
        .faults(
            Faults::seeded(0).with_latency(Duration::from_millis(150), Duration::from_millis(50)),
        )
        .start()
        .await
        .unwrap();
    let started = Instant::now();
    let (status, _) = json(
        client()
            .post(format!("{}/api/login", fake.base_url()))
            .json(&json!({"SecretKey": "x", "UserName": "y", "Password": "z"})),
    )
    .await;
    assert_eq!(status, 401);
    assert!(started.elapsed() >= Duration::from_millis(150));
}

async fn statuses(seed: u64) -> Vec<u16> {
    let fake = SearchAdsFake::builder()
        .faults(
            Faults::seeded(seed)
                .with_rate_limited(0.3)
                .with_internal_error(0.2),
        )
        .start()
        .await
        .unwrap();
    let mut out = Vec::new();
    for _ in 0..30 {
        out.push(page_of(&fake, 10).send().await.unwrap().status().as_u16());
    }
    out
}

#[tokio::test]
async fn the_same_seed_injects_the_same_faults() {
    let a = statuses(11).await;
    assert_eq!(a, statuses(11).await);
    assert_ne!(a, statuses(12).await);
    assert!(
        a.contains(&200) && a.contains(&429) && a.contains(&500),
        "{a:?}"
    );
}

#[tokio::test]
async fn video_faults_use_api_error_bodies_and_keep_lockout_counts_true() {
    let fake = VideoSessionFake::builder()
        .faults(Faults::seeded(2).with_rate_limited(1.0))
        .start()
        .await
        .unwrap();
    let demo = fake.demo().clone();
    let login = || {
        client()
            .post(format!("{}/api/login", fake.base_url()))
            .json(&json!({"SecretKey": demo.secret_key, "UserName": demo.user_name, "Password": "wrong"}))
    };
    let response = login().send().await.unwrap();
    assert_eq!(response.status(), 429);
    assert_eq!(response.headers()["retry-after"], "1");
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["Code"], "TooManyRequests");
    assert_eq!(body["RetryAfterSeconds"], 1);
    fake.set_faults(Faults::seeded(2).with_internal_error(1.0))
        .unwrap();
    let (status, body) = json(login()).await;
    assert_eq!(
        (status, body["Code"].as_str()),
        (500, Some("InternalError"))
    );

    // Dropped logins count exactly when the handler ran.
    fake.set_faults(Faults::seeded(4).with_drop_before_response(1.0))
        .unwrap();
    for _ in 0..4 {
        assert!(login().send().await.is_err());
    }
    let processed = fake
        .ledger()
        .faults()
        .iter()
        .filter(|r| r.processed && r.kind != FaultKind::RateLimited)
        .count() as u64;
    let key = DomainUser::new(demo.domain_id, demo.user_name.clone());
    let failures = fake.ledger().account(&key).map_or(0, |s| s.failures_total);
    assert_eq!(failures, processed);
    assert_eq!(fake.ledger().counts().requests, 6);
}

#[tokio::test]
async fn invalid_fault_settings_are_refused() {
    let fake = VideoSessionFake::start_default().await.unwrap();
    assert!(
        fake.set_faults(Faults::seeded(0).with_unavailable(2.0))
            .is_err()
    );
    assert!(fake.faults().is_none());
    assert!(
        SearchAdsFake::builder()
            .faults(Faults::seeded(0).with_drop_mid_body(-0.5))
            .start()
            .await
            .is_err()
    );
}

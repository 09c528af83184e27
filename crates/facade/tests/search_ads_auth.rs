//! Authentication against the fake: the service-account (JWT-bearer) flow
//! through the key file's `token_uri`, token caching and refresh, failures
//! with actionable messages, and tracing that never shows a token.

#![cfg(feature = "service-account")]

#[path = "search_ads_support.rs"]
mod support;

use std::sync::Arc;
use std::time::Duration;

use facade::search_ads::{
    Error, RetryPolicy, SearchAds, ServiceAccount, StaticToken, TokenSource, WriteOptions,
};
use fake_services::SearchAdsFake;
use test_support::TraceCapture;

test_support::install_trace_capture!();

fn client_with(fake: &SearchAdsFake, tokens: Arc<dyn TokenSource>) -> SearchAds {
    SearchAds::builder_shared(tokens)
        .base_url(fake.base_url())
        .expect("valid URL")
        .retry_policy(support::fast_retries(3))
        .build()
        .expect("builds")
}

#[tokio::test]
async fn the_service_account_flow_uses_the_key_files_token_uri_and_caches_the_token() {
    let fake = support::start(SearchAdsFake::builder()).await;
    let key = fake.service_account_key_json();
    let source = Arc::new(ServiceAccount::from_json(&key).expect("a valid key file"));
    assert_eq!(source.token_uri(), fake.token_url());
    assert_eq!(
        source.client_email(),
        "fake-sa@fake-project.iam.gserviceaccount.com"
    );
    // The key never shows in Debug.
    let shown = format!("{source:?}");
    assert!(!shown.contains("PRIVATE KEY"), "{shown}");

    let client = client_with(&fake, source.clone());
    let (agency, advertiser) = support::advertiser(&fake, 0);
    for _ in 0..5 {
        client
            .saved_columns(agency, advertiser)
            .await
            .expect("authorized by the exchanged token");
    }
    let counts = fake.ledger().counts();
    assert_eq!(
        counts.tokens_issued, 1,
        "one exchange at the key's token_uri, then cached"
    );
    assert_eq!(counts.saved_columns_requests, 5);
    assert_eq!(counts.unauthorized, 0);
    let token = source.token().await.expect("cached");
    assert!(token.expose_secret().starts_with("ya29."));
    assert!(token.expires_at().is_some());
}

#[tokio::test]
async fn an_expiring_token_is_refreshed() {
    let fake = support::start(SearchAdsFake::builder()).await;
    // gcp_auth renews 20 s before expiry, the facade's cache 30 s before: a
    // 23 s token is due for renewal after three seconds (real time: gcp_auth reads the system
    // clock), so "still fresh" holds even if this thread is descheduled for a while.
    fake.set_token_lifetime(Duration::from_secs(23));
    let source = Arc::new(
        ServiceAccount::from_json(&fake.service_account_key_json()).expect("a valid key file"),
    );
    let first = source.token().await.expect("a token");
    let again = source.token().await.expect("a token");
    assert_eq!(first.expose_secret(), again.expose_secret(), "still fresh");
    tokio::time::sleep(Duration::from_millis(3_100)).await;
    let renewed = source.token().await.expect("a token");
    assert_ne!(first.expose_secret(), renewed.expose_secret());
    assert_eq!(fake.ledger().counts().tokens_issued, 2);
    // The renewed token works.
    let client = client_with(&fake, source);
    let (agency, advertiser) = support::advertiser(&fake, 0);
    client
        .saved_columns(agency, advertiser)
        .await
        .expect("authorized");
}

#[tokio::test]
async fn concurrent_requests_share_one_exchange() {
    let fake = support::start(SearchAdsFake::builder()).await;
    let source = Arc::new(
        ServiceAccount::from_json(&fake.service_account_key_json()).expect("a valid key file"),
    );
    let client = client_with(&fake, source);
    let (agency, advertiser) = support::advertiser(&fake, 0);
    let calls = (0..8).map(|_| client.saved_columns(agency, advertiser));
    for result in futures::future::join_all(calls).await {
        result.expect("authorized");
    }
    assert_eq!(fake.ledger().counts().tokens_issued, 1);
}

#[tokio::test]
async fn auth_failures_say_what_to_check_and_send_nothing() {
    let fake = support::start(SearchAdsFake::builder()).await;
    // A token endpoint that is not there.
    let mut key: serde_json::Value =
        serde_json::from_str(&fake.service_account_key_json()).expect("JSON");
    key["token_uri"] = "http://127.0.0.1:9/token".into();
    let source = Arc::new(ServiceAccount::from_json(&key.to_string()).expect("a valid key file"));
    let client = client_with(&fake, source);
    let (agency, advertiser) = support::advertiser(&fake, 0);
    let e = client
        .saved_columns(agency, advertiser)
        .await
        .expect_err("no token");
    assert!(matches!(e, Error::Auth { .. }), "{e:?}");
    let text = e.to_string();
    assert!(text.contains("http://127.0.0.1:9/token"), "{text}");
    assert!(text.contains("credentials"), "{text}");
    assert!(!text.contains("PRIVATE KEY"), "{text}");
    assert_eq!(
        fake.ledger().counts().requests,
        0,
        "no API request was sent"
    );

    // A key file that is not a service-account key.
    let e = ServiceAccount::from_json(r#"{"type":"authorized_user","client_id":"x"}"#)
        .expect_err("wrong kind");
    assert!(e.to_string().contains("service_account"), "{e}");
    let e = ServiceAccount::from_file("/no/such/key.json").expect_err("missing file");
    assert!(e.to_string().contains("/no/such/key.json"), "{e}");

    // A refused static token: 401, and the message points at the credentials.
    let client = SearchAds::builder(StaticToken::new("wrong"))
        .base_url(fake.base_url())
        .expect("valid URL")
        .build()
        .expect("builds");
    let e = client
        .saved_columns(agency, advertiser)
        .await
        .expect_err("unauthorized");
    assert_eq!(e.status(), Some(401));
    assert!(!e.is_transient());
    assert!(e.to_string().contains("credentials"), "{e}");
}

#[tokio::test(flavor = "current_thread")]
async fn traces_show_requests_but_never_a_token() {
    let captured = TraceCapture::start();

    let fake = support::start(SearchAdsFake::builder()).await;
    let source = Arc::new(
        ServiceAccount::from_json(&fake.service_account_key_json()).expect("a valid key file"),
    );
    let client = client_with(&fake, source.clone());
    let (agency, advertiser) = support::advertiser(&fake, 0);
    client
        .saved_columns(agency, advertiser)
        .await
        .expect("authorized");
    let token = source.token().await.expect("cached");
    // A failing call with the fake's development token, retried once.
    fake.set_faults(fake_services::Faults::seeded(3).with_internal_error(1.0))
        .expect("valid faults");
    let dev = SearchAds::builder(StaticToken::new(fake.dev_token()))
        .base_url(fake.base_url())
        .expect("valid URL")
        .retry_policy(RetryPolicy {
            max_attempts: 2,
            base_delay: Duration::from_millis(1),
            ..RetryPolicy::default()
        })
        .write_options(WriteOptions::default())
        .build()
        .expect("builds");
    let e = dev
        .saved_columns(agency, advertiser)
        .await
        .expect_err("500");
    assert!(!e.to_string().contains(fake.dev_token()));

    let text = captured.text();
    assert!(text.contains("search_ads.request"), "{text}");
    assert!(text.contains(r#"operation="savedColumns.list""#), "{text}");
    assert!(text.contains("attempt=1"), "{text}");
    assert!(text.contains("attempt=2"), "{text}");
    assert!(text.contains("status=200"), "{text}");
    assert!(text.contains("status=500"), "{text}");
    assert!(text.contains("duration_ms="), "{text}");
    assert!(text.contains("transient failure, retrying"), "{text}");
    assert!(
        !text.contains(token.expose_secret()),
        "the exchanged token leaked into the trace"
    );
    assert!(
        !text.contains(fake.dev_token()),
        "the static token leaked into the trace"
    );
    assert!(
        !text.contains("PRIVATE KEY"),
        "the key leaked into the trace"
    );
    assert!(!text.to_ascii_lowercase().contains("bearer "), "{text}");
}

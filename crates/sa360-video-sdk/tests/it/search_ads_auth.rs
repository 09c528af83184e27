//! Authentication against the fake: the service-account (JWT-bearer) flow
//! through the key file's `token_uri`, token caching and refresh, failures
//! with actionable messages, and tracing that never shows a token.

#![cfg(feature = "service-account")]

use crate::local_server::serve;
use crate::search_ads_support as support;

use std::sync::Arc;
use std::time::Duration;

use sa360_video_fakes::SearchAdsFake;
use sa360_video_sdk::search_ads::{
    Error, RetryPolicy, SearchAdsClient, ServiceAccount, StaticToken, TokenSource, WriteOptions,
};
use test_support::TraceCapture;

fn client_with(fake: &SearchAdsFake, tokens: Arc<dyn TokenSource>) -> SearchAdsClient {
    SearchAdsClient::builder_shared(tokens)
        .base_url(fake.base_url())
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
            .send()
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
    // The SDK's cache renews 30 s before expiry: a 33 s token is due for
    // renewal after three seconds (real time: the cache reads the system
    // clock), so "still fresh" holds even if this thread is descheduled for a while.
    fake.set_token_lifetime(Duration::from_secs(33));
    let source = Arc::new(
        ServiceAccount::from_json(&fake.service_account_key_json()).expect("a valid key file"),
    );
    source.allow_loopback();
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
        .send()
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
    let calls = (0..8).map(|_| client.saved_columns(agency, advertiser).send());
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
        .send()
        .await
        .expect_err("no token");
    // Unreachable is transient: retried under the policy, then reported as such.
    assert!(matches!(e, Error::TokenUnavailable { .. }), "{e:?}");
    assert!(e.is_transient());
    let text = e.to_string();
    assert!(text.contains("http://127.0.0.1:9/token"), "{text}");
    assert!(text.contains("could not be reached"), "{text}");
    assert!(text.contains("Nothing was sent"), "{text}");
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
    let client = SearchAdsClient::builder(StaticToken::new("wrong"))
        .base_url(fake.base_url())
        .build()
        .expect("builds");
    let e = client
        .saved_columns(agency, advertiser)
        .send()
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
        .send()
        .await
        .expect("authorized");
    let token = source.token().await.expect("cached");
    // A failing call with the fake's development token, retried once.
    fake.set_faults(sa360_video_fakes::Faults::seeded(3).with_internal_error(1.0))
        .expect("valid faults");
    let dev = SearchAdsClient::builder(StaticToken::new(fake.dev_token()))
        .base_url(fake.base_url())
        .retry_policy(
            RetryPolicy::default()
                .max_attempts(2)
                .base_delay(Duration::from_millis(1)),
        )
        .write_options(WriteOptions::default())
        .build()
        .expect("builds");
    let e = dev
        .saved_columns(agency, advertiser)
        .send()
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

// ------------------------------------------------ token endpoint trouble, 401s

/// What the flaky token endpoint does with one request.
#[derive(Clone, Copy, Debug)]
enum TokenAnswer {
    /// Issue a token (`ya29.front-N`, valid for an hour).
    Issue,
    /// Answer this status with an OAuth error body.
    Status(u16),
    /// Wait this long before forwarding (longer than the exchange timeout).
    Hang(Duration),
}

/// A real local HTTP server in front of `target` (the fake's origin): the
/// token endpoint and the API. Requests to `/token` follow `script` (one entry
/// per request, `Issue` once it is used up). API requests whose bearer token is
/// in `revoked` (or every token, with `refuse_all`) are answered 401 like
/// Google does; the others are passed on to the fake with its development
/// token in place of the one this server issued. Every bearer token seen is
/// recorded.
#[derive(Clone, Default)]
struct Front {
    script: Arc<std::sync::Mutex<std::collections::VecDeque<TokenAnswer>>>,
    token_requests: Arc<std::sync::atomic::AtomicUsize>,
    api_requests: Arc<std::sync::atomic::AtomicUsize>,
    bearer_seen: Arc<std::sync::Mutex<Vec<String>>>,
    issued: Arc<std::sync::Mutex<Vec<String>>>,
    revoked: Arc<std::sync::Mutex<Vec<String>>>,
    refuse_all: Arc<std::sync::atomic::AtomicBool>,
}

impl Front {
    async fn start(fake: &SearchAdsFake, script: Vec<TokenAnswer>) -> (Self, String) {
        let target = fake.origin().to_owned();
        let dev_token = fake.dev_token().to_owned();
        use axum::body::Body;
        use axum::http::{Response, StatusCode};
        use std::sync::atomic::Ordering;
        let front = Front {
            script: Arc::new(std::sync::Mutex::new(script.into())),
            ..Front::default()
        };
        let http = sa360_video_client_support::http_client_builder()
            .build()
            .expect("a client");
        let state = front.clone();
        let app = axum::Router::new().fallback(move |request: axum::extract::Request| {
            let (front, http, target) = (state.clone(), http.clone(), target.clone());
            let dev_token = dev_token.clone();
            async move {
                let (parts, body) = request.into_parts();
                let body = axum::body::to_bytes(body, 1 << 20).await.unwrap_or_default();
                let path = parts
                    .uri
                    .path_and_query()
                    .map(|p| p.as_str().to_owned())
                    .unwrap_or_default();
                if parts.uri.path() == "/token" {
                    front.token_requests.fetch_add(1, Ordering::SeqCst);
                    let step = front
                        .script
                        .lock()
                        .unwrap()
                        .pop_front()
                        .unwrap_or(TokenAnswer::Issue);
                    match step {
                        TokenAnswer::Issue => {}
                        TokenAnswer::Hang(d) => tokio::time::sleep(d).await,
                        TokenAnswer::Status(status) => {
                            let error = if status == 400 {
                                r#"{"error":"invalid_grant","error_description":"Invalid JWT Signature."}"#
                            } else {
                                r#"{"error":"temporarily_unavailable"}"#
                            };
                            return Response::builder()
                                .status(status)
                                .header("content-type", "application/json")
                                .header("retry-after", "0")
                                .body(Body::from(error))
                                .unwrap();
                        }
                    }
                    let token = {
                        let mut issued = front.issued.lock().unwrap();
                        let token = format!("ya29.front-{}", issued.len() + 1);
                        issued.push(token.clone());
                        token
                    };
                    return Response::builder()
                        .header("content-type", "application/json")
                        .body(Body::from(format!(
                            r#"{{"access_token":"{token}","expires_in":3600,"token_type":"Bearer"}}"#
                        )))
                        .unwrap();
                }
                {
                    front.api_requests.fetch_add(1, Ordering::SeqCst);
                    let bearer = parts
                        .headers
                        .get("authorization")
                        .and_then(|v| v.to_str().ok())
                        .and_then(|v| v.strip_prefix("Bearer "))
                        .unwrap_or_default()
                        .to_owned();
                    front.bearer_seen.lock().unwrap().push(bearer.clone());
                    if front.refuse_all.load(Ordering::SeqCst)
                        || front.revoked.lock().unwrap().contains(&bearer)
                    {
                        return Response::builder()
                            .status(StatusCode::UNAUTHORIZED)
                            .header("content-type", "application/json")
                            .body(Body::from(
                                r#"{"error":{"code":401,"message":"Request had invalid authentication credentials.","errors":[{"domain":"global","reason":"authError","message":"Invalid Credentials"}]}}"#,
                            ))
                            .unwrap();
                    }
                }
                let mut forward = http
                    .request(parts.method.clone(), format!("{target}{path}"))
                    .header("authorization", format!("Bearer {dev_token}"));
                if let Some(v) = parts.headers.get("content-type") {
                    forward = forward.header("content-type", v);
                }
                let answer = forward.body(body).send().await.expect("the fake answers");
                let status = answer.status();
                let content_type = answer.headers().get("content-type").cloned();
                let bytes = answer.bytes().await.expect("the fake's body");
                let mut response = Response::builder().status(status.as_u16());
                if let Some(v) = content_type {
                    response = response.header("content-type", v);
                }
                response.body(Body::from(bytes)).unwrap()
            }
        });
        let origin = serve(app).await;
        (front, origin)
    }

    fn token_requests(&self) -> usize {
        self.token_requests
            .load(std::sync::atomic::Ordering::SeqCst)
    }

    fn issued(&self) -> usize {
        self.issued.lock().unwrap().len()
    }

    fn api_requests(&self) -> usize {
        self.api_requests.load(std::sync::atomic::Ordering::SeqCst)
    }
}

/// A service account whose key file sends the exchange to `origin/token`,
/// with a 1 s exchange timeout.
fn account_via(fake: &SearchAdsFake, origin: &str) -> Arc<ServiceAccount> {
    let mut key: serde_json::Value =
        serde_json::from_str(&fake.service_account_key_json()).expect("JSON");
    key["token_uri"] = format!("{origin}/token").into();
    let options = sa360_video_sdk::http::HttpOptions::default().timeout(Duration::from_secs(1));
    Arc::new(
        ServiceAccount::from_json(&key.to_string())
            .expect("a valid key file")
            .http_options(options),
    )
}

/// A client of the API through `origin`.
fn client_via(origin: &str, tokens: Arc<dyn TokenSource>, attempts: u32) -> SearchAdsClient {
    SearchAdsClient::builder_shared(tokens)
        .base_url(format!("{origin}/doubleclicksearch/v2"))
        .retry_policy(support::fast_retries(attempts))
        .build()
        .expect("builds")
}

#[tokio::test]
async fn transient_token_endpoint_errors_follow_the_retry_policy() {
    let fake = support::start(SearchAdsFake::builder()).await;
    let (front, origin) = Front::start(
        &fake,
        vec![
            TokenAnswer::Status(503),
            TokenAnswer::Status(429),
            TokenAnswer::Hang(Duration::from_secs(3)),
        ],
    )
    .await;
    let (agency, advertiser) = support::advertiser(&fake, 0);

    // Four attempts: 503, 429, a timeout, then the exchange works.
    let client = client_via(&origin, account_via(&fake, &origin), 4);
    client
        .saved_columns(agency, advertiser)
        .send()
        .await
        .expect("the fourth attempt gets a token");
    assert_eq!(front.token_requests(), 4);
    assert_eq!(
        front.api_requests(),
        1,
        "the API was called only with a token"
    );
    assert_eq!(front.issued(), 1);

    // Fewer attempts than failures: the last failure is reported, typed and transient.
    front
        .script
        .lock()
        .unwrap()
        .extend([TokenAnswer::Status(502), TokenAnswer::Status(429)]);
    let client = client_via(&origin, account_via(&fake, &origin), 2);
    let e = client
        .saved_columns(agency, advertiser)
        .send()
        .await
        .expect_err("two failures, two attempts");
    let Error::TokenUnavailable { status, .. } = &e else {
        panic!("{e:?}");
    };
    assert_eq!(*status, Some(429));
    let text = e.to_string();
    assert!(text.contains("HTTP 429"), "{text}");
    assert!(text.contains("/token"), "{text}");
    assert_eq!(front.token_requests(), 6);
    assert_eq!(front.api_requests(), 1);

    // A hang is named with the timeout's value.
    front
        .script
        .lock()
        .unwrap()
        .push_back(TokenAnswer::Hang(Duration::from_secs(3)));
    let client = client_via(&origin, account_via(&fake, &origin), 1);
    let e = client
        .saved_columns(agency, advertiser)
        .send()
        .await
        .expect_err("timed out");
    assert!(
        matches!(e, Error::TokenUnavailable { status: None, .. }),
        "{e:?}"
    );
    assert!(e.to_string().contains("did not answer within 1 s"), "{e}");
}

#[tokio::test]
async fn permanent_token_endpoint_errors_are_not_retried() {
    let fake = support::start(SearchAdsFake::builder()).await;
    let (front, origin) = Front::start(
        &fake,
        vec![TokenAnswer::Status(400), TokenAnswer::Status(400)],
    )
    .await;
    let (agency, advertiser) = support::advertiser(&fake, 0);
    let client = client_via(&origin, account_via(&fake, &origin), 4);
    let e = client
        .saved_columns(agency, advertiser)
        .send()
        .await
        .expect_err("invalid grant");
    assert!(
        matches!(
            e,
            Error::InvalidGrant {
                credential: sa360_video_sdk::search_ads::CredentialKind::ServiceAccount,
                ..
            }
        ),
        "{e:?}"
    );
    assert!(!e.is_transient());
    let text = e.to_string();
    assert!(text.contains("HTTP 400"), "{text}");
    assert!(text.contains("invalid_grant"), "{text}");
    assert!(text.contains("IAM > Service accounts > Keys"), "{text}");
    assert_eq!(front.token_requests(), 1, "a refused grant is not retried");
    assert_eq!(front.api_requests(), 0);
}

#[tokio::test(flavor = "current_thread")]
async fn a_401_invalidates_the_refused_token_and_retries_once() {
    let captured = TraceCapture::start();
    let fake = support::start(SearchAdsFake::builder()).await;
    let (front, origin) = Front::start(&fake, vec![]).await;
    let source = account_via(&fake, &origin);
    let client = client_via(&origin, source.clone(), 1);
    let (agency, advertiser) = support::advertiser(&fake, 0);

    client
        .saved_columns(agency, advertiser)
        .send()
        .await
        .expect("first token works");
    let first = source
        .token()
        .await
        .expect("cached")
        .expose_secret()
        .to_owned();
    // The service revokes it; the cache still thinks it fresh.
    front.revoked.lock().unwrap().push(first.clone());

    client
        .saved_columns(agency, advertiser)
        .send()
        .await
        .expect("retried once with a fresh token (no retry policy needed: 1 attempt)");
    let seen = front.bearer_seen.lock().unwrap().clone();
    assert_eq!(seen.len(), 3, "{} API requests", seen.len());
    assert_eq!(seen[1], first, "the refused token was sent once");
    assert_ne!(seen[2], first, "then a fresh one");
    assert_eq!(front.issued(), 2);

    // A second 401 is the answer: one retry only.
    front
        .refuse_all
        .store(true, std::sync::atomic::Ordering::SeqCst);
    let e = client
        .saved_columns(agency, advertiser)
        .send()
        .await
        .expect_err("refused twice");
    assert_eq!(e.status(), Some(401));
    assert_eq!(front.api_requests(), 5, "two more requests, not three");
    assert_eq!(front.issued(), 3);

    // Writes get the same treatment.
    front
        .refuse_all
        .store(false, std::sync::atomic::Ordering::SeqCst);
    let current = source
        .token()
        .await
        .expect("a token")
        .expose_secret()
        .to_owned();
    front.revoked.lock().unwrap().push(current);
    let conversion = support::valid_conversion(&fake, "auth-401-retry", 0);
    let report = client.insert(&[conversion]).send().await.expect("a report");
    assert_eq!(report.stored(), 1, "{report}");
    assert_eq!(front.issued(), 4);

    // No token anywhere in errors or traces.
    let text = captured.text();
    let shown = format!("{e} {e:?}");
    for token in front.bearer_seen.lock().unwrap().iter() {
        assert!(
            !text.contains(token.as_str()),
            "a token leaked into the trace"
        );
        assert!(
            !shown.contains(token.as_str()),
            "a token leaked into the error"
        );
    }
    assert!(
        text.contains("retrying once with a fresh token")
            || text.contains("sending once more with a fresh token"),
        "{text}"
    );
}

#[tokio::test]
async fn invalidate_drops_only_the_refused_token() {
    let fake = support::start(SearchAdsFake::builder()).await;
    let source =
        ServiceAccount::from_json(&fake.service_account_key_json()).expect("a valid key file");
    source.allow_loopback();
    let first = source.token().await.expect("a token");
    // Another token (one a concurrent caller already replaced) leaves the cache alone.
    assert!(source.invalidate(&sa360_video_sdk::search_ads::AccessToken::new("ya29.other")));
    let same = source.token().await.expect("cached");
    assert_eq!(same.expose_secret(), first.expose_secret());
    assert_eq!(fake.ledger().counts().tokens_issued, 1);
    // The cached one is dropped.
    assert!(source.invalidate(&first));
    let fresh = source.token().await.expect("a new token");
    assert_ne!(fresh.expose_secret(), first.expose_secret());
    assert_eq!(fake.ledger().counts().tokens_issued, 2);
    // A fixed token cannot be refreshed: no retry is worth it.
    assert!(!StaticToken::new("t").invalidate(&sa360_video_sdk::search_ads::AccessToken::new("t")));
}

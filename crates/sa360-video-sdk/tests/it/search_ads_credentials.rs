//! Signing in as Google documents, against the fake: refresh-token
//! credentials (`AuthorizedUser`), the metadata server, Application Default
//! Credentials and the installed-app flow (the test plays the browser); the
//! shared refresh under concurrency, `invalid_grant`, transient token-endpoint
//! failures under the retry policy, hostile token endpoints, and secrets that
//! never show or travel.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use axum::Router;
use axum::http::StatusCode;
use axum::response::IntoResponse;
use axum::routing::post;
use sa360_video_fakes::SearchAdsFake;
use sa360_video_sdk::http::HttpOptions;
use sa360_video_sdk::search_ads::auth::installed::{InstalledAppFlow, LoopbackRedirect};
use sa360_video_sdk::search_ads::{
    AuthorizedUser, CredentialKind, CredentialOrigin, DefaultCredentials, Error, MetadataServer,
    SearchAdsClient, TokenSource,
};
use test_support::TraceCapture;
use test_support::hostile::{Answer, HostileServer};

use crate::local_server::serve;
use crate::search_ads_support as support;

fn client(fake: &SearchAdsFake, tokens: Arc<dyn TokenSource>, attempts: u32) -> SearchAdsClient {
    SearchAdsClient::builder_shared(tokens)
        .base_url(fake.base_url())
        .retry_policy(support::fast_retries(attempts))
        .build()
        .expect("builds")
}

fn user(fake: &SearchAdsFake) -> Arc<AuthorizedUser> {
    let user = AuthorizedUser::from_json(&fake.authorized_user_json()).expect("a valid file");
    // The fake's token endpoint is on loopback: the test points there (a file alone cannot).
    user.allow_loopback();
    Arc::new(user)
}

/// Every secret of the fake's authorized_user credentials.
fn secrets(fake: &SearchAdsFake) -> [String; 2] {
    let u = fake.authorized_user();
    [u.client_secret.clone(), u.refresh_token.clone()]
}

/// A form-encoded body (reqwest is built without its `form` feature).
fn form(pairs: &[(&str, &str)]) -> String {
    url::form_urlencoded::Serializer::new(String::new())
        .extend_pairs(pairs)
        .finish()
}

fn assert_no_secret(text: &str, secrets: &[String]) {
    for s in secrets {
        assert!(!text.contains(s.as_str()), "a secret shows in: {text}");
    }
}

#[tokio::test]
async fn refresh_token_credentials_work_end_to_end_and_cache_the_token() {
    let fake = support::start(SearchAdsFake::builder()).await;
    let capture = TraceCapture::start();
    let source = user(&fake);
    assert_eq!(source.token_uri(), fake.token_url());
    let client = client(&fake, source.clone(), 3);
    let (agency, advertiser) = support::advertiser(&fake, 0);
    for _ in 0..3 {
        client
            .saved_columns(agency, advertiser)
            .send()
            .await
            .expect("authorized by the refreshed token");
    }
    assert_eq!(
        fake.oauth_counts().token_requests,
        1,
        "one refresh, then cached"
    );
    assert_eq!(fake.ledger().counts().saved_columns_requests, 3);
    let token = source.token().await.expect("cached");
    assert!(token.expires_at().is_some());
    let mut all = secrets(&fake).to_vec();
    all.push(token.expose_secret().to_owned());
    assert_no_secret(&format!("{source:?}"), &all);
    assert_no_secret(&capture.text(), &all);
    assert_eq!(source.kind(), CredentialKind::AuthorizedUser);
}

#[tokio::test]
async fn fifty_concurrent_calls_on_an_expired_token_share_one_refresh() {
    let fake = support::start(SearchAdsFake::builder()).await;
    let source = user(&fake);
    // A first token that expires at once (the fake's lifetime of 1 s is
    // inside the 30 s refresh margin and passes during the sleep).
    fake.set_token_lifetime(Duration::from_secs(1));
    let first = source.token().await.expect("a token");
    tokio::time::sleep(Duration::from_millis(1_100)).await;
    assert!(!first.is_fresh(Duration::ZERO), "expired");
    fake.set_token_lifetime(Duration::from_secs(3600));
    let before = fake.oauth_counts().token_requests;

    let client = client(&fake, source.clone(), 3);
    let (agency, advertiser) = support::advertiser(&fake, 0);
    let calls = (0..50).map(|_| client.saved_columns(agency, advertiser).send());
    for result in futures::future::join_all(calls).await {
        result.expect("authorized");
    }
    let refreshes = fake.oauth_counts().token_requests - before;
    assert_eq!(
        refreshes, 1,
        "50 concurrent calls, {refreshes} token requests"
    );
    assert_eq!(fake.ledger().counts().unauthorized, 0);
}

#[tokio::test]
async fn a_401_drops_exactly_the_refused_token_and_the_call_succeeds_with_a_new_one() {
    let fake = support::start(SearchAdsFake::builder()).await;
    let source = user(&fake);
    let client = client(&fake, source.clone(), 1);
    let (agency, advertiser) = support::advertiser(&fake, 0);
    client
        .saved_columns(agency, advertiser)
        .send()
        .await
        .expect("ok");
    let old = source.token().await.expect("cached");
    // The access token is revoked behind the client's back (the revoke
    // endpoint accepts access tokens too).
    let revoked = reqwest::Client::new()
        .post(fake.revoke_url())
        .header("content-type", "application/x-www-form-urlencoded")
        .body(form(&[("token", old.expose_secret())]))
        .send()
        .await
        .expect("revoke answers");
    assert_eq!(revoked.status(), 200);
    client
        .saved_columns(agency, advertiser)
        .send()
        .await
        .expect("retried once with a fresh token");
    let counts = fake.ledger().counts();
    assert_eq!(counts.unauthorized, 1);
    assert_eq!(fake.oauth_counts().token_requests, 2);
    let new = source.token().await.expect("cached");
    assert!(!new.same_token(&old));
    // Telling the source about a token it no longer holds drops nothing.
    source.invalidate(&old);
    assert!(source.token().await.expect("cached").same_token(&new));
    assert_eq!(fake.oauth_counts().token_requests, 2);
}

#[tokio::test]
async fn a_revoked_refresh_token_is_invalid_grant_with_a_sign_in_hint_and_sends_nothing() {
    let fake = support::start(SearchAdsFake::builder()).await;
    fake.revoke_refresh_token(&fake.authorized_user().refresh_token);
    let capture = TraceCapture::start();
    let client = client(&fake, user(&fake), 5);
    let (agency, advertiser) = support::advertiser(&fake, 0);
    let e = client
        .saved_columns(agency, advertiser)
        .send()
        .await
        .expect_err("revoked");
    assert!(
        matches!(
            &e,
            Error::InvalidGrant {
                credential: CredentialKind::AuthorizedUser,
                ..
            }
        ),
        "{e:?}"
    );
    assert!(!e.is_transient());
    let text = e.to_string();
    for needle in [
        "invalid_grant",
        "apictl auth login",
        "gcloud auth application-default login",
        "7 days",
        "refresh-token credentials",
    ] {
        assert!(text.contains(needle), "{needle:?} missing from: {text}");
    }
    assert_no_secret(&text, &secrets(&fake));
    assert_no_secret(&format!("{e:?}"), &secrets(&fake));
    assert_no_secret(&capture.text(), &secrets(&fake));
    assert_eq!(fake.oauth_counts().token_requests, 1, "not retried");
    assert_eq!(fake.ledger().counts().saved_columns_requests, 0);
}

#[tokio::test]
async fn a_wrong_client_secret_is_an_auth_error_naming_the_credential() {
    let fake = support::start(SearchAdsFake::builder()).await;
    let u = fake.authorized_user();
    let source = AuthorizedUser::builder(&u.client_id, "GOCSPX-wrong-secret", &u.refresh_token)
        .token_uri(fake.token_url())
        .build()
        .expect("builds");
    let e = source.token().await.expect_err("invalid_client");
    assert!(
        matches!(
            &e,
            Error::Auth {
                credential: CredentialKind::AuthorizedUser,
                ..
            }
        ),
        "{e:?}"
    );
    let text = e.to_string();
    assert!(text.contains("invalid_client"), "{text}");
    assert!(text.contains("client_secret"), "{text}");
    assert!(!text.contains("service-account key file"), "{text}");
    assert!(!text.contains("GOCSPX-wrong-secret"), "{text}");
}

/// A token endpoint that answers 503 `failures` times, then the fake's
/// development token.
async fn flaky_token_endpoint(fake: &SearchAdsFake, failures: usize) -> (String, Arc<AtomicUsize>) {
    let seen = Arc::new(AtomicUsize::new(0));
    let token = fake.dev_token().to_owned();
    let counter = seen.clone();
    let app = Router::new().route(
        "/token",
        post(move || {
            let n = counter.fetch_add(1, Ordering::SeqCst);
            let token = token.clone();
            async move {
                if n < failures {
                    (StatusCode::SERVICE_UNAVAILABLE, "busy").into_response()
                } else {
                    axum::Json(serde_json::json!({"access_token": token, "expires_in": 3599}))
                        .into_response()
                }
            }
        }),
    );
    (format!("{}/token", serve(app).await), seen)
}

#[tokio::test]
async fn transient_token_endpoint_failures_follow_the_retry_policy() {
    let fake = support::start(SearchAdsFake::builder()).await;
    let u = fake.authorized_user();
    let (agency, advertiser) = support::advertiser(&fake, 0);

    let (uri, seen) = flaky_token_endpoint(&fake, 2).await;
    let source = AuthorizedUser::builder(&u.client_id, &u.client_secret, &u.refresh_token)
        .token_uri(uri)
        .build()
        .expect("builds");
    client(&fake, Arc::new(source), 3)
        .saved_columns(agency, advertiser)
        .send()
        .await
        .expect("the third attempt gets a token");
    assert_eq!(seen.load(Ordering::SeqCst), 3);

    let (uri, seen) = flaky_token_endpoint(&fake, 5).await;
    let source = AuthorizedUser::builder(&u.client_id, &u.client_secret, &u.refresh_token)
        .token_uri(uri)
        .build()
        .expect("builds");
    let e = client(&fake, Arc::new(source), 2)
        .saved_columns(agency, advertiser)
        .send()
        .await
        .expect_err("the policy allows 2 attempts");
    assert!(
        matches!(
            e,
            Error::TokenUnavailable {
                status: Some(503),
                ..
            }
        ),
        "{e:?}"
    );
    assert_eq!(seen.load(Ordering::SeqCst), 2);
    assert_eq!(fake.ledger().counts().saved_columns_requests, 1);
}

#[tokio::test]
async fn hostile_token_endpoints_are_bounded() {
    let fake = support::start(SearchAdsFake::builder()).await;
    let u = fake.authorized_user();
    let mut options = HttpOptions::default();
    options.read_timeout = Duration::from_secs(2);
    options.max_body_bytes = 1 << 20;
    for (answer, expected) in [
        (Answer::AnnouncedHuge, "limit of 1048576 bytes"),
        (Answer::Endless, "limit of 1048576 bytes"),
        (Answer::Trickle, "stalled"),
    ] {
        let server = HostileServer::start(answer);
        let source = AuthorizedUser::builder(&u.client_id, &u.client_secret, &u.refresh_token)
            .token_uri(format!("{}/token", server.url()))
            .http_options(options.clone())
            .build()
            .expect("builds");
        let started = Instant::now();
        let e = source.token().await.expect_err("refused");
        assert!(
            started.elapsed() < Duration::from_secs(15),
            "{answer:?}: took {:?}",
            started.elapsed()
        );
        assert!(
            matches!(e, Error::TokenUnavailable { .. }),
            "{answer:?}: {e:?}"
        );
        assert!(e.to_string().contains(expected), "{answer:?}: {e}");
        assert_no_secret(&e.to_string(), &secrets(&fake));
    }
    // The same bounds hold for the metadata server.
    let server = HostileServer::start(Answer::Endless);
    let metadata = MetadataServer::builder()
        .host(server.addr().to_string())
        .http_options(options.clone())
        .build()
        .expect("builds");
    let e = metadata.token().await.expect_err("too large");
    assert!(e.to_string().contains("limit of 1048576 bytes"), "{e}");
}

#[tokio::test]
async fn a_token_endpoint_redirecting_elsewhere_never_sends_the_secret_there() {
    let fake = support::start(SearchAdsFake::builder()).await;
    let u = fake.authorized_user();
    let elsewhere_hits = Arc::new(AtomicUsize::new(0));
    let hits = elsewhere_hits.clone();
    let elsewhere = serve(Router::new().fallback(move || {
        hits.fetch_add(1, Ordering::SeqCst);
        async { "{}" }
    }))
    .await;
    let target = format!("{elsewhere}/token");
    let redirecting = serve(Router::new().route(
        "/token",
        post(move || {
            let target = target.clone();
            async move { (StatusCode::TEMPORARY_REDIRECT, [("location", target)]).into_response() }
        }),
    ))
    .await;
    let source = AuthorizedUser::builder(&u.client_id, &u.client_secret, &u.refresh_token)
        .token_uri(format!("{redirecting}/token"))
        .build()
        .expect("builds");
    let e = source.token().await.expect_err("not followed");
    assert!(e.to_string().contains("redirect"), "{e}");
    assert_eq!(
        elsewhere_hits.load(Ordering::SeqCst),
        0,
        "the form went to another origin"
    );
}

#[tokio::test]
async fn the_metadata_server_gives_tokens_with_its_header() {
    let fake = support::start(SearchAdsFake::builder()).await;
    let source = Arc::new(
        MetadataServer::builder()
            .host(fake.metadata_host())
            .build()
            .expect("builds"),
    );
    let client = client(&fake, source, 1);
    let (agency, advertiser) = support::advertiser(&fake, 0);
    client
        .saved_columns(agency, advertiser)
        .send()
        .await
        .expect("authorized");
    client
        .saved_columns(agency, advertiser)
        .send()
        .await
        .expect("cached");
    assert_eq!(fake.oauth_counts().metadata_requests, 1);
    // Nothing listens: not on Google Cloud, so no credentials (not retried), and the hint says
    // where else to sign in.
    let gone = MetadataServer::builder()
        .host("127.0.0.1:9")
        .build()
        .expect("builds");
    let e = gone.token().await.expect_err("nothing listens");
    assert!(
        matches!(
            e,
            Error::Auth {
                credential: CredentialKind::MetadataServer,
                ..
            }
        ),
        "{e:?}"
    );
    assert!(!e.is_transient());
    assert!(
        e.to_string().contains("GOOGLE_APPLICATION_CREDENTIALS"),
        "{e}"
    );
}

// Multi-threaded: the lookup probes the fake's metadata server synchronously (see
// `DefaultCredentialsBuilder::build`), so the fake must be served from another thread.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn application_default_credentials_find_each_kind() {
    let fake = support::start(SearchAdsFake::builder()).await;
    let dir = tempfile::tempdir().expect("a temp dir");
    let user_file = dir.path().join("user.json");
    std::fs::write(&user_file, fake.authorized_user_json()).expect("written");
    let sa_file = dir.path().join("sa.json");
    std::fs::write(&sa_file, fake.service_account_key_json()).expect("written");
    let isolated = || {
        DefaultCredentials::builder()
            .env_var("GOOGLE_APPLICATION_CREDENTIALS", None::<String>)
            .env_var(
                "CLOUDSDK_CONFIG",
                Some(dir.path().join("no-gcloud").to_str().unwrap()),
            )
            .env_var("GCE_METADATA_HOST", Some(fake.metadata_host()))
    };
    let (agency, advertiser) = support::advertiser(&fake, 0);
    for (file, kind) in [
        (Some(&user_file), CredentialKind::AuthorizedUser),
        (Some(&sa_file), CredentialKind::ServiceAccount),
        (None, CredentialKind::MetadataServer),
    ] {
        let found = isolated()
            .env_var(
                "GOOGLE_APPLICATION_CREDENTIALS",
                file.map(|f| f.to_str().unwrap().to_owned()),
            )
            .build()
            .expect("found");
        assert_eq!(found.kind(), kind);
        if let Some(file) = file {
            assert_eq!(
                found.origin(),
                &CredentialOrigin::EnvironmentVariable(file.clone())
            );
        }
        client(&fake, Arc::new(found), 1)
            .saved_columns(agency, advertiser)
            .send()
            .await
            .unwrap_or_else(|e| panic!("{kind:?}: {e}"));
    }
    // gcloud's file, through CLOUDSDK_CONFIG.
    let gcloud = dir.path().join("gcloud");
    std::fs::create_dir_all(&gcloud).expect("created");
    std::fs::copy(
        &user_file,
        gcloud.join("application_default_credentials.json"),
    )
    .expect("copied");
    let found = isolated()
        .env_var("CLOUDSDK_CONFIG", Some(gcloud.to_str().unwrap()))
        .build()
        .expect("found");
    assert!(
        matches!(found.origin(), CredentialOrigin::GcloudFile(_)),
        "{found:?}"
    );
    assert_no_secret(&format!("{found:?}"), &secrets(&fake));
}

/// Plays the browser: opens the authorization URL, follows the fake's
/// redirect to the loopback listener.
async fn play_browser(url: &str) -> reqwest::StatusCode {
    let browser = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .expect("builds");
    let consent = browser.get(url).send().await.expect("the consent page");
    assert_eq!(consent.status(), 302, "auto-consent redirects");
    let location = consent.headers()["location"]
        .to_str()
        .expect("text")
        .to_owned();
    assert!(location.starts_with("http://127.0.0.1:"), "{location}");
    browser
        .get(&location)
        .send()
        .await
        .expect("the loopback listener answers")
        .status()
}

#[tokio::test]
async fn the_installed_app_flow_gives_working_refresh_token_credentials() {
    let fake = support::start(SearchAdsFake::builder()).await;
    let capture = TraceCapture::start();
    let u = fake.authorized_user();
    let flow = InstalledAppFlow::builder(&u.client_id, &u.client_secret)
        .auth_uri(fake.authorize_url())
        .token_uri(fake.token_url())
        .revoke_uri(fake.revoke_url())
        .build()
        .expect("builds");
    let redirect = LoopbackRedirect::bind().await.expect("a free port");
    let authorization = flow.authorization(redirect.redirect_uri());
    let url = authorization.url().to_owned();
    let (code, status) = tokio::join!(
        redirect.wait(&authorization, Duration::from_secs(30)),
        play_browser(&url)
    );
    assert_eq!(status, 200);
    let code = code.expect("the redirect carried a code");
    let credentials = flow
        .exchange(&authorization, code)
        .await
        .expect("exchanged");
    let json = credentials.to_json();
    let file: serde_json::Value =
        serde_json::from_str(secrecy::ExposeSecret::expose_secret(&json)).expect("JSON");
    let refresh = file["refresh_token"]
        .as_str()
        .expect("a refresh token")
        .to_owned();
    assert_ne!(refresh, u.refresh_token, "a new refresh token");
    let credentials = Arc::new(credentials);
    let (agency, advertiser) = support::advertiser(&fake, 0);
    client(&fake, credentials.clone(), 1)
        .saved_columns(agency, advertiser)
        .send()
        .await
        .expect("the new credentials work");
    // Revoked, they stop working with invalid_grant.
    credentials.revoke().await.expect("revoked");
    let again =
        AuthorizedUser::from_json(secrecy::ExposeSecret::expose_secret(&json)).expect("valid");
    again.allow_loopback();
    let e = again.token().await.expect_err("revoked");
    assert!(matches!(e, Error::InvalidGrant { .. }), "{e:?}");
    let mut all = secrets(&fake).to_vec();
    all.push(refresh);
    assert_no_secret(&capture.text(), &all);
}

#[tokio::test]
async fn the_fake_refuses_reused_codes_wrong_verifiers_and_remote_redirects() {
    let fake = support::start(SearchAdsFake::builder()).await;
    let u = fake.authorized_user();
    let http = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .expect("builds");
    let authorize = |redirect: &str, challenge: &str| {
        let mut url = url::Url::parse(&fake.authorize_url()).expect("url");
        url.query_pairs_mut()
            .append_pair("client_id", &u.client_id)
            .append_pair("redirect_uri", redirect)
            .append_pair("response_type", "code")
            .append_pair("scope", "https://www.googleapis.com/auth/doubleclicksearch")
            .append_pair("access_type", "offline")
            .append_pair("state", "s1")
            .append_pair("code_challenge", challenge)
            .append_pair("code_challenge_method", "S256");
        url.to_string()
    };
    let remote = http
        .get(authorize("https://attacker.example/cb", "x"))
        .send()
        .await
        .expect("answers");
    assert_eq!(
        remote.status(),
        400,
        "a non-loopback redirect_uri is refused"
    );
    // RFC 7636 appendix B's verifier and challenge.
    let verifier = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";
    let answer = http
        .get(authorize(
            "http://127.0.0.1:1/",
            "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM",
        ))
        .send()
        .await
        .expect("answers");
    let location = url::Url::parse(answer.headers()["location"].to_str().unwrap()).unwrap();
    let code: String = location
        .query_pairs()
        .find(|(k, _)| k == "code")
        .map(|(_, v)| v.into_owned())
        .expect("a code");
    let exchange = |verifier: &str| {
        http.post(fake.token_url())
            .header("content-type", "application/x-www-form-urlencoded")
            .body(form(&[
                ("grant_type", "authorization_code"),
                ("code", code.as_str()),
                ("client_id", u.client_id.as_str()),
                ("client_secret", u.client_secret.as_str()),
                ("redirect_uri", "http://127.0.0.1:1/"),
                ("code_verifier", verifier),
            ]))
    };
    let wrong = exchange("not-the-verifier").send().await.expect("answers");
    assert_eq!(wrong.status(), 400);
    let body: serde_json::Value = wrong.json().await.expect("JSON");
    assert_eq!(body["error"], "invalid_grant");
    // The code was spent by the failed attempt: single use.
    let reused = exchange(verifier).send().await.expect("answers");
    assert_eq!(reused.status(), 400);
    let body: serde_json::Value = reused.json().await.expect("JSON");
    assert_eq!(body["error"], "invalid_grant");
}

/// Issue 36: gcloud writes `quota_project_id` into the ADC file; Google's libraries send it as
/// `x-goog-user-project` on API calls (v2 and the Reporting API), never to the token endpoint,
/// and `GOOGLE_CLOUD_QUOTA_PROJECT` wins over the file.
#[tokio::test]
async fn the_quota_project_goes_on_api_calls_and_never_to_the_token_endpoint() {
    let fake = support::start(SearchAdsFake::builder()).await;
    let dir = tempfile::tempdir().expect("a temp dir");
    let mut json: serde_json::Value =
        serde_json::from_str(&fake.authorized_user_json()).expect("JSON");
    json["quota_project_id"] = "billed-project-1".into();
    let file = dir.path().join("application_default_credentials.json");
    std::fs::write(&file, json.to_string()).expect("written");
    let adc = |quota_env: Option<&str>| {
        DefaultCredentials::builder()
            .env_var(
                "GOOGLE_APPLICATION_CREDENTIALS",
                Some(file.to_str().unwrap()),
            )
            .env_var("GOOGLE_CLOUD_QUOTA_PROJECT", quota_env)
            .build()
            .expect("found")
    };
    let (agency, advertiser) = support::advertiser(&fake, 0);
    let found = adc(None);
    assert_eq!(found.quota_project_id(), Some("billed-project-1"));
    let client = SearchAdsClient::builder(found)
        .base_url(fake.base_url())
        .reporting_base_url(fake.reporting_url())
        .retry_policy(support::fast_retries(1))
        .build()
        .expect("builds");
    client
        .saved_columns(agency, advertiser)
        .send()
        .await
        .expect("v2 call");
    client
        .accessible_customers()
        .send()
        .await
        .expect("Reporting call");
    assert_eq!(
        fake.user_projects(),
        vec![Some("billed-project-1".to_owned()); 2],
        "both API calls name the quota project"
    );
    let counts = fake.oauth_counts();
    assert!(counts.token_requests >= 1);
    assert_eq!(counts.user_project_on_token_requests, 0);

    // The environment variable wins over the file.
    let found = adc(Some("env-project-2"));
    assert_eq!(found.quota_project_id(), Some("env-project-2"));
    SearchAdsClient::builder(found)
        .base_url(fake.base_url())
        .build()
        .expect("builds")
        .saved_columns(agency, advertiser)
        .send()
        .await
        .expect("v2 call");
    assert_eq!(
        fake.user_projects().last().cloned().flatten().as_deref(),
        Some("env-project-2")
    );
    assert_eq!(fake.oauth_counts().user_project_on_token_requests, 0);

    // A value that cannot be sent is refused by name, before any call.
    let e = DefaultCredentials::builder()
        .env_var(
            "GOOGLE_APPLICATION_CREDENTIALS",
            Some(file.to_str().unwrap()),
        )
        .env_var("GOOGLE_CLOUD_QUOTA_PROJECT", Some("two words"))
        .build()
        .unwrap_err();
    assert!(e.to_string().contains("GOOGLE_CLOUD_QUOTA_PROJECT"), "{e}");
}

/// Issue 36: off Google Cloud, a metadata address that accepts connections and never answers
/// cost 30 s per token request. Now the lookup probes it once, within the probe's deadline, and
/// says at construction that there is no credentials source; a second lookup in the process
/// answers from the cached verdict.
#[test]
fn a_metadata_address_that_never_answers_costs_one_short_probe_per_process() {
    // Bound and never accepted: the kernel completes connections, nothing ever answers.
    let silent = std::net::TcpListener::bind("127.0.0.1:0").expect("bound");
    let address = silent.local_addr().expect("address").to_string();
    let dir = tempfile::tempdir().expect("a temp dir");
    let lookup = || {
        DefaultCredentials::builder()
            .env_var("GOOGLE_APPLICATION_CREDENTIALS", None::<String>)
            .env_var("CLOUDSDK_CONFIG", Some(dir.path().to_str().unwrap()))
            .env_var("GCE_METADATA_IP", None::<String>)
            .env_var("NO_GCE_CHECK", None::<String>)
            .env_var("GCE_METADATA_HOST", Some(address.as_str()))
            .build()
    };
    let started = Instant::now();
    let e = lookup().expect_err("no credentials source");
    let first = started.elapsed();
    assert!(first < Duration::from_secs(5), "the probe took {first:?}");
    let text = e.to_string();
    assert!(text.contains("no credentials found"), "{text}");
    assert!(text.contains(&address), "{text}");
    assert!(text.contains("GOOGLE_APPLICATION_CREDENTIALS"), "{text}");
    let started = Instant::now();
    lookup().expect_err("still none");
    assert!(
        started.elapsed() < Duration::from_millis(200),
        "the verdict is cached: {:?}",
        started.elapsed()
    );
    drop(silent);
}

/// Issue 36: the loopback listener served one connection at a time, 10 s each, so three idle
/// local connections delayed the real redirect by about 30 s. Issue 48: it then served 32 at once
/// and closed any more, so 32 idle connections made the real redirect fail. Now a new connection
/// beyond 32 closes the oldest: the redirect is answered within a second while 64 connections
/// sit idle (and a forged one is refused), and the state check still holds.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sixty_four_idle_connections_do_not_stop_the_sign_in_redirect() {
    let fake = support::start(SearchAdsFake::builder()).await;
    let u = fake.authorized_user();
    let flow = InstalledAppFlow::builder(&u.client_id, &u.client_secret)
        .auth_uri(fake.authorize_url())
        .token_uri(fake.token_url())
        .build()
        .expect("builds");
    let redirect = LoopbackRedirect::bind().await.expect("a free port");
    let authorization = flow.authorization(redirect.redirect_uri());
    let port = url::Url::parse(redirect.redirect_uri())
        .expect("URL")
        .port()
        .expect("a port");
    let url = authorization.url().to_owned();
    let browser = async {
        let mut idle = Vec::new();
        for _ in 0..64 {
            idle.push(
                tokio::net::TcpStream::connect(("127.0.0.1", port))
                    .await
                    .expect("connects"),
            );
        }
        // Let the listener accept them before the real redirect comes.
        tokio::time::sleep(Duration::from_millis(200)).await;
        let started = Instant::now();
        let forged = reqwest::get(format!("http://127.0.0.1:{port}/?code=x&state=forged"))
            .await
            .expect("answered");
        assert_eq!(forged.status(), 400, "another state is refused");
        let status = play_browser(&url).await;
        (status, started.elapsed(), idle)
    };
    let (code, (status, took, _idle)) = tokio::join!(
        redirect.wait(&authorization, Duration::from_secs(60)),
        browser
    );
    assert_eq!(status, 200);
    assert!(took < Duration::from_secs(1), "the redirect took {took:?}");
    code.expect("the redirect carried a code");
}

/// Issue 36: gcloud's `impersonated_service_account` file and workload identity federation's
/// `external_account` files (file- and URL-sourced subject tokens, with and without
/// impersonation) give working credentials through Application Default Credentials, against the
/// fake's IAM Credentials and STS endpoints.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn impersonated_and_external_account_files_work_through_adc() {
    use axum::http::HeaderMap;
    use axum::routing::get;

    let fake = support::start(SearchAdsFake::builder()).await;
    let dir = tempfile::tempdir().expect("a temp dir");
    let (agency, advertiser) = support::advertiser(&fake, 0);
    let source: serde_json::Value =
        serde_json::from_str(&fake.authorized_user_json()).expect("JSON");
    let target = "target@project.iam.gserviceaccount.com";
    // A URL-sourced subject token, JSON-formatted, behind a header (as on Azure).
    let subject_origin = serve(Router::new().route(
        "/subject",
        get(|headers: HeaderMap| async move {
            if headers.get("metadata").and_then(|v| v.to_str().ok()) != Some("True") {
                return (StatusCode::BAD_REQUEST, "no Metadata header").into_response();
            }
            axum::Json(serde_json::json!({"access_token": "eyJhbGciOiJSUzI1NiJ9.url.sig"}))
                .into_response()
        }),
    ))
    .await;
    let subject_file = dir.path().join("oidc-token");
    std::fs::write(&subject_file, "eyJhbGciOiJSUzI1NiJ9.file.sig\n").expect("written");
    let external = |source: serde_json::Value, impersonate: bool| {
        let mut file = serde_json::json!({
            "type": "external_account",
            "audience": "//iam.googleapis.com/projects/123/locations/global/workloadIdentityPools/pool/providers/ci",
            "subject_token_type": "urn:ietf:params:oauth:token-type:jwt",
            "token_url": fake.sts_token_url(),
            "credential_source": source,
        });
        if impersonate {
            file["service_account_impersonation_url"] = fake.impersonation_url(target).into();
            file["service_account_impersonation"] =
                serde_json::json!({"token_lifetime_seconds": 1800});
        }
        file
    };
    let files = [
        (
            "impersonated",
            serde_json::json!({
                "type": "impersonated_service_account",
                "service_account_impersonation_url": fake.impersonation_url(target),
                "delegates": ["delegate@project.iam.gserviceaccount.com"],
                "source_credentials": source,
            }),
            CredentialKind::ImpersonatedServiceAccount,
            (0, 1),
        ),
        (
            "external, file",
            external(serde_json::json!({"file": subject_file}), false),
            CredentialKind::ExternalAccount,
            (1, 0),
        ),
        (
            "external, url, json, impersonated",
            external(
                serde_json::json!({
                    "url": format!("{subject_origin}/subject?audience=%2F%2Fiam&x=1"),
                    "headers": {"Metadata": "True"},
                    "format": {"type": "json", "subject_token_field_name": "access_token"},
                }),
                true,
            ),
            CredentialKind::ExternalAccount,
            (1, 1),
        ),
    ];
    for (name, json, kind, (sts, iam)) in files {
        let before = fake.federation_counts();
        let path = dir
            .path()
            .join(format!("{}.json", name.replace([',', ' '], "_")));
        std::fs::write(&path, json.to_string()).expect("written");
        let found = DefaultCredentials::builder()
            .env_var(
                "GOOGLE_APPLICATION_CREDENTIALS",
                Some(path.to_str().unwrap()),
            )
            .build()
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(found.kind(), kind, "{name}");
        let client = client(&fake, Arc::new(found), 1);
        for _ in 0..2 {
            client
                .saved_columns(agency, advertiser)
                .send()
                .await
                .unwrap_or_else(|e| panic!("{name}: {e}"));
        }
        let after = fake.federation_counts();
        assert_eq!(
            (after.0 - before.0, after.1 - before.1),
            (sts, iam),
            "{name}: one exchange, then the cached token"
        );
    }
}

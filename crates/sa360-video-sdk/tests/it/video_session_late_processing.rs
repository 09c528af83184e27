//! Reproduction 1 of issue 11 against the fake: the service processes a login
//! seconds after the client gave up on it (a dropped future, a client timeout).
//! A proxy in front of the fake holds each request for 2 s and then forwards it
//! whether or not the client is still there, so the fake counts the failure
//! late, as a busy service would. The SDK must never forget such an attempt
//! before the service does.

use crate::video_session_support::{account, wrong};

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use sa360_video_fakes::{FakeClock, VideoSessionFake};
use sa360_video_sdk::http::{BaseUrl, HttpOptions};
use sa360_video_sdk::video_session::{
    Clock, Credentials, Error, LockoutStore, MemoryStore, VideoSessionClient,
};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

#[derive(Debug, Clone)]
struct FakeTime(FakeClock);

impl Clock for FakeTime {
    fn now(&self) -> SystemTime {
        self.0.system_now()
    }
}

/// Reads one HTTP/1.1 request (headers and a `Content-Length` body).
async fn read_request(socket: &mut TcpStream) -> Option<Vec<u8>> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    loop {
        let n = socket.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&chunk[..n]);
        if let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&buf[..end]).to_ascii_lowercase();
            let length: usize = head
                .lines()
                .find_map(|l| l.strip_prefix("content-length:"))
                .and_then(|v| v.trim().parse().ok())
                .unwrap_or(0);
            if buf.len() >= end + 4 + length {
                return Some(buf);
            }
        }
        if buf.len() > 1 << 20 {
            return None;
        }
    }
}

/// A proxy that forwards every request to `target` after `delay`, in a task of
/// its own: the request is processed even if the client has gone.
async fn late_proxy(target: std::net::SocketAddr, delay: Duration) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        loop {
            let Ok((mut client, _)) = listener.accept().await else {
                return;
            };
            tokio::spawn(async move {
                let Some(request) = read_request(&mut client).await else {
                    return;
                };
                // Not tied to the client: the fake processes it regardless.
                let forward = tokio::spawn(async move {
                    tokio::time::sleep(delay).await;
                    let text = String::from_utf8_lossy(&request).replacen(
                        "\r\n",
                        "\r\nconnection: close\r\n",
                        1,
                    );
                    let mut upstream = TcpStream::connect(target).await.ok()?;
                    upstream.write_all(text.as_bytes()).await.ok()?;
                    let mut answer = Vec::new();
                    upstream.read_to_end(&mut answer).await.ok()?;
                    Some(answer)
                });
                if let Ok(Some(answer)) = forward.await {
                    let _ = client.write_all(&answer).await;
                }
            });
        }
    });
    format!("http://{addr}")
}

async fn wait_for_failures(fake: &VideoSessionFake, n: u64) {
    for _ in 0..500 {
        let total = fake
            .ledger()
            .account(&account(fake))
            .map(|s| s.failures_total)
            .unwrap_or(0);
        if total >= n {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("the fake never processed the late login");
}

/// The scenario of the issue: one login the service processes 2 s late (the
/// client gave up on it by dropping the future, or by its own timeout), then
/// four wrong passwords, then waiting until the guard's `retry_at` and
/// trying once more. Before the fix the guard sent the last attempt while the
/// service still counted 5, and the account was blocked.
async fn late_attempt_then_wait_for_retry_at(
    give_up: impl AsyncFnOnce(&VideoSessionClient, &Credentials),
) {
    let fake = VideoSessionFake::start_default().await.unwrap();
    let store: Arc<dyn LockoutStore> = Arc::new(MemoryStore::new());
    let clock = Arc::new(FakeTime(fake.clock().clone()));
    let proxy = late_proxy(fake.addr(), Duration::from_secs(2)).await;
    let late = VideoSessionClient::builder(BaseUrl::parse(&proxy).unwrap())
        .http_options(HttpOptions::default().timeout(Duration::from_millis(500)))
        .clock(clock.clone())
        .lockout_store(Arc::clone(&store))
        .build()
        .unwrap();
    let direct = VideoSessionClient::builder(BaseUrl::parse(fake.base_url()).unwrap())
        .clock(clock.clone())
        .lockout_store(Arc::clone(&store))
        .build()
        .unwrap();

    give_up(&late, &wrong(&fake)).await;
    // The service processes it about 2 s after it was sent.
    wait_for_failures(&fake, 1).await;

    for _ in 0..4 {
        let e = direct.login(&wrong(&fake)).send().await.unwrap_err();
        assert!(matches!(e, Error::InvalidCredentials { .. }), "{e:?}");
    }
    let Err(Error::LockoutRefused { retry_at, .. }) = direct.login(&wrong(&fake)).send().await
    else {
        panic!("the sixth attempt within the window was not refused")
    };
    // Wait (on the driven clock) until the guard says it is safe, and try.
    let wait = retry_at.duration_since(fake.clock().system_now()).unwrap();
    fake.clock().advance(wait);
    match direct.login(&wrong(&fake)).send().await {
        Err(Error::InvalidCredentials { .. } | Error::LockoutRefused { .. }) => {}
        other => panic!("unexpected {other:?}"),
    }
    let stats = fake.ledger().account(&account(&fake)).unwrap();
    assert_eq!(stats.blocks_started, 0, "the service blocked the account");
    assert!(!fake.ledger().is_blocked(&account(&fake)));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dropped_login_processed_late_never_lets_the_service_block() {
    late_attempt_then_wait_for_retry_at(async |client, creds| {
        let dropped =
            tokio::time::timeout(Duration::from_millis(200), client.login(creds).send()).await;
        assert!(dropped.is_err(), "the login should still be in flight");
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_timed_out_login_processed_late_never_lets_the_service_block() {
    late_attempt_then_wait_for_retry_at(async |client, creds| {
        let e = client.login(creds).send().await.unwrap_err();
        assert!(matches!(&e, Error::Transport(t) if matches!(t.kind, sa360_video_sdk::http::TransportErrorKind::TimedOut { connect: false, .. })), "{e:?}");
    })
    .await;
}

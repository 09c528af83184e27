//! No answer, however large, slow or malformed, exhausts memory or hangs: a
//! hostile server answers every call of both clients with a 10 GiB
//! body (announced, and endless without a length), a body of one byte per
//! second, an HTML page and an empty body. Each call ends with a clear error
//! within the configured limits, the process's peak memory stays within
//! 64 MiB of where it started, and no file is left behind.
//!
//! The server is `test_support::HostileServer`, the same one the CLI's limit
//! tests use. One test function runs every case in turn, so the peak
//! resident set it measures belongs to it alone. The video session client
//! faces the same answers.

use std::sync::Arc;
use std::time::{Duration, Instant};

use chrono::DateTime;
use sa360_video_sdk::http::{BaseUrl, HttpOptions, TransportError, TransportErrorKind};
use sa360_video_sdk::search_ads::{
    AdvertiserId, AgencyId, Conversion, Error, Outcome, RetryPolicy, SearchAdsClient, StaticToken,
    WriteOptions,
};
use sa360_video_sdk::video_session::{
    self as video, Credentials, EmailAddress, Invitation, MemoryStore, Session, SessionId,
    UserDetails, VideoSessionClient,
};
use test_support::hostile::TEN_GIB;
use test_support::{Answer, HostileServer};

/// Peak and current resident set of this process, in KiB (Linux).
fn memory_kib(field: &str) -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix(field))
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or(0)
}

const STALL: Duration = Duration::from_secs(2);

fn client(base: &str) -> SearchAdsClient {
    SearchAdsClient::builder(StaticToken::new("token"))
        .base_url(base)
        .retry_policy(RetryPolicy::no_retries())
        .write_options(WriteOptions::default())
        .http_options(
            HttpOptions::default()
                .read_timeout(STALL)
                // A JSON answer is collected whole before it is parsed, in a
                // buffer that doubles as it grows: up to twice this limit can be
                // held before the limit trips (the default 32 MiB peaks near
                // 64 MiB). The test's own limits keep its peak readable.
                .max_body_bytes(8 * 1024 * 1024)
                .max_download_bytes(64 * 1024 * 1024),
        )
        .build()
        .expect("the client builds")
}

fn video_client(base: &str) -> VideoSessionClient {
    VideoSessionClient::builder(BaseUrl::parse(base).expect("a loopback URL"))
        .lockout_store(Arc::new(MemoryStore::new()))
        .http_options(
            HttpOptions::default()
                .read_timeout(STALL)
                .max_body_bytes(1024 * 1024),
        )
        .build()
        .expect("the client builds")
}

fn session() -> Session {
    Session::new(
        UserDetails::new(uuid::Uuid::nil(), 1, 2),
        "ut-hostile".to_owned().into(),
        None,
    )
}

/// Checks a video call's error against the answer that caused it.
fn check_video(call: &str, kind: Answer, error: &video::Error, elapsed: Duration) {
    let text = error.to_string();
    match kind {
        Answer::AnnouncedHuge | Answer::Endless => {
            assert!(
                matches!(
                    error,
                    video::Error::Transport(TransportError {
                        kind: TransportErrorKind::TooLarge {
                            limit: 1_048_576,
                            ..
                        },
                        ..
                    })
                ),
                "{call} {kind:?}: {error:?}"
            );
            assert!(text.contains("limit of 1048576 bytes"), "{text}");
            assert!(text.contains("HttpOptions::max_body_bytes"), "{text}");
            if kind == Answer::AnnouncedHuge {
                assert!(
                    text.contains(&format!("announced {TEN_GIB} bytes")),
                    "{text}"
                );
            }
        }
        Answer::Trickle => {
            assert!(
                matches!(error, video::Error::Transport(TransportError { kind: TransportErrorKind::Stalled { after, .. }, .. }) if *after == STALL),
                "{call} {kind:?}: {error:?}"
            );
            assert!(text.contains("stalled") && text.contains("2 s"), "{text}");
            assert!(text.contains("HttpOptions::read_timeout"), "{text}");
            assert!(elapsed < STALL * 3, "{call}: stalled after {elapsed:?}");
        }
        Answer::Html | Answer::Empty => {
            assert!(
                matches!(error, video::Error::UnexpectedResponse { .. }),
                "{call} {kind:?}: {error:?}"
            );
        }
    }
}

/// Checks the error of one call against the answer that caused it.
fn check(call: &str, kind: Answer, error: &Error, elapsed: Duration) {
    let text = error.to_string();
    match kind {
        Answer::AnnouncedHuge | Answer::Endless => {
            assert!(
                matches!(
                    error,
                    Error::Transport(TransportError {
                        kind: TransportErrorKind::TooLarge { .. },
                        ..
                    })
                ),
                "{call} {kind:?}: {error:?}"
            );
            assert!(text.contains("limit of"), "{text}");
            assert!(text.contains("HttpOptions::max_"), "{text}");
            if kind == Answer::AnnouncedHuge {
                assert!(
                    text.contains(&format!("announced {TEN_GIB} bytes")),
                    "{text}"
                );
            }
        }
        Answer::Trickle => {
            assert!(
                matches!(error, Error::Transport(TransportError { kind: TransportErrorKind::Stalled { after, .. }, .. }) if *after == STALL),
                "{call} {kind:?}: {error:?}"
            );
            assert!(text.contains("stalled") && text.contains("2 s"), "{text}");
            assert!(text.contains("HttpOptions::read_timeout"), "{text}");
            assert!(
                elapsed < STALL * 3,
                "{call}: stalled after {elapsed:?}, the stall timeout is {STALL:?}"
            );
        }
        Answer::Html | Answer::Empty => {
            assert!(
                matches!(
                    error,
                    Error::UnexpectedResponse { .. }
                        | Error::Csv { .. }
                        | Error::TruncatedDownload { .. }
                ),
                "{call} {kind:?}: {error:?}"
            );
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hostile_answers_end_every_call_with_a_clear_error_in_bounded_memory() {
    let server = HostileServer::start(Answer::Html);
    let base = server.url();
    let client = client(&base);
    let agency = AgencyId::new(1);
    let advertiser = AdvertiserId::new(2);
    let dir = tempfile::tempdir().expect("a temporary directory");
    let baseline = memory_kib("VmRSS:");
    let conversion = Conversion {
        agency_id: Some(agency),
        advertiser_id: Some(advertiser),
        ..Conversion::new(
            "c-1",
            DateTime::from_timestamp_millis(1_700_000_000_000).expect("a time"),
        )
    };

    for answer in Answer::ALL {
        server.set(answer);

        let start = Instant::now();
        let error = client
            .saved_columns(agency, advertiser)
            .send()
            .await
            .expect_err("a hostile answer");
        check("saved_columns", answer, &error, start.elapsed());

        let start = Instant::now();
        let report = client
            .insert(std::slice::from_ref(&conversion))
            .send()
            .await
            .expect("valid input");
        match &report.outcomes()[0] {
            Outcome::Failed {
                error,
                may_have_been_stored,
                ..
            } => {
                check("insert", answer, error, start.elapsed());
                assert!(may_have_been_stored, "a 200 was answered: it may be stored");
            }
            other => panic!("insert {answer:?}: {other:?}"),
        }

        let path = dir.path().join(format!("{answer:?}.csv"));
        let start = Instant::now();
        let error = client
            .id_mapping(agency, advertiser)
            .save(&path)
            .await
            .expect_err("a hostile download");
        check("save_id_mapping", answer, &error, start.elapsed());
        // The download names why it refused the answer.
        let text = error.to_string();
        match answer {
            Answer::Html => assert!(
                text.contains("\"text/html\"") && text.contains("not a CSV file"),
                "{text}"
            ),
            Answer::Empty => assert!(text.contains("the ID-mapping answer is empty"), "{text}"),
            _ => {}
        }
        let left: Vec<_> = std::fs::read_dir(dir.path())
            .expect("readable")
            .map(|e| e.expect("an entry").file_name())
            .collect();
        assert!(left.is_empty(), "{answer:?}: files left behind: {left:?}");

        // The video session client: a login (with a store of its own, so the
        // failures do not add up to a lockout refusal) and an invitation.
        let video = video_client(&base);
        let start = Instant::now();
        let error = video
            .login(&Credentials::new("sk", "alice", "pw").expect("valid"))
            .send()
            .await
            .expect_err("a hostile answer");
        check_video("login", answer, &error, start.elapsed());
        let start = Instant::now();
        let error = video
            .send_invitation(
                &session(),
                SessionId::new("s1").expect("valid"),
                Invitation::Email {
                    to: EmailAddress::new("guest@example.com").expect("valid"),
                    message: None,
                },
            )
            .send()
            .await
            .expect_err("a hostile answer");
        check_video("send_invitation", answer, &error, start.elapsed());
    }

    let peak = memory_kib("VmHWM:");
    let grown_mib = peak.saturating_sub(baseline) / 1024;
    eprintln!("resident set: {baseline} KiB at the start, peak {peak} KiB (+{grown_mib} MiB)");
    assert!(
        grown_mib <= 64,
        "peak memory grew by {grown_mib} MiB over the baseline"
    );
}

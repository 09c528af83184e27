//! The overall deadline of a call (`HttpOptions::deadline`) against a server
//! that never answers in time: it ends the call across its retries and the
//! waits between them, and its error names the deadline's value; a
//! per-attempt timeout is named with its value too.
//!
//! Its own test binary: `search_ads_hostile` measures its process's peak
//! memory, which a test running beside it would distort.

use std::time::{Duration, Instant};

use sa360_video_sdk::http::{HttpOptions, TransportError, TransportErrorKind};
use sa360_video_sdk::search_ads::{
    AdvertiserId, AgencyId, Error, RetryPolicy, SearchAdsClient, StaticToken,
};
use test_support::{Answer, HostileServer};

/// The overall deadline ends a call that keeps failing transiently, and says
/// which deadline it was; the per-attempt timeout is named with its value.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_deadline_ends_a_call_across_its_retries_and_names_its_value() {
    let server = HostileServer::start(Answer::Trickle);
    let client = SearchAdsClient::builder(StaticToken::new("token"))
        .base_url(server.url())
        .retry_policy(
            RetryPolicy::default()
                .max_attempts(100)
                .base_delay(Duration::from_millis(100))
                .max_delay(Duration::from_millis(100))
                .max_retry_after(Duration::from_secs(1)),
        )
        .http_options(
            HttpOptions::default()
                .read_timeout(Duration::from_secs(1))
                .deadline(Some(Duration::from_secs(3))),
        )
        .build()
        .expect("the client builds");
    let start = Instant::now();
    let error = client
        .saved_columns(AgencyId::new(1), AdvertiserId::new(2))
        .send()
        .await
        .expect_err("never answers in time");
    let elapsed = start.elapsed();
    let Error::DeadlineExceeded {
        deadline,
        attempts,
        last,
        ..
    } = &error
    else {
        panic!("{error:?}");
    };
    assert_eq!(*deadline, Duration::from_secs(3));
    assert!(*attempts >= 2, "retried before the deadline: {attempts}");
    assert!(
        matches!(
            last.as_deref(),
            Some(Error::Transport(TransportError {
                kind: TransportErrorKind::Stalled { .. },
                ..
            }))
        ),
        "{last:?}"
    );
    assert!(server.requests() >= 2);
    assert!(elapsed < Duration::from_secs(6), "ended after {elapsed:?}");
    let text = error.to_string();
    assert!(text.contains("deadline of 3 s"), "{text}");

    // A per-attempt timeout names its value.
    let client = SearchAdsClient::builder(StaticToken::new("token"))
        .base_url(server.url())
        .retry_policy(RetryPolicy::no_retries())
        .http_options(
            HttpOptions::default()
                .timeout(Duration::from_secs(1))
                .read_timeout(Duration::from_secs(30)),
        )
        .build()
        .expect("the client builds");
    let error = client
        .saved_columns(AgencyId::new(1), AdvertiserId::new(2))
        .send()
        .await
        .expect_err("times out");
    assert!(
        matches!(error, Error::Transport(TransportError { kind: TransportErrorKind::TimedOut { connect: false, after: Some(d), setting: "timeout" }, .. }) if d == Duration::from_secs(1)),
        "{error:?}"
    );
    assert!(error.to_string().contains("after 1 s"), "{error}");
}

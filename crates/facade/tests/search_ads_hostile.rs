//! No answer, however large, slow or malformed, exhausts memory or hangs: a
//! hostile server answers every call of the search ads facade with a 10 GiB
//! body (announced, and endless without a length), a body of one byte per
//! second, an HTML page and an empty body. Each call ends with a clear error
//! within the configured limits, the process's peak memory stays within
//! 64 MiB of where it started, and no file is left behind.
//!
//! One test function runs every case in turn, so the peak resident set it
//! measures belongs to it alone.

use std::convert::Infallible;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::Router;
use axum::body::{Body, Bytes};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::Response;
use chrono::DateTime;
use facade::http::HttpOptions;
use facade::search_ads::{
    AdvertiserId, AgencyId, Conversion, Error, Outcome, RetryPolicy, SearchAds, StaticToken,
    WriteOptions,
};
use futures::stream::{self, StreamExt as _};

/// What the hostile server answers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Answer {
    /// `Content-Length: 10 GiB`, then zeros for as long as anyone reads.
    AnnouncedHuge,
    /// Chunked spaces without end (10 GiB and more).
    Endless,
    /// One byte per second.
    Trickle,
    /// A 200 HTML page.
    Html,
    /// A 200 with an empty body.
    Empty,
}

const TEN_GIB: u64 = 10 * 1024 * 1024 * 1024;
const CHUNK: usize = 64 * 1024;

/// A download passes its checks only if it starts like the real file.
const CSV_HEADER: &[u8] = b"Entity Type,Legacy IDs,New IDs\n";

fn answer(kind: Answer, csv: bool) -> Response {
    let content_type = if csv { "text/csv" } else { "application/json" };
    let first: &'static [u8] = if csv { CSV_HEADER } else { b"" };
    let lead = stream::once(async move { Ok::<_, Infallible>(Bytes::from_static(first)) });
    let filler = if csv { b'0' } else { b' ' };
    let mut response = match kind {
        Answer::AnnouncedHuge => {
            let rest = stream::repeat_with(move || Ok(Bytes::from(vec![filler; CHUNK])));
            let mut r = Response::new(Body::from_stream(lead.chain(rest)));
            r.headers_mut()
                .insert(header::CONTENT_LENGTH, HeaderValue::from(TEN_GIB));
            r
        }
        Answer::Endless => {
            let rest = stream::repeat_with(move || Ok(Bytes::from(vec![filler; CHUNK])));
            Response::new(Body::from_stream(lead.chain(rest)))
        }
        Answer::Trickle => {
            let rest = stream::unfold((), move |()| async move {
                tokio::time::sleep(Duration::from_secs(1)).await;
                Some((Ok(Bytes::from(vec![filler])), ()))
            });
            Response::new(Body::from_stream(lead.chain(rest)))
        }
        Answer::Html => {
            let mut r = Response::new(Body::from("<html><body>Service maintenance</body></html>"));
            r.headers_mut()
                .insert(header::CONTENT_TYPE, HeaderValue::from_static("text/html"));
            return r;
        }
        Answer::Empty => Response::new(Body::empty()),
    };
    *response.status_mut() = StatusCode::OK;
    response
        .headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    response
}

async fn hostile_server(kind: Arc<Mutex<Answer>>) -> String {
    let app = Router::new().fallback(move |request: axum::extract::Request| {
        let kind = *kind.lock().expect("not poisoned");
        async move { answer(kind, request.uri().path().contains("idmapping")) }
    });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("a loopback port");
    let address = listener.local_addr().expect("an address");
    tokio::spawn(async move { axum::serve(listener, app).await });
    format!("http://{address}")
}

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

fn client(base: &str) -> SearchAds {
    SearchAds::builder(StaticToken::new("token"))
        .base_url(base)
        .expect("a loopback URL")
        .retry_policy(RetryPolicy::no_retries())
        .write_options(WriteOptions::default())
        .http_options(HttpOptions {
            read_timeout: STALL,
            max_download_bytes: 64 * 1024 * 1024,
            ..HttpOptions::default()
        })
        .build()
        .expect("the client builds")
}

/// Checks the error of one call against the answer that caused it.
fn check(call: &str, kind: Answer, error: &Error, elapsed: Duration) {
    let text = error.to_string();
    match kind {
        Answer::AnnouncedHuge | Answer::Endless => {
            assert!(
                matches!(error, Error::TooLarge { .. }),
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
                matches!(error, Error::Stalled { after, .. } if *after == STALL),
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
    let kind = Arc::new(Mutex::new(Answer::Html));
    let base = hostile_server(kind.clone()).await;
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

    for answer in [
        Answer::AnnouncedHuge,
        Answer::Endless,
        Answer::Trickle,
        Answer::Html,
        Answer::Empty,
    ] {
        *kind.lock().expect("not poisoned") = answer;

        let start = Instant::now();
        let error = client
            .saved_columns(agency, advertiser)
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
            .save_id_mapping(agency, advertiser, &path, None)
            .await
            .expect_err("a hostile download");
        check("save_id_mapping", answer, &error, start.elapsed());
        let left: Vec<_> = std::fs::read_dir(dir.path())
            .expect("readable")
            .map(|e| e.expect("an entry").file_name())
            .collect();
        assert!(left.is_empty(), "{answer:?}: files left behind: {left:?}");
    }

    let peak = memory_kib("VmHWM:");
    let grown_mib = peak.saturating_sub(baseline) / 1024;
    eprintln!("resident set: {baseline} KiB at the start, peak {peak} KiB (+{grown_mib} MiB)");
    assert!(
        grown_mib <= 64,
        "peak memory grew by {grown_mib} MiB over the baseline"
    );
}

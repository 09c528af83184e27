//! An interrupted ID-mapping download resumes with `Range` + `If-Range`
//! and fetches only the rest; when the file changed meanwhile (the server
//! answers the whole file to `If-Range`) it starts over. Either way the saved
//! file equals a full download byte for byte.
//!
//! A real local server sits in front of the fake: it cuts the first answer's
//! body after `CUT` bytes (the connection breaks, as a network would), then
//! passes requests on, recording each one's `Range` and `If-Range` and the
//! bytes it served. The fake answers ranges itself (206, or 200 when
//! `If-Range` does not match).

use crate::local_server::serve;
use crate::search_ads_support as support;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use axum::body::{Body, Bytes};
use axum::http::{HeaderMap, Response};
use futures::StreamExt;
use sa360_video_fakes::{IdMappingSize, SearchAdsFake};
use sa360_video_sdk::search_ads::WriteOptions;

/// Bytes of the first answer that get through.
const CUT: usize = 100_000;

#[derive(Debug, Clone)]
struct Seen {
    range: Option<String>,
    if_range: Option<String>,
    status: u16,
    served: usize,
}

#[derive(Clone, Default)]
struct Front {
    seen: Arc<Mutex<Vec<Seen>>>,
    requests: Arc<AtomicUsize>,
    /// Rewrite `If-Range` to another validator (the file "changed").
    change_etag: bool,
}

impl Front {
    async fn start(fake: &SearchAdsFake, change_etag: bool) -> (Self, String) {
        let front = Front {
            change_etag,
            ..Front::default()
        };
        let target = fake.origin().to_owned();
        let http = sa360_video_client_support::http_client_builder()
            .build()
            .expect("a client");
        let state = front.clone();
        let app = axum::Router::new().fallback(move |request: axum::extract::Request| {
            let (front, http, target) = (state.clone(), http.clone(), target.clone());
            async move {
                let n = front.requests.fetch_add(1, Ordering::SeqCst);
                let headers = request.headers().clone();
                let text = |h: &HeaderMap, name: &str| {
                    h.get(name).and_then(|v| v.to_str().ok()).map(str::to_owned)
                };
                let path = request
                    .uri()
                    .path_and_query()
                    .map(|p| p.as_str().to_owned())
                    .unwrap_or_default();
                let mut forward = http.get(format!("{target}{path}"));
                for name in ["authorization", "range"] {
                    if let Some(v) = headers.get(name) {
                        forward = forward.header(name, v);
                    }
                }
                if let Some(v) = text(&headers, "if-range") {
                    let v = if front.change_etag {
                        "\"changed-meanwhile\"".to_owned()
                    } else {
                        v
                    };
                    forward = forward.header("if-range", v);
                }
                let answer = forward.send().await.expect("the fake answers");
                let status = answer.status().as_u16();
                let mut response = Response::builder().status(status);
                for (name, value) in answer.headers() {
                    response = response.header(name, value);
                }
                let index = {
                    let mut seen = front.seen.lock().unwrap();
                    seen.push(Seen {
                        range: text(&headers, "range"),
                        if_range: text(&headers, "if-range"),
                        status,
                        served: 0,
                    });
                    seen.len() - 1
                };
                let limit = if n == 0 { CUT } else { usize::MAX };
                let seen = front.seen.clone();
                let body = answer.bytes_stream().scan(0usize, move |sent, chunk| {
                    let seen = seen.clone();
                    let item = match chunk {
                        Ok(_) if *sent >= limit => Some(Err(std::io::Error::other("cut"))),
                        Ok(chunk) => {
                            let take = chunk.len().min(limit - *sent);
                            *sent += take;
                            seen.lock().unwrap()[index].served = *sent;
                            Some(Ok(Bytes::copy_from_slice(&chunk[..take])))
                        }
                        Err(e) => Some(Err(std::io::Error::other(e))),
                    };
                    futures::future::ready(item)
                });
                response.body(Body::from_stream(body)).unwrap()
            }
        });
        let origin = serve(app).await;
        (front, origin)
    }

    fn seen(&self) -> Vec<Seen> {
        self.seen.lock().unwrap().clone()
    }
}

/// The fake with a file of a few hundred KiB, the file as a plain full
/// download saves it, and a client that goes through `origin`.
async fn setup(
    change_etag: bool,
) -> (
    SearchAdsFake,
    Front,
    Vec<u8>,
    sa360_video_sdk::search_ads::SearchAdsClient,
) {
    let fake =
        support::start(SearchAdsFake::builder().id_mapping_size(IdMappingSize::Rows(5_000))).await;
    let (agency, advertiser) = support::advertiser(&fake, 0);
    let dir = tempfile::tempdir().expect("a directory");
    let full = dir.path().join("full.csv");
    support::client(&fake, support::fast_retries(1), WriteOptions::default())
        .id_mapping(agency, advertiser)
        .save(&full)
        .await
        .expect("a full download");
    let expected = std::fs::read(&full).expect("readable");
    assert!(expected.len() > 2 * CUT, "{} bytes", expected.len());
    let (front, origin) = Front::start(&fake, change_etag).await;
    let client = sa360_video_sdk::search_ads::SearchAdsClient::builder(
        sa360_video_sdk::search_ads::StaticToken::new(fake.dev_token()),
    )
    .base_url(format!("{origin}/doubleclicksearch/v2"))
    .retry_policy(support::fast_retries(3))
    .build()
    .expect("builds");
    (fake, front, expected, client)
}

/// The file at `path` is `expected`, byte for byte (a full download).
fn assert_saved_whole(path: &std::path::Path, expected: &[u8]) {
    let saved = std::fs::read(path).expect("saved");
    assert!(
        saved == expected,
        "the saved file differs from a full download"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cut_download_resumes_with_range_and_fetches_only_the_rest() {
    let (fake, front, expected, client) = setup(false).await;
    let (agency, advertiser) = support::advertiser(&fake, 0);
    let dir = tempfile::tempdir().expect("a directory");
    let path = dir.path().join("mapping.csv");
    let size = client
        .id_mapping(agency, advertiser)
        .save(&path)
        .await
        .expect("resumed to the end");
    assert_eq!(size, expected.len() as u64);
    assert_saved_whole(&path, &expected);
    let seen = front.seen();
    assert_eq!(seen.len(), 2, "{seen:?}");
    assert_eq!(seen[0].range, None);
    assert_eq!(seen[0].served, CUT);
    assert_eq!(
        seen[1].range.as_deref(),
        Some(format!("bytes={CUT}-").as_str())
    );
    assert!(
        seen[1]
            .if_range
            .as_deref()
            .is_some_and(|v| v.starts_with('"')),
        "{seen:?}"
    );
    assert_eq!(seen[1].status, 206);
    assert_eq!(seen[1].served, expected.len() - CUT, "only the rest");
    assert!(!dir.path().join("mapping.csv.part").exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_changed_file_starts_over() {
    let (fake, front, expected, client) = setup(true).await;
    let (agency, advertiser) = support::advertiser(&fake, 0);
    let dir = tempfile::tempdir().expect("a directory");
    let path = dir.path().join("mapping.csv");
    client
        .id_mapping(agency, advertiser)
        .save(&path)
        .await
        .expect("started over, to the end");
    assert_saved_whole(&path, &expected);
    let seen = front.seen();
    assert_eq!(seen.len(), 2, "{seen:?}");
    assert_eq!(
        seen[1].range.as_deref(),
        Some(format!("bytes={CUT}-").as_str())
    );
    assert_eq!(
        seen[1].status, 200,
        "If-Range did not match: the whole file"
    );
    assert_eq!(seen[1].served, expected.len());
}

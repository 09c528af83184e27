//! The ID-mapping download streams: a large file never sits in memory.
//!
//! Fake and client run in this process (this test binary holds nothing else), a discarding client
//! reads the file, and a sampler thread reads `VmRSS` from `/proc/self/status`. The peak resident
//! memory of the whole process (fake, client and test harness) must stay under 64 MiB.
//!
//! It is a test binary of its own, not a module of `tests/it`, for that reason: the other tests
//! of that binary would run beside it in the same process and count in its memory.

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use common::client;
use sa360_video_fakes::{IdMappingSize, SearchAdsFake};

const LIMIT_KIB: u64 = 64 * 1024;

fn rss_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// Downloads an ID-mapping file of `bytes` bytes, discarding it, and returns
/// (bytes received, peak RSS in KiB, RSS before in KiB, elapsed).
async fn stream_and_sample(bytes: u64) -> (u64, u64, u64, Duration) {
    let fake = SearchAdsFake::builder()
        .id_mapping_size(IdMappingSize::Bytes(bytes))
        .start()
        .await
        .unwrap();
    let a = fake.accounts()[0].clone();
    let expected = fake.id_mapping_len(a.agency_id, a.advertiser_id).unwrap();
    let before = rss_kib().expect("/proc/self/status has VmRSS");
    let peak = Arc::new(AtomicU64::new(before));
    let done = Arc::new(AtomicBool::new(false));
    let sampler = {
        let (peak, done) = (peak.clone(), done.clone());
        std::thread::spawn(move || {
            while !done.load(Ordering::Relaxed) {
                if let Some(rss) = rss_kib() {
                    peak.fetch_max(rss, Ordering::Relaxed);
                }
                std::thread::sleep(Duration::from_millis(10));
            }
        })
    };
    let started = Instant::now();
    let mut response = client()
        .get(format!(
            "{}/agency/{}/advertiser/{}/idmapping?alt=media",
            fake.base_url(),
            a.agency_id,
            a.advertiser_id
        ))
        .bearer_auth(fake.dev_token())
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    assert_eq!(response.content_length(), Some(expected));
    let mut received = 0u64;
    while let Some(chunk) = response.chunk().await.unwrap() {
        received += chunk.len() as u64;
    }
    let elapsed = started.elapsed();
    done.store(true, Ordering::Relaxed);
    sampler.join().unwrap();
    assert_eq!(received, expected);
    (received, peak.load(Ordering::Relaxed), before, elapsed)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_large_download_streams_in_bounded_memory() {
    // 512 MiB takes a few seconds even in a debug build; the ignored test below does 1 GiB.
    let (received, peak, before, elapsed) = stream_and_sample(512 << 20).await;
    eprintln!(
        "streamed {} MiB in {elapsed:.2?}: RSS {} MiB before, peak {} MiB",
        received >> 20,
        before / 1024,
        peak / 1024
    );
    assert!(peak < LIMIT_KIB, "peak RSS {peak} KiB");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "streams a full GiB; run with --ignored (fast in release builds)"]
async fn a_one_gib_download_streams_in_bounded_memory() {
    let (received, peak, before, elapsed) = stream_and_sample(1 << 30).await;
    eprintln!(
        "streamed {} MiB in {elapsed:.2?}: RSS {} MiB before, peak {} MiB",
        received >> 20,
        before / 1024,
        peak / 1024
    );
    assert!(received > (1 << 30) - 1024);
    assert!(peak < LIMIT_KIB, "peak RSS {peak} KiB");
}

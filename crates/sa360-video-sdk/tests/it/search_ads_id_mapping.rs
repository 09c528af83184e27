//! The ID-mapping download against the fake: typed rows, progress, saving to
//! a file, and truncated downloads reported as errors, never as short
//! successes (a save resumes them with a range request).

use crate::search_ads_support as support;

use std::sync::{Arc, Mutex};

use futures::{StreamExt, TryStreamExt};
use sa360_video_fakes::{Faults, IdMappingSize, SearchAdsFake, Truncation};
use sa360_video_sdk::search_ads::{EntityType, Error, ProgressFn, WriteOptions};

/// Progress calls seen: (bytes so far, total).
type Seen = Arc<Mutex<Vec<(u64, Option<u64>)>>>;

fn recorder() -> (ProgressFn, Seen) {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = seen.clone();
    let progress: ProgressFn = Arc::new(move |bytes, total| {
        sink.lock().expect("not poisoned").push((bytes, total));
    });
    (progress, seen)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rows_are_typed_and_progress_is_reported() {
    let fake =
        support::start(SearchAdsFake::builder().id_mapping_size(IdMappingSize::Rows(5_000))).await;
    let client = support::client(&fake, support::fast_retries(4), WriteOptions::default());
    let (agency, advertiser) = support::advertiser(&fake, 0);
    let len = fake
        .id_mapping_len(agency.get(), advertiser.get())
        .expect("a known advertiser");
    let (progress, seen) = recorder();
    let rows: Vec<_> = client
        .id_mapping(agency, advertiser)
        .progress_shared(progress)
        .stream()
        .try_collect()
        .await
        .expect("the whole file");
    assert_eq!(rows.len(), 5_000);
    // One CUSTOMER row per engine account of the advertiser, then campaigns.
    let customers = rows
        .iter()
        .take_while(|r| r.entity_type == EntityType::Customer)
        .count();
    assert_eq!(customers, fake.accounts().len());
    let first = &rows[0];
    assert_eq!(first.legacy.agency_id, Some(agency));
    assert_eq!(first.legacy.advertiser_id, Some(advertiser));
    assert!(first.legacy.engine_account_id.is_some());
    assert!(first.new.customer_id.is_some());
    let campaign = &rows[customers];
    assert_eq!(campaign.entity_type, EntityType::Campaign);
    assert!(campaign.legacy.campaign_id.is_some());
    assert!(campaign.new.campaign_id.is_some());
    assert!(rows.iter().any(|r| r.entity_type == EntityType::AdGroup));
    assert!(rows.iter().any(|r| r.entity_type == EntityType::Criterion));

    let seen = seen.lock().expect("not poisoned");
    assert_eq!(
        seen.last(),
        Some(&(len, Some(len))),
        "progress ends at the full size"
    );
    assert!(
        seen.windows(2).all(|w| w[0].0 < w[1].0),
        "progress only grows"
    );
}

#[tokio::test]
async fn save_writes_the_whole_file() {
    let fake =
        support::start(SearchAdsFake::builder().id_mapping_size(IdMappingSize::Rows(2_000))).await;
    let client = support::client(&fake, support::fast_retries(4), WriteOptions::default());
    let (agency, advertiser) = support::advertiser(&fake, 0);
    let dir = tempfile::tempdir().expect("a temporary directory");
    let path = dir.path().join("idmapping.csv");
    let (progress, seen) = recorder();
    let bytes = client
        .id_mapping(agency, advertiser)
        .progress_shared(progress)
        .save(&path)
        .await
        .expect("saved");
    let len = fake
        .id_mapping_len(agency.get(), advertiser.get())
        .expect("known");
    assert_eq!(bytes, len);
    let text = std::fs::read_to_string(&path).expect("readable");
    assert_eq!(text.len() as u64, len);
    assert!(text.starts_with("Entity Type,Legacy IDs,New IDs\n"));
    assert_eq!(text.lines().count(), 2_001);
    assert_eq!(
        seen.lock().expect("not poisoned").last(),
        Some(&(len, Some(len)))
    );
}

async fn truncated(
    truncation: Truncation,
) -> (SearchAdsFake, sa360_video_sdk::search_ads::SearchAdsClient) {
    let fake = support::start(
        SearchAdsFake::builder()
            .id_mapping_size(IdMappingSize::Rows(20_000))
            .faults(Faults::seeded(5).with_truncated_csv(1.0, truncation)),
    )
    .await;
    let client = support::client(&fake, support::fast_retries(4), WriteOptions::default());
    (fake, client)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_aborted_download_is_an_error_not_a_short_success() {
    let (fake, client) = truncated(Truncation::Abort).await;
    let (agency, advertiser) = support::advertiser(&fake, 0);
    let len = fake
        .id_mapping_len(agency.get(), advertiser.get())
        .expect("known");
    let items: Vec<_> = client
        .id_mapping(agency, advertiser)
        .stream()
        .collect()
        .await;
    let (last, rows) = items.split_last().expect("at least the error");
    assert!(rows.iter().all(Result::is_ok));
    assert!(rows.len() < 20_000);
    match last {
        Err(Error::TruncatedDownload { bytes, expected }) => {
            assert!(*bytes < len);
            assert_eq!(*expected, Some(len));
        }
        other => panic!("{other:?}"),
    }
    let text = last.as_ref().expect_err("an error").to_string();
    assert!(text.contains("incomplete"), "{text}");

    saving_resumes_or_leaves_nothing(&fake, &client, Some(len)).await;
}

/// Saving resumes the cut file with a range request (the fake serves ranges
/// whole) and the file is complete; without resumes (one attempt) it is all
/// or nothing: no file, no `.part`.
async fn saving_resumes_or_leaves_nothing(
    fake: &SearchAdsFake,
    client: &sa360_video_sdk::search_ads::SearchAdsClient,
    len: Option<u64>,
) {
    let (agency, advertiser) = support::advertiser(fake, 0);
    let dir = tempfile::tempdir().expect("a temporary directory");
    let path = dir.path().join("idmapping.csv");
    let size = client
        .id_mapping(agency, advertiser)
        .save(&path)
        .await
        .expect("resumed");
    if let Some(len) = len {
        assert_eq!(size, len);
    }
    assert_eq!(std::fs::metadata(&path).expect("saved").len(), size);
    std::fs::remove_file(&path).expect("removable");

    let once = support::client(fake, support::fast_retries(1), WriteOptions::default());
    let e = once
        .id_mapping(agency, advertiser)
        .save(&path)
        .await
        .expect_err("truncated");
    assert!(matches!(e, Error::TruncatedDownload { .. }), "{e:?}");
    assert!(!path.exists());
    assert_eq!(std::fs::read_dir(dir.path()).expect("listable").count(), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_clean_end_in_the_middle_of_a_row_is_an_error() {
    let (fake, client) = truncated(Truncation::CleanEof).await;
    let (agency, advertiser) = support::advertiser(&fake, 0);
    let items: Vec<_> = client
        .id_mapping(agency, advertiser)
        .stream()
        .collect()
        .await;
    let (last, rows) = items.split_last().expect("at least the error");
    assert!(rows.iter().all(Result::is_ok));
    assert!(rows.len() < 20_000);
    assert!(
        matches!(last, Err(Error::TruncatedDownload { expected: None, .. })),
        "{last:?}"
    );
    saving_resumes_or_leaves_nothing(&fake, &client, None).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_start_is_retried_and_a_broken_body_is_not_hidden() {
    let fake =
        support::start(SearchAdsFake::builder().id_mapping_size(IdMappingSize::Rows(3_000))).await;
    let (agency, advertiser) = support::advertiser(&fake, 0);
    // Every second answer fails before the body starts: retried.
    fake.set_faults(Faults::seeded(9).with_internal_error(0.5))
        .expect("valid faults");
    let client = support::client(&fake, support::fast_retries(10), WriteOptions::default());
    for _ in 0..3 {
        let rows: Vec<_> = client
            .id_mapping(agency, advertiser)
            .stream()
            .try_collect()
            .await
            .expect("the whole file");
        assert_eq!(rows.len(), 3_000);
    }
    // An answer cut mid-body is an error.
    fake.set_faults(Faults::seeded(9).with_drop_mid_body(1.0))
        .expect("valid faults");
    let e = client
        .id_mapping(agency, advertiser)
        .stream()
        .try_collect::<Vec<_>>()
        .await
        .expect_err("cut");
    assert!(matches!(e, Error::TruncatedDownload { .. }), "{e:?}");
    // An unknown advertiser is a typed error before any row.
    fake.clear_faults();
    let e = client
        .id_mapping(agency, sa360_video_sdk::search_ads::AdvertiserId::new(1))
        .stream()
        .try_next()
        .await
        .expect_err("forbidden");
    assert_eq!(e.status(), Some(403));
}

#[tokio::test]
async fn dropping_the_stream_early_stops_the_download() {
    let fake = support::start(
        SearchAdsFake::builder().id_mapping_size(IdMappingSize::Bytes(64 * 1024 * 1024)),
    )
    .await;
    let client = support::client(&fake, support::fast_retries(2), WriteOptions::default());
    let (agency, advertiser) = support::advertiser(&fake, 0);
    let (progress, seen) = recorder();
    let mut stream = client
        .id_mapping(agency, advertiser)
        .progress_shared(progress)
        .stream();
    for _ in 0..10 {
        stream.next().await.expect("a row").expect("a valid row");
    }
    drop(stream);
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    let received = seen.lock().expect("not poisoned").last().map_or(0, |p| p.0);
    assert!(
        received < 16 * 1024 * 1024,
        "the download went on after the stream was dropped: {received} bytes"
    );
}

#[tokio::test]
async fn a_download_starts_when_its_stream_is_first_polled() {
    let fake = support::start(SearchAdsFake::builder()).await;
    let client = support::client(&fake, support::fast_retries(2), WriteOptions::default());
    let (agency, advertiser) = support::advertiser(&fake, 0);
    let mut rows = client.id_mapping(agency, advertiser).stream();
    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    assert_eq!(fake.ledger().counts().id_mapping_downloads, 0);
    rows.next().await.expect("a row").expect("a valid row");
    assert_eq!(fake.ledger().counts().id_mapping_downloads, 1);
    // An unknown advertiser: the refusal is the stream's first and only item.
    let mut refused = client
        .id_mapping(agency, sa360_video_sdk::search_ads::AdvertiserId::new(1))
        .stream();
    let e = refused.try_next().await.expect_err("forbidden");
    assert_eq!(e.status(), Some(403));
    assert!(refused.next().await.is_none());
}

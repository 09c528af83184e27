//! `insert(..).stream()` against the fake: batches in input order, a stream
//! dropped midway sends nothing more and leaves the ledger consistent with
//! what it yielded, and a rerun in resubmission mode completes the input
//! with each conversion stored once.

use crate::search_ads_support as support;

use std::time::Duration;

use chrono::DateTime;
use futures::StreamExt;
use sa360_video_fakes::{ConversionKey, Faults, SearchAdsFake};
use sa360_video_sdk::search_ads::{
    AdvertiserId, AgencyId, Conversion, Outcome, SegmentationId, WriteOptions,
};

const COUNT: usize = 5_000;

fn conversion(fake: &SearchAdsFake, i: usize) -> Conversion {
    let a = &fake.accounts()[0];
    Conversion {
        agency_id: Some(AgencyId::new(a.agency_id)),
        advertiser_id: Some(AdvertiserId::new(a.advertiser_id)),
        segmentation_id: Some(SegmentationId::new(551_234)),
        ..Conversion::new(
            format!("s-{i:05}"),
            DateTime::from_timestamp_millis(1_717_200_000_000 + i as i64).expect("a valid time"),
        )
    }
}

fn key(fake: &SearchAdsFake, i: usize) -> ConversionKey {
    ConversionKey::advertiser(fake.accounts()[0].advertiser_id, format!("s-{i:05}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dropped_stream_sends_nothing_more_and_a_rerun_completes_it() {
    let fake = support::start(SearchAdsFake::builder()).await;
    let options = WriteOptions::default().batch_size(50).concurrency(4);
    let client = support::client(&fake, support::fast_retries(12), options);
    let input: Vec<Conversion> = (0..COUNT).map(|i| conversion(&fake, i)).collect();
    // Unavailable answers (most of them) keep batches retrying while the
    // stream is dropped.
    fake.set_faults(
        Faults::seeded(21)
            .with_unavailable(0.75)
            .with_retry_after(Duration::ZERO),
    )
    .expect("valid faults");

    let mut stream = client.insert(&input).stream().expect("valid options");
    let mut yielded = Vec::new();
    for _ in 0..10 {
        let batch = stream.next().await.expect("a batch");
        assert_eq!(batch.range().start, yielded.len(), "input order");
        yielded.extend(batch.into_outcomes());
    }
    let stats = stream.stats();
    assert!(stats.peak_in_flight <= options.concurrency, "{stats:?}");
    assert!(
        stats.peak_read_ahead <= (options.max_held_batches() + 1) * options.batch_size,
        "{stats:?}"
    );
    let at_drop = fake.ledger().counts().requests;
    drop(stream);

    // At most the requests that were on the wire land (one per batch in
    // flight); no retry follows, now or later.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let settled = fake.ledger().counts().requests;
    assert!(
        settled - at_drop <= options.concurrency as u64,
        "{} requests arrived after the stream was dropped",
        settled - at_drop
    );
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert_eq!(
        fake.ledger().counts().requests,
        settled,
        "a request arrived after the stream was dropped"
    );

    // What was yielded agrees with the ledger.
    let ledger = fake.ledger();
    for (i, outcome) in yielded.iter().enumerate() {
        let stored = ledger.conversion(&key(&fake, i));
        match outcome {
            Outcome::Stored | Outcome::StoredEarlier => {
                assert_eq!(stored.expect("stored").copies, 1, "{i}");
            }
            Outcome::Failed {
                may_have_been_stored: true,
                ..
            } => {}
            other => panic!("{i}: {other:?}"),
        }
    }
    let unsent = (yielded.len()..COUNT)
        .filter(|&i| !ledger.contains(&key(&fake, i)))
        .count();
    assert!(unsent > 0, "the drop left part of the input unsent");

    // The rerun: everything, in resubmission mode.
    fake.clear_faults();
    let rerun = client
        .insert(&input)
        .resubmission(true)
        .send()
        .await
        .expect("valid input");
    assert!(rerun.all_stored(), "{rerun}");
    let ledger = fake.ledger();
    for (i, outcome) in rerun.outcomes().iter().enumerate() {
        assert_eq!(
            ledger.conversion(&key(&fake, i)).expect("stored").copies,
            1,
            "{i}"
        );
        if yielded.get(i).is_some_and(Outcome::is_stored) {
            assert!(
                matches!(outcome, Outcome::AlreadyStored),
                "{i}: {outcome:?}"
            );
        }
    }
    assert!(rerun.already_stored() >= yielded.iter().filter(|o| o.is_stored()).count());
    assert_eq!(ledger.extra_copies(), 0);
    eprintln!("rerun after the drop: {rerun}");
}

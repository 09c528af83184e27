//! Every conversion gets one true outcome: under each fault mode of the fake,
//! the insert report of 20 000 conversions agrees with the fake's ledger for
//! every conversion.
//!
//! The oracle is the ledger, read per conversion: whether this call stored
//! it (the fake's request number that stored it is later than the call's
//! start) and how many copies the fake holds.
//!
//! - `Stored` / `StoredEarlier`: stored by this call, exactly once;
//! - `Rejected`: not stored by this call;
//! - `Failed { may_have_been_stored: false }`: not stored by this call;
//! - `Failed { may_have_been_stored: true }`: no claim.
//!
//! Each mode also checks the outcome it exists for: rate limits never make a
//! duplicate "stored earlier", cut detail lists never make a conversion
//! `Stored` without evidence, and a fake without deduplication shows that no
//! batch is resent blindly.
//!
//! Every run goes through `insert(..).stream()`, checking that the batches
//! arrive in input order and cover the input once. The last two tests are
//! reruns in resubmission mode after answers were lost or the stream was
//! dropped: every conversion ends `Stored`, `StoredEarlier` or
//! `AlreadyStored`, each exactly once in the ledger. A rerun needs the
//! service's refusal of a stored (owner, id, timestamp) with `0x0000011A`
//! (SA-15): that is what makes resending safe, so those tests keep the fake's
//! deduplication on; the mode that checks for blind resends turns it off.

use crate::search_ads_support as support;

use std::collections::HashSet;
use std::time::Duration;

use futures::StreamExt;

use sa360_video_fakes::{ConversionKey, DetailsCut, Faults, SearchAdsFake, SearchAdsFakeBuilder};
use sa360_video_sdk::search_ads::RetryPolicy;
use sa360_video_sdk::search_ads::{
    Conversion, CustomMetric, IssueCode, Outcome, SearchAdsClient, WriteOptions, WriteReport,
};

const COUNT: usize = 20_000;
/// Every conversion at an index divisible by this names an unknown custom
/// metric, so most batches are answered with a list of details.
const INVALID_EVERY: usize = 37;
/// Every conversion at an index divisible by this was stored by an earlier
/// call, so inserting it again is a genuine duplicate.
const STORED_BEFORE_EVERY: usize = 7;

fn conversion(fake: &SearchAdsFake, i: usize) -> Conversion {
    let mut c = support::valid_conversion(fake, &format!("o-{i:05}"), i as i64);
    if i.is_multiple_of(INVALID_EVERY) {
        c.custom_metrics = vec![CustomMetric {
            name: "No Such Metric".into(),
            value: 1.0,
        }];
    }
    c
}

fn key(fake: &SearchAdsFake, i: usize) -> ConversionKey {
    ConversionKey::advertiser(fake.accounts()[0].advertiser_id, format!("o-{i:05}"))
}

/// 30 attempts: with half of all requests refused (the rate-limit mode),
/// a batch refused 12 times in a row was a 1 in 4096 chance per batch, and
/// the test's 100 batches met it about once in 40 runs.
fn client(fake: &SearchAdsFake) -> SearchAdsClient {
    client_with(fake, support::fast_retries(30))
}

fn client_with(fake: &SearchAdsFake, retry: RetryPolicy) -> SearchAdsClient {
    support::client(
        fake,
        retry,
        WriteOptions::default().batch_size(200).concurrency(8),
    )
}

/// Inserts `input` through the stream, checking that the batches come in
/// input order and cover it once; the collected report.
async fn insert(client: &SearchAdsClient, input: &[Conversion], resubmission: bool) -> WriteReport {
    let mut stream = client
        .insert(input)
        .resubmission(resubmission)
        .stream()
        .expect("valid options");
    let mut report = WriteReport::default();
    while let Some(batch) = stream.next().await {
        assert_eq!(batch.range().start, report.len(), "batches in input order");
        assert_eq!(batch.range().len(), batch.outcomes().len());
        report.extend([batch]);
    }
    assert_eq!(report.len(), input.len());
    let stats = stream.stats();
    assert_eq!(
        (stats.requests, stats.batches),
        (report.requests(), report.batches())
    );
    report
}

/// What one mode's run produced.
struct Run {
    fake: SearchAdsFake,
    report: WriteReport,
    /// The fake's request count when the checked call started.
    start: u64,
}

/// Starts a fake without faults, stores every `STORED_BEFORE_EVERY`th valid
/// conversion when `stored_before`, then switches `faults` on and inserts
/// all of them.
async fn run(builder: SearchAdsFakeBuilder, faults: Faults, stored_before: bool) -> Run {
    let fake = support::start(builder).await;
    let input: Vec<Conversion> = (0..COUNT).map(|i| conversion(&fake, i)).collect();
    let client = client(&fake);
    if stored_before {
        let earlier: Vec<Conversion> = (0..COUNT)
            .filter(|i| i.is_multiple_of(STORED_BEFORE_EVERY) && !i.is_multiple_of(INVALID_EVERY))
            .map(|i| input[i].clone())
            .collect();
        let report = client.insert(&earlier).send().await.expect("valid input");
        assert!(report.all_stored(), "{report}");
    }
    fake.set_faults(faults.with_retry_after(Duration::ZERO))
        .expect("valid faults");
    let start = fake.ledger().counts().requests;
    let report = insert(&client, &input, false).await;
    assert_eq!(report.len(), COUNT);
    Run {
        fake,
        report,
        start,
    }
}

/// Checks every outcome against the ledger; returns how many of each kind.
fn agree(run: &Run, mode: &str) -> [usize; 5] {
    let ledger = run.fake.ledger();
    let lost: HashSet<u64> = ledger
        .faults()
        .iter()
        .filter(|f| f.processed && f.path.ends_with("/conversion"))
        .map(|f| f.request)
        .collect();
    let mut tally = [0; 5];
    for (i, outcome) in run.report.outcomes().iter().enumerate() {
        let stored = ledger.conversion(&key(&run.fake, i));
        let stored_now = stored.as_ref().filter(|s| s.request > run.start);
        match outcome {
            Outcome::Stored | Outcome::StoredEarlier => {
                let s = stored_now.unwrap_or_else(|| {
                    panic!("{mode}: {i} reported {outcome:?} but this call did not store it")
                });
                assert_eq!(s.copies, 1, "{mode}: {i} stored more than once");
                let answer_lost = lost.contains(&s.request);
                assert_eq!(
                    matches!(outcome, Outcome::StoredEarlier),
                    answer_lost,
                    "{mode}: {i} is {outcome:?} but the answer of the request that stored it \
                     was {}",
                    if answer_lost { "lost" } else { "received" }
                );
                assert!(!i.is_multiple_of(INVALID_EVERY), "{mode}: {i} is invalid");
                tally[usize::from(matches!(outcome, Outcome::StoredEarlier))] += 1;
            }
            Outcome::Rejected(_) => {
                assert!(
                    stored_now.is_none(),
                    "{mode}: {i} reported rejected but this call stored it"
                );
                tally[2] += 1;
            }
            Outcome::Failed {
                may_have_been_stored: false,
                ..
            } => {
                assert!(
                    stored_now.is_none(),
                    "{mode}: {i} reported not stored but this call stored it"
                );
                tally[3] += 1;
            }
            Outcome::Failed { .. } => tally[4] += 1,
            Outcome::AlreadyStored | Outcome::Invalid(_) => {
                panic!("{mode}: {i} is {outcome:?} in a first run of valid input")
            }
            // An outcome this test does not know yet: it cannot be checked against the ledger.
            _ => panic!("{mode}: {i} is {outcome:?}, an outcome this test does not know"),
        }
    }
    eprintln!(
        "{mode}: {} — stored {}, stored earlier {}, rejected {}, failed (not stored) {}, \
         failed (may have been stored) {}; {} faults",
        run.report,
        tally[0],
        tally[1],
        tally[2],
        tally[3],
        tally[4],
        ledger.faults().len()
    );
    tally
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lost_answers_after_storing() {
    let faults = Faults::seeded(12)
        .with_internal_error(0.1)
        .with_drop_before_response(0.1)
        .with_drop_mid_body(0.1);
    let run = run(SearchAdsFake::builder(), faults, false).await;
    let [stored, earlier, rejected, _, _] = agree(&run, "lost answers");
    assert!(earlier > 0, "some answers were lost after storing");
    assert_eq!(stored + earlier, COUNT - COUNT.div_ceil(INVALID_EVERY));
    assert_eq!(rejected, COUNT.div_ceil(INVALID_EVERY));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rate_limits_before_a_genuine_duplicate() {
    // 429 and rate-limit 403 answers store nothing, so a 0x0000011A after
    // them is a conversion an earlier call stored: a rejection for this call.
    let faults = Faults::seeded(13)
        .with_rate_limited(0.25)
        .with_rate_limited_403(0.25);
    let run = run(SearchAdsFake::builder(), faults, true).await;
    let [_, earlier, _, _, _] = agree(&run, "rate limits");
    assert_eq!(earlier, 0, "nothing was stored by a rate-limited attempt");
    for (i, outcome) in run.report.outcomes().iter().enumerate() {
        if i.is_multiple_of(STORED_BEFORE_EVERY) && !i.is_multiple_of(INVALID_EVERY) {
            match outcome {
                Outcome::Rejected(issue) => {
                    assert_eq!(issue.code, Some(IssueCode::DUPLICATE_CONVERSION_ID), "{i}")
                }
                other => panic!("{i}: {other:?}"),
            }
        }
    }
    let refusals = run
        .fake
        .ledger()
        .faults()
        .iter()
        .filter(|f| !f.processed)
        .count();
    assert!(refusals > 50, "the mode refused requests: {refusals}");
}

async fn cut_details(cut: DetailsCut, seed: u64) {
    let faults = Faults::seeded(seed).with_truncated_details(1.0, cut);
    let run = run(SearchAdsFake::builder(), faults, false).await;
    let mode = format!("details cut {cut:?}");
    let [stored, _, rejected, _, unknown] = agree(&run, &mode);
    // Each batch of 200 holds 5 or 6 invalid conversions; the last detail of
    // each list is lost, so its batch's unnamed conversions are unknown.
    assert!(unknown > COUNT / 2, "{mode}: {unknown} unknown");
    assert!(rejected > 0 && stored < COUNT / 2, "{mode}");
    assert!(!run.fake.ledger().faults().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn detail_lists_cut_inside_a_code() {
    cut_details(DetailsCut::InsideCode, 14).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn detail_lists_cut_inside_a_text() {
    cut_details(DetailsCut::InsideText, 15).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_deduplication_nothing_is_resent_blindly() {
    // The fake stores every repeated insert again, so any batch resent after
    // a definite answer would show up as a second copy. Only answers that
    // store nothing or say what was stored: no lost answers.
    let faults = Faults::seeded(16)
        .with_rate_limited(0.15)
        .with_rate_limited_403(0.15)
        .with_unavailable(0.15)
        .with_truncated_details(0.3, DetailsCut::InsideText);
    let run = run(SearchAdsFake::builder().deduplicate(false), faults, false).await;
    agree(&run, "no deduplication");
    let ledger = run.fake.ledger();
    assert_eq!(ledger.extra_copies(), 0, "a conversion was stored twice");
    assert!(run.report.requests() > run.report.batches());
}

/// A rerun in resubmission mode after a run whose answers were lost and not
/// retried: every valid conversion ends stored, exactly once, and those the
/// first run stored are `AlreadyStored` (or `StoredEarlier` when the rerun's
/// own attempt was lost first).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rerun_after_lost_answers_stores_each_conversion_once() {
    let fake = support::start(SearchAdsFake::builder()).await;
    let input: Vec<Conversion> = (0..COUNT).map(|i| conversion(&fake, i)).collect();
    let lost = |seed| {
        Faults::seeded(seed)
            .with_internal_error(0.1)
            .with_drop_before_response(0.1)
            .with_drop_mid_body(0.1)
            .with_retry_after(Duration::ZERO)
    };
    // First run: no retries, so every lost answer leaves its batch unknown.
    fake.set_faults(lost(17)).expect("valid faults");
    let first = insert(&client_with(&fake, support::fast_retries(1)), &input, false).await;
    let unknown = first.outcomes().iter().filter(|o| !o.is_definite()).count();
    let ledger = fake.ledger();
    let stored_unknown = first
        .outcomes()
        .iter()
        .enumerate()
        .filter(|(i, o)| !o.is_definite() && ledger.contains(&key(&fake, *i)))
        .count();
    assert!(
        unknown > 0 && stored_unknown > 0,
        "some answers were lost after storing: {first}"
    );

    // Without resubmission, a conversion the first run stored is a rejection.
    fake.clear_faults();
    let stored_first: Vec<Conversion> = first
        .outcomes()
        .iter()
        .enumerate()
        .filter(|(_, o)| o.is_stored())
        .map(|(i, _)| input[i].clone())
        .take(500)
        .collect();
    let plain = insert(&client(&fake), &stored_first, false).await;
    assert_eq!(plain.rejected(), stored_first.len(), "{plain}");
    assert!(
        plain
            .rejections()
            .all(|(_, issue)| issue.code == Some(IssueCode::DUPLICATE_CONVERSION_ID))
    );

    // The rerun, with answers lost again but retried.
    fake.set_faults(lost(18)).expect("valid faults");
    let start = fake.ledger().counts().requests;
    let rerun = insert(&client(&fake), &input, true).await;
    let ledger = fake.ledger();
    let mut already = 0;
    for (i, outcome) in rerun.outcomes().iter().enumerate() {
        let stored = ledger.conversion(&key(&fake, i));
        if i.is_multiple_of(INVALID_EVERY) {
            assert!(matches!(outcome, Outcome::Rejected(_)), "{i}: {outcome:?}");
            assert!(stored.is_none(), "{i} is invalid but stored");
            continue;
        }
        let s = stored.unwrap_or_else(|| panic!("{i} is {outcome:?} but not stored"));
        assert_eq!(s.copies, 1, "{i} stored more than once");
        let by_rerun = s.request > start;
        match outcome {
            Outcome::Stored => assert!(by_rerun, "{i}: Stored, but the first run stored it"),
            Outcome::AlreadyStored => {
                assert!(!by_rerun, "{i}: AlreadyStored, but the rerun stored it");
                already += 1;
            }
            Outcome::StoredEarlier => {}
            other => panic!("{i}: {other:?}"),
        }
        if first.outcomes()[i].is_stored() {
            assert!(
                matches!(outcome, Outcome::AlreadyStored | Outcome::StoredEarlier),
                "{i}: {outcome:?}"
            );
        }
    }
    assert!(
        already >= first.stored() - rerun.stored_earlier(),
        "{rerun}"
    );
    assert_eq!(ledger.extra_copies(), 0);
    eprintln!("first run: {first}\nrerun: {rerun}");
}

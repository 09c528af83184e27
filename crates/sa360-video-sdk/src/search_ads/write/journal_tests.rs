//! [`WriteJournal`] end to end without HTTP: uploads dropped at several
//! moments (between batches, with a request in flight), then run again with
//! the same journal: every conversion is stored once and gets the verdict
//! one uninterrupted run gives it.

use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use chrono::DateTime;
use futures::stream::BoxStream;
use futures::{FutureExt, StreamExt};

use super::batching::Batch;
use super::journal::JournalParts;
use super::request::{from_iter, open_journal};
use super::run::{BeforeSendFn, SendFn, Shared};
use super::*;
use crate::search_ads::conversion::Conversion;
use crate::search_ads::error::{ConversionIssue, Error, IssueCode};
use crate::search_ads::retry::RetryPolicy;

const ROWS: usize = 60;
/// Repeats row 4's (owner, id, timestamp) with another revenue: refused.
const REPEAT: usize = 40;
/// Another upload stored its key first: a conflict, rejected.
const CONFLICT: usize = 2;

fn rows() -> Vec<Conversion> {
    (0..ROWS)
        .map(|i| {
            let n = if i == REPEAT { 4 } else { i };
            let mut c = Conversion::new(
                format!("j-{n}"),
                DateTime::from_timestamp_millis(1_000 + n as i64).unwrap(),
            );
            c.click_id = Some("gclid-1".into());
            c.quantity_millis = Some(i as i64);
            c
        })
        .collect()
}

/// The service: keys stored, and how many times each.
#[derive(Default)]
struct Ledger {
    copies: HashMap<String, u32>,
    requests: usize,
}

/// The journaled insert the tests run: `input` in batches of 5, `concurrency` in flight, sent
/// through `send`, with the journal `open_journal` opened.
fn journaled<'a>(
    (input, total): (BoxStream<'a, Conversion>, Option<usize>),
    (resume, hook, parts): (Option<Resume>, BeforeSendFn, JournalParts),
    send: SendFn,
    retry: RetryPolicy,
    concurrency: usize,
) -> WriteStream<'a> {
    let shared = Shared::new(WriteKind::Insert, false, retry, send, Some(hook));
    let options = WriteOptions {
        batch_size: 5,
        concurrency,
    };
    WriteStream::new(
        input,
        total,
        options,
        None,
        shared,
        resume.map(Resume::cursor),
        Some(parts),
    )
}
/// When the sender stops answering (after storing): the `n`th request.
#[derive(Clone, Copy, PartialEq)]
enum Crash {
    None,
    /// Dropped after handling this many batches.
    AfterBatches(usize),
    /// The `n`th request (1-based) is stored but never answered.
    InFlight(usize),
}

fn sender(ledger: Arc<Mutex<Ledger>>, ids: Arc<Vec<String>>, crash: Crash) -> SendFn {
    Arc::new(move |batch: Arc<Batch>, _attempt| {
        let mut l = ledger.lock().unwrap();
        l.requests += 1;
        let hang = crash == Crash::InFlight(l.requests);
        let mut details = Vec::new();
        for k in 0..batch.sent() {
            let id = &ids[batch.input_index(k)];
            let copies = l.copies.entry(id.clone()).or_default();
            if *copies > 0 {
                details.push(ConversionIssue {
                    index: Some(k),
                    code: Some(IssueCode(0x11A)),
                    message: "already exists".into(),
                });
            } else {
                *copies += 1;
            }
        }
        drop(l);
        async move {
            if hang {
                futures::future::pending::<()>().await;
            }
            if details.is_empty() {
                Ok(())
            } else {
                Err(Error::Api {
                    operation: "conversion.insert",
                    status: 400,
                    reason: Some("requestValidation".into()),
                    message: String::new(),
                    details,
                    details_complete: true,
                    retry_after: None,
                })
            }
        }
        .boxed()
    })
}

/// One run with the journal at `journal`; returns the outcomes it yielded, by input index.
async fn run(
    journal: &Path,
    ledger: &Arc<Mutex<Ledger>>,
    crash: Crash,
) -> (HashMap<usize, Outcome>, bool) {
    run_journal(WriteJournal::new(journal, "journal-test"), ledger, crash).await
}

/// One run with `journal`; returns the outcomes it yielded, by input index,
/// and whether the stream finished its journal.
async fn run_journal(
    journal: WriteJournal,
    ledger: &Arc<Mutex<Ledger>>,
    crash: Crash,
) -> (HashMap<usize, Outcome>, bool) {
    let conversions = rows();
    let ids: Arc<Vec<String>> = Arc::new(
        conversions
            .iter()
            .map(|c| c.conversion_id.clone().unwrap())
            .collect(),
    );
    let (input, total) = from_iter(conversions);
    let (resume, hook, parts) = open_journal(&journal, None).unwrap();
    let retry = RetryPolicy {
        base_delay: Duration::from_millis(1),
        max_delay: Duration::from_millis(2),
        ..RetryPolicy::default()
    };
    let mut stream = journaled(
        (input, total),
        (resume, hook, parts),
        sender(ledger.clone(), ids, crash),
        retry,
        3,
    );
    let mut seen = HashMap::new();
    let mut handled = 0;
    loop {
        let next = tokio::time::timeout(Duration::from_millis(300), stream.next()).await;
        let Ok(Some(batch)) = next else {
            // Ended, or a request that never returns: the process dies.
            let ended = matches!(next, Ok(None));
            let removed = if ended {
                stream.finish().unwrap()
            } else {
                false
            };
            return (seen, removed);
        };
        for (i, o) in batch.indexed() {
            seen.insert(i, o.clone());
        }
        stream.set_mark(batch.range().end as u64);
        stream.commit().unwrap();
        handled += 1;
        if crash == Crash::AfterBatches(handled) {
            // Dropped like a killed process's future.
            drop(stream);
            return (seen, false);
        }
    }
}

fn verdict(o: &Outcome) -> &'static str {
    match o {
        o if o.is_stored() => "stored",
        Outcome::Invalid(_) => "invalid",
        Outcome::Rejected(_) => "rejected",
        other => panic!("no verdict: {other:?}"),
    }
}

fn seeded() -> Arc<Mutex<Ledger>> {
    let mut ledger = Ledger::default();
    ledger.copies.insert(format!("j-{CONFLICT}"), 1);
    Arc::new(Mutex::new(ledger))
}

#[tokio::test]
async fn interrupted_then_resumed_uploads_give_every_row_the_uninterrupted_verdict_once() {
    let dir = tempfile::tempdir().unwrap();
    let once = dir.path().join("once.journal");
    let (plain, removed) = run(&once, &seeded(), Crash::None).await;
    assert!(removed && !once.exists());
    let expected: Vec<&str> = (0..ROWS).map(|i| verdict(&plain[&i])).collect();
    assert_eq!(expected[REPEAT], "invalid");
    assert_eq!(expected[CONFLICT], "rejected");
    assert_eq!(
        expected.iter().filter(|v| **v == "stored").count(),
        ROWS - 2
    );

    let crashes = [
        Crash::AfterBatches(1),
        Crash::AfterBatches(3),
        Crash::AfterBatches(8),
        Crash::AfterBatches(11),
        Crash::InFlight(2),
        Crash::InFlight(5),
        Crash::InFlight(9),
    ];
    for crash in crashes {
        let journal = dir.path().join("j.journal");
        let ledger = seeded();
        let (first, _) = run(&journal, &ledger, crash).await;
        assert!(journal.exists(), "an interrupted upload keeps its journal");
        let (second, removed) = run(&journal, &ledger, Crash::None).await;
        assert!(removed && !journal.exists());
        for (i, want) in expected.iter().enumerate() {
            let got = match &second[&i] {
                Outcome::Settled => first
                    .get(&i)
                    .unwrap_or_else(|| panic!("row {i} settled but never answered")),
                other => other,
            };
            assert_eq!(verdict(got), *want, "row {i}: {got:?}");
        }
        let ledger = ledger.lock().unwrap();
        for i in 0..ROWS {
            let copies = ledger
                .copies
                .get(&format!("j-{}", if i == REPEAT { 4 } else { i }));
            assert_eq!(copies, Some(&1), "row {i} stored once");
        }
    }
}

#[tokio::test]
async fn a_finished_journal_that_is_kept_remembers_the_write_and_a_rerun_sends_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("j.journal");
    let kept = || WriteJournal::new(&path, "journal-test").keep_finished();
    let ledger = seeded();
    let (_, finished) = run_journal(kept(), &ledger, Crash::AfterBatches(3)).await;
    assert!(!finished);
    let state = WriteJournal::read(&path).unwrap().unwrap();
    assert_eq!(state.finished(), None, "interrupted, not finished");
    let (_, finished) = run_journal(kept(), &ledger, Crash::None).await;
    assert!(finished && path.exists(), "kept, finished");
    let state = WriteJournal::read(&path).unwrap().unwrap();
    assert!(state.finished().is_some());
    let rows = ROWS as u64;
    assert_eq!(
        (state.stored(), state.rejected(), state.settled()),
        (rows - 2, 2, rows)
    );
    let requests = ledger.lock().unwrap().requests;
    let text = std::fs::read(&path).unwrap();
    let (again, finished) = run_journal(kept(), &ledger, Crash::None).await;
    assert!(finished);
    assert_eq!(again.len(), ROWS);
    assert!(
        again.values().all(|o| matches!(o, Outcome::Settled)),
        "{again:?}"
    );
    assert_eq!(ledger.lock().unwrap().requests, requests, "nothing sent");
    assert_eq!(std::fs::read(&path).unwrap(), text, "left as it was");
    // A record after `finished` (a rerun with more rows) unfinishes it.
    let mut more = std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap();
    std::io::Write::write_all(&mut more, b"send 61-65\n").unwrap();
    assert_eq!(WriteJournal::read(&path).unwrap().unwrap().finished(), None);
}

#[tokio::test]
async fn a_resumed_input_that_differs_sends_nothing_more() {
    let dir = tempfile::tempdir().unwrap();
    let journal = dir.path().join("j.journal");
    let ledger = seeded();
    run(&journal, &ledger, Crash::AfterBatches(4)).await;
    let before = ledger.lock().unwrap().requests;
    // Another input under the same name: row 3's revenue changed.
    let mut other = rows();
    other[3].quantity_millis = Some(999);
    let (input, total) = from_iter(other);
    let (resume, hook, parts) =
        open_journal(&WriteJournal::new(&journal, "journal-test"), None).unwrap();
    let ids = Arc::new((0..ROWS).map(|i| format!("j-{i}")).collect::<Vec<_>>());
    let stream = journaled(
        (input, total),
        (resume, hook, parts),
        sender(ledger.clone(), ids, Crash::None),
        RetryPolicy::default(),
        3,
    );
    let report: WriteReport = stream.collect().await;
    assert_eq!(ledger.lock().unwrap().requests, before, "nothing sent");
    let refused = report
        .outcomes()
        .iter()
        .filter(|o| matches!(o, Outcome::Failed { error: Error::Validation { field, .. }, .. } if field == "journal"))
        .count();
    assert!(refused >= ROWS - 20, "{:?}", report.outcomes());
    assert!(journal.exists(), "kept for the right input");
}

/// What is left of the journal when the process dies.
#[derive(Clone, Copy, PartialEq, Debug)]
enum Disk {
    /// `kill -9`: every record written so far (the kernel keeps them).
    Kill,
    /// A power loss: only the bytes fsynced so far.
    Power,
}

/// When the process dies.
#[derive(Clone, Copy, PartialEq, Debug)]
enum Death {
    /// The moment the `n`th request (1-based) leaves: the service stores its
    /// rows, nobody hears the answer, no other request leaves.
    RequestLeaves(usize),
    /// Right after the application handled (and committed) `k` batches.
    AfterBatches(usize),
}

/// The journal's bytes as `disk` would keep them now.
fn disk_now(path: &Path, file: &super::journal::JournalFile, disk: Disk) -> Vec<u8> {
    let mut bytes = std::fs::read(path).unwrap();
    if disk == Disk::Power {
        bytes.truncate(usize::try_from(file.synced_len()).unwrap());
    }
    bytes
}

/// One run with `journal` that dies at `death`: the journal is then
/// replaced by what `disk` keeps of it at that instant. Returns the
/// outcomes the application handled before it died.
async fn run_and_die(
    journal: &Path,
    ledger: &Arc<Mutex<Ledger>>,
    concurrency: usize,
    death: Death,
    disk: Disk,
) -> HashMap<usize, Outcome> {
    let conversions = rows();
    let ids: Vec<String> = conversions
        .iter()
        .map(|c| c.conversion_id.clone().unwrap())
        .collect();
    let (input, total) = from_iter(conversions);
    let (resume, hook, parts) =
        open_journal(&WriteJournal::new(journal, "journal-test"), None).unwrap();
    let file = parts.0.clone();
    // The journal as the disk holds it at the death.
    let left: Arc<Mutex<Option<Vec<u8>>>> = Arc::default();
    let died = Arc::new(tokio::sync::Notify::new());
    let store = sender(ledger.clone(), Arc::new(ids), Crash::None);
    let send: SendFn = {
        let (left, died, file, path) =
            (left.clone(), died.clone(), file.clone(), journal.to_owned());
        let requests = Arc::new(Mutex::new(0usize));
        Arc::new(move |batch: Arc<Batch>, attempt| {
            let mut left = left.lock().unwrap();
            if left.is_some() {
                // Dead: nothing more leaves.
                return futures::future::pending::<Result<(), Error>>().boxed();
            }
            let mut n = requests.lock().unwrap();
            *n += 1;
            if death == Death::RequestLeaves(*n) {
                // The request is on the wire: the service stores its rows
                // (as the request is made), and nobody hears the answer...
                drop(store(batch, attempt));
                // ... and the process dies before anything else happens.
                *left = Some(disk_now(&path, &file, disk));
                died.notify_one();
                return futures::future::pending::<Result<(), Error>>().boxed();
            }
            store(batch, attempt)
        })
    };
    let mut stream = journaled(
        (input, total),
        (resume, hook, parts),
        send,
        RetryPolicy::default(),
        concurrency,
    );
    let mut seen = HashMap::new();
    let mut handled = 0;
    loop {
        let batch = tokio::select! {
            next = stream.next() => next,
            () = died.notified() => None,
        };
        let dead = left.lock().unwrap().is_some();
        let Some(batch) = batch.filter(|_| !dead) else {
            assert!(dead, "{death:?} never came: the upload ended");
            break;
        };
        for (i, o) in batch.indexed() {
            seen.insert(i, o.clone());
        }
        stream.set_mark(batch.range().end as u64);
        stream.commit().unwrap();
        handled += 1;
        if death == Death::AfterBatches(handled) {
            *left.lock().unwrap() = Some(disk_now(journal, &file, disk));
            break;
        }
    }
    // Dropped like a dead process's future. A hook still running may append
    // to the open file: the disk's copy takes the journal's name, by rename.
    drop(stream);
    let left = left.lock().unwrap().take().unwrap();
    let copy = journal.with_extension("disk");
    std::fs::write(&copy, left).unwrap();
    std::fs::rename(&copy, journal).unwrap();
    seen
}

/// Deaths at every request and after every batch, by `kill -9` and by a
/// power loss, at one batch in flight (where the next batch's `send` record
/// is written while the batch before it is in flight) and at three: the
/// rerun gives every row the uninterrupted verdict and stores none twice.
/// The one exception is SA-23's: the conflict row, when its batch was in
/// flight at the death (never handled), comes back "already stored".
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_kill_or_a_power_loss_at_any_request_keeps_every_verdict() {
    let dir = tempfile::tempdir().unwrap();
    let once = dir.path().join("once.journal");
    let (plain, _) = run(&once, &seeded(), Crash::None).await;
    let expected: Vec<&str> = (0..ROWS).map(|i| verdict(&plain[&i])).collect();
    let batches = ROWS / 5;
    let mut deaths: Vec<Death> = (1..=batches).map(Death::RequestLeaves).collect();
    deaths.extend((1..batches).map(Death::AfterBatches));
    for concurrency in [1, 3] {
        for disk in [Disk::Kill, Disk::Power] {
            for &death in &deaths {
                let case = format!("concurrency {concurrency}, {disk:?} at {death:?}");
                let journal = dir.path().join("die.journal");
                let ledger = seeded();
                let first = run_and_die(&journal, &ledger, concurrency, death, disk).await;
                let (second, removed) = run(&journal, &ledger, Crash::None).await;
                assert!(removed, "{case}: the rerun finishes the upload");
                for (i, want) in expected.iter().enumerate() {
                    let got = match &second[&i] {
                        Outcome::Settled => first
                            .get(&i)
                            .unwrap_or_else(|| panic!("{case}: row {i} settled, never handled")),
                        other => other,
                    };
                    let in_flight_conflict = i == CONFLICT
                        && !first.contains_key(&i)
                        && matches!(got, Outcome::AlreadyStored);
                    if !in_flight_conflict {
                        assert_eq!(verdict(got), *want, "{case}: row {i}: {got:?}");
                    }
                }
                let ledger = ledger.lock().unwrap();
                for i in 0..ROWS {
                    let id = format!("j-{}", if i == REPEAT { 4 } else { i });
                    assert_eq!(
                        ledger.copies.get(&id),
                        Some(&1),
                        "{case}: row {i} stored once"
                    );
                }
                let _ = std::fs::remove_file(&journal);
            }
        }
    }
}

/// A stream that ends with rows without an answer keeps its journal, and
/// `finish` leaves it on the disk as it is: a power loss right after takes
/// none of its records (the last batch's `done` record, written by the
/// close, included).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_journal_kept_at_the_end_survives_a_power_loss_as_it_is() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("kept.journal");
    let (input, total) = from_iter(rows());
    let (resume, hook, parts) =
        open_journal(&WriteJournal::new(&path, "journal-test"), None).unwrap();
    let file = parts.0.clone();
    // The last batch fails for good (a 400 naming no conversion).
    let send: SendFn = Arc::new(move |batch: Arc<Batch>, _| {
        let last = batch.start + batch.len == ROWS;
        async move {
            if !last {
                return Ok(());
            }
            Err(Error::Api {
                operation: "conversion.insert",
                status: 400,
                reason: Some("badRequest".into()),
                message: "refused".into(),
                details: Vec::new(),
                details_complete: true,
                retry_after: None,
            })
        }
        .boxed()
    });
    let mut stream = journaled(
        (input, total),
        (resume, hook, parts),
        send,
        RetryPolicy::default(),
        1,
    );
    let mut failed = 0;
    while let Some(batch) = stream.next().await {
        failed += batch
            .outcomes()
            .iter()
            .filter(|o| matches!(o, Outcome::Failed { .. }))
            .count();
    }
    assert_eq!(failed, 5);
    assert!(!stream.finish().unwrap(), "kept: rows have no answer");
    let written = WriteJournal::read(&path).unwrap().unwrap();
    assert_eq!(written.settled(), (ROWS - 5) as u64);
    std::fs::write(&path, disk_now(&path, &file, Disk::Power)).unwrap();
    let after_power_loss = WriteJournal::read(&path).unwrap().unwrap();
    assert_eq!(after_power_loss, written);
}

/// The `send` ranges of the journal's durable bytes (what a power loss now
/// would leave), 0-based.
fn durable_sends(path: &Path, file: &super::journal::JournalFile) -> Vec<std::ops::Range<usize>> {
    let bytes = disk_now(path, file, Disk::Power);
    String::from_utf8(bytes)
        .unwrap()
        .lines()
        .filter_map(|l| l.strip_prefix("send "))
        .map(|r| {
            let (a, b) = r.split_once('-').unwrap();
            a.parse::<usize>().unwrap() - 1..b.parse().unwrap()
        })
        .collect()
}

/// On a slow disk (every `fdatasync` 15 ms longer), at one and three
/// batches in flight, with batches that close early (an id repeated at
/// another timestamp may not share a batch, SA-15): the moment any request
/// leaves, a durable `send` record covers every row it carries, whether the
/// record was written as the batch opened or as it closed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_request_leaves_before_a_durable_send_record_covers_its_rows() {
    // Rows 7 and 23 repeat the id before them at another timestamp.
    let conversions: Vec<Conversion> = (0..40)
        .map(|i| {
            let id = if i == 7 || i == 23 { i - 1 } else { i };
            let mut c = Conversion::new(
                format!("s-{id}"),
                DateTime::from_timestamp_millis(1_000 + i as i64).unwrap(),
            );
            c.click_id = Some("gclid-1".into());
            c
        })
        .collect();
    for concurrency in [1, 3] {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("slow.journal");
        let (input, total) = from_iter(conversions.clone());
        let (resume, hook, parts) =
            open_journal(&WriteJournal::new(&path, "journal-test"), None).unwrap();
        let file = parts.0.clone();
        file.slow_sync(15);
        let uncovered: Arc<Mutex<Vec<usize>>> = Arc::default();
        let batches: Arc<Mutex<Vec<std::ops::Range<usize>>>> = Arc::default();
        let sends: Arc<Mutex<Vec<std::ops::Range<usize>>>> = Arc::default();
        let send: SendFn = {
            let (uncovered, batches, sends, file, path) = (
                uncovered.clone(),
                batches.clone(),
                sends.clone(),
                file.clone(),
                path.clone(),
            );
            Arc::new(move |batch: Arc<Batch>, _| {
                let durable = durable_sends(&path, &file);
                sends.lock().unwrap().extend(durable.iter().cloned());
                let rows = (0..batch.sent()).map(|k| batch.input_index(k));
                uncovered
                    .lock()
                    .unwrap()
                    .extend(rows.filter(|i| !durable.iter().any(|r| r.contains(i))));
                batches
                    .lock()
                    .unwrap()
                    .push(batch.start..batch.start + batch.len);
                async { Ok(()) }.boxed()
            })
        };
        let stream = journaled(
            (input, total),
            (resume, hook, parts),
            send,
            RetryPolicy::default(),
            concurrency,
        );
        let report: WriteReport = stream.collect().await;
        assert!(report.all_stored(), "{:?}", report.outcomes());
        let case = format!("concurrency {concurrency}");
        assert_eq!(
            *uncovered.lock().unwrap(),
            [0usize; 0],
            "{case}: rows sent before their send record was durable"
        );
        let batches = batches.lock().unwrap().clone();
        assert!(
            batches.contains(&(5..7)) && batches.contains(&(22..23)),
            "{case}: early closes {batches:?}"
        );
        // No record names more than one batch's reach: rows of later batches, never sent when
        // the process dies, would count as possibly sent on a rerun (SA-23: no group commit).
        let sends = sends.lock().unwrap().clone();
        assert!(!sends.is_empty(), "{case}");
        assert!(
            sends.iter().all(|r| r.len() <= 5),
            "{case}: a send record names more than batch_size rows: {sends:?}"
        );
    }
}

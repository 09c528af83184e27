//! The write path end to end without HTTP: a [`WriteStream`] over generated
//! conversions with a scripted sender.

use std::future::Future;
use std::ops::Range;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use chrono::DateTime;
use futures::{FutureExt, StreamExt};

use super::*;
use crate::http::{TransportError, TransportErrorKind};
use crate::search_ads::conversion::Conversion;
use crate::search_ads::error::{ConversionIssue, Error, IssueCode};
use crate::search_ads::retry::RetryPolicy;
use batching::Batch;
use run::Shared;

/// A request timeout (the request may have reached the server).
fn timed_out(operation: &'static str) -> Error {
    Error::Transport(TransportError::new(
        operation,
        TransportErrorKind::TimedOut {
            connect: false,
            after: None,
            setting: "timeout",
        },
        "",
    ))
}

fn fast() -> RetryPolicy {
    RetryPolicy {
        base_delay: Duration::from_millis(1),
        max_delay: Duration::from_millis(2),
        ..RetryPolicy::default()
    }
}

fn detail(index: usize, code: u32) -> ConversionIssue {
    ConversionIssue {
        index: Some(index),
        code: Some(IssueCode(code)),
        message: "m".into(),
    }
}

fn rejected_400(details: Vec<ConversionIssue>) -> Error {
    Error::Api {
        operation: "conversion.insert",
        status: 400,
        reason: Some("requestValidation".into()),
        message: String::new(),
        details,
        details_complete: true,
        retry_after: None,
    }
}

fn api(status: u16, reason: Option<&str>) -> Error {
    crate::search_ads::test_support::api_error("conversion.insert", status, reason)
}

fn opts(batch_size: usize) -> WriteOptions {
    WriteOptions {
        batch_size,
        concurrency: 3,
    }
}

/// A conversion attributed through its click (SA-17).
fn clicked(id: &str) -> Conversion {
    let mut c = Conversion::new(id, DateTime::from_timestamp_millis(1_000).unwrap());
    c.click_id = Some("gclid-1".into());
    c
}

fn input(count: usize) -> Vec<Conversion> {
    (0..count).map(|i| clicked(&format!("c-{i}"))).collect()
}

/// A stream over `conversions` whose every batch is sent with
/// `send(input range of the batch, attempt)`.
fn stream_of<S, Fut>(
    kind: WriteKind,
    conversions: impl Iterator<Item = Conversion> + Send + 'static,
    options: WriteOptions,
    retry: RetryPolicy,
    resubmission: bool,
    progress: Option<WriteProgressFn>,
    send: S,
) -> WriteStream<'static>
where
    S: Fn(Range<usize>, u32) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<(), Error>> + Send + 'static,
{
    let (input, total) = from_iter(conversions);
    let send: run::SendFn = Arc::new(move |batch: Arc<Batch>, attempt| {
        send(batch.start..batch.start + batch.len, attempt).boxed()
    });
    WriteStream::new(
        input,
        total,
        options,
        progress,
        Shared::new(kind, resubmission, retry, send, None),
        None,
        None,
    )
}

async fn collect(mut stream: WriteStream<'_>) -> WriteReport {
    let mut report = WriteReport::default();
    let mut next = 0;
    while let Some(batch) = stream.next().await {
        assert_eq!(batch.range().start, next, "batches in input order");
        next = batch.range().end;
        assert_eq!(batch.outcomes().len(), batch.range().len());
        report.push(batch);
    }
    report
}

async fn run_batches<S, Fut>(
    kind: WriteKind,
    count: usize,
    options: WriteOptions,
    retry: &RetryPolicy,
    send: S,
) -> WriteReport
where
    S: Fn(Range<usize>, u32) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<(), Error>> + Send + 'static,
{
    let stream = stream_of(
        kind,
        input(count).into_iter(),
        options,
        retry.clone(),
        false,
        None,
        send,
    );
    collect(stream).await
}

#[tokio::test]
async fn every_input_gets_one_outcome_in_order() {
    let report = run_batches(
        WriteKind::Insert,
        25,
        opts(10),
        &fast(),
        |range, _| async move {
            if range.start == 10 {
                Err(rejected_400(vec![detail(3, 0x101)]))
            } else {
                Ok(())
            }
        },
    )
    .await;
    assert_eq!(report.len(), 25);
    assert_eq!(report.batches(), 3);
    assert_eq!(report.rejected(), 1);
    let (i, issue) = report.rejections().next().unwrap();
    assert_eq!(i, 13);
    assert_eq!(issue.index, Some(13));
    assert_eq!(report.stored(), 24);
}

#[tokio::test]
async fn batches_are_yielded_in_input_order_whatever_order_they_finish_in() {
    // Later batches finish first; the stream still yields 0, 1, 2, ...
    let stream = stream_of(
        WriteKind::Insert,
        input(40).into_iter(),
        WriteOptions {
            batch_size: 5,
            concurrency: 4,
        },
        fast(),
        false,
        None,
        |range, _| async move {
            let delay = 40 - range.start as u64;
            tokio::time::sleep(Duration::from_millis(delay)).await;
            Ok(())
        },
    );
    let report = collect(stream).await;
    assert_eq!(report.len(), 40);
    assert!(report.all_stored());
}

/// A stream over `rows` inputs whose batch 0 does not finish until `release`
/// is notified (the others finish at once); `started` counts the batches sent.
fn batch_zero_held(
    rows: usize,
    options: WriteOptions,
) -> (
    WriteStream<'static>,
    Arc<tokio::sync::Notify>,
    Arc<AtomicUsize>,
) {
    let release = Arc::new(tokio::sync::Notify::new());
    let started = Arc::new(AtomicUsize::new(0));
    let (r, s) = (release.clone(), started.clone());
    let stream = stream_of(
        WriteKind::Insert,
        input(rows).into_iter(),
        options,
        fast(),
        false,
        None,
        move |range, _| {
            let (r, s) = (r.clone(), s.clone());
            async move {
                s.fetch_add(1, Ordering::SeqCst);
                if range.start == 0 {
                    r.notified().await;
                }
                Ok(())
            }
        },
    );
    (stream, release, started)
}

#[tokio::test]
async fn a_slow_batch_holds_back_at_most_the_reorder_buffer() {
    // Batch 0 never finishes until the others are blocked on it: the stream
    // must stop starting batches at max_held_batches, not read the input on.
    let options = WriteOptions {
        batch_size: 2,
        concurrency: 3,
    };
    let (mut stream, release, started) = batch_zero_held(1000, options);
    // Poll until the stream is stuck on batch 0.
    let first = tokio::time::timeout(Duration::from_millis(200), stream.next()).await;
    assert!(first.is_err(), "batch 0 cannot be yielded yet");
    assert_eq!(started.load(Ordering::SeqCst), options.max_held_batches());
    let stats = stream.stats();
    assert_eq!(stats.peak_held, 6);
    assert_eq!(stats.peak_in_flight, 3);
    assert_eq!(stats.peak_waiting, 5);
    assert!(stream.conversions_read() <= (6 + 1) * 2, "{stream:?}");
    release.notify_one();
    let report = collect(stream).await;
    assert_eq!(report.len(), 1000);
}

#[tokio::test]
async fn the_next_batch_is_read_while_one_is_in_flight() {
    // One batch in flight (concurrency 1) that does not finish: the stream
    // reads and checks the next batch meanwhile (so it can start the moment
    // the first finishes), and reads no further.
    let options = WriteOptions {
        batch_size: 5,
        concurrency: 1,
    };
    let (mut stream, release, started) = batch_zero_held(100, options);
    let first = tokio::time::timeout(Duration::from_millis(100), stream.next()).await;
    assert!(first.is_err(), "batch 0 cannot be yielded yet");
    assert_eq!(started.load(Ordering::SeqCst), 1);
    // Batch 0 (5), batch 1 read and closed (5), and the row that closed it.
    assert_eq!(stream.conversions_read(), 11, "{stream:?}");
    release.notify_one();
    let report = collect(stream).await;
    assert_eq!(report.len(), 100);
    assert!(report.all_stored());
}

#[tokio::test]
async fn a_million_conversions_in_bounded_memory() {
    // A generated input never held as a whole: the read-ahead stays within
    // (max_held_batches + 1) × batch_size however long the input is.
    let options = WriteOptions {
        batch_size: 7,
        concurrency: 4,
    };
    let generated = (0..1_000_000).map(|i| clicked(&format!("g-{i}")));
    let mut stream = stream_of(
        WriteKind::Insert,
        generated,
        options,
        fast(),
        false,
        None,
        |range, _| async move {
            // Every 3rd batch yields to the scheduler once, so batches finish
            // out of order.
            if range.start % 3 == 0 {
                tokio::task::yield_now().await;
            }
            Ok(())
        },
    );
    let (mut rows, mut next) = (0, 0);
    while let Some(batch) = stream.next().await {
        assert_eq!(batch.range().start, next);
        next = batch.range().end;
        rows += batch.outcomes().iter().filter(|o| o.is_stored()).count();
    }
    assert_eq!(rows, 1_000_000);
    let stats = stream.stats();
    assert!(stats.peak_held <= options.max_held_batches(), "{stats:?}");
    assert!(stats.peak_in_flight <= options.concurrency, "{stats:?}");
    assert!(
        stats.peak_read_ahead <= (options.max_held_batches() + 1) * options.batch_size,
        "{stats:?}"
    );
    assert_eq!(stats.batches, 1_000_000usize.div_ceil(7));
}

#[tokio::test]
async fn progress_is_reported_once_per_finished_batch() {
    let seen: Arc<Mutex<Vec<WriteProgress>>> = Arc::default();
    let record = seen.clone();
    let stream = stream_of(
        WriteKind::Insert,
        input(25).into_iter(),
        opts(10),
        fast(),
        false,
        Some(Arc::new(move |p| record.lock().unwrap().push(p))),
        |range, _| async move {
            // The first batch finishes last.
            if range.start == 0 {
                tokio::time::sleep(Duration::from_millis(20)).await;
                Err(rejected_400(vec![detail(0, 0x101)]))
            } else {
                Ok(())
            }
        },
    );
    let report = collect(stream).await;
    assert_eq!(report.len(), 25);
    let seen = seen.lock().unwrap().clone();
    let done: Vec<(usize, usize)> = seen
        .iter()
        .map(|p| (p.conversions_done, p.batches_done))
        .collect();
    assert_eq!(done, vec![(10, 1), (15, 2), (25, 3)]);
    for p in &seen {
        assert_eq!((p.conversions_read, p.conversions_total), (25, Some(25)));
    }
}

#[tokio::test]
async fn a_duplicate_after_a_lost_answer_counts_as_stored() {
    let report = run_batches(
        WriteKind::Insert,
        3,
        opts(10),
        &fast(),
        |_, attempt| async move {
            match attempt {
                1 => Err(timed_out("conversion.insert")),
                _ => Err(rejected_400(vec![detail(0, 0x11A), detail(2, 0x11A)])),
            }
        },
    )
    .await;
    assert!(matches!(report.outcomes()[0], Outcome::StoredEarlier));
    assert!(matches!(report.outcomes()[1], Outcome::Stored));
    assert!(matches!(report.outcomes()[2], Outcome::StoredEarlier));
    assert_eq!(report.requests(), 2);
    assert!(report.all_stored());
    assert_eq!(
        report.to_string(),
        "3 conversions: 3 stored (2 by an earlier attempt whose answer was lost), \
         0 rejected, 0 failed; 1 batch, 2 requests"
    );
}

#[tokio::test]
async fn a_duplicate_is_already_stored_only_in_resubmission_mode() {
    for resubmission in [false, true] {
        let stream = stream_of(
            WriteKind::Insert,
            input(2).into_iter(),
            opts(10),
            fast(),
            resubmission,
            None,
            |_, _| async { Err(rejected_400(vec![detail(1, 0x11A)])) },
        );
        let report = collect(stream).await;
        assert!(matches!(report.outcomes()[0], Outcome::Stored));
        if resubmission {
            assert!(matches!(report.outcomes()[1], Outcome::AlreadyStored));
            assert!(report.all_stored());
        } else {
            assert!(matches!(report.outcomes()[1], Outcome::Rejected(_)));
        }
    }
}

#[tokio::test]
async fn a_duplicate_on_a_first_attempt_is_a_rejection() {
    let report = run_batches(WriteKind::Insert, 2, opts(10), &fast(), |_, _| async {
        Err(rejected_400(vec![detail(1, 0x11A)]))
    })
    .await;
    assert!(matches!(report.outcomes()[1], Outcome::Rejected(_)));
    // So is one after a refused connection (the request never left).
    let report = run_batches(
        WriteKind::Insert,
        2,
        opts(10),
        &fast(),
        |_, attempt| async move {
            if attempt == 1 {
                Err(Error::Transport(TransportError::new(
                    "conversion.insert",
                    TransportErrorKind::Connect,
                    "refused",
                )))
            } else {
                Err(rejected_400(vec![detail(1, 0x11A)]))
            }
        },
    )
    .await;
    assert!(matches!(report.outcomes()[1], Outcome::Rejected(_)));
    // For update a duplicate code is never "stored earlier".
    let report = run_batches(
        WriteKind::Update,
        1,
        opts(10),
        &fast(),
        |_, attempt| async move {
            if attempt == 1 {
                Err(timed_out("conversion.update"))
            } else {
                Err(rejected_400(vec![detail(0, 0x11A)]))
            }
        },
    )
    .await;
    assert!(matches!(report.outcomes()[0], Outcome::Rejected(_)));
}

#[tokio::test]
async fn a_duplicate_after_a_rate_limit_is_a_rejection() {
    // 429 and rate-limit 403 answers store nothing: a 0x0000011A on the
    // retry means a different, earlier call stored that id.
    for refusal in [
        api(429, None),
        api(403, Some("rateLimitExceeded")),
        api(403, Some("userRateLimitExceeded")),
    ] {
        let first = refusal.clone();
        let report = run_batches(
            WriteKind::Insert,
            2,
            opts(10),
            &fast(),
            move |_, attempt| {
                let first = first.clone();
                async move {
                    match attempt {
                        1 => Err(first),
                        _ => Err(rejected_400(vec![detail(1, 0x11A)])),
                    }
                }
            },
        )
        .await;
        assert_eq!(report.requests(), 2, "{refusal:?}");
        assert!(matches!(report.outcomes()[0], Outcome::Stored));
        assert!(
            matches!(report.outcomes()[1], Outcome::Rejected(_)),
            "{refusal:?}: {:?}",
            report.outcomes()[1]
        );
    }
    // A 500 may have been processed: the same answer is a success.
    let report = run_batches(
        WriteKind::Insert,
        2,
        opts(10),
        &fast(),
        |_, attempt| async move {
            match attempt {
                1 => Err(api(500, None)),
                _ => Err(rejected_400(vec![detail(1, 0x11A)])),
            }
        },
    )
    .await;
    assert!(matches!(report.outcomes()[1], Outcome::StoredEarlier));
}

#[tokio::test]
async fn refusals_before_processing_were_not_stored() {
    let policy = RetryPolicy {
        max_attempts: 1,
        ..fast()
    };
    for refusal in [api(429, None), api(403, Some("insufficientPermissions"))] {
        let each = refusal.clone();
        let report = run_batches(WriteKind::Insert, 1, opts(10), &policy, move |_, _| {
            let each = each.clone();
            async move { Err(each) }
        })
        .await;
        assert!(
            matches!(
                report.outcomes()[0],
                Outcome::Failed {
                    may_have_been_stored: false,
                    ..
                }
            ),
            "{refusal:?}"
        );
    }
}

#[tokio::test]
async fn exhausted_retries_are_failures_that_may_have_been_stored() {
    let report = run_batches(WriteKind::Insert, 5, opts(2), &fast(), |_, _| async {
        Err(api(503, None))
    })
    .await;
    assert_eq!(report.failed(), 5);
    assert_eq!(report.requests(), 3 * 4);
    for o in report.outcomes() {
        match o {
            Outcome::Failed {
                attempts,
                may_have_been_stored,
                ..
            } => {
                assert_eq!(*attempts, 4);
                assert!(*may_have_been_stored);
            }
            other => panic!("{other:?}"),
        }
    }
}

#[tokio::test]
async fn an_auth_failure_stops_the_remaining_batches() {
    let options = WriteOptions {
        batch_size: 1,
        concurrency: 1,
    };
    let report = run_batches(WriteKind::Insert, 5, options, &fast(), |_, _| async {
        Err(Error::Api {
            operation: "conversion.insert",
            status: 401,
            reason: Some("authError".into()),
            message: "Invalid Credentials".into(),
            details: vec![],
            details_complete: true,
            retry_after: None,
        })
    })
    .await;
    assert_eq!(report.failed(), 5);
    assert_eq!(report.requests(), 1);
    let unsent = report
        .outcomes()
        .iter()
        .filter(|o| matches!(o, Outcome::Failed { attempts: 0, .. }))
        .count();
    assert_eq!(unsent, 4);
}

#[tokio::test]
async fn invalid_rows_keep_their_place_and_are_not_sent() {
    let mut rows = input(6);
    rows[1].conversion_id = Some("bad\u{1b}id".into());
    rows[4] = rows[2].clone();
    let sent: Arc<Mutex<Vec<Range<usize>>>> = Arc::default();
    let record = sent.clone();
    let stream = stream_of(
        WriteKind::Insert,
        rows.into_iter(),
        opts(3),
        fast(),
        false,
        None,
        move |range, _| {
            record.lock().unwrap().push(range);
            async { Ok(()) }
        },
    );
    let report = collect(stream).await;
    assert_eq!(report.invalid(), 2);
    for (i, field) in [(1, "conversionId"), (4, "conversionId")] {
        match &report.outcomes()[i] {
            Outcome::Invalid(Error::Validation {
                field: f, index, ..
            }) => {
                assert_eq!((f.as_str(), *index), (field, Some(i)));
            }
            other => panic!("{i}: {other:?}"),
        }
    }
    assert_eq!(report.stored(), 4);
    // An all-invalid batch makes no request.
    let stream = stream_of(
        WriteKind::Insert,
        vec![clicked(""), clicked("")].into_iter(),
        opts(3),
        fast(),
        false,
        None,
        |_, _| async { panic!("nothing to send") },
    );
    let report = collect(stream).await;
    assert_eq!((report.invalid(), report.requests()), (2, 0));
}

#[tokio::test]
async fn a_dropped_stream_sends_nothing_more() {
    // Batch 0 is stored at once; the others keep failing with 503 and are
    // being retried when the stream is dropped after batch 0.
    let requests = Arc::new(AtomicUsize::new(0));
    let counter = requests.clone();
    let retry = RetryPolicy {
        max_attempts: 50,
        base_delay: Duration::from_millis(2),
        max_delay: Duration::from_millis(4),
        ..RetryPolicy::default()
    };
    let mut stream = stream_of(
        WriteKind::Insert,
        input(100).into_iter(),
        WriteOptions {
            batch_size: 2,
            concurrency: 4,
        },
        retry,
        false,
        None,
        move |range, _| {
            counter.fetch_add(1, Ordering::SeqCst);
            async move {
                if range.start == 0 {
                    return Ok(());
                }
                tokio::time::sleep(Duration::from_millis(1)).await;
                Err(api(503, None))
            }
        },
    );
    let first = stream.next().await.unwrap();
    assert_eq!(first.range(), 0..2);
    // Let the others be retried for a while, then drop.
    let busy = tokio::time::timeout(Duration::from_millis(30), stream.next()).await;
    assert!(busy.is_err(), "batch 1 is still being retried");
    let before_drop = requests.load(Ordering::SeqCst);
    assert!(before_drop > 4, "retries happened: {before_drop}");
    drop(stream);
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert_eq!(
        requests.load(Ordering::SeqCst),
        before_drop,
        "no request after the drop"
    );
}

#[tokio::test]
async fn a_stream_input_that_is_not_always_ready() {
    // Rows arrive one by one from another task; the write stream waits for
    // them (Pending input) and closes the last, partial batch at the end.
    let (tx, rx) = futures::channel::mpsc::channel::<Conversion>(1);
    let producer = tokio::spawn(async move {
        let mut tx = tx;
        for c in input(23) {
            tokio::time::sleep(Duration::from_millis(1)).await;
            futures::SinkExt::send(&mut tx, c)
                .await
                .expect("the stream reads");
        }
    });
    let sent: Arc<Mutex<Vec<Range<usize>>>> = Arc::default();
    let record = sent.clone();
    let send: run::SendFn = Arc::new(move |batch: Arc<Batch>, _| {
        record
            .lock()
            .unwrap()
            .push(batch.start..batch.start + batch.len);
        async { Ok(()) }.boxed()
    });
    let stream = WriteStream::new(
        from_stream(rx),
        None,
        opts(5),
        None,
        Shared::new(WriteKind::Insert, false, fast(), send, None),
        None,
        None,
    );
    let report = collect(stream).await;
    producer.await.expect("the producer ends");
    assert_eq!(report.len(), 23);
    assert!(report.all_stored());
    let sent = sent.lock().unwrap().clone();
    assert_eq!(sent, [0..5, 5..10, 10..15, 15..20, 20..23]);
}

/// A rerun's stream: `resume` and `before_send` given; every request is
/// answered `0x0000011A` for each conversion it carries (all already held),
/// and the input indices sent are recorded.
fn rerun(
    conversions: Vec<Conversion>,
    resume: Resume,
    before_send: Option<run::BeforeSendFn>,
    sent: Arc<Mutex<Vec<usize>>>,
) -> WriteStream<'static> {
    let (input, total) = from_iter(conversions);
    let send: run::SendFn = Arc::new(move |batch: Arc<Batch>, _| {
        let indices: Vec<usize> = (0..batch.sent()).map(|k| batch.input_index(k)).collect();
        sent.lock().unwrap().extend(&indices);
        let details = (0..indices.len()).map(|k| detail(k, 0x11A)).collect();
        async move { Err(rejected_400(details)) }.boxed()
    });
    WriteStream::new(
        input,
        total,
        opts(3),
        None,
        Shared::new(WriteKind::Insert, false, fast(), send, before_send),
        Some(resume.cursor()),
        None,
    )
}

#[tokio::test]
async fn a_rerun_counts_settled_rows_for_duplicates_and_calls_only_sent_rows_already_stored() {
    // Row 8 repeats row 2, which an earlier run settled (and stored).
    let mut conversions = input(10);
    conversions[8] = conversions[2].clone();
    let sent = Arc::new(Mutex::new(Vec::new()));
    let hooked: Arc<Mutex<Vec<Range<usize>>>> = Arc::default();
    let record = hooked.clone();
    let stream = rerun(
        conversions,
        Resume::new().settled(0..3).sent(0..6),
        Some(Arc::new(move |range| {
            record.lock().unwrap().push(range);
            Ok(())
        })),
        sent.clone(),
    );
    let report = collect(stream).await;
    let o = report.outcomes();
    assert!(
        o[..3].iter().all(|o| matches!(o, Outcome::Settled)),
        "{o:?}"
    );
    // In flight when the earlier run stopped: already stored is a success.
    assert!(
        o[3..6].iter().all(|o| matches!(o, Outcome::AlreadyStored)),
        "{o:?}"
    );
    // Never sent before: a 0x0000011A is a conflict, as in a first run.
    for i in [6, 7, 9] {
        assert!(
            matches!(&o[i], Outcome::Rejected(x) if x.index == Some(i)),
            "{i}: {:?}",
            o[i]
        );
    }
    // The repeat of a settled row is found although row 2 was not sent now.
    assert!(
        matches!(
            &o[8],
            Outcome::Invalid(Error::Validation { index: Some(8), .. })
        ),
        "{:?}",
        o[8]
    );
    assert_eq!(*sent.lock().unwrap(), [3, 4, 5, 6, 7, 9]);
    // The hook saw each batch that sends something, before it was sent.
    assert_eq!(*hooked.lock().unwrap(), [3..6, 6..9, 9..10]);
    assert_eq!(report.settled(), 3);
}

#[tokio::test]
async fn a_failing_before_send_hook_sends_nothing_more() {
    let sent = Arc::new(Mutex::new(Vec::new()));
    let calls = Arc::new(AtomicUsize::new(0));
    let counter = calls.clone();
    let stream = rerun(
        input(9),
        Resume::new(),
        Some(Arc::new(move |_| {
            if counter.fetch_add(1, Ordering::SeqCst) == 1 {
                Err(Error::Io {
                    path: "j".into(),
                    message: "disk full".into(),
                })
            } else {
                Ok(())
            }
        })),
        sent.clone(),
    );
    let report = collect(stream).await;
    assert_eq!(*sent.lock().unwrap(), [0, 1, 2]);
    for o in &report.outcomes()[3..] {
        assert!(
            matches!(
                o,
                Outcome::Failed {
                    may_have_been_stored: false,
                    attempts: 0,
                    ..
                }
            ),
            "{o:?}"
        );
    }
    assert_eq!(calls.load(Ordering::SeqCst), 2);
}

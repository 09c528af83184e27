//! The capture sees every event of its own thread, whichever thread reached the callsite first, and
//! nothing of other threads.

use std::sync::{Arc, Barrier};

use test_support::TraceCapture;

test_support::install_trace_capture!();

fn emit(marker: &str) {
    tracing::info!(marker, "one event");
    let span = tracing::info_span!("test_support.span", marker);
    span.in_scope(|| {});
}

/// The pattern that made `traces_show_requests_but_never_a_token` flaky: another thread, without a
/// capture, is the first to reach a callsite while this thread captures. With a per-test
/// `set_default` subscriber the callsite is then cached as "never" and this assertion fails.
#[test]
fn a_callsite_first_reached_on_another_thread_is_still_captured() {
    let capture = TraceCapture::start();
    std::thread::spawn(|| emit("elsewhere")).join().unwrap();
    emit("here");
    let text = capture.text();
    assert!(text.contains("marker=\"here\""), "{text}");
    assert!(
        text.contains("test_support.span"),
        "span closings are captured: {text}"
    );
    assert!(
        !text.contains("elsewhere"),
        "other threads are not captured: {text}"
    );
}

#[test]
fn concurrent_captures_each_see_only_their_own_thread() {
    let barrier = Arc::new(Barrier::new(4));
    let threads: Vec<_> = (0..4)
        .map(|i| {
            let barrier = barrier.clone();
            std::thread::spawn(move || {
                let capture = TraceCapture::start();
                barrier.wait();
                emit(&format!("thread-{i}"));
                barrier.wait();
                capture.text()
            })
        })
        .collect();
    for (i, thread) in threads.into_iter().enumerate() {
        let text = thread.join().unwrap();
        assert!(text.contains(&format!("marker=\"thread-{i}\"")), "{text}");
        assert_eq!(text.matches("one event").count(), 1, "{text}");
    }
}

#[test]
fn nothing_is_captured_after_the_capture_ends() {
    let capture = TraceCapture::start();
    let inner = TraceCapture::start();
    emit("inner");
    drop(inner);
    emit("outer");
    let text = capture.text();
    assert!(
        !text.contains("inner"),
        "a nested capture takes the events: {text}"
    );
    assert!(
        text.contains("marker=\"outer\""),
        "the outer capture resumes: {text}"
    );
}

#[tokio::test]
async fn tasks_of_a_current_thread_runtime_are_captured() {
    let capture = TraceCapture::start();
    tokio::spawn(async { emit("task") }).await.unwrap();
    assert!(capture.text().contains("marker=\"task\""));
}

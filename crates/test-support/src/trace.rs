//! One trace capture for a whole test binary, routed per test thread.
//!
//! # Why not `tracing::subscriber::set_default` in each test
//!
//! `tracing` caches, process-wide, whether a callsite (a `span!` or `event!` in the code under test) is
//! of interest to anyone. The cache is filled the first time a callsite is hit. While exactly one
//! dispatcher is registered, `tracing-core` computes that interest from *the current thread's* default
//! dispatcher only (its `Dispatchers::has_just_one` fast path). So when test A holds a thread-local
//! subscriber from `set_default` and test B, on another thread without one, is the first to reach a
//! callsite, the callsite is cached as "never interesting" for the whole process, and test A's capture
//! silently misses it. Which test reaches a callsite first depends on scheduling: that was the flaky
//! `traces_show_requests_but_never_a_token`.
//!
//! # What this module does instead
//!
//! [`install_trace_capture!`](crate::install_trace_capture) installs one global subscriber before
//! `main` (so before the test harness starts any test thread, and so before any callsite can be
//! cached against "no subscriber"). Its only layer formats events and span closings and writes them to
//! the buffer of the [`TraceCapture`] active on the emitting thread; its filter answers "sometimes" for
//! every callsite, so the decision is taken per event, on the emitting thread, and nothing is cached.
//! Tests that do not capture pay one thread-local lookup per event.
//!
//! Events are routed by thread: run a capturing test on a current-thread runtime (the default of
//! `#[tokio::test]`) so that every task it spawns logs through the test's own thread.

use std::cell::RefCell;
use std::io;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, Once, PoisonError};

use tracing::Metadata;
use tracing::subscriber::Interest;
use tracing_subscriber::fmt::MakeWriter;
use tracing_subscriber::fmt::format::FmtSpan;
use tracing_subscriber::layer::{Context, Filter, SubscriberExt};
use tracing_subscriber::{Layer, Registry};

type Buffer = Arc<Mutex<Vec<u8>>>;

thread_local! {
    /// The buffer of the capture active on this thread, if any.
    static ACTIVE: RefCell<Option<Buffer>> = const { RefCell::new(None) };
}

static INSTALL: Once = Once::new();
static INSTALLED_BEFORE_MAIN: AtomicBool = AtomicBool::new(false);

/// Installs the binary-wide subscriber. Called before `main` by
/// [`install_trace_capture!`](crate::install_trace_capture); idempotent.
#[doc(hidden)]
pub fn install_before_main() {
    install();
    INSTALLED_BEFORE_MAIN.store(true, Ordering::SeqCst);
}

fn install() {
    INSTALL.call_once(|| {
        let layer = tracing_subscriber::fmt::layer()
            .with_writer(ThreadWriter)
            .with_ansi(false)
            .with_span_events(FmtSpan::CLOSE)
            .with_filter(ActiveCapture);
        let subscriber = Registry::default().with(layer);
        // Another global subscriber in this binary would make captures miss events: fail loudly.
        tracing::subscriber::set_global_default(subscriber).expect(
            "no other global tracing subscriber in a binary that uses install_trace_capture!",
        );
    });
}

/// Enables an event or span exactly when its thread has an active capture.
///
/// `callsite_enabled` must answer "sometimes": any cacheable answer (as `filter_fn` gives) would be
/// taken on whichever thread reaches the callsite first, which is the flakiness this module removes.
struct ActiveCapture;

impl<S> Filter<S> for ActiveCapture {
    fn enabled(&self, _: &Metadata<'_>, _: &Context<'_, S>) -> bool {
        ACTIVE.with(|active| active.borrow().is_some())
    }

    fn callsite_enabled(&self, _: &'static Metadata<'static>) -> Interest {
        Interest::sometimes()
    }
}

/// Everything traced on the current thread between [`TraceCapture::start`] and drop, at every level,
/// formatted by `tracing_subscriber::fmt` without colours, span closings included.
///
/// The test binary must contain [`install_trace_capture!`](crate::install_trace_capture) once.
///
/// ```
/// test_support::install_trace_capture!();
///
/// let capture = test_support::TraceCapture::start();
/// tracing::info!(attempt = 1, "hello");
/// assert!(capture.text().contains("attempt=1"));
/// ```
#[must_use = "the capture ends when this value is dropped"]
pub struct TraceCapture {
    buffer: Buffer,
    previous: Option<Buffer>,
}

impl TraceCapture {
    /// Starts capturing what the current thread traces.
    ///
    /// # Panics
    ///
    /// When the test binary lacks [`install_trace_capture!`](crate::install_trace_capture): without it
    /// the capture could miss events depending on which test ran first.
    pub fn start() -> Self {
        assert!(
            INSTALLED_BEFORE_MAIN.load(Ordering::SeqCst),
            "add `test_support::install_trace_capture!();` to this test binary's crate root"
        );
        let buffer = Buffer::default();
        let previous = ACTIVE.with(|active| active.borrow_mut().replace(buffer.clone()));
        Self { buffer, previous }
    }

    /// What was captured so far.
    pub fn text(&self) -> String {
        let bytes = self.buffer.lock().unwrap_or_else(PoisonError::into_inner);
        String::from_utf8_lossy(&bytes).into_owned()
    }
}

impl Drop for TraceCapture {
    fn drop(&mut self) {
        let previous = self.previous.take();
        ACTIVE.with(|active| *active.borrow_mut() = previous);
    }
}

impl std::fmt::Debug for TraceCapture {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TraceCapture").finish_non_exhaustive()
    }
}

/// Writes to the active capture of the thread that formats the event (the emitting thread).
struct ThreadWriter;

/// One formatted event on its way into a capture buffer (or nowhere).
struct ThreadWrite(Option<Buffer>);

impl<'a> MakeWriter<'a> for ThreadWriter {
    type Writer = ThreadWrite;

    fn make_writer(&'a self) -> Self::Writer {
        ThreadWrite(ACTIVE.with(|active| active.borrow().clone()))
    }
}

impl io::Write for ThreadWrite {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if let Some(buffer) = &self.0 {
            buffer
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .extend_from_slice(buf);
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// Installs the binary-wide trace capture before `main`. Put it once in a test binary's crate root
/// (an integration test file, or `lib.rs` for unit tests) that uses [`TraceCapture`].
///
/// It is a no-op for code that never starts a capture, apart from one thread-local lookup per event.
#[macro_export]
macro_rules! install_trace_capture {
    () => {
        $crate::__ctor::declarative::ctor! {
            #[ctor(unsafe, crate_path = $crate::__ctor)]
            fn __test_support_install_trace_capture() {
                $crate::trace::install_before_main();
            }
        }
    };
}

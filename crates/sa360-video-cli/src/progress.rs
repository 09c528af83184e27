//! Progress bars on stderr, drawn only when stderr is a terminal and
//! `--quiet` is not given.

use std::io::IsTerminal as _;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

fn target() -> ProgressDrawTarget {
    if std::io::stderr().is_terminal() && !crate::output::is_quiet() {
        ProgressDrawTarget::stderr()
    } else {
        ProgressDrawTarget::hidden()
    }
}

/// A bar (`total`: its length, if known) drawn by `template`, showing `what`, redrawn 10 times
/// a second.
fn bar(total: Option<u64>, template: &str, what: &str) -> ProgressBar {
    let bar = ProgressBar::with_draw_target(total, target());
    bar.set_style(
        ProgressStyle::with_template(template)
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> "),
    );
    bar.set_message(what.to_owned());
    bar.enable_steady_tick(Duration::from_millis(100));
    bar
}

/// A bar counting items toward a known total (the tour's).
#[cfg(feature = "fakes")]
pub fn items(total: u64, what: &str) -> ProgressBar {
    let template = "  {msg:<12} [{bar:32}] {human_pos}/{human_len} ({elapsed}, {eta} left)";
    bar(Some(total), template, what)
}

/// A counter of items with no known total.
pub fn counter(what: &str) -> ProgressBar {
    bar(None, "  {spinner} {msg}: {human_pos} ({elapsed})", what)
}

/// A bar through a file of `total` bytes: its percentage and the time left
/// come from the bytes read; the message says what is done (`inserting: 26000 rows`).
pub fn file(total: u64, what: &str) -> ProgressBar {
    let template = "  {msg:<24} [{bar:32}] {percent:>3}% of {total_bytes} ({elapsed}, {eta} left)";
    bar(Some(total), template, what)
}

/// A bar of bytes; the total is set once the download announces it.
pub fn bytes(what: &str) -> ProgressBar {
    let template = "  {msg:<12} [{bar:32}] {bytes}/{total_bytes} ({bytes_per_sec}, {eta} left)";
    bar(None, template, what)
}

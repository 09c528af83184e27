//! A test's child processes: one of the test binary's own (ignored) tests run
//! as a child ([`test_as_child`]), and the files they signal through
//! ([`wait_for_file`]: `READY` written when the child is set up, `GO` written
//! when the test lets it proceed).
//!
//! ```
//! use std::time::Duration;
//! let dir = tempfile::tempdir().unwrap();
//! let ready = dir.path().join("READY");
//! std::fs::write(&ready, b"").unwrap();
//! test_support::wait_for_file(&ready, Duration::from_secs(5));
//! ```

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

/// A command that runs test `name` (its full path, e.g. `video_session_redis::replica_child`) of the
/// running test binary alone, ignored or not, with its output shown: the way a test starts a
/// second process of its own. Add the child's environment, then spawn it.
pub fn test_as_child(name: &str) -> Command {
    let exe = std::env::current_exe().expect("the test binary's path");
    let mut command = Command::new(exe);
    command.args(["--exact", name, "--ignored", "--nocapture"]);
    command
}

/// Blocks until `path` exists, checking every millisecond; panics (failing
/// the test) naming the file when it has not appeared within `within`.
pub fn wait_for_file(path: &Path, within: Duration) {
    let deadline = Instant::now() + within;
    while !path.exists() {
        assert!(
            Instant::now() < deadline,
            "{} never appeared",
            path.display()
        );
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// [`wait_for_file`] from async code: the wait runs on a blocking thread so
/// the runtime keeps serving the test's other tasks; its panic is the test's.
pub async fn wait_for_file_async(path: &Path, within: Duration) {
    let path = path.to_owned();
    if let Err(e) = tokio::task::spawn_blocking(move || wait_for_file(&path, within)).await {
        std::panic::resume_unwind(e.into_panic());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_child_runs_exactly_the_named_test() {
        let command = test_as_child("child::tests::x");
        let args: Vec<_> = command.get_args().collect();
        assert_eq!(
            args,
            ["--exact", "child::tests::x", "--ignored", "--nocapture"]
        );
        assert_eq!(command.get_program(), std::env::current_exe().unwrap());
    }

    #[test]
    fn a_file_that_never_appears_fails_naming_it() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("never");
        let panic = std::panic::catch_unwind(|| {
            wait_for_file(&missing, Duration::from_millis(20));
        })
        .unwrap_err();
        let message = panic.downcast_ref::<String>().unwrap();
        assert!(message.ends_with("never never appeared"), "{message}");
    }

    #[tokio::test]
    async fn the_async_wait_fails_the_test_naming_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("never-async");
        let waiting = tokio::spawn(async move {
            wait_for_file_async(&missing, Duration::from_millis(20)).await;
        });
        let panic = waiting.await.unwrap_err().into_panic();
        let message = panic.downcast_ref::<String>().unwrap();
        assert!(message.ends_with("never-async never appeared"), "{message}");
    }

    #[test]
    fn a_file_written_later_ends_the_wait() {
        let dir = tempfile::tempdir().unwrap();
        let later = dir.path().join("later");
        let writer = {
            let later = later.clone();
            std::thread::spawn(move || {
                std::thread::sleep(Duration::from_millis(20));
                std::fs::write(later, b"").unwrap();
            })
        };
        wait_for_file(&later, Duration::from_secs(30));
        assert!(later.exists());
        writer.join().unwrap();
    }
}

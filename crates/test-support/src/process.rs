//! Runs a child process to its end and measures its own peak memory.
//!
//! The peak resident set comes from `wait4`'s resource usage for that one
//! child (`ru_maxrss`), not from `RUSAGE_CHILDREN`, which mixes every child of
//! the test process. One caveat: on Linux the child starts with its parent's
//! high-water mark (it shares the parent's memory until `exec`), so a test that
//! compares peaks must run in a binary of its own, where the parent stays small
//! and steady.
//!
//! ```
//! use std::time::Duration;
//! let run = test_support::run_measured(std::process::Command::new("true"), Duration::from_secs(10));
//! assert_eq!(run.code, Some(0));
//! assert!(run.peak_rss_kib > 0);
//! ```

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::command::drain;

/// What a measured run produced.
#[derive(Debug)]
pub struct Measured {
    /// The exit status; `None` when a signal ended it (or `time_limit` did).
    pub code: Option<i32>,
    /// Its standard output.
    pub stdout: String,
    /// Its standard error.
    pub stderr: String,
    /// Its peak resident set, in KiB.
    pub peak_rss_kib: u64,
    /// From spawn to exit.
    pub elapsed: Duration,
    /// True when it was killed for running longer than `time_limit`.
    pub killed: bool,
}

/// Runs `command` with its output captured; kills it (SIGKILL) once it has
/// run for `time_limit`.
///
/// # Panics
///
/// When the command cannot be started or waited for.
// The child is reaped by `wait4` below (which reports its rusage), not by
// `Child::wait`, which would reap it without the numbers.
#[allow(clippy::zombie_processes)]
pub fn run_measured(mut command: Command, time_limit: Duration) -> Measured {
    let started = Instant::now();
    let mut child = command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the command starts");
    let stdout = drain(child.stdout.take());
    let stderr = drain(child.stderr.take());
    let pid = libc::pid_t::try_from(child.id()).expect("a pid");
    let mut killed = false;
    let (status, usage) = loop {
        let mut status: libc::c_int = 0;
        // SAFETY: `rusage` is plain data that wait4 fills in; zeroes are a valid value.
        let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
        // SAFETY: `pid` is our own child, not yet reaped (std's `Child` is never waited on).
        let done = unsafe { libc::wait4(pid, &mut status, libc::WNOHANG, &mut usage) };
        if done == pid {
            break (status, usage);
        }
        assert!(
            done == 0,
            "wait4 failed: {}",
            std::io::Error::last_os_error()
        );
        if !killed && started.elapsed() > time_limit {
            killed = true;
            // SAFETY: signalling our own live child.
            unsafe { libc::kill(pid, libc::SIGKILL) };
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let elapsed = started.elapsed();
    let code = libc::WIFEXITED(status).then(|| libc::WEXITSTATUS(status));
    Measured {
        code,
        stdout: stdout.join().unwrap_or_default(),
        stderr: stderr.join().unwrap_or_default(),
        peak_rss_kib: u64::try_from(usage.ru_maxrss).unwrap_or(0),
        elapsed,
        killed,
    }
}

//! What every command writes: results on stdout, confirmations that
//! `--quiet` hides, notes on stderr, and a closed stdout (`apictl tour | head
//! -1`) ending the command quietly with status 0.
//!
//! Commands print through [`outln!`](crate::output::outln), [`sayln!`](crate::output::sayln),
//! [`note!`](crate::output::note) and [`tell!`](crate::output::tell), never `println!` (the crate denies
//! `clippy::print_stdout` and `clippy::print_stderr`): `println!` panics on a
//! closed pipe.

use std::fmt;
use std::io::Write as _;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::error::AppError;

/// `--quiet`, set once by `main` before any command runs.
static QUIET: AtomicBool = AtomicBool::new(false);

/// Sets `--quiet` for the whole process.
pub fn set_quiet(quiet: bool) {
    QUIET.store(quiet, Ordering::Relaxed);
}

/// Whether `--quiet` was given: no confirmations, notes or progress bars.
pub fn is_quiet() -> bool {
    QUIET.load(Ordering::Relaxed)
}

/// Writes one line of what the command was asked for (rows, a status
/// report, a JSON document) to stdout, `--quiet` or not.
pub fn line(args: fmt::Arguments<'_>) -> Result<(), AppError> {
    let mut out = std::io::stdout().lock();
    out.write_fmt(args)
        .and_then(|()| out.write_all(b"\n"))
        .and_then(|()| out.flush())
        .map_err(|e| stdout_error(&e))
}

/// Writes one confirmation line (`logged in as ...`, `wrote 12 conversions`)
/// to stdout, unless `--quiet`.
pub fn status(args: fmt::Arguments<'_>) -> Result<(), AppError> {
    if is_quiet() { Ok(()) } else { line(args) }
}

/// Writes one note to stderr, unless `--quiet`. A closed stderr is ignored:
/// a note is never worth failing a command for.
pub fn note_line(args: fmt::Arguments<'_>) {
    if !is_quiet() {
        let _ = writeln!(std::io::stderr().lock(), "{args}");
    }
}

/// Writes one line to stderr that the operator needs to act on (a URL to
/// open, what an interruption left), `--quiet` or not. A closed stderr is
/// ignored.
pub fn tell_line(args: fmt::Arguments<'_>) {
    let _ = writeln!(std::io::stderr().lock(), "{args}");
}

/// The error of a failed write to stdout: a closed pipe (the reader is gone,
/// as `head` goes after its lines) ends the command quietly with status 0;
/// anything else is an error.
pub fn stdout_error(e: &std::io::Error) -> AppError {
    if e.kind() == std::io::ErrorKind::BrokenPipe {
        AppError::closed_stdout()
    } else {
        AppError::new(format!("cannot write to stdout: {e}"))
            .hint("check the file or program stdout goes to")
    }
}

/// The error of a failed write of serialized output (JSON or CSV) to `to`:
/// `kind` is the I/O error kind beneath, when it was one.
pub fn write_error(
    kind: Option<std::io::ErrorKind>,
    message: &dyn fmt::Display,
    to: Option<&std::path::Path>,
) -> AppError {
    match (kind, to) {
        (Some(std::io::ErrorKind::BrokenPipe), None) => AppError::closed_stdout(),
        (_, None) => AppError::new(format!("cannot write to stdout: {message}"))
            .hint("check the file or program stdout goes to"),
        (_, Some(path)) => AppError::new(format!("cannot write {}: {message}", path.display()))
            .hint("check that the directory exists and is writable, and the disk"),
    }
}

/// One line of results on stdout (`outln!("{x}")?`), `--quiet` or not.
macro_rules! outln {
    () => { $crate::output::line(format_args!("")) };
    ($($arg:tt)*) => { $crate::output::line(format_args!($($arg)*)) };
}

/// One confirmation line on stdout (`sayln!("done")?`), hidden by `--quiet`.
macro_rules! sayln {
    () => { $crate::output::status(format_args!("")) };
    ($($arg:tt)*) => { $crate::output::status(format_args!($($arg)*)) };
}

/// One note on stderr (`note!("...")`), hidden by `--quiet`.
macro_rules! note {
    ($($arg:tt)*) => { $crate::output::note_line(format_args!($($arg)*)) };
}

/// One line on stderr the operator needs (`tell!("open {url}")`), shown even
/// with `--quiet`.
macro_rules! tell {
    ($($arg:tt)*) => { $crate::output::tell_line(format_args!($($arg)*)) };
}

pub(crate) use {note, outln, sayln, tell};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_closed_pipe_is_a_quiet_end_and_other_failures_are_errors() {
        let closed = std::io::Error::from(std::io::ErrorKind::BrokenPipe);
        assert!(stdout_error(&closed).is_closed_stdout());
        let full = std::io::Error::other("disk full");
        let e = stdout_error(&full);
        assert!(!e.is_closed_stdout());
        assert_eq!(e.exit, crate::exit::EXIT_ERROR);
        let to_file = write_error(
            Some(std::io::ErrorKind::BrokenPipe),
            &"x",
            Some(std::path::Path::new("out.csv")),
        );
        assert!(!to_file.is_closed_stdout());
    }
}

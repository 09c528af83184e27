//! The upload journal: which rows of an input file have a definite outcome,
//! so `--resume` sends only the others.
//!
//! # Format
//!
//! `FILE.journal`, beside the input, UTF-8 text, one record per line, only
//! ever appended to:
//!
//! ```text
//! apictl upload journal 2
//! input 127000000 9f86d081…(SHA-256 of the whole file) csv insert
//! report /path/to/FILE.rejected.csv
//! send 1-100
//! send 101-200
//! done 1-100 stored=97 rejected=3 report=412 resend=-
//! send 201-230
//! done 101-230 stored=0 rejected=0 report=412 resend=101-200
//! ```
//!
//! A `send FIRST-LAST` line is appended, and the journal fsynced, before the
//! first request of the batch that covers those rows: a row outside every
//! `send` line was never sent. `--resume` tells the facade so
//! ([`Resume`](facade::search_ads::Resume)): the server's "already stored"
//! (`0x0000011A`) is a success only for a row an earlier run may have sent;
//! for any other row it is a conflict with a conversion another upload
//! stored, rejected as in an uninterrupted upload (SA-23). A version 1
//! journal (no `send` lines) is read as if every row without an outcome may
//! have been sent.
//!
//! Rows are numbered 1, 2, … in file order (a CSV header and blank lines are
//! not rows). A `done FIRST-LAST` line says: every row from FIRST to LAST has
//! a definite outcome (stored, already stored, rejected by the server or
//! refused locally), except the rows listed after `resend=` (comma-separated
//! ranges; `-` for none), which got no definite answer and are sent again by
//! `--resume`. `stored=` and `rejected=` count the rows this line settled,
//! and `report=` is the length of the report file once their rejections were
//! written to it. A line is appended, and the journal fsynced, only after the
//! outcomes it names are known and the report lines they produced are
//! fsynced: the journal never claims an outcome that is not in the report.
//! A `report PATH` line after the header moves the report: `--resume
//! --rejected NEW` writes one when no row was written to the old report yet.
//! A last line without its line break (the process was killed while writing
//! it) is ignored and cut off.
//!
//! The `input` line binds the journal to the file: its size and the SHA-256
//! of its contents, the format it was read as and the operation. `--resume`
//! refuses a journal whose file has changed.

use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, Read, Seek, SeekFrom, Write};
use std::ops::RangeInclusive;
use std::path::{Path, PathBuf};

use crate::cli::InputFormat;
use crate::error::{AppError, AppResult, io_error};
use crate::records::WriteMode;

const MAGIC: &str = "apictl upload journal 2";
/// The version before `send` lines.
const MAGIC_1: &str = "apictl upload journal 1";

/// `FILE.journal`.
pub fn default_journal_path(input: &Path) -> PathBuf {
    let mut name = input.as_os_str().to_owned();
    name.push(".journal");
    PathBuf::from(name)
}

/// What binds a journal to its input file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Binding {
    /// The file's size in bytes.
    pub size: u64,
    /// SHA-256 of its contents, lower-case hex.
    pub sha256: String,
    /// The format its rows are read as.
    pub format: InputFormat,
    /// Insert or update.
    pub mode: WriteMode,
}

impl Binding {
    /// Reads `path` once to hash it.
    pub fn of_file(path: &Path, format: InputFormat, mode: WriteMode) -> AppResult<Self> {
        let mut file = File::open(path).map_err(|e| io_error("cannot read", path, &e))?;
        let mut context = ring::digest::Context::new(&ring::digest::SHA256);
        let mut buf = vec![0u8; 256 * 1024];
        let mut size = 0u64;
        loop {
            let n = match file.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(io_error("cannot read", path, &e)),
            };
            context.update(&buf[..n]);
            size += n as u64;
        }
        let sha256 = context
            .finish()
            .as_ref()
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        Ok(Self {
            size,
            sha256,
            format,
            mode,
        })
    }

    fn line(&self) -> String {
        format!(
            "input {} {} {} {}",
            self.size,
            self.sha256,
            format_name(self.format),
            mode_name(self.mode)
        )
    }
}

fn format_name(format: InputFormat) -> &'static str {
    match format {
        InputFormat::Csv => "csv",
        InputFormat::Jsonl => "jsonl",
    }
}

fn mode_name(mode: WriteMode) -> &'static str {
    match mode {
        WriteMode::Insert => "insert",
        WriteMode::Update => "update",
    }
}

/// One `done` line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Done {
    /// The rows it covers, 1-based, inclusive.
    pub rows: RangeInclusive<u64>,
    /// Rows it settled as stored (or already stored).
    pub stored: u64,
    /// Rows it settled as rejected (by the server or locally).
    pub rejected: u64,
    /// The report's length after its rows were written.
    pub report_len: u64,
    /// Rows of `rows` without a definite outcome, as inclusive ranges.
    pub resend: Vec<RangeInclusive<u64>>,
}

impl Done {
    fn line(&self) -> String {
        let resend = if self.resend.is_empty() {
            "-".to_owned()
        } else {
            self.resend
                .iter()
                .map(|r| format!("{}-{}", r.start(), r.end()))
                .collect::<Vec<_>>()
                .join(",")
        };
        format!(
            "done {}-{} stored={} rejected={} report={} resend={resend}",
            self.rows.start(),
            self.rows.end(),
            self.stored,
            self.rejected,
            self.report_len
        )
    }

    fn parse(text: &str) -> Option<Self> {
        let mut parts = text.split(' ');
        if parts.next()? != "done" {
            return None;
        }
        let rows = range(parts.next()?)?;
        let mut value = |key: &str| parts.next()?.strip_prefix(key).map(str::to_owned);
        let stored = value("stored=")?.parse().ok()?;
        let rejected = value("rejected=")?.parse().ok()?;
        let report_len = value("report=")?.parse().ok()?;
        let resend_text = value("resend=")?;
        if parts.next().is_some() {
            return None;
        }
        let resend = if resend_text == "-" {
            Vec::new()
        } else {
            resend_text
                .split(',')
                .map(range)
                .collect::<Option<Vec<_>>>()?
        };
        let inside = resend
            .iter()
            .all(|r| r.start() >= rows.start() && r.end() <= rows.end());
        inside.then_some(Self {
            rows,
            stored,
            rejected,
            report_len,
            resend,
        })
    }
}

fn range(text: &str) -> Option<RangeInclusive<u64>> {
    let (a, b) = text.split_once('-')?;
    let (a, b): (u64, u64) = (a.parse().ok()?, b.parse().ok()?);
    (a >= 1 && a <= b).then_some(a..=b)
}

/// What an existing journal says.
#[derive(Debug)]
pub struct Resumed {
    /// The rows with a definite outcome, as sorted, disjoint inclusive ranges.
    pub settled: Vec<RangeInclusive<u64>>,
    /// Rows settled as stored, over every earlier run.
    pub stored: u64,
    /// Rows settled as rejected, over every earlier run.
    pub rejected: u64,
    /// The report's length after the last complete line.
    pub report_len: u64,
    /// The report file the earlier runs wrote.
    pub report: PathBuf,
    /// Rows whose batch an earlier run started sending (`send` lines),
    /// unsorted, possibly overlapping.
    pub sent: Vec<RangeInclusive<u64>>,
    /// A version 1 journal: it did not record what was sent, so every row
    /// without an outcome may have been.
    pub all_maybe_sent: bool,
}

/// An open journal, appended to.
#[derive(Debug)]
pub struct Journal {
    path: PathBuf,
    file: File,
}

fn damaged(path: &Path, why: impl std::fmt::Display) -> AppError {
    AppError::new(format!("the journal {} is damaged: {why}", path.display()))
        .hint("pass --restart to upload the file from the start (rows already stored then come back as 0x0000011A), or remove the journal")
}

impl Journal {
    /// Creates a new journal (the caller has checked none exists).
    pub fn create(path: &Path, binding: &Binding, report: &Path) -> AppResult<Self> {
        let report_text = report_text(report)?;
        // Written whole beside it and renamed: a kill never leaves a journal
        // without its header.
        let mut fresh = path.as_os_str().to_owned();
        fresh.push(".new");
        let fresh = PathBuf::from(fresh);
        let head = format!("{MAGIC}\n{}\nreport {report_text}\n", binding.line());
        let write = || -> std::io::Result<File> {
            // Created new: a symlink planted at the name is not followed.
            let mut file = facade::fs::create_new_file(&fresh)?;
            file.write_all(head.as_bytes())?;
            file.sync_all()?;
            std::fs::rename(&fresh, path)?;
            OpenOptions::new().append(true).open(path)
        };
        let file = write().map_err(|e| io_error("cannot create the journal", path, &e))?;
        Ok(Self {
            path: path.to_owned(),
            file,
        })
    }

    /// Opens an existing journal for `--resume`: checks it belongs to the
    /// file as it is now, reads what is settled, cuts off a torn last line.
    pub fn resume(path: &Path, binding: &Binding, input: &Path) -> AppResult<(Self, Resumed)> {
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .open(path)
            .map_err(|e| match e.kind() {
                std::io::ErrorKind::NotFound => AppError::new(format!(
                    "--resume: there is no journal {} to resume from",
                    path.display()
                ))
                .hint("run the upload without --resume; a journal is written beside the file while it runs"),
                _ => io_error("cannot open the journal", path, &e),
            })?;
        let mut reader = BufReader::new(&file);
        let mut complete_len = 0u64;
        let mut lines = Vec::new();
        loop {
            let mut line = String::new();
            let n = reader
                .read_line(&mut line)
                .map_err(|e| damaged(path, format!("cannot be read: {e}")))?;
            if n == 0 || !line.ends_with('\n') {
                break; // the end, or a line torn by a kill: ignored
            }
            complete_len += n as u64;
            line.pop();
            lines.push(line);
        }
        drop(reader);
        let all_maybe_sent = match lines.first().map(String::as_str) {
            Some(MAGIC) => false,
            Some(MAGIC_1) => true,
            _ => return Err(damaged(path, format!("its first line is not {MAGIC:?}"))),
        };
        let Some(bound) = lines.get(1) else {
            return Err(damaged(path, "it has no input line"));
        };
        if *bound != binding.line() {
            return Err(changed(bound, binding, input, path));
        }
        let Some(report) = lines.get(2).and_then(|l| l.strip_prefix("report ")) else {
            return Err(damaged(path, "it has no report line"));
        };
        let mut resumed = Resumed {
            settled: Vec::new(),
            stored: 0,
            rejected: 0,
            report_len: 0,
            report: PathBuf::from(report),
            sent: Vec::new(),
            all_maybe_sent,
        };
        for (i, line) in lines.iter().enumerate().skip(3) {
            if let Some(report) = line.strip_prefix("report ") {
                // A resume moved the report before any row was written to it.
                resumed.report = PathBuf::from(report);
                continue;
            }
            if let Some(rows) = line.strip_prefix("send ") {
                let rows = range(rows)
                    .ok_or_else(|| damaged(path, format!("line {} is not a send record", i + 1)))?;
                resumed.sent.push(rows);
                continue;
            }
            let done = Done::parse(line)
                .ok_or_else(|| damaged(path, format!("line {} is not a done record", i + 1)))?;
            resumed.stored += done.stored;
            resumed.rejected += done.rejected;
            resumed.report_len = done.report_len;
            let mut next = *done.rows.start();
            for r in &done.resend {
                if *r.start() > next {
                    resumed.settled.push(next..=r.start() - 1);
                }
                next = r.end() + 1;
            }
            if next <= *done.rows.end() {
                resumed.settled.push(next..=*done.rows.end());
            }
        }
        resumed.settled.sort_by_key(|r| *r.start());
        let mut merged: Vec<RangeInclusive<u64>> = Vec::with_capacity(resumed.settled.len());
        for r in resumed.settled.drain(..) {
            match merged.last_mut() {
                Some(last) if *r.start() <= last.end().saturating_add(1) => {
                    *last = *last.start()..=(*last.end()).max(*r.end());
                }
                _ => merged.push(r),
            }
        }
        resumed.settled = merged;
        file.set_len(complete_len)
            .map_err(|e| io_error("cannot write the journal", path, &e))?;
        let mut file = file;
        file.seek(SeekFrom::End(0))
            .map_err(|e| io_error("cannot write the journal", path, &e))?;
        Ok((
            Self {
                path: path.to_owned(),
                file,
            },
            resumed,
        ))
    }

    /// Appends a `report` line and fsyncs it: the report moves to `report`
    /// (allowed while no row was written to the old one).
    pub fn append_report(&mut self, report: &Path) -> AppResult<()> {
        let text = report_text(report)?;
        self.append_line(format!("report {text}\n"))
    }

    /// Appends a `send` line and fsyncs it: rows `rows` may be sent from now on.
    pub fn append_send(&mut self, rows: RangeInclusive<u64>) -> AppResult<()> {
        self.append_line(format!("send {}-{}\n", rows.start(), rows.end()))
    }

    /// Appends a `done` line and fsyncs it.
    pub fn append(&mut self, done: &Done) -> AppResult<()> {
        let mut line = done.line();
        line.push('\n');
        self.append_line(line)
    }

    fn append_line(&mut self, line: String) -> AppResult<()> {
        self.file
            .write_all(line.as_bytes())
            .and_then(|()| self.file.sync_data())
            .map_err(|e| io_error("cannot write the journal", &self.path, &e))
    }

    /// Removes the journal: every row has its outcome.
    pub fn remove(self) -> AppResult<()> {
        let path = self.path;
        drop(self.file);
        std::fs::remove_file(&path).map_err(|e| io_error("cannot remove the journal", &path, &e))
    }

    /// Where it is.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// `report` as the journal writes it: UTF-8 without line breaks.
fn report_text(report: &Path) -> AppResult<&str> {
    report
        .to_str()
        .filter(|t| !t.contains(['\n', '\r']))
        .ok_or_else(|| {
            AppError::new(format!(
                "the report path {} cannot be written in the journal",
                report.display()
            ))
            .hint("give --rejected a UTF-8 path without line breaks")
        })
}

/// The error for a journal written for another file, format or operation.
fn changed(bound: &str, now: &Binding, input: &Path, path: &Path) -> AppError {
    let parts: Vec<&str> = bound.split(' ').collect();
    let (hint_flag, what) = match parts.as_slice() {
        ["input", _, _, _, mode] if *mode != mode_name(now.mode) => (
            if now.mode == WriteMode::Update {
                "drop --update"
            } else {
                "add --update"
            },
            format!("the journal is of an {mode}"),
        ),
        ["input", _, _, format, _] if *format != format_name(now.format) => (
            "pass the same --format as the first run",
            format!("the journal read the file as {format}"),
        ),
        _ => (
            "pass --restart to upload it from the start (rows already stored then come back as 0x0000011A)",
            format!(
                "{} has changed since the upload that wrote the journal (its size or contents differ), so the journal's row numbers no longer name the same rows",
                input.display()
            ),
        ),
    };
    AppError::new(format!("--resume: {what} ({})", path.display())).hint(hint_flag)
}

/// The rows of `rows` in `resend`, as inclusive ranges (for a `done` line).
pub fn ranges(rows: impl IntoIterator<Item = u64>) -> Vec<RangeInclusive<u64>> {
    let mut out: Vec<RangeInclusive<u64>> = Vec::new();
    for n in rows {
        match out.last_mut() {
            Some(last) if *last.end() + 1 == n => *last = *last.start()..=n,
            _ => out.push(n..=n),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn binding() -> Binding {
        Binding {
            size: 10,
            sha256: "ab".repeat(32),
            format: InputFormat::Csv,
            mode: WriteMode::Insert,
        }
    }

    #[test]
    fn done_lines_round_trip() {
        let done = Done {
            rows: 5..=30,
            stored: 20,
            rejected: 2,
            report_len: 99,
            resend: vec![7..=9, 12..=12],
        };
        assert_eq!(
            done.line(),
            "done 5-30 stored=20 rejected=2 report=99 resend=7-9,12-12"
        );
        assert_eq!(Done::parse(&done.line()), Some(done));
        assert_eq!(
            Done::parse("done 5-30 stored=1 rejected=0 report=0 resend=1-2"),
            None
        );
        assert_eq!(
            Done::parse("done 5-3 stored=1 rejected=0 report=0 resend=-"),
            None
        );
        assert_eq!(ranges([1, 2, 3, 7, 9, 10]), vec![1..=3, 7..=7, 9..=10]);
    }

    #[test]
    fn resume_reads_settled_rows_and_cuts_a_torn_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("in.csv.journal");
        let mut j = Journal::create(&path, &binding(), Path::new("r.csv")).unwrap();
        j.append(&Done {
            rows: 1..=10,
            stored: 7,
            rejected: 1,
            report_len: 50,
            resend: vec![3..=4],
        })
        .unwrap();
        j.append(&Done {
            rows: 11..=20,
            stored: 10,
            rejected: 0,
            report_len: 50,
            resend: vec![],
        })
        .unwrap();
        drop(j);
        let mut f = OpenOptions::new().append(true).open(&path).unwrap();
        f.write_all(b"done 21-30 stored=10 rej").unwrap();
        drop(f);
        let (mut j, r) = Journal::resume(&path, &binding(), Path::new("in.csv")).unwrap();
        assert_eq!(r.settled, vec![1..=2, 5..=20]);
        assert_eq!((r.stored, r.rejected, r.report_len), (17, 1, 50));
        assert_eq!(r.report, PathBuf::from("r.csv"));
        // A later run settles rows 3-4 and 21-22.
        j.append(&Done {
            rows: 3..=22,
            stored: 4,
            rejected: 0,
            report_len: 50,
            resend: vec![],
        })
        .unwrap();
        drop(j);
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(
            !text.contains("rej\n") && !text.contains("stored=10 rejdone"),
            "{text}"
        );
        let (_, r) = Journal::resume(&path, &binding(), Path::new("in.csv")).unwrap();
        assert_eq!(r.settled, vec![1..=22]);
    }

    #[cfg(unix)]
    #[test]
    fn a_symlink_planted_at_the_new_journal_is_not_followed() {
        let dir = tempfile::tempdir().unwrap();
        let victim = dir.path().join("victim");
        std::fs::write(&victim, "keep me").unwrap();
        let path = dir.path().join("in.csv.journal");
        std::os::unix::fs::symlink(&victim, dir.path().join("in.csv.journal.new")).unwrap();
        Journal::create(&path, &binding(), Path::new("r.csv")).unwrap();
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep me");
        assert!(std::fs::read_to_string(&path).unwrap().starts_with(MAGIC));
    }

    #[test]
    fn send_lines_say_which_rows_may_have_been_sent() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("in.csv.journal");
        let mut j = Journal::create(&path, &binding(), Path::new("r.csv")).unwrap();
        j.append_send(1..=10).unwrap();
        j.append_send(11..=20).unwrap();
        j.append(&Done {
            rows: 1..=10,
            stored: 10,
            rejected: 0,
            report_len: 0,
            resend: vec![],
        })
        .unwrap();
        drop(j);
        let (_, r) = Journal::resume(&path, &binding(), Path::new("in.csv")).unwrap();
        assert_eq!(r.sent, vec![1..=10, 11..=20]);
        assert_eq!(r.settled, vec![1..=10]);
        assert!(!r.all_maybe_sent);
        // A version 1 journal recorded no sends: every open row may have been.
        let text = std::fs::read_to_string(&path)
            .unwrap()
            .replace(MAGIC, MAGIC_1);
        std::fs::write(&path, text).unwrap();
        let (_, r) = Journal::resume(&path, &binding(), Path::new("in.csv")).unwrap();
        assert!(r.all_maybe_sent);
        // A damaged send line is refused, not skipped.
        let mut f = OpenOptions::new().append(true).open(&path).unwrap();
        f.write_all(b"send 9-x\n").unwrap();
        drop(f);
        let e = Journal::resume(&path, &binding(), Path::new("in.csv")).unwrap_err();
        assert!(e.message.contains("not a send record"), "{e}");
    }

    #[test]
    fn resume_refuses_another_file_or_operation() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("in.csv.journal");
        Journal::create(&path, &binding(), Path::new("r.csv")).unwrap();
        let other = Binding {
            size: 11,
            ..binding()
        };
        let e = Journal::resume(&path, &other, Path::new("in.csv")).unwrap_err();
        assert!(e.message.contains("has changed"), "{e}");
        assert!(e.hint.unwrap().contains("--restart"));
        let update = Binding {
            mode: WriteMode::Update,
            ..binding()
        };
        let e = Journal::resume(&path, &update, Path::new("in.csv")).unwrap_err();
        assert!(e.hint.unwrap().contains("--update"), "{}", e.message);
        let e = Journal::resume(&dir.path().join("none"), &binding(), Path::new("x")).unwrap_err();
        assert!(e.message.contains("--resume"), "{e}");
    }
}

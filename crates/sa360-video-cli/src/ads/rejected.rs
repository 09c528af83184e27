//! The rejected-rows file, written as batches finish, in input order: each
//! rejected row with its own columns and values, so it can be fixed and
//! uploaded again (`upload` ignores the added columns).
//!
//! - CSV input: `FILE.rejected.csv`, the header `line,code,reason` and then
//!   the input's own columns; each row its line, code and reason and then its
//!   cells as read (empty when the row could not be split into cells).
//! - JSON-lines input: `FILE.rejected.jsonl`, each line the input's object
//!   with a `_rejected` member `{"line", "code", "reason"}` added (a line that
//!   is not a JSON object keeps its text in `_text`).

use std::fs::{File, OpenOptions};
use std::io::{Seek, SeekFrom};
use std::path::{Path, PathBuf};

use std::io::Write as _;

use crate::cli::InputFormat;
use crate::error::{AppError, AppResult, io_error};
use crate::records::{REJECTED_COLUMNS, Raw};

/// A row of the rejected-rows file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RejectedRow {
    /// The line of the input file where the row starts.
    pub line: u64,
    /// The row's conversionId, if it has one.
    pub conversion_id: String,
    /// `local` (refused before sending), the server's code (`0x0000010E`),
    /// `server` (a rejection without code) or `failed` (no definite answer).
    pub code: String,
    /// Why.
    pub reason: String,
    /// The row as the input holds it.
    pub raw: Raw,
}

/// `FILE.rejected.csv` for a CSV input, `FILE.rejected.jsonl` for JSON lines.
pub fn default_rejected_path(input: &Path, format: InputFormat) -> PathBuf {
    let mut name = input.as_os_str().to_owned();
    name.push(match format {
        InputFormat::Csv => ".rejected.csv",
        InputFormat::Jsonl => ".rejected.jsonl",
    });
    PathBuf::from(name)
}

/// Checks, before anything is sent, that the rejected-rows file can be created at
/// `path`: it is not a directory, and a file can be created beside it (a
/// fresh name, created new and removed again). The report itself is created
/// only with its first row.
pub fn check_writable(path: &Path) -> AppResult<()> {
    let hint = "choose another --rejected path (its directory must exist and be writable); for a file in a read-only directory, --journal PATH keeps the journal and the report in PATH's directory";
    if path.is_dir() {
        return Err(AppError::refused(format!(
            "the rejected-rows file {} is a directory",
            path.display()
        ))
        .hint(hint));
    }
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_owned(),
        _ => PathBuf::from("."),
    };
    let probe = dir.join(format!(
        ".apictl-probe-{}-{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos())
    ));
    match OpenOptions::new().write(true).create_new(true).open(&probe) {
        Ok(file) => {
            drop(file);
            std::fs::remove_file(&probe)
                .map_err(|e| io_error("cannot remove the probe file", &probe, &e))
        }
        Err(e) => Err(io_error("cannot create the rejected-rows file", path, &e)
            .hint(hint)
            .exit(crate::exit::EXIT_REFUSED)),
    }
}

/// How the rejected-rows file lays out a row: the input's format, and its CSV columns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Layout {
    /// CSV: [`REJECTED_COLUMNS`], then the input's columns (a report read back
    /// drops its old report columns, so they never pile up).
    Csv {
        /// The input's header.
        input: Vec<String>,
    },
    /// JSON lines.
    Jsonl,
}

impl Layout {
    /// The layout of an input.
    pub fn of<R: std::io::BufRead>(input: &super::input::Input<R>) -> Self {
        match input.format() {
            InputFormat::Csv => Self::Csv {
                input: input.headers().to_vec(),
            },
            InputFormat::Jsonl => Self::Jsonl,
        }
    }

    /// The input's columns the rejected-rows file repeats, as (index, name).
    fn kept(input: &[String]) -> impl Iterator<Item = (usize, &String)> {
        input
            .iter()
            .enumerate()
            .filter(|(_, h)| !REJECTED_COLUMNS.contains(&h.as_str()))
    }
}

/// The rejected-rows file, open.
#[derive(Debug)]
enum Out {
    Csv(Box<csv::Writer<File>>),
    Jsonl(std::io::BufWriter<File>),
}

impl Out {
    fn new(file: File, layout: &Layout) -> Self {
        match layout {
            Layout::Csv { .. } => Out::Csv(Box::new(
                csv::WriterBuilder::new()
                    .has_headers(false)
                    .from_writer(file),
            )),
            Layout::Jsonl => Out::Jsonl(std::io::BufWriter::new(file)),
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        match self {
            Out::Csv(w) => w.flush(),
            Out::Jsonl(w) => w.flush(),
        }
    }

    fn file(&self) -> &File {
        match self {
            Out::Csv(w) => w.get_ref(),
            Out::Jsonl(w) => w.get_ref(),
        }
    }
}

/// One line of the rejected-rows file for `row` in `layout`.
fn write_row(out: &mut Out, layout: &Layout, row: &RejectedRow) -> Result<(), String> {
    let line = row.line.to_string();
    match (out, layout) {
        (Out::Csv(w), Layout::Csv { input }) => {
            let cells: Vec<String> = match &row.raw {
                Raw::Cells(cells) if cells.len() == input.len() => {
                    Layout::kept(input).map(|(i, _)| cells[i].clone()).collect()
                }
                _ => Layout::kept(input).map(|_| String::new()).collect(),
            };
            let record = [line, row.code.clone(), row.reason.clone()]
                .into_iter()
                .chain(cells);
            w.write_record(record).map_err(|e| e.to_string())
        }
        (Out::Jsonl(w), _) => {
            let rejected =
                serde_json::json!({"line": row.line, "code": row.code, "reason": row.reason});
            let object = match &row.raw {
                Raw::Json(text) => match serde_json::from_str::<serde_json::Value>(text) {
                    Ok(serde_json::Value::Object(mut object)) => {
                        object.insert("_rejected".to_owned(), rejected);
                        serde_json::Value::Object(object)
                    }
                    _ => serde_json::json!({"_rejected": rejected, "_text": text}),
                },
                _ => serde_json::json!({"_rejected": rejected}),
            };
            serde_json::to_writer(&mut *w, &object).map_err(|e| e.to_string())?;
            w.write_all(b"\n").map_err(|e| e.to_string())
        }
        (Out::Csv(_), Layout::Jsonl) => {
            Err("internal error: a CSV rejected-rows file for JSON lines".into())
        }
    }
}

/// Writes rejected rows to the file as they come; the file is created with
/// the first row, so a run without rejections leaves none.
#[derive(Debug)]
pub struct RejectedWriter {
    path: PathBuf,
    layout: Layout,
    out: Option<Out>,
    /// The file's length at the last [`commit`](Self::commit).
    len: u64,
}

impl RejectedWriter {
    /// A new rejected-rows file: a file left at `path` by an earlier run is removed, so
    /// the rejected-rows file always belongs to this run.
    pub fn fresh(path: &Path, layout: Layout) -> AppResult<Self> {
        check_writable(path)?;
        match std::fs::remove_file(path) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => {
                return Err(
                    io_error("cannot replace the rejected-rows file", path, &e).hint(
                        "check that the directory is writable, or choose another --rejected path",
                    ),
                );
            }
        }
        Ok(Self {
            path: path.to_owned(),
            layout,
            out: None,
            len: 0,
        })
    }

    /// The report of an interrupted run, continued: cut back to `len` (what
    /// the journal last vouched for) and appended to. `path` is the one this
    /// run names (never one a journal names), and is not opened through a
    /// symlink.
    pub fn resume(path: &Path, len: u64, layout: Layout) -> AppResult<Self> {
        if len == 0 {
            return Self::fresh(path, layout);
        }
        let mut me = Self {
            path: path.to_owned(),
            layout,
            out: None,
            len,
        };
        let mut options = OpenOptions::new();
        options.write(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            options.custom_flags(libc::O_NOFOLLOW);
        }
        let file = options.open(path).map_err(|e| {
            #[cfg(unix)]
            let e = match e.raw_os_error() {
                Some(libc::ELOOP) => std::io::Error::other("it is a symlink, which is not followed"),
                _ => e,
            };
            io_error("--resume: cannot open the rejected-rows file", path, &e)
                .hint("the rejected-rows file of the interrupted run is needed to continue it; pass --restart to upload the file from the start")
        })?;
        let actual = file
            .metadata()
            .map_err(|e| io_error("cannot read", path, &e))?
            .len();
        if actual < len {
            return Err(AppError::refused(format!(
                "--resume: the rejected-rows file {} is shorter ({actual} bytes) than the journal says ({len} bytes): it was changed",
                path.display()
            ))
            .hint("pass --restart to upload the file from the start"));
        }
        let mut file = file;
        file.set_len(len)
            .and_then(|()| file.seek(SeekFrom::End(0)).map(drop))
            .map_err(|e| io_error("cannot write the rejected-rows file", path, &e))?;
        me.out = Some(Out::new(file, &me.layout));
        Ok(me)
    }

    fn fail(&self, e: impl std::fmt::Display) -> AppError {
        AppError::new(format!(
            "cannot write the rejected-rows file {}: {e}",
            self.path.display()
        ))
        .hint("check the disk, or choose another --rejected path")
    }

    /// Adds a row (buffered until [`commit`](Self::commit)).
    pub fn push(&mut self, row: &RejectedRow) -> AppResult<()> {
        if self.out.is_none() {
            // Created new: a symlink planted at the path is not followed.
            let file = sa360_video_private_file::create_new(&self.path).map_err(|e| {
                    io_error("cannot create the rejected-rows file", &self.path, &e).hint(
                        "check that the directory exists and is writable, or choose another --rejected path",
                    )
                })?;
            let mut out = Out::new(file, &self.layout);
            if let (Out::Csv(w), Layout::Csv { input }) = (&mut out, &self.layout) {
                let header = REJECTED_COLUMNS
                    .iter()
                    .map(|c| (*c).to_owned())
                    .chain(Layout::kept(input).map(|(_, h)| h.clone()));
                w.write_record(header).map_err(|e| self.fail(e))?;
            }
            self.out = Some(out);
        }
        if let Some(out) = self.out.as_mut() {
            write_row(out, &self.layout, row).map_err(|e| {
                AppError::new(format!(
                    "cannot write the rejected-rows file {}: {e}",
                    self.path.display()
                ))
            })?;
        }
        Ok(())
    }

    /// Writes what was pushed and fsyncs it; returns the file's length.
    pub fn commit(&mut self) -> AppResult<u64> {
        let Some(out) = self.out.as_mut() else {
            return Ok(self.len);
        };
        let path = &self.path;
        let fail = |e: std::io::Error| {
            AppError::new(format!(
                "cannot write the rejected-rows file {}: {e}",
                path.display()
            ))
        };
        out.flush().map_err(fail)?;
        let file = out.file();
        file.sync_data().map_err(fail)?;
        self.len = file.metadata().map_err(fail)?.len();
        Ok(self.len)
    }

    /// True when the file exists (this run or the one it continues wrote a row).
    pub fn exists(&self) -> bool {
        self.out.is_some() || self.len > 0
    }

    /// Where it is.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn layout() -> Layout {
        Layout::Csv {
            input: vec!["conversionId".into(), "conversionTimestamp".into()],
        }
    }

    #[test]
    fn a_report_read_back_does_not_repeat_its_own_columns() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.csv");
        let input = ["line", "code", "reason", "conversionId"]
            .map(String::from)
            .to_vec();
        let mut w = RejectedWriter::fresh(&path, Layout::Csv { input }).unwrap();
        let mut r = row(2);
        r.raw = Raw::Cells(["9", "local", "old", "a-1"].map(String::from).to_vec());
        w.push(&r).unwrap();
        w.commit().unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(
            text,
            "line,code,reason,conversionId\n2,local,\"a, \"\"quoted\"\" reason\",a-1\n"
        );
    }

    #[test]
    fn json_lines_keep_their_object_and_gain_a_rejected_member() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.jsonl");
        let mut w = RejectedWriter::fresh(&path, Layout::Jsonl).unwrap();
        let mut r = row(3);
        r.raw = Raw::Json(r#"{"conversionId":"a","revenueMicros":5}"#.into());
        w.push(&r).unwrap();
        r.raw = Raw::Json("not json".into());
        w.push(&r).unwrap();
        w.commit().unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        let lines: Vec<serde_json::Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(lines[0]["conversionId"], "a");
        assert_eq!(lines[0]["revenueMicros"], 5);
        assert_eq!(lines[0]["_rejected"]["line"], 3);
        assert_eq!(lines[0]["_rejected"]["code"], "local");
        assert_eq!(lines[1]["_text"], "not json");
    }

    fn row(line: u64) -> RejectedRow {
        RejectedRow {
            line,
            conversion_id: format!("c-{line}"),
            code: "local".into(),
            reason: "a, \"quoted\" reason".into(),
            raw: Raw::Cells(vec![format!("c-{line}"), "x,y".into()]),
        }
    }

    #[test]
    fn report_path_sits_beside_the_input() {
        assert_eq!(
            default_rejected_path(Path::new("dir/in.csv"), InputFormat::Csv),
            PathBuf::from("dir/in.csv.rejected.csv")
        );
        assert_eq!(
            default_rejected_path(Path::new("in.jsonl"), InputFormat::Jsonl),
            PathBuf::from("in.jsonl.rejected.jsonl")
        );
    }

    #[test]
    fn rows_are_written_as_committed_and_resumed_at_the_committed_length() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.csv");
        std::fs::write(&path, "stale").unwrap();
        let mut w = RejectedWriter::fresh(&path, layout()).unwrap();
        assert!(!path.exists(), "a stale report is removed");
        assert_eq!(w.commit().unwrap(), 0);
        w.push(&row(2)).unwrap();
        let len = w.commit().unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(len as usize, text.len());
        assert_eq!(
            text.lines().next(),
            Some("line,code,reason,conversionId,conversionTimestamp")
        );
        // Written after the last commit, then killed: cut off on resume.
        w.push(&row(3)).unwrap();
        w.commit().unwrap();
        drop(w);
        let mut w = RejectedWriter::resume(&path, len, layout()).unwrap();
        w.push(&row(4)).unwrap();
        w.commit().unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 3, "{text}");
        assert_eq!(
            lines[1], "2,local,\"a, \"\"quoted\"\" reason\",c-2,\"x,y\"",
            "{text}"
        );
        assert!(lines[2].starts_with("4,local,"), "{text}");
        assert!(RejectedWriter::resume(&path, 10_000, layout()).is_err());
    }

    #[cfg(unix)]
    #[test]
    fn a_symlink_planted_at_the_report_is_not_followed() {
        let dir = tempfile::tempdir().unwrap();
        let victim = dir.path().join("victim");
        std::fs::write(&victim, "keep me").unwrap();
        let path = dir.path().join("r.csv");
        let mut w = RejectedWriter::fresh(&path, layout()).unwrap();
        // Planted after the run started, before its first rejected row.
        std::os::unix::fs::symlink(&victim, &path).unwrap();
        w.push(&row(2)).unwrap();
        w.commit().unwrap();
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep me");
        assert!(std::fs::read_to_string(&path).unwrap().starts_with("line,"));
    }
}

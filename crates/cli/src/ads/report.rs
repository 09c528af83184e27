//! The rejected-rows report, `FILE.rejected.csv`: `line,conversionId,code,reason`,
//! written as batches finish, in input order.

use std::fs::{File, OpenOptions};
use std::io::{Seek, SeekFrom};
use std::path::{Path, PathBuf};

use crate::error::{AppError, AppResult, io_error};

/// A row of the rejected-rows report.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReportRow {
    /// The line of the input file where the row starts.
    pub line: u64,
    /// The row's conversionId, if it has one.
    pub conversion_id: String,
    /// `local` (refused before sending), the server's code (`0x0000010E`),
    /// `server` (a rejection without code) or `failed` (no definite answer).
    pub code: String,
    /// Why.
    pub reason: String,
}

/// `FILE.rejected.csv`.
pub fn default_report_path(input: &Path) -> PathBuf {
    let mut name = input.as_os_str().to_owned();
    name.push(".rejected.csv");
    PathBuf::from(name)
}

/// Checks, before anything is sent, that the report can be created at
/// `path`: it is not a directory, and a file can be created beside it (a
/// fresh name, created new and removed again). The report itself is created
/// only with its first row.
pub fn check_writable(path: &Path) -> AppResult<()> {
    let hint = "choose another --rejected path (its directory must exist and be writable)";
    if path.is_dir() {
        return Err(
            AppError::new(format!("the report path {} is a directory", path.display())).hint(hint),
        );
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
        Err(e) => Err(io_error("cannot create the report", path, &e).hint(hint)),
    }
}

const HEADER: [&str; 4] = ["line", "conversionId", "code", "reason"];

/// Writes report rows to the file as they come; the file is created with
/// the first row, so a run without rejections leaves none.
#[derive(Debug)]
pub struct ReportWriter {
    path: PathBuf,
    out: Option<csv::Writer<File>>,
    /// The file's length at the last [`commit`](Self::commit).
    len: u64,
}

impl ReportWriter {
    /// A new report: a file left at `path` by an earlier run is removed, so
    /// the report always belongs to this run.
    pub fn fresh(path: &Path) -> AppResult<Self> {
        check_writable(path)?;
        match std::fs::remove_file(path) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => {
                return Err(io_error("cannot replace the report", path, &e).hint(
                    "check that the directory is writable, or choose another --rejected path",
                ));
            }
        }
        Ok(Self {
            path: path.to_owned(),
            out: None,
            len: 0,
        })
    }

    /// The report of an interrupted run, continued: cut back to `len` (what
    /// the journal last vouched for) and appended to.
    pub fn resume(path: &Path, len: u64) -> AppResult<Self> {
        let mut me = Self {
            path: path.to_owned(),
            out: None,
            len,
        };
        if len == 0 {
            return Self::fresh(path);
        }
        let file = OpenOptions::new().write(true).open(path).map_err(|e| {
            io_error("--resume: cannot open the report", path, &e)
                .hint("the report of the interrupted run is needed to continue it; pass --restart to upload the file from the start")
        })?;
        let actual = file
            .metadata()
            .map_err(|e| io_error("cannot read", path, &e))?
            .len();
        if actual < len {
            return Err(AppError::new(format!(
                "--resume: the report {} is shorter ({actual} bytes) than the journal says ({len} bytes): it was changed",
                path.display()
            ))
            .hint("pass --restart to upload the file from the start"));
        }
        let mut file = file;
        file.set_len(len)
            .and_then(|()| file.seek(SeekFrom::End(0)).map(drop))
            .map_err(|e| io_error("cannot write the report", path, &e))?;
        me.out = Some(
            csv::WriterBuilder::new()
                .has_headers(false)
                .from_writer(file),
        );
        Ok(me)
    }

    fn fail(&self, e: impl std::fmt::Display) -> AppError {
        AppError::new(format!(
            "cannot write the report {}: {e}",
            self.path.display()
        ))
        .hint("check the disk, or choose another --rejected path")
    }

    /// Adds a row (buffered until [`commit`](Self::commit)).
    pub fn push(&mut self, row: &ReportRow) -> AppResult<()> {
        if self.out.is_none() {
            // Created new: a symlink planted at the path is not followed.
            let file = facade::fs::create_new_file(&self.path).map_err(|e| {
                    io_error("cannot create the report", &self.path, &e).hint(
                        "check that the directory exists and is writable, or choose another --rejected path",
                    )
                })?;
            let mut out = csv::Writer::from_writer(file);
            out.write_record(HEADER).map_err(|e| self.fail(e))?;
            self.out = Some(out);
        }
        let line = row.line.to_string();
        let record = [
            line.as_str(),
            row.conversion_id.as_str(),
            row.code.as_str(),
            row.reason.as_str(),
        ];
        if let Some(out) = self.out.as_mut() {
            out.write_record(record).map_err(|e| {
                AppError::new(format!(
                    "cannot write the report {}: {e}",
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
            AppError::new(format!("cannot write the report {}: {e}", path.display()))
        };
        out.flush().map_err(fail)?;
        let file = out.get_ref();
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

    fn row(line: u64) -> ReportRow {
        ReportRow {
            line,
            conversion_id: format!("c-{line}"),
            code: "local".into(),
            reason: "a, \"quoted\" reason".into(),
        }
    }

    #[test]
    fn report_path_sits_beside_the_input() {
        assert_eq!(
            default_report_path(Path::new("dir/in.csv")),
            PathBuf::from("dir/in.csv.rejected.csv")
        );
    }

    #[test]
    fn rows_are_written_as_committed_and_resumed_at_the_committed_length() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.csv");
        std::fs::write(&path, "stale").unwrap();
        let mut w = ReportWriter::fresh(&path).unwrap();
        assert!(!path.exists(), "a stale report is removed");
        assert_eq!(w.commit().unwrap(), 0);
        w.push(&row(2)).unwrap();
        let len = w.commit().unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(len as usize, text.len());
        assert_eq!(text.lines().next(), Some("line,conversionId,code,reason"));
        // Written after the last commit, then killed: cut off on resume.
        w.push(&row(3)).unwrap();
        w.commit().unwrap();
        drop(w);
        let mut w = ReportWriter::resume(&path, len).unwrap();
        w.push(&row(4)).unwrap();
        w.commit().unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 3, "{text}");
        assert!(lines[1].starts_with("2,c-2,local,"), "{text}");
        assert!(lines[2].starts_with("4,c-4,local,"), "{text}");
        assert!(ReportWriter::resume(&path, 10_000).is_err());
    }

    #[cfg(unix)]
    #[test]
    fn a_symlink_planted_at_the_report_is_not_followed() {
        let dir = tempfile::tempdir().unwrap();
        let victim = dir.path().join("victim");
        std::fs::write(&victim, "keep me").unwrap();
        let path = dir.path().join("r.csv");
        let mut w = ReportWriter::fresh(&path).unwrap();
        // Planted after the run started, before its first rejected row.
        std::os::unix::fs::symlink(&victim, &path).unwrap();
        w.push(&row(2)).unwrap();
        w.commit().unwrap();
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep me");
        assert!(std::fs::read_to_string(&path).unwrap().starts_with("line,"));
    }
}

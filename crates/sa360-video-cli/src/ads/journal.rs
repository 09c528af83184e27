//! What `apictl` puts in the upload journal, which is the SDK's
//! [`WriteJournal`](sa360_video_sdk::search_ads::WriteJournal) (format and guarantees
//! in its documentation; SA-23): `FILE.journal` beside the input, its `input`
//! text binding it to the file (size, SHA-256, format, operation), its `note`
//! naming the report file, and each `done` record's mark the report's length
//! once that batch's rejected rows were fsynced to it. `--resume` refuses a
//! journal whose file has changed, and truncates the report to the last mark.
//! One upload of an input runs at a time ([`hold_input`]).

use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};

use crate::cli::InputFormat;
use crate::error::{AppError, AppResult, io_error};
use crate::records::WriteMode;

/// `FILE.journal`.
pub fn default_journal_path(input: &Path) -> PathBuf {
    let mut name = input.as_os_str().to_owned();
    name.push(".journal");
    PathBuf::from(name)
}

/// Holds the input for this upload: an exclusive OS lock (`flock`, through
/// `fs4`) on the input file itself, so two runs meet whatever path names it
/// (a symlink, a hard link, another journal), until the file returned is
/// dropped; the kernel releases it when the process dies. Another upload
/// holding it is refused at once, before anything is read or sent (exit 4).
/// Unix only: Windows' locks are mandatory, and a locked input could not be
/// read (the journal's own lock still gives it one writer).
pub fn hold_input(input: &Path) -> AppResult<Option<File>> {
    if cfg!(not(unix)) {
        return Ok(None);
    }
    let file = File::open(input).map_err(|e| io_error("cannot read", input, &e))?;
    match fs4::FileExt::try_lock(&file) {
        Ok(()) => Ok(Some(file)),
        Err(fs4::TryLockError::WouldBlock) => Err(AppError::refused(format!(
            "another upload of {} is running (it holds the file's lock); nothing was sent",
            input.display()
        ))
        .hint("wait for it to end; if it leaves rows without an outcome, run the same command with --resume")),
        Err(fs4::TryLockError::Error(e)) => Err(io_error("cannot lock", input, &e)),
    }
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

    /// The journal's `input` text.
    pub fn line(&self) -> String {
        format!(
            "{} {} {} {}",
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

/// The error for a journal written for another file, format or operation.
pub fn changed(bound: &str, now: &Binding, input: &Path, path: &Path) -> AppError {
    let parts: Vec<&str> = bound.split(' ').collect();
    let (hint_flag, what) = match parts.as_slice() {
        [_, _, _, mode] if *mode != mode_name(now.mode) => (
            if now.mode == WriteMode::Update {
                "drop --update"
            } else {
                "add --update"
            },
            format!("the journal is of an {mode}"),
        ),
        [_, _, format, _] if *format != format_name(now.format) => (
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
    AppError::refused(format!("--resume: {what} ({})", path.display())).hint(hint_flag)
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
    fn another_file_or_operation_is_named_with_the_flag_that_fits() {
        let path = Path::new("in.csv.journal");
        let bound = binding().line();
        let other = Binding {
            size: 11,
            ..binding()
        };
        let e = changed(&bound, &other, Path::new("in.csv"), path);
        assert!(e.message.contains("has changed"), "{e}");
        assert!(e.hint.unwrap().contains("--restart"));
        let update = Binding {
            mode: WriteMode::Update,
            ..binding()
        };
        let e = changed(&bound, &update, Path::new("in.csv"), path);
        assert!(e.hint.unwrap().contains("--update"), "{}", e.message);
    }
}

//! The one owner of "keep a private file": directories created 0700, files
//! written 0600 through a temporary file renamed into place, and a refusal of
//! files or directories that other users can read or change.
//!
//! The video lockout [`FileStore`](crate::video_session::FileStore) goes
//! through these functions. Private to the crate: `apictl` keeps its state
//! files with a module of its own.

use std::fs;
use std::io::{self, Write as _};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// Why a file or directory is not private enough, or could not be written.
/// `#[non_exhaustive]`: more checks may come.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub(crate) enum PrivateFileError {
    /// The file or directory can be read or changed by other users.
    #[error(
        "{} has mode {mode:04o}: other users can {what} it; run `chmod {wanted:o} {}` (or remove it) and try again",
        path.display(),
        path.display()
    )]
    TooOpen {
        /// The file or directory.
        path: PathBuf,
        /// Its permission bits.
        mode: u32,
        /// "read or change" / "change".
        what: &'static str,
        /// The mode it should have (0600 files, 0700 directories).
        wanted: u32,
    },
    /// An I/O error, with what was being done.
    #[error("cannot {doing} {}: {source}", path.display())]
    Io {
        /// What failed ("create the directory", "write", ...).
        doing: &'static str,
        /// The path.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: io::Error,
    },
}

impl PrivateFileError {
    fn io(doing: &'static str, path: &Path, source: io::Error) -> Self {
        Self::Io {
            doing,
            path: path.to_owned(),
            source,
        }
    }
}

/// Creates `dir` and its missing parents with mode 0700 (on Unix), and checks
/// that an existing `dir` cannot be changed by other users (no group or other
/// write bit): someone who can write the directory can replace the files in it.
pub(crate) fn ensure_dir(dir: &Path) -> Result<(), PrivateFileError> {
    if !dir.is_dir() {
        let mut builder = fs::DirBuilder::new();
        builder.recursive(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::DirBuilderExt;
            builder.mode(0o700);
        }
        builder
            .create(dir)
            .map_err(|e| PrivateFileError::io("create the directory", dir, e))?;
    }
    check_dir(dir)
}

/// Refuses a directory that other users can write to (mode & 0o022 on Unix).
pub(crate) fn check_dir(dir: &Path) -> Result<(), PrivateFileError> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let meta =
            fs::metadata(dir).map_err(|e| PrivateFileError::io("read the directory", dir, e))?;
        let mode = meta.permissions().mode() & 0o7777;
        if mode & 0o022 != 0 {
            return Err(PrivateFileError::TooOpen {
                path: dir.to_owned(),
                mode,
                what: "change files in",
                wanted: 0o700,
            });
        }
    }
    #[cfg(not(unix))]
    let _ = dir;
    Ok(())
}

/// Refuses an existing file that other users can read or write (mode & 0o077
/// on Unix). A missing file is fine.
pub(crate) fn check_file(path: &Path) -> Result<(), PrivateFileError> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let meta = match fs::metadata(path) {
            Ok(meta) => meta,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
            Err(e) => return Err(PrivateFileError::io("read", path, e)),
        };
        let mode = meta.permissions().mode() & 0o7777;
        if mode & 0o077 != 0 {
            return Err(PrivateFileError::TooOpen {
                path: path.to_owned(),
                mode,
                what: "read or change",
                wanted: 0o600,
            });
        }
    }
    #[cfg(not(unix))]
    let _ = path;
    Ok(())
}

/// The parent directory of `path`, if it names one.
fn parent(path: &Path) -> Option<&Path> {
    path.parent().filter(|p| !p.as_os_str().is_empty())
}

/// Writes `bytes` and a final newline to `path` atomically: the parent
/// directory is created 0700 (and checked), the bytes go to a 0600 temporary
/// file beside `path` (unique per process and call), are synced, and the file
/// is renamed over `path`. Readers see the old or the new content, never a
/// mix; a crash leaves at most a stray temporary file.
pub(crate) fn write(path: &Path, bytes: &[u8]) -> Result<(), PrivateFileError> {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    if let Some(dir) = parent(path) {
        ensure_dir(dir)?;
    }
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(format!(".tmp-{}-{n}", std::process::id()));
    let tmp = PathBuf::from(tmp);
    let result = (|| {
        let mut options = fs::OpenOptions::new();
        options.write(true).create_new(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            options.mode(0o600);
        }
        let mut out = options.open(&tmp)?;
        out.write_all(bytes)?;
        out.write_all(b"\n")?;
        out.sync_all()?;
        drop(out);
        fs::rename(&tmp, path)
    })();
    result.map_err(|e| {
        let _ = fs::remove_file(&tmp);
        PrivateFileError::io("write", path, e)
    })
}

/// Reads `path` after [`check_file`] (and [`check_dir`] of its parent); `None`
/// when it does not exist. At most `limit` bytes are read; a longer file is an
/// error, so a corrupt or hostile file cannot exhaust memory.
pub(crate) fn read(path: &Path, limit: u64) -> Result<Option<Vec<u8>>, PrivateFileError> {
    use std::io::Read as _;
    if let Some(dir) = parent(path)
        && dir.is_dir()
    {
        check_dir(dir)?;
    }
    check_file(path)?;
    let file = match fs::File::open(path) {
        Ok(file) => file,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(PrivateFileError::io("read", path, e)),
    };
    let mut out = Vec::new();
    file.take(limit + 1)
        .read_to_end(&mut out)
        .map_err(|e| PrivateFileError::io("read", path, e))?;
    if out.len() as u64 > limit {
        return Err(PrivateFileError::io(
            "read",
            path,
            io::Error::new(
                io::ErrorKind::InvalidData,
                format!("the file is larger than {limit} bytes"),
            ),
        ));
    }
    Ok(Some(out))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(unix)]
    fn mode(path: &Path) -> u32 {
        use std::os::unix::fs::PermissionsExt;
        fs::metadata(path).unwrap().permissions().mode() & 0o777
    }

    #[test]
    fn writes_0600_in_a_new_0700_directory_and_reads_back() {
        let top = tempfile::tempdir().unwrap();
        let path = top.path().join("a").join("b").join("f.json");
        write(&path, b"one").unwrap();
        write(&path, b"two").unwrap();
        assert_eq!(read(&path, 100).unwrap().unwrap(), b"two\n");
        #[cfg(unix)]
        {
            assert_eq!(mode(&path), 0o600);
            assert_eq!(mode(path.parent().unwrap()), 0o700);
        }
        let leftovers: Vec<_> = fs::read_dir(path.parent().unwrap())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(leftovers.len(), 1, "{leftovers:?}");
        assert!(read(&top.path().join("missing"), 10).unwrap().is_none());
        assert!(read(&path, 2).is_err(), "the size limit holds");
    }

    #[cfg(unix)]
    #[test]
    fn refuses_a_0644_file_and_a_0777_directory() {
        use std::os::unix::fs::PermissionsExt;
        let top = tempfile::tempdir().unwrap();
        let dir = top.path().join("state");
        let path = dir.join("f.json");
        write(&path, b"x").unwrap();
        fs::set_permissions(&path, fs::Permissions::from_mode(0o644)).unwrap();
        let e = read(&path, 100).unwrap_err();
        assert!(e.to_string().contains("0644"), "{e}");
        assert!(e.to_string().contains("chmod 600"), "{e}");
        fs::set_permissions(&path, fs::Permissions::from_mode(0o600)).unwrap();
        fs::set_permissions(&dir, fs::Permissions::from_mode(0o777)).unwrap();
        let e = read(&path, 100).unwrap_err();
        assert!(e.to_string().contains("chmod 700"), "{e}");
        assert!(write(&path, b"y").is_err());
    }
}

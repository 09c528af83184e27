//! Private files, one rule for the workspace: directories are created 0700, files written 0600
//! through a fresh temporary file beside them (`tempfile`: a random name opened with `O_EXCL`, so a
//! symlink planted there is never followed) that is synced and renamed into place; a file other
//! users can read or change, or a directory they can change, is refused; a new file is never
//! created through a symlink ([`create_new`]).
//!
//! Its users: `sa360-video-sdk`'s video lockout `FileStore`, and `apictl`'s state directory, session
//! and credentials files.

#![warn(missing_docs)]

use std::fs;
use std::io::{self, Read as _, Write as _};
use std::path::{Path, PathBuf};

/// Why a file or directory is not private enough, or could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum PrivateFileError {
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
        /// "read or change" / "change files in".
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

/// Creates a new, empty file at `path` for writing (with the default mode), never through a
/// symlink: an entry already at `path` that is not a directory (a file left by a killed run, or a
/// symlink someone planted) is removed first (a symlink's target is left alone), then the file is
/// created with `create_new` (`O_EXCL`), which fails rather than follow a symlink that appeared in
/// between. The SDK's part files and write journals and apictl's rejected-rows files use it.
pub fn create_new(path: &Path) -> io::Result<fs::File> {
    match fs::symlink_metadata(path) {
        Ok(meta) if !meta.is_dir() => fs::remove_file(path)?,
        _ => {}
    }
    fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)
}

/// Creates `dir` and its missing parents with mode 0700 (on Unix), and refuses an existing `dir`
/// that other users can change: someone who can write the directory can replace the files in it.
pub fn ensure_dir(dir: &Path) -> Result<(), PrivateFileError> {
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
fn check_dir(dir: &Path) -> Result<(), PrivateFileError> {
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

/// Refuses an existing file that other users can read or write (mode & 0o077 on Unix). A
/// missing file is fine.
fn check_file(path: &Path) -> Result<(), PrivateFileError> {
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

/// Writes `bytes` and a final newline to `path` atomically: the parent directory is created 0700
/// (and checked), the bytes go to a new 0600 temporary file beside `path`, are synced, and the
/// file is renamed over `path`. Readers see the old or the new content, never a mix; an error
/// removes the temporary file, a crash leaves at most a stray one.
pub fn write(path: &Path, bytes: &[u8]) -> Result<(), PrivateFileError> {
    let dir = parent(path);
    if let Some(dir) = dir {
        ensure_dir(dir)?;
    }
    let fail = |e| PrivateFileError::io("write", path, e);
    let mut builder = tempfile::Builder::new();
    builder.prefix(".apictl-").suffix(".tmp");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        builder.permissions(fs::Permissions::from_mode(0o600));
    }
    let mut tmp = builder
        .tempfile_in(dir.unwrap_or(Path::new(".")))
        .map_err(fail)?;
    tmp.write_all(bytes).map_err(fail)?;
    tmp.write_all(b"\n").map_err(fail)?;
    tmp.as_file().sync_all().map_err(fail)?;
    tmp.persist(path).map_err(|e| fail(e.error))?;
    Ok(())
}

/// Reads `path` after refusing it (and its directory) when others can read or change it; `None`
/// when it does not exist. At most `limit` bytes are read; a longer file is an error, so a
/// corrupt or hostile file cannot exhaust memory.
pub fn read(path: &Path, limit: u64) -> Result<Option<Vec<u8>>, PrivateFileError> {
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

    #[cfg(unix)]
    #[test]
    fn a_symlink_at_the_file_is_replaced_not_followed() {
        let top = tempfile::tempdir().unwrap();
        let dir = top.path().join("state");
        ensure_dir(&dir).unwrap();
        let victim = top.path().join("victim");
        fs::write(&victim, "keep me").unwrap();
        let path = dir.join("video-session.json");
        std::os::unix::fs::symlink(&victim, &path).unwrap();
        write(&path, b"{}").unwrap();
        assert_eq!(fs::read_to_string(&victim).unwrap(), "keep me");
        assert!(
            !fs::symlink_metadata(&path)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert_eq!(fs::read(&path).unwrap(), b"{}\n");
        assert_eq!(mode(&path), 0o600);
    }
}

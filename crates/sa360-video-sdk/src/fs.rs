//! The one owner of "write `FILE.part`, then rename": a file that appears at
//! its path only whole.
//!
//! [`PartFile`] writes to `FILE.part` beside the target. [`PartFile::commit`]
//! flushes it to disk (`fsync`), renames it onto the target and syncs the
//! directory, so after a crash the target is either the old file or the whole
//! new one. Dropped without a commit (an error, a panic, a cancelled
//! future), it removes `FILE.part`.
//!
//! The ID-mapping download writes through it. Private to the crate: `apictl`
//! writes its own output with `tempfile`.
//!
//! Nothing here follows a symlink planted beside the target: the `.part`
//! file is created new ([`sa360_video_private_file::create_new`]: whatever sits at its name, a
//! leftover or a symlink, is removed first, and the create refuses to go
//! through one), and the rename replaces the target's directory entry, not
//! what it points to.

use std::fs::File;
use std::io::{self, Seek as _, SeekFrom, Write};
use std::path::{Path, PathBuf};

/// A file written at `FILE.part` and renamed onto `FILE` only by
/// [`commit`](Self::commit); removed when dropped without one.
#[derive(Debug)]
pub(crate) struct PartFile {
    target: PathBuf,
    part: PathBuf,
    /// `None` once committed.
    file: Option<File>,
}

impl PartFile {
    /// Creates `target.part`, new (see [`sa360_video_private_file::create_new`]).
    pub(crate) fn create(target: impl AsRef<Path>) -> io::Result<Self> {
        let target = target.as_ref().to_path_buf();
        let part = part_path(&target);
        let file = sa360_video_private_file::create_new(&part)?;
        Ok(Self {
            target,
            part,
            file: Some(file),
        })
    }

    /// The file that becomes the target.
    pub(crate) fn target(&self) -> &Path {
        &self.target
    }

    /// The `.part` file being written.
    pub(crate) fn part_path(&self) -> &Path {
        &self.part
    }

    /// The open `.part` file (for a writer of one's own, such as a
    /// `tokio::fs::File` made from a clone of it).
    pub(crate) fn file(&self) -> io::Result<&File> {
        self.file.as_ref().ok_or_else(committed)
    }

    /// Empties the `.part` file and writes from its start again.
    pub(crate) fn truncate(&mut self) -> io::Result<()> {
        let mut file = self.file()?;
        file.set_len(0)?;
        file.seek(SeekFrom::Start(0))?;
        Ok(())
    }

    /// Syncs the `.part` file, renames it onto the target and syncs the
    /// directory. On an error the `.part` file is removed.
    pub(crate) fn commit(mut self) -> io::Result<()> {
        let file = self.file.take().ok_or_else(committed)?;
        let done = (|| {
            let mut file = file;
            file.flush()?;
            file.sync_all()?;
            drop(file);
            std::fs::rename(&self.part, &self.target)?;
            if let Some(dir) = self.target.parent().filter(|d| !d.as_os_str().is_empty()) {
                // A directory sync makes the rename itself durable.
                File::open(dir)?.sync_all()?;
            }
            Ok(())
        })();
        if done.is_err() {
            let _ = std::fs::remove_file(&self.part);
        }
        done
    }
}

impl Write for PartFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.file()?.write(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.file()?.flush()
    }
}

impl Drop for PartFile {
    fn drop(&mut self) {
        if self.file.take().is_some() {
            let _ = std::fs::remove_file(&self.part);
        }
    }
}

fn committed() -> io::Error {
    io::Error::other("the part file was already committed")
}

/// `FILE.part` beside `FILE`.
fn part_path(target: &Path) -> PathBuf {
    let mut name = target
        .file_name()
        .map(|n| n.to_os_string())
        .unwrap_or_default();
    name.push(".part");
    target.with_file_name(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commit_replaces_the_target_and_truncate_starts_over() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("t.txt");
        std::fs::write(&target, "old").unwrap();
        let mut part = PartFile::create(&target).unwrap();
        part.write_all(b"first try").unwrap();
        assert_eq!(part.file().unwrap().metadata().unwrap().len(), 9);
        part.truncate().unwrap();
        assert_eq!(part.file().unwrap().metadata().unwrap().len(), 0);
        part.write_all(b"new").unwrap();
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "old");
        assert_eq!(part.part_path(), dir.path().join("t.txt.part"));
        part.commit().unwrap();
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "new");
        assert!(!dir.path().join("t.txt.part").exists());
    }

    #[cfg(unix)]
    #[test]
    fn a_symlink_planted_at_the_part_name_is_not_followed() {
        let dir = tempfile::tempdir().unwrap();
        let victim = dir.path().join("victim");
        std::fs::write(&victim, "keep me").unwrap();
        let target = dir.path().join("t.txt");
        std::os::unix::fs::symlink(&victim, dir.path().join("t.txt.part")).unwrap();
        let mut part = PartFile::create(&target).unwrap();
        part.write_all(b"new").unwrap();
        part.commit().unwrap();
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep me");
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "new");
        // A symlink that appears after the removal makes the create fail.
        let planted = dir.path().join("p");
        std::os::unix::fs::symlink(&victim, &planted).unwrap();
        let raced = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&planted);
        assert!(raced.is_err());
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep me");
    }

    #[test]
    fn a_failed_commit_removes_the_part_file() {
        let dir = tempfile::tempdir().unwrap();
        // The target is a non-empty directory: the rename fails.
        let target = dir.path().join("busy");
        std::fs::create_dir(&target).unwrap();
        std::fs::write(target.join("x"), "x").unwrap();
        let mut part = PartFile::create(&target).unwrap();
        part.write_all(b"data").unwrap();
        assert!(part.commit().is_err());
        assert!(!dir.path().join("busy.part").exists());
    }
}

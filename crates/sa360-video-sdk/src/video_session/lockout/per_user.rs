//! The default lockout store: one [`FileStore`] per user and host, at a
//! well-known path every application of the user (and `apictl`) shares.

use std::path::PathBuf;

use super::file_store::FileStore;
use crate::video_session::error::StoreError;

/// The directory of the default store under the per-user state directory.
const DIR: &str = "sa360-video-sdk";
/// The default store's file name.
const FILE: &str = "video-session-lockout.json";

impl FileStore {
    /// Where the default store keeps its file:
    /// `<per-user state directory>/sa360-video-sdk/video-session-lockout.json`, where
    /// the per-user state directory is
    ///
    /// | platform | directory |
    /// |---|---|
    /// | Linux and other Unix | `$XDG_STATE_HOME` (if absolute), else `$HOME/.local/state` |
    /// | macOS | `$HOME/Library/Application Support` |
    /// | Windows | `%LOCALAPPDATA%` (the Local AppData known folder) |
    ///
    /// (as the [`dirs`] crate finds them: its `state_dir`, else its
    /// `data_local_dir`). Every application of a user on a host, and
    /// `apictl`, then share one count per account, as the service keeps one
    /// count per account. Fails when the platform names no such directory (no
    /// home directory).
    pub fn default_location() -> Result<PathBuf, StoreError> {
        let base = dirs::state_dir()
            .or_else(dirs::data_local_dir)
            .ok_or_else(|| {
                StoreError::new(
                    "(the per-user state directory)",
                    "this user has no per-user state directory (no home directory, and XDG_STATE_HOME is not an absolute path)",
                )
            })?;
        Ok(base.join(DIR).join(FILE))
    }

    /// The default store: a [`FileStore`] at
    /// [`default_location`](Self::default_location), what a
    /// [`VideoSessionClient`](crate::video_session::VideoSessionClient) built
    /// without a store uses. Its directory is created (0700) and its lock file
    /// opened now, so a place that cannot be used (no home directory, a
    /// read-only file system, a directory other users can change) is an error
    /// here rather than at the first login.
    pub fn per_user() -> Result<FileStore, StoreError> {
        let store = FileStore::new(Self::default_location()?);
        store.open_lock_file()?;
        Ok(store)
    }
}

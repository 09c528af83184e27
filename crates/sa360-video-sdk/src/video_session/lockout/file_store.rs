//! A store in a JSON file shared by the processes of one host, under an OS
//! advisory lock.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use serde::{Deserialize, Serialize};

use super::policy::Limits;
use super::state::{AccountState, AccountView, AttemptEntry, AttemptId, Hold, Resolution};
use super::store::{LockoutStore, StoreFuture, unix_us};
use crate::video_session::credentials::AccountKey;
use crate::video_session::error::StoreError;
use sa360_video_private_file as private_file;

const FILE_FORMAT: &str = "facade.video_session.lockout/2";
const FILE_FORMAT_V1: &str = "facade.video_session.lockout/1";
/// The largest lockout file read (a few hundred bytes per account).
const MAX_FILE_BYTES: u64 = 16 * 1024 * 1024;
/// How long a step waits for another process's lock by default.
const DEFAULT_LOCK_TIMEOUT: Duration = Duration::from_secs(10);

/// A store in a JSON file, so a CLI or a restarted process keeps the count, and
/// the processes of one host share it.
///
/// Each step runs on a blocking thread (`spawn_blocking`, never on an async
/// worker): it takes an exclusive OS advisory lock (`flock` on Unix,
/// `LockFileEx` on Windows, through `fs4`) on `<path>.lock`, reads the file,
/// applies the step, and replaces the file atomically (a 0600 temporary file
/// renamed over it, through `sa360-video-private-file`). The kernel releases the
/// lock when its holder exits or is killed, so a crashed process never holds
/// up the next login; the lock file itself stays. A step that cannot get the
/// lock within the lock timeout (default 10 s) fails, and the login is not
/// sent.
///
/// Format (`format` names the version; every field is required, unknown
/// fields are refused):
///
/// ```json
/// {
///   "format": "facade.video_session.lockout/2",
///   "accounts": {
///     "<64 lower-case hex digits: the AccountKey>": {
///       "attempts": [
///         {"id": "<32 hex digits>", "started_unix_us": 1767225600000,
///          "failed_unix_us": 1767225600120, "until_unix_us": 1767226260120}
///       ],
///       "blocked_until_unix_us": null,
///       "paused_until_unix_us": null
///     }
///   }
/// }
/// ```
///
/// Accounts are named only by their [`AccountKey`] (a SHA-256 hash); the secret
/// key, user name and password are never written. A file of the previous
/// format (`…/1`) is converted on the next step. An unreadable, corrupt or
/// foreign file, or one that other users can read or change (or in a
/// directory they can write to), is an error, so logins are refused rather
/// than counted from zero; removing the file resets every count.
///
/// Times in the file are wall-clock microseconds from each process's
/// monotonic-anchored [`SystemClock`](crate::video_session::SystemClock);
/// entries dated further in the future than any step could write (a clock set
/// back between two runs) are clamped when read.
#[derive(Debug, Clone)]
pub struct FileStore {
    path: PathBuf,
    lock_path: PathBuf,
    lock_timeout: Duration,
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct StoreFile {
    format: String,
    accounts: BTreeMap<String, StoredAccount>,
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct StoredAccount {
    attempts: Vec<StoredAttempt>,
    blocked_until_unix_us: Option<u64>,
    paused_until_unix_us: Option<u64>,
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct StoredAttempt {
    id: String,
    started_unix_us: u64,
    failed_unix_us: Option<u64>,
    until_unix_us: u64,
}

/// Only to tell the format apart before reading the rest.
#[derive(Deserialize)]
struct FormatOnly {
    format: String,
}

/// The previous format: failure times and a block end.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct StoreFileV1 {
    #[allow(dead_code)]
    format: String,
    accounts: BTreeMap<String, StoredAccountV1>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct StoredAccountV1 {
    failures_unix_ms: Vec<u64>,
    #[serde(default)]
    blocked_until_unix_ms: Option<u64>,
}

type Accounts = BTreeMap<AccountKey, AccountState>;

impl FileStore {
    /// A store kept in the file at `path` (created on the first step that
    /// records something), locked through `<path>.lock`.
    pub fn new(path: impl Into<PathBuf>) -> Self {
        let path = path.into();
        let mut lock = path.clone().into_os_string();
        lock.push(".lock");
        Self {
            path,
            lock_path: PathBuf::from(lock),
            lock_timeout: DEFAULT_LOCK_TIMEOUT,
        }
    }

    /// How long a step waits for another process to release the lock (default
    /// 10 s) before failing.
    pub fn with_lock_timeout(mut self, timeout: Duration) -> Self {
        self.lock_timeout = timeout;
        self
    }

    /// The file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The lock file's path.
    pub fn lock_path(&self) -> &Path {
        &self.lock_path
    }

    fn error(&self, message: impl Into<String>) -> StoreError {
        StoreError::new(self.path.display().to_string(), message)
    }

    /// Runs `f` on the account under the lock, on a blocking thread.
    async fn step<F>(
        &self,
        key: AccountKey,
        now: SystemTime,
        limits: Limits,
        f: F,
    ) -> Result<AccountView, StoreError>
    where
        F: FnOnce(&mut AccountState, u64) -> AccountView + Send + 'static,
    {
        let store = self.clone();
        let task =
            tokio::task::spawn_blocking(move || store.locked_step(key, unix_us(now), &limits, f));
        match tokio::time::timeout(self.lock_timeout, task).await {
            Ok(Ok(result)) => result,
            Ok(Err(join)) => Err(self.error(format!("the store step failed: {join}"))),
            Err(_) => Err(self.error(format!(
                "timed out after {} s waiting for the lock on {} held by another process",
                self.lock_timeout.as_secs_f64(),
                self.lock_path.display()
            ))),
        }
    }

    /// Lock, read, apply, write; the lock is released when `lock` is dropped.
    fn locked_step<F>(
        &self,
        key: AccountKey,
        now: u64,
        limits: &Limits,
        f: F,
    ) -> Result<AccountView, StoreError>
    where
        F: FnOnce(&mut AccountState, u64) -> AccountView,
    {
        let lock = self.lock()?;
        let mut accounts = self.read(limits)?;
        let before = accounts.clone();
        let state = accounts.entry(key).or_default();
        let view = f(state, now);
        // Settle every account, so entries of accounts nobody uses any more
        // do not stay in the file forever.
        for state in accounts.values_mut() {
            state.settle(now, limits);
        }
        accounts.retain(|_, s| !s.is_clear());
        if accounts != before {
            self.write(&accounts)?;
        }
        drop(lock);
        Ok(view)
    }

    fn lock(&self) -> Result<fs::File, StoreError> {
        let file = self.open_lock_file()?;
        fs4::FileExt::lock(&file).map_err(|e| {
            StoreError::io(
                self.path.display().to_string(),
                format!("cannot lock {}", self.lock_path.display()),
                e,
            )
        })?;
        Ok(file)
    }

    /// Creates the directory (0700) and opens (or creates, 0600) the lock
    /// file, without locking it: what every step needs first.
    pub(super) fn open_lock_file(&self) -> Result<fs::File, StoreError> {
        if let Some(dir) = self.path.parent().filter(|p| !p.as_os_str().is_empty()) {
            private_file::ensure_dir(dir).map_err(|e| self.error(e.to_string()))?;
        }
        let mut options = fs::OpenOptions::new();
        options.read(true).write(true).create(true).truncate(false);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            options.mode(0o600);
        }
        options.open(&self.lock_path).map_err(|e| {
            StoreError::io(
                self.path.display().to_string(),
                format!("cannot open the lock file {}", self.lock_path.display()),
                e,
            )
        })
    }

    fn corrupt(&self, what: impl std::fmt::Display) -> StoreError {
        self.error(format!(
            "not a lockout store file ({what}); fix or remove it (removing forgets recent failed logins)"
        ))
    }

    fn read(&self, limits: &Limits) -> Result<Accounts, StoreError> {
        let bytes = private_file::read(&self.path, MAX_FILE_BYTES)
            .map_err(|e| self.error(e.to_string()))?;
        let Some(bytes) = bytes else {
            return Ok(Accounts::new());
        };
        let format: FormatOnly = serde_json::from_slice(&bytes).map_err(|e| self.corrupt(e))?;
        match format.format.as_str() {
            FILE_FORMAT => {}
            FILE_FORMAT_V1 => return self.read_v1(&bytes, limits),
            other => {
                return Err(self.error(format!(
                    "unknown format {other:?} (expected {FILE_FORMAT:?}); remove the file or use a matching version"
                )));
            }
        }
        let file: StoreFile = serde_json::from_slice(&bytes).map_err(|e| self.corrupt(e))?;
        let mut out = Accounts::new();
        for (name, stored) in file.accounts {
            let key = self.account_key(&name)?;
            let mut attempts = Vec::with_capacity(stored.attempts.len());
            for a in stored.attempts {
                let id =
                    a.id.parse::<AttemptId>()
                        .map_err(|e| self.corrupt(format!("account {name}: {e}")))?;
                attempts.push(AttemptEntry {
                    id,
                    started_us: a.started_unix_us,
                    failed_us: a.failed_unix_us,
                    until_us: a.until_unix_us,
                });
            }
            out.insert(
                key,
                AccountState {
                    attempts,
                    blocked_until_us: stored.blocked_until_unix_us,
                    paused_until_us: stored.paused_until_unix_us,
                },
            );
        }
        Ok(out)
    }

    /// An account name must be the canonical form (64 lower-case hex digits):
    /// any other spelling would silently start a new count.
    fn account_key(&self, name: &str) -> Result<AccountKey, StoreError> {
        name.parse::<AccountKey>()
            .map_err(|e| self.corrupt(format!("account {name:?}: {e}")))
    }

    /// The previous format: each failure counts for window + margin from its
    /// time, a block keeps its end plus the margin.
    fn read_v1(&self, bytes: &[u8], limits: &Limits) -> Result<Accounts, StoreError> {
        let file: StoreFileV1 = serde_json::from_slice(bytes).map_err(|e| self.corrupt(e))?;
        let failure_for = super::state::micros(limits.failure_for);
        let margin = super::state::micros(limits.margin);
        let mut out = Accounts::new();
        for (name, stored) in file.accounts {
            let key = self.account_key(&name)?;
            let attempts = stored
                .failures_unix_ms
                .iter()
                .map(|ms| ms.saturating_mul(1000))
                .map(|t| AttemptEntry {
                    id: AttemptId::random(),
                    started_us: t,
                    failed_us: Some(t),
                    until_us: t.saturating_add(failure_for),
                })
                .collect();
            out.insert(
                key,
                AccountState {
                    attempts,
                    blocked_until_us: stored
                        .blocked_until_unix_ms
                        .map(|u| u.saturating_mul(1000).saturating_add(margin)),
                    paused_until_us: None,
                },
            );
        }
        Ok(out)
    }

    fn write(&self, accounts: &Accounts) -> Result<(), StoreError> {
        let file = StoreFile {
            format: FILE_FORMAT.to_owned(),
            accounts: accounts
                .iter()
                .map(|(key, state)| {
                    (
                        key.to_string(),
                        StoredAccount {
                            attempts: state
                                .attempts
                                .iter()
                                .map(|a| StoredAttempt {
                                    id: a.id.to_string(),
                                    started_unix_us: a.started_us,
                                    failed_unix_us: a.failed_us,
                                    until_unix_us: a.until_us,
                                })
                                .collect(),
                            blocked_until_unix_us: state.blocked_until_us,
                            paused_until_unix_us: state.paused_until_us,
                        },
                    )
                })
                .collect(),
        };
        let text = serde_json::to_string_pretty(&file)
            .map_err(|e| self.error(format!("cannot encode: {e}")))?;
        private_file::write(&self.path, text.as_bytes()).map_err(|e| self.error(e.to_string()))
    }
}

super::store::state_steps!(FileStore, |s| s.path.display().to_string());

#[cfg(test)]
mod tests {
    use super::*;
    use crate::video_session::credentials::Credentials;
    use crate::video_session::lockout::policy::LockoutPolicy;
    use std::sync::Arc;
    use std::time::UNIX_EPOCH;

    fn key() -> AccountKey {
        Credentials::new("sk", "alice", "pw").unwrap().account_key()
    }

    fn limits() -> Limits {
        LockoutPolicy::SEED.limits(Duration::from_secs(30))
    }

    fn t0() -> SystemTime {
        UNIX_EPOCH + Duration::from_secs(1_700_000_000)
    }

    async fn fail(store: &FileStore, n: u128) -> AccountView {
        let id = AttemptId::from_u128(n);
        store.reserve(&key(), id, t0(), limits()).await.unwrap();
        store
            .resolve(&key(), id, Resolution::Failed, t0(), limits())
            .await
            .unwrap()
    }

    #[tokio::test]
    async fn keeps_only_hashes_with_mode_0600_and_no_lock_left_held() {
        let top = tempfile::tempdir().unwrap();
        let dir = top.path().join("state").join("apictl");
        let path = dir.join("lockout.json");
        let store = FileStore::new(&path);
        let creds = Credentials::new("sk-very-secret", "alice", "pw-very-secret").unwrap();
        let k = creds.account_key();
        let id = AttemptId::from_u128(7);
        store.reserve(&k, id, t0(), limits()).await.unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.contains(&k.to_string()));
        assert!(text.contains(FILE_FORMAT));
        for secret in ["sk-very-secret", "alice", "pw-very-secret"] {
            assert!(!text.contains(secret));
        }
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&path).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
            let mode = std::fs::metadata(&dir).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o700);
        }
        assert_eq!(
            FileStore::new(&path)
                .view(&k, t0(), limits())
                .await
                .unwrap()
                .counted,
            1
        );
        // The lock is free: a non-blocking attempt gets it at once.
        let lock = std::fs::File::open(store.lock_path()).unwrap();
        assert!(fs4::FileExt::try_lock(&lock).is_ok());
        drop(lock);
        store
            .resolve(&k, id, Resolution::NotCounted, t0(), limits())
            .await
            .unwrap();
        assert!(
            !std::fs::read_to_string(&path)
                .unwrap()
                .contains(&k.to_string())
        );
    }

    #[tokio::test]
    async fn corrupt_foreign_partial_or_upper_case_files_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("lockout.json");
        let store = FileStore::new(&path);
        let upper = key().to_string().to_uppercase();
        let cases = [
            "not json".to_owned(),
            r#"{"format":"other/9","accounts":{}}"#.to_owned(),
            // Well-formed but holding only the format: refused, not an empty count.
            format!(r#"{{"format":"{FILE_FORMAT}"}}"#),
            format!(
                r#"{{"format":"{FILE_FORMAT}","accounts":{{"{upper}":{{"attempts":[],"blocked_until_unix_us":null,"paused_until_unix_us":null}}}}}}"#
            ),
            format!(r#"{{"format":"{FILE_FORMAT}","accounts":{{}},"extra":1}}"#),
        ];
        for text in cases {
            private_file::write(&path, text.as_bytes()).unwrap();
            let e = store.view(&key(), t0(), limits()).await.unwrap_err();
            assert!(e.to_string().contains("lockout.json"), "{e}");
            let reserve = store
                .reserve(&key(), AttemptId::from_u128(1), t0(), limits())
                .await;
            assert!(reserve.is_err(), "{text}");
            assert_eq!(std::fs::read_to_string(&path).unwrap().trim(), text);
        }
    }

    #[cfg(unix)]
    #[tokio::test]
    async fn a_file_others_can_read_is_refused() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("lockout.json");
        let store = FileStore::new(&path);
        fail(&store, 1).await;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        let e = store.view(&key(), t0(), limits()).await.unwrap_err();
        assert!(e.to_string().contains("chmod 600"), "{e}");
    }

    #[tokio::test]
    async fn a_version_1_file_keeps_its_failures() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("lockout.json");
        let ms = unix_us(t0()) / 1000;
        let text = format!(
            r#"{{"format":"{FILE_FORMAT_V1}","accounts":{{"{}":{{"failures_unix_ms":[{ms},{ms},{ms},{ms},{ms}]}}}}}}"#,
            key()
        );
        private_file::write(&path, text.as_bytes()).unwrap();
        let store = FileStore::new(&path);
        let v = store
            .reserve(&key(), AttemptId::from_u128(1), t0(), limits())
            .await
            .unwrap();
        assert!(!v.reserved);
        assert_eq!(v.counted, 5);
    }

    #[tokio::test]
    async fn a_held_lock_times_out_without_blocking_the_runtime() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("lockout.json");
        let store = FileStore::new(&path).with_lock_timeout(Duration::from_millis(200));
        fail(&store, 1).await;
        let held = std::fs::File::open(store.lock_path()).unwrap();
        fs4::FileExt::lock(&held).unwrap();
        // A timer on the same current-thread runtime keeps ticking while the
        // step waits: the wait is not on this thread.
        let ticker = tokio::spawn(async {
            let mut n = 0;
            for _ in 0..5 {
                tokio::time::sleep(Duration::from_millis(10)).await;
                n += 1;
            }
            n
        });
        let e = store.view(&key(), t0(), limits()).await.unwrap_err();
        assert!(e.to_string().contains("timed out"), "{e}");
        assert_eq!(ticker.await.unwrap(), 5);
        drop(held);
        assert_eq!(store.view(&key(), t0(), limits()).await.unwrap().counted, 1);
    }

    /// Many stores (separate open file descriptions, as in separate processes)
    /// over one path: together they never reserve more than the budget.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn concurrent_stores_never_exceed_the_budget() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("lockout.json");
        let mut tasks = Vec::new();
        for i in 0..40u128 {
            let store = Arc::new(FileStore::new(&path));
            tasks.push(tokio::spawn(async move {
                store
                    .reserve(&key(), AttemptId::from_u128(i), t0(), limits())
                    .await
                    .unwrap()
                    .reserved
            }));
        }
        let mut reserved = 0;
        for t in tasks {
            reserved += u32::from(t.await.unwrap());
        }
        assert_eq!(reserved, 5);
    }
}

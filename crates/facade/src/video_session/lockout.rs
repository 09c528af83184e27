//! Lockout awareness: the facade never sends a login that could block an account.
//!
//! The service blocks an account for 10 minutes when more than 5 logins fail
//! within 10 minutes (VS-3), and answers every attempt during the block with 423
//! (VS-4). Real services often hide a block behind the generic credentials
//! error, so the [`LockoutGuard`] keeps its own count per [`AccountKey`]:
//!
//! - it remembers the failure times inside the window (10 minutes) and a known
//!   block end;
//! - an attempt is sent only if even its failure leaves at most 5 failures in
//!   the window, so the facade alone never causes the 6th; otherwise it is
//!   refused without a network call, with the time the oldest counted failure
//!   leaves the window;
//! - a 423 records a known block until `Retry-After`; every attempt before then
//!   is refused;
//! - more than 5 counted failures (possible only through unknown outcomes or
//!   other clients) are treated as a presumed block, lasting 10 minutes after the
//!   newest one;
//! - an attempt is recorded as a failure *before* it is sent and corrected when
//!   the answer arrives, so an attempt whose outcome is unknown (timeout,
//!   dropped connection, a cancelled future, a crashed process) stays counted;
//! - a wrong secret key or an inactive domain does not count (VS-3); a success
//!   clears the count;
//! - at most one attempt per account is in flight in a process (a per-account
//!   async mutex held from the check to the record); across processes sharing a
//!   [`FileStore`], the check-and-reserve is atomic under the store's lock file,
//!   so together they never exceed the budget either;
//! - it never retries a login.

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use serde::{Deserialize, Serialize};
use tokio::sync::OwnedMutexGuard;

use super::clock::{Clock, SystemClock, ceil_ms, from_unix_ms, plus, to_unix_ms};
use super::credentials::AccountKey;
use super::error::{Error, RefusalReason, StoreError};

/// The service's lockout rule. The default is the seed's: more than 5 failures in
/// 10 minutes block the account for 10 minutes.
///
/// Change it only when the service's rule changes; a looser rule than the
/// service's lets the facade block accounts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LockoutPolicy {
    /// Failures the service tolerates inside the window (the next one blocks).
    pub max_failures: u32,
    /// How long a failure counts.
    pub window: Duration,
    /// How long a block lasts.
    pub block: Duration,
}

impl LockoutPolicy {
    /// The seed's rule: 5 failures tolerated in 10 minutes, blocks of 10 minutes.
    pub const SEED: Self = Self {
        max_failures: 5,
        window: Duration::from_secs(600),
        block: Duration::from_secs(600),
    };
}

impl Default for LockoutPolicy {
    fn default() -> Self {
        Self::SEED
    }
}

/// What a store keeps per account.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AccountState {
    /// Times of counted failures (including attempts in flight or with an
    /// unknown outcome), oldest first. May hold entries that already left the
    /// window; the guard prunes them.
    pub failures: Vec<SystemTime>,
    /// End of a block the service reported.
    pub blocked_until: Option<SystemTime>,
}

impl AccountState {
    /// True when nothing is recorded (the store may forget the account).
    pub fn is_clear(&self) -> bool {
        self.failures.is_empty() && self.blocked_until.is_none()
    }

    /// Drops failures that left the window and a block that ended.
    fn prune(&mut self, now: SystemTime, policy: &LockoutPolicy) {
        self.failures.sort();
        self.failures.retain(|t| plus(*t, policy.window) > now);
        if self.blocked_until.is_some_and(|until| until <= now) {
            // The end of a block clears the count (VS-3).
            self.blocked_until = None;
            self.failures.clear();
        }
    }

    fn count(&self) -> u32 {
        u32::try_from(self.failures.len()).unwrap_or(u32::MAX)
    }

    /// Refusal for an attempt at `now`, assuming `self` is pruned.
    fn refusal(&self, policy: &LockoutPolicy) -> Option<(RefusalReason, SystemTime)> {
        if let Some(until) = self.blocked_until {
            return Some((RefusalReason::KnownBlock, until));
        }
        let n = self.failures.len();
        let max = usize::try_from(policy.max_failures).unwrap_or(usize::MAX);
        let newest = self.failures.last().copied()?;
        if n > max {
            // The service may have blocked at the failure that crossed; wait
            // as if the newest one did, and until all have left the window.
            let until = plus(newest, policy.block.max(policy.window));
            return Some((
                RefusalReason::PresumedBlock {
                    failures_in_window: self.count(),
                },
                until,
            ));
        }
        if n == max {
            // One more failure would be the blocking one: wait until the oldest
            // counted failure leaves the window.
            let oldest = self.failures.first().copied().unwrap_or(newest);
            return Some((
                RefusalReason::BudgetExhausted {
                    failures_in_window: self.count(),
                },
                plus(oldest, policy.window),
            ));
        }
        None
    }
}

/// Where the guard keeps [`AccountState`]s.
///
/// [`MemoryStore`] lasts as long as the process; [`FileStore`] survives restarts
/// and is shared by processes. An implementation must apply each
/// [`update`](LockoutStore::update) atomically with respect to other updates of
/// the same store (also from other processes, if it is shared).
pub trait LockoutStore: Send + Sync + fmt::Debug {
    /// Reads the state of `key` (empty if unknown), lets `f` change it, and saves
    /// the result (forgetting the account when it is [clear](AccountState::is_clear)).
    fn update(
        &self,
        key: &AccountKey,
        f: &mut dyn FnMut(&mut AccountState),
    ) -> Result<(), StoreError>;

    /// The state of `key` (empty if unknown).
    fn load(&self, key: &AccountKey) -> Result<AccountState, StoreError> {
        let mut out = AccountState::default();
        self.update(key, &mut |state| out = state.clone())?;
        Ok(out)
    }
}

/// A store in memory, the default: counts are lost when the process ends.
#[derive(Debug, Default)]
pub struct MemoryStore {
    accounts: Mutex<HashMap<AccountKey, AccountState>>,
}

impl MemoryStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }
}

impl LockoutStore for MemoryStore {
    fn update(
        &self,
        key: &AccountKey,
        f: &mut dyn FnMut(&mut AccountState),
    ) -> Result<(), StoreError> {
        let mut accounts = self.accounts.lock().unwrap_or_else(|p| p.into_inner());
        let mut state = accounts.get(key).cloned().unwrap_or_default();
        f(&mut state);
        if state.is_clear() {
            accounts.remove(key);
        } else {
            accounts.insert(*key, state);
        }
        Ok(())
    }
}

/// A store in a JSON file, so a CLI or a restarted process keeps the count, and
/// several processes share it.
///
/// Format (`format` names the version):
///
/// ```json
/// {
///   "format": "facade.video_session.lockout/1",
///   "accounts": {
///     "<64 hex digits: the AccountKey>": {
///       "failures_unix_ms": [1767225600000, 1767225630000],
///       "blocked_until_unix_ms": 1767226200000
///     }
///   }
/// }
/// ```
///
/// Accounts are named only by their [`AccountKey`] (a SHA-256 hash); the secret
/// key, user name and password are never written. Each update takes the lock
/// file `<path>.lock` (created exclusively; a lock older than 10 s is taken to
/// be left by a crashed process and removed), reads the file, and replaces it
/// atomically by writing `<path>.tmp-<pid>-<n>` and renaming it over `path`. On
/// Unix the file is created with mode 0600, and a missing parent directory
/// with mode 0700.
/// An unreadable or corrupt file is an error (logins are refused) rather than
/// an empty count; removing the file resets every count.
#[derive(Debug, Clone)]
pub struct FileStore {
    path: PathBuf,
    lock_path: PathBuf,
}

const FILE_FORMAT: &str = "facade.video_session.lockout/1";
const LOCK_STALE_AFTER: Duration = Duration::from_secs(10);
const LOCK_WAIT: Duration = Duration::from_secs(5);

#[derive(Debug, Default, Serialize, Deserialize)]
struct StoreFile {
    format: String,
    #[serde(default)]
    accounts: BTreeMap<String, StoredAccount>,
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct StoredAccount {
    #[serde(default)]
    failures_unix_ms: Vec<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    blocked_until_unix_ms: Option<u64>,
}

impl FileStore {
    /// A store kept in the file at `path` (created on the first failure).
    pub fn new(path: impl Into<PathBuf>) -> Self {
        let path = path.into();
        let mut lock = path.clone().into_os_string();
        lock.push(".lock");
        Self {
            path,
            lock_path: PathBuf::from(lock),
        }
    }

    /// The file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn location(&self) -> String {
        self.path.display().to_string()
    }

    /// Creates the parent directory (mode 0700 on Unix) if it is missing.
    fn ensure_parent(&self) -> Result<(), StoreError> {
        let Some(parent) = self.path.parent().filter(|p| !p.as_os_str().is_empty()) else {
            return Ok(());
        };
        if parent.is_dir() {
            return Ok(());
        }
        let mut builder = fs::DirBuilder::new();
        builder.recursive(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::DirBuilderExt;
            builder.mode(0o700);
        }
        builder.create(parent).map_err(|e| {
            StoreError::io(
                self.location(),
                format!("cannot create the directory {}", parent.display()),
                e,
            )
        })
    }

    fn lock(&self) -> Result<LockFile<'_>, StoreError> {
        self.ensure_parent()?;
        let start = std::time::Instant::now();
        loop {
            match fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(&self.lock_path)
            {
                Ok(_) => return Ok(LockFile(&self.lock_path)),
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
                    let stale = fs::metadata(&self.lock_path)
                        .and_then(|m| m.modified())
                        .ok()
                        .and_then(|m| m.elapsed().ok())
                        .is_some_and(|age| age > LOCK_STALE_AFTER);
                    if stale {
                        tracing::warn!(lock = %self.lock_path.display(), "removing a stale lockout store lock");
                        let _ = fs::remove_file(&self.lock_path);
                        continue;
                    }
                    if start.elapsed() > LOCK_WAIT {
                        return Err(StoreError::new(
                            self.location(),
                            format!(
                                "timed out waiting for the lock file {}; if no other process is logging in, remove it",
                                self.lock_path.display()
                            ),
                        ));
                    }
                    std::thread::sleep(Duration::from_millis(5));
                }
                Err(e) => {
                    return Err(StoreError::io(
                        self.location(),
                        format!("cannot create the lock file {}", self.lock_path.display()),
                        e,
                    ));
                }
            }
        }
    }

    fn read(&self) -> Result<StoreFile, StoreError> {
        let text = match fs::read_to_string(&self.path) {
            Ok(text) => text,
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                return Ok(StoreFile {
                    format: FILE_FORMAT.to_owned(),
                    accounts: BTreeMap::new(),
                });
            }
            Err(e) => return Err(StoreError::io(self.location(), "cannot read the file", e)),
        };
        let file: StoreFile = serde_json::from_str(&text).map_err(|e| {
            StoreError::new(
                self.location(),
                format!(
                    "not a lockout store file ({e}); fix or remove it (removing forgets recent failed logins)"
                ),
            )
        })?;
        if file.format != FILE_FORMAT {
            return Err(StoreError::new(
                self.location(),
                format!(
                    "unknown format {:?} (expected {FILE_FORMAT:?}); remove the file or use a matching version",
                    file.format
                ),
            ));
        }
        Ok(file)
    }

    fn write(&self, file: &StoreFile) -> Result<(), StoreError> {
        static COUNTER: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let n = COUNTER.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let mut tmp = self.path.clone().into_os_string();
        tmp.push(format!(".tmp-{}-{n}", std::process::id()));
        let tmp = PathBuf::from(tmp);
        let text = serde_json::to_string_pretty(file)
            .map_err(|e| StoreError::new(self.location(), format!("cannot encode: {e}")))?;
        let result = (|| {
            let mut options = fs::OpenOptions::new();
            options.write(true).create_new(true);
            #[cfg(unix)]
            {
                use std::os::unix::fs::OpenOptionsExt;
                options.mode(0o600);
            }
            let mut out = options.open(&tmp)?;
            out.write_all(text.as_bytes())?;
            out.write_all(b"\n")?;
            out.sync_all()?;
            drop(out);
            fs::rename(&tmp, &self.path)
        })();
        result.map_err(|e| {
            let _ = fs::remove_file(&tmp);
            StoreError::io(self.location(), "cannot write the file", e)
        })
    }
}

/// Removes the lock file when dropped.
struct LockFile<'a>(&'a Path);

impl Drop for LockFile<'_> {
    fn drop(&mut self) {
        let _ = fs::remove_file(self.0);
    }
}

impl LockoutStore for FileStore {
    fn update(
        &self,
        key: &AccountKey,
        f: &mut dyn FnMut(&mut AccountState),
    ) -> Result<(), StoreError> {
        let _lock = self.lock()?;
        let mut file = self.read()?;
        let name = key.to_string();
        let before = file.accounts.get(&name).map(|stored| AccountState {
            failures: stored
                .failures_unix_ms
                .iter()
                .map(|ms| from_unix_ms(*ms))
                .collect(),
            blocked_until: stored.blocked_until_unix_ms.map(from_unix_ms),
        });
        let mut state = before.clone().unwrap_or_default();
        f(&mut state);
        if before.as_ref() == Some(&state) || (before.is_none() && state.is_clear()) {
            return Ok(());
        }
        if state.is_clear() {
            file.accounts.remove(&name);
        } else {
            file.accounts.insert(
                name,
                StoredAccount {
                    failures_unix_ms: state.failures.iter().map(|t| to_unix_ms(*t)).collect(),
                    blocked_until_unix_ms: state.blocked_until.map(to_unix_ms),
                },
            );
        }
        self.write(&file)
    }
}

/// The lockout state of one account as the guard sees it now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LockoutStatus {
    /// Failures counted in the window (attempts in flight included).
    pub failures_in_window: u32,
    /// Attempts the guard would still send now (0 while refusing).
    pub remaining_attempts: u32,
    /// End of a block the service reported, if it has not ended.
    pub blocked_until: Option<SystemTime>,
    /// When the guard will send again; `None` when it would send now.
    pub retry_at: Option<SystemTime>,
}

/// Counts login failures per account and refuses logins that could block it.
///
/// One guard can serve several clients (share it in an `Arc`); the
/// [`VideoSessionClient`](super::VideoSessionClient) has one by default, with a
/// [`MemoryStore`] and the [`SystemClock`].
pub struct LockoutGuard {
    policy: LockoutPolicy,
    store: Arc<dyn LockoutStore>,
    clock: Arc<dyn Clock>,
    in_flight: Mutex<HashMap<AccountKey, Arc<tokio::sync::Mutex<()>>>>,
}

impl fmt::Debug for LockoutGuard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LockoutGuard")
            .field("policy", &self.policy)
            .field("store", &self.store)
            .field("clock", &self.clock)
            .finish_non_exhaustive()
    }
}

impl Default for LockoutGuard {
    fn default() -> Self {
        Self::new(Arc::new(MemoryStore::new()), Arc::new(SystemClock))
    }
}

impl LockoutGuard {
    /// A guard over `store`, reading time from `clock`, with the seed's policy.
    pub fn new(store: Arc<dyn LockoutStore>, clock: Arc<dyn Clock>) -> Self {
        Self {
            policy: LockoutPolicy::SEED,
            store,
            clock,
            in_flight: Mutex::new(HashMap::new()),
        }
    }

    /// Replaces the policy (see [`LockoutPolicy`] before doing so).
    pub fn with_policy(mut self, policy: LockoutPolicy) -> Self {
        self.policy = policy;
        self
    }

    /// The policy.
    pub fn policy(&self) -> &LockoutPolicy {
        &self.policy
    }

    /// The clock.
    pub fn clock(&self) -> &Arc<dyn Clock> {
        &self.clock
    }

    /// The store.
    pub fn store(&self) -> &Arc<dyn LockoutStore> {
        &self.store
    }

    /// What the guard would do for `key` now (reads the store, changes nothing).
    pub fn status(&self, key: &AccountKey) -> Result<LockoutStatus, Error> {
        let now = self.clock.now();
        let mut state = self.store.load(key)?;
        state.prune(now, &self.policy);
        Ok(self.status_of(&state))
    }

    fn status_of(&self, state: &AccountState) -> LockoutStatus {
        let refusal = state.refusal(&self.policy);
        LockoutStatus {
            failures_in_window: state.count(),
            remaining_attempts: match refusal {
                Some(_) => 0,
                None => self.policy.max_failures.saturating_sub(state.count()),
            },
            blocked_until: state.blocked_until,
            retry_at: refusal.map(|(_, at)| at),
        }
    }

    /// Waits for the account's turn, then either refuses or reserves one attempt
    /// (recorded as a failure until [`Attempt::resolve`] says otherwise).
    pub(crate) async fn begin(&self, key: AccountKey) -> Result<Attempt<'_>, Error> {
        let lock = {
            let mut map = self.in_flight.lock().unwrap_or_else(|p| p.into_inner());
            map.retain(|_, m| Arc::strong_count(m) > 1);
            Arc::clone(map.entry(key).or_default())
        };
        let permit = lock.lock_owned().await;
        let now = self.clock.now();
        let reserved_at = ceil_ms(now);
        let mut refused = None;
        self.store.update(&key, &mut |state| {
            state.prune(now, &self.policy);
            refused = state.refusal(&self.policy);
            if refused.is_none() {
                state.failures.push(reserved_at);
                state.failures.sort();
            }
        })?;
        if let Some((reason, retry_at)) = refused {
            let retry_after = retry_at.duration_since(now).unwrap_or_default();
            tracing::info!(
                account = %key.short(),
                %reason,
                retry_after_secs = retry_after.as_secs(),
                "login refused by the lockout guard; nothing sent"
            );
            return Err(Error::LockoutRefused {
                reason,
                retry_at,
                retry_after,
            });
        }
        Ok(Attempt {
            guard: self,
            key,
            reserved_at,
            _permit: permit,
        })
    }
}

/// How a login attempt ended, for the count.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Outcome {
    /// Logged in: clears the count.
    Succeeded,
    /// Wrong credentials, or an outcome that may have counted on the service.
    Failed,
    /// The service reported a block until the given time.
    Blocked(SystemTime),
    /// An answer that cannot have counted (wrong secret key, inactive domain,
    /// validation error): the reservation is withdrawn.
    NotCounted,
}

/// One reserved login attempt. Dropping it without [`Attempt::resolve`] leaves
/// the reservation counted as a failure (the outcome is unknown).
pub(crate) struct Attempt<'a> {
    guard: &'a LockoutGuard,
    key: AccountKey,
    reserved_at: SystemTime,
    _permit: OwnedMutexGuard<()>,
}

impl Attempt<'_> {
    /// The account this attempt is for.
    pub(crate) fn key(&self) -> &AccountKey {
        &self.key
    }

    /// Records the outcome and returns the account's status afterwards.
    pub(crate) fn resolve(self, outcome: Outcome) -> Result<LockoutStatus, StoreError> {
        let guard = self.guard;
        let now = guard.clock.now();
        let reserved_at = self.reserved_at;
        let mut status = None;
        guard.store.update(&self.key, &mut |state| {
            if let Some(i) = state.failures.iter().position(|t| *t == reserved_at) {
                state.failures.remove(i);
            }
            match outcome {
                Outcome::Succeeded => *state = AccountState::default(),
                Outcome::Failed => {
                    // Counted from the answer's arrival: never earlier than the
                    // service's own record, so it leaves our window last.
                    state.failures.push(ceil_ms(now).max(reserved_at));
                }
                Outcome::Blocked(until) => {
                    state.failures.clear();
                    state.blocked_until = Some(state.blocked_until.map_or(until, |u| u.max(until)));
                }
                Outcome::NotCounted => {}
            }
            state.prune(now, &guard.policy);
            status = Some(guard.status_of(state));
        })?;
        tracing::debug!(account = %self.key.short(), ?outcome, "login outcome recorded");
        Ok(status.unwrap_or(LockoutStatus {
            failures_in_window: 0,
            remaining_attempts: guard.policy.max_failures,
            blocked_until: None,
            retry_at: None,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::video_session::{Credentials, ManualClock};
    use std::time::UNIX_EPOCH;

    fn key() -> AccountKey {
        Credentials::new("sk", "alice", "pw").unwrap().account_key()
    }

    fn guard(clock: &ManualClock) -> LockoutGuard {
        LockoutGuard::new(Arc::new(MemoryStore::new()), Arc::new(clock.clone()))
    }

    fn start() -> SystemTime {
        UNIX_EPOCH + Duration::from_secs(1_700_000_000)
    }

    #[tokio::test]
    async fn five_failures_then_refusal_until_the_oldest_leaves() {
        let clock = ManualClock::new(start());
        let g = guard(&clock);
        for i in 0..5 {
            let a = g.begin(key()).await.unwrap();
            let s = a.resolve(Outcome::Failed).unwrap();
            assert_eq!(s.failures_in_window, i + 1);
            clock.advance(Duration::from_secs(10));
        }
        let Err(Error::LockoutRefused {
            reason, retry_at, ..
        }) = g.begin(key()).await
        else {
            panic!("expected a refusal")
        };
        assert_eq!(
            reason,
            RefusalReason::BudgetExhausted {
                failures_in_window: 5
            }
        );
        assert_eq!(retry_at, start() + Duration::from_secs(600));
        clock.set(retry_at - Duration::from_millis(1));
        assert!(g.begin(key()).await.is_err());
        clock.set(retry_at);
        let a = g.begin(key()).await.unwrap();
        assert_eq!(a.resolve(Outcome::Succeeded).unwrap().failures_in_window, 0);
        assert!(g.store().load(&key()).unwrap().is_clear());
    }

    #[tokio::test]
    async fn not_counted_withdraws_and_dropped_attempt_counts() {
        let clock = ManualClock::new(start());
        let g = guard(&clock);
        let a = g.begin(key()).await.unwrap();
        assert_eq!(
            a.resolve(Outcome::NotCounted).unwrap().failures_in_window,
            0
        );
        drop(g.begin(key()).await.unwrap());
        assert_eq!(g.status(&key()).unwrap().failures_in_window, 1);
    }

    #[tokio::test]
    async fn known_block_refuses_until_it_ends_and_then_clears() {
        let clock = ManualClock::new(start());
        let g = guard(&clock);
        let until = start() + Duration::from_secs(300);
        g.begin(key())
            .await
            .unwrap()
            .resolve(Outcome::Blocked(until))
            .unwrap();
        let Err(Error::LockoutRefused {
            reason, retry_at, ..
        }) = g.begin(key()).await
        else {
            panic!("expected a refusal")
        };
        assert_eq!((reason, retry_at), (RefusalReason::KnownBlock, until));
        clock.set(until);
        let s = g.status(&key()).unwrap();
        assert_eq!((s.failures_in_window, s.remaining_attempts), (0, 5));
    }

    #[tokio::test]
    async fn more_failures_than_allowed_presume_a_block() {
        let clock = ManualClock::new(start());
        let g = guard(&clock);
        g.store()
            .update(&key(), &mut |s| {
                s.failures = (0..6).map(|i| start() + Duration::from_secs(i)).collect()
            })
            .unwrap();
        let Err(Error::LockoutRefused {
            reason, retry_at, ..
        }) = g.begin(key()).await
        else {
            panic!("expected a refusal")
        };
        assert_eq!(
            reason,
            RefusalReason::PresumedBlock {
                failures_in_window: 6
            }
        );
        assert_eq!(retry_at, start() + Duration::from_secs(605));
    }

    /// The service's rule (VS-3/VS-4), as a model.
    #[derive(Default)]
    struct ModelServer {
        failures: Vec<SystemTime>,
        blocked_until: Option<SystemTime>,
        ever_blocked: bool,
    }

    impl ModelServer {
        fn count(&mut self, now: SystemTime) -> usize {
            self.failures
                .retain(|t| *t + Duration::from_secs(600) > now);
            self.failures.len()
        }

        fn login(&mut self, now: SystemTime, right: bool) -> Outcome {
            if let Some(until) = self.blocked_until {
                if until > now {
                    return Outcome::Blocked(until);
                }
                self.blocked_until = None;
                self.failures.clear();
            }
            self.count(now);
            if right {
                self.failures.clear();
                return Outcome::Succeeded;
            }
            self.failures.push(now);
            if self.failures.len() > 5 {
                self.failures.clear();
                let until = now + Duration::from_secs(600);
                self.blocked_until = Some(until);
                self.ever_blocked = true;
                return Outcome::Blocked(until);
            }
            Outcome::Failed
        }
    }

    #[derive(Debug, Clone, Copy)]
    enum Op {
        Right,
        Wrong,
        /// A wrong attempt whose answer is lost (timeout): the guard never hears.
        WrongLost,
        /// A right attempt whose answer is lost.
        RightLost,
    }

    fn op() -> impl proptest::strategy::Strategy<Value = Op> {
        use proptest::prelude::*;
        prop_oneof![
            2 => Just(Op::Right),
            8 => Just(Op::Wrong),
            1 => Just(Op::WrongLost),
            1 => Just(Op::RightLost),
        ]
    }

    proptest::proptest! {
        /// Whatever the sequence of attempts and pauses, the model service never
        /// blocks the account; without lost answers the guard refuses exactly when
        /// the service counts 5 failures in the window.
        #[test]
        fn guard_never_lets_the_service_block(
            ops in proptest::collection::vec((0u64..400, op()), 1..60)
        ) {
            let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
            rt.block_on(async {
                let clock = ManualClock::new(start());
                let g = guard(&clock);
                let mut server = ModelServer::default();
                let mut lost = false;
                for (pause, op) in ops {
                    clock.advance(Duration::from_secs(pause));
                    let now = clock.now();
                    let server_count = server.count(now);
                    match g.begin(key()).await {
                        Err(Error::LockoutRefused { retry_at, .. }) => {
                            assert!(retry_at > now);
                            if !lost {
                                assert_eq!(server_count, 5, "refused while the service counts {server_count}");
                            }
                        }
                        Err(e) => panic!("{e}"),
                        Ok(attempt) => {
                            if !lost {
                                assert!(server_count < 5);
                            }
                            let right = matches!(op, Op::Right | Op::RightLost);
                            let outcome = server.login(now, right);
                            if matches!(op, Op::WrongLost | Op::RightLost) {
                                lost = true;
                                drop(attempt);
                            } else {
                                attempt.resolve(outcome).unwrap();
                            }
                        }
                    }
                    assert!(!server.ever_blocked, "the service blocked the account");
                }
            });
        }
    }

    /// Two guards over two `FileStore`s of one path stand for two processes: their
    /// concurrent attempts together never exceed the budget.
    #[test]
    fn two_processes_sharing_a_file_never_exceed_the_budget() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("lockout.json");
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .build()
            .unwrap();
        let sent = rt.block_on(async {
            let guards: Vec<Arc<LockoutGuard>> = (0..2)
                .map(|_| {
                    Arc::new(LockoutGuard::new(
                        Arc::new(FileStore::new(&path)),
                        Arc::new(SystemClock),
                    ))
                })
                .collect();
            let mut tasks = Vec::new();
            for i in 0..40 {
                let g = Arc::clone(&guards[i % 2]);
                tasks.push(tokio::spawn(async move {
                    match g.begin(key()).await {
                        Ok(a) => {
                            tokio::task::yield_now().await;
                            a.resolve(Outcome::Failed).unwrap();
                            1
                        }
                        Err(Error::LockoutRefused { .. }) => 0,
                        Err(e) => panic!("{e}"),
                    }
                }));
            }
            let mut sent = 0;
            for t in tasks {
                sent += t.await.unwrap();
            }
            sent
        });
        assert_eq!(sent, 5);
        let state = FileStore::new(&path).load(&key()).unwrap();
        assert_eq!(state.failures.len(), 5);
    }

    #[test]
    fn file_store_keeps_only_hashes_with_mode_0600() {
        let top = tempfile::tempdir().unwrap();
        let dir = top.path().join("state").join("apictl");
        let path = dir.join("lockout.json");
        let store = FileStore::new(&path);
        let creds = Credentials::new("sk-very-secret", "alice", "pw-very-secret").unwrap();
        let k = creds.account_key();
        store.update(&k, &mut |s| s.failures.push(start())).unwrap();
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
            FileStore::new(&path).load(&k).unwrap().failures,
            vec![start()]
        );
        assert!(!dir.join("lockout.json.lock").exists());
        // Clearing the account removes it from the file.
        store
            .update(&k, &mut |s| *s = AccountState::default())
            .unwrap();
        assert!(
            !std::fs::read_to_string(&path)
                .unwrap()
                .contains(&k.to_string())
        );
    }

    #[test]
    fn corrupt_or_foreign_file_is_an_error_naming_the_path() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("lockout.json");
        std::fs::write(&path, "not json").unwrap();
        let e = FileStore::new(&path).load(&key()).unwrap_err();
        assert!(e.to_string().contains("lockout.json"), "{e}");
        assert!(e.to_string().contains("remove"), "{e}");
        std::fs::write(&path, r#"{"format":"other/9","accounts":{}}"#).unwrap();
        assert!(FileStore::new(&path).load(&key()).is_err());
    }

    #[test]
    fn stale_lock_file_is_removed() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("lockout.json");
        let lock = dir.path().join("lockout.json.lock");
        let old = std::fs::File::create(&lock).unwrap();
        old.set_modified(SystemTime::now() - Duration::from_secs(60))
            .unwrap();
        drop(old);
        FileStore::new(&path)
            .update(&key(), &mut |s| s.failures.push(start()))
            .unwrap();
        assert!(!lock.exists());
    }
}

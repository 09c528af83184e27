//! The store trait (async, atomic steps) and the in-memory store.

use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use futures::future::BoxFuture;

use super::policy::Limits;
use super::state::{AccountState, AccountView, AttemptId, Hold, Resolution};
use crate::video_session::credentials::AccountKey;
use crate::video_session::error::StoreError;

/// The future every store step returns.
pub type StoreFuture<'a, T> = BoxFuture<'a, Result<T, StoreError>>;

/// Where the guard keeps the count of each account.
///
/// Each method is one atomic step on one account (see
/// [`AccountState`]'s methods for what each step does): an implementation
/// must apply it as a whole with respect to every other step on the same
/// account, also from other processes or hosts if it is shared. `now` is the
/// caller's clock ([`Clock::now`](crate::video_session::Clock::now)); a shared
/// store may use its own single clock instead (the `RedisStore` uses the
/// server's `TIME`), which is why results are durations from the store's now.
///
/// A store that cannot run a step returns a [`StoreError`]; the guard then
/// sends nothing (it fails closed).
pub trait LockoutStore: Send + Sync + fmt::Debug {
    /// Refuses, or reserves attempt `id` (checking the budget and recording
    /// the attempt in one step).
    fn reserve<'a>(
        &'a self,
        key: &'a AccountKey,
        id: AttemptId,
        now: SystemTime,
        limits: Limits,
    ) -> StoreFuture<'a, AccountView>;

    /// Records how attempt `id` ended.
    fn resolve<'a>(
        &'a self,
        key: &'a AccountKey,
        id: AttemptId,
        resolution: Resolution,
        now: SystemTime,
        limits: Limits,
    ) -> StoreFuture<'a, AccountView>;

    /// Records a block (423) or a pause (429) lasting `wait` from now, reported
    /// in the answer to attempt `id`.
    fn record_block<'a>(
        &'a self,
        key: &'a AccountKey,
        id: AttemptId,
        hold: Hold,
        wait: Duration,
        now: SystemTime,
        limits: Limits,
    ) -> StoreFuture<'a, AccountView>;

    /// The account's count now, changing nothing (expired entries may be
    /// dropped).
    fn view<'a>(
        &'a self,
        key: &'a AccountKey,
        now: SystemTime,
        limits: Limits,
    ) -> StoreFuture<'a, AccountView>;

    /// Where the store keeps its data (a path, a Redis URL without password),
    /// for messages.
    fn location(&self) -> String;
}

/// Microseconds since the Unix epoch (0 before it, saturating).
pub(crate) fn unix_us(t: SystemTime) -> u64 {
    t.duration_since(UNIX_EPOCH)
        .map(|d| u64::try_from(d.as_micros()).unwrap_or(u64::MAX))
        .unwrap_or(0)
}

/// A store in memory: counts last as long as the process, and no longer.
///
/// **It forgets every count when the process ends**: a program restarted
/// within the window (10 minutes) starts from zero, and its logins together
/// with the previous run's can block the account. It is therefore never the
/// default (that is [`FileStore::per_user`](super::FileStore::per_user)); name
/// it only where that is acceptable (tests, a process that runs once).
/// Processes and replicas do not share it either: use a
/// [`FileStore`](super::FileStore) (one host) or a `RedisStore` (feature
/// `redis`, several hosts) for them.
#[derive(Debug, Default)]
pub struct MemoryStore {
    accounts: Mutex<HashMap<AccountKey, AccountState>>,
}

impl MemoryStore {
    /// A new empty store (its own count, separate from [`shared`](Self::shared)).
    pub fn new() -> Self {
        Self::default()
    }

    /// One process-wide store, for clients built per request or per task
    /// that should share one count in memory (pass it to
    /// [`lockout_store`](crate::video_session::VideoSessionClientBuilder::lockout_store)).
    pub fn shared() -> Arc<MemoryStore> {
        static SHARED: OnceLock<Arc<MemoryStore>> = OnceLock::new();
        Arc::clone(SHARED.get_or_init(|| Arc::new(MemoryStore::new())))
    }

    /// Runs one step on `key` under the store's mutex.
    async fn step(
        &self,
        key: AccountKey,
        now: SystemTime,
        _limits: Limits,
        f: impl FnOnce(&mut AccountState, u64) -> AccountView,
    ) -> Result<AccountView, StoreError> {
        let mut accounts = self.accounts.lock().unwrap_or_else(|p| p.into_inner());
        let state = accounts.entry(key).or_default();
        let view = f(state, unix_us(now));
        if state.is_clear() {
            accounts.remove(&key);
        }
        Ok(view)
    }
}

/// `impl LockoutStore` for a store with `async fn step(&self, key, now, limits, f)` that applies
/// `f(state, now in µs)` to the account's [`AccountState`] as one atomic step (the memory and
/// file stores); `|s| location` is the store's [`location`](LockoutStore::location).
macro_rules! state_steps {
    ($store:ty, |$s:ident| $location:expr) => {
        impl LockoutStore for $store {
            fn reserve<'a>(
                &'a self,
                key: &'a AccountKey,
                id: AttemptId,
                now: SystemTime,
                limits: Limits,
            ) -> StoreFuture<'a, AccountView> {
                Box::pin(self.step(*key, now, limits, move |s, now| s.reserve(id, now, &limits)))
            }

            fn resolve<'a>(
                &'a self,
                key: &'a AccountKey,
                id: AttemptId,
                resolution: Resolution,
                now: SystemTime,
                limits: Limits,
            ) -> StoreFuture<'a, AccountView> {
                Box::pin(self.step(*key, now, limits, move |s, now| {
                    s.resolve(id, resolution, now, &limits)
                }))
            }

            fn record_block<'a>(
                &'a self,
                key: &'a AccountKey,
                id: AttemptId,
                hold: Hold,
                wait: Duration,
                now: SystemTime,
                limits: Limits,
            ) -> StoreFuture<'a, AccountView> {
                Box::pin(self.step(*key, now, limits, move |s, now| {
                    s.hold(id, hold, wait, now, &limits)
                }))
            }

            fn view<'a>(
                &'a self,
                key: &'a AccountKey,
                now: SystemTime,
                limits: Limits,
            ) -> StoreFuture<'a, AccountView> {
                Box::pin(self.step(*key, now, limits, move |s, now| {
                    s.settle(now, &limits);
                    s.view(now, &limits)
                }))
            }

            fn location(&self) -> String {
                let $s = self;
                $location
            }
        }
    };
}
pub(crate) use state_steps;

state_steps!(MemoryStore, |_s| "memory".to_owned());

#[cfg(test)]
mod tests {
    use super::*;
    use crate::video_session::credentials::Credentials;
    use crate::video_session::lockout::policy::LockoutPolicy;

    fn key() -> AccountKey {
        Credentials::new("sk", "alice", "pw").unwrap().account_key()
    }

    #[tokio::test]
    async fn steps_apply_and_a_clear_account_is_forgotten() {
        let store = MemoryStore::new();
        let limits = LockoutPolicy::SEED.limits(Duration::from_secs(30));
        let now = UNIX_EPOCH + Duration::from_secs(1_000);
        let id = AttemptId::from_u128(1);
        let v = store.reserve(&key(), id, now, limits).await.unwrap();
        assert!(v.reserved);
        assert_eq!(store.view(&key(), now, limits).await.unwrap().counted, 1);
        store
            .resolve(&key(), id, Resolution::NotCounted, now, limits)
            .await
            .unwrap();
        assert!(store.accounts.lock().unwrap().is_empty());
    }

    #[test]
    fn shared_is_one_store() {
        assert!(Arc::ptr_eq(&MemoryStore::shared(), &MemoryStore::shared()));
    }
}

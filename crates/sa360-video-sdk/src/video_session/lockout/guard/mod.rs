//! The guard: reserves an attempt before a login is sent, and records how it
//! ended.

use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use tokio::sync::OwnedMutexGuard;

use super::policy::{Limits, LockoutPolicy, check_span};
use super::state::{AccountView, AttemptId, Hold, Resolution};
use super::store::LockoutStore;
use crate::video_session::clock::{Clock, format_utc, plus};
use crate::video_session::credentials::AccountKey;
use crate::video_session::error::{Error, RefusalReason, StoreError, StoreStep};

/// The lockout state of one account as the guard sees it now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LockoutStatus {
    /// Attempts counted (failed, in flight, or with an unknown outcome).
    pub failures_in_window: u32,
    /// Attempts the guard would still send now (0 while refusing).
    pub remaining_attempts: u32,
    /// End of a block the service reported (margin included), if it has not ended.
    pub blocked_until: Option<SystemTime>,
    /// When the guard will send again; `None` when it would send now.
    pub retry_at: Option<SystemTime>,
    /// Why it refuses now, if it does.
    pub refusal: Option<RefusalReason>,
}

/// Counts login attempts per account and refuses logins that could block it.
///
/// One guard can serve several clients (share it in an `Arc`). A
/// [`VideoSessionClient`](crate::video_session::VideoSessionClient) built
/// without a guard or store gets one over the per-user default
/// [`FileStore::per_user`](super::FileStore::per_user), with the
/// [`SystemClock`](crate::video_session::SystemClock). There is no
/// `Default`: a guard names its store, so none forgets its count by accident.
pub struct LockoutGuard {
    policy: LockoutPolicy,
    attempt_timeout: Duration,
    /// `policy.limits(attempt_timeout)`, computed once (both are fixed once built).
    limits: Limits,
    store: Arc<dyn LockoutStore>,
    clock: Arc<dyn Clock>,
    in_flight: Mutex<HashMap<AccountKey, Arc<tokio::sync::Mutex<()>>>>,
    /// Blocks the service reported that the store could not record: this
    /// process still honours them.
    unrecorded_blocks: Mutex<HashMap<AccountKey, SystemTime>>,
}

impl fmt::Debug for LockoutGuard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LockoutGuard")
            .field("policy", &self.policy)
            .field("attempt_timeout", &self.attempt_timeout)
            .field("store", &self.store)
            .field("clock", &self.clock)
            .finish_non_exhaustive()
    }
}

/// Builds a [`LockoutGuard`]; see [`LockoutGuard::builder`].
#[derive(Debug)]
pub struct LockoutGuardBuilder {
    guard: LockoutGuard,
}

impl LockoutGuardBuilder {
    /// The service's lockout rule and safety margin (default
    /// [`LockoutPolicy::SEED`]; validated by [`build`](Self::build)).
    pub fn policy(mut self, policy: LockoutPolicy) -> Self {
        self.guard.policy = policy;
        self
    }

    /// The longest a login attempt can take (the HTTP client's total
    /// timeout): an attempt without an answer counts from its start for this
    /// long plus the window and the margin. 1 ms to one day (checked by
    /// [`build`](Self::build)). Default [`DEFAULT_ATTEMPT_TIMEOUT`].
    pub fn attempt_timeout(mut self, timeout: Duration) -> Self {
        self.guard.attempt_timeout = timeout;
        self
    }

    /// The guard. Fails with an [`Error::Validation`] naming the setting
    /// (`max_failures`, `window`, ..., `attempt_timeout`) when one is out of range.
    pub fn build(self) -> Result<LockoutGuard, Error> {
        self.guard.policy.validate()?;
        check_span("attempt_timeout", self.guard.attempt_timeout)?;
        let mut guard = self.guard;
        guard.limits = guard.policy.limits(guard.attempt_timeout);
        Ok(guard)
    }
}

/// The attempt timeout a guard assumes until told otherwise: the default
/// [`HttpOptions::timeout`](crate::http::HttpOptions::timeout).
pub const DEFAULT_ATTEMPT_TIMEOUT: Duration = Duration::from_secs(30);

impl LockoutGuard {
    /// A guard over `store`, reading time from `clock`, with the service document's policy
    /// and an attempt timeout of 30 s (the default HTTP timeout).
    pub fn new(store: Arc<dyn LockoutStore>, clock: Arc<dyn Clock>) -> Self {
        Self {
            policy: LockoutPolicy::SEED,
            attempt_timeout: DEFAULT_ATTEMPT_TIMEOUT,
            limits: LockoutPolicy::SEED.limits(DEFAULT_ATTEMPT_TIMEOUT),
            store,
            clock,
            in_flight: Mutex::new(HashMap::new()),
            unrecorded_blocks: Mutex::new(HashMap::new()),
        }
    }

    /// A builder for a guard over `store`, reading time from `clock`, to set
    /// its [`policy`](LockoutGuardBuilder::policy) and
    /// [`attempt_timeout`](LockoutGuardBuilder::attempt_timeout).
    pub fn builder(store: Arc<dyn LockoutStore>, clock: Arc<dyn Clock>) -> LockoutGuardBuilder {
        LockoutGuardBuilder {
            guard: Self::new(store, clock),
        }
    }

    /// The policy.
    pub fn policy(&self) -> &LockoutPolicy {
        &self.policy
    }

    /// The attempt timeout.
    pub fn attempt_timeout(&self) -> Duration {
        self.attempt_timeout
    }

    /// The clock.
    pub fn clock(&self) -> &Arc<dyn Clock> {
        &self.clock
    }

    /// The store.
    pub fn store(&self) -> &Arc<dyn LockoutStore> {
        &self.store
    }

    fn limits(&self) -> Limits {
        self.limits
    }

    /// What the guard would do for `key` now (reads the store, sends nothing).
    pub async fn status(&self, key: &AccountKey) -> Result<LockoutStatus, StoreError> {
        let now = self.clock.now();
        let view = self.store.view(key, now, self.limits()).await?;
        Ok(self.status_of(&view, now))
    }

    fn status_of(&self, view: &AccountView, now: SystemTime) -> LockoutStatus {
        let refusal = view.refusal.map(|(r, wait)| (r, plus(now, wait)));
        LockoutStatus {
            failures_in_window: view.counted,
            remaining_attempts: view.remaining(&self.limits()),
            blocked_until: view.blocked_for.map(|d| plus(now, d)),
            retry_at: refusal.map(|(_, at)| at),
            refusal: refusal.map(|(r, _)| r),
        }
    }

    fn refused(
        &self,
        key: &AccountKey,
        reason: RefusalReason,
        retry_at: SystemTime,
        now: SystemTime,
    ) -> Error {
        let retry_after = retry_at.duration_since(now).unwrap_or_default();
        tracing::info!(
            account = %key.short(),
            %reason,
            retry_after_secs = retry_after.as_secs(),
            "login refused by the lockout guard; nothing sent"
        );
        Error::LockoutRefused {
            reason,
            retry_at,
            retry_after,
        }
    }

    /// Waits for the account's turn in this process, then either refuses or
    /// reserves one attempt in the store (counted as unknown until
    /// [`Attempt::resolve`] says otherwise). A store error refuses too.
    pub(crate) async fn begin(&self, key: AccountKey) -> Result<Attempt<'_>, Error> {
        let lock = {
            let mut map = self.in_flight.lock().unwrap_or_else(|p| p.into_inner());
            // Entries no attempt holds are dropped, but this account's is kept for reuse: one
            // allocation per account, not per login.
            map.retain(|k, m| *k == key || Arc::strong_count(m) > 1);
            Arc::clone(map.entry(key).or_default())
        };
        // Uncontended (the usual case): no acquire future to poll.
        let permit = match Arc::clone(&lock).try_lock_owned() {
            Ok(permit) => permit,
            Err(_) => lock.lock_owned().await,
        };
        let now = self.clock.now();
        if let Some(until) = self.unrecorded_block(&key, now) {
            return Err(self.refused(&key, RefusalReason::KnownBlock, until, now));
        }
        let id = AttemptId::random();
        let view = self
            .store
            .reserve(&key, id, now, self.limits())
            .await
            .map_err(|e| e.at(StoreStep::Reserve))?;
        if !view.reserved {
            let window = self.policy.window;
            let (reason, wait) = view.refusal.unwrap_or((
                RefusalReason::BudgetExhausted {
                    failures_in_window: view.counted,
                    window,
                },
                window,
            ));
            return Err(self.refused(&key, reason, plus(now, wait), now));
        }
        Ok(Attempt {
            guard: self,
            key,
            id,
            counted: view.counted,
            started: now,
            _permit: permit,
        })
    }

    fn unrecorded_block(&self, key: &AccountKey, now: SystemTime) -> Option<SystemTime> {
        let mut blocks = self
            .unrecorded_blocks
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        blocks.retain(|_, until| *until > now);
        blocks.get(key).copied()
    }
}

/// How a login attempt ended, for the count.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Outcome {
    /// Logged in.
    Succeeded,
    /// A failure answer (wrong credentials, or an answer that may have counted).
    Failed,
    /// No answer: the service may count it whenever it processes it.
    Unknown,
    /// The service reported a block lasting this long from now.
    Blocked(Duration),
    /// The service asked to wait this long (429) and did not process the login.
    RateLimited(Duration),
    /// An answer that cannot have counted (wrong secret key, inactive domain,
    /// validation error, not sent at all).
    NotCounted,
}

/// One reserved login attempt. Dropping it without [`Attempt::resolve`] (a
/// cancelled future) leaves the reservation counted as unknown.
pub(crate) struct Attempt<'a> {
    guard: &'a LockoutGuard,
    key: AccountKey,
    id: AttemptId,
    counted: u32,
    /// When it was reserved (the guard's clock): its reservation counts from
    /// then for the limits' `unknown_for`.
    started: SystemTime,
    _permit: OwnedMutexGuard<()>,
}

impl Attempt<'_> {
    /// The account this attempt is for.
    pub(crate) fn key(&self) -> &AccountKey {
        &self.key
    }

    /// Attempts counted when this one was reserved (itself included).
    pub(crate) fn counted_at_reservation(&self) -> u32 {
        self.counted
    }

    /// Records the outcome and returns the account's status afterwards. When
    /// the store fails, a reported block is still honoured by this process,
    /// and the reservation stays counted in the store as unknown; the error
    /// ([`StoreStep::Record`]) says that the login was sent and what the guard
    /// assumes, and is logged as a warning.
    pub(crate) async fn resolve(self, outcome: Outcome) -> Result<LockoutStatus, StoreError> {
        let guard = self.guard;
        let store = &guard.store;
        let limits = guard.limits();
        let now = guard.clock.now();
        let result = match outcome {
            Outcome::Succeeded => {
                store
                    .resolve(&self.key, self.id, Resolution::Succeeded, now, limits)
                    .await
            }
            Outcome::Failed => {
                store
                    .resolve(&self.key, self.id, Resolution::Failed, now, limits)
                    .await
            }
            Outcome::Unknown => {
                store
                    .resolve(&self.key, self.id, Resolution::Unknown, now, limits)
                    .await
            }
            Outcome::NotCounted => {
                store
                    .resolve(&self.key, self.id, Resolution::NotCounted, now, limits)
                    .await
            }
            Outcome::Blocked(wait) => {
                store
                    .record_block(&self.key, self.id, Hold::Blocked, wait, now, limits)
                    .await
            }
            Outcome::RateLimited(wait) => {
                store
                    .record_block(&self.key, self.id, Hold::RateLimited, wait, now, limits)
                    .await
            }
        };
        match result {
            Ok(view) => {
                tracing::debug!(account = %self.key.short(), ?outcome, "login outcome recorded");
                Ok(guard.status_of(&view, now))
            }
            Err(e) => {
                let counted_until = format_utc(plus(self.started, limits.unknown_for));
                let kept = format!(
                    "the reservation made before it was sent still counts it as an attempt without an answer until about {counted_until}, and no login is sent while the store fails"
                );
                let (answer, assumed) = match outcome {
                    Outcome::Blocked(wait) | Outcome::RateLimited(wait) => {
                        let until = plus(now, wait.min(limits.longest_block) + limits.margin);
                        let mut blocks = guard
                            .unrecorded_blocks
                            .lock()
                            .unwrap_or_else(|p| p.into_inner());
                        let entry = blocks.entry(self.key).or_insert(until);
                        *entry = (*entry).max(until);
                        let answer = if matches!(outcome, Outcome::Blocked(_)) {
                            "account blocked"
                        } else {
                            "slow down (HTTP 429)"
                        };
                        (
                            answer,
                            format!(
                                "this process honours it until {} (other processes and hosts do not know of it); {kept}",
                                format_utc(*entry)
                            ),
                        )
                    }
                    Outcome::Succeeded => (
                        "logged in",
                        format!("the failures before it stay counted (on the safe side); {kept}"),
                    ),
                    Outcome::Failed => ("a failure", kept),
                    Outcome::Unknown => ("no answer", kept),
                    Outcome::NotCounted => (
                        "an answer the service does not count",
                        format!("{kept} (on the safe side)"),
                    ),
                };
                let e = e.at(StoreStep::Record { answer, assumed });
                tracing::warn!(account = %self.key.short(), ?outcome, error = %e, "the login was sent but its answer could not be recorded in the lockout store");
                Err(e)
            }
        }
    }
}

#[cfg(test)]
mod tests;

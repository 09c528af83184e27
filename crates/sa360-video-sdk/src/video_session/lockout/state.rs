//! What a store keeps per account, and the atomic steps on it.
//!
//! Every store applies these steps, each as one atomic operation: the
//! [`MemoryStore`](super::MemoryStore) under a mutex, the
//! [`FileStore`](super::FileStore) under an OS file lock, and the
//! `RedisStore` as one Lua script that mirrors this file line by line. Times
//! are microseconds on the store's clock (the guard's monotonic-anchored clock
//! for the memory and file stores, the Redis server's `TIME` for Redis).

use std::fmt;
use std::str::FromStr;
use std::time::Duration;

use super::policy::Limits;
use crate::video_session::error::{Error, RefusalReason};

/// Identifies one reserved login attempt (128 random bits), so a step changes
/// only its own reservation, never another process's.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct AttemptId(u128);

impl AttemptId {
    /// A new random identity.
    pub fn random() -> Self {
        Self(fastrand::u128(..))
    }

    /// The identity with this value (for stores and tests).
    pub fn from_u128(value: u128) -> Self {
        Self(value)
    }
}

impl fmt::Display for AttemptId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:032x}", self.0)
    }
}

impl fmt::Debug for AttemptId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "AttemptId({self})")
    }
}

impl FromStr for AttemptId {
    type Err = Error;

    /// Exactly 32 lower-case hex digits, as written by `Display`.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        if s.len() != 32 || !s.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')) {
            return Err(Error::invalid(
                "attempt id",
                "must be 32 lower-case hexadecimal digits",
            ));
        }
        u128::from_str_radix(s, 16)
            .map(Self)
            .map_err(|_| Error::invalid("attempt id", "must be hexadecimal"))
    }
}

/// One counted attempt: in flight or with an unknown outcome (`failed_us` is
/// `None`), or failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AttemptEntry {
    /// Its identity.
    pub id: AttemptId,
    /// When it was reserved (before it was sent).
    pub started_us: u64,
    /// When its failure answer arrived, if it did.
    pub failed_us: Option<u64>,
    /// When it stops counting (margin included).
    pub until_us: u64,
}

/// What a store keeps per account.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AccountState {
    /// Counted attempts, in the order they were reserved.
    pub attempts: Vec<AttemptEntry>,
    /// End of a block the service reported (margin included).
    pub blocked_until_us: Option<u64>,
    /// End of a pause the service asked for with 429 `Retry-After` (margin
    /// included).
    pub paused_until_us: Option<u64>,
}

/// How an attempt ended, as far as the count goes.
///
/// Exhaustive on purpose (no `#[non_exhaustive]`): a [`LockoutStore`](super::LockoutStore)
/// of your own must handle every resolution to keep a correct count, so a new
/// one is a breaking change that its `match` must meet, never a wildcard arm.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Resolution {
    /// Logged in: removes this attempt and the failures whose answers arrived
    /// before it was reserved (the service processed them before it, and a
    /// success clears its count). Other reservations stay.
    Succeeded,
    /// A failure answer arrived: it counts from now for window + margin.
    Failed,
    /// No answer (timeout, dropped connection): it keeps counting from its
    /// start for attempt timeout + window + margin.
    Unknown,
    /// An answer that cannot have counted (wrong secret key, inactive domain,
    /// validation error, 429): the reservation is withdrawn.
    NotCounted,
}

/// A period during which no login is sent.
///
/// Exhaustive on purpose (no `#[non_exhaustive]`): a [`LockoutStore`](super::LockoutStore)
/// of your own must record each kind of hold as its own rule (a block counts
/// the attempt as failed, a pause withdraws it), so a new kind must break its
/// `match`, never fall into a wildcard arm.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Hold {
    /// The service reported a block (423); the attempt counts as failed.
    Blocked,
    /// The service asked to slow down (429); the attempt is withdrawn.
    RateLimited,
}

/// An account's count as a step left it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AccountView {
    /// Attempts counted now (failed, in flight or unknown).
    pub counted: u32,
    /// Why an attempt would be refused now, and for how long.
    pub refusal: Option<(RefusalReason, Duration)>,
    /// Time left of a reported block.
    pub blocked_for: Option<Duration>,
    /// True when this step reserved an attempt.
    pub reserved: bool,
}

impl AccountView {
    /// Attempts the guard would still send (0 while refusing).
    pub fn remaining(&self, limits: &Limits) -> u32 {
        if self.refusal.is_some() {
            0
        } else {
            limits.max_failures.saturating_sub(self.counted)
        }
    }
}

/// A duration in whole microseconds, rounded up (a count never ends early).
pub(crate) fn micros(d: Duration) -> u64 {
    let whole = u64::try_from(d.as_micros()).unwrap_or(u64::MAX);
    if d.subsec_nanos().is_multiple_of(1_000) {
        whole
    } else {
        whole.saturating_add(1)
    }
}

impl AccountState {
    /// True when nothing is recorded (the store may forget the account).
    pub fn is_clear(&self) -> bool {
        self.attempts.is_empty()
            && self.blocked_until_us.is_none()
            && self.paused_until_us.is_none()
    }

    /// The latest time anything recorded still matters (for a TTL), if any.
    pub fn expires_us(&self) -> Option<u64> {
        self.attempts
            .iter()
            .map(|a| a.until_us)
            .chain(self.blocked_until_us)
            .chain(self.paused_until_us)
            .max()
    }

    /// Clamps what is dated in the future beyond what any step could have
    /// written (a clock that went back, a hand-edited store), then drops what
    /// has ended. Never lengthens anything.
    pub fn settle(&mut self, now: u64, limits: &Limits) {
        let unknown_end = now.saturating_add(micros(limits.unknown_for));
        let hold_end = now.saturating_add(micros(limits.longest_block));
        for a in &mut self.attempts {
            a.started_us = a.started_us.min(now);
            a.failed_us = a.failed_us.map(|f| f.min(now));
            a.until_us = a.until_us.min(unknown_end);
        }
        self.attempts.retain(|a| a.until_us > now);
        self.blocked_until_us = self
            .blocked_until_us
            .map(|u| u.min(hold_end))
            .filter(|u| *u > now);
        self.paused_until_us = self
            .paused_until_us
            .map(|u| u.min(hold_end))
            .filter(|u| *u > now);
    }

    /// The account as seen at `now`; call [`settle`](Self::settle) first.
    pub fn view(&self, now: u64, limits: &Limits) -> AccountView {
        let left = |end: u64| Duration::from_micros(end.saturating_sub(now));
        let counted = u32::try_from(self.attempts.len()).unwrap_or(u32::MAX);
        let blocked_for = self.blocked_until_us.map(left);
        let refusal = if let Some(d) = blocked_for {
            Some((RefusalReason::KnownBlock, d))
        } else if let Some(end) = self.paused_until_us {
            Some((RefusalReason::RateLimited, left(end)))
        } else if counted > limits.max_failures {
            // The service may have blocked at any counted failure; its block
            // ends at most `block` after it, i.e. `block - window` after the
            // failure stops counting here.
            let last = self
                .attempts
                .iter()
                .map(|a| a.until_us)
                .max()
                .unwrap_or(now);
            let end = last.saturating_add(micros(limits.block_beyond_window));
            Some((
                RefusalReason::PresumedBlock {
                    failures_in_window: counted,
                    window: limits.window,
                },
                left(end),
            ))
        } else if counted >= limits.max_failures {
            // One more failure would be the blocking one: wait until the first
            // counted attempt stops counting.
            let first = self.attempts.iter().map(|a| a.until_us).min();
            let end = first.unwrap_or(now.saturating_add(micros(limits.failure_for)));
            Some((
                RefusalReason::BudgetExhausted {
                    failures_in_window: counted,
                    window: limits.window,
                },
                left(end),
            ))
        } else {
            None
        };
        AccountView {
            counted,
            refusal,
            blocked_for,
            reserved: false,
        }
    }

    /// Step "reserve": settles, refuses, or records attempt `id` as in flight
    /// (counting until `now + unknown_for`).
    pub fn reserve(&mut self, id: AttemptId, now: u64, limits: &Limits) -> AccountView {
        self.settle(now, limits);
        let before = self.view(now, limits);
        if before.refusal.is_some() {
            return before;
        }
        self.attempts.retain(|a| a.id != id);
        self.attempts.push(AttemptEntry {
            id,
            started_us: now,
            failed_us: None,
            until_us: now.saturating_add(micros(limits.unknown_for)),
        });
        AccountView {
            reserved: true,
            ..self.view(now, limits)
        }
    }

    /// Step "resolve": records how attempt `id` ended.
    pub fn resolve(
        &mut self,
        id: AttemptId,
        resolution: Resolution,
        now: u64,
        limits: &Limits,
    ) -> AccountView {
        self.settle(now, limits);
        let own = self.attempts.iter().position(|a| a.id == id);
        match resolution {
            Resolution::Succeeded => {
                if let Some(i) = own {
                    let started = self.attempts[i].started_us;
                    self.attempts.remove(i);
                    // Failures answered before this attempt was reserved were
                    // processed before it: the success cleared them. Anything
                    // else (other reservations, unknown outcomes, later
                    // failures) may be processed after it and stays.
                    self.attempts
                        .retain(|a| a.failed_us.is_none_or(|f| f >= started));
                }
            }
            Resolution::Failed => self.mark_failed(own, id, now, limits),
            Resolution::Unknown => {
                if own.is_none() {
                    self.attempts.push(AttemptEntry {
                        id,
                        started_us: now,
                        failed_us: None,
                        until_us: now.saturating_add(micros(limits.unknown_for)),
                    });
                }
            }
            Resolution::NotCounted => {
                if let Some(i) = own {
                    self.attempts.remove(i);
                }
            }
        }
        self.view(now, limits)
    }

    fn mark_failed(&mut self, own: Option<usize>, id: AttemptId, now: u64, limits: &Limits) {
        let until = now.saturating_add(micros(limits.failure_for));
        match own {
            Some(i) => {
                let a = &mut self.attempts[i];
                a.failed_us = Some(now);
                a.until_us = until;
            }
            None => self.attempts.push(AttemptEntry {
                id,
                started_us: now,
                failed_us: Some(now),
                until_us: until,
            }),
        }
    }

    /// Step "record block": the service reported a block (the attempt counts
    /// as failed) or asked for a pause (the attempt is withdrawn) lasting
    /// `wait` from now; the margin is added and an earlier end never shortens
    /// a later one. The count is kept: a block's end never resets it.
    pub fn hold(
        &mut self,
        id: AttemptId,
        hold: Hold,
        wait: Duration,
        now: u64,
        limits: &Limits,
    ) -> AccountView {
        self.settle(now, limits);
        let own = self.attempts.iter().position(|a| a.id == id);
        let wait = wait.min(limits.longest_block.saturating_sub(limits.margin));
        let end = now.saturating_add(micros(wait + limits.margin));
        match hold {
            Hold::Blocked => {
                self.mark_failed(own, id, now, limits);
                self.blocked_until_us = Some(self.blocked_until_us.map_or(end, |u| u.max(end)));
            }
            Hold::RateLimited => {
                if let Some(i) = own {
                    self.attempts.remove(i);
                }
                self.paused_until_us = Some(self.paused_until_us.map_or(end, |u| u.max(end)));
            }
        }
        self.view(now, limits)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::video_session::lockout::policy::LockoutPolicy;

    const S: u64 = 1_000_000;

    fn limits() -> Limits {
        LockoutPolicy::SEED.limits(Duration::from_secs(30))
    }

    fn id(n: u128) -> AttemptId {
        AttemptId::from_u128(n)
    }

    #[test]
    fn reserve_counts_until_timeout_window_and_margin() {
        let l = limits();
        let mut s = AccountState::default();
        let v = s.reserve(id(1), 0, &l);
        assert!(v.reserved);
        assert_eq!(s.attempts[0].until_us, 690 * S);
        s.settle(690 * S - 1, &l);
        assert_eq!(s.attempts.len(), 1);
        s.settle(690 * S, &l);
        assert!(s.is_clear());
    }

    #[test]
    fn budget_refuses_until_the_first_stops_counting() {
        let l = limits();
        let mut s = AccountState::default();
        for i in 0..5u64 {
            assert!(s.reserve(id(i.into()), i * S, &l).reserved);
            s.resolve(id(i.into()), Resolution::Failed, i * S + 1, &l);
        }
        let v = s.reserve(id(9), 10 * S, &l);
        assert!(!v.reserved);
        assert_eq!(v.counted, 5);
        // The first failure's answer arrived at 1 ms; it counts 660 s from then.
        assert_eq!(
            v.refusal,
            Some((
                RefusalReason::BudgetExhausted {
                    failures_in_window: 5,
                    window: Duration::from_secs(600),
                },
                Duration::from_micros(660 * S + 1 - 10 * S)
            ))
        );
        assert!(s.reserve(id(9), 660 * S + 1, &l).reserved);
    }

    #[test]
    fn success_removes_only_failures_it_proves_wrong() {
        let l = limits();
        let mut s = AccountState::default();
        s.reserve(id(1), 0, &l);
        s.resolve(id(1), Resolution::Failed, 10, &l);
        // Another process's reservation, still in flight.
        s.reserve(id(2), 20, &l);
        s.reserve(id(3), 30, &l);
        // A failure answered after the success was reserved.
        s.reserve(id(4), 31, &l);
        s.resolve(id(4), Resolution::Failed, 40, &l);
        let v = s.resolve(id(3), Resolution::Succeeded, 50, &l);
        let left: Vec<_> = s.attempts.iter().map(|a| a.id).collect();
        assert_eq!(left, vec![id(2), id(4)]);
        assert_eq!(v.counted, 2);
    }

    #[test]
    fn a_block_with_zero_retry_after_keeps_the_count() {
        let l = limits();
        let mut s = AccountState::default();
        for i in 0..3 {
            s.reserve(id(i), 0, &l);
            s.resolve(id(i), Resolution::Failed, 1, &l);
        }
        s.reserve(id(7), 2, &l);
        let v = s.hold(id(7), Hold::Blocked, Duration::ZERO, 3, &l);
        assert_eq!(v.refusal.unwrap().0, RefusalReason::KnownBlock);
        // The block (0 s + margin) ends, the four failures still count.
        let v = s.reserve(id(8), 3 + 60 * S, &l);
        assert_eq!(v.counted, 5);
        assert!(v.reserved);
    }

    #[test]
    fn rate_limit_withdraws_and_pauses() {
        let l = limits();
        let mut s = AccountState::default();
        s.reserve(id(1), 0, &l);
        let v = s.hold(id(1), Hold::RateLimited, Duration::from_secs(5), 10, &l);
        assert_eq!(v.counted, 0);
        assert_eq!(
            v.refusal,
            Some((RefusalReason::RateLimited, Duration::from_secs(65)))
        );
    }

    #[test]
    fn future_dated_entries_are_clamped() {
        let l = limits();
        let mut s = AccountState {
            attempts: (0..5)
                .map(|i| AttemptEntry {
                    id: id(i),
                    started_us: 10_000 * S,
                    failed_us: Some(10_000 * S),
                    until_us: 1_000_000 * S,
                })
                .collect(),
            blocked_until_us: Some(u64::MAX),
            paused_until_us: None,
        };
        s.settle(0, &l);
        assert!(s.attempts.iter().all(|a| a.until_us == 690 * S));
        assert_eq!(s.blocked_until_us, Some(micros(l.longest_block)));
    }

    #[test]
    fn more_than_allowed_presumes_a_block_until_all_stop_counting() {
        let l = LockoutPolicy {
            block: Duration::from_secs(900),
            ..LockoutPolicy::SEED
        }
        .limits(Duration::from_secs(30));
        let mut s = AccountState::default();
        for i in 0..6u64 {
            s.resolve(id(i.into()), Resolution::Unknown, i * S, &l);
        }
        let v = s.reserve(id(9), 6 * S, &l);
        assert_eq!(v.counted, 6);
        // The newest counts until 5 s + 690 s; the block may last 300 s longer.
        assert_eq!(
            v.refusal,
            Some((
                RefusalReason::PresumedBlock {
                    failures_in_window: 6,
                    window: Duration::from_secs(600),
                },
                Duration::from_secs(5 + 690 + 300 - 6)
            ))
        );
    }

    #[test]
    fn expires_at_the_latest_end_of_anything_recorded() {
        let l = limits();
        let mut s = AccountState::default();
        assert_eq!(s.expires_us(), None);
        s.reserve(id(1), 10 * S, &l);
        assert_eq!(s.expires_us(), Some(10 * S + 690 * S));
        s.hold(id(2), Hold::Blocked, Duration::from_secs(3_600), 20 * S, &l);
        assert_eq!(s.expires_us(), Some(20 * S + 3_660 * S));
        s.hold(
            id(3),
            Hold::RateLimited,
            Duration::from_secs(7_200),
            30 * S,
            &l,
        );
        assert_eq!(s.expires_us(), Some(30 * S + 7_260 * S));
    }

    #[test]
    fn a_pause_ends_exactly_at_its_end() {
        let l = limits();
        let mut s = AccountState::default();
        s.reserve(id(1), 0, &l);
        s.hold(id(1), Hold::RateLimited, Duration::from_secs(5), 0, &l);
        let end = 65 * S;
        assert_eq!(
            s.reserve(id(2), end - 1, &l).refusal,
            Some((RefusalReason::RateLimited, Duration::from_micros(1)))
        );
        assert!(s.reserve(id(2), end, &l).reserved);
    }

    #[test]
    fn attempt_ids_round_trip_and_reject_upper_case() {
        let a = AttemptId::from_u128(0xabc);
        assert_eq!(a.to_string().parse::<AttemptId>().unwrap(), a);
        assert_eq!(
            format!("{a:?}"),
            "AttemptId(00000000000000000000000000000abc)"
        );
        assert!("ABC".parse::<AttemptId>().is_err());
        assert!(
            "000000000000000000000000000000AB"
                .parse::<AttemptId>()
                .is_err()
        );
    }
}

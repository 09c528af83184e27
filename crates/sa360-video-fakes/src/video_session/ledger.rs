//! The video fake's state: accounts with their lockout, tokens, the outbox; and the read handles.

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use crate::faults::{FaultInjector, FaultRecord};

/// Failures within this window count towards a block (VS-3).
pub const FAILURE_WINDOW: Duration = Duration::from_secs(600);
/// How long a block lasts.
pub const BLOCK_DURATION: Duration = Duration::from_secs(600);
/// More failures than this inside the window start a block.
pub const MAX_FAILURES: usize = 5;

/// A user of a domain: the unit the fake counts failed logins and blocks by (VS-3), as the
/// service names it (domain ID and user name, in clear; the fake keeps no hashed keys).
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct DomainUser {
    /// The domain.
    pub domain_id: i64,
    /// The user name.
    pub user_name: String,
}

impl DomainUser {
    /// User `user_name` of domain `domain_id`.
    #[must_use]
    pub fn new(domain_id: i64, user_name: impl Into<String>) -> Self {
        Self {
            domain_id,
            user_name: user_name.into(),
        }
    }
}

/// Login statistics of one account, as of the moment they were read.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AccountStats {
    /// Every wrong-password attempt that counted (the one that started a block included).
    pub failures_total: u64,
    /// Failures that count right now: inside the 10-minute window, since the last success or block.
    pub consecutive_failures: u32,
    /// Blocks started.
    pub blocks_started: u64,
    /// Successful logins.
    pub successful_logins: u64,
    /// Attempts refused because the account was blocked (they never count as failures).
    pub rejected_while_blocked: u64,
    /// Time left of the current block, if blocked now.
    pub blocked_for: Option<Duration>,
}

#[derive(Default)]
pub(crate) struct AccountState {
    pub failures: VecDeque<Instant>,
    pub blocked_until: Option<Instant>,
    pub stats: AccountStats,
}

impl AccountState {
    /// Ends an expired block and drops failures older than the window.
    pub(crate) fn refresh(&mut self, now: Instant) {
        if let Some(until) = self.blocked_until
            && now >= until
        {
            self.blocked_until = None;
            self.failures.clear();
        }
        while let Some(&first) = self.failures.front() {
            if now.saturating_duration_since(first) >= FAILURE_WINDOW {
                self.failures.pop_front();
            } else {
                break;
            }
        }
    }

    pub(crate) fn snapshot(&self, now: Instant) -> AccountStats {
        let mut copy = AccountState {
            failures: self.failures.clone(),
            blocked_until: self.blocked_until,
            stats: AccountStats::default(),
        };
        copy.refresh(now);
        AccountStats {
            consecutive_failures: u32::try_from(copy.failures.len()).unwrap_or(u32::MAX),
            blocked_for: copy.blocked_until.map(|u| u.saturating_duration_since(now)),
            ..self.stats.clone()
        }
    }
}

/// The channel of an invitation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Channel {
    /// InvitationType 1.
    Sms,
    /// InvitationType 2.
    WhatsApp,
    /// InvitationType 3.
    Email,
    /// InvitationType 4 or 5 (undocumented, VS-5).
    Undocumented(i32),
}

/// One accepted invitation, as "sent".
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OutboxEntry {
    /// 1-based position in the outbox.
    pub seq: u64,
    /// The fake's request number that sent it.
    pub request: u64,
    /// The session invited to.
    pub session_id: String,
    /// `InvitationType` as sent.
    pub invitation_type: i32,
    /// The channel.
    pub channel: Channel,
    /// The mobile number (SMS, WhatsApp) or e-mail address (e-mail); for undocumented types
    /// whichever was given.
    pub recipient: Option<String>,
    /// `IsoCode`, when given.
    pub iso_code: Option<String>,
    /// The text actually sent: the fixed text for WhatsApp, else the caller's `Message` or the
    /// default text.
    pub message: String,
    /// The join link: `{base}/join/{SessionId}{QueryStringParameter}`.
    pub link: String,
    /// `QueryStringParameter`, when given and not empty.
    pub query_string: Option<String>,
    /// The domain of the user who sent it.
    pub domain_id: i64,
    /// The user who sent it.
    pub sent_by: String,
}

/// Counters of the video fake.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct VideoCounts {
    /// Every HTTP request received (faulted ones included).
    pub requests: u64,
    /// Login requests that reached the handler.
    pub login_attempts: u64,
    /// Successful logins.
    pub logins_succeeded: u64,
    /// Invitation requests that reached the handler.
    pub invitation_requests: u64,
    /// Invitations accepted (and put in the outbox).
    pub invitations_sent: u64,
    /// Requests answered 401 `Unauthorized` (missing or unknown `UserToken`).
    pub unauthorized: u64,
}

#[derive(Clone, Debug)]
pub(crate) struct Session {
    pub domain_id: i64,
    pub user_name: String,
}

pub(crate) struct State {
    pub accounts: HashMap<DomainUser, AccountState>,
    pub tokens: HashMap<String, Session>,
    pub sessions: HashSet<String>,
    pub outbox: Vec<OutboxEntry>,
    pub outbox_seq: u64,
    pub next_login_id: i64,
    pub rng: fastrand::Rng,
    pub counts: VideoCounts,
}

pub(crate) struct Shared {
    pub state: Mutex<State>,
    pub faults: Arc<FaultInjector>,
    pub clock: crate::clock::FakeClock,
}

impl Shared {
    pub(crate) fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Read access to the video fake's accounts, counters and injected faults. Cheap to clone.
#[derive(Clone)]
pub struct VideoLedger {
    pub(crate) shared: Arc<Shared>,
}

impl std::fmt::Debug for VideoLedger {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("VideoLedger")
            .field("counts", &self.counts())
            .finish_non_exhaustive()
    }
}

impl VideoLedger {
    /// Statistics of one account (`None` if it never had a counted attempt).
    #[must_use]
    pub fn account(&self, key: &DomainUser) -> Option<AccountStats> {
        let now = self.shared.clock.now();
        self.shared
            .state()
            .accounts
            .get(key)
            .map(|a| a.snapshot(now))
    }

    /// Statistics of every account that had a counted attempt, sorted by key.
    #[must_use]
    pub fn accounts(&self) -> Vec<(DomainUser, AccountStats)> {
        let now = self.shared.clock.now();
        let mut all: Vec<_> = self
            .shared
            .state()
            .accounts
            .iter()
            .map(|(k, a)| (k.clone(), a.snapshot(now)))
            .collect();
        all.sort_by(|a, b| a.0.cmp(&b.0));
        all
    }

    /// Whether the account is blocked right now.
    #[must_use]
    pub fn is_blocked(&self, key: &DomainUser) -> bool {
        self.account(key).is_some_and(|s| s.blocked_for.is_some())
    }

    /// All counters.
    #[must_use]
    pub fn counts(&self) -> VideoCounts {
        VideoCounts {
            requests: self.shared.faults.requests(),
            ..self.shared.state().counts.clone()
        }
    }

    /// Every injected fault, in order.
    #[must_use]
    pub fn faults(&self) -> Vec<FaultRecord> {
        self.shared.faults.records()
    }
}

/// The invitations the fake "sent". Cheap to clone.
#[derive(Clone)]
pub struct Outbox {
    pub(crate) shared: Arc<Shared>,
}

impl std::fmt::Debug for Outbox {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Outbox")
            .field("len", &self.len())
            .finish_non_exhaustive()
    }
}

impl Outbox {
    /// Every entry, oldest first.
    #[must_use]
    pub fn entries(&self) -> Vec<OutboxEntry> {
        self.shared.state().outbox.clone()
    }

    /// The newest entry.
    #[must_use]
    pub fn last(&self) -> Option<OutboxEntry> {
        self.shared.state().outbox.last().cloned()
    }

    /// The number of entries.
    #[must_use]
    pub fn len(&self) -> usize {
        self.shared.state().outbox.len()
    }

    /// Whether nothing was sent (or everything was taken).
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Removes and returns every entry.
    #[must_use]
    pub fn take(&self) -> Vec<OutboxEntry> {
        std::mem::take(&mut self.shared.state().outbox)
    }
}

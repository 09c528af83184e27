//! Lockout awareness: the SDK never sends a login that could block an account.
//!
//! The service blocks an account for 10 minutes when more than 5 logins fail
//! within 10 minutes (VS-3), and answers every attempt during the block with 423
//! (VS-4). It counts a failure when it *processes* the request, which can be
//! later than the client sent it, or after the client gave up. Real services
//! often hide a block behind the generic credentials error, so the
//! [`LockoutGuard`] keeps its own count per [`AccountKey`]:
//!
//! - before a login is sent, the guard **reserves** it in the store: one atomic
//!   step checks the budget and records the attempt with its own
//!   [`AttemptId`]. An attempt is sent only if even its failure leaves at most
//!   `max_failures` counted, so the SDK never causes the blocking failure;
//! - an attempt whose outcome is unknown (timeout, dropped connection, a
//!   cancelled future, a crashed process) counts from its start until start +
//!   attempt timeout + window + margin: whenever the service processes it, the
//!   service forgets it first;
//! - a failure answer counts from its arrival for window + margin; a success
//!   removes only the failures answered before it was reserved, never another
//!   reservation;
//! - a 423 records a known block until `Retry-After` + margin (the count is
//!   kept: a block's end never resets it); a 429 withdraws the attempt and
//!   pauses logins until `Retry-After` + margin;
//! - more counted attempts than tolerated (only through unknown outcomes) are
//!   a presumed block;
//! - a store that cannot run a step refuses the login (fails closed);
//! - time comes from a monotonic-anchored [`Clock`](super::Clock) in a
//!   process, from the Redis server's `TIME` for a `RedisStore`; entries dated
//!   in the future are clamped;
//! - logins of one account are serialized within a process; nothing is ever
//!   retried.
//!
//! Stores: [`FileStore`] (the processes of one host, OS advisory lock; the
//! default is [`FileStore::per_user`], one file per user and host),
//! `RedisStore` (feature `redis`: replicas on several hosts), and
//! [`MemoryStore`] (one process only: it forgets every count when the process
//! ends, so it is used only when named).

mod file_store;
mod guard;
mod per_user;
mod policy;
#[cfg(feature = "redis")]
mod redis_backend;
#[cfg(feature = "redis")]
mod redis_store;
#[cfg(feature = "redis")]
mod redis_url;
mod state;
mod store;

pub use file_store::FileStore;
pub(crate) use guard::Outcome;
pub use guard::{DEFAULT_ATTEMPT_TIMEOUT, LockoutGuard, LockoutGuardBuilder, LockoutStatus};
pub use policy::{Limits, LockoutPolicy, MAX_SPAN};
#[cfg(feature = "redis")]
pub use redis_store::{
    DEFAULT_KEY_PREFIX, DEFAULT_REDIS_TIMEOUT, DEFAULT_REPLICA_ACK_TIMEOUT, RedisStore,
    RedisStoreBuilder, ReplicaAcks,
};
pub use state::{AccountState, AccountView, AttemptEntry, AttemptId, Hold, Resolution};
pub use store::{LockoutStore, MemoryStore, StoreFuture};

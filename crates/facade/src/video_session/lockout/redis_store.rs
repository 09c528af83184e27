//! A store on a Redis server, shared by every replica of an application.

use std::fmt;
use std::time::{Duration, SystemTime};

use redis::aio::{ConnectionManager, ConnectionManagerConfig};

use super::policy::Limits;
use super::state::{AccountView, AttemptId, Hold, Refusal, Resolution, micros};
use super::store::{LockoutStore, StoreFuture};
use crate::video_session::credentials::AccountKey;
use crate::video_session::error::StoreError;

const SCRIPT: &str = include_str!("redis_store.lua");
/// The default key prefix; the account's 64 hex digits follow.
pub const DEFAULT_KEY_PREFIX: &str = "facade:video-session:lockout:v1:";
/// The default bound on connecting and on each answer.
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(2);

/// A store on a Redis server, so several replicas (processes, hosts) share one
/// count per account.
///
/// - Each step is one Lua script run atomically by the server (the same steps
///   as [`AccountState`](super::AccountState)'s methods), with the server's
///   `TIME` as the one clock for every replica: client hosts' clocks do not
///   matter.
/// - Each account is one hash under `<prefix><64 hex digits>`, holding only
///   hashed account keys and times; it expires (TTL) when nothing in it
///   counts any more, so an account nobody uses leaves nothing behind.
/// - It fails closed: a connection or script error (Redis down, timeout,
///   corrupt entry) is a [`StoreError`] and the guard sends nothing. The
///   connection is a tokio [`ConnectionManager`] that reconnects when the
///   server is back; connecting and every answer are bounded (default 2 s).
///
/// ```no_run
/// use std::sync::Arc;
/// use facade::http::BaseUrl;
/// use facade::video_session::{RedisStore, VideoSessionClient};
///
/// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
/// let store = RedisStore::connect("redis://127.0.0.1:6379/0").await?;
/// let client = VideoSessionClient::builder(BaseUrl::parse("https://video.example.com")?)
///     .lockout_store(Arc::new(store))
///     .build()?;
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct RedisStore {
    connection: ConnectionManager,
    location: String,
    prefix: String,
    scripts: Scripts,
}

#[derive(Clone)]
struct Scripts {
    reserve: redis::Script,
    resolve: redis::Script,
    hold: redis::Script,
    view: redis::Script,
}

impl Scripts {
    fn new() -> Self {
        let script = |step: &str| redis::Script::new(&format!("local STEP = '{step}'\n{SCRIPT}"));
        Self {
            reserve: script("reserve"),
            resolve: script("resolve"),
            hold: script("hold"),
            view: script("view"),
        }
    }
}

impl fmt::Debug for RedisStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RedisStore")
            .field("location", &self.location)
            .field("prefix", &self.prefix)
            .finish_non_exhaustive()
    }
}

/// `redis://host:port/db` without user name or password, for messages.
fn redact(url: &str) -> String {
    match url::Url::parse(url) {
        Ok(mut u) => {
            let _ = u.set_username("");
            let _ = u.set_password(None);
            u.to_string()
        }
        Err(_) => "(unparsable Redis URL)".to_owned(),
    }
}

impl RedisStore {
    /// Connects to the server at `url` (`redis://[:password@]host:port/db`,
    /// or `rediss://` for TLS when the `redis` crate is built with it), with
    /// 2 s bounds on connecting and on each answer.
    pub async fn connect(url: &str) -> Result<Self, StoreError> {
        Self::connect_with(url, DEFAULT_TIMEOUT, DEFAULT_KEY_PREFIX).await
    }

    /// Like [`connect`](Self::connect), with the bound on connecting and on
    /// each answer, and the key prefix (to share a server between
    /// applications or tests).
    pub async fn connect_with(
        url: &str,
        timeout: Duration,
        prefix: &str,
    ) -> Result<Self, StoreError> {
        let location = redact(url);
        let error = |what: &str, e: redis::RedisError| {
            StoreError::new(
                location.clone(),
                format!("{what}: {e}; no login is sent while the lockout store is unavailable"),
            )
        };
        let client = redis::Client::open(url).map_err(|e| error("not a Redis URL", e))?;
        let config = ConnectionManagerConfig::new()
            .set_connection_timeout(Some(timeout))
            .set_response_timeout(Some(timeout))
            .set_number_of_retries(1)
            .set_max_delay(timeout);
        let connection = tokio::time::timeout(
            timeout * 2,
            ConnectionManager::new_with_config(client, config),
        )
        .await
        .map_err(|_| {
            StoreError::new(
                location.clone(),
                format!("cannot connect within {} s", (timeout * 2).as_secs_f64()),
            )
        })?
        .map_err(|e| error("cannot connect", e))?;
        Ok(Self {
            connection,
            location,
            prefix: prefix.to_owned(),
            scripts: Scripts::new(),
        })
    }

    async fn run(
        &self,
        script: &redis::Script,
        key: &AccountKey,
        id: AttemptId,
        limits: &Limits,
        extra: &[String],
    ) -> Result<AccountView, StoreError> {
        let mut invocation = script.key(format!("{}{key}", self.prefix));
        invocation
            .arg(id.to_string())
            .arg(limits.max_failures)
            .arg(micros(limits.unknown_for))
            .arg(micros(limits.failure_for))
            .arg(micros(limits.block_beyond_window))
            .arg(micros(limits.margin))
            .arg(micros(limits.longest_block));
        for a in extra {
            invocation.arg(a);
        }
        let mut connection = self.connection.clone();
        let (counted, refusal, wait, blocked_for, reserved): (u32, u8, i64, i64, u8) = invocation
            .invoke_async(&mut connection)
            .await
            .map_err(|e| {
                StoreError::new(
                    self.location.clone(),
                    format!("the lockout step failed: {e}; nothing was sent"),
                )
            })?;
        let us = |v: i64| Duration::from_micros(u64::try_from(v).unwrap_or(0));
        let refusal = match refusal {
            0 => None,
            1 => Some(Refusal::BudgetExhausted),
            2 => Some(Refusal::KnownBlock),
            3 => Some(Refusal::PresumedBlock),
            4 => Some(Refusal::RateLimited),
            other => {
                return Err(StoreError::new(
                    self.location.clone(),
                    format!("the lockout script answered an unknown refusal {other}"),
                ));
            }
        };
        Ok(AccountView {
            counted,
            refusal: refusal.map(|r| (r, us(wait))),
            blocked_for: (blocked_for >= 0).then(|| us(blocked_for)),
            reserved: reserved == 1,
        })
    }
}

impl LockoutStore for RedisStore {
    fn reserve<'a>(
        &'a self,
        key: &'a AccountKey,
        id: AttemptId,
        _now: SystemTime,
        limits: Limits,
    ) -> StoreFuture<'a, AccountView> {
        Box::pin(async move { self.run(&self.scripts.reserve, key, id, &limits, &[]).await })
    }

    fn resolve<'a>(
        &'a self,
        key: &'a AccountKey,
        id: AttemptId,
        resolution: Resolution,
        _now: SystemTime,
        limits: Limits,
    ) -> StoreFuture<'a, AccountView> {
        let resolution = match resolution {
            Resolution::Succeeded => "succeeded",
            Resolution::Failed => "failed",
            Resolution::Unknown => "unknown",
            Resolution::NotCounted => "not_counted",
        };
        Box::pin(async move {
            self.run(
                &self.scripts.resolve,
                key,
                id,
                &limits,
                &[resolution.to_owned()],
            )
            .await
        })
    }

    fn record_block<'a>(
        &'a self,
        key: &'a AccountKey,
        id: AttemptId,
        hold: Hold,
        wait: Duration,
        _now: SystemTime,
        limits: Limits,
    ) -> StoreFuture<'a, AccountView> {
        let kind = match hold {
            Hold::Blocked => "blocked",
            Hold::RateLimited => "rate_limited",
        };
        Box::pin(async move {
            let extra = [kind.to_owned(), micros(wait).to_string()];
            self.run(&self.scripts.hold, key, id, &limits, &extra).await
        })
    }

    fn view<'a>(
        &'a self,
        key: &'a AccountKey,
        _now: SystemTime,
        limits: Limits,
    ) -> StoreFuture<'a, AccountView> {
        Box::pin(async move {
            self.run(
                &self.scripts.view,
                key,
                AttemptId::from_u128(0),
                &limits,
                &[],
            )
            .await
        })
    }

    fn location(&self) -> String {
        self.location.clone()
    }
}

// Tested against a real redis-server in `crates/facade/tests/it/video_session_redis.rs`
// (it starts its own server; see there for when it skips).

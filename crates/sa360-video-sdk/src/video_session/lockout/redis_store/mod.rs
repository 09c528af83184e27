//! A store on Redis, shared by every replica of an application: a standalone
//! server, a Sentinel-managed primary or a Cluster, with or without TLS.

use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, SystemTime};

use redis::{RedisError, Value};

use super::policy::Limits;
use super::redis_backend::{Backend, connect_backend, read_ca};
use super::redis_url::{RedisUrl, Topology};
use super::state::{AccountView, AttemptId, Hold, Resolution, micros};
use super::store::{LockoutStore, StoreFuture};
use crate::video_session::credentials::AccountKey;
use crate::video_session::error::{RefusalReason, StoreError, StoreLoss, redact_echoes};

const SCRIPT: &str = include_str!("redis_store.lua");
/// The default key prefix. The store's keys are `{<prefix><bucket>}:store`, one
/// hash per bucket holding the bucket's record and one field per account (its
/// 64 hex digits), where the bucket is the account hash's first hex digit: the
/// part in braces is a Redis Cluster hash tag.
#[cfg_attr(docsrs, doc(cfg(feature = "redis")))]
pub const DEFAULT_KEY_PREFIX: &str = "facade:video-session:lockout:v2:";
/// The default bound on connecting and on each answer.
#[cfg_attr(docsrs, doc(cfg(feature = "redis")))]
pub const DEFAULT_REDIS_TIMEOUT: Duration = Duration::from_secs(2);
/// The default bound on waiting for replicas to acknowledge a reservation.
#[cfg_attr(docsrs, doc(cfg(feature = "redis")))]
pub const DEFAULT_REPLICA_ACK_TIMEOUT: Duration = Duration::from_secs(1);
/// The buckets (hex digits) an account key falls into.
const BUCKETS: &[u8; 16] = b"0123456789abcdef";
/// The longest key prefix accepted.
const MAX_PREFIX: usize = 200;

/// Which replicas must acknowledge a reservation before its login is sent.
///
/// Redis replicates asynchronously: a reservation the primary accepted is lost
/// if the primary fails before a replica received it and that replica is
/// promoted, and the promoted store then grants a login the lost reservation
/// had used up. Waiting for replicas (Redis `WAIT`) closes that gap as far as
/// the promoted replica is one that acknowledged (Sentinel promotes the replica
/// with the most data). See [`RedisStore`]'s table of what each deployment
/// guarantees.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
#[cfg_attr(docsrs, doc(cfg(feature = "redis")))]
pub enum ReplicaAcks {
    /// Every replica connected to the primary when the reservation is written
    /// (none for a server without replicas). The default.
    AllConnected,
    /// At least this many replicas; fewer connected or acknowledging in time
    /// refuses the login. For deployments that must never run on the primary
    /// alone.
    AtLeast(u32),
    /// Do not wait. A failover can then lose the latest reservations: use it
    /// only where the server has no replicas that could be promoted.
    None,
}

/// A store on Redis, so several replicas (processes, hosts) share one count per
/// account.
///
/// - Each step is one Lua script run atomically by the server (the same steps
///   as [`AccountState`](super::AccountState)'s methods), with the server's
///   `TIME` as the one clock for every replica: client hosts' clocks do not
///   matter.
/// - Each bucket of accounts is one hash without a TTL, holding only hashed
///   account keys and times; an account's field is removed once nothing in it
///   counts any more.
/// - **Deployments**: one URL names each ([`connect`](Self::connect)):
///   `redis://` and `rediss://` (TLS) for one server, `redis-sentinel://` for a
///   primary that Sentinel fails over (the store asks the sentinels for the
///   current primary, and again after a failover), `redis-cluster://` for a
///   Cluster (an account's keys share one hash slot; `MOVED` and `ASK` are
///   followed). ACL users and passwords go in the URL and never in a message.
///   TLS uses the system's roots, or the CA file set with
///   [`RedisStoreBuilder::ca_file`].
/// - **Replicas**: before a login is sent, its reservation is acknowledged by
///   the replicas [`ReplicaAcks`] asks for (default: every connected replica,
///   within 1 s); otherwise the reservation is withdrawn and nothing is sent.
/// - **Lost memory**: each bucket of accounts is one hash, without a TTL, holding a record (since
///   when the store remembers every attempt, and the server life that wrote it) and its accounts'
///   counts, so the record and the counts live and die together. A step that finds the record gone
///   (a flush, an eviction, a restart without persistence), written by another server life that
///   may have lost writes (a restart from an RDB snapshot or from an AOF not fsynced on every
///   write), or of another format, refuses every login of the bucket
///   ([`RefusalReason::StoreForgot`](crate::video_session::RefusalReason::StoreForgot), with its
///   [`StoreLoss`](crate::video_session::StoreLoss)) until the attempts the store may have forgotten
///   can no longer count at the service: the time it noticed + attempt timeout + window + margin
///   (11.5 min by default). A store that never held counts is declared new once, by an operator,
///   with [`initialize`](Self::initialize) (`apictl video lockout-init`), which refuses a store
///   that noticed a loss.
/// - It fails closed: a connection, script or acknowledgement error is a
///   [`StoreError`] and the guard sends nothing. Connecting and every step
///   are bounded (default 2 s, plus the acknowledgement wait).
///
/// What each deployment guarantees (a "window" is one lockout window of refused logins for the
/// accounts of the buckets concerned; every row is tested with the service as judge):
///
/// | deployment | a reservation survives | after a loss |
/// |---|---|---|
/// | one server, no persistence (`save ""`) | a client reconnecting; not a restart | the record is gone: a window |
/// | one server, RDB snapshots (Redis's default `save 3600 1 300 100 60 10000`) | until a restart | a restart from the snapshot is noticed (another `run_id`): a window |
/// | one server, `appendonly yes`, `appendfsync everysec` (the AOF default) | until a restart | a restart is noticed, the last second may be lost: a window |
/// | one server, `appendonly yes`, `appendfsync always` | a restart (every acknowledged write is on disk) | nothing lost, no wait |
/// | `maxmemory-policy noeviction` (Redis's default) or any `volatile-*` (managed services' default) | memory pressure: the store's keys have no TTL, never evicted | a full server refuses writes: the login is not sent |
/// | `maxmemory-policy allkeys-*` | until its bucket is evicted (a warning at connect names the setting) | the bucket and its record go together: a window |
/// | primary + replicas (`ReplicaAcks::AllConnected`, the default) | the loss of the primary, when a replica that acknowledged is promoted | nothing lost (the promoted replica continues the record's replication history) |
/// | Sentinel (`redis-sentinel://`) | the same; the store follows the new primary | the same |
/// | Cluster (`redis-cluster://`) | per shard, as primary + replicas above | a shard restarted, emptied or resharded: a window for its buckets |
/// | any, after `FLUSHALL`/`FLUSHDB` | — | a window; `initialize` refuses |
///
/// Assumed, not checked: the servers' clocks agree within the policy's margin (a promoted
/// replica's `TIME` dates every entry); a promoted replica had acknowledged the reservations
/// (one disconnected while they were written is not noticed: `ReplicaAcks::AtLeast` and the
/// server's `min-replicas-to-write` narrow that); the fsync setting read at connect is not
/// weakened at runtime.
///
/// ```no_run
/// use std::sync::Arc;
/// use sa360_video_sdk::video_session::{RedisStore, VideoSessionClient};
///
/// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
/// let store = RedisStore::builder("rediss-sentinel://app:secret@s1:26379,s2:26379,s3:26379#lockout")
///     .ca_file("/etc/ssl/private-ca.pem")
///     .connect()
///     .await?;
/// let client = VideoSessionClient::builder("https://video.example.com")
///     .lockout_store(Arc::new(store))
///     .build()?;
/// # Ok(()) }
/// ```
#[derive(Clone)]
#[cfg_attr(docsrs, doc(cfg(feature = "redis")))]
pub struct RedisStore {
    inner: Arc<Inner>,
}

struct Inner {
    backend: Backend,
    url: RedisUrl,
    prefix: String,
    timeout: Duration,
    acks: ReplicaAcks,
    ack_timeout: Duration,
    /// Replicas the primary reported at the last reservation.
    replicas_seen: AtomicU32,
    /// The server keeps every acknowledged write across a restart
    /// (`appendonly yes`, `appendfsync always`, read when connecting).
    durable: bool,
    /// The SHA-1 of each step's script, for `EVALSHA`.
    shas: [String; 6],
}

/// The steps, in the order of `Inner::shas`.
const STEPS: [&str; 6] = ["reserve", "resolve", "hold", "view", "init", "force"];

/// The script of one step: the shared text behind a line naming the step.
fn step_source(step: &str) -> String {
    format!("local STEP = '{step}'\n{SCRIPT}")
}

impl fmt::Debug for RedisStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RedisStore")
            .field("location", &self.inner.url.to_string())
            .field("topology", &self.inner.url.topology.to_string())
            .field("prefix", &self.inner.prefix)
            .field("acks", &self.inner.acks)
            .finish_non_exhaustive()
    }
}

/// Builds a [`RedisStore`]; see [`RedisStore::builder`]. `Debug` shows the
/// URL without its password.
#[derive(Clone)]
#[cfg_attr(docsrs, doc(cfg(feature = "redis")))]
pub struct RedisStoreBuilder {
    url: String,
    timeout: Duration,
    prefix: String,
    ca_file: Option<PathBuf>,
    acks: ReplicaAcks,
    ack_timeout: Duration,
    sentinel_credentials: Option<(String, secrecy::SecretString)>,
    password: Option<secrecy::SecretString>,
}

impl fmt::Debug for RedisStoreBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let url = RedisUrl::parse(&self.url)
            .map_or_else(|_| "(not a valid Redis URL)".to_owned(), |u| u.to_string());
        f.debug_struct("RedisStoreBuilder")
            .field("url", &url)
            .field("timeout", &self.timeout)
            .field("prefix", &self.prefix)
            .field("ca_file", &self.ca_file)
            .field("acks", &self.acks)
            .field("ack_timeout", &self.ack_timeout)
            .field(
                "sentinel_credentials",
                &self
                    .sentinel_credentials
                    .as_ref()
                    .map(|(user, _)| (user, "***")),
            )
            .field("password", &self.password.as_ref().map(|_| "***"))
            .finish()
    }
}

impl RedisStoreBuilder {
    /// The bound on connecting and on each answer (default 2 s; 1 ms to 60 s).
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// The key prefix (default [`DEFAULT_KEY_PREFIX`]), to share a server
    /// between applications or tests: at most 200 characters, no `{` or `}`
    /// (the store's keys put it inside a Cluster hash tag).
    pub fn key_prefix(mut self, prefix: impl Into<String>) -> Self {
        self.prefix = prefix.into();
        self
    }

    /// A PEM file of the CA certificates that sign the servers' TLS
    /// certificates (a private CA), for `rediss…://` URLs; default: the
    /// system's roots (`SSL_CERT_FILE` and `SSL_CERT_DIR` are honoured).
    pub fn ca_file(mut self, path: impl Into<PathBuf>) -> Self {
        self.ca_file = Some(path.into());
        self
    }

    /// Which replicas must acknowledge a reservation before its login is sent
    /// (default [`ReplicaAcks::AllConnected`]).
    pub fn replica_acks(mut self, acks: ReplicaAcks) -> Self {
        self.acks = acks;
        self
    }

    /// The user and password of the sentinels themselves, for a
    /// `redis-sentinel://` URL whose sentinels require them (`sentinel
    /// sentinel-user` / `sentinel-pass`, or `requirepass` on the sentinel). The
    /// URL's user and password are the data nodes'; by default the sentinels
    /// are asked without credentials. An empty user name means `default`.
    pub fn sentinel_credentials(
        mut self,
        username: impl Into<String>,
        password: impl Into<String>,
    ) -> Self {
        self.sentinel_credentials = Some((
            username.into(),
            secrecy::SecretString::from(password.into()),
        ));
        self
    }

    /// The data nodes' password, given outside the URL (read from a secret file or the
    /// environment, so it stays out of command lines and configuration). The URL then carries no
    /// password; its user name, if any, is the ACL user.
    pub fn password(mut self, password: impl Into<String>) -> Self {
        self.password = Some(secrecy::SecretString::from(password.into()));
        self
    }

    /// How long to wait for those acknowledgements (default 1 s; 1 ms to 60 s).
    /// Not acknowledged in time: the login is not sent.
    pub fn replica_ack_timeout(mut self, timeout: Duration) -> Self {
        self.ack_timeout = timeout;
        self
    }

    /// Checks the settings, then connects (bounded by twice the timeout). A
    /// Cluster or Sentinel URL is resolved now; errors name the setting or the
    /// URL (never its password).
    pub async fn connect(self) -> Result<RedisStore, StoreError> {
        let mut url = RedisUrl::parse(&self.url).map_err(|e| {
            StoreError::new(
                "(Redis URL)",
                format!("the lockout store URL is not valid: {e}"),
            )
        })?;
        let location = url.to_string();
        let setting = |name: &str, why: String| {
            StoreError::new(
                location.clone(),
                format!("RedisStoreBuilder::{name}: {why}"),
            )
        };
        for (name, value) in [
            ("timeout", self.timeout),
            ("replica_ack_timeout", self.ack_timeout),
        ] {
            if value < Duration::from_millis(1) || value > Duration::from_secs(60) {
                return Err(setting(name, format!("{value:?} is not from 1 ms to 60 s")));
            }
        }
        if self.prefix.len() > MAX_PREFIX || self.prefix.contains(['{', '}']) {
            return Err(setting(
                "key_prefix",
                format!("at most {MAX_PREFIX} characters, without '{{' or '}}'"),
            ));
        }
        if let Some(password) = &self.password {
            if url.password.is_some() {
                return Err(setting(
                    "password",
                    "is set, but the URL holds a password too: give it once".to_owned(),
                ));
            }
            url.password = Some(secrecy::ExposeSecret::expose_secret(password).to_owned());
        }
        let certificates = match &self.ca_file {
            None => None,
            Some(path) => {
                if !url.tls {
                    return Err(setting(
                        "ca_file",
                        "is set, but the URL is not a TLS one (rediss://, rediss-sentinel://, rediss-cluster://)".to_owned(),
                    ));
                }
                Some(read_ca(path).map_err(|e| setting("ca_file", e))?)
            }
        };
        if self.sentinel_credentials.is_some() && url.topology != Topology::Sentinel {
            return Err(setting(
                "sentinel_credentials",
                "is set, but the URL is not a redis-sentinel:// one".to_owned(),
            ));
        }
        let connect = connect_backend(
            &url,
            self.timeout,
            certificates,
            self.sentinel_credentials.as_ref(),
        );
        let backend = tokio::time::timeout(self.timeout * 2, connect)
            .await
            .map_err(|_| {
                StoreError::new(
                    location.clone(),
                    format!(
                        "cannot connect within {} s; no login is sent while the lockout store is unavailable",
                        (self.timeout * 2).as_secs_f64()
                    ),
                )
            })?
            .map_err(|e| {
                StoreError::new(
                    location.clone(),
                    format!(
                        "cannot connect: {}; no login is sent while the lockout store is unavailable",
                        scrub(&e, &url)
                    ),
                )
            })?;
        let durable = durability(&backend, &url).await;
        tracing::info!(store = %location, topology = %url.topology, durable, "lockout store connected");
        Ok(RedisStore {
            inner: Arc::new(Inner {
                backend,
                url,
                prefix: self.prefix,
                timeout: self.timeout,
                acks: self.acks,
                ack_timeout: self.ack_timeout,
                replicas_seen: AtomicU32::new(0),
                durable,
                shas: STEPS
                    .map(|step| redis::Script::new(&step_source(step)).get_hash().to_owned()),
            }),
        })
    }
}

/// Whether the server keeps every acknowledged write across a restart
/// (`appendonly yes` and `appendfsync always`), as `CONFIG GET` reports it. A
/// Cluster, or a server where `CONFIG` is disabled or refused (managed
/// services), counts as not durable: its restarts are losses. Also warns when
/// the `maxmemory-policy` may evict the store's keys, read from `INFO memory`
/// (which managed services answer where they refuse `CONFIG`).
async fn durability(backend: &Backend, url: &RedisUrl) -> bool {
    /// `INFO memory`, then the fsync settings (an error of its own: `CONFIG` may be refused).
    type Answers = (String, Result<(Vec<String>, Vec<String>), RedisError>);
    async fn ask(c: &mut impl redis::aio::ConnectionLike) -> Result<Answers, RedisError> {
        let memory: String = redis::cmd("INFO").arg("memory").query_async(c).await?;
        let mut config = redis::pipe();
        config.cmd("CONFIG").arg("GET").arg("appendonly");
        config.cmd("CONFIG").arg("GET").arg("appendfsync");
        Ok((memory, config.query_async(c).await))
    }
    let answers = match backend {
        Backend::Standalone(c) => ask(&mut c.clone()).await,
        Backend::Sentinel(s) => match s.connection().await {
            Ok(mut c) => ask(&mut c).await,
            Err(e) => Err(e),
        },
        Backend::Cluster(_) => return false,
    };
    let Ok((memory, config)) = answers else {
        return false;
    };
    if let Some(policy) = memory
        .lines()
        .find_map(|l| l.strip_prefix("maxmemory_policy:"))
        .map(str::trim)
        .filter(|p| p.starts_with("allkeys"))
    {
        tracing::warn!(store = %url, policy, "the Redis server may evict the lockout store's keys (maxmemory-policy allkeys-*): each eviction holds back the logins of the accounts it touched for one lockout window; set maxmemory-policy to noeviction or a volatile-* policy");
    }
    let Ok((appendonly, appendfsync)) = config else {
        return false;
    };
    appendonly.get(1).is_some_and(|v| v == "yes")
        && appendfsync.get(1).is_some_and(|v| v == "always")
}

/// A redis error's text. The redis crate never formats the password (it is sent in `AUTH`
/// only); should a server or a future version echo it back, the echo is redacted as a whole
/// value ([`redact_echoes`]), never by searching for it inside other words.
fn scrub(e: &RedisError, url: &RedisUrl) -> String {
    let secrets: Vec<&str> = url.password.as_deref().into_iter().collect();
    redact_echoes(&e.to_string(), &secrets)
}

/// The cause the script recorded (`why`).
fn loss_cause(why: &str) -> StoreLoss {
    match why {
        "restart" => StoreLoss::Restarted,
        "flush" => StoreLoss::Flushed,
        "evict" => StoreLoss::Evicted,
        "start" => StoreLoss::ServerStarted,
        "format" => StoreLoss::OtherFormat,
        _ => StoreLoss::NoRecord,
    }
}

/// The error of `initialize` for the buckets it refused: `(bucket, cause, wait µs)`, a wait
/// for a noticed loss, none for counts.
fn init_refusal(refused: &[(u8, String, Option<i64>)]) -> Option<String> {
    let (_, why, _) = refused.first()?;
    let buckets: String = refused.iter().map(|(b, _, _)| char::from(*b)).collect();
    let longest = refused.iter().filter_map(|(_, _, w)| *w).max();
    Some(match longest {
        Some(wait) => format!(
            "not declared new: {} of 16 buckets ({buckets}) noticed a loss of data ({}), and attempts it forgot may still count at the service for {} s more; logins of those accounts resume by themselves then. Declaring it new now could block accounts",
            refused.len(),
            loss_cause(why),
            wait.max(0) / 1_000_000 + 1,
        ),
        None => format!(
            "not declared new: {} of 16 buckets ({buckets}) hold lockout counts, so this store is in use",
            refused.len()
        ),
    })
}

/// How a reservation ended, as the script and `WAIT` reported it.
struct Reserved {
    view: AccountView,
    replicas: u32,
    acked: u32,
}

impl RedisStore {
    /// Connects to the deployment `url` names (see [`RedisStore`] for the
    /// forms), with the defaults: 2 s bounds, every connected replica
    /// acknowledging within 1 s, the system's TLS roots.
    pub async fn connect(url: &str) -> Result<Self, StoreError> {
        Self::builder(url).connect().await
    }

    /// A builder for a store on the deployment `url` names, to set the
    /// timeouts, the key prefix, a CA file and the replica acknowledgements.
    pub fn builder(url: impl Into<String>) -> RedisStoreBuilder {
        RedisStoreBuilder {
            url: url.into(),
            timeout: DEFAULT_REDIS_TIMEOUT,
            prefix: DEFAULT_KEY_PREFIX.to_owned(),
            ca_file: None,
            acks: ReplicaAcks::AllConnected,
            ack_timeout: DEFAULT_REPLICA_ACK_TIMEOUT,
            sentinel_credentials: None,
            password: None,
        }
    }

    /// The kind of deployment the URL named: `standalone`, `sentinel` or
    /// `cluster`.
    pub fn topology(&self) -> &'static str {
        match self.inner.url.topology {
            Topology::Standalone => "standalone",
            Topology::Sentinel => "sentinel",
            Topology::Cluster => "cluster",
        }
    }

    /// Declares the store new: marks every bucket "complete since always", so
    /// logins are no longer held back for a lockout window. Run it once, by
    /// hand, when the Redis deployment has never held lockout counts (`apictl
    /// video lockout-init`), also after logins were refused for want of it
    /// ([`StoreLoss::NoRecord`](crate::video_session::StoreLoss::NoRecord)).
    ///
    /// It refuses (and changes nothing in those buckets) where the store
    /// holds counts, or has noticed a loss whose attempts may still count at
    /// the service (a restart, a flush, an eviction, keys of another format):
    /// the error says when that ends. Returns how many buckets it declared new
    /// (0 to 16; 0 when the store was already initialized).
    pub async fn initialize(&self) -> Result<u32, StoreError> {
        self.declare_new("init").await
    }

    /// Declares the store new even where it holds counts or noticed a loss.
    /// **This can block accounts**: attempts the store forgot may still count
    /// at the service, and the counts it holds are dropped. Only for a
    /// deployment an operator knows no login used within the last lockout
    /// window (`apictl video lockout-init --force`).
    pub async fn force_initialize(&self) -> Result<u32, StoreError> {
        self.declare_new("force").await
    }

    async fn declare_new(&self, step: &str) -> Result<u32, StoreError> {
        let mut changed = 0;
        let mut refused = Vec::new();
        let limits =
            super::policy::LockoutPolicy::SEED.limits(super::guard::DEFAULT_ATTEMPT_TIMEOUT);
        for bucket in BUCKETS {
            let id = AttemptId::from_u128(0);
            let mut eval = false;
            let value = loop {
                let cmd =
                    self.step_cmd(eval, step, &self.bucket_key(*bucket), "", id, &limits, &[]);
                let mut pipe = redis::pipe();
                pipe.add_command(cmd);
                match self.query_pipe(&pipe, Duration::ZERO).await {
                    Err(Failure::Redis(e)) if !eval && e.code() == Some("NOSCRIPT") => eval = true,
                    Err(f) => return Err(self.failure(step, f)),
                    Ok(values) => {
                        break values
                            .into_iter()
                            .next()
                            .ok_or_else(|| self.error("the server answered nothing"))?;
                    }
                }
            };
            let (outcome, wait, why): (u8, i64, String) =
                redis::from_redis_value(value).map_err(|e| {
                    self.error(&format!(
                        "the lockout script answered in an unknown shape: {e}"
                    ))
                })?;
            match outcome {
                0 => changed += 1,
                1 => {}
                2 => refused.push((*bucket, why, Some(wait))),
                _ => refused.push((*bucket, why, None)),
            }
        }
        if let Some(message) = init_refusal(&refused) {
            return Err(self.error(&message));
        }
        tracing::info!(store = %self.inner.url, changed, "lockout store declared new");
        Ok(changed)
    }

    /// The bucket key of `bucket` (a hex digit).
    fn bucket_key(&self, bucket: u8) -> String {
        format!("{{{}{}}}:store", self.inner.prefix, char::from(bucket))
    }

    fn error(&self, what: &str) -> StoreError {
        StoreError::new(self.inner.url.to_string(), what.to_owned())
    }

    fn redis_error(&self, step: &str, e: &RedisError) -> StoreError {
        self.error(&format!(
            "the lockout step ({step}) failed: {}",
            scrub(e, &self.inner.url)
        ))
    }

    /// The `EVALSHA` (or `EVAL`) of one step on `account` (64 hex digits; empty
    /// for a step on the bucket alone) of `bucket`.
    #[allow(clippy::too_many_arguments)]
    fn step_cmd(
        &self,
        eval: bool,
        step: &str,
        bucket: &str,
        account: &str,
        id: AttemptId,
        limits: &Limits,
        extra: &[String],
    ) -> redis::Cmd {
        let mut cmd = if eval {
            let mut c = redis::cmd("EVAL");
            c.arg(step_source(step));
            c
        } else {
            let mut c = redis::cmd("EVALSHA");
            c.arg(self.sha(step));
            c
        };
        cmd.arg(1)
            .arg(bucket)
            .arg(account)
            .arg(id.to_string())
            .arg(limits.max_failures)
            .arg(micros(limits.unknown_for))
            .arg(micros(limits.failure_for))
            .arg(micros(limits.block_beyond_window))
            .arg(micros(limits.margin))
            .arg(micros(limits.longest_block))
            .arg(if self.inner.durable { "1" } else { "0" });
        for a in extra {
            cmd.arg(a);
        }
        cmd
    }

    fn sha(&self, step: &str) -> &str {
        let i = STEPS.iter().position(|s| *s == step).unwrap_or(0);
        &self.inner.shas[i]
    }

    /// Runs `pipe` on the deployment's connection (a Cluster routes it by the
    /// first key), bounded by the timeout plus `extra`.
    async fn query_pipe(
        &self,
        pipe: &redis::Pipeline,
        extra: Duration,
    ) -> Result<Vec<Value>, Failure> {
        let bound = self.inner.timeout + extra;
        let run = async {
            match &self.inner.backend {
                Backend::Standalone(c) => pipe.query_async::<Vec<Value>>(&mut c.clone()).await,
                Backend::Cluster(c) => pipe.query_async::<Vec<Value>>(&mut c.clone()).await,
                Backend::Sentinel(s) => {
                    let mut connection = s.connection().await?;
                    let answer = pipe.query_async::<Vec<Value>>(&mut connection).await;
                    if let Err(e) = &answer {
                        s.forget_after(e).await;
                    }
                    answer
                }
            }
        };
        match tokio::time::timeout(bound, run).await {
            Ok(Ok(values)) => Ok(values),
            Ok(Err(e)) => Err(Failure::Redis(e)),
            Err(_) => {
                if let Backend::Sentinel(s) = &self.inner.backend {
                    s.current.lock().await.take();
                }
                Err(Failure::TimedOut(bound))
            }
        }
    }

    fn failure(&self, step: &str, f: Failure) -> StoreError {
        match f {
            Failure::Redis(e) => self.redis_error(step, &e),
            Failure::TimedOut(d) => self.error(&format!(
                "the lockout step ({step}) got no answer within {} ms",
                d.as_millis()
            )),
        }
    }

    /// Runs one step; for a reservation, waits for `wait_for` replicas in the
    /// same pipeline (so the `WAIT` follows the script's write on the same
    /// connection). Retries once with `EVAL` when the server lacks the script.
    async fn run(
        &self,
        step: &str,
        key: &AccountKey,
        id: AttemptId,
        limits: &Limits,
        extra: &[String],
        wait_for: Option<u32>,
    ) -> Result<(AccountView, u32, u32), StoreError> {
        let mut eval = false;
        loop {
            let mut pipe = redis::pipe();
            let account = key.to_string();
            let bucket = self.bucket_key(account.as_bytes()[0]);
            pipe.add_command(self.step_cmd(eval, step, &bucket, &account, id, limits, extra));
            let mut extra_time = Duration::ZERO;
            if let Some(n) = wait_for {
                pipe.cmd("WAIT")
                    .arg(n)
                    .arg(u64::try_from(self.inner.ack_timeout.as_millis()).unwrap_or(u64::MAX));
                extra_time = self.inner.ack_timeout;
            }
            match self.query_pipe(&pipe, extra_time).await {
                Err(Failure::Redis(e)) if !eval && e.code() == Some("NOSCRIPT") => eval = true,
                Err(f) => return Err(self.failure(step, f)),
                Ok(values) => return self.decode(values, wait_for.is_some(), limits),
            }
        }
    }

    fn decode(
        &self,
        values: Vec<Value>,
        waited: bool,
        limits: &Limits,
    ) -> Result<(AccountView, u32, u32), StoreError> {
        let mut values = values.into_iter();
        let result = values
            .next()
            .ok_or_else(|| self.error("the server answered nothing"))?;
        let (counted, refusal, wait, blocked_for, reserved, replicas, why): (
            u32,
            u8,
            i64,
            i64,
            u8,
            i64,
            String,
        ) = redis::from_redis_value(result).map_err(|e| {
            self.error(&format!(
                "the lockout script answered in an unknown shape: {e}"
            ))
        })?;
        let acked = if waited {
            let v = values
                .next()
                .ok_or_else(|| self.error("WAIT answered nothing"))?;
            redis::from_redis_value::<u32>(v)
                .map_err(|e| self.error(&format!("WAIT answered in an unknown shape: {e}")))?
        } else {
            0
        };
        let us = |v: i64| Duration::from_micros(u64::try_from(v).unwrap_or(0));
        let refusal = match refusal {
            0 => None,
            1 => Some(RefusalReason::BudgetExhausted {
                failures_in_window: counted,
                window: limits.window,
            }),
            2 => Some(RefusalReason::KnownBlock),
            3 => Some(RefusalReason::PresumedBlock {
                failures_in_window: counted,
                window: limits.window,
            }),
            4 => Some(RefusalReason::RateLimited),
            5 => Some(RefusalReason::StoreForgot {
                cause: loss_cause(&why),
            }),
            other => {
                return Err(self.error(&format!(
                    "the lockout script answered an unknown refusal {other}"
                )));
            }
        };
        let view = AccountView {
            counted,
            refusal: refusal.map(|r| (r, us(wait))),
            blocked_for: (blocked_for >= 0).then(|| us(blocked_for)),
            reserved: reserved == 1,
        };
        Ok((
            view,
            u32::try_from(replicas.max(0)).unwrap_or(u32::MAX),
            acked,
        ))
    }

    /// Reserves, then makes sure the replicas the settings ask for have the
    /// reservation; withdraws it (nothing is sent) when they do not. Bounded
    /// as a whole by the timeout plus the acknowledgement timeout.
    async fn reserve_acknowledged(
        &self,
        key: &AccountKey,
        id: AttemptId,
        limits: &Limits,
    ) -> Result<AccountView, StoreError> {
        let bound = self.inner.timeout + self.inner.ack_timeout;
        match tokio::time::timeout(bound, self.reserve_rounds(key, id, limits)).await {
            Ok(result) => result,
            Err(_) => Err(self.error(&format!(
                "the reservation got no answer, or no acknowledgement from the replicas, within {} ms",
                bound.as_millis()
            ))),
        }
    }

    async fn reserve_rounds(
        &self,
        key: &AccountKey,
        id: AttemptId,
        limits: &Limits,
    ) -> Result<AccountView, StoreError> {
        let wants = |connected: u32| match self.inner.acks {
            ReplicaAcks::AllConnected => Some(connected),
            ReplicaAcks::AtLeast(n) => Some(n),
            ReplicaAcks::None => None,
        };
        let mut wait_for = wants(self.inner.replicas_seen.load(Ordering::Relaxed));
        // At most two rounds: the second when more replicas were connected than
        // the first round waited for (the step is idempotent for one attempt id).
        for round in 0..2 {
            let (view, replicas, acked) =
                self.run("reserve", key, id, limits, &[], wait_for).await?;
            self.inner.replicas_seen.store(replicas, Ordering::Relaxed);
            let r = Reserved {
                view,
                replicas,
                acked,
            };
            if !r.view.reserved {
                return Ok(r.view);
            }
            let Some(required) = wants(r.replicas) else {
                return Ok(r.view);
            };
            if r.acked >= required {
                return Ok(r.view);
            }
            if round == 0 && wait_for.unwrap_or(0) < required && r.replicas >= required {
                wait_for = Some(required);
                continue;
            }
            return Err(self.not_acknowledged(key, id, limits, &r, required));
        }
        unreachable!("the second round always returns")
    }

    /// The error for a reservation the replicas did not acknowledge; its
    /// withdrawal runs on its own (it only gives the budget back: leaving the
    /// reservation counted is safe, so the caller does not wait for it).
    fn not_acknowledged(
        &self,
        key: &AccountKey,
        id: AttemptId,
        limits: &Limits,
        r: &Reserved,
        required: u32,
    ) -> StoreError {
        let (store, key, limits) = (self.clone(), *key, *limits);
        tokio::spawn(async move {
            let extra = ["not_counted".to_owned()];
            if let Err(e) = store.run("resolve", &key, id, &limits, &extra, None).await {
                tracing::debug!(error = %e, "an unacknowledged reservation stays counted");
            }
        });
        let setting = "RedisStoreBuilder::replica_acks";
        let message = if r.replicas < required {
            format!(
                "{required} replicas must acknowledge each reservation but the primary has {} connected (connect the replicas, or lower {setting})",
                r.replicas
            )
        } else {
            format!(
                "the reservation was acknowledged by {} of {required} replicas within {} ms, so a failover could lose it (check the replicas' link to the primary, or raise RedisStoreBuilder::replica_ack_timeout; {setting} sets how many must acknowledge)",
                r.acked,
                self.inner.ack_timeout.as_millis(),
            )
        };
        self.error(&message)
    }
}

/// Why a query failed.
enum Failure {
    Redis(RedisError),
    TimedOut(Duration),
}

impl LockoutStore for RedisStore {
    fn reserve<'a>(
        &'a self,
        key: &'a AccountKey,
        id: AttemptId,
        _now: SystemTime,
        limits: Limits,
    ) -> StoreFuture<'a, AccountView> {
        Box::pin(async move { self.reserve_acknowledged(key, id, &limits).await })
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
            let extra = [resolution.to_owned()];
            let (view, _, _) = self.run("resolve", key, id, &limits, &extra, None).await?;
            Ok(view)
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
            let (view, _, _) = self.run("hold", key, id, &limits, &extra, None).await?;
            Ok(view)
        })
    }

    fn view<'a>(
        &'a self,
        key: &'a AccountKey,
        _now: SystemTime,
        limits: Limits,
    ) -> StoreFuture<'a, AccountView> {
        Box::pin(async move {
            let id = AttemptId::from_u128(0);
            let (view, _, _) = self.run("view", key, id, &limits, &[], None).await?;
            Ok(view)
        })
    }

    fn location(&self) -> String {
        self.inner.url.to_string()
    }
}

#[cfg(test)]
mod tests;

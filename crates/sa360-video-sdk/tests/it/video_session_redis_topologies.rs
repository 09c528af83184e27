//! `RedisStore` against Redis as it is deployed, every server started by the test on loopback
//! (`test_support`'s harness): TLS with a private CA and an ACL user, a primary whose replica lags
//! behind a proxy and is promoted by Sentinel after the primary's host is lost, a standalone
//! server restarted without its data or with its append-only file, and a Cluster whose node
//! restarts empty.
//!
//! Each failure scenario is a *storm*: 20 tasks in 4 OS processes (5 each) log in with a wrong
//! password again and again for a few seconds, each process with its own store connection,
//! while the test loses or restarts a server at a chosen moment. The service (the fake) is the
//! judge: it must never have blocked the account, and every login call must return within 5 s
//! (a store that is down fails closed, it does not hang).
//!
//! Without `redis-server` the tests print SKIPPED and pass, unless `REQUIRE_REDIS=1`.

use std::path::Path;
use std::process::{Child, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use sa360_video_fakes::{DomainUser, VideoSessionFake};
use sa360_video_sdk::http::BaseUrl;
use sa360_video_sdk::video_session::{
    Credentials, Error, RedisStore, ReplicaAcks, VideoSessionClient,
};
use test_support::{
    Cluster, RedisOptions, ReplicaSet, Sentinels, TestCa, test_as_child, wait_for_file,
    wait_for_file_async,
};

/// Processes in a storm, and login tasks in each.
const PROCESSES: usize = 4;
const TASKS: usize = 5;
/// The longest a login call may take, store outages included.
pub(crate) const FAIL_CLOSED_WITHIN: Duration = Duration::from_secs(5);

/// What one process's logins ended as.
#[derive(Debug, Default, Clone)]
pub(crate) struct Tally {
    /// Answered by the service with "wrong password" (sent).
    pub(crate) failed: u32,
    /// Refused by the guard (not sent).
    pub(crate) refused: u32,
    /// The store failed (not sent).
    pub(crate) store_errors: u32,
    /// Answered 423 (sent, and the account is blocked: the promise broken).
    pub(crate) blocked: u32,
    pub(crate) other: Vec<String>,
    pub(crate) slowest: Duration,
}

impl Tally {
    fn line(&self) -> String {
        format!(
            "STORM failed={} refused={} store_errors={} blocked={} other={} slowest_ms={}",
            self.failed,
            self.refused,
            self.store_errors,
            self.blocked,
            self.other.len(),
            self.slowest.as_millis()
        )
    }

    fn parse(text: &str) -> Self {
        let line = text
            .lines()
            .find_map(|l| l.find("STORM ").map(|i| &l[i..]))
            .unwrap_or_else(|| panic!("no STORM line in the child's output:\n{text}"));
        let field = |name: &str| -> u64 {
            line.split_whitespace()
                .find_map(|p| p.strip_prefix(&format!("{name}=")))
                .and_then(|v| v.parse().ok())
                .unwrap_or_else(|| panic!("{name} in {line}"))
        };
        let other: Vec<String> = text
            .lines()
            .filter_map(|l| l.split_once("STORM-OTHER ").map(|(_, o)| o.to_owned()))
            .collect();
        Self {
            failed: field("failed") as u32,
            refused: field("refused") as u32,
            store_errors: field("store_errors") as u32,
            blocked: field("blocked") as u32,
            other,
            slowest: Duration::from_millis(field("slowest_ms")),
        }
    }
}

/// Where a storm's processes find the service and the store.
pub(crate) struct StormTarget {
    pub(crate) fake_url: String,
    pub(crate) secret_key: String,
    pub(crate) store_url: String,
    pub(crate) ca_file: Option<String>,
    pub(crate) acks: &'static str,
    /// How much faster than real time the service's clock runs (1: real time); the clients'
    /// lockout policy and HTTP timeout are scaled to match ([`scaled_client`]).
    pub(crate) rate: u32,
}

/// The service's rule (10 minutes) seen through a clock `rate` times faster: the lockout policy
/// with the window and block divided by `rate`, a 500 ms margin and a 1 s HTTP timeout (`rate` 1:
/// the defaults).
pub(crate) fn scaled_client(
    builder: sa360_video_sdk::video_session::VideoSessionClientBuilder,
    rate: u32,
) -> sa360_video_sdk::video_session::VideoSessionClientBuilder {
    if rate <= 1 {
        return builder;
    }
    let span = Duration::from_secs(600) / rate;
    builder
        .lockout_policy(
            sa360_video_sdk::video_session::LockoutPolicy::SEED
                .window(span)
                .block(span)
                .margin(Duration::from_millis(500)),
        )
        .http_options(sa360_video_sdk::http::HttpOptions::default().timeout(Duration::from_secs(1)))
}

pub(crate) async fn connect(url: &str, ca: Option<&str>, acks: &str) -> RedisStore {
    let mut builder = RedisStore::builder(url);
    if let Some(ca) = ca {
        builder = builder.ca_file(ca);
    }
    if acks == "none" {
        builder = builder.replica_acks(ReplicaAcks::None);
    }
    builder.connect().await.expect("the store connects")
}

/// One storm process's client, connected to the store.
async fn storm_client(target: &StormTarget) -> Arc<VideoSessionClient> {
    let store = connect(&target.store_url, target.ca_file.as_deref(), target.acks).await;
    Arc::new(
        scaled_client(
            VideoSessionClient::builder(BaseUrl::parse(&target.fake_url).unwrap()),
            target.rate,
        )
        .lockout_store(Arc::new(store))
        .build()
        .unwrap(),
    )
}

/// One storm process: `TASKS` tasks log in with a wrong password for `duration`.
async fn storm_here(
    client: Arc<VideoSessionClient>,
    target: &StormTarget,
    duration: Duration,
) -> Tally {
    let until = Instant::now() + duration;
    let mut tasks = Vec::new();
    for _ in 0..TASKS {
        let client = Arc::clone(&client);
        let creds = Credentials::new(target.secret_key.clone(), "demo.user", "wrong").unwrap();
        tasks.push(tokio::spawn(async move {
            let mut tally = Tally::default();
            while Instant::now() < until {
                let started = Instant::now();
                let outcome = client.login(&creds).send().await;
                tally.slowest = tally.slowest.max(started.elapsed());
                match outcome {
                    Err(Error::InvalidCredentials { .. }) => tally.failed += 1,
                    Err(Error::LockoutRefused { .. }) => tally.refused += 1,
                    Err(Error::Store(_)) => tally.store_errors += 1,
                    Err(Error::AccountBlocked { .. }) => tally.blocked += 1,
                    other => tally.other.push(format!("{other:?}")),
                }
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            tally
        }));
    }
    let mut all = Tally::default();
    for t in tasks {
        let t = t.await.unwrap();
        all.failed += t.failed;
        all.refused += t.refused;
        all.store_errors += t.store_errors;
        all.blocked += t.blocked;
        all.other.extend(t.other);
        all.slowest = all.slowest.max(t.slowest);
    }
    all
}

/// A storm process (started by [`storm`]).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "a child process of the storm tests"]
async fn storm_child() {
    let var = |name: &str| std::env::var(name).unwrap();
    let target = StormTarget {
        fake_url: var("STORM_FAKE"),
        secret_key: var("STORM_SECRET_KEY"),
        store_url: var("STORM_STORE"),
        ca_file: std::env::var("STORM_CA").ok(),
        acks: if var("STORM_ACKS") == "none" {
            "none"
        } else {
            "all"
        },
        rate: var("STORM_RATE").parse().unwrap(),
    };
    let duration = Duration::from_millis(var("STORM_MILLIS").parse().unwrap());
    // Connected before the start, as a running replica is.
    let client = storm_client(&target).await;
    std::fs::write(var("STORM_READY"), b"").unwrap();
    wait_for_file(Path::new(&var("STORM_GO")), Duration::from_secs(60));
    let tally = storm_here(client, &target, duration).await;
    println!("{}", tally.line());
    for o in &tally.other {
        println!("STORM-OTHER {o}");
    }
}

impl From<Duration> for Moment {
    fn from(d: Duration) -> Self {
        Moment::After(d)
    }
}

/// What a storm did, over all processes.
#[derive(Debug)]
pub(crate) struct StormResult {
    pub(crate) tally: Tally,
    /// Failures the service counted for the account, and blocks it started.
    pub(crate) service_failures: u32,
    pub(crate) service_blocks: u32,
}

/// When the test strikes during a storm.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Moment {
    /// This long after the processes start.
    After(Duration),
    /// As soon as the service has counted this many failures of the account (the newest
    /// reservations are then younger than any replication lag).
    ServiceCounted(u64),
}

/// Runs a storm of `duration` against `target`, calling `fault` (on a blocking thread) at
/// `moment`.
pub(crate) async fn storm(
    fake: &VideoSessionFake,
    target: &StormTarget,
    duration: Duration,
    moment: impl Into<Moment>,
    fault: impl FnOnce() + Send + 'static,
) -> StormResult {
    let moment = moment.into();
    let dir = tempfile::tempdir().unwrap();
    let go = dir.path().join("go");
    let mut children: Vec<Child> = Vec::new();
    for i in 0..PROCESSES {
        let ready = dir.path().join(format!("ready-{i}"));
        let mut command = test_as_child("video_session_redis_topologies::storm_child");
        command
            .args(["--test-threads", "1"])
            .env("STORM_READY", &ready)
            .env("STORM_GO", &go)
            .env("STORM_FAKE", &target.fake_url)
            .env("STORM_SECRET_KEY", &target.secret_key)
            .env("STORM_STORE", &target.store_url)
            .env("STORM_ACKS", target.acks)
            .env("STORM_RATE", target.rate.to_string())
            .env("STORM_MILLIS", duration.as_millis().to_string())
            .stdout(Stdio::piped());
        if let Some(ca) = &target.ca_file {
            command.env("STORM_CA", ca);
        }
        children.push(command.spawn().unwrap());
        wait_for_file_async(&ready, Duration::from_secs(60)).await;
    }
    std::fs::write(&go, b"").unwrap();
    let account = DomainUser::new(fake.demo().domain_id, "demo.user");
    match moment {
        Moment::After(at) => tokio::time::sleep(at).await,
        Moment::ServiceCounted(n) => {
            let started = Instant::now();
            while fake
                .ledger()
                .account(&account)
                .is_none_or(|s| s.failures_total < n)
            {
                assert!(
                    started.elapsed() < duration,
                    "the service never counted {n} failures"
                );
                tokio::time::sleep(Duration::from_millis(1)).await;
            }
        }
    }
    tokio::task::spawn_blocking(fault).await.unwrap();
    let mut tally = Tally::default();
    for child in children {
        let output = tokio::task::spawn_blocking(move || child.wait_with_output())
            .await
            .unwrap()
            .unwrap();
        let text = String::from_utf8_lossy(&output.stdout).to_string();
        assert!(output.status.success(), "a storm process failed:\n{text}");
        let t = Tally::parse(&text);
        tally.failed += t.failed;
        tally.refused += t.refused;
        tally.store_errors += t.store_errors;
        tally.blocked += t.blocked;
        tally.other.extend(t.other);
        tally.slowest = tally.slowest.max(t.slowest);
    }
    let stats = fake.ledger().account(&account);
    let (service_failures, service_blocks) = stats.map_or((0, 0), |s| {
        (s.failures_total as u32, s.blocks_started as u32)
    });
    StormResult {
        tally,
        service_failures,
        service_blocks,
    }
}

/// The promise, for one storm: the service never blocked the account, at most 5 failures
/// reached it, and no login call took longer than [`FAIL_CLOSED_WITHIN`].
fn assert_kept(what: &str, r: &StormResult) {
    eprintln!(
        "{what}: {} sent, {} refused, {} store errors; the service counted {} failures, {} blocks; slowest call {} ms",
        r.tally.failed,
        r.tally.refused,
        r.tally.store_errors,
        r.service_failures,
        r.service_blocks,
        r.tally.slowest.as_millis()
    );
    assert!(r.tally.other.is_empty(), "{what}: {:?}", r.tally.other);
    assert_eq!(
        (r.service_blocks, r.tally.blocked),
        (0, 0),
        "{what}: the account was blocked: {r:?}"
    );
    assert!(r.service_failures <= 5, "{what}: {r:?}");
    assert!(
        r.tally.slowest < FAIL_CLOSED_WITHIN,
        "{what}: a login call took {:?}",
        r.tally.slowest
    );
}

/// Declares the deployment `url` names new, as an operator does once.
async fn initialize(url: &str, ca: Option<&str>) {
    let store = connect(url, ca, "all").await;
    assert_eq!(store.initialize().await.unwrap(), 16);
}

fn target(fake: &VideoSessionFake, store_url: String, ca: Option<&TestCa>) -> StormTarget {
    StormTarget {
        fake_url: fake.base_url().to_owned(),
        secret_key: fake.demo().secret_key.clone(),
        store_url,
        ca_file: ca.map(|c| c.ca_cert().display().to_string()),
        acks: "all",
        rate: 1,
    }
}

/// `rediss://` with a private CA and an ACL user: without the CA, in clear or with a wrong
/// password the connection is refused and no message shows the password; with them the count
/// is shared, also across a restart of the server without its data.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tls_with_a_private_ca_and_an_acl_user() {
    let ca = TestCa::create();
    let Some(server) = RedisOptions::new()
        .tls(&ca)
        .acl_user("lockout-app", "pw-Secret-42")
        .start("tls_with_a_private_ca_and_an_acl_user")
    else {
        return;
    };
    let url = format!(
        "rediss://lockout-app:pw-Secret-42@localhost:{}/0",
        server.port()
    );
    let ca_file = ca.ca_cert().display().to_string();

    // The system roots do not know the test's CA: no connection, and no password in the error.
    let e = RedisStore::connect(&url).await.unwrap_err();
    let text = format!("{e} {e:?}");
    assert!(!text.contains("pw-Secret-42"), "{text}");
    assert!(
        text.contains("rediss://lockout-app:***@localhost"),
        "{text}"
    );
    // A plain connection to the TLS port fails too (nothing is sent in clear).
    let plain = format!(
        "redis://lockout-app:pw-Secret-42@localhost:{}/0",
        server.port()
    );
    let e = RedisStore::builder(&plain)
        .timeout(Duration::from_millis(500))
        .connect()
        .await
        .unwrap_err();
    assert!(!e.to_string().contains("pw-Secret-42"), "{e}");
    // A wrong password is refused by the server.
    let wrong = url.replace("pw-Secret-42", "nope");
    let e = RedisStore::builder(&wrong)
        .ca_file(&ca_file)
        .connect()
        .await
        .unwrap_err();
    assert!(e.to_string().contains("cannot connect"), "{e}");

    let store = RedisStore::builder(&url)
        .ca_file(&ca_file)
        .connect()
        .await
        .unwrap();
    assert_eq!(store.topology(), "standalone");
    assert!(!format!("{store:?}").contains("pw-Secret-42"));
    assert_eq!(store.initialize().await.unwrap(), 16);

    // A storm, the server restarted empty (no persistence) in the middle of it.
    let fake = VideoSessionFake::start_default().await.unwrap();
    let t = target(&fake, url, Some(&ca));
    let server = Arc::new(std::sync::Mutex::new(server));
    let restart = Arc::clone(&server);
    let r = storm(
        &fake,
        &t,
        Duration::from_millis(2500),
        Duration::from_millis(300),
        move || restart.lock().unwrap().restart_empty(),
    )
    .await;
    assert_kept("TLS + ACL, restarted empty", &r);
}

/// Primary + replica 200 ms behind a proxy, three sentinels. The primary's host is lost (the
/// proxy drops what is in transit, the primary is killed) at several moments of a storm, and
/// Sentinel promotes the replica: every reservation whose login was sent had been acknowledged
/// by the replica, so the promoted store still counts it. 0 blocks in every run.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sentinel_failover_with_a_lagging_replica_never_blocks() {
    let moments = [
        Moment::After(Duration::ZERO),
        Moment::After(Duration::from_millis(150)),
        Moment::ServiceCounted(5),
        Moment::After(Duration::from_millis(400)),
        Moment::After(Duration::from_millis(900)),
    ];
    for moment in moments {
        let Some(r) = sentinel_failover_run(moment, "all").await else {
            return;
        };
        assert_kept(&format!("sentinel failover at {moment:?}"), &r);
    }
}

/// One sentinel failover storm with the primary lost at `moment`; `None` without Redis.
async fn sentinel_failover_run(moment: Moment, acks: &'static str) -> Option<StormResult> {
    let test = "sentinel_failover_with_a_lagging_replica_never_blocks";
    let set = ReplicaSet::start(
        test,
        1,
        &RedisOptions::new(),
        Some(Duration::from_millis(200)),
    )?;
    let sentinels = Sentinels::start(test, set, "lockout")?;
    let url = format!("redis-sentinel://{}/0#lockout", sentinels.addrs().join(","));
    initialize(&url, None).await;
    // The markers on the replica too: the storm then tests the reservations' fate, not the
    // markers' (a promoted replica without them refuses everything, which would hide a loss).
    sentinels
        .set()
        .wait_synced(Duration::from_secs(10))
        .expect("the replica has the markers");
    let fake = VideoSessionFake::start_default().await.unwrap();
    let mut t = target(&fake, url, None);
    t.acks = acks;
    let sentinels = Arc::new(std::sync::Mutex::new(sentinels));
    let lost = Arc::clone(&sentinels);
    let r = storm(&fake, &t, Duration::from_secs(7), moment, move || {
        let mut s = lost.lock().unwrap();
        let old = s.set().primary().port();
        s.set().proxy(0).expect("the replica's proxy").cut();
        s.set_mut().primary_mut().kill9();
        let (port, took) = s
            .wait_for_failover(old, Duration::from_secs(20))
            .expect("sentinel fails over");
        eprintln!("failover to {port} in {} ms", took.as_millis());
    })
    .await;
    drop(sentinels);
    Some(r)
}

/// The same failover without waiting for the replica (`ReplicaAcks::None`), the primary lost as
/// soon as the service has counted 5 failures: the reservations and failures, all younger than
/// the lag, die with it, and the promoted store lets more logins through. This shows what the
/// acknowledgement protects (and that the scenario exercises the lag): the service blocks.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_replica_acknowledgements_a_failover_loses_reservations() {
    let Some(r) = sentinel_failover_run(Moment::ServiceCounted(5), "none").await else {
        return;
    };
    eprintln!(
        "no acks, failover once the service counted 5: it counted {} failures, {} blocks",
        r.service_failures, r.service_blocks
    );
    assert!(
        r.service_failures > 5 || r.service_blocks > 0,
        "no reservation was lost: {r:?}"
    );
}

/// A standalone server without persistence restarted empty, at several moments of a storm:
/// the store notices its lost marker and refuses every login for a lockout window.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn standalone_restarted_empty_never_blocks() {
    let moments = [
        Moment::After(Duration::ZERO),
        Moment::ServiceCounted(5),
        Moment::After(Duration::from_millis(200)),
        Moment::After(Duration::from_millis(600)),
    ];
    for moment in moments {
        let Some(server) = RedisOptions::new().start("standalone_restarted_empty_never_blocks")
        else {
            return;
        };
        let url = server.url();
        initialize(&url, None).await;
        let fake = VideoSessionFake::start_default().await.unwrap();
        let t = target(&fake, url, None);
        let server = Arc::new(std::sync::Mutex::new(server));
        let restart = Arc::clone(&server);
        let r = storm(&fake, &t, Duration::from_secs(3), moment, move || {
            restart.lock().unwrap().restart_empty()
        })
        .await;
        assert_kept(&format!("standalone restarted empty at {moment:?}"), &r);
    }
}

/// With `appendonly yes` and `appendfsync always`, a server killed and restarted keeps every
/// reservation: the count goes on where it was (exactly 5 failures in all, no wait for a window).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn standalone_with_aof_restarted_keeps_the_count() {
    let Some(server) = RedisOptions::new()
        .appendonly(true)
        .start("standalone_with_aof_restarted_keeps_the_count")
    else {
        return;
    };
    let url = server.url();
    initialize(&url, None).await;
    let fake = VideoSessionFake::start_default().await.unwrap();
    let t = target(&fake, url.clone(), None);
    let server = Arc::new(std::sync::Mutex::new(server));
    let restart = Arc::clone(&server);
    let r = storm(
        &fake,
        &t,
        Duration::from_secs(3),
        Duration::from_millis(300),
        move || {
            let mut s = restart.lock().unwrap();
            s.kill9();
            s.restart();
        },
    )
    .await;
    assert_kept("standalone with AOF, killed and restarted", &r);
    assert_eq!(r.service_failures, 5, "{r:?}");
    // Not refused for a lost history: the marker survived.
    let store = connect(&url, None, "all").await;
    let creds = Credentials::new(fake.demo().secret_key.clone(), "demo.user", "x").unwrap();
    let guard = sa360_video_sdk::video_session::LockoutGuard::new(
        Arc::new(store),
        Arc::new(sa360_video_sdk::video_session::SystemClock),
    );
    let status = guard.status(&creds.account_key()).await.unwrap();
    assert_eq!(
        status.refusal.map(|r| matches!(
            r,
            sa360_video_sdk::video_session::RefusalReason::BudgetExhausted { .. }
        )),
        Some(true),
        "{status:?}"
    );
}

/// A Cluster (3 primaries with a replica each): accounts of every bucket work wherever their
/// slot lives; then the primary that holds the demo account's slot is killed and its replica
/// takes over during a storm, and later that node restarts empty during a second storm against
/// the same service: 0 blocks, at most 5 failures in all.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cluster_failover_and_an_empty_node_never_block() {
    let test = "cluster_failover_and_an_empty_node_never_block";
    let Some(cluster) = Cluster::start(test, 3, 1, &RedisOptions::new()) else {
        return;
    };
    let seeds: Vec<String> = cluster.nodes()[..3]
        .iter()
        .map(|n| format!("127.0.0.1:{}", n.port()))
        .collect();
    let url = format!("redis-cluster://{}", seeds.join(","));
    initialize(&url, None).await;

    // Every bucket's accounts, on whichever node their slot lives: reserve and read back.
    let store = connect(&url, None, "all").await;
    assert_eq!(store.topology(), "cluster");
    let guard = sa360_video_sdk::video_session::LockoutGuard::new(
        Arc::new(store),
        Arc::new(sa360_video_sdk::video_session::SystemClock),
    );
    let mut buckets = std::collections::BTreeSet::new();
    for n in 0..200 {
        let key = Credentials::new("sk-cluster", format!("user{n}"), "pw")
            .unwrap()
            .account_key();
        if buckets.insert(key.to_string().as_bytes()[0]) {
            let status = guard.status(&key).await.unwrap();
            assert_eq!(status.refusal, None, "bucket of {key:?}");
        }
    }
    assert_eq!(buckets.len(), 16);

    let fake = VideoSessionFake::start_default().await.unwrap();
    let key = Credentials::new(fake.demo().secret_key.clone(), "demo.user", "x")
        .unwrap()
        .account_key();
    let hex = key.to_string();
    let account_key = format!("{{facade:video-session:lockout:v2:{}}}:{hex}", &hex[..1]);
    let slot = cluster.keyslot(&account_key);
    let t = target(&fake, url.clone(), None);
    let cluster = Arc::new(std::sync::Mutex::new(cluster));
    let lost = Arc::clone(&cluster);
    let r = storm(
        &fake,
        &t,
        Duration::from_secs(8),
        Moment::ServiceCounted(5),
        move || {
            let mut c = lost.lock().unwrap();
            let primary = c.node_for_slot(slot);
            c.node_mut(primary).kill9();
            let started = Instant::now();
            while c.try_node_for_slot(slot).is_none_or(|n| n == primary) {
                assert!(
                    started.elapsed() < Duration::from_secs(20),
                    "no replica took over slot {slot}"
                );
                std::thread::sleep(Duration::from_millis(100));
            }
            eprintln!(
                "slot {slot} failed over in {} ms",
                started.elapsed().as_millis()
            );
        },
    )
    .await;
    assert_kept("cluster primary lost", &r);

    // The node that holds the account restarted empty (it keeps its nodes.conf, so its slots,
    // not its keys), with the same service: a store that forgot the 5 failures would send 5 more,
    // and the 6th would block the account.
    let t = target(&fake, url, None);
    let restart = Arc::clone(&cluster);
    let r = storm(
        &fake,
        &t,
        Duration::from_secs(4),
        Duration::from_millis(100),
        move || {
            let mut c = restart.lock().unwrap();
            let owner = c.node_for_slot(slot);
            c.node_mut(owner).restart_empty();
            c.wait_ok(Duration::from_secs(20))
                .expect("the cluster is ok again");
        },
    )
    .await;
    assert_kept("cluster node restarted empty", &r);
}

/// `rediss-sentinel://` with a private CA, the data nodes and the sentinels behind an ACL user
/// (the sentinels' own credentials set with `sentinel_credentials`): the store finds the primary
/// over TLS and follows a failover during a storm.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sentinel_over_tls_with_acl_users_follows_a_failover() {
    let test = "sentinel_over_tls_with_acl_users_follows_a_failover";
    let ca = TestCa::create();
    let options = RedisOptions::new()
        .tls(&ca)
        .acl_user("lockout-app", "pw-Data-7");
    let Some(set) = ReplicaSet::start(test, 1, &options, None) else {
        return;
    };
    let Some(sentinels) = Sentinels::start(test, set, "lockout") else {
        return;
    };
    let hosts: Vec<String> = sentinels
        .addrs()
        .iter()
        .map(|a| a.replace("127.0.0.1", "localhost"))
        .collect();
    let url = format!(
        "rediss-sentinel://lockout-app:pw-Data-7@{}/0#lockout",
        hosts.join(",")
    );
    let ca_file = ca.ca_cert().display().to_string();
    let store = RedisStore::builder(&url)
        .ca_file(&ca_file)
        .sentinel_credentials("lockout-app", "pw-Data-7")
        .connect()
        .await
        .unwrap();
    assert_eq!(store.topology(), "sentinel");
    assert!(!format!("{store:?}").contains("pw-Data-7"));
    assert_eq!(store.initialize().await.unwrap(), 16);
    // Without the sentinels' credentials they refuse to name the primary.
    let e = RedisStore::builder(&url)
        .ca_file(&ca_file)
        .connect()
        .await
        .unwrap_err();
    assert!(!e.to_string().contains("pw-Data-7"), "{e}");

    let creds = Credentials::new("sk-tls-sentinel", "demo.user", "x")
        .unwrap()
        .account_key();
    let guard = sa360_video_sdk::video_session::LockoutGuard::new(
        Arc::new(store),
        Arc::new(sa360_video_sdk::video_session::SystemClock),
    );
    assert_eq!(guard.status(&creds).await.unwrap().refusal, None);
    let mut sentinels = sentinels;
    let old = sentinels.set().primary().port();
    sentinels.set_mut().primary_mut().kill9();
    let (port, _) = sentinels
        .wait_for_failover(old, Duration::from_secs(20))
        .expect("sentinel fails over");
    // The store asks the sentinels again and reaches the new primary (over TLS, as the ACL user).
    let started = Instant::now();
    loop {
        match guard.status(&creds).await {
            Ok(status) => {
                assert_eq!(status.refusal, None, "{status:?}");
                break;
            }
            Err(e) => {
                assert!(!e.to_string().contains("pw-Data-7"), "{e}");
                assert!(
                    started.elapsed() < Duration::from_secs(10),
                    "the store did not reach the new primary {port}: {e}"
                );
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        }
    }
}

//! `RedisStore` against the ways a Redis server loses acknowledged writes while keeping older
//! keys (issue 45): a restart from an RDB snapshot (Redis's default persistence), a host crash
//! under `appendfsync everysec` (the append-only files put back as they were a moment before), a
//! real `maxmemory` eviction under `volatile-lru` and under `allkeys-lru`, and `FLUSHALL` followed
//! by an operator's `initialize`.
//!
//! Each run: the store is declared new; `counted` (0, 3 or 5) wrong-password logins reach the
//! service; the fault strikes, and the run checks that it really lost something (the count is
//! missing after it, or `evicted_keys` grew), else it fails; then a storm of 20 tasks over 4
//! processes logs in with the wrong password. The service's clock runs 300 times faster
//! (`FakeClock::fast`: its 10-minute window passes in 2 s) and the clients' policy is scaled to
//! match, so the storm outlasts the store's refusal. The service is the judge: 0 blocks, and at
//! least one login reached it (a store that refuses forever does not pass).
//!
//! `LOCKOUT_LOSS_RUNS` (default 1) repeats every case.

use std::sync::Arc;
use std::time::{Duration, Instant};

use sa360_video_fakes::{FakeClock, VideoSessionFake};
use sa360_video_sdk::http::BaseUrl;
use sa360_video_sdk::video_session::{
    Credentials, Error, RefusalReason, StoreLoss, VideoSessionClient,
};
use test_support::{RedisOptions, RedisServer};

use super::video_session_redis_topologies::{
    FAIL_CLOSED_WITHIN, Moment, StormTarget, connect, scaled_client, storm,
};

/// How much faster than real time the service's clock runs.
const RATE: u32 = 300;
/// How long a storm lasts: past the store's refusal after a loss (1 s HTTP timeout + 2 s window
/// + 0.5 s margin), so logins resume within it.
const STORM: Duration = Duration::from_millis(6500);

/// The faults, each with the Redis settings it happens under.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Fault {
    /// Redis's default `save 3600 1 300 100 60 10000`: a snapshot, then `kill -9` and a restart
    /// that loads it.
    RdbRestart,
    /// `appendonly yes`, `appendfsync everysec`: a host crash that keeps only what was on disk a
    /// moment before the logins.
    AofEverysecCrash,
    /// `maxmemory` 4 MB, `volatile-lru`, filled with cache keys that have a TTL.
    VolatileLru,
    /// `maxmemory` 4 MB, `allkeys-lru`, filled with cache keys until the store's own key goes.
    AllkeysLru,
    /// `FLUSHALL`, then an operator's `initialize` (refused).
    FlushThenInit,
}

fn server(fault: Fault) -> Option<RedisServer> {
    let o = RedisOptions::new();
    let o = match fault {
        Fault::RdbRestart => o.arg("--save").arg("3600 1 300 100 60 10000"),
        Fault::AofEverysecCrash => o.appendonly(true).arg("--appendfsync").arg("everysec"),
        Fault::VolatileLru => o
            .arg("--maxmemory")
            .arg("4mb")
            .arg("--maxmemory-policy")
            .arg("volatile-lru"),
        Fault::AllkeysLru => o
            .arg("--maxmemory")
            .arg("4mb")
            .arg("--maxmemory-policy")
            .arg("allkeys-lru"),
        Fault::FlushThenInit => o,
    };
    o.start("redis_losses")
}

/// The entries the store holds for the account (its field in the bucket: `last;block;pause;` and
/// one entry per attempt), or `None` when the bucket itself is gone.
fn entries(redis: &RedisServer, hex: &str) -> Option<usize> {
    let bucket = format!("{{facade:video-session:lockout:v2:{}}}:store", &hex[..1]);
    if redis.cli(&["EXISTS", &bucket]) != "1" {
        return None;
    }
    let value = redis.cli(&["HGET", &bucket, hex]);
    Some(value.split(';').count().saturating_sub(3))
}

/// Writes 1 KB values (with a TTL when `ttl`) until `done` or 40 000 keys.
fn fill(redis: &RedisServer, ttl: bool, done: impl Fn(&RedisServer) -> bool) {
    let script = if ttl {
        "for i = 1, 200 do redis.call('SET', 'cache:' .. ARGV[1] .. ':' .. i, string.rep('x', 1024), 'EX', 3600) end"
    } else {
        "for i = 1, 200 do redis.call('SET', 'cache:' .. ARGV[1] .. ':' .. i, string.rep('x', 1024)) end"
    };
    for round in 0..200 {
        redis.cli(&["EVAL", script, "0", &round.to_string()]);
        if done(redis) {
            return;
        }
    }
    panic!("the server never evicted what the test waited for");
}

fn evicted(redis: &RedisServer) -> u64 {
    redis
        .info("stats", "evicted_keys")
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

/// One run: returns (logins that reached the service, blocks it started).
async fn run(fault: Fault, counted: u32) -> Option<(u32, u32)> {
    let redis = server(fault)?;
    let url = redis.url();
    let store = connect(&url, None, "all").await;
    assert_eq!(store.initialize().await.unwrap(), 16);
    let fake = VideoSessionFake::builder()
        .clock(FakeClock::fast(RATE))
        .start()
        .await
        .unwrap();
    let creds = Credentials::new(fake.demo().secret_key.clone(), "demo.user", "wrong").unwrap();
    let hex = creds.account_key().to_string();
    let what = format!("{fault:?} with {counted} counted");

    // What the disk holds before the logins (the snapshot, or the fsynced append-only files).
    if fault == Fault::RdbRestart {
        assert_eq!(redis.cli(&["SAVE"]), "OK");
    }
    let on_disk = (fault == Fault::AofEverysecCrash).then(|| redis.copy_files());

    let client = scaled_client(
        VideoSessionClient::builder(BaseUrl::parse(fake.base_url()).unwrap()),
        RATE,
    )
    .lockout_store(Arc::new(store))
    .build()
    .unwrap();
    for _ in 0..counted {
        let e = client.login(&creds).send().await.unwrap_err();
        assert!(matches!(e, Error::InvalidCredentials { .. }), "{what}: {e}");
    }
    assert_eq!(entries(&redis, &hex), Some(counted as usize), "{what}");
    let evicted_before = evicted(&redis);
    let run_id = redis.info("server", "run_id");

    // The fault, and what shows it lost something.
    let mut redis = redis;
    match fault {
        Fault::RdbRestart => {
            redis.restart();
            assert_ne!(redis.info("server", "run_id"), run_id, "{what}");
            assert_eq!(
                entries(&redis, &hex).unwrap_or(0),
                0,
                "{what}: the counts are lost"
            );
        }
        Fault::AofEverysecCrash => {
            redis.restart_from(on_disk.as_ref().unwrap().path());
            assert_ne!(redis.info("server", "run_id"), run_id, "{what}");
            assert_eq!(
                entries(&redis, &hex).unwrap_or(0),
                0,
                "{what}: the counts are lost"
            );
        }
        Fault::VolatileLru => {
            fill(&redis, true, |r| evicted(r) > evicted_before + 1000);
            // The store's key has no TTL: volatile-lru never takes it.
            assert_eq!(entries(&redis, &hex), Some(counted as usize), "{what}");
        }
        Fault::AllkeysLru => {
            fill(&redis, false, |r| entries(r, &hex).is_none());
            assert!(evicted(&redis) > evicted_before, "{what}");
        }
        Fault::FlushThenInit => {
            assert_eq!(redis.cli(&["FLUSHALL"]), "OK");
            let store = connect(&url, None, "all").await;
            let e = store.initialize().await.unwrap_err();
            assert!(e.to_string().contains("not declared new"), "{what}: {e}");
            assert!(!e.to_string().contains("declared new (16"), "{what}: {e}");
        }
    }

    // After an eviction the store says so (under allkeys-*), and a restart or flush is named.
    let status_store = connect(&url, None, "all").await;
    let status = sa360_video_sdk::video_session::LockoutGuard::new(
        Arc::new(status_store),
        Arc::new(sa360_video_sdk::video_session::SystemClock),
    )
    .status(&creds.account_key())
    .await
    .unwrap();
    let expected = match fault {
        Fault::RdbRestart | Fault::AofEverysecCrash => Some(StoreLoss::Restarted),
        Fault::AllkeysLru => Some(StoreLoss::Evicted),
        Fault::FlushThenInit => Some(StoreLoss::Flushed),
        Fault::VolatileLru => None,
    };
    let target = StormTarget {
        fake_url: fake.base_url().to_owned(),
        secret_key: fake.demo().secret_key.clone(),
        store_url: url,
        ca_file: None,
        acks: "all",
        rate: RATE,
    };
    let r = storm(&fake, &target, STORM, Moment::After(Duration::ZERO), || {}).await;
    eprintln!(
        "{what}: storm sent {}, refused {}, store errors {}; the service counted {} failures in all, {} blocks",
        r.tally.failed, r.tally.refused, r.tally.store_errors, r.service_failures, r.service_blocks
    );
    assert!(r.tally.other.is_empty(), "{what}: {:?}", r.tally.other);
    assert!(
        r.tally.slowest < FAIL_CLOSED_WITHIN,
        "{what}: {:?}",
        r.tally.slowest
    );
    // The judge first, then what the store said of the fault.
    let blocks = r.service_blocks + r.tally.blocked;
    eprintln!(
        "LOSS-TABLE {fault:?} counted={counted} reached={} blocks={blocks}",
        counted + r.tally.failed
    );
    assert_eq!(blocks, 0, "{what}: the account was blocked");
    if let Some(cause) = expected {
        assert_eq!(
            status.refusal,
            Some(RefusalReason::StoreForgot { cause }),
            "{what}: {status:?}"
        );
    }

    drop(redis);
    Some((counted + r.tally.failed, r.service_blocks + r.tally.blocked))
}

fn runs() -> usize {
    std::env::var("LOCKOUT_LOSS_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1)
}

async fn check(fault: Fault) {
    let started = Instant::now();
    for _ in 0..runs() {
        for counted in [0, 3, 5] {
            let Some((reached, blocks)) = run(fault, counted).await else {
                return;
            };
            assert_eq!(
                blocks, 0,
                "{fault:?} with {counted} counted: the account was blocked"
            );
            assert!(
                reached > 0,
                "{fault:?} with {counted} counted: no login ever reached the service"
            );
        }
    }
    eprintln!("{fault:?}: {} ms", started.elapsed().as_millis());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restart_from_an_rdb_snapshot_never_blocks() {
    check(Fault::RdbRestart).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crash_under_appendfsync_everysec_never_blocks() {
    check(Fault::AofEverysecCrash).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn eviction_under_volatile_lru_never_takes_the_counts() {
    check(Fault::VolatileLru).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn eviction_under_allkeys_lru_never_blocks() {
    check(Fault::AllkeysLru).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flush_then_initialize_is_refused_and_never_blocks() {
    check(Fault::FlushThenInit).await;
}

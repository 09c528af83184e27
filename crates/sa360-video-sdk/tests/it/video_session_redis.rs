//! `RedisStore` against a real `redis-server` started by the test on a free
//! loopback port (`--save "" --appendonly no`): the steps, TTLs, replicas in
//! two OS processes sharing one count, and failing closed when Redis stops.
//!
//! Without `redis-server` on the PATH the tests print SKIPPED and pass,
//! unless `REQUIRE_REDIS=1` (set by `.ci/run`), where a missing server fails.

use std::io::{BufRead as _, BufReader};
use std::path::Path;
use std::process::Stdio;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use sa360_video_fakes::{DomainUser, VideoSessionFake};
use sa360_video_sdk::http::BaseUrl;
use sa360_video_sdk::video_session::{
    AttemptId, Credentials, Error, LockoutPolicy, LockoutStore, RedisStore, Resolution,
    VideoSessionClient,
};

use test_support::{RedisServer, test_as_child, wait_for_file, wait_for_file_async};

fn key(n: u32) -> sa360_video_sdk::video_session::AccountKey {
    Credentials::new("sk-redis", format!("user{n}"), "pw")
        .unwrap()
        .account_key()
}

/// A store on `url` under `prefix`, declared new (the test's server never held counts).
async fn new_store(url: &str, prefix: &str) -> RedisStore {
    let store = RedisStore::builder(url)
        .key_prefix(prefix)
        .connect()
        .await
        .unwrap();
    store.initialize().await.unwrap();
    store
}

#[tokio::test]
async fn steps_are_shared_between_stores_and_entries_expire() {
    let Some(redis) = RedisServer::start("steps_are_shared_between_stores_and_entries_expire")
    else {
        return;
    };
    let prefix = "test:steps:";
    let a = new_store(&redis.url(), prefix).await;
    let b = new_store(&redis.url(), prefix).await;
    let limits = LockoutPolicy::SEED.limits(Duration::from_secs(30));
    let now = SystemTime::now();
    for i in 0..5u128 {
        let store: &dyn LockoutStore = if i % 2 == 0 { &a } else { &b };
        let id = AttemptId::from_u128(i + 1);
        assert!(
            store
                .reserve(&key(1), id, now, limits)
                .await
                .unwrap()
                .reserved
        );
        store
            .resolve(&key(1), id, Resolution::Failed, now, limits)
            .await
            .unwrap();
    }
    let v = a
        .reserve(&key(1), AttemptId::from_u128(99), now, limits)
        .await
        .unwrap();
    assert!(!v.reserved);
    assert_eq!(v.counted, 5);
    let (refusal, wait) = v.refusal.unwrap();
    assert!(
        matches!(
            refusal,
            sa360_video_sdk::video_session::RefusalReason::BudgetExhausted {
                failures_in_window: 5,
                ..
            }
        ),
        "{refusal:?}"
    );
    assert!(
        wait > Duration::from_secs(655) && wait <= Duration::from_secs(660),
        "{wait:?}"
    );

    // A short policy: the entry ends, and a reservation of another account of its bucket
    // sweeps it away. The bucket has no TTL, so a volatile-* eviction never takes it.
    let short = LockoutPolicy::SEED
        .window(Duration::from_millis(100))
        .margin(Duration::from_millis(50))
        .limits(Duration::from_millis(100));
    let id = AttemptId::from_u128(7);
    assert!(b.reserve(&key(2), id, now, short).await.unwrap().reserved);
    let mut raw = redis::Client::open(redis.url()).unwrap();
    let hex = key(2).to_string();
    let name = format!("{{{prefix}{}}}:store", &hex[..1]);
    let ttl: i64 = redis::cmd("PTTL").arg(&name).query(&mut raw).unwrap();
    assert_eq!(ttl, -1, "the bucket has no TTL");
    let held: i64 = redis::cmd("HEXISTS")
        .arg(&name)
        .arg(&hex)
        .query(&mut raw)
        .unwrap();
    assert_eq!(held, 1);
    tokio::time::sleep(Duration::from_millis(400)).await;
    let neighbour = (3..)
        .map(key)
        .find(|k| k.to_string().as_bytes()[0] == hex.as_bytes()[0])
        .unwrap();
    a.reserve(&neighbour, AttemptId::from_u128(8), now, short)
        .await
        .unwrap();
    let held: i64 = redis::cmd("HEXISTS")
        .arg(&name)
        .arg(&hex)
        .query(&mut raw)
        .unwrap();
    assert_eq!(held, 0, "the account's ended entries were not swept");

    // A corrupt entry is an error (fail closed), not an empty count.
    let _: () = redis::cmd("HSET")
        .arg(&name)
        .arg(&hex)
        .arg("1;-;-;zz")
        .query(&mut raw)
        .unwrap();
    let e = a.reserve(&key(2), id, now, limits).await.unwrap_err();
    assert!(e.to_string().contains("corrupt"), "{e}");
}
/// What one process's logins ended as.
#[derive(Debug, Default, PartialEq, Eq)]
struct Tally {
    invalid: u32,
    refused: u32,
    other: Vec<String>,
}

/// `per_client` concurrent wrong logins through each of two clients, each
/// with its own `RedisStore` connection.
async fn wrong_logins(
    fake_url: &str,
    secret_key: &str,
    redis_url: &str,
    prefix: &str,
    per_client: usize,
) -> Tally {
    let mut tasks = Vec::new();
    for _ in 0..2 {
        let store = RedisStore::builder(redis_url)
            .key_prefix(prefix)
            .connect()
            .await
            .unwrap();
        let client = Arc::new(
            VideoSessionClient::builder(BaseUrl::parse(fake_url).unwrap())
                .lockout_store(Arc::new(store))
                .build()
                .unwrap(),
        );
        for _ in 0..per_client {
            let client = Arc::clone(&client);
            let secret_key = secret_key.to_owned();
            tasks.push(tokio::spawn(async move {
                let creds = Credentials::new(secret_key, "demo.user", "wrong").unwrap();
                client.login(&creds).send().await
            }));
        }
    }
    let mut tally = Tally::default();
    for t in tasks {
        match t.await.unwrap() {
            Err(Error::InvalidCredentials { .. }) => tally.invalid += 1,
            Err(Error::LockoutRefused { .. }) => tally.refused += 1,
            other => tally.other.push(format!("{other:?}")),
        }
    }
    tally
}

/// How long a child process may take to signal through its file.
const SIGNAL_WAIT: Duration = Duration::from_secs(60);

/// The second replica process (started by `replicas_in_two_processes_share_one_count`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "a child process of replicas_in_two_processes_share_one_count"]
async fn replica_child() {
    let var = |name: &str| std::env::var(name).unwrap();
    let (ready, go) = (var("REPLICA_READY"), var("REPLICA_GO"));
    std::fs::write(&ready, b"").unwrap();
    wait_for_file(Path::new(&go), SIGNAL_WAIT);
    let tally = wrong_logins(
        &var("REPLICA_FAKE"),
        &var("REPLICA_SECRET_KEY"),
        &var("REPLICA_REDIS"),
        &var("REPLICA_PREFIX"),
        12,
    )
    .await;
    println!(
        "REPLICA invalid={} refused={} other={}",
        tally.invalid,
        tally.refused,
        tally.other.len()
    );
    for o in tally.other {
        println!("REPLICA-OTHER {o}");
    }
}

/// Four clients in two OS processes, 50 concurrent wrong logins in all:
/// exactly 5 reach the fake and it blocks nothing. Then Redis stops: every
/// later login is refused with a store error and nothing is sent.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replicas_in_two_processes_share_one_count() {
    let Some(mut redis) = RedisServer::start("replicas_in_two_processes_share_one_count") else {
        return;
    };
    let fake = VideoSessionFake::start_default().await.unwrap();
    assert_eq!(fake.demo().user_name, "demo.user");
    let dir = tempfile::tempdir().unwrap();
    let (ready, go) = (dir.path().join("ready"), dir.path().join("go"));
    let prefix = "test:replicas:";
    new_store(&redis.url(), prefix).await;
    let child = test_as_child("video_session_redis::replica_child")
        .args(["--test-threads", "1"])
        .env("REPLICA_READY", &ready)
        .env("REPLICA_GO", &go)
        .env("REPLICA_FAKE", fake.base_url())
        .env("REPLICA_SECRET_KEY", &fake.demo().secret_key)
        .env("REPLICA_REDIS", redis.url())
        .env("REPLICA_PREFIX", prefix)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    wait_for_file_async(&ready, SIGNAL_WAIT).await;
    std::fs::write(&go, b"").unwrap();
    // This process: 2 clients x 13 = 26; the child: 2 x 12 = 24.
    let here = wrong_logins(
        fake.base_url(),
        &fake.demo().secret_key,
        &redis.url(),
        prefix,
        13,
    )
    .await;
    let output = tokio::task::spawn_blocking(move || child.wait_with_output())
        .await
        .unwrap()
        .unwrap();
    assert!(output.status.success(), "the child replica failed");
    let text = String::from_utf8_lossy(&output.stdout).to_string();
    let line = BufReader::new(text.as_bytes())
        .lines()
        .map_while(Result::ok)
        .find_map(|l| l.find("REPLICA ").map(|i| l[i..].to_owned()))
        .unwrap_or_else(|| panic!("no REPLICA line in the child's output:\n{text}"));
    let field = |name: &str| -> u32 {
        line.split_whitespace()
            .find_map(|p| p.strip_prefix(&format!("{name}=")))
            .unwrap()
            .parse()
            .unwrap()
    };
    assert!(here.other.is_empty(), "{:?}", here.other);
    assert_eq!(field("other"), 0, "{text}");
    let invalid = here.invalid + field("invalid");
    let refused = here.refused + field("refused");
    assert_eq!((invalid, refused), (5, 45), "here {here:?}, child: {line}");
    let account = DomainUser::new(fake.demo().domain_id, "demo.user");
    let stats = fake.ledger().account(&account).unwrap();
    assert_eq!(fake.ledger().counts().login_attempts, 5);
    assert_eq!((stats.failures_total, stats.blocks_started), (5, 0));

    // Redis stops: every login is refused with a store error; nothing is sent.
    let store = RedisStore::builder(redis.url())
        .timeout(Duration::from_millis(500))
        .key_prefix(prefix)
        .connect()
        .await
        .unwrap();
    let client = VideoSessionClient::builder(BaseUrl::parse(fake.base_url()).unwrap())
        .lockout_store(Arc::new(store))
        .build()
        .unwrap();
    redis.stop();
    let right =
        Credentials::new(fake.demo().secret_key.clone(), "someone.else", "whatever").unwrap();
    for _ in 0..5 {
        let e = client.login(&right).send().await.unwrap_err();
        assert!(matches!(e, Error::Store(_)), "{e:?}");
        assert!(e.to_string().contains("127.0.0.1"), "{e}");
    }
    assert_eq!(
        fake.ledger().counts().login_attempts,
        5,
        "a login was sent without the store"
    );
}

/// 6 wrong logins through `client`; returns how many the service answered (the others were
/// refused without sending).
async fn six_wrong_logins(client: &VideoSessionClient, secret_key: &str) -> (u32, Vec<Error>) {
    let creds = Credentials::new(secret_key.to_owned(), "demo.user", "wrong").unwrap();
    let (mut sent, mut refusals) = (0, Vec::new());
    for _ in 0..6 {
        match client.login(&creds).send().await {
            Err(Error::InvalidCredentials { .. }) => sent += 1,
            Err(e @ Error::LockoutRefused { .. }) => refusals.push(e),
            other => panic!("unexpected: {other:?}"),
        }
    }
    (sent, refusals)
}

/// A server that lost its data (flushed, as a restart without persistence leaves it) has no
/// marker: the store notices, and refuses every login of the account for one lockout window
/// from the loss, naming the cause and the end. The service saw 5 failures and no block.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_store_that_lost_its_data_never_grants_a_fresh_budget() {
    let Some(redis) = RedisServer::start("a_store_that_lost_its_data_never_grants_a_fresh_budget")
    else {
        return;
    };
    let fake = VideoSessionFake::start_default().await.unwrap();
    let prefix = "test:lost:";
    let store = new_store(&redis.url(), prefix).await;
    let client = VideoSessionClient::builder(BaseUrl::parse(fake.base_url()).unwrap())
        .lockout_store(Arc::new(store))
        .build()
        .unwrap();
    let (sent, refusals) = six_wrong_logins(&client, &fake.demo().secret_key).await;
    assert_eq!((sent, refusals.len()), (5, 1));

    // The server loses everything, as a restart without persistence does.
    let mut raw = redis::Client::open(redis.url()).unwrap();
    let _: () = redis::cmd("FLUSHALL").query(&mut raw).unwrap();
    let lost_at = SystemTime::now();

    let (sent, refusals) = six_wrong_logins(&client, &fake.demo().secret_key).await;
    assert_eq!(sent, 0, "a login was sent after the store lost its data");
    for refusal in &refusals {
        let Error::LockoutRefused {
            reason, retry_at, ..
        } = refusal
        else {
            unreachable!()
        };
        assert_eq!(
            *reason,
            sa360_video_sdk::video_session::RefusalReason::StoreForgot {
                cause: sa360_video_sdk::video_session::StoreLoss::Flushed
            }
        );
        // One lockout window from the loss: attempt timeout + window + margin (30 + 600 + 60 s).
        let wait = retry_at.duration_since(lost_at).unwrap();
        assert!(
            wait > Duration::from_secs(685) && wait <= Duration::from_secs(691),
            "{wait:?}"
        );
        let text = refusal.to_string();
        assert!(
            text.contains("FLUSHALL") && text.contains("do not declare"),
            "{text}"
        );
        assert!(text.contains("safe to try again at"), "{text}");
    }
    let stats = fake
        .ledger()
        .account(&DomainUser::new(fake.demo().domain_id, "demo.user"))
        .unwrap();
    assert_eq!((stats.failures_total, stats.blocks_started), (5, 0));
}

/// A server that never held counts is refused like one that lost them, until an operator
/// declares it new; `initialize` then changes every marker once, and never again.
#[tokio::test]
async fn a_new_store_is_refused_until_it_is_declared_new() {
    let Some(redis) = RedisServer::start("a_new_store_is_refused_until_it_is_declared_new") else {
        return;
    };
    let store = RedisStore::builder(redis.url())
        .key_prefix("test:new:")
        .connect()
        .await
        .unwrap();
    let limits = LockoutPolicy::SEED.limits(Duration::from_secs(30));
    let now = SystemTime::now();
    let v = store
        .reserve(&key(1), AttemptId::from_u128(1), now, limits)
        .await
        .unwrap();
    assert!(!v.reserved);
    assert_eq!(
        v.refusal.map(|r| r.0),
        Some(sa360_video_sdk::video_session::RefusalReason::StoreForgot {
            cause: sa360_video_sdk::video_session::StoreLoss::ServerStarted
        })
    );
    assert_eq!(store.initialize().await.unwrap(), 16);
    assert_eq!(store.initialize().await.unwrap(), 0);
    let v = store
        .reserve(&key(1), AttemptId::from_u128(2), now, limits)
        .await
        .unwrap();
    assert!(v.reserved, "{v:?}");
    assert_eq!(v.counted, 1);
}

/// An `allkeys-*` eviction policy may take a bucket (a window of refused logins): connecting names
/// the setting to change, also on a server that refuses `CONFIG` as managed services do (the
/// policy comes from `INFO memory`). `volatile-lru`, which never evicts the store's keys (they
/// have no TTL), is not warned about.
#[tokio::test]
async fn an_allkeys_policy_is_named_at_connect_also_where_config_is_refused() {
    use super::video_session_support::TraceCapture;
    for (policy, warned) in [("allkeys-lru", true), ("volatile-lru", false)] {
        let Some(redis) = test_support::RedisOptions::new()
            .arg("--maxmemory-policy")
            .arg(policy)
            .arg("--rename-command")
            .arg("CONFIG")
            .arg("")
            .start("an_allkeys_policy_is_named_at_connect_also_where_config_is_refused")
        else {
            return;
        };
        assert!(
            redis.try_cli(&["CONFIG", "GET", "appendonly"]).is_err()
                || redis.cli(&["CONFIG", "GET", "appendonly"]).contains("ERR"),
            "CONFIG is refused, as on a managed service"
        );
        let logs = TraceCapture::start();
        RedisStore::connect(&redis.url()).await.unwrap();
        let logged = logs.text();
        assert_eq!(
            logged.contains("set maxmemory-policy to noeviction or a volatile-* policy"),
            warned,
            "{policy}: {logged}"
        );
    }
}

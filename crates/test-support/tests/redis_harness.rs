//! The Redis harness works: TLS with the test CA, ACL users, restarts with and without data, lag
//! and cuts through the proxy, a sentinel failover, a cluster. Each test prints what it waited.
//! Skipped (loudly) without redis-server unless `REQUIRE_REDIS=1`.

use std::process::Command;
use std::time::{Duration, Instant};

use test_support::{Cluster, LagProxy, RedisOptions, RedisServer, ReplicaSet, Sentinels, TestCa};

/// Plain `redis-cli` with no TLS and no credentials: what a careless client gets.
fn bare_cli(port: u16, args: &[&str]) -> (bool, String) {
    let out = Command::new("redis-cli")
        .args(["-h", "127.0.0.1", "-p", &port.to_string()])
        .args(args)
        .env_remove("REDISCLI_AUTH")
        .output()
        .expect("run redis-cli");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), text.trim().to_owned())
}

/// Polls `f` every 5 ms until it is true; how long that took, or `None` after `limit`.
fn wait_until(limit: Duration, mut f: impl FnMut() -> bool) -> Option<Duration> {
    let start = Instant::now();
    while start.elapsed() < limit {
        if f() {
            return Some(start.elapsed());
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    None
}

#[test]
fn the_test_ca_makes_a_v3_certificate_with_sans_that_redis_serves() {
    let ca = TestCa::create();
    let verify = Command::new("openssl")
        .args(["verify", "-x509_strict", "-CAfile"])
        .arg(ca.ca_cert())
        .arg(ca.server_cert())
        .output()
        .unwrap();
    assert!(verify.status.success(), "{verify:?}");
    let text = Command::new("openssl")
        .args(["x509", "-noout", "-text", "-in"])
        .arg(ca.server_cert())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(text.contains("Version: 3 (0x2)"), "{text}");
    assert!(
        text.contains("DNS:localhost, IP Address:127.0.0.1"),
        "{text}"
    );
    assert!(text.contains("CA:FALSE"), "{text}");

    let Some(redis) = RedisOptions::new()
        .tls(&ca)
        .start("the_test_ca_makes_a_v3_certificate_with_sans_that_redis_serves")
    else {
        return;
    };
    // redis-cli --tls --cacert ca.crt: the chain verifies and the server answers.
    assert_eq!(redis.cli(&["PING"]), "PONG");
    assert!(
        redis.url().starts_with("rediss://127.0.0.1:"),
        "{}",
        redis.url()
    );
    // Without TLS nothing answers on that port (and there is no plain port).
    let (_, plain) = bare_cli(redis.port(), &["PING"]);
    assert_ne!(plain, "PONG");
    // With another CA the chain does not verify.
    let other = TestCa::create();
    let out = Command::new("redis-cli")
        .args(["--tls", "--cacert"])
        .arg(other.ca_cert())
        .args(["-p", &redis.port().to_string(), "PING"])
        .output()
        .unwrap();
    let answer = String::from_utf8_lossy(&out.stdout);
    assert_ne!(answer.trim(), "PONG", "a foreign CA must not verify");
}

#[test]
fn an_acl_user_is_required_and_its_password_checked() {
    let Some(redis) = RedisOptions::new()
        .acl_user("lockout", "s3cret pass")
        .start("an_acl_user_is_required_and_its_password_checked")
    else {
        return;
    };
    assert_eq!(redis.cli(&["ACL", "WHOAMI"]), "lockout");
    let (_, anonymous) = bare_cli(redis.port(), &["PING"]);
    assert!(anonymous.starts_with("NOAUTH"), "{anonymous}");
    let (_, wrong) = bare_cli(
        redis.port(),
        &["--user", "lockout", "--pass", "nope", "PING"],
    );
    assert!(wrong.contains("WRONGPASS"), "{wrong}");
    assert!(
        redis
            .url()
            .starts_with("redis://lockout:s3cret%20pass@127.0.0.1:"),
        "{}",
        redis.url()
    );
    assert!(
        !format!("{redis:?}").contains("s3cret"),
        "Debug shows no password"
    );
}

#[test]
fn restarts_keep_the_port_and_lose_data_unless_appendonly() {
    let test = "restarts_keep_the_port_and_lose_data_unless_appendonly";
    let Some(mut plain) = RedisServer::start(test) else {
        return;
    };
    let port = plain.port();
    assert_eq!(plain.url(), format!("redis://127.0.0.1:{port}/0"));
    assert_eq!(plain.cli(&["SET", "k", "v"]), "OK");
    let start = Instant::now();
    plain.restart();
    eprintln!("plain restart took {:?}", start.elapsed());
    assert_eq!(plain.port(), port);
    assert_eq!(
        plain.cli(&["GET", "k"]),
        "",
        "no persistence: the key is gone"
    );

    let Some(mut durable) = RedisOptions::new().appendonly(true).start(test) else {
        return;
    };
    assert_eq!(
        durable.info("persistence", "aof_enabled").as_deref(),
        Some("1")
    );
    assert_eq!(durable.cli(&["SET", "k", "v"]), "OK");
    durable.kill9();
    assert!(!durable.is_running());
    assert!(
        durable.try_cli(&["PING"]).is_err(),
        "killed: nothing answers"
    );
    durable.restart();
    assert_eq!(
        durable.cli(&["GET", "k"]),
        "v",
        "appendfsync always kept the write"
    );
    let run_id = durable.info("server", "run_id");
    durable.restart_empty();
    assert_eq!(durable.cli(&["DBSIZE"]), "0", "restart_empty wiped the AOF");
    assert_ne!(durable.info("server", "run_id"), run_id);

    // A fixed port (the one just freed), and a frozen server answers nothing until thawed.
    drop(plain);
    let Some(fixed) = RedisOptions::new().port(port).start(test) else {
        return;
    };
    assert_eq!(fixed.port(), port);
    fixed.freeze();
    assert!(
        fixed
            .cli_with_timeout(&["PING"], Duration::from_millis(300))
            .is_err(),
        "a frozen server does not answer"
    );
    fixed.thaw();
    assert_eq!(fixed.cli(&["PING"]), "PONG");
}

#[test]
fn a_lagged_replica_gets_a_write_only_after_the_delay() {
    let lag = Duration::from_millis(300);
    let Some(set) = ReplicaSet::start(
        "a_lagged_replica_gets_a_write_only_after_the_delay",
        1,
        &RedisOptions::new(),
        Some(lag),
    ) else {
        return;
    };
    set.wait_synced(Duration::from_secs(5)).unwrap();
    let sent = Instant::now();
    assert_eq!(set.primary().cli(&["SET", "lagged", "1"]), "OK");
    assert_eq!(
        set.replica(0).cli(&["GET", "lagged"]),
        "",
        "right after the SET the replica does not have it"
    );
    let arrived = wait_until(Duration::from_secs(5), || {
        set.replica(0).cli(&["GET", "lagged"]) == "1"
    })
    .expect("the write reaches the replica");
    let after = sent.elapsed();
    eprintln!("the write reached the replica {after:?} after the SET (polled {arrived:?})");
    assert!(after >= lag, "{after:?} < {lag:?}");
    assert!(after < lag * 2, "{after:?}: far more than the lag");

    // No lag: it arrives quickly.
    set.proxy(0).unwrap().set_delay(Duration::ZERO);
    std::thread::sleep(lag * 2);
    let sent = Instant::now();
    set.primary().cli(&["SET", "fast", "1"]);
    wait_until(Duration::from_secs(5), || {
        set.replica(0).cli(&["GET", "fast"]) == "1"
    })
    .expect("the write reaches the replica");
    eprintln!("without lag: {:?}", sent.elapsed());
    assert!(sent.elapsed() < lag, "{:?}", sent.elapsed());
}

#[test]
fn a_cut_loses_the_write_in_transit_and_the_promoted_replica_lacks_it() {
    let Some(set) = ReplicaSet::start(
        "a_cut_loses_the_write_in_transit_and_the_promoted_replica_lacks_it",
        1,
        &RedisOptions::new(),
        Some(Duration::from_millis(500)),
    ) else {
        return;
    };
    set.primary().cli(&["SET", "before", "1"]);
    set.wait_synced(Duration::from_secs(5)).unwrap();
    let proxy = set.proxy(0).unwrap();
    assert_eq!(set.primary().cli(&["SET", "in-transit", "1"]), "OK");
    let queued = wait_until(Duration::from_millis(400), || {
        proxy.in_transit().toward_client > 0
    })
    .expect("the SET's replication bytes reach the proxy");
    let dropped = proxy.cut();
    eprintln!("the write was queued after {queued:?}; cut dropped {dropped:?}");
    assert!(dropped.toward_client > 0, "{dropped:?}");
    assert_eq!(proxy.connections(), 0);
    std::thread::sleep(Duration::from_millis(700));
    set.promote(0);
    let promoted = set.replica(0);
    assert_eq!(
        promoted.cli(&["GET", "before"]),
        "1",
        "what was replicated stays"
    );
    assert_eq!(
        promoted.cli(&["GET", "in-transit"]),
        "",
        "the write in transit is lost"
    );
    assert_eq!(set.primary().cli(&["GET", "in-transit"]), "1");
}

#[test]
fn the_proxy_refuses_while_cut_and_forwards_after_resume() {
    let test = "the_proxy_refuses_while_cut_and_forwards_after_resume";
    let Some(redis) = RedisServer::start(test) else {
        return;
    };
    let delay = Duration::from_millis(100);
    let proxy = LagProxy::start(redis.port(), delay).unwrap();
    let start = Instant::now();
    assert_eq!(bare_cli(proxy.port(), &["PING"]).1, "PONG");
    let took = start.elapsed();
    eprintln!("PING through a 100 ms proxy: {took:?}");
    assert!(took >= delay * 2, "{took:?}: there and back");
    proxy.cut();
    let (_, refused) = bare_cli(proxy.port(), &["PING"]);
    assert_ne!(refused, "PONG");
    proxy.resume();
    proxy.set_delay(Duration::ZERO);
    assert_eq!(bare_cli(proxy.port(), &["PING"]).1, "PONG");
}

#[test]
fn sentinels_with_tls_and_acl_fail_over_after_the_primary_is_killed() {
    let test = "sentinels_with_tls_and_acl_fail_over_after_the_primary_is_killed";
    let ca = TestCa::create();
    let options = RedisOptions::new().tls(&ca).acl_user("app", "pw");
    let start = Instant::now();
    let Some(set) = ReplicaSet::start(test, 1, &options, None) else {
        return;
    };
    let Some(mut sentinels) = Sentinels::start(test, set, "lockout") else {
        return;
    };
    eprintln!("replica set and sentinels ready in {:?}", start.elapsed());
    assert_eq!(sentinels.urls().len(), 3);
    assert!(sentinels.urls()[0].starts_with("rediss://app:pw@127.0.0.1:"));
    let old = sentinels.set().primary().port();
    let replica = sentinels.set().replica(0).port();
    assert_eq!(
        sentinels.master_addr().unwrap(),
        ("127.0.0.1".to_owned(), old)
    );
    sentinels.set_mut().primary_mut().kill9();
    let (new, took) = sentinels
        .wait_for_failover(old, Duration::from_secs(20))
        .unwrap();
    eprintln!("sentinels failed over from {old} to {new} in {took:?}");
    assert_eq!(new, replica);
    assert_eq!(sentinels.master_addr().unwrap().1, replica);
    assert_eq!(sentinels.set().replica(0).cli(&["SET", "after", "1"]), "OK");
}

#[test]
fn a_cluster_reaches_ok_and_a_key_lives_on_the_node_keyslot_names() {
    let start = Instant::now();
    let Some(mut cluster) = Cluster::start(
        "a_cluster_reaches_ok_and_a_key_lives_on_the_node_keyslot_names",
        3,
        0,
        &RedisOptions::new(),
    ) else {
        return;
    };
    eprintln!("cluster ok in {:?}", start.elapsed());
    let key = "{acct-7}:failures";
    let slot = cluster.keyslot(key);
    assert_eq!(
        slot,
        cluster.keyslot("{acct-7}:epoch"),
        "one hash tag, one slot"
    );
    let owner = cluster.node_for_key(key);
    assert_eq!(cluster.node(owner).cli(&["SET", key, "3"]), "OK");
    for other in (0..3).filter(|&i| i != owner) {
        let moved = cluster.node(other).cli(&["SET", key, "4"]);
        assert_eq!(
            moved,
            format!("MOVED {slot} 127.0.0.1:{}", cluster.node(owner).port())
        );
    }
    // The owner restarted without its data keeps its slots (nodes.conf) and loses the key.
    let start = Instant::now();
    cluster.node_mut(owner).restart_empty();
    let ok = cluster.wait_ok(Duration::from_secs(20)).unwrap();
    eprintln!(
        "restart_empty of a cluster node, ok again after {:?} ({ok:?} waiting)",
        start.elapsed()
    );
    assert_eq!(cluster.node_for_slot(slot), owner);
    assert_eq!(cluster.node(owner).cli(&["GET", key]), "");
}

#[test]
fn a_cluster_replica_takes_over_the_slots_of_a_killed_primary() {
    let start = Instant::now();
    let Some(mut cluster) = Cluster::start(
        "a_cluster_replica_takes_over_the_slots_of_a_killed_primary",
        3,
        1,
        &RedisOptions::new(),
    ) else {
        return;
    };
    eprintln!("6-node cluster ok in {:?}", start.elapsed());
    assert_eq!(cluster.nodes().len(), 6);
    let key = "{acct-9}:failures";
    let slot = cluster.keyslot(key);
    let owner = cluster.node_for_slot(slot);
    assert!(owner < 3, "the first three nodes are the primaries");
    let before = cluster.cluster_nodes();
    cluster.node(owner).cli(&["SET", key, "2"]);
    // Not `WAIT` from a second redis-cli: it waits only for its own connection's writes.
    let replicas = cluster
        .wait_replicated(owner, Duration::from_secs(10))
        .unwrap();
    assert_eq!(replicas, 1);
    let owner_repl = cluster.node(owner).cli(&["INFO", "replication"]);
    cluster.node_mut(owner).kill9();
    let start = Instant::now();
    let new_owner = loop {
        if let Some(node) = cluster.try_node_for_slot(slot).filter(|&n| n != owner) {
            break node;
        }
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "no replica took over"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    let ok = cluster.wait_ok(Duration::from_secs(20)).unwrap();
    eprintln!(
        "node {new_owner} took over slot {slot} {:?} after the kill (ok after {ok:?} more)",
        start.elapsed() - ok
    );
    assert!(new_owner >= 3, "a replica took over");
    let got = cluster.node(new_owner).cli(&["GET", key]);
    assert_eq!(
        got,
        "2",
        "replicated to {replicas}; owner {owner} (port {}) before the kill: {owner_repl}\n\
         nodes before: {before:?}\nnodes after: {:?}\nnew owner {new_owner} (port {}): {}",
        cluster.node(owner).port(),
        cluster.cluster_nodes(),
        cluster.node(new_owner).port(),
        cluster.node(new_owner).cli(&["INFO", "replication"]),
    );
}

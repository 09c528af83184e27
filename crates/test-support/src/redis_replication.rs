//! A primary and its replicas, each replica optionally linked to the primary through a
//! [`LagProxy`] so that replication lags, with a manual failover ([`ReplicaSet::promote`]).
//!
//! Every server gets the same [`RedisOptions`] (TLS, ACL user, append-only file, extra
//! arguments); the replicas also get `replicaof` (the proxy's port when lagged) and, under an ACL
//! user, `masteruser`/`masterauth`, under TLS `tls-replication yes`.
//!
//! ```no_run
//! # use std::time::Duration;
//! # use test_support::{RedisOptions, ReplicaSet};
//! let Some(set) = ReplicaSet::start("my_test", 1, &RedisOptions::new(), Some(Duration::from_millis(200))) else { return };
//! set.primary().cli(&["SET", "k", "v"]); // on the replica 200 ms later
//! ```

use std::time::{Duration, Instant};

use crate::lag_proxy::LagProxy;
use crate::redis::{RedisOptions, RedisServer, info_value, redis_available};

/// One primary, its replicas and their lag proxies; everything killed on drop.
#[derive(Debug)]
pub struct ReplicaSet {
    // Declared first: the replicas go before the proxies and the primary, so that nothing
    // reconnects in between.
    replicas: Vec<RedisServer>,
    proxies: Vec<Option<LagProxy>>,
    primary: RedisServer,
    options: RedisOptions,
}

impl ReplicaSet {
    /// Starts a primary and `replicas` replicas for `test`, every one with `options` (its port
    /// setting ignored: free ports). With `lag`, each replica replicates through its own
    /// [`LagProxy`] with that delay each way; without, directly. Returns once writes flow to every
    /// replica (a `PUBLISH` on channel `test-support:replication-ready` reached them all; no key
    /// is written). `None` when Redis is not installed (see [`crate::redis`]).
    ///
    /// # Panics
    /// When `REQUIRE_REDIS=1` and Redis is missing, or when a server or link does not come up.
    pub fn start(
        test: &str,
        replicas: usize,
        options: &RedisOptions,
        lag: Option<Duration>,
    ) -> Option<Self> {
        if !redis_available(test) {
            return None;
        }
        let mut options = options.clone();
        options.clear_port();
        let primary = options.clone().start(test)?;
        let mut set = Self {
            replicas: Vec::new(),
            proxies: Vec::new(),
            primary,
            options,
        };
        for _ in 0..replicas {
            // Without delay while the replica synchronises (a handshake of several round trips);
            // the lag is set once writes flow.
            let proxy = lag.map(|_| {
                LagProxy::start(set.primary.port(), Duration::ZERO)
                    .expect("a lag proxy on loopback")
            });
            let upstream = proxy.as_ref().map_or(set.primary.port(), LagProxy::port);
            let replica = set
                .options
                .clone()
                .replica_of("127.0.0.1", upstream)
                .start(test)?;
            set.proxies.push(proxy);
            set.replicas.push(replica);
        }
        // A link that is up does not yet carry writes: since Redis 7.0 the primary starts a
        // replica's command stream only when the replica's first REPLCONF ACK arrives (one lag
        // later through a proxy). A PUBLISH (replicated, but no key) that reached every replica
        // proves the stream flows, so the first write of the test sees the configured lag only.
        set.primary
            .cli(&["PUBLISH", "test-support:replication-ready", "1"]);
        set.wait_synced(Duration::from_secs(20))
            .unwrap_or_else(|e| panic!("replication does not flow: {e}"));
        if let Some(lag) = lag {
            for proxy in set.proxies.iter().flatten() {
                proxy.set_delay(lag);
            }
        }
        Some(set)
    }

    /// The server started as the primary (still this one after [`ReplicaSet::promote`]).
    pub fn primary(&self) -> &RedisServer {
        &self.primary
    }

    /// The primary, to kill or restart it.
    pub fn primary_mut(&mut self) -> &mut RedisServer {
        &mut self.primary
    }

    /// Replica `i` (from 0).
    ///
    /// # Panics
    /// When there is no replica `i`.
    pub fn replica(&self, i: usize) -> &RedisServer {
        &self.replicas[i]
    }

    /// How many replicas.
    pub fn replica_count(&self) -> usize {
        self.replicas.len()
    }

    /// The lag proxy between replica `i` and the primary, when started with a lag.
    ///
    /// # Panics
    /// When there is no replica `i`.
    pub fn proxy(&self, i: usize) -> Option<&LagProxy> {
        self.proxies[i].as_ref()
    }

    /// The options every server was started with.
    pub fn options(&self) -> &RedisOptions {
        &self.options
    }

    /// Manual failover: `REPLICAOF NO ONE` on replica `i`, then waits until it reports
    /// `role:master`. The other servers are left as they are (point them at it with
    /// `cli(&["REPLICAOF", "127.0.0.1", &port])`).
    ///
    /// # Panics
    /// When there is no replica `i`, or it does not answer or become a primary within 10 s.
    pub fn promote(&self, i: usize) {
        let replica = &self.replicas[i];
        let answer = replica.cli(&["REPLICAOF", "NO", "ONE"]);
        assert_eq!(answer, "OK", "REPLICAOF NO ONE on {}", replica.port());
        let deadline = Instant::now() + Duration::from_secs(10);
        while replica.info("replication", "role").as_deref() != Some("master") {
            assert!(
                Instant::now() < deadline,
                "replica on {} did not become a primary",
                replica.port()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Waits until every replica has processed the primary's whole replication stream as of the
    /// call (`slave_repl_offset` ≥ the primary's `master_repl_offset`); `Ok(how long it took)`.
    ///
    /// # Errors
    /// When a replica is behind after `timeout`, naming it and both offsets.
    pub fn wait_synced(&self, timeout: Duration) -> Result<Duration, String> {
        let start = Instant::now();
        let offset = |server: &RedisServer, field: &str| {
            let info = server.try_cli(&["INFO", "replication"]).unwrap_or_default();
            info_value(&info, field).and_then(|v| v.parse::<u64>().ok())
        };
        let target = offset(&self.primary, "master_repl_offset").ok_or_else(|| {
            format!(
                "the primary on {} has no master_repl_offset",
                self.primary.port()
            )
        })?;
        for replica in &self.replicas {
            loop {
                let reached = offset(replica, "slave_repl_offset").unwrap_or(0);
                if reached >= target {
                    break;
                }
                if start.elapsed() >= timeout {
                    return Err(format!(
                        "the replica on {} is at offset {reached}, the primary was at {target}, after {timeout:?}",
                        replica.port()
                    ));
                }
                std::thread::sleep(Duration::from_millis(10));
            }
        }
        Ok(start.elapsed())
    }

    /// The server listening on `port` (the primary or a replica), e.g. the one a sentinel names.
    pub fn server_on_port(&self, port: u16) -> Option<&RedisServer> {
        std::iter::once(&self.primary)
            .chain(&self.replicas)
            .find(|server| server.port() == port)
    }
}

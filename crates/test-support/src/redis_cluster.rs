//! A Redis Cluster of the test's own: three (or more) cluster-enabled [`RedisServer`]s joined
//! with `redis-cli --cluster create … --cluster-yes`, optionally with replicas per primary.
//!
//! Each node keeps `nodes.conf` in its data directory (its node ID, epoch, slots, and what it knows
//! of the others). [`RedisServer::restart_empty`] keeps that file: a restarted node is the same
//! node with the same slots and no keys, and the cluster returns to `cluster_state:ok` — the keys
//! of its slots are simply gone. (Were the file deleted too, the node would come back as a
//! stranger owning no slot, and those slots would stay uncovered: `cluster_state:fail` on every
//! node, `CLUSTERDOWN` for every key.) With replicas, killing a primary for longer than the node
//! timeout (2 s) makes its replica take over its slots.
//!
//! ```no_run
//! # use test_support::{Cluster, RedisOptions};
//! let Some(cluster) = Cluster::start("t", 3, 0, &RedisOptions::new()) else { return };
//! let owner = cluster.node(cluster.node_for_key("{acct}:fails")); // where the key lives
//! ```

use std::time::{Duration, Instant};

use crate::command::run_with_timeout;
use crate::redis::{RedisOptions, RedisServer, info_value, redis_available};

/// How long the cluster may take to reach `cluster_state:ok`.
const OK_TIMEOUT: Duration = Duration::from_secs(30);

/// Cluster nodes, killed on drop.
#[derive(Debug)]
pub struct Cluster {
    nodes: Vec<RedisServer>,
}

/// One line of `CLUSTER NODES`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClusterNodeInfo {
    /// The node ID.
    pub id: String,
    /// Its client port.
    pub port: u16,
    /// Its flags (`myself`, `master`, `slave`, `fail`, …).
    pub flags: Vec<String>,
    /// The primary's node ID for a replica.
    pub primary_id: Option<String>,
    /// Its slot ranges, inclusive.
    pub slots: Vec<(u16, u16)>,
}

impl Cluster {
    /// Starts `primaries` (≥ 3) primaries and `replicas_per_primary` replicas of each for `test`,
    /// every node with `options` (made a cluster node on free ports), creates the cluster and
    /// waits until every node reports `cluster_state:ok`, sees every replica as one, and each
    /// replica's link to its primary is up (so a key written next reaches its replica, see
    /// [`Cluster::wait_replicated`]). Node `i < primaries` starts as a
    /// primary (`redis-cli --cluster create` assigns the first nodes as primaries). `None` when
    /// Redis is not installed.
    ///
    /// # Panics
    /// When `REQUIRE_REDIS=1` and Redis is missing, when `primaries < 3`, or when the cluster
    /// is not ok and settled within 30 s.
    pub fn start(
        test: &str,
        primaries: usize,
        replicas_per_primary: usize,
        options: &RedisOptions,
    ) -> Option<Self> {
        assert!(primaries >= 3, "a Redis Cluster needs at least 3 primaries");
        if !redis_available(test) {
            return None;
        }
        let mut options = options.clone().cluster(true);
        options.clear_port();
        let mut nodes = Vec::new();
        for _ in 0..primaries * (1 + replicas_per_primary) {
            nodes.push(options.clone().start(test)?);
        }
        let cluster = Self { nodes };
        let mut command = std::process::Command::new("redis-cli");
        command.arg("--cluster").arg("create");
        command.args(cluster.nodes.iter().map(RedisServer::addr));
        command.args([
            "--cluster-replicas",
            &replicas_per_primary.to_string(),
            "--cluster-yes",
        ]);
        if let Some(ca) = options.tls_ca() {
            command.arg("--tls").arg("--cacert").arg(ca.ca_cert());
        }
        if let Some((name, password)) = options.user() {
            command.args(["--user", name, "--no-auth-warning"]);
            command.env("REDISCLI_AUTH", password);
        }
        run_with_timeout(command, Duration::from_secs(60))
            .unwrap_or_else(|e| panic!("redis-cli --cluster create failed: {e}"));
        cluster
            .wait_ok(OK_TIMEOUT)
            .unwrap_or_else(|e| panic!("{e}"));
        cluster
            .wait_converged(primaries * replicas_per_primary, OK_TIMEOUT)
            .unwrap_or_else(|e| panic!("{e}"));
        Some(cluster)
    }

    /// Waits until the topology `redis-cli --cluster create` set up is in force everywhere: every
    /// node's `CLUSTER NODES` shows `replicas` replicas, and each replica reports the link to its
    /// primary up. `cluster_state:ok` comes sooner: a node may still see a replica as an empty
    /// primary, and a replica may not have started to copy its primary yet, so a key written then
    /// can be missing from the replica that takes over.
    fn wait_converged(&self, replicas: usize, timeout: Duration) -> Result<(), String> {
        let start = Instant::now();
        for node in &self.nodes {
            loop {
                let view =
                    parse_cluster_nodes(&node.try_cli(&["CLUSTER", "NODES"]).unwrap_or_default());
                let seen = view
                    .iter()
                    .filter(|n| n.flags.iter().any(|f| f == "slave"))
                    .count();
                if seen == replicas {
                    break;
                }
                if start.elapsed() >= timeout {
                    return Err(format!(
                        "cluster node on {} sees {seen} replicas, not {replicas}, after \
                         {timeout:?}: {view:?}",
                        node.port()
                    ));
                }
                std::thread::sleep(Duration::from_millis(50));
            }
        }
        for node in &self.nodes {
            if node.info("replication", "role").as_deref() == Some("slave") {
                node.wait_for_link(timeout.saturating_sub(start.elapsed()))?;
            }
        }
        Ok(())
    }

    /// Waits until every running node reports `cluster_state:ok`; `Ok(how long it took)`.
    ///
    /// # Errors
    /// When a node is not ok within `timeout`, naming it.
    pub fn wait_ok(&self, timeout: Duration) -> Result<Duration, String> {
        let start = Instant::now();
        for node in &self.nodes {
            if node.pid().is_none() {
                continue;
            }
            loop {
                let info = node.try_cli(&["CLUSTER", "INFO"]).unwrap_or_default();
                if info_value(&info, "cluster_state").as_deref() == Some("ok") {
                    break;
                }
                if start.elapsed() >= timeout {
                    return Err(format!(
                        "cluster node on {} not ok after {timeout:?}: {}",
                        node.port(),
                        info.lines().take(3).collect::<Vec<_>>().join(" ")
                    ));
                }
                std::thread::sleep(Duration::from_millis(50));
            }
        }
        Ok(start.elapsed())
    }

    /// Waits until every replica of node `primary` holds as many keys as the primary and has
    /// applied its replication stream up to the primary's `master_repl_offset` at the call;
    /// `Ok(the number of replicas)`.
    ///
    /// `WAIT` is no substitute in a test that writes with one `redis-cli` and waits with another:
    /// `WAIT` waits for the writes of *its own* connection, and a fresh connection has none, so it
    /// answers at once with every connected replica, acknowledged or not.
    ///
    /// # Errors
    /// When a replica lags after `timeout`, naming it, both key counts and both offsets; when the
    /// primary has no replica.
    pub fn wait_replicated(&self, primary: usize, timeout: Duration) -> Result<usize, String> {
        let start = Instant::now();
        let offset = |node: &RedisServer, field| -> i64 {
            node.info("replication", field)
                .and_then(|v| v.parse().ok())
                .unwrap_or(-1)
        };
        let keys = |node: &RedisServer| node.cli(&["DBSIZE"]).parse::<u64>().ok();
        let primary_node = &self.nodes[primary];
        let target = offset(primary_node, "master_repl_offset");
        let target_keys = keys(primary_node);
        let nodes = self.cluster_nodes();
        let id = nodes
            .iter()
            .find(|n| n.port == primary_node.port())
            .map(|n| n.id.clone())
            .ok_or_else(|| format!("node {primary} is not in CLUSTER NODES"))?;
        let replicas: Vec<&RedisServer> = nodes
            .iter()
            .filter(|n| n.primary_id.as_deref() == Some(id.as_str()))
            .filter_map(|r| self.nodes.iter().find(|n| n.port() == r.port))
            .collect();
        if replicas.is_empty() {
            return Err(format!("node {primary} has no replica: {nodes:?}"));
        }
        for node in &replicas {
            loop {
                let applied = offset(node, "slave_repl_offset");
                let held = keys(node);
                if applied >= target && held == target_keys {
                    break;
                }
                if start.elapsed() >= timeout {
                    return Err(format!(
                        "replica on {} holds {held:?} keys of {target_keys:?} and applied offset \
                         {applied} of {target} after {timeout:?}: {}",
                        node.port(),
                        node.cli(&["INFO", "replication"])
                    ));
                }
                std::thread::sleep(Duration::from_millis(20));
            }
        }
        Ok(replicas.len())
    }

    /// The nodes, primaries first (as created).
    pub fn nodes(&self) -> &[RedisServer] {
        &self.nodes
    }

    /// Node `i`.
    ///
    /// # Panics
    /// When there is no node `i`.
    pub fn node(&self, i: usize) -> &RedisServer {
        &self.nodes[i]
    }

    /// Node `i`, to kill or restart it.
    ///
    /// # Panics
    /// When there is no node `i`.
    pub fn node_mut(&mut self, i: usize) -> &mut RedisServer {
        &mut self.nodes[i]
    }

    /// Each node's URL ([`RedisServer::url`]), the seed list of a cluster client.
    pub fn urls(&self) -> Vec<String> {
        self.nodes.iter().map(RedisServer::url).collect()
    }

    /// `CLUSTER KEYSLOT key`, asked of the first running node.
    ///
    /// # Panics
    /// When no node answers with a slot.
    pub fn keyslot(&self, key: &str) -> u16 {
        let answer = self.any_node().cli(&["CLUSTER", "KEYSLOT", key]);
        answer
            .parse()
            .unwrap_or_else(|_| panic!("CLUSTER KEYSLOT {key}: {answer:?}"))
    }

    /// `CLUSTER NODES` as the first running node sees it.
    ///
    /// # Panics
    /// When no node answers.
    pub fn cluster_nodes(&self) -> Vec<ClusterNodeInfo> {
        parse_cluster_nodes(&self.any_node().cli(&["CLUSTER", "NODES"]))
    }

    /// The index (into [`Cluster::nodes`]) of the primary that owns `slot`, as the first running
    /// node sees it (after a failover: the promoted replica).
    ///
    /// # Panics
    /// When no live primary of ours owns the slot (see [`Cluster::try_node_for_slot`]).
    pub fn node_for_slot(&self, slot: u16) -> usize {
        self.try_node_for_slot(slot)
            .unwrap_or_else(|| panic!("no live primary owns slot {slot}"))
    }

    /// [`Cluster::node_for_slot`], `None` while no live primary owns the slot (its owner failed
    /// and no replica has taken over yet).
    ///
    /// # Panics
    /// When no node answers `CLUSTER NODES`.
    pub fn try_node_for_slot(&self, slot: u16) -> Option<usize> {
        let owner = self.cluster_nodes().into_iter().find(|node| {
            node.flags.iter().any(|f| f == "master")
                && !node.flags.iter().any(|f| f == "fail" || f == "fail?")
                && node.slots.iter().any(|&(a, b)| (a..=b).contains(&slot))
        })?;
        self.nodes.iter().position(|node| node.port() == owner.port)
    }

    /// The index of the primary that owns `key`'s slot.
    ///
    /// # Panics
    /// As [`Cluster::keyslot`] and [`Cluster::node_for_slot`].
    pub fn node_for_key(&self, key: &str) -> usize {
        self.node_for_slot(self.keyslot(key))
    }

    fn any_node(&self) -> &RedisServer {
        self.nodes
            .iter()
            .find(|node| node.pid().is_some())
            .expect("a running cluster node")
    }
}

/// Parses `CLUSTER NODES` (one node a line: `id ip:port@bus flags primary ping pong epoch link
/// slot…`; slot entries in brackets are migrations, skipped).
pub fn parse_cluster_nodes(text: &str) -> Vec<ClusterNodeInfo> {
    text.lines()
        .filter_map(|line| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            if fields.len() < 8 {
                return None;
            }
            let address = fields[1].split('@').next()?;
            let port = address.rsplit(':').next()?.parse().ok()?;
            let slots = fields[8..]
                .iter()
                .filter(|s| !s.starts_with('['))
                .filter_map(|s| match s.split_once('-') {
                    Some((a, b)) => Some((a.parse().ok()?, b.parse().ok()?)),
                    None => s.parse().ok().map(|n| (n, n)),
                })
                .collect();
            Some(ClusterNodeInfo {
                id: fields[0].to_owned(),
                port,
                flags: fields[2].split(',').map(str::to_owned).collect(),
                primary_id: (fields[3] != "-").then(|| fields[3].to_owned()),
                slots,
            })
        })
        .collect()
}

//! Test-only helpers shared by the workspace's test suites.
//!
//! - [`TraceCapture`]: what a test traced, captured deterministically whatever other tests of the same
//!   binary do at the same time (see [`trace`] for why `set_default` per test is not enough).
//! - [`ClosedPort`]: a loopback port that refuses connections for as long as the test needs it.
//! - [`loopback`]: tiny servers for client tests ([`one_shot_http`], [`garbage_server`]).
//! - [`HostileServer`]: an HTTP server whose every answer is hostile (10 GiB, 1 byte/s, HTML,
//!   empty), for the SDK's and the CLI's limit tests.
//! - [`run_measured`]: runs a child process and reports its own peak resident set.
//! - [`RedisServer`]: a `redis-server` of the test's own on a loopback port; [`RedisOptions`] for a
//!   fixed port, an append-only file, a replica, TLS, an ACL user, a cluster node; kill -9, restart
//!   with or without its data, `redis-cli` for assertions.
//! - [`TestCa`]: a CA and a `localhost`/`127.0.0.1` server certificate made with `openssl`.
//! - [`LagProxy`]: a TCP proxy that delays every byte and can drop what is in transit.
//! - [`ReplicaSet`], [`Sentinels`], [`Cluster`]: a primary with replicas (lagged through proxies
//!   or not), three sentinels over them, a Redis Cluster.
//! - [`error_chain`]: an error with its sources, as one line.
//! - [`test_as_child`], [`wait_for_file`] (and [`wait_for_file_async`]): one of the binary's own
//!   tests run as a child process, and the file it signals through.
//! - [`assert_request_logged`]: what a generated client's request span shows.
//! - [`git`]: git commands and a throw-away clone of this repository.
//! - `tls` (feature `http-client`, which brings in reqwest): the HTTPS checks every client crate
//!   runs.

pub mod child;
mod command;
pub mod error;
pub mod git;
pub mod hostile;
pub mod lag_proxy;
pub mod loopback;
pub mod net;
pub mod process;
pub mod redis;
pub mod redis_cluster;
pub mod redis_replication;
pub mod redis_sentinel;
pub mod request_log;
#[cfg(feature = "http-client")]
pub mod tls;
pub mod tls_ca;
pub mod trace;

pub use child::{test_as_child, wait_for_file, wait_for_file_async};
pub use error::error_chain;
pub use hostile::{Answer, HostileServer};
pub use lag_proxy::{InTransit, LagProxy};
pub use loopback::{garbage_server, one_shot_http, one_shot_http_with_headers};
pub use net::ClosedPort;
pub use process::{Measured, run_measured};
pub use redis::{RedisOptions, RedisServer, info_value};
pub use redis_cluster::{Cluster, ClusterNodeInfo};
pub use redis_replication::ReplicaSet;
pub use redis_sentinel::{Sentinel, Sentinels};
pub use request_log::assert_request_logged;
pub use tls_ca::TestCa;
pub use trace::TraceCapture;

#[doc(hidden)]
pub use ctor as __ctor;

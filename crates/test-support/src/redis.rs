//! A `redis-server` of the test's own on a free loopback port (`--save "" --appendonly no`, its
//! files in a temporary directory), stopped when dropped.
//!
//! Without `redis-server` on the PATH, [`RedisServer::start`] prints a loud SKIPPED line to the
//! process's stderr and returns `None`, unless `REQUIRE_REDIS=1` (as `.ci/run` sets), which makes a
//! missing server a test failure.

use std::net::{TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A redis-server child process, stopped on drop.
#[derive(Debug)]
pub struct RedisServer {
    child: Option<Child>,
    port: u16,
    _dir: tempfile::TempDir,
}

impl RedisServer {
    /// Starts one for `test` (named in the SKIPPED line), waiting up to 10 s until it listens.
    ///
    /// # Panics
    /// When `REQUIRE_REDIS=1` and `redis-server` is missing, or when it does not start: a test
    /// helper fails its test.
    pub fn start(test: &str) -> Option<Self> {
        let found = Command::new("redis-server")
            .arg("--version")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok();
        if !found {
            assert!(
                std::env::var("REQUIRE_REDIS").as_deref() != Ok("1"),
                "REQUIRE_REDIS=1 but redis-server is not on the PATH (Debian: apt-get install redis-server)"
            );
            // Straight to the process's stderr: the test harness does not capture it, so the
            // skip shows in a normal `cargo test` run.
            let _ = std::io::Write::write_all(
                &mut std::io::stderr(),
                format!("\n*** SKIPPED {test}: redis-server is not installed (apt-get install redis-server); set REQUIRE_REDIS=1 to make this a failure ***\n").as_bytes(),
            );
            return None;
        }
        let dir = tempfile::tempdir().expect("a temporary directory for redis-server");
        let port = TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("a free loopback port")
            .port();
        let child = Command::new("redis-server")
            .args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
            .args(["--save", "", "--appendonly", "no"])
            .arg("--dir")
            .arg(dir.path())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start redis-server");
        let server = Self {
            child: Some(child),
            port,
            _dir: dir,
        };
        let deadline = Instant::now() + Duration::from_secs(10);
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                Instant::now() < deadline,
                "redis-server did not listen on {port} within 10 s"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        Some(server)
    }

    /// Its loopback port.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// `redis://127.0.0.1:PORT/0`.
    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/0", self.port)
    }

    /// Stops it now (kill and reap), e.g. to test what happens when Redis goes away.
    pub fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        self.stop();
    }
}

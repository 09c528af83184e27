//! Three Redis Sentinels (`redis-server sentinel.conf --sentinel`) watching a [`ReplicaSet`], so
//! that killing the primary makes them promote a replica.
//!
//! Each sentinel has its own writable config file in its own temporary directory (a sentinel
//! rewrites it as it learns): `sentinel monitor NAME 127.0.0.1 PRIMARY_PORT 2` (quorum 2),
//! `down-after-milliseconds 1000`, `failover-timeout 3000`, `parallel-syncs 1`,
//! `announce-ip 127.0.0.1`. Under the set's TLS they listen with TLS only and reach the servers
//! and each other with TLS (`tls-replication yes`); under its ACL user they require that user
//! (the `default` user off) and authenticate with it to the servers (`auth-user`/`auth-pass`) and
//! to each other (`sentinel-user`/`sentinel-pass`).
//!
//! ```no_run
//! # use std::time::Duration;
//! # use test_support::{RedisOptions, ReplicaSet, Sentinels};
//! let Some(mut s) = Sentinels::start("t", ReplicaSet::start("t", 1, &RedisOptions::new(), None).unwrap(), "lockout") else { return };
//! let old = s.set().primary().port(); s.set_mut().primary_mut().kill9();
//! let (new_port, took) = s.wait_for_failover(old, Duration::from_secs(15)).unwrap();
//! ```

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::redis::{
    AclUser, CLI_TIMEOUT, CliTarget, free_port, log_tail, redis_available, url_encode, wait_started,
};
use crate::redis_replication::ReplicaSet;

/// How long the sentinels may take to find the primary, its replicas and each other.
const READY_TIMEOUT: Duration = Duration::from_secs(20);

/// One sentinel process, killed on drop.
#[derive(Debug)]
pub struct Sentinel {
    child: Option<Child>,
    port: u16,
    target: CliTarget,
    dir: tempfile::TempDir,
}

impl Sentinel {
    /// Its port (the TLS port under TLS).
    pub fn port(&self) -> u16 {
        self.port
    }

    /// `127.0.0.1:PORT`.
    pub fn addr(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    /// Its log file.
    pub fn log_path(&self) -> PathBuf {
        self.dir.path().join("sentinel.log")
    }

    /// `redis-cli ARGS` against this sentinel (TLS and user as needed), stdout without the trailing
    /// newline.
    ///
    /// # Panics
    /// When redis-cli cannot reach it or runs longer than 15 s.
    pub fn cli(&self, args: &[&str]) -> String {
        self.try_cli(args).unwrap_or_else(|e| panic!("{e}"))
    }

    /// [`Sentinel::cli`] that reports failures as `Err`.
    ///
    /// # Errors
    /// When redis-cli exits with failure or times out.
    pub fn try_cli(&self, args: &[&str]) -> Result<String, String> {
        self.target.run(args, CLI_TIMEOUT)
    }

    /// SIGKILL and reap; a no-op when it is not running.
    pub fn kill9(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Whether it runs.
    pub fn is_running(&self) -> bool {
        self.child.is_some()
    }

    /// Starts it again on the same port with the config file it last wrote (killing it first).
    ///
    /// # Panics
    /// When it does not answer `PING` within 20 s.
    pub fn restart(&mut self) {
        self.kill9();
        self.launch();
    }

    fn launch(&mut self) {
        let child = Command::new("redis-server")
            .arg(self.dir.path().join("sentinel.conf"))
            .arg("--sentinel")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start redis-server --sentinel");
        self.child = Some(child);
        let (target, log) = (self.target.clone(), self.log_path());
        let what = format!("sentinel on {}", self.port);
        wait_started(&mut self.child, &what, &log, || {
            target.run(&["PING"], CLI_TIMEOUT).as_deref() == Ok("PONG")
        });
    }
}

impl Drop for Sentinel {
    fn drop(&mut self) {
        self.kill9();
    }
}

/// Three sentinels and the [`ReplicaSet`] they watch; all killed on drop (the sentinels first).
#[derive(Debug)]
pub struct Sentinels {
    sentinels: Vec<Sentinel>,
    set: ReplicaSet,
    master_name: String,
}

impl Sentinels {
    /// Starts three sentinels for `test` monitoring `set`'s primary under `master_name`, and waits
    /// until each one knows the primary, every replica and the two other sentinels (a failover
    /// needs them). `None` when Redis is not installed.
    ///
    /// # Panics
    /// When `REQUIRE_REDIS=1` and Redis is missing, or when the sentinels are not ready within
    /// 20 s (the message quotes what the first one knows and its log).
    pub fn start(test: &str, set: ReplicaSet, master_name: &str) -> Option<Self> {
        if !redis_available(test) {
            return None;
        }
        let options = set.options().clone();
        let user = options.user().map(|(name, password)| AclUser {
            name: name.to_owned(),
            password: password.to_owned(),
        });
        let ca = options.tls_ca().cloned();
        let mut sentinels = Vec::new();
        for _ in 0..3 {
            let dir = tempfile::tempdir().expect("a temporary directory for a sentinel");
            let port = free_port();
            let mut conf = String::new();
            if let Some(ca) = &ca {
                conf += &format!(
                    "port 0\ntls-port {port}\ntls-cert-file \"{}\"\ntls-key-file \"{}\"\n\
                     tls-ca-cert-file \"{}\"\ntls-auth-clients no\ntls-replication yes\n",
                    ca.server_cert().display(),
                    ca.server_key().display(),
                    ca.ca_cert().display()
                );
            } else {
                conf += &format!("port {port}\n");
            }
            conf += &format!(
                "bind 127.0.0.1\ndir \"{dir}\"\nlogfile \"{dir}/sentinel.log\"\n\
                 sentinel announce-ip 127.0.0.1\n",
                dir = dir.path().display()
            );
            if let Some(user) = &user {
                conf += &format!(
                    "user default off\nuser {name} on >{password} allkeys allchannels +@all\n\
                     sentinel sentinel-user {name}\nsentinel sentinel-pass {password}\n",
                    name = user.name,
                    password = user.password
                );
            }
            conf += &format!(
                "sentinel monitor {master_name} 127.0.0.1 {} 2\n\
                 sentinel down-after-milliseconds {master_name} 1000\n\
                 sentinel failover-timeout {master_name} 3000\n\
                 sentinel parallel-syncs {master_name} 1\n",
                set.primary().port()
            );
            if let Some(user) = &user {
                conf += &format!(
                    "sentinel auth-user {master_name} {}\nsentinel auth-pass {master_name} {}\n",
                    user.name, user.password
                );
            }
            std::fs::write(dir.path().join("sentinel.conf"), conf).expect("write sentinel.conf");
            let mut sentinel = Sentinel {
                child: None,
                port,
                target: CliTarget {
                    port,
                    ca: ca.as_ref().map(|ca| ca.ca_cert()),
                    user: user.clone(),
                },
                dir,
            };
            sentinel.launch();
            sentinels.push(sentinel);
        }
        let sentinels = Self {
            sentinels,
            set,
            master_name: master_name.to_owned(),
        };
        sentinels.wait_ready();
        Some(sentinels)
    }

    fn wait_ready(&self) {
        let replicas = self.set.replica_count().to_string();
        let deadline = Instant::now() + READY_TIMEOUT;
        for sentinel in &self.sentinels {
            loop {
                let answer = sentinel
                    .try_cli(&["SENTINEL", "MASTER", &self.master_name])
                    .unwrap_or_default();
                let lines: Vec<&str> = answer.lines().collect();
                let field = |name: &str| {
                    lines
                        .chunks(2)
                        .find(|pair| pair[0] == name)
                        .and_then(|pair| pair.get(1).copied())
                };
                if field("num-slaves") == Some(replicas.as_str())
                    && field("num-other-sentinels") == Some("2")
                    && field("flags") == Some("master")
                {
                    break;
                }
                assert!(
                    Instant::now() < deadline,
                    "sentinel on {} not ready after {READY_TIMEOUT:?} (wants {replicas} replicas, 2 other sentinels): {}; its log:\n{}",
                    sentinel.port,
                    answer.replace('\n', " "),
                    log_tail(&sentinel.log_path())
                );
                std::thread::sleep(Duration::from_millis(50));
            }
        }
    }

    /// The watched servers.
    pub fn set(&self) -> &ReplicaSet {
        &self.set
    }

    /// The watched servers, to kill or restart one.
    pub fn set_mut(&mut self) -> &mut ReplicaSet {
        &mut self.set
    }

    /// The name the sentinels know the primary by.
    pub fn master_name(&self) -> &str {
        &self.master_name
    }

    /// Sentinel `i` (0 to 2).
    ///
    /// # Panics
    /// When there is no sentinel `i`.
    pub fn sentinel(&self, i: usize) -> &Sentinel {
        &self.sentinels[i]
    }

    /// `127.0.0.1:PORT` of each sentinel.
    pub fn addrs(&self) -> Vec<String> {
        self.sentinels.iter().map(Sentinel::addr).collect()
    }

    /// A URL per sentinel, as a client of the sentinels is configured: `redis://` or `rediss://`
    /// (under TLS), with `USER:PASSWORD@` (percent-encoded) under the ACL user, no database.
    pub fn urls(&self) -> Vec<String> {
        let scheme = if self.set.options().tls_ca().is_some() {
            "rediss"
        } else {
            "redis"
        };
        let auth = self
            .set
            .options()
            .user()
            .map(|(name, password)| format!("{}:{}@", url_encode(name), url_encode(password)))
            .unwrap_or_default();
        self.sentinels
            .iter()
            .map(|s| format!("{scheme}://{auth}{}", s.addr()))
            .collect()
    }

    /// The primary's address as the first running sentinel that answers says
    /// (`SENTINEL GET-MASTER-ADDR-BY-NAME`).
    ///
    /// # Errors
    /// When no sentinel answers with an address.
    pub fn master_addr(&self) -> Result<(String, u16), String> {
        let mut errors = Vec::new();
        for sentinel in self.sentinels.iter().filter(|s| s.is_running()) {
            match sentinel.try_cli(&["SENTINEL", "GET-MASTER-ADDR-BY-NAME", &self.master_name]) {
                Ok(answer) => {
                    let mut lines = answer.lines();
                    let host = lines.next().unwrap_or_default().to_owned();
                    match lines.next().map(str::parse::<u16>) {
                        Some(Ok(port)) => return Ok((host, port)),
                        _ => errors.push(format!("{}: {answer:?}", sentinel.port)),
                    }
                }
                Err(e) => errors.push(e),
            }
        }
        Err(format!(
            "no sentinel named the primary: {}",
            errors.join("; ")
        ))
    }

    /// Waits until every running sentinel names a primary other than `old_port` and that server
    /// reports `role:master`; `Ok((its port, how long it took))`.
    ///
    /// # Errors
    /// When that has not happened within `timeout`, with what the sentinels said last.
    pub fn wait_for_failover(
        &self,
        old_port: u16,
        timeout: Duration,
    ) -> Result<(u16, Duration), String> {
        let start = Instant::now();
        loop {
            let answers: Vec<Option<u16>> = self
                .sentinels
                .iter()
                .filter(|s| s.is_running())
                .map(|s| {
                    s.try_cli(&["SENTINEL", "GET-MASTER-ADDR-BY-NAME", &self.master_name])
                        .ok()
                        .and_then(|a| a.lines().nth(1).and_then(|p| p.parse().ok()))
                })
                .collect();
            let last = if let Some(Some(port)) = answers.first().copied()
                && port != old_port
                && answers.iter().all(|a| *a == Some(port))
            {
                let role = self.set.server_on_port(port).and_then(|server| {
                    let info = server.try_cli(&["INFO", "replication"]).ok()?;
                    crate::redis::info_value(&info, "role")
                });
                if role.as_deref() == Some("master") {
                    return Ok((port, start.elapsed()));
                }
                format!("sentinels name {port}, whose role is {role:?}")
            } else {
                format!("sentinels name {answers:?}")
            };
            if start.elapsed() >= timeout {
                return Err(format!(
                    "no failover away from {old_port} within {timeout:?}: {last}"
                ));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

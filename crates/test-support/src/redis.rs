//! A `redis-server` of the test's own on a loopback port, its files in a temporary directory,
//! killed when dropped.
//!
//! [`RedisServer::start`] starts the plain kind (`--save "" --appendonly no`, a free port).
//! [`RedisOptions`] starts the others: a fixed port, an append-only file fsynced on every write,
//! a replica (`replicaof`), TLS with a [`TestCa`], an ACL user with a password (the `default` user
//! switched off), a cluster node, extra arguments. A started server can be killed with SIGKILL
//! ([`RedisServer::kill9`], nothing saved), restarted on the same port with its files
//! ([`RedisServer::restart`]) or without its data ([`RedisServer::restart_empty`]), frozen with
//! SIGSTOP ([`RedisServer::freeze`]), and questioned with `redis-cli` ([`RedisServer::cli`]).
//!
//! Without `redis-server` (or `redis-cli`) on the PATH, every constructor of this module and of
//! the topologies built on it ([`crate::ReplicaSet`], [`crate::Sentinels`], [`crate::Cluster`])
//! prints a loud SKIPPED line to the process's stderr and returns `None`, unless
//! `REQUIRE_REDIS=1` (as `.ci/run` sets), which makes a missing server a test failure.
//!
//! ```no_run
//! let Some(redis) = test_support::RedisOptions::new().appendonly(true).start("my_test") else { return };
//! assert_eq!(redis.cli(&["SET", "k", "v"]), "OK");
//! ```

use std::fmt;
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::command::run_with_timeout;
use crate::tls_ca::TestCa;

/// How long a server (or a replica's link to its primary) may take to come up.
const START_TIMEOUT: Duration = Duration::from_secs(20);
/// How long one `redis-cli` call may run unless the caller says otherwise.
pub(crate) const CLI_TIMEOUT: Duration = Duration::from_secs(15);

/// True when `redis-server` and `redis-cli` are on the PATH. Otherwise: panics when
/// `REQUIRE_REDIS=1`, else prints a loud SKIPPED line naming `test` and returns false.
pub(crate) fn redis_available(test: &str) -> bool {
    let found = |program: &str| {
        Command::new(program)
            .arg("--version")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok()
    };
    if found("redis-server") && found("redis-cli") {
        return true;
    }
    assert!(
        std::env::var("REQUIRE_REDIS").as_deref() != Ok("1"),
        "REQUIRE_REDIS=1 but redis-server or redis-cli is not on the PATH (Debian: apt-get install redis-server)"
    );
    // Straight to the process's stderr: the test harness does not capture it, so the skip shows
    // in a normal `cargo test` run.
    let _ = std::io::Write::write_all(
        &mut std::io::stderr(),
        format!("\n*** SKIPPED {test}: redis-server is not installed (apt-get install redis-server); set REQUIRE_REDIS=1 to make this a failure ***\n").as_bytes(),
    );
    false
}

/// A free loopback port (bound, read, released: another process may take it in between, as with
/// every "free port" helper).
pub(crate) fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free loopback port")
        .port()
}

/// An ACL user and its password; `Debug` shows the name only.
#[derive(Clone)]
pub(crate) struct AclUser {
    pub(crate) name: String,
    pub(crate) password: String,
}

impl fmt::Debug for AclUser {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AclUser")
            .field("name", &self.name)
            .field("password", &"<redacted>")
            .finish()
    }
}

/// Where and how `redis-cli` reaches one server or sentinel.
#[derive(Debug, Clone)]
pub(crate) struct CliTarget {
    pub(crate) port: u16,
    pub(crate) ca: Option<PathBuf>,
    pub(crate) user: Option<AclUser>,
}

impl CliTarget {
    /// Runs `redis-cli ARGS` against the target, killed after `timeout`. `Ok(stdout)` (trailing
    /// newline removed) when redis-cli exits 0 — an error *reply* is printed to stdout and exits 0,
    /// e.g. `"ERR unknown command ..."`; `Err` says what failed (no connection, timeout).
    pub(crate) fn run(&self, args: &[&str], timeout: Duration) -> Result<String, String> {
        let mut command = Command::new("redis-cli");
        command.args(["-h", "127.0.0.1", "-p", &self.port.to_string()]);
        if let Some(ca) = &self.ca {
            command.arg("--tls").arg("--cacert").arg(ca);
        }
        if let Some(user) = &self.user {
            // The password through the environment, not the command line.
            command.args(["--user", &user.name, "--no-auth-warning"]);
            command.env("REDISCLI_AUTH", &user.password);
        } else {
            command.env_remove("REDISCLI_AUTH");
        }
        command.args(args);
        run_with_timeout(command, timeout).map_err(|e| {
            format!(
                "redis-cli -p {} {}: {e}",
                self.port,
                args.first().copied().unwrap_or("")
            )
        })
    }
}

/// Waits until `ping` answers; panics with the tail of `log` when `child` exits first (it is then
/// set to `None`) or [`START_TIMEOUT`] passes.
pub(crate) fn wait_started(
    child: &mut Option<Child>,
    what: &str,
    log: &Path,
    ping: impl Fn() -> bool,
) {
    let deadline = Instant::now() + START_TIMEOUT;
    while !ping() {
        if let Some(status) = child.as_mut().and_then(|c| c.try_wait().ok().flatten()) {
            *child = None;
            panic!(
                "{what} exited at start ({status}); its log:\n{}",
                log_tail(log)
            );
        }
        assert!(
            Instant::now() < deadline,
            "{what} did not answer PING within {START_TIMEOUT:?}; its log:\n{}",
            log_tail(log)
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The last lines of a log file, for failure messages.
pub(crate) fn log_tail(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(15)..].join("\n")
}

/// `text` percent-encoded for a URL's user or password: every byte but RFC 3986's unreserved
/// characters (`A-Z a-z 0-9 - . _ ~`) as `%XX`.
pub(crate) fn url_encode(text: &str) -> String {
    const UNRESERVED: &percent_encoding::AsciiSet = &percent_encoding::NON_ALPHANUMERIC
        .remove(b'-')
        .remove(b'.')
        .remove(b'_')
        .remove(b'~');
    percent_encoding::utf8_percent_encode(text, UNRESERVED).to_string()
}

/// The value of `field` in an `INFO` answer (`field:value` lines).
pub fn info_value(info: &str, field: &str) -> Option<String> {
    info.lines()
        .find_map(|line| line.strip_prefix(field)?.strip_prefix(':'))
        .map(|v| v.trim().to_owned())
}

/// How to start a [`RedisServer`]: a builder, every setting off by default (a plain server on a
/// free port, no persistence). Every server gets `--repl-diskless-sync-delay 0` (a replica
/// synchronises at once instead of after Redis's default 5 s wait), unless an [`RedisOptions::arg`]
/// says otherwise.
///
/// ```no_run
/// # use test_support::{RedisOptions, TestCa};
/// let ca = TestCa::create();
/// let tls = RedisOptions::new().tls(&ca).acl_user("app", "pw").start("tls_test");
/// ```
#[derive(Debug, Clone, Default)]
pub struct RedisOptions {
    port: Option<u16>,
    appendonly: bool,
    replica_of: Option<(String, u16)>,
    tls: Option<TestCa>,
    user: Option<AclUser>,
    cluster: bool,
    extra: Vec<String>,
}

impl RedisOptions {
    /// A plain server on a free port, `--save "" --appendonly no`.
    pub fn new() -> Self {
        Self::default()
    }

    /// Listens on `port` (the TLS port under [`RedisOptions::tls`]) instead of a free one.
    pub fn port(mut self, port: u16) -> Self {
        self.port = Some(port);
        self
    }

    /// `appendonly yes` + `appendfsync always`: every acknowledged write survives a kill -9 and a
    /// [`RedisServer::restart`]. Off: `appendonly no`, and nothing survives (`save ""`).
    pub fn appendonly(mut self, on: bool) -> Self {
        self.appendonly = on;
        self
    }

    /// `replicaof HOST PORT`. Under [`RedisOptions::acl_user`] the replica authenticates to its
    /// primary as that user (`masteruser`/`masterauth`); under [`RedisOptions::tls`] it replicates
    /// over TLS (`tls-replication yes`). Starting waits until `master_link_status:up`.
    pub fn replica_of(mut self, host: &str, port: u16) -> Self {
        self.replica_of = Some((host.to_owned(), port));
        self
    }

    /// TLS only: `--port 0 --tls-port PORT`, the CA's server certificate and key, `tls-ca-cert-file`
    /// the CA, `--tls-auth-clients no` (clients need no certificate). Also `tls-replication yes`
    /// and, for a cluster node, `tls-cluster yes`. URLs become `rediss://`.
    pub fn tls(mut self, ca: &TestCa) -> Self {
        self.tls = Some(ca.clone());
        self
    }

    /// An ACL user `NAME on >PASSWORD ~* &* +@all`, and the `default` user switched off: a client
    /// must `AUTH NAME PASSWORD`. URLs carry `NAME:PASSWORD@`; [`RedisServer::cli`] authenticates.
    pub fn acl_user(mut self, name: &str, password: &str) -> Self {
        self.user = Some(AclUser {
            name: name.to_owned(),
            password: password.to_owned(),
        });
        self
    }

    /// A cluster node: `--cluster-enabled yes --cluster-config-file nodes.conf` (in the server's
    /// data directory), `--cluster-node-timeout 2000`, the cluster bus on a second free port
    /// (`--cluster-port`, kept across restarts).
    pub fn cluster(mut self, on: bool) -> Self {
        self.cluster = on;
        self
    }

    /// One more `redis-server` argument, appended last (`"--min-replicas-to-write"`, `"1"`).
    pub fn arg(mut self, arg: &str) -> Self {
        self.extra.push(arg.to_owned());
        self
    }

    /// The TLS CA, when set.
    pub fn tls_ca(&self) -> Option<&TestCa> {
        self.tls.as_ref()
    }

    /// The ACL user's name and password, when set.
    pub fn user(&self) -> Option<(&str, &str)> {
        self.user
            .as_ref()
            .map(|u| (u.name.as_str(), u.password.as_str()))
    }

    /// Forgets [`RedisOptions::port`]: a free port again (for topologies of several servers).
    pub(crate) fn clear_port(&mut self) {
        self.port = None;
    }

    /// Starts the server for `test` (named in the SKIPPED line), waiting until it answers `PING`
    /// (and, for a replica, until its link to the primary is up). `None` when Redis is not
    /// installed (see the module docs).
    ///
    /// # Panics
    /// When `REQUIRE_REDIS=1` and Redis is missing, or when the server does not come up within
    /// 20 s (the message quotes its log): a test helper fails its test.
    pub fn start(self, test: &str) -> Option<RedisServer> {
        if !redis_available(test) {
            return None;
        }
        Some(RedisServer::spawn(self))
    }
}

/// A redis-server child process, killed (SIGKILL) on drop; its files in a temporary directory
/// removed then.
#[derive(Debug)]
pub struct RedisServer {
    child: Option<Child>,
    port: u16,
    bus_port: Option<u16>,
    options: RedisOptions,
    dir: tempfile::TempDir,
}

impl RedisServer {
    /// Starts a plain one for `test` (`--save "" --appendonly no`, a free port), waiting until it
    /// answers. Same as `RedisOptions::new().start(test)`.
    ///
    /// # Panics
    /// When `REQUIRE_REDIS=1` and `redis-server` is missing, or when it does not start: a test
    /// helper fails its test.
    pub fn start(test: &str) -> Option<Self> {
        RedisOptions::new().start(test)
    }

    fn spawn(options: RedisOptions) -> Self {
        let dir = tempfile::tempdir().expect("a temporary directory for redis-server");
        std::fs::create_dir(dir.path().join("data")).expect("the data directory");
        let port = options.port.unwrap_or_else(free_port);
        let bus_port = options.cluster.then(free_port);
        let mut server = Self {
            child: None,
            port,
            bus_port,
            options,
            dir,
        };
        server.launch();
        server
    }

    fn data_dir(&self) -> PathBuf {
        self.dir.path().join("data")
    }

    /// Its log file (`--logfile`), kept across restarts.
    pub fn log_path(&self) -> PathBuf {
        self.dir.path().join("redis.log")
    }

    fn launch(&mut self) {
        assert!(
            self.child.is_none(),
            "redis-server on {} still runs",
            self.port
        );
        let o = &self.options;
        let mut command = Command::new("redis-server");
        command.args(["--bind", "127.0.0.1"]);
        if let Some(ca) = &o.tls {
            command.args(["--port", "0", "--tls-port", &self.port.to_string()]);
            command.arg("--tls-cert-file").arg(ca.server_cert());
            command.arg("--tls-key-file").arg(ca.server_key());
            command.arg("--tls-ca-cert-file").arg(ca.ca_cert());
            command.args(["--tls-auth-clients", "no", "--tls-replication", "yes"]);
            if o.cluster {
                command.args(["--tls-cluster", "yes"]);
            }
        } else {
            command.args(["--port", &self.port.to_string()]);
        }
        // Redis waits 5 s by default before a diskless full sync, for more replicas to join.
        command.args(["--save", "", "--repl-diskless-sync-delay", "0"]);
        if o.appendonly {
            command.args(["--appendonly", "yes", "--appendfsync", "always"]);
        } else {
            command.args(["--appendonly", "no"]);
        }
        if let Some(user) = &o.user {
            command.args(["--user", "default", "off"]);
            command.args([
                "--user",
                &user.name,
                "on",
                &format!(">{}", user.password),
                "~*",
                "&*",
                "+@all",
            ]);
            if o.replica_of.is_some() {
                command.args(["--masteruser", &user.name, "--masterauth", &user.password]);
            }
        }
        if let Some((host, port)) = &o.replica_of {
            command.args(["--replicaof", host, &port.to_string()]);
        }
        if let Some(bus) = self.bus_port {
            command.args([
                "--cluster-enabled",
                "yes",
                "--cluster-config-file",
                "nodes.conf",
                "--cluster-node-timeout",
                "2000",
                "--cluster-port",
                &bus.to_string(),
            ]);
        }
        command.args(&o.extra);
        command.arg("--dir").arg(self.data_dir());
        command.arg("--logfile").arg(self.log_path());
        command
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        self.child = Some(command.spawn().expect("start redis-server"));
        self.wait_ready();
    }

    fn wait_ready(&mut self) {
        let (target, port, log) = (self.cli_target(), self.port, self.log_path());
        wait_started(
            &mut self.child,
            &format!("redis-server on {port}"),
            &log,
            || {
                TcpStream::connect(("127.0.0.1", port)).is_ok()
                    && target.run(&["PING"], CLI_TIMEOUT).as_deref() == Ok("PONG")
            },
        );
        if self.options.replica_of.is_some() {
            self.wait_for_link(START_TIMEOUT)
                .unwrap_or_else(|e| panic!("{e}; its log:\n{}", log_tail(&self.log_path())));
        }
    }

    /// Waits until this replica reports `master_link_status:up`; `Ok(how long it took)`.
    ///
    /// # Errors
    /// When the link is not up within `timeout`.
    pub fn wait_for_link(&self, timeout: Duration) -> Result<Duration, String> {
        let start = Instant::now();
        loop {
            let info = self.try_cli(&["INFO", "replication"]).unwrap_or_default();
            if info_value(&info, "master_link_status").as_deref() == Some("up") {
                return Ok(start.elapsed());
            }
            if start.elapsed() >= timeout {
                return Err(format!(
                    "the replica on {} has no link to its primary after {timeout:?}: {}",
                    self.port,
                    info.replace("\r\n", " ")
                ));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Its loopback port (the TLS port under TLS).
    pub fn port(&self) -> u16 {
        self.port
    }

    /// `127.0.0.1:PORT`.
    pub fn addr(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    /// `redis://127.0.0.1:PORT/0`, `rediss://` under TLS, with `USER:PASSWORD@` under an ACL user
    /// (both percent-encoded).
    pub fn url(&self) -> String {
        let scheme = if self.options.tls.is_some() {
            "rediss"
        } else {
            "redis"
        };
        let auth = self
            .options
            .user
            .as_ref()
            .map(|u| format!("{}:{}@", url_encode(&u.name), url_encode(&u.password)))
            .unwrap_or_default();
        format!("{scheme}://{auth}127.0.0.1:{}/0", self.port)
    }

    /// The options it was started with.
    pub fn options(&self) -> &RedisOptions {
        &self.options
    }

    /// Its process id while it runs.
    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(Child::id)
    }

    /// Whether its process runs (not killed, not exited).
    pub fn is_running(&mut self) -> bool {
        match self.child.as_mut().map(Child::try_wait) {
            Some(Ok(None)) => true,
            Some(_) => {
                self.child = None;
                false
            }
            None => false,
        }
    }

    pub(crate) fn cli_target(&self) -> CliTarget {
        CliTarget {
            port: self.port,
            ca: self.options.tls.as_ref().map(TestCa::ca_cert),
            user: self.options.user.clone(),
        }
    }

    /// `redis-cli ARGS` against it (with `--tls --cacert` and the ACL user as needed), its stdout
    /// without the trailing newline. An error *reply* is text like any other (`"ERR ..."`,
    /// `"NOAUTH ..."`); a bulk string that does not exist is the empty string.
    ///
    /// # Panics
    /// When redis-cli cannot reach it or runs longer than 15 s (use [`RedisServer::try_cli`] for
    /// a server that may be down).
    pub fn cli(&self, args: &[&str]) -> String {
        self.try_cli(args).unwrap_or_else(|e| panic!("{e}"))
    }

    /// [`RedisServer::cli`] that reports failures (no connection, 15 s passed) as `Err`.
    ///
    /// # Errors
    /// When redis-cli exits with failure or times out.
    pub fn try_cli(&self, args: &[&str]) -> Result<String, String> {
        self.cli_target().run(args, CLI_TIMEOUT)
    }

    /// [`RedisServer::try_cli`] with a time limit of the caller's (`DEBUG SLEEP 30`).
    ///
    /// # Errors
    /// When redis-cli exits with failure or runs longer than `timeout`.
    pub fn cli_with_timeout(&self, args: &[&str], timeout: Duration) -> Result<String, String> {
        self.cli_target().run(args, timeout)
    }

    /// `INFO SECTION`'s `field` (`info("replication", "role")` → `"master"`).
    ///
    /// # Panics
    /// When redis-cli cannot reach it.
    pub fn info(&self, section: &str, field: &str) -> Option<String> {
        info_value(&self.cli(&["INFO", section]), field)
    }

    /// Stops it now (SIGKILL and reap), e.g. to test what happens when Redis goes away. Same as
    /// [`RedisServer::kill9`].
    pub fn stop(&mut self) {
        self.kill9();
    }

    /// SIGKILL, nothing saved (only what the append-only file already holds survives), and reaped.
    /// A no-op when it is not running.
    pub fn kill9(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// SIGSTOP: the process stays, its port accepts connections (the kernel's backlog), nothing
    /// answers — a hung server. [`RedisServer::thaw`] resumes it.
    pub fn freeze(&self) {
        self.signal(libc::SIGSTOP);
    }

    /// SIGCONT after [`RedisServer::freeze`].
    pub fn thaw(&self) {
        self.signal(libc::SIGCONT);
    }

    fn signal(&self, signal: libc::c_int) {
        let pid = self.pid().expect("redis-server is not running");
        let pid = libc::pid_t::try_from(pid).expect("a pid fits pid_t");
        // SAFETY: kill(2) with the pid of our own child process, which we have not reaped.
        let rc = unsafe { libc::kill(pid, signal) };
        assert_eq!(rc, 0, "kill({pid}, {signal}) failed");
    }

    /// Restarts it on the same port with the same options and files, killing it first (SIGKILL)
    /// if it still runs. With [`RedisOptions::appendonly`] it comes back with every acknowledged
    /// write; without, empty. A cluster node keeps its `nodes.conf` (its identity and slots).
    ///
    /// # Panics
    /// When it does not come back within 20 s (e.g. another process took the port).
    pub fn restart(&mut self) {
        self.kill9();
        self.launch();
    }

    /// Kills it (SIGKILL), deletes its data (append-only files, RDB) and restarts it on the same
    /// port: an empty server, as after a restart without persistence or the loss of its disk.
    ///
    /// A cluster node keeps `nodes.conf` (which Redis writes whatever the persistence settings):
    /// it comes back with its node ID, its epoch and its slots, empty, and the cluster goes back to
    /// `cluster_state:ok` with the keys of those slots gone. A replica resynchronises from its
    /// primary.
    ///
    /// # Panics
    /// As [`RedisServer::restart`].
    pub fn restart_empty(&mut self) {
        self.kill9();
        let data = self.data_dir();
        for entry in std::fs::read_dir(&data)
            .expect("the data directory")
            .flatten()
        {
            if entry.file_name() == "nodes.conf" {
                continue;
            }
            let path = entry.path();
            let removed = if path.is_dir() {
                std::fs::remove_dir_all(&path)
            } else {
                std::fs::remove_file(&path)
            };
            removed.unwrap_or_else(|e| panic!("remove {}: {e}", path.display()));
        }
        self.launch();
    }
}

impl RedisServer {
    /// A copy of its data files as they are now (RDB, append-only files), for
    /// [`RedisServer::restart_from`].
    pub fn copy_files(&self) -> tempfile::TempDir {
        let copy = tempfile::tempdir().expect("a directory for the copy");
        copy_tree(&self.data_dir(), copy.path());
        copy
    }

    /// Kills it (SIGKILL), puts back the data files of `copy` and restarts it: a host crash after
    /// which the disk holds only what it held when the copy was made, as when the writes since
    /// were never fsynced (`appendfsync everysec` loses up to about a second of them).
    ///
    /// # Panics
    /// As [`RedisServer::restart`].
    pub fn restart_from(&mut self, copy: &Path) {
        self.kill9();
        let data = self.data_dir();
        std::fs::remove_dir_all(&data).expect("remove the data directory");
        std::fs::create_dir(&data).expect("the data directory");
        copy_tree(copy, &data);
        self.launch();
    }
}

/// Copies the files and folders under `from` into `to`.
fn copy_tree(from: &Path, to: &Path) {
    for entry in std::fs::read_dir(from)
        .expect("read the data directory")
        .flatten()
    {
        let target = to.join(entry.file_name());
        if entry.path().is_dir() {
            std::fs::create_dir_all(&target).expect("a folder of the copy");
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).expect("copy a data file");
        }
    }
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        // SIGKILL ends a frozen (SIGSTOPped) process too.
        self.kill9();
    }
}

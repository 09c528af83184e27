//! The whole benchmark, as `cargo xtask bench` runs it.
//!
//! - The fakes run as `fake-services` child processes: one without added
//!   latency (reads and reports, ID mapping, logins), one with 20 ms added to
//!   every search ads answer (latency-bound reads and reports), and a fresh one with 20 ms for every
//!   upload sample (a fresh ledger, so no run sees another's conversions and
//!   the fake's store does not grow from run to run). They are killed when
//!   the suite ends, also on errors.
//! - Every sample runs in its own `bench-runner sample` process (the client
//!   side only), so each starts cold in the same way and its peak RSS is its
//!   own.
//! - Per scenario: one unrecorded warm-up run of each variant, then baseline,
//!   facade, baseline, facade, … (`reps` of each). The medians of the rates
//!   give the ratio facade / baseline, compared with the target.
//! - `generate` times the `xtask` binary (`xtask --root <copy> generate`) on a
//!   temporary copy of `specs/` and the generated files.

use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use anyhow::{Context as _, Result, bail};
use serde::{Deserialize, Serialize};

use crate::fake::{FakeProcess, FakeSpec, FakeVars, log_path};
use crate::sample::{ClientScenario, SampleSpec, Variant};
use crate::scenarios::Measurement;
use crate::stats::{format_bytes, format_count, format_rate, median};

/// Latency added by the latency-bound fakes, in milliseconds.
pub const LATENCY_MS: u64 = 20;

/// Largest facade peak RSS the ID-mapping target allows, in MiB.
pub const ID_MAPPING_MAX_RSS_MIB: u64 = 64;

/// Longest median `generate` allowed, in seconds.
pub const GENERATE_MAX_SECONDS: f64 = 1.0;

/// A row of the table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum Scenario {
    /// Conversions read without added latency.
    Read,
    /// Conversions read with 20 ms per answer.
    ReadLatency,
    /// A conversion report (Reporting API) without added latency.
    Report,
    /// A conversion report with 20 ms per answer.
    ReportLatency,
    /// Conversions uploaded with 20 ms per answer.
    Upload,
    /// The ID-mapping file.
    IdMapping,
    /// Logins.
    Logins,
    /// Logins through a `RedisStore` against a `MemoryStore`.
    LoginsRedis,
    /// `cargo xtask generate`.
    Generate,
}

impl Scenario {
    /// Every scenario, in table order.
    pub const ALL: [Scenario; 9] = [
        Scenario::Read,
        Scenario::ReadLatency,
        Scenario::Report,
        Scenario::ReportLatency,
        Scenario::Upload,
        Scenario::IdMapping,
        Scenario::Logins,
        Scenario::LoginsRedis,
        Scenario::Generate,
    ];

    /// The runner's scenario (`None` for `generate`).
    pub fn client(self) -> Option<ClientScenario> {
        match self {
            Scenario::Read => Some(ClientScenario::Read),
            Scenario::ReadLatency => Some(ClientScenario::ReadLatency),
            Scenario::Report => Some(ClientScenario::Report),
            Scenario::ReportLatency => Some(ClientScenario::ReportLatency),
            Scenario::Upload => Some(ClientScenario::Upload),
            Scenario::IdMapping => Some(ClientScenario::IdMapping),
            Scenario::Logins => Some(ClientScenario::Logins),
            Scenario::LoginsRedis => Some(ClientScenario::LoginsRedis),
            Scenario::Generate => None,
        }
    }

    /// Its name on the command line and in JSON.
    pub fn name(self) -> &'static str {
        match self.client() {
            Some(c) => c.name(),
            None => "generate",
        }
    }

    /// The unit its rates count.
    pub fn unit(self) -> &'static str {
        match self {
            Scenario::Read
            | Scenario::ReadLatency
            | Scenario::Report
            | Scenario::ReportLatency
            | Scenario::Upload => "rows",
            Scenario::IdMapping => "bytes",
            Scenario::Logins | Scenario::LoginsRedis => "logins",
            Scenario::Generate => "runs",
        }
    }

    /// Its target.
    pub fn target(self) -> Target {
        let ratio = |r| Target {
            min_ratio: Some(r),
            ..Target::default()
        };
        match self {
            Scenario::Read | Scenario::Logins => ratio(0.90),
            Scenario::Report => ratio(0.95),
            Scenario::ReadLatency | Scenario::ReportLatency | Scenario::Upload => ratio(3.0),
            Scenario::LoginsRedis => ratio(0.80),
            Scenario::IdMapping => Target {
                min_ratio: Some(0.50),
                max_facade_rss_mib: Some(ID_MAPPING_MAX_RSS_MIB),
                ..Target::default()
            },
            Scenario::Generate => Target {
                max_seconds: Some(GENERATE_MAX_SECONDS),
                ..Target::default()
            },
        }
    }

    /// The table's label at these sizes.
    pub fn label(self, sizes: &Sizes) -> String {
        match self {
            Scenario::Read => format!(
                "read {} conversions, no added latency",
                format_count(sizes.read_rows)
            ),
            Scenario::ReadLatency => format!(
                "read {} conversions, {LATENCY_MS} ms per response",
                format_count(sizes.read_rows)
            ),
            Scenario::Report => format!(
                "report of {} conversions (Reporting API), no added latency",
                format_count(sizes.read_rows)
            ),
            Scenario::ReportLatency => format!(
                "report of {} conversions (Reporting API), {LATENCY_MS} ms per response",
                format_count(sizes.read_rows)
            ),
            Scenario::Upload => format!(
                "upload {} conversions, {LATENCY_MS} ms per response",
                format_count(sizes.upload_rows)
            ),
            Scenario::IdMapping => format!("ID mapping, {}", format_bytes(sizes.id_mapping_bytes)),
            Scenario::Logins => format!("{} logins", format_count(sizes.logins)),
            Scenario::LoginsRedis => format!(
                "{} logins, RedisStore (facade) vs MemoryStore (baseline)",
                format_count(sizes.logins)
            ),
            Scenario::Generate => "generate both specs".to_owned(),
        }
    }
}

/// What a scenario must reach.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Target {
    /// Smallest median facade rate / median baseline rate.
    pub min_ratio: Option<f64>,
    /// Largest facade peak RSS (the largest over its samples), in MiB.
    pub max_facade_rss_mib: Option<u64>,
    /// Longest median duration, in seconds (scenarios without a baseline).
    pub max_seconds: Option<f64>,
}

impl Target {
    fn describe(&self) -> String {
        let mut parts = Vec::new();
        if let Some(r) = self.min_ratio {
            parts.push(if r < 1.0 {
                format!("≥ {r:.2}×")
            } else {
                format!("≥ {r:.1}×")
            });
        }
        if let Some(m) = self.max_facade_rss_mib {
            parts.push(format!("RSS ≤ {m} MiB"));
        }
        if let Some(s) = self.max_seconds {
            parts.push(format!("< {s} s"));
        }
        parts.join(", ")
    }
}

/// Data sizes and repetitions.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Sizes {
    /// Seeded conversions read per run.
    pub read_rows: u64,
    /// Conversions uploaded per run.
    pub upload_rows: u64,
    /// Size of the ID-mapping file.
    pub id_mapping_bytes: u64,
    /// Logins per run.
    pub logins: u64,
    /// Recorded runs of each variant per scenario.
    pub reps: usize,
}

impl Sizes {
    /// The sizes, 5 alternations.
    pub fn full() -> Self {
        Self {
            read_rows: 200_000,
            upload_rows: 100_000,
            id_mapping_bytes: 1 << 30,
            logins: 10_000,
            reps: 5,
        }
    }

    /// Small sizes for a smoke test (the ratios mean little), 3 alternations.
    pub fn quick() -> Self {
        Self {
            read_rows: 3_000,
            upload_rows: 500,
            id_mapping_bytes: 2 << 20,
            logins: 200,
            reps: 3,
        }
    }
}

/// How to run the suite.
#[derive(Debug, Clone)]
pub struct SuiteOptions {
    /// Sizes and repetitions.
    pub sizes: Sizes,
    /// Whether these are the `--quick` sizes.
    pub quick: bool,
    /// The scenarios to run, in table order (empty: all).
    pub only: Vec<Scenario>,
    /// The `fake-services` binary.
    pub fake_bin: PathBuf,
    /// The `bench-runner` binary that runs the samples.
    pub runner_bin: PathBuf,
    /// The `xtask` binary timed by `generate` (`None`: that row is skipped).
    pub xtask_bin: Option<PathBuf>,
    /// The workspace whose specs `generate` copies.
    pub workspace: PathBuf,
    /// Where the fakes' logs go.
    pub work_dir: PathBuf,
}

/// One side's samples and their medians.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Side {
    /// Every recorded run, in order.
    pub samples: Vec<Measurement>,
    /// Median units per second.
    pub median_rate: f64,
    /// Median seconds per run.
    pub median_seconds: f64,
    /// Largest peak RSS over the runs, in KiB.
    pub max_peak_rss_kib: Option<u64>,
}

impl Side {
    fn new(samples: Vec<Measurement>) -> Self {
        let rates: Vec<f64> = samples.iter().map(Measurement::rate).collect();
        let seconds: Vec<f64> = samples.iter().map(|m| m.seconds).collect();
        Self {
            median_rate: median(&rates),
            median_seconds: median(&seconds),
            max_peak_rss_kib: samples.iter().filter_map(|m| m.peak_rss_kib).max(),
            samples,
        }
    }
}

/// PASS, MISS, or an error that stopped the scenario.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum Verdict {
    /// The target is met.
    Pass,
    /// The target is missed.
    Miss,
    /// The scenario did not complete.
    Error,
}

impl Verdict {
    fn as_str(self) -> &'static str {
        match self {
            Verdict::Pass => "PASS",
            Verdict::Miss => "MISS",
            Verdict::Error => "ERROR",
        }
    }
}

/// One row: both sides, the ratio, the target and the verdict.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ScenarioResult {
    /// The scenario.
    pub scenario: Scenario,
    /// Its label at the sizes run.
    pub label: String,
    /// The unit of the rates.
    pub unit: String,
    /// Baseline runs (none for `generate`).
    pub baseline: Option<Side>,
    /// Facade runs (for `generate`: the `xtask generate` runs, one unit each).
    pub facade: Option<Side>,
    /// Median facade rate / median baseline rate.
    pub ratio: Option<f64>,
    /// The target.
    pub target: Target,
    /// The verdict.
    pub verdict: Verdict,
    /// Why it did not complete.
    pub error: Option<String>,
}

/// The machine the numbers come from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Machine {
    /// `model name` of `/proc/cpuinfo`.
    pub cpu: String,
    /// Cores available to this process.
    pub cores: usize,
    /// Total memory in MiB.
    pub memory_mib: Option<u64>,
    /// Kernel release.
    pub kernel: String,
    /// `rustc -V`.
    pub rustc: String,
    /// `/proc/loadavg` before the first scenario.
    pub load_before: String,
    /// `/proc/loadavg` after the last scenario.
    pub load_after: String,
}

impl Machine {
    fn detect() -> Self {
        let cpuinfo = fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
        let cpu = cpuinfo
            .lines()
            .find_map(|l| {
                let (key, value) = l.split_once(':')?;
                (key.trim() == "model name").then(|| value.trim().to_owned())
            })
            .unwrap_or_else(|| "unknown CPU".to_owned());
        let memory_mib = fs::read_to_string("/proc/meminfo").ok().and_then(|m| {
            m.lines().find_map(|l| {
                let kib: u64 = l
                    .strip_prefix("MemTotal:")?
                    .trim()
                    .trim_end_matches("kB")
                    .trim()
                    .parse()
                    .ok()?;
                Some(kib / 1024)
            })
        });
        let kernel = fs::read_to_string("/proc/sys/kernel/osrelease")
            .map(|k| format!("Linux {}", k.trim()))
            .unwrap_or_else(|_| std::env::consts::OS.to_owned());
        let rustc = std::env::var_os("RUSTC")
            .map(PathBuf::from)
            .unwrap_or_else(|| PathBuf::from("rustc"));
        let rustc = Command::new(rustc)
            .arg("-V")
            .output()
            .ok()
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
            .filter(|s| !s.is_empty())
            .unwrap_or_else(|| "rustc (unknown version)".to_owned());
        Self {
            cpu,
            cores: std::thread::available_parallelism().map_or(1, usize::from),
            memory_mib,
            kernel,
            rustc,
            load_before: loadavg(),
            load_after: String::new(),
        }
    }

    /// One line for the README.
    pub fn line(&self) -> String {
        let memory = self
            .memory_mib
            .map(|m| format!(", {:.0} GiB RAM", m as f64 / 1024.0))
            .unwrap_or_default();
        format!(
            "{}, {} cores{memory}, {}, {}; load average before {} / after {}",
            self.cpu, self.cores, self.kernel, self.rustc, self.load_before, self.load_after
        )
    }
}

fn loadavg() -> String {
    fs::read_to_string("/proc/loadavg")
        .map(|l| l.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "?".to_owned())
}

/// Everything a suite run measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Report {
    /// The machine.
    pub machine: Machine,
    /// Whether the `--quick` sizes were used.
    pub quick: bool,
    /// Sizes and repetitions.
    pub sizes: Sizes,
    /// Start, in seconds since the Unix epoch.
    pub started_unix: u64,
    /// Wall-clock seconds of the whole run.
    pub total_seconds: f64,
    /// One result per scenario run.
    pub scenarios: Vec<ScenarioResult>,
}

impl Report {
    /// True when a scenario did not complete.
    pub fn has_errors(&self) -> bool {
        self.scenarios.iter().any(|s| s.verdict == Verdict::Error)
    }

    /// The three login variants side by side, when both login rows ran:
    /// generated client, facade over a `MemoryStore`, facade over a
    /// `RedisStore`, with the ratios against the generated client.
    pub fn logins_line(&self) -> Option<String> {
        let rate = |scenario: Scenario, facade: bool| {
            let s = self.scenarios.iter().find(|s| s.scenario == scenario)?;
            let side = if facade {
                s.facade.as_ref()
            } else {
                s.baseline.as_ref()
            }?;
            Some(side.median_rate)
        };
        let generated = rate(Scenario::Logins, false)?;
        let memory = rate(Scenario::Logins, true)?;
        let redis = rate(Scenario::LoginsRedis, true)?;
        let memory_again = rate(Scenario::LoginsRedis, false)?;
        Some(format!(
            "Logins (medians): generated client {}, facade + MemoryStore {} ({} of the generated client; {} in the Redis row), facade + RedisStore {} ({} of the generated client, {} of the MemoryStore in the same row).",
            format_rate(generated, "logins"),
            format_rate(memory, "logins"),
            format_ratio(memory / generated),
            format_rate(memory_again, "logins"),
            format_rate(redis, "logins"),
            format_ratio(redis / generated),
            format_ratio(redis / memory_again),
        ))
    }

    /// The markdown table and the machine line.
    pub fn markdown(&self) -> String {
        let mut out = String::new();
        out.push_str(
            "| scenario | baseline (median) | facade (median) | ratio | target | result |\n",
        );
        out.push_str("|---|---|---|---|---|---|\n");
        for s in &self.scenarios {
            let side = |side: &Option<Side>| -> String {
                let Some(side) = side else {
                    return "—".to_owned();
                };
                if s.scenario == Scenario::Generate {
                    return format!("{:.2} s", side.median_seconds);
                }
                let mut cell = format!(
                    "{} ({:.2} s)",
                    format_rate(side.median_rate, &s.unit),
                    side.median_seconds
                );
                if s.scenario == Scenario::IdMapping
                    && let Some(kib) = side.max_peak_rss_kib
                {
                    let _ = write!(cell, ", peak RSS {:.0} MiB", kib as f64 / 1024.0);
                }
                cell
            };
            let ratio = s.ratio.map_or_else(|| "—".to_owned(), format_ratio);
            let result = match (&s.error, s.verdict) {
                (Some(e), _) => format!("ERROR: {}", e.lines().next().unwrap_or_default()),
                (None, v) => v.as_str().to_owned(),
            };
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} | {} | {} |",
                s.label,
                side(&s.baseline),
                side(&s.facade),
                ratio,
                s.target.describe(),
                result
            );
        }
        if let Some(line) = self.logins_line() {
            let _ = writeln!(out, "\n{line}");
        }
        let _ = writeln!(
            out,
            "\nMachine: {}. {} alternations per scenario{}; total {:.0} s.",
            self.machine.line(),
            self.sizes.reps,
            if self.quick {
                " (--quick: small sizes, ratios not meaningful)"
            } else {
                ""
            },
            self.total_seconds
        );
        out
    }
}

/// A ratio with two decimals, rounded down (the targets are lower bounds, so
/// a ratio shown as 0.90× has reached 0.90).
pub fn format_ratio(ratio: f64) -> String {
    format!("{:.2}×", (ratio * 100.0).floor() / 100.0)
}

/// Judges a row from its sides.
fn judge(scenario: Scenario, baseline: &Option<Side>, facade: &Side) -> (Option<f64>, Verdict) {
    let target = scenario.target();
    let ratio = baseline
        .as_ref()
        .and_then(|b| (b.median_rate > 0.0).then(|| facade.median_rate / b.median_rate));
    let mut pass = true;
    if let Some(min) = target.min_ratio {
        pass &= ratio.is_some_and(|r| r >= min);
    }
    if let Some(max) = target.max_facade_rss_mib {
        pass &= facade.max_peak_rss_kib.is_some_and(|kib| kib <= max * 1024);
    }
    if let Some(max) = target.max_seconds {
        pass &= facade.median_seconds < max;
    }
    (ratio, if pass { Verdict::Pass } else { Verdict::Miss })
}

/// Runs one sample in a `bench-runner sample` process with the fake's
/// variables in its environment.
pub fn run_sample_process(
    runner: &Path,
    spec: &SampleSpec,
    vars: &FakeVars,
) -> Result<Measurement> {
    let output = Command::new(runner)
        .arg("sample")
        .args(["--scenario", spec.scenario.name()])
        .args(["--variant", spec.variant.name()])
        .args(["--count", &spec.count.to_string()])
        .args(["--tag", &spec.tag])
        .envs(&vars.0)
        .stdin(Stdio::null())
        .output()
        .with_context(|| format!("starting {}", runner.display()))?;
    let stdout = String::from_utf8_lossy(&output.stdout);
    if !output.status.success() {
        bail!(
            "{} {} failed ({}): {}",
            spec.scenario,
            spec.variant,
            output.status,
            String::from_utf8_lossy(&output.stderr).trim()
        );
    }
    let line = stdout
        .lines()
        .rev()
        .find(|l| l.trim_start().starts_with('{'))
        .with_context(|| format!("{} {} printed no result", spec.scenario, spec.variant))?;
    serde_json::from_str(line).with_context(|| format!("reading the result {line:?}"))
}

/// The running fakes the client scenarios share, started on first use.
struct Fakes<'a> {
    options: &'a SuiteOptions,
    plain: Option<FakeProcess>,
    latency: Option<FakeProcess>,
    redis: Option<RedisProcess>,
}

/// A `redis-server` on a free loopback port, without persistence; killed
/// when dropped.
struct RedisProcess {
    child: std::process::Child,
    url: String,
}

impl RedisProcess {
    fn start(work_dir: &Path) -> Result<Self> {
        let port = std::net::TcpListener::bind("127.0.0.1:0")?
            .local_addr()?
            .port();
        let dir = work_dir.join("redis");
        fs::create_dir_all(&dir)?;
        let child = Command::new("redis-server")
            .args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
            .args(["--save", "", "--appendonly", "no"])
            .arg("--dir")
            .arg(&dir)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .context("starting redis-server (Debian: apt-get install redis-server)")?;
        let me = Self {
            child,
            url: format!("redis://127.0.0.1:{port}/0"),
        };
        let deadline = Instant::now() + std::time::Duration::from_secs(10);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            if Instant::now() > deadline {
                bail!("redis-server did not listen on port {port} within 10 s");
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        Ok(me)
    }
}

impl Drop for RedisProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Fakes<'_> {
    fn spec(&self, latency_ms: u64) -> FakeSpec {
        FakeSpec {
            conversions_per_account: self.options.sizes.read_rows,
            id_mapping_bytes: self.options.sizes.id_mapping_bytes,
            latency_ms,
            start_date: crate::reporting::report_data_start(crate::reporting::today_utc()),
        }
    }

    fn plain(&mut self) -> Result<&FakeVars> {
        if self.plain.is_none() {
            let spec = self.spec(0);
            let log = log_path(&self.options.work_dir, "plain");
            self.plain = Some(FakeProcess::start(
                &self.options.fake_bin,
                &spec.args(),
                &log,
            )?);
        }
        self.plain
            .as_ref()
            .map(FakeProcess::vars)
            .context("the plain fake is not running")
    }

    /// The plain fake's variables plus `BENCH_REDIS_URL` of a redis-server
    /// started on first use.
    fn plain_with_redis(&mut self) -> Result<FakeVars> {
        if self.redis.is_none() {
            self.redis = Some(RedisProcess::start(&self.options.work_dir)?);
        }
        let url = self
            .redis
            .as_ref()
            .map(|r| r.url.clone())
            .context("redis-server is not running")?;
        let mut vars = self.plain()?.clone();
        vars.0.insert("BENCH_REDIS_URL".to_owned(), url);
        Ok(vars)
    }

    fn latency(&mut self) -> Result<&FakeVars> {
        if self.latency.is_none() {
            let spec = self.spec(LATENCY_MS);
            let log = log_path(&self.options.work_dir, "latency");
            self.latency = Some(FakeProcess::start(
                &self.options.fake_bin,
                &spec.args(),
                &log,
            )?);
        }
        self.latency
            .as_ref()
            .map(FakeProcess::vars)
            .context("the latency fake is not running")
    }

    /// A new fake with added latency and an empty ledger, for one upload run.
    fn fresh_upload(&self) -> Result<FakeProcess> {
        let spec = FakeSpec {
            conversions_per_account: 1_000,
            id_mapping_bytes: 10_000,
            latency_ms: LATENCY_MS,
            start_date: crate::reporting::report_data_start(crate::reporting::today_utc()),
        };
        let log = log_path(&self.options.work_dir, "upload");
        FakeProcess::start(&self.options.fake_bin, &spec.args(), &log)
    }
}

fn describe(m: &Measurement, unit: &str) -> String {
    let rss = m
        .peak_rss_kib
        .map(|k| format!(", peak RSS {:.0} MiB", k as f64 / 1024.0))
        .unwrap_or_default();
    format!(
        "{} in {:.2} s = {}{rss}",
        format_count(m.units),
        m.seconds,
        format_rate(m.rate(), unit)
    )
}

fn client_scenario(
    scenario: Scenario,
    client: ClientScenario,
    fakes: &mut Fakes<'_>,
) -> Result<(Side, Side)> {
    let options = fakes.options;
    let sizes = &options.sizes;
    let count = match client {
        ClientScenario::Upload => sizes.upload_rows,
        ClientScenario::Logins | ClientScenario::LoginsRedis => sizes.logins,
        _ => 0,
    };
    let warmup_count = match client {
        ClientScenario::Upload => count.min(1_000),
        ClientScenario::Logins | ClientScenario::LoginsRedis => count.min(1_000),
        _ => 0,
    };
    let mut baseline = Vec::new();
    let mut facade = Vec::new();
    // Run 0 is the warm-up; runs 1..=reps are recorded.
    for run in 0..=sizes.reps {
        for variant in [Variant::Baseline, Variant::Facade] {
            let spec = SampleSpec {
                scenario: client,
                variant,
                count: if run == 0 { warmup_count } else { count },
                tag: format!("{}-{run}", variant.name()),
                prefetch: None,
            };
            let m = match client {
                ClientScenario::Upload => {
                    let fake = fakes.fresh_upload()?;
                    run_sample_process(&options.runner_bin, &spec, fake.vars())?
                }
                ClientScenario::ReadLatency | ClientScenario::ReportLatency => {
                    let vars = fakes.latency()?.clone();
                    run_sample_process(&options.runner_bin, &spec, &vars)?
                }
                ClientScenario::LoginsRedis => {
                    let vars = fakes.plain_with_redis()?;
                    run_sample_process(&options.runner_bin, &spec, &vars)?
                }
                _ => {
                    let vars = fakes.plain()?.clone();
                    run_sample_process(&options.runner_bin, &spec, &vars)?
                }
            };
            if !matches!(
                client,
                ClientScenario::Upload | ClientScenario::Logins | ClientScenario::LoginsRedis
            ) {
                let want = match client {
                    ClientScenario::IdMapping => None,
                    _ => Some(sizes.read_rows),
                };
                if let Some(want) = want
                    && m.units != want
                {
                    bail!("{client} {variant} read {} rows, expected {want}", m.units);
                }
            } else if m.units != spec.count {
                bail!(
                    "{client} {variant} did {} of {} {}",
                    m.units,
                    spec.count,
                    scenario.unit()
                );
            }
            let label = if run == 0 {
                "warm-up".to_owned()
            } else {
                format!("#{run}")
            };
            eprintln!(
                "  {client} {variant:<8} {label:<7} {}",
                describe(&m, scenario.unit())
            );
            if run > 0 {
                match variant {
                    Variant::Baseline => baseline.push(m),
                    Variant::Facade => facade.push(m),
                }
            }
        }
    }
    Ok((Side::new(baseline), Side::new(facade)))
}

/// Copies `specs/` and every `crates/*/src/generated.rs` of `workspace` into
/// `dir`, the inputs and outputs of `xtask generate`.
fn copy_generate_inputs(workspace: &Path, dir: &Path) -> Result<()> {
    let specs = workspace.join("specs");
    fs::create_dir_all(dir.join("specs"))?;
    for entry in fs::read_dir(&specs).with_context(|| format!("reading {}", specs.display()))? {
        let entry = entry?;
        if entry.file_type()?.is_file() {
            fs::copy(entry.path(), dir.join("specs").join(entry.file_name()))?;
        }
    }
    let crates = workspace.join("crates");
    for entry in fs::read_dir(&crates).with_context(|| format!("reading {}", crates.display()))? {
        let entry = entry?;
        let generated = entry.path().join("src").join("generated.rs");
        if generated.is_file() {
            let to = dir.join("crates").join(entry.file_name()).join("src");
            fs::create_dir_all(&to)?;
            fs::copy(&generated, to.join("generated.rs"))?;
        }
    }
    Ok(())
}

fn generate_scenario(options: &SuiteOptions) -> Result<Side> {
    let xtask = options
        .xtask_bin
        .as_ref()
        .context("no xtask binary given (run through `cargo xtask bench`)")?;
    let dir = tempfile::tempdir()?;
    copy_generate_inputs(&options.workspace, dir.path())?;
    let mut runs = Vec::new();
    for run in 0..=options.sizes.reps {
        let started = Instant::now();
        let output = Command::new(xtask)
            .arg("--root")
            .arg(dir.path())
            .arg("generate")
            .stdin(Stdio::null())
            .output()
            .with_context(|| format!("starting {}", xtask.display()))?;
        let elapsed = started.elapsed();
        if !output.status.success() {
            bail!(
                "xtask generate failed ({}): {}",
                output.status,
                String::from_utf8_lossy(&output.stderr).trim()
            );
        }
        let m = Measurement {
            units: 1,
            rows: 0,
            seconds: elapsed.as_secs_f64(),
            peak_rss_kib: None,
        };
        let label = if run == 0 {
            "warm-up".to_owned()
        } else {
            format!("#{run}")
        };
        eprintln!(
            "  generate {label:<7} {:.3} s ({})",
            m.seconds,
            String::from_utf8_lossy(&output.stdout)
                .lines()
                .collect::<Vec<_>>()
                .join("; ")
        );
        if run > 0 {
            runs.push(m);
        }
    }
    Ok(Side::new(runs))
}

/// Runs the suite. Errors of one scenario are recorded in its row; the
/// others still run.
pub fn run(options: &SuiteOptions) -> Result<Report> {
    fs::create_dir_all(&options.work_dir)
        .with_context(|| format!("creating {}", options.work_dir.display()))?;
    let started = Instant::now();
    let started_unix = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let mut machine = Machine::detect();
    let selected: Vec<Scenario> = Scenario::ALL
        .into_iter()
        .filter(|s| options.only.is_empty() || options.only.contains(s))
        .collect();
    let mut fakes = Fakes {
        options,
        plain: None,
        latency: None,
        redis: None,
    };
    let mut results = Vec::new();
    for scenario in selected {
        let label = scenario.label(&options.sizes);
        eprintln!("{label}:");
        let outcome = match scenario.client() {
            Some(client) => {
                client_scenario(scenario, client, &mut fakes).map(|(b, f)| (Some(b), f))
            }
            None => generate_scenario(options).map(|f| (None, f)),
        };
        let result = match outcome {
            Ok((baseline, facade)) => {
                let (ratio, verdict) = judge(scenario, &baseline, &facade);
                ScenarioResult {
                    scenario,
                    label,
                    unit: scenario.unit().to_owned(),
                    baseline,
                    facade: Some(facade),
                    ratio,
                    target: scenario.target(),
                    verdict,
                    error: None,
                }
            }
            Err(e) => {
                eprintln!("  error: {e:#}");
                ScenarioResult {
                    scenario,
                    label,
                    unit: scenario.unit().to_owned(),
                    baseline: None,
                    facade: None,
                    ratio: None,
                    target: scenario.target(),
                    verdict: Verdict::Error,
                    error: Some(format!("{e:#}")),
                }
            }
        };
        if let Some(r) = result.ratio {
            eprintln!(
                "  → ratio {} ({})",
                format_ratio(r),
                result.verdict.as_str()
            );
        }
        results.push(result);
    }
    drop(fakes);
    machine.load_after = loadavg();
    Ok(Report {
        machine,
        quick: options.quick,
        sizes: options.sizes.clone(),
        started_unix,
        total_seconds: started.elapsed().as_secs_f64(),
        scenarios: results,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn side(rates: &[f64], rss_kib: Option<u64>) -> Side {
        Side::new(
            rates
                .iter()
                .map(|r| Measurement {
                    units: (*r * 10.0) as u64,
                    rows: 0,
                    seconds: 10.0,
                    peak_rss_kib: rss_kib,
                })
                .collect(),
        )
    }

    #[test]
    fn ratio_of_medians_against_the_target() {
        let b = Some(side(&[100.0, 90.0, 110.0], None));
        let f = side(&[95.0, 91.0, 500.0], None);
        let (ratio, verdict) = judge(Scenario::Read, &b, &f);
        assert!((ratio.unwrap() - 0.95).abs() < 1e-9);
        assert_eq!(verdict, Verdict::Pass);
        let (_, verdict) = judge(Scenario::ReadLatency, &b, &f);
        assert_eq!(verdict, Verdict::Miss);
    }

    #[test]
    fn id_mapping_needs_the_ratio_and_the_rss() {
        let b = Some(side(&[100.0], Some(10_000)));
        let small = side(&[60.0], Some(30 * 1024));
        let big = side(&[60.0], Some(65 * 1024));
        assert_eq!(judge(Scenario::IdMapping, &b, &small).1, Verdict::Pass);
        assert_eq!(judge(Scenario::IdMapping, &b, &big).1, Verdict::Miss);
        let slow = side(&[40.0], Some(1024));
        assert_eq!(judge(Scenario::IdMapping, &b, &slow).1, Verdict::Miss);
    }

    #[test]
    fn ratios_are_rounded_down() {
        assert_eq!(format_ratio(0.8997), "0.89×");
        assert_eq!(format_ratio(0.9), "0.90×");
        assert_eq!(format_ratio(3.419), "3.41×");
    }

    #[test]
    fn generate_is_judged_on_its_median_time() {
        let fast = Side::new(vec![Measurement {
            units: 1,
            rows: 0,
            seconds: 0.3,
            peak_rss_kib: None,
        }]);
        assert_eq!(
            judge(Scenario::Generate, &None, &fast),
            (None, Verdict::Pass)
        );
    }

    #[test]
    fn table_has_every_column() {
        let report = Report {
            machine: Machine {
                cpu: "CPU".into(),
                cores: 2,
                memory_mib: Some(2048),
                kernel: "Linux".into(),
                rustc: "rustc 1.0".into(),
                load_before: "0 0 0".into(),
                load_after: "0 0 0".into(),
            },
            quick: false,
            sizes: Sizes::full(),
            started_unix: 0,
            total_seconds: 1.0,
            scenarios: vec![ScenarioResult {
                scenario: Scenario::Read,
                label: Scenario::Read.label(&Sizes::full()),
                unit: "rows".into(),
                baseline: Some(side(&[1000.0], None)),
                facade: Some(side(&[950.0], None)),
                ratio: Some(0.95),
                target: Scenario::Read.target(),
                verdict: Verdict::Pass,
                error: None,
            }],
        };
        let table = report.markdown();
        assert!(table.contains("| read 200 000 conversions, no added latency | 1 000 rows/s (10.00 s) | 950 rows/s (10.00 s) | 0.95× | ≥ 0.90× | PASS |"), "{table}");
        assert!(
            table.contains("Machine: CPU, 2 cores, 2 GiB RAM"),
            "{table}"
        );
    }
}

//! The processes of a run: the fakes (plain, with latency, a fresh one per upload run), a
//! `redis-server`, and one `bench-runner sample` process per sample.

use std::path::Path;
use std::process::{Command, Stdio};

use anyhow::{Context as _, Result, bail};
use serde::de::DeserializeOwned;

use super::options::SuiteOptions;
use super::scenarios::{FakeKind, LATENCY_MS};
use crate::fake::{FakeProcess, FakeSpec, FakeVars, log_path};
use crate::sample::SampleSpec;
use test_support::{RedisOptions, ReplicaSet};

/// Runs one sample in a `bench-runner sample` process with the fake's
/// variables in its environment, and reads its JSON line (a
/// [`Measurement`](crate::scenarios::Measurement), or a
/// [`PairedMeasurement`](crate::sample::PairedMeasurement) for a paired sample).
pub fn run_sample_process<T: DeserializeOwned>(
    runner: &Path,
    spec: &SampleSpec,
    vars: &FakeVars,
) -> Result<T> {
    let mut command = Command::new(runner);
    command
        .arg("sample")
        .args(["--scenario", spec.scenario.name()])
        .args(["--variant", spec.variant.name()])
        .args(["--count", &spec.count.to_string()])
        .args(["--tag", &spec.tag]);
    if let Some(block) = spec.block {
        command.args(["--block", &block.to_string()]);
    }
    let output = command
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
pub(super) struct Fakes<'a> {
    pub(super) options: &'a SuiteOptions,
    plain: Option<FakeProcess>,
    latency: Option<FakeProcess>,
    /// A `redis-server` primary with one replica on loopback, without persistence
    /// (`test_support::ReplicaSet`); the `RedisStore` waits for the replica to acknowledge every
    /// reservation (its default, `ReplicaAcks::AllConnected`), so the logins-redis rows measure
    /// the store as deployed with a replica.
    redis: Option<ReplicaSet>,
}

impl<'a> Fakes<'a> {
    /// No fake started yet.
    pub(super) fn new(options: &'a SuiteOptions) -> Self {
        Self {
            options,
            plain: None,
            latency: None,
            redis: None,
        }
    }

    /// The variables of the fake `kind` names, started on first use; a fresh upload fake lives
    /// as long as the returned guard.
    pub(super) fn vars(&mut self, kind: FakeKind) -> Result<(FakeVars, Option<FakeProcess>)> {
        Ok(match kind {
            FakeKind::Plain => (self.plain()?.clone(), None),
            FakeKind::Latency => (self.latency()?.clone(), None),
            FakeKind::PlainWithRedis => {
                let vars = self.plain()?.clone();
                (self.with_redis(vars)?, None)
            }
            FakeKind::LatencyWithRedis => {
                let vars = self.latency()?.clone();
                (self.with_redis(vars)?, None)
            }
            FakeKind::FreshUpload | FakeKind::FreshPlain | FakeKind::FreshForgetting => {
                let latency_ms = if kind == FakeKind::FreshUpload {
                    LATENCY_MS
                } else {
                    0
                };
                let fake = self.fresh(latency_ms, kind == FakeKind::FreshForgetting)?;
                (fake.vars().clone(), Some(fake))
            }
        })
    }

    fn spec(&self, latency_ms: u64) -> Result<FakeSpec> {
        Ok(FakeSpec {
            conversions_per_account: self.options.sizes.read_rows,
            id_mapping_bytes: self.options.sizes.id_mapping_bytes,
            latency_ms,
            start_date: crate::reporting::report_data_start(crate::reporting::today_utc()),
            // The campaign × day report of `search` has the run's rows (crate::search).
            report_campaigns: crate::search::synthetic_campaigns(self.options.sizes.read_rows)?,
            forget_conversions: false,
        })
    }

    fn plain(&mut self) -> Result<&FakeVars> {
        if self.plain.is_none() {
            let spec = self.spec(0)?;
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

    /// A fake's variables plus `BENCH_REDIS_URL` of a redis-server started on first use.
    fn with_redis(&mut self, mut vars: FakeVars) -> Result<FakeVars> {
        if self.redis.is_none() {
            self.redis = Some(
                ReplicaSet::start("bench-runner", 1, &RedisOptions::new(), None).context(
                    "redis-server is not installed (Debian: apt-get install redis-server)",
                )?,
            );
        }
        let url = self.redis.as_ref().map(|r| r.primary().url());
        vars.0.insert(
            "BENCH_REDIS_URL".to_owned(),
            url.context("no redis-server")?,
        );
        Ok(vars)
    }

    fn latency(&mut self) -> Result<&FakeVars> {
        if self.latency.is_none() {
            let spec = self.spec(LATENCY_MS)?;
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

    /// A new fake with `latency_ms` per answer and an empty ledger (or, `forget_conversions`, in
    /// its bench mode), for one upload run.
    fn fresh(&self, latency_ms: u64, forget_conversions: bool) -> Result<FakeProcess> {
        let spec = FakeSpec {
            conversions_per_account: 1_000,
            id_mapping_bytes: 10_000,
            latency_ms,
            start_date: crate::reporting::report_data_start(crate::reporting::today_utc()),
            report_campaigns: 0,
            forget_conversions,
        };
        let log = log_path(&self.options.work_dir, "upload");
        FakeProcess::start(&self.options.fake_bin, &spec.args(), &log)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::suite::scenarios::Sizes;

    /// The logins-redis rows' store: a primary whose replica is connected, at the URL the runs get.
    #[test]
    fn the_redis_rows_get_a_primary_with_a_connected_replica() {
        if std::process::Command::new("redis-server")
            .arg("--version")
            .output()
            .is_err()
        {
            assert!(std::env::var("REQUIRE_REDIS").as_deref() != Ok("1"));
            return;
        }
        let options = SuiteOptions {
            sizes: Sizes::quick(),
            quick: true,
            only: Vec::new(),
            fake_bin: "unused".into(),
            runner_bin: "unused".into(),
            xtask_bin: None,
            workspace: ".".into(),
            work_dir: std::env::temp_dir(),
        };
        let mut fakes = Fakes::new(&options);
        let vars = fakes.with_redis(FakeVars::default()).unwrap();
        let url = vars.get("BENCH_REDIS_URL").unwrap().to_owned();
        let primary = fakes.redis.as_ref().unwrap().primary();
        assert_eq!(url, format!("redis://127.0.0.1:{}/0", primary.port()));
        assert_eq!(
            primary.info("replication", "connected_slaves").as_deref(),
            Some("1")
        );
    }
}

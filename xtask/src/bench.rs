//! `cargo xtask bench`: builds the `sa360-video-fakes` and `bench-runner` binaries
//! in release mode and runs `bench-runner suite`, which starts the fakes as
//! child processes, alternates baseline and SDK runs per scenario and
//! prints the table (see `crates/bench/README.md`).
//!
//! The suite lives in `crates/bench` so that xtask itself does not compile the
//! SDK, reqwest and tokio; this module only builds and starts it.

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};

use anyhow::{Context, Result, bail};

use crate::Workspace;

/// Arguments of `cargo xtask bench`.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct Args {
    /// Small sizes and 3 alternations per scenario: a smoke test (the ratios mean little).
    #[arg(long)]
    pub quick: bool,
    /// Also write every sample, the medians and the machine to FILE as JSON.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Recorded runs of each variant per scenario (default 5, 3 with --quick).
    #[arg(long, value_name = "N")]
    pub reps: Option<u32>,
    /// Only these scenarios: read, read-latency, report, report-latency, search, search-latency,
    /// search-stream-latency, upload, upload-overhead, upload-stream, upload-stream-journal, id-mapping, logins,
    /// logins-redis-latency, logins-redis, generate.
    #[arg(long, value_name = "SCENARIO")]
    pub only: Vec<String>,
}

/// The two release binaries the benchmark needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Binaries {
    /// `sa360-video-fakes`.
    pub fake: PathBuf,
    /// `bench-runner`.
    pub runner: PathBuf,
}

/// Builds `sa360-video-fakes` and `bench-runner` with `--release` and returns
/// their paths, as cargo reports them.
pub fn build(ws: &Workspace) -> Result<Binaries> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    eprintln!("building sa360-video-fakes and bench-runner (release)…");
    let output = Command::new(cargo)
        .current_dir(&ws.root)
        .args(["build", "--release", "--bins"])
        .args(["--package", "sa360-video-fakes", "--package", "bench"])
        .arg("--message-format=json-render-diagnostics")
        .stdin(Stdio::null())
        .stderr(Stdio::inherit())
        .output()
        .context("running cargo build")?;
    if !output.status.success() {
        bail!("cargo build --release failed ({})", output.status);
    }
    let mut fake = None;
    let mut runner = None;
    for line in String::from_utf8_lossy(&output.stdout).lines() {
        let Ok(message) = serde_json::from_str::<serde_json::Value>(line) else {
            continue;
        };
        if message["reason"] != "compiler-artifact" {
            continue;
        }
        let Some(executable) = message["executable"].as_str() else {
            continue;
        };
        match message["target"]["name"].as_str() {
            Some("sa360-video-fakes") => fake = Some(PathBuf::from(executable)),
            Some("bench-runner") => runner = Some(PathBuf::from(executable)),
            _ => {}
        }
    }
    Ok(Binaries {
        fake: fake.context("cargo built no sa360-video-fakes binary")?,
        runner: runner.context("cargo built no bench-runner binary")?,
    })
}

/// This binary's path. When a concurrent build replaced the file while we
/// run, Linux reports `<path> (deleted)`: the new binary at `<path>` is used.
fn xtask_binary() -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    if exe.exists() {
        return Some(exe);
    }
    let text = exe.to_str()?;
    let path = PathBuf::from(text.strip_suffix(" (deleted)")?);
    path.exists().then_some(path)
}

fn absolute(path: &Path) -> Result<PathBuf> {
    if path.is_absolute() {
        Ok(path.to_owned())
    } else {
        Ok(std::env::current_dir()?.join(path))
    }
}

/// Builds the binaries and runs the suite; its exit code is ours (non-zero
/// only when a scenario could not run, never for a missed target).
pub fn run(ws: &Workspace, args: &Args) -> Result<ExitCode> {
    let binaries = build(ws)?;
    let mut command = Command::new(&binaries.runner);
    command
        .arg("suite")
        .arg("--fake-bin")
        .arg(&binaries.fake)
        .arg("--workspace")
        .arg(&ws.root)
        .stdin(Stdio::null());
    // `generate` is timed on this very binary, the one `cargo xtask` runs.
    if let Some(xtask) = xtask_binary() {
        command.arg("--xtask-bin").arg(xtask);
    }
    if args.quick {
        command.arg("--quick");
    }
    if let Some(json) = &args.json {
        command.arg("--json").arg(absolute(json)?);
    }
    if let Some(reps) = args.reps {
        command.arg("--reps").arg(reps.to_string());
    }
    for only in &args.only {
        command.arg("--only").arg(only);
    }
    let status = command
        .status()
        .with_context(|| format!("running {}", binaries.runner.display()))?;
    Ok(if status.success() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

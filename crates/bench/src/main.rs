//! `bench-runner`: `suite` runs the whole benchmark (started by
//! `cargo xtask bench`); `sample` runs one variant of one scenario once and
//! prints its measurement as one JSON line (`--variant paired`: both sides,
//! run in one process).
//!
//! `sample` reads the fake's connection values from the environment, under
//! the names `sa360-video-fakes` prints (`SEARCH_ADS_URL`, `VIDEO_USER`, …), so
//! after `eval "$(sa360-video-fakes ... | head -n 12)"` it can be run by hand.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context as _, Result};
use clap::{Args, Parser, Subcommand};

use bench::fake::FakeVars;
use bench::sample::{self, ClientScenario, SampleSpec, Targets, Variant};
use bench::scenarios::peak_rss_kib;
use bench::suite::{self, Scenario, Sizes, SuiteOptions};

/// Benchmarks of the SDK against plain baselines on the fakes.
#[derive(Debug, Parser)]
#[command(name = "bench-runner", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run every scenario, alternating baseline and SDK runs, and print the table.
    Suite(SuiteArgs),
    /// Run one variant of one scenario once; print its measurement as JSON.
    Sample(SampleArgs),
}

#[derive(Debug, Args)]
struct SuiteArgs {
    /// Small sizes and 3 alternations: a smoke test of every scenario.
    #[arg(long)]
    quick: bool,
    /// Also write every sample, the medians and the machine to FILE as JSON.
    #[arg(long, value_name = "FILE")]
    json: Option<PathBuf>,
    /// Recorded runs of each variant per scenario (default 5, 3 with --quick).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    reps: Option<u64>,
    /// Only these scenarios (repeatable).
    #[arg(long, value_enum, value_name = "SCENARIO")]
    only: Vec<Scenario>,
    /// The `sa360-video-fakes` binary (release build).
    #[arg(long, value_name = "PATH")]
    fake_bin: PathBuf,
    /// The `xtask` binary that the `generate` row times.
    #[arg(long, value_name = "PATH")]
    xtask_bin: Option<PathBuf>,
    /// The workspace root (its `specs/` are copied for `generate`).
    #[arg(long, value_name = "DIR", default_value = ".")]
    workspace: PathBuf,
    /// Where the fakes' logs go (default `<workspace>/target/bench`).
    #[arg(long, value_name = "DIR")]
    work_dir: Option<PathBuf>,
}

#[derive(Debug, Args)]
struct SampleArgs {
    /// The scenario.
    #[arg(long, value_enum)]
    scenario: ClientScenario,
    /// Baseline, SDK, or paired (both in this process, in alternating blocks; `logins` only).
    #[arg(long, value_enum)]
    variant: Variant,
    /// Conversions to upload or logins to make.
    #[arg(long, default_value_t = 0)]
    count: u64,
    /// Makes uploaded conversion ids unique per run.
    #[arg(long, default_value = "manual")]
    tag: String,
    /// Pages in flight of an SDK read instead of the scenario's (1, or 4
    /// with added latency); shards in flight of an SDK report instead of
    /// the scenario's (4, or 8 with added latency).
    #[arg(long, value_name = "N")]
    look_ahead: Option<usize>,
    /// Items per block of a paired sample (default 100, the `logins` row's).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    block: Option<u64>,
    /// The Tokio runtime the client runs on (the suite uses the default).
    #[arg(long, value_enum, default_value_t = Runtime::MultiThread)]
    runtime: Runtime,
}

/// The Tokio runtime of a sample.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum Runtime {
    /// One worker per core, what `#[tokio::main]` gives applications.
    MultiThread,
    /// Everything on the calling thread (for comparison).
    CurrentThread,
}

fn suite(args: SuiteArgs) -> Result<ExitCode> {
    let mut sizes = if args.quick {
        Sizes::quick()
    } else {
        Sizes::full()
    };
    if let Some(reps) = args.reps {
        sizes.reps = usize::try_from(reps)?;
    }
    let options = SuiteOptions {
        sizes,
        quick: args.quick,
        only: args.only,
        fake_bin: args.fake_bin,
        runner_bin: std::env::current_exe().context("locating bench-runner")?,
        xtask_bin: args.xtask_bin,
        work_dir: args
            .work_dir
            .unwrap_or_else(|| args.workspace.join("target").join("bench")),
        workspace: args.workspace,
    };
    let complete = !args.quick && options.only.is_empty();
    let report = suite::run(&options)?;
    let table = report.markdown();
    println!("\n{table}");
    // Only a complete run replaces the README's table: nothing of an older run stays, and a
    // partial or --quick run leaves it alone.
    if complete {
        let readme = suite::readme::path(&options.workspace);
        suite::readme::write(&readme, &table)?;
        eprintln!("wrote the table into {}", readme.display());
    } else {
        eprintln!("a partial or --quick run: crates/bench/README.md left as it was");
    }
    if let Some(path) = &args.json {
        let text = serde_json::to_string_pretty(&report)?;
        std::fs::write(path, text + "\n").with_context(|| format!("writing {}", path.display()))?;
        eprintln!("wrote {}", path.display());
    }
    Ok(if report.has_errors() {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

fn sample(args: SampleArgs) -> Result<ExitCode> {
    let vars = FakeVars(std::env::vars().collect());
    let targets = Targets {
        search_ads: vars.search_ads()?,
        video: vars.video()?,
    };
    let spec = SampleSpec {
        scenario: args.scenario,
        variant: args.variant,
        count: args.count,
        tag: args.tag,
        look_ahead: args.look_ahead,
        block: args.block,
    };
    let mut builder = match args.runtime {
        Runtime::MultiThread => tokio::runtime::Builder::new_multi_thread(),
        Runtime::CurrentThread => tokio::runtime::Builder::new_current_thread(),
    };
    let runtime = builder
        .enable_all()
        .build()
        .context("starting the tokio runtime")?;
    // One JSON line: a measurement, or both of a paired sample (one process, so one peak RSS).
    let line = if spec.variant == Variant::Paired {
        let mut paired = runtime.block_on(sample::run_paired(&spec, &targets))?;
        drop(runtime);
        let rss = peak_rss_kib();
        paired.baseline.peak_rss_kib = rss;
        paired.sdk.peak_rss_kib = rss;
        serde_json::to_string(&paired)?
    } else {
        let mut measurement = runtime.block_on(sample::run(&spec, &targets))?;
        drop(runtime);
        measurement.peak_rss_kib = peak_rss_kib();
        serde_json::to_string(&measurement)?
    };
    println!("{line}");
    Ok(ExitCode::SUCCESS)
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Suite(args) => suite(args),
        Command::Sample(args) => sample(args),
    };
    result.unwrap_or_else(|e| {
        eprintln!("error: {e:#}");
        ExitCode::FAILURE
    })
}

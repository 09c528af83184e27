//! The whole benchmark, as `cargo xtask bench` runs it.
//!
//! One file a job: `scenarios` declares every scenario (one declaration each: its variant, how
//! its runs are made, its unit, target and label); `client` and `generate` run them;
//! `processes` starts the fakes and sample processes; `report` judges and renders;
//! `machine` describes the machine.
//!
//! - The fakes run as `sa360-video-fakes` child processes: one without added
//!   latency (reads and reports, ID mapping, logins), one with 20 ms added to
//!   every search ads answer (latency-bound reads and reports), and a fresh one with 20 ms for every
//!   upload sample (a fresh ledger, so no run sees another's conversions and
//!   the fake's store does not grow from run to run). They are killed when
//!   the suite ends, also on errors.
//! - Every sample runs in its own `bench-runner sample` process (the client
//!   side only), so each starts cold in the same way and its peak RSS is its
//!   own.
//! - Per scenario: one unrecorded warm-up run of each variant, then baseline,
//!   SDK, baseline, SDK, … (`reps` of each). The medians of the rates
//!   give the ratio SDK / baseline, compared with the target.
//! - `generate` times the `xtask` binary (`xtask --root <copy> generate`) on a
//!   temporary copy of `specs/` and the generated files.

mod client;
mod generate;
mod machine;
mod options;
mod processes;
pub mod readme;
mod report;
mod scenarios;

use std::fs;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use anyhow::{Context as _, Result};

pub use self::machine::Machine;
pub use self::options::SuiteOptions;
pub use self::processes::run_sample_process;
pub use self::report::{Report, ScenarioResult, Side, Verdict, format_ratio};
pub use self::scenarios::{
    FakeKind, GENERATE_MAX_SECONDS, ID_MAPPING_MAX_RSS_MIB, ID_MAPPING_MIN_MB_PER_S, Kind,
    LATENCY_HIDING, LATENCY_MS, OVERHEAD, REPORT_LATENCY_DERIVATION, REPORT_LATENCY_HIDING, Runs,
    Scenario, ScenarioDef, Sizes, Target, Work,
};

use self::client::client_scenario;
use self::generate::generate_scenario;
use self::machine::{commit, loadavg};
use self::processes::Fakes;
use self::report::judge;

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
        .iter()
        .copied()
        .filter(|s| options.only.is_empty() || options.only.contains(s))
        .collect();
    let mut fakes = Fakes::new(options);
    let mut results = Vec::new();
    for scenario in selected {
        let label = scenario.label(&options.sizes);
        eprintln!("{label}:");
        let outcome = match scenario.def().runs {
            Runs::Client {
                client,
                fake,
                work,
                pairing,
            } => client_scenario(scenario, client, fake, work, pairing, &mut fakes)
                .map(|(b, f)| (Some(b), f)),
            Runs::Generate => generate_scenario(
                options.xtask_bin.as_deref(),
                &options.workspace,
                options.sizes.reps,
            )
            .map(|f| (None, f)),
        };
        let result = match outcome {
            Ok((baseline, sdk)) => {
                let (ratio, verdict) = judge(scenario, &baseline, &sdk);
                ScenarioResult {
                    scenario,
                    label,
                    unit: scenario.unit().to_owned(),
                    baseline,
                    sdk: Some(sdk),
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
                    sdk: None,
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
        commit: commit(&options.workspace),
        scenarios: results,
    })
}

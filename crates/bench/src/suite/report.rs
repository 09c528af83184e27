//! What a run measured: each side's samples and medians, the verdict of each row, and the
//! report as a markdown table and as JSON.

use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

use super::machine::Machine;
use super::scenarios::{Scenario, Sizes, Target};
use crate::scenarios::Measurement;
use crate::stats::{format_rate, median};

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
    /// The medians of `samples`.
    pub fn new(samples: Vec<Measurement>) -> Self {
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
    /// No target: shown for information.
    Info,
}

impl Verdict {
    /// `PASS`, `MISS` or `ERROR`.
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Pass => "PASS",
            Verdict::Miss => "MISS",
            Verdict::Error => "ERROR",
            Verdict::Info => "—",
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
    /// SDK runs (for `generate`: the `xtask generate` runs, one unit each).
    pub sdk: Option<Side>,
    /// Median SDK rate / median baseline rate.
    pub ratio: Option<f64>,
    /// The target.
    pub target: Target,
    /// The verdict.
    pub verdict: Verdict,
    /// Why it did not complete.
    pub error: Option<String>,
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
    /// The commit the run's code came from (`git describe --always --dirty`).
    #[serde(default)]
    pub commit: String,
    /// One result per scenario run.
    pub scenarios: Vec<ScenarioResult>,
}

impl Report {
    /// True when a scenario did not complete.
    pub fn has_errors(&self) -> bool {
        self.scenarios.iter().any(|s| s.verdict == Verdict::Error)
    }

    /// The three login variants side by side, when both login rows ran:
    /// generated client, SDK over a `MemoryStore`, SDK over a
    /// `RedisStore`, with the ratios against the generated client.
    pub fn logins_line(&self) -> Option<String> {
        let rate = |scenario: Scenario, sdk: bool| {
            let s = self.scenarios.iter().find(|s| s.scenario == scenario)?;
            let side = if sdk {
                s.sdk.as_ref()
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
            "Logins (medians): generated client {}, SDK + MemoryStore {} ({} of the generated client; {} in the Redis row), SDK + RedisStore {} ({} of the generated client, {} of the MemoryStore in the same row).",
            format_rate(generated, "logins"),
            format_rate(memory, "logins"),
            format_ratio(memory / generated),
            format_rate(memory_again, "logins"),
            format_rate(redis, "logins"),
            format_ratio(redis / generated),
            format_ratio(redis / memory_again),
        ))
    }

    /// The markdown: what ran where, the table (one question per row), the derivations.
    pub fn markdown(&self) -> String {
        let mut out = String::new();
        let started = chrono::DateTime::<chrono::Utc>::from_timestamp(
            i64::try_from(self.started_unix).unwrap_or(0),
            0,
        )
        .map(|t| t.format("%Y-%m-%d %H:%M UTC").to_string())
        .unwrap_or_default();
        let _ = writeln!(
            out,
            "Run of `cargo xtask bench` at commit `{}`, started {started}: {} alternations per scenario{}; total {:.0} s.\n\nMachine: {}.\n",
            if self.commit.is_empty() {
                "unknown"
            } else {
                &self.commit
            },
            self.sizes.reps,
            if self.quick {
                " (--quick: small sizes, ratios not meaningful)"
            } else {
                ""
            },
            self.total_seconds,
            self.machine.line(),
        );
        out.push_str(
            "| scenario | kind | question | baseline | SDK | baseline (median) | SDK (median) | ratio | target | result | definition |\n",
        );
        out.push_str("|---|---|---|---|---|---|---|---|---|---|---|\n");
        for s in &self.scenarios {
            let def = s.scenario.def();
            let rss = def.target.max_sdk_rss_mib.is_some() || def.target.rss_not_above_baseline;
            let side = |side: &Option<Side>| -> String {
                let Some(side) = side else {
                    return "—".to_owned();
                };
                if def.shows_seconds() {
                    return format!("{:.2} s", side.median_seconds);
                }
                let mut cell = format!(
                    "{} ({:.2} s)",
                    format_rate(side.median_rate, &s.unit),
                    side.median_seconds
                );
                if rss && let Some(kib) = side.max_peak_rss_kib {
                    let _ = write!(cell, ", peak RSS {:.0} MiB", kib as f64 / 1024.0);
                }
                cell
            };
            let ratio = s.ratio.map_or_else(|| "—".to_owned(), format_ratio);
            let result = match (&s.error, s.verdict) {
                (Some(e), _) => format!("ERROR: {}", e.lines().next().unwrap_or_default()),
                (None, v) => v.as_str().to_owned(),
            };
            let cell = |text: String| text.replace('|', "\\|");
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | `{}` {} |",
                s.label,
                def.kind.as_str(),
                cell(def.question.to_owned()),
                cell((def.baseline)()),
                cell((def.sdk)()),
                side(&s.baseline),
                side(&s.sdk),
                ratio,
                s.target.describe(),
                result,
                s.scenario.name(),
                s.scenario.fingerprint(),
            );
        }
        for s in &self.scenarios {
            if let Some(note) = s.scenario.def().note {
                let _ = writeln!(out, "\n`{}`: {note}", s.scenario.name());
            }
        }
        if let Some(line) = self.logins_line() {
            let _ = writeln!(out, "\n{line}");
        }
        out
    }
}

/// A ratio with two decimals, rounded down (the targets are lower bounds, so
/// a ratio shown as 0.90× has reached 0.90).
pub fn format_ratio(ratio: f64) -> String {
    format!("{:.2}×", (ratio * 100.0).floor() / 100.0)
}

/// Judges a row from its sides.
pub(super) fn judge(
    scenario: Scenario,
    baseline: &Option<Side>,
    sdk: &Side,
) -> (Option<f64>, Verdict) {
    let target = scenario.def().target;
    let ratio = baseline
        .as_ref()
        .and_then(|b| (b.median_rate > 0.0).then(|| sdk.median_rate / b.median_rate));
    if target.is_none() {
        return (ratio, Verdict::Info);
    }
    let mut pass = true;
    if let Some(min) = target.min_ratio {
        pass &= ratio.is_some_and(|r| r >= min);
    }
    if let Some(max) = target.max_sdk_rss_mib {
        pass &= sdk.max_peak_rss_kib.is_some_and(|kib| kib <= max * 1024);
    }
    if target.rss_not_above_baseline {
        let baseline_rss = baseline.as_ref().and_then(|b| b.max_peak_rss_kib);
        pass &= matches!(
            (sdk.max_peak_rss_kib, baseline_rss),
            (Some(f), Some(b)) if f <= b
        );
    }
    if let Some(min) = target.min_sdk_mb_per_s {
        pass &= sdk.median_rate / 1e6 >= min;
    }
    if let Some(max) = target.max_seconds {
        pass &= sdk.median_seconds < max;
    }
    (ratio, if pass { Verdict::Pass } else { Verdict::Miss })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::suite::machine::Machine;

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
    fn id_mapping_needs_the_throughput_and_the_rss() {
        let b = Some(side(&[1e9], Some(10_000)));
        let small = side(&[130e6], Some(30 * 1024));
        let big = side(&[130e6], Some(65 * 1024));
        assert_eq!(judge(Scenario::IdMapping, &b, &small).1, Verdict::Pass);
        assert_eq!(judge(Scenario::IdMapping, &b, &big).1, Verdict::Miss);
        let slow = side(&[120e6], Some(1024));
        assert_eq!(judge(Scenario::IdMapping, &b, &slow).1, Verdict::Miss);
    }

    #[test]
    fn the_one_shard_report_needs_the_ratio_and_no_more_memory() {
        let b = Some(side(&[100.0], Some(100 * 1024)));
        let fast_lean = side(&[91.0], Some(90 * 1024));
        let fast_fat = side(&[91.0], Some(101 * 1024));
        let slow = side(&[89.0], Some(90 * 1024));
        assert_eq!(judge(Scenario::Report, &b, &fast_lean).1, Verdict::Pass);
        assert_eq!(judge(Scenario::Report, &b, &fast_fat).1, Verdict::Miss);
        assert_eq!(judge(Scenario::Report, &b, &slow).1, Verdict::Miss);
    }

    #[test]
    fn a_row_without_a_target_is_information() {
        let b = Some(side(&[100.0], None));
        let f = side(&[1.0], None);
        assert_eq!(judge(Scenario::LoginsRedis, &b, &f).1, Verdict::Info);
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
            commit: "abc1234".into(),
            scenarios: vec![ScenarioResult {
                scenario: Scenario::Read,
                label: Scenario::Read.label(&Sizes::full()),
                unit: "rows".into(),
                baseline: Some(side(&[1000.0], None)),
                sdk: Some(side(&[950.0], None)),
                ratio: Some(0.95),
                target: Scenario::Read.target(),
                verdict: Verdict::Pass,
                error: None,
            }],
        };
        let table = report.markdown();
        assert!(
            table.contains(
                "| 1 000 rows/s (10.00 s) | 950 rows/s (10.00 s) | 0.95× | ≥ 0.90× | PASS | `read` "
            ),
            "{table}"
        );
        assert!(
            table.contains("| read 200 000 conversions, no added latency | overhead | What does"),
            "{table}"
        );
        assert!(table.contains("commit `abc1234`"), "{table}");
        assert!(
            table.contains("Machine: CPU, 2 cores, 2 GiB RAM"),
            "{table}"
        );
    }
}

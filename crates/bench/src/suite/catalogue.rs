//! Every scenario of the suite, each declared once: its variant of [`Scenario`] (name on the
//! command line and in JSON, doc for `--help`) and its [`ScenarioDef`] (how its runs are made,
//! the unit its rates count, its target, its label). A new scenario is one more entry of the
//! `scenarios!` list below (plus its client side in `sample.rs` / `scenarios.rs`, when it has
//! one); the runner, the report and the JSON follow from it.

use serde::{Deserialize, Serialize};

use crate::sample::ClientScenario;
use crate::stats::{format_bytes, format_count};

/// Latency added by the latency-bound fakes, in milliseconds.
pub const LATENCY_MS: u64 = 20;

/// Largest facade peak RSS the ID-mapping target allows, in MiB.
pub const ID_MAPPING_MAX_RSS_MIB: u64 = 64;

/// Largest facade peak RSS the streamed upload allows, in MiB (issue 12).
pub const UPLOAD_STREAM_MAX_RSS_MIB: u64 = 96;

/// Longest median `generate` allowed, in seconds.
pub const GENERATE_MAX_SECONDS: f64 = 1.0;

/// What one scenario is.
#[derive(Debug, Clone, Copy)]
pub struct ScenarioDef {
    /// How its runs are made.
    pub runs: Runs,
    /// The unit its rates count.
    pub unit: &'static str,
    /// What it must reach.
    pub target: Target,
    /// The table's label at these sizes.
    pub label: fn(&Sizes) -> String,
}

impl ScenarioDef {
    /// Whether the table shows its median time instead of a rate (a scenario without a baseline).
    pub fn shows_seconds(&self) -> bool {
        matches!(self.runs, Runs::Generate)
    }
}

/// How a scenario's runs are made.
#[derive(Debug, Clone, Copy)]
pub enum Runs {
    /// `bench-runner sample --scenario <client>` processes (baseline and facade alternating)
    /// against `fake`, each run doing `work`.
    Client {
        /// The runner's scenario.
        client: ClientScenario,
        /// The fake it runs against.
        fake: FakeKind,
        /// What one run does, and how its count is checked.
        work: Work,
    },
    /// `xtask --root <copy> generate` (no baseline).
    Generate,
}

/// The fake a client scenario runs against.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FakeKind {
    /// The shared fake without added latency.
    Plain,
    /// The shared fake with [`LATENCY_MS`] per answer.
    Latency,
    /// The plain fake, and a `redis-server` (`BENCH_REDIS_URL`).
    PlainWithRedis,
    /// The latency fake, and a `redis-server` (`BENCH_REDIS_URL`).
    LatencyWithRedis,
    /// A fresh fake with [`LATENCY_MS`] per answer for each run (an empty ledger).
    FreshUpload,
    /// A fresh fake without added latency for each run (an empty ledger).
    FreshPlain,
}

/// What one run of a client scenario does.
#[derive(Debug, Clone, Copy)]
pub enum Work {
    /// Reads every seeded conversion: a run must report [`Sizes::read_rows`] units.
    ReadRows,
    /// This many items (the warm-up at most 1,000): a run must do them all.
    Items(fn(&Sizes) -> u64),
    /// Whatever the file holds (the ID-mapping bytes): not checked.
    Unchecked,
}

/// Declares [`Scenario`] and [`Scenario::def`] from one list: each entry is a variant's docs,
/// its name and its [`ScenarioDef`].
macro_rules! scenarios {
    ($( $(#[$doc:meta])* $variant:ident => $def:expr, )*) => {
        /// A row of the table (declared in `suite/catalogue.rs`).
        #[derive(
            Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, clap::ValueEnum,
        )]
        #[serde(rename_all = "kebab-case")]
        pub enum Scenario {
            $( $(#[$doc])* $variant, )*
        }

        impl Scenario {
            /// Every scenario, in table order.
            pub const ALL: &'static [Scenario] = &[$(Scenario::$variant,)*];

            /// Its declaration.
            pub fn def(self) -> ScenarioDef {
                match self {
                    $( Scenario::$variant => $def, )*
                }
            }
        }
    };
}

const fn client(client: ClientScenario, fake: FakeKind, work: Work) -> Runs {
    Runs::Client { client, fake, work }
}

scenarios! {
    /// Conversions read without added latency.
    Read => ScenarioDef {
        runs: client(ClientScenario::Read, FakeKind::Plain, Work::ReadRows),
        unit: "rows",
        target: Target::ratio(0.90),
        label: |s| format!("read {} conversions, no added latency", format_count(s.read_rows)),
    },
    /// Conversions read with 20 ms per answer.
    ReadLatency => ScenarioDef {
        runs: client(ClientScenario::ReadLatency, FakeKind::Latency, Work::ReadRows),
        unit: "rows",
        target: Target::ratio(3.0),
        label: |s| {
            format!(
                "read {} conversions, {LATENCY_MS} ms per response",
                format_count(s.read_rows)
            )
        },
    },
    /// A conversion report (Reporting API) without added latency.
    Report => ScenarioDef {
        runs: client(ClientScenario::Report, FakeKind::Plain, Work::ReadRows),
        unit: "rows",
        target: Target::ratio(0.95),
        label: |s| {
            format!(
                "report of {} conversions (Reporting API), no added latency",
                format_count(s.read_rows)
            )
        },
    },
    /// A conversion report with 20 ms per answer.
    ReportLatency => ScenarioDef {
        runs: client(ClientScenario::ReportLatency, FakeKind::Latency, Work::ReadRows),
        unit: "rows",
        target: Target::ratio(3.0),
        label: |s| {
            format!(
                "report of {} conversions (Reporting API), {LATENCY_MS} ms per response",
                format_count(s.read_rows)
            )
        },
    },
    /// Conversions uploaded with 20 ms per answer.
    Upload => ScenarioDef {
        runs: client(ClientScenario::Upload, FakeKind::FreshUpload, Work::Items(|s| s.upload_rows)),
        unit: "rows",
        target: Target::ratio(3.0),
        label: |s| {
            format!(
                "upload {} conversions, {LATENCY_MS} ms per response",
                format_count(s.upload_rows)
            )
        },
    },
    /// A streamed upload of many conversions against the collected one: throughput and peak RSS.
    UploadStream => ScenarioDef {
        runs: client(ClientScenario::UploadStream, FakeKind::FreshPlain, Work::Items(|s| s.stream_rows)),
        unit: "rows",
        target: Target {
            min_ratio: Some(0.90),
            max_facade_rss_mib: Some(UPLOAD_STREAM_MAX_RSS_MIB),
            max_seconds: None,
        },
        label: |s| {
            format!(
                "upload {} conversions, streamed (facade) vs collected (baseline)",
                format_count(s.stream_rows)
            )
        },
    },
    /// The ID-mapping file.
    IdMapping => ScenarioDef {
        runs: client(ClientScenario::IdMapping, FakeKind::Plain, Work::Unchecked),
        unit: "bytes",
        target: Target {
            min_ratio: Some(0.50),
            max_facade_rss_mib: Some(ID_MAPPING_MAX_RSS_MIB),
            max_seconds: None,
        },
        label: |s| format!("ID mapping, {}", format_bytes(s.id_mapping_bytes)),
    },
    /// Logins.
    Logins => ScenarioDef {
        runs: client(ClientScenario::Logins, FakeKind::Plain, Work::Items(|s| s.logins)),
        unit: "logins",
        target: Target::ratio(0.90),
        label: |s| format!("{} logins", format_count(s.logins)),
    },
    /// Logins through a `RedisStore` against a `MemoryStore`.
    LoginsRedis => ScenarioDef {
        runs: client(ClientScenario::LoginsRedis, FakeKind::PlainWithRedis, Work::Items(|s| s.logins)),
        unit: "logins",
        target: Target::ratio(0.80),
        label: |s| {
            format!(
                "{} logins, RedisStore (facade) vs MemoryStore (baseline)",
                format_count(s.logins)
            )
        },
    },
    /// Logins through a `RedisStore` against a `MemoryStore`, with 20 ms per answer.
    LoginsRedisLatency => ScenarioDef {
        runs: client(
            ClientScenario::LoginsRedisLatency,
            FakeKind::LatencyWithRedis,
            Work::Items(|s| s.logins_latency()),
        ),
        unit: "logins",
        target: Target::ratio(0.80),
        label: |s| {
            format!(
                "{} logins, {LATENCY_MS} ms per response, RedisStore (facade) vs MemoryStore (baseline)",
                format_count(s.logins_latency())
            )
        },
    },
    /// `cargo xtask generate`.
    Generate => ScenarioDef {
        runs: Runs::Generate,
        unit: "runs",
        target: Target {
            min_ratio: None,
            max_facade_rss_mib: None,
            max_seconds: Some(GENERATE_MAX_SECONDS),
        },
        label: |_| "generate both specs".to_owned(),
    },
}

impl Scenario {
    /// Its name on the command line and in JSON.
    pub fn name(self) -> &'static str {
        match self.def().runs {
            Runs::Client { client, .. } => client.name(),
            Runs::Generate => "generate",
        }
    }

    /// The runner's scenario (`None` for `generate`).
    pub fn client(self) -> Option<ClientScenario> {
        match self.def().runs {
            Runs::Client { client, .. } => Some(client),
            Runs::Generate => None,
        }
    }

    /// The unit its rates count.
    pub fn unit(self) -> &'static str {
        self.def().unit
    }

    /// Its target.
    pub fn target(self) -> Target {
        self.def().target
    }

    /// The table's label at these sizes.
    pub fn label(self, sizes: &Sizes) -> String {
        (self.def().label)(sizes)
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
    /// At least `min` times the baseline's rate.
    pub const fn ratio(min: f64) -> Self {
        Self {
            min_ratio: Some(min),
            max_facade_rss_mib: None,
            max_seconds: None,
        }
    }

    /// As shown in the table's target column.
    pub fn describe(&self) -> String {
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
    /// Conversions of a streamed upload.
    pub stream_rows: u64,
    /// Size of the ID-mapping file.
    pub id_mapping_bytes: u64,
    /// Logins per run.
    pub logins: u64,
    /// Recorded runs of each variant per scenario.
    pub reps: usize,
}

impl Sizes {
    /// Logins per run against the latency fake (a twentieth of [`logins`](Self::logins): each
    /// takes at least [`LATENCY_MS`]).
    pub fn logins_latency(&self) -> u64 {
        (self.logins / 20).max(1)
    }

    /// The sizes, 5 alternations.
    pub fn full() -> Self {
        Self {
            read_rows: 200_000,
            upload_rows: 100_000,
            stream_rows: 1_000_000,
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
            stream_rows: 2_000,
            id_mapping_bytes: 2 << 20,
            logins: 200,
            reps: 3,
        }
    }
}

#[cfg(test)]
mod tests {
    use clap::ValueEnum as _;

    use super::{Runs, Scenario};

    #[test]
    fn the_command_line_name_is_the_runners_name() {
        for scenario in Scenario::ALL {
            let value = scenario
                .to_possible_value()
                .map(|v| v.get_name().to_owned());
            assert_eq!(value.as_deref(), Some(scenario.name()), "{scenario:?}");
            let json = serde_json::to_value(scenario).unwrap_or_default();
            assert_eq!(json, scenario.name(), "{scenario:?}");
        }
    }

    #[test]
    fn every_client_scenario_has_one_row() {
        let mut clients: Vec<_> = Scenario::ALL
            .iter()
            .filter_map(|s| match s.def().runs {
                Runs::Client { client, .. } => Some(client.name()),
                Runs::Generate => None,
            })
            .collect();
        let all = clients.len();
        clients.sort_unstable();
        clients.dedup();
        assert_eq!(clients.len(), all, "a runner scenario in two rows");
    }

    /// `cargo xtask bench --help` lists the scenarios by hand (xtask does not depend on this
    /// crate): it must name every one.
    #[test]
    fn xtask_bench_help_names_every_scenario() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../xtask/src/bench.rs");
        let text = std::fs::read_to_string(path).unwrap_or_default();
        let line = text
            .lines()
            .skip_while(|l| !l.contains("/// Only these scenarios:"))
            .take_while(|l| l.trim_start().starts_with("///"))
            .collect::<Vec<_>>()
            .join(" ");
        let listed: Vec<&str> = line
            .split_once(':')
            .map(|(_, rest)| rest)
            .unwrap_or_default()
            .split([',', ' ', '/', '.'])
            .filter(|w| !w.is_empty())
            .collect();
        let names: Vec<&str> = Scenario::ALL.iter().map(|s| s.name()).collect();
        assert_eq!(listed, names, "xtask/src/bench.rs: {line}");
    }
}

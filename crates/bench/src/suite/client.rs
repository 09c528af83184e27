//! A client scenario: a warm-up run of each variant, then baseline, facade, baseline, facade, …
//! each in its own `bench-runner sample` process against the fake its declaration names.

use anyhow::{Result, bail};

use super::catalogue::{FakeKind, Scenario, Work};
use super::processes::{Fakes, run_sample_process};
use super::report::Side;
use crate::sample::{ClientScenario, SampleSpec, Variant};
use crate::scenarios::Measurement;
use crate::stats::{format_count, format_rate};

/// One sample, as the progress lines show it.
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

/// Runs a client scenario: the warm-up, then `reps` recorded runs of each variant, alternating.
pub(super) fn client_scenario(
    scenario: Scenario,
    client: ClientScenario,
    fake: FakeKind,
    work: Work,
    fakes: &mut Fakes<'_>,
) -> Result<(Side, Side)> {
    let options = fakes.options;
    let sizes = &options.sizes;
    let count = match work {
        Work::Items(count) => count(sizes),
        Work::ReadRows | Work::Unchecked => 0,
    };
    let warmup_count = count.min(1_000);
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
            // A fresh fake (`_guard`) lives until the sample is done.
            let (vars, _guard) = fakes.vars(fake)?;
            let m = run_sample_process(&options.runner_bin, &spec, &vars)?;
            match work {
                Work::ReadRows if m.units != sizes.read_rows => {
                    bail!(
                        "{client} {variant} read {} rows, expected {}",
                        m.units,
                        sizes.read_rows
                    );
                }
                Work::Items(_) if m.units != spec.count => {
                    bail!(
                        "{client} {variant} did {} of {} {}",
                        m.units,
                        spec.count,
                        scenario.unit()
                    );
                }
                _ => {}
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

//! A client scenario: a warm-up run of each variant, then baseline, SDK, baseline, SDK, …
//! each in its own `bench-runner sample` process against the fake its declaration names; or, for
//! a scenario run paired, a warm-up and then one process per run that does both sides.

use anyhow::{Result, bail};

use super::processes::{Fakes, run_sample_process};
use super::report::Side;
use super::scenarios::{FakeKind, Pairing, Scenario, Work};
use crate::sample::{ClientScenario, PairedMeasurement, SampleSpec, Variant};
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

/// Checks that a run did all of its work.
fn check_count(
    scenario: Scenario,
    client: ClientScenario,
    variant: Variant,
    work: Work,
    read_rows: u64,
    expected: u64,
    m: &Measurement,
) -> Result<()> {
    match work {
        Work::ReadRows if m.units != read_rows => {
            bail!(
                "{client} {variant} read {} rows, expected {read_rows}",
                m.units
            );
        }
        Work::Items(_) | Work::PerSide { .. } if m.units != expected => {
            bail!(
                "{client} {variant} did {} of {expected} {}",
                m.units,
                scenario.unit()
            );
        }
        _ => Ok(()),
    }
}

/// Runs a client scenario: the warm-up, then `reps` recorded runs of each variant, alternating
/// processes, or both variants in each process when the scenario runs paired.
pub(super) fn client_scenario(
    scenario: Scenario,
    client: ClientScenario,
    fake: FakeKind,
    work: Work,
    pairing: Pairing,
    fakes: &mut Fakes<'_>,
) -> Result<(Side, Side)> {
    let options = fakes.options;
    let sizes = &options.sizes;
    let count = |variant: Variant| match work {
        Work::Items(count) => count(sizes),
        Work::PerSide { baseline, sdk } => match variant {
            Variant::Baseline => baseline(sizes),
            Variant::Sdk | Variant::Paired => sdk(sizes),
        },
        Work::ReadRows | Work::Unchecked => 0,
    };
    let variants: &[Variant] = match pairing {
        Pairing::Processes => &[Variant::Baseline, Variant::Sdk],
        Pairing::Blocks(_) => &[Variant::Paired],
    };
    let mut baseline = Vec::new();
    let mut sdk = Vec::new();
    // Run 0 is the warm-up; runs 1..=reps are recorded.
    for run in 0..=sizes.reps {
        for &variant in variants {
            let spec = SampleSpec {
                scenario: client,
                variant,
                count: if run == 0 {
                    count(variant).min(1_000)
                } else {
                    count(variant)
                },
                tag: format!("{}-{run}", variant.name()),
                look_ahead: None,
                block: match pairing {
                    Pairing::Processes => None,
                    Pairing::Blocks(block) => Some(block),
                },
            };
            // A fresh fake (`_guard`) lives until the sample is done.
            let (vars, _guard) = fakes.vars(fake)?;
            let sides = if variant == Variant::Paired {
                let p: PairedMeasurement = run_sample_process(&options.runner_bin, &spec, &vars)?;
                vec![(Variant::Baseline, p.baseline), (Variant::Sdk, p.sdk)]
            } else {
                vec![(
                    variant,
                    run_sample_process(&options.runner_bin, &spec, &vars)?,
                )]
            };
            let label = if run == 0 {
                "warm-up".to_owned()
            } else {
                format!("#{run}")
            };
            for (side, m) in sides {
                check_count(
                    scenario,
                    client,
                    side,
                    work,
                    sizes.read_rows,
                    spec.count,
                    &m,
                )?;
                let how = if variant == Variant::Paired {
                    " (paired)"
                } else {
                    ""
                };
                eprintln!(
                    "  {client} {side:<8} {label:<7} {}{how}",
                    describe(&m, scenario.unit())
                );
                if run > 0 {
                    match side {
                        Variant::Baseline => baseline.push(m),
                        Variant::Sdk => sdk.push(m),
                        Variant::Paired => bail!("a sample's side is baseline or SDK"),
                    }
                }
            }
        }
    }
    Ok((Side::new(baseline), Side::new(sdk)))
}

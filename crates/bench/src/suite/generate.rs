//! The `generate` scenario: `xtask --root <copy> generate` on a temporary copy of `specs/` and
//! the generated files.

use std::fs;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Instant;

use anyhow::{Context as _, Result, bail};

use super::report::Side;
use crate::scenarios::Measurement;

/// Copies `specs/`, every `crates/*/src/generated.rs` and the field catalogue's
/// discovery input and output of `workspace` into `dir`: the inputs and outputs of
/// `xtask generate`.
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
    // The Reporting field catalogue that `generate` also writes (DECISIONS SR-30): its
    // discovery input and its output, at the paths `xtask::report_fields` names.
    for relative in [
        "crates/sa360-video-fakes/data/searchads360-v0-discovery.json",
        "crates/sa360-video-sdk/src/search_ads/reporting/fields/generated.rs",
    ] {
        let to = dir.join(relative);
        fs::create_dir_all(to.parent().context("a file inside the copy")?)?;
        fs::copy(workspace.join(relative), &to).with_context(|| format!("copying {relative}"))?;
    }
    Ok(())
}

/// Times `xtask generate` (the binary `xtask_bin`) `reps` times, after a warm-up run, on a
/// temporary copy of the specs and generated files of `workspace`.
pub(super) fn generate_scenario(
    xtask_bin: Option<&Path>,
    workspace: &Path,
    reps: usize,
) -> Result<Side> {
    let xtask = xtask_bin.context("no xtask binary given (run through `cargo xtask bench`)")?;
    let dir = tempfile::tempdir()?;
    copy_generate_inputs(workspace, dir.path())?;
    let mut runs = Vec::new();
    for run in 0..=reps {
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

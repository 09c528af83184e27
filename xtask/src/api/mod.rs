//! `cargo xtask api`: rules on the SDK's public surface and module layout.
//!
//! - [`foreign_types`] (`--rule foreign-types`): no type of reqwest, http, hyper,
//!   progenitor-client or a generated client in the SDK's public API, read
//!   from its rustdoc JSON.
//! - [`one_path`] (`--rule one-path`): each public item of the SDK has one public path,
//!   from the same JSON.
//! - [`module_graph`] (`--rule module-cycles`): in no crate of the workspace
//!   (every target of every member package, from `cargo metadata`) does a module
//!   import from a module that imports it.

pub mod foreign_types;
pub mod module_graph;
pub mod one_path;

use std::path::PathBuf;
use std::process::{Command, ExitCode};

use anyhow::{Context, bail};

use crate::Workspace;

/// Arguments of `cargo xtask api`.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct Args {
    /// Run only this rule (default: all).
    #[arg(long, value_enum)]
    pub rule: Option<Rule>,
}

/// The rules of `cargo xtask api`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Rule {
    /// No foreign type in the SDK's public API.
    ForeignTypes,
    /// One public path per public item of the SDK.
    OnePath,
    /// No import cycle between the modules of any crate of the workspace.
    ModuleCycles,
}

/// Runs the rules; the exit status is 1 when one finds something.
pub fn run(ws: &Workspace, args: &Args) -> anyhow::Result<ExitCode> {
    let mut failed = false;
    if args.rule.is_none_or(|r| r == Rule::ModuleCycles) {
        let crates = module_graph::workspace_crates(&cargo_metadata(ws)?);
        let (mut modules, mut found) = (0, 0);
        for krate in &crates {
            let graph = module_graph::read_root(&krate.root).map_err(anyhow::Error::msg)?;
            for cycle in &module_graph::cycles(&graph) {
                let names: Vec<&str> = cycle.iter().map(|m| module_graph::display(m)).collect();
                eprintln!(
                    "module-cycles: {} modules import each other: {} -> {}",
                    krate.name,
                    names.join(" -> "),
                    names[0],
                );
                found += 1;
            }
            modules += graph.edges.len();
        }
        println!(
            "module-cycles: {} crates, {modules} modules, {found} cycle(s)",
            crates.len()
        );
        failed |= found > 0;
    }
    let json_rules = [Rule::ForeignTypes, Rule::OnePath];
    if args.rule.is_none_or(|r| json_rules.contains(&r)) {
        let json = sdk_rustdoc_json(ws)?;
        let doc: serde_json::Value = serde_json::from_slice(
            &std::fs::read(&json).with_context(|| format!("reading {}", json.display()))?,
        )
        .with_context(|| format!("parsing {}", json.display()))?;
        if args.rule.is_none_or(|r| r == Rule::ForeignTypes) {
            let found = foreign_types::check(&doc).map_err(anyhow::Error::msg)?;
            for v in &found {
                eprintln!("foreign-types: {v}");
            }
            println!("foreign-types: {} violation(s)", found.len());
            failed |= !found.is_empty();
        }
        if args.rule.is_none_or(|r| r == Rule::OnePath) {
            let found = one_path::check(&doc).map_err(anyhow::Error::msg)?;
            for paths in &found {
                eprintln!(
                    "one-path: one item, {} public paths: {} (make a module private or drop a re-export)",
                    paths.len(),
                    paths.join(", ")
                );
            }
            println!(
                "one-path: {} item(s) with more than one public path",
                found.len()
            );
            failed |= !found.is_empty();
        }
    }
    Ok(if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

/// `cargo metadata --no-deps` of the workspace, as JSON.
fn cargo_metadata(ws: &Workspace) -> anyhow::Result<serde_json::Value> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let output = Command::new(cargo)
        .args([
            "metadata",
            "--no-deps",
            "--format-version",
            "1",
            "--manifest-path",
        ])
        .arg(ws.root.join("Cargo.toml"))
        .output()
        .context("running cargo metadata")?;
    if !output.status.success() {
        bail!(
            "cargo metadata failed: {}",
            String::from_utf8_lossy(&output.stderr)
        );
    }
    serde_json::from_slice(&output.stdout).context("reading cargo metadata's JSON")
}

/// Writes the SDK's rustdoc JSON (all features) and returns its path.
///
/// The JSON output is unstable in rustdoc; `RUSTC_BOOTSTRAP=1` lets the stable
/// toolchain write it. It builds in its own target directory
/// (`target/api-json`), so the flag does not invalidate the main build.
fn sdk_rustdoc_json(ws: &Workspace) -> anyhow::Result<PathBuf> {
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map_or_else(|| ws.root.join("target"), PathBuf::from)
        .join("api-json");
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let status = Command::new(cargo)
        .current_dir(&ws.root)
        .env("RUSTC_BOOTSTRAP", "1")
        .env("CARGO_TARGET_DIR", &target)
        .args([
            "rustdoc",
            "--locked",
            "-p",
            "sa360-video-sdk",
            "--all-features",
            "--",
            "-Z",
            "unstable-options",
            "--output-format",
            "json",
        ])
        .status()
        .context("running cargo rustdoc")?;
    if !status.success() {
        bail!("cargo rustdoc -p sa360-video-sdk --output-format json failed ({status})");
    }
    Ok(target.join("doc/sa360_video_sdk.json"))
}

//! `cargo xtask generate`: regenerate every client from its spec.

use std::fs;
use std::process::ExitCode;
use std::time::Instant;

use anyhow::{Context, Result, bail};

use crate::Workspace;
use crate::codegen;
use crate::specs::{self, SPECS, SpecConfig};

/// Arguments of `cargo xtask generate`.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct Args {
    /// Only generate these specs (by name, e.g. `search-ads`); default: all.
    #[arg(long = "only", value_name = "NAME")]
    pub only: Vec<String>,
}

/// What happened to one spec's output file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Summary {
    /// Spec name.
    pub name: &'static str,
    /// Workspace-relative output path.
    pub output: &'static str,
    /// Operations in the spec.
    pub operations: usize,
    /// Generated types.
    pub types: usize,
    /// Lines of the generated file.
    pub lines: usize,
    /// Wall-clock milliseconds for parse + generate + format.
    pub millis: u128,
    /// Whether the file on disk was (re)written.
    pub written: bool,
}

impl std::fmt::Display for Summary {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}: {} operations, {} types, {} lines, {} ms ({} {})",
            self.name,
            self.operations,
            self.types,
            self.lines,
            self.millis,
            if self.written { "wrote" } else { "unchanged" },
            self.output
        )
    }
}

/// The specs selected by `only` (all when empty); unknown names are an error.
pub fn select(only: &[String]) -> Result<Vec<&'static SpecConfig>> {
    if only.is_empty() {
        return Ok(SPECS.iter().collect());
    }
    only.iter()
        .map(|name| {
            specs::find(name).with_context(|| {
                let known: Vec<_> = SPECS.iter().map(|s| s.name).collect();
                format!("unknown spec {name:?}; known: {}", known.join(", "))
            })
        })
        .collect()
}

/// Generate one spec's file contents in memory.
pub fn generate_one(ws: &Workspace, config: &SpecConfig) -> Result<codegen::Generated> {
    let spec = codegen::load_spec(&ws.path(config.spec))?;
    codegen::render(config, &spec)
}

/// Generate and write (only if changed) one spec's output file.
pub fn write_one(ws: &Workspace, config: &'static SpecConfig) -> Result<Summary> {
    let start = Instant::now();
    let generated = generate_one(ws, config)?;
    let millis = start.elapsed().as_millis();
    let out = ws.path(config.output);
    warn_missing_dependencies(ws, config, &generated.requires);
    let unchanged = fs::read_to_string(&out).is_ok_and(|old| old == generated.code);
    if !unchanged {
        if let Some(dir) = out.parent() {
            fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        }
        fs::write(&out, &generated.code).with_context(|| format!("writing {}", out.display()))?;
    }
    Ok(Summary {
        name: config.name,
        output: config.output,
        operations: generated.operations,
        types: generated.types,
        lines: generated.lines(),
        millis,
        written: !unchanged,
    })
}

/// Warn (on stderr) about crates the generated code needs but the client
/// crate's `Cargo.toml` does not list.
fn warn_missing_dependencies(ws: &Workspace, config: &SpecConfig, requires: &[&str]) {
    let Some(manifest) = ws
        .path(config.output)
        .parent()
        .and_then(|src| src.parent())
        .map(|krate| krate.join("Cargo.toml"))
    else {
        return;
    };
    let Ok(text) = fs::read_to_string(&manifest) else {
        return;
    };
    for name in requires {
        let listed = text.lines().any(|line| {
            line.trim_start().starts_with(&format!("{name}."))
                || line.trim_start().starts_with(&format!("{name} "))
        });
        if !listed {
            eprintln!(
                "warning: {}: generated code uses the `{name}` crate but {} does not depend on it",
                config.name,
                manifest.display()
            );
        }
    }
}

/// Generate the selected specs; returns one summary per spec, or an error
/// listing every spec that failed (the others are still written).
pub fn generate(ws: &Workspace, args: &Args) -> Result<Vec<Summary>> {
    let mut summaries = Vec::new();
    let mut failures = Vec::new();
    for config in select(&args.only)? {
        match write_one(ws, config) {
            Ok(summary) => summaries.push(summary),
            Err(e) => failures.push(format!("{e:#}")),
        }
    }
    if !failures.is_empty() {
        bail!("{}", failures.join("\n"));
    }
    Ok(summaries)
}

/// CLI entry point: prints one line per spec.
pub fn run(ws: &Workspace, args: &Args) -> Result<ExitCode> {
    let mut failed = false;
    for config in select(&args.only)? {
        match write_one(ws, config) {
            Ok(summary) => println!("{summary}"),
            Err(e) => {
                failed = true;
                eprintln!("error: {e:#}");
            }
        }
    }
    // The SDK's field catalogue comes from the Reporting API's discovery document (SR-30).
    if args.only.is_empty() {
        match crate::report_fields::write(ws) {
            Ok(line) => println!("{line}"),
            Err(e) => {
                failed = true;
                eprintln!("error: {e:#}");
            }
        }
    }
    Ok(if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

//! `cargo xtask`: project automation. Run `cargo xtask --help`.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use xtask::Workspace;

/// Project automation for this workspace.
#[derive(Debug, Parser)]
#[command(name = "cargo xtask", version, about)]
struct Cli {
    /// Workspace root to operate on (default: the workspace this xtask was built from).
    #[arg(long, global = true, value_name = "DIR")]
    root: Option<PathBuf>,

    #[command(subcommand)]
    command: Command,
}

/// The subcommands; each one lives in its own module of the xtask library.
#[derive(Debug, Subcommand)]
enum Command {
    /// Regenerate every client from its spec (writes only changed files).
    Generate(xtask::generate::Args),
    /// Fail if a generated file is stale or a spec breaks a lint rule.
    Check(xtask::check::Args),
    /// List spec changes (against a git revision, or between any two OpenAPI
    /// 3.0 documents): breaking for clients, for servers, or compatible, and
    /// what they do to the generated Rust API. Exit status 0, 1 (breaking)
    /// or 2 (could not compare).
    Diff(xtask::diff::Args),
    /// Benchmark the SDK against plain baselines on the fakes (release build).
    Bench(xtask::bench::Args),
    /// Check the SDK's surface: no foreign type in its public API (from its
    /// rustdoc JSON), no import cycle between its modules.
    Api(xtask::api::Args),
    /// Print the notes of one release (`v0.1.0` or `0.1.0`), cut from CHANGELOG.md: the
    /// release workflow's GitHub release text. A section still headed `Unreleased` is
    /// refused unless --allow-unreleased.
    Changelog(xtask::changelog::Args),
    /// The Reporting API's discovery document: `compare OLD NEW` (revision and field
    /// difference; exit status 0 same, 1 different, 2 could not compare) or `refresh NEW` (the
    /// repository's copy and the field catalogue made from it).
    Discovery(xtask::discovery::Args),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let ws = cli
        .root
        .map_or_else(Workspace::from_manifest_dir, Workspace::new);
    let result = match &cli.command {
        Command::Generate(args) => xtask::generate::run(&ws, args),
        Command::Check(args) => xtask::check::run(&ws, args),
        Command::Diff(args) => xtask::diff::run(&ws, args),
        Command::Bench(args) => xtask::bench::run(&ws, args),
        Command::Api(args) => xtask::api::run(&ws, args),
        Command::Changelog(args) => xtask::changelog::run(&ws, args),
        Command::Discovery(args) => xtask::discovery::run(&ws, args),
    };
    result.unwrap_or_else(|e| {
        eprintln!("error: {e:#}");
        ExitCode::FAILURE
    })
}

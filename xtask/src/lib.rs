//! Project automation for the workspace, usable both from the `cargo xtask`
//! binary and as a library (the `workspace-tests` package drives it on temp
//! copies of the workspace).
//!
//! * [`generate`]: specs → `crates/<name>-client/src/generated.rs`.
//! * [`check`]: freshness of the generated files plus [`lint`] rules.
//! * [`codegen`]: the progenitor invocation itself, panic-safe.
//! * [`specs`]: the table of specs and their per-spec generation settings.
//! * [`openapi`]: the one OpenAPI model (tolerant reader, typed operations,
//!   `$ref` resolver) that [`inventory`], [`lint`] and [`diff`] share.
//! * [`inventory`]: a stable textual inventory of a spec's operations.
//! * [`diff`]: spec changes against a git revision (or between any two
//!   documents), classified, with their effect on the generated Rust API.
//! * [`bench`](mod@bench): builds and runs the benchmark suite of `crates/bench`.
//! * [`changelog`]: the notes of one release, cut from `CHANGELOG.md`.
//! * [`discovery`]: the Reporting API's discovery document compared with another, and refreshed
//!   (the copy the fake reads and the field catalogue made from it).
//!
//! To add a subcommand: add a module with an `Args` struct (clap `Args`) and a
//! `run(&Workspace, &Args) -> anyhow::Result<ExitCode>` function, then one
//! variant to `Command` in `main.rs`.

#![warn(missing_docs)]

pub mod api;
pub mod bench;
pub mod changelog;
pub mod check;
pub mod codegen;
pub mod diff;
pub mod discovery;
pub mod generate;
pub mod inventory;
pub mod lint;
pub mod openapi;
pub mod panic_guard;
pub mod report_fields;
pub mod specs;

use std::path::{Path, PathBuf};

/// A workspace checkout on which the tasks operate.
///
/// All spec and output paths in [`specs::SPECS`] are relative to [`Workspace::root`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Workspace {
    /// The workspace root directory (the one holding `specs/` and `crates/`).
    pub root: PathBuf,
}

impl Workspace {
    /// A workspace rooted at `root`.
    pub fn new(root: impl Into<PathBuf>) -> Self {
        Self { root: root.into() }
    }

    /// The workspace this xtask was built from (`CARGO_MANIFEST_DIR/..`).
    pub fn from_manifest_dir() -> Self {
        let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
        Self::new(manifest.parent().unwrap_or(manifest))
    }

    /// Absolute path of a workspace-relative path.
    pub fn path(&self, relative: &str) -> PathBuf {
        self.root.join(relative)
    }
}

/// Entries of a JSON object sorted by key, independent of whether
/// `serde_json`'s `preserve_order` feature is enabled somewhere in the build.
pub(crate) fn sorted(
    map: &serde_json::Map<String, serde_json::Value>,
) -> Vec<(&String, &serde_json::Value)> {
    let mut entries: Vec<_> = map.iter().collect();
    entries.sort_by(|a, b| a.0.cmp(b.0));
    entries
}

//! How the suite is run: sizes, the scenarios chosen, the binaries it starts and where.

use std::path::PathBuf;

use super::scenarios::{Scenario, Sizes};

/// How to run the suite.
#[derive(Debug, Clone)]
pub struct SuiteOptions {
    /// Sizes and repetitions.
    pub sizes: Sizes,
    /// Whether these are the `--quick` sizes.
    pub quick: bool,
    /// The scenarios to run, in table order (empty: all).
    pub only: Vec<Scenario>,
    /// The `sa360-video-fakes` binary.
    pub fake_bin: PathBuf,
    /// The `bench-runner` binary that runs the samples.
    pub runner_bin: PathBuf,
    /// The `xtask` binary timed by `generate` (`None`: that row is skipped).
    pub xtask_bin: Option<PathBuf>,
    /// The workspace whose specs `generate` copies.
    pub workspace: PathBuf,
    /// Where the fakes' logs go.
    pub work_dir: PathBuf,
}

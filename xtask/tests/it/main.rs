//! The xtask integration tests, one binary with a module per area.

mod cli_diff;
mod diff_ground_truth;
mod oasdiff_corpus;

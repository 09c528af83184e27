//! apictl's integration tests, one binary with a module per area (one link instead of one per file).
//! Each test runs the real `apictl` binary (`CARGO_BIN_EXE_apictl`) as a child process.
//! `ads_limits.rs` keeps a binary of its own: it measures its children's peak memory, which tests
//! running beside it in this process would raise (see its top).

#[path = "../common/mod.rs"]
mod common;

mod ads;
/// Uploads at scale, reasons in words, a read-only input directory (issue 50).
mod ads_operator;
mod ads_report;
mod ads_resume;
mod ads_verdicts;
mod auth;
/// Exit statuses, output conventions, completions, manual page (issue 37).
mod conventions;
/// Credential files and URLs apictl did not write (issue 48).
mod credential_files;
/// Every `apictl` command the documents name exists (issue 38).
mod docs_commands;
mod help;
/// `apictl man --all`, `apictl config list`, the lockout store in the config file (issue 50).
mod man_and_config;
/// Every README console example against the sandbox (issue 50).
mod readme_examples;
mod sandbox;
mod tour;
mod video;
mod video_lockout;

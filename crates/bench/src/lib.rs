//! `cargo xtask bench`: the SDK against plain baselines, scenario by
//! scenario, in one run, with ratios and targets.
//!
//! - [`scenarios`]: the client side of each scenario, baseline and SDK
//!   (what is timed).
//! - [`logins`]: the login scenarios (the `logins` row runs both sides in one
//!   process, in alternating blocks).
//! - [`reporting`]: the Reporting API scenarios (a conversion report against
//!   a plain loop over the same pages).
//! - [`search`]: reports of any resource (`search`) decoded into a caller's struct against the
//!   generated client's loop.
//! - [`sample`]: one timed run of one variant; the `bench-runner sample`
//!   subcommand runs one per process.
//! - [`suite`]: the whole benchmark (`bench-runner suite`, started by
//!   `cargo xtask bench`): fakes as child processes, alternating samples,
//!   medians, ratios, the markdown table and the JSON report.
//! - [`fake`]: the `sa360-video-fakes` binary as a child process.
//! - [`stats`]: medians and number formatting.
//!
//! `crates/bench/README.md` says what each scenario compares and holds the
//! latest table.

#![warn(missing_docs)]

pub mod fake;
pub mod logins;
pub mod reporting;
pub mod sample;
pub mod scenarios;
pub mod search;
pub mod stats;
pub mod suite;

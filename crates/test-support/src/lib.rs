//! Test-only helpers shared by the workspace's test suites.
//!
//! - [`TraceCapture`]: what a test traced, captured deterministically whatever other tests of the same
//!   binary do at the same time (see [`trace`] for why `set_default` per test is not enough).
//! - [`ClosedPort`]: a loopback port that refuses connections for as long as the test needs it.
//! - [`HostileServer`]: an HTTP server whose every answer is hostile (10 GiB, 1 byte/s, HTML,
//!   empty), for the facade's and the CLI's limit tests.
//! - [`run_measured`]: runs a child process and reports its own peak resident set.

pub mod hostile;
pub mod net;
pub mod process;
pub mod trace;

pub use hostile::{Answer, HostileServer};
pub use net::ClosedPort;
pub use process::{Measured, run_measured};
pub use trace::TraceCapture;

#[doc(hidden)]
pub use ctor as __ctor;

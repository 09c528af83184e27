//! Test-only helpers shared by the workspace's test suites.
//!
//! - [`TraceCapture`]: what a test traced, captured deterministically whatever other tests of the same
//!   binary do at the same time (see [`trace`] for why `set_default` per test is not enough).
//! - [`ClosedPort`]: a loopback port that refuses connections for as long as the test needs it.

pub mod net;
pub mod trace;

pub use net::ClosedPort;
pub use trace::TraceCapture;

#[doc(hidden)]
pub use ctor as __ctor;

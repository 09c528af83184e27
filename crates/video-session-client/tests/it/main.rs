//! The video-session-client integration tests, one binary with a module per area.

// One trace capture for the whole binary (the hooks tests read what a request traced).
test_support::install_trace_capture!();

mod hooks;
mod tls;

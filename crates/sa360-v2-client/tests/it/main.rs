//! The sa360-v2-client integration tests, one binary with a module per area.
//! `tls_without_provider.rs` stays a binary of its own: it needs a process in which nothing of ours
//! ran before it builds a reqwest client, and every test here builds our clients.

// One trace capture for the whole binary (the hooks tests read what a request traced).
test_support::install_trace_capture!();

mod hooks;
mod tls;
mod wire;

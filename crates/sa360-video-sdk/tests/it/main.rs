//! The SDK's integration tests, one binary with a module per area (one link instead of one per
//! file). Two suites keep a binary of their own because they measure their own process's memory,
//! which tests running beside them would inflate: `search_ads_hostile.rs` and
//! `search_ads_id_mapping_memory.rs`.

// One trace capture for the whole binary (see crates/test-support/src/trace.rs).
test_support::install_trace_capture!();

mod local_server;
mod public_api;
mod search_ads_auth;
mod search_ads_credentials;
mod search_ads_deadline;
mod search_ads_id_mapping;
mod search_ads_id_mapping_resume;
mod search_ads_outcomes;
mod search_ads_read;
mod search_ads_report_during;
mod search_ads_reporting;
mod search_ads_reporting_wire;
mod search_ads_search;
mod search_ads_stream;
mod search_ads_support;
mod search_ads_wire;
mod search_ads_write;
mod video_session_default_store;
mod video_session_errors;
mod video_session_fake;
mod video_session_late_processing;
mod video_session_properties;
mod video_session_redirect;
mod video_session_redis;
mod video_session_redis_losses;
mod video_session_redis_topologies;
mod video_session_secrets;
mod video_session_support;
mod video_session_wire;

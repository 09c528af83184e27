//! The sa360-video-fakes integration tests, one binary with a module per area (one link instead of
//! one per file). `id_mapping_memory.rs` is the one test kept in a binary of its own: it measures
//! the whole process's resident memory, which other tests running beside it would inflate.

#[path = "../common/mod.rs"]
mod common;

mod binary;
mod conformance;
mod faults;
mod google_auth;
mod google_behaviour;
mod query_corpus;
mod report_entities;
mod report_resources;
mod report_scale;
mod reporting;
mod search_ads;
mod search_stream;
mod video_session;

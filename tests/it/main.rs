//! The workspace-level integration tests, one binary with a module per area.

// Helpers the spec-against-reference tests share.
mod discovery;

/// `cargo xtask check` catches drift; `generate` is deterministic.
mod codegen;
/// `cargo xtask diff` on fixture pairs (fixtures/diff/): text and Markdown report snapshots, exit
/// status per class of change.
mod diff_fixtures;
/// `cargo xtask diff` between two real commits of a temporary clone.
mod diff_git;
/// ARCHITECTURE.md, CONTRIBUTING.md and the READMEs name only files, modules and commands that
/// exist; the README lists the crates the examples need (issue 38).
mod docs_match_code;
/// The types, cargo features and credential kinds the docs name exist; the credential file types
/// the SDK's docs list are the ones it reads (issue 46).
mod docs_name_items;
/// Google's insert and update how-to request shapes against the search ads fake, every answer
/// checked against the discovery document (issue 15).
mod google_conformance;
/// The release workflow publishes every published crate after the crates of ours it depends on,
/// dev-dependencies included (issue 37).
mod release_order;
/// specs/search-ads.yaml agrees with Google's discovery document (a copy in fixtures/reference/):
/// every field of the covered schemas, every parameter of the covered methods, with the same
/// name, JSON type and format.
mod search_ads_discovery;
/// specs/search-ads-reporting.yaml agrees with Google's v0 discovery document (a copy in
/// crates/sa360-video-fakes/data/, which the fake reads): every field of the covered schemas, every
/// parameter of the covered methods, the OAuth scope and the server.
mod search_ads_reporting_discovery;
/// The generated search-ads types carry int64 values as strings.
mod search_ads_types;
/// The repository points at nothing outside itself: no path of one machine or beside the
/// checkout, every relative Markdown link inside and existing; no hand-written Rust file over
/// 1000 lines (issue 38).
mod self_contained;
/// Snapshot per spec of its operation inventory (it/snapshots/).
mod spec_inventory;
/// specs/video-session.yaml has every field of the seed's tables with its type, format,
/// nullability and length limit.
mod video_session_seed;

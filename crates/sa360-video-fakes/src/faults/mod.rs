//! Fault injection: latency, error statuses, dropped connections and truncated downloads.
//!
//! Each fake owns one [`Faults`] configuration that tests can replace at run time. Every request draws
//! from one seeded random generator, so a run with the same seed and the same request order injects the
//! same faults. Faults never change the ledger's truth: each injected fault is recorded as a
//! [`FaultRecord`] whose `processed` flag says whether the request's handler ran (and so whether an
//! insert stored its conversions or a login counted its failure).
//!
//! One file a job: `config.rs` (what tests set), `injector.rs` (the per-request decision),
//! `middleware.rs` (applying it), `cut_stream.rs` (a body cut short).

mod config;
mod cut_stream;
mod injector;
mod middleware;

pub use self::config::{DetailsCut, FaultKind, FaultRecord, Faults, Truncation};
pub(crate) use self::cut_stream::CutStream;
pub(crate) use self::injector::{
    CsvTruncation, CsvTruncationApplied, DetailsTruncation, DetailsTruncationApplied, ErrorStyle,
    FaultInjector, RequestSeq,
};
pub(crate) use self::middleware::{FaultLayer, apply_faults};

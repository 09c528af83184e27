//! Writing conversions: [`WriteRequest`] (what [`SearchAds::insert`] and
//! [`SearchAds::update`] return), local checks, batching, bounded
//! concurrency, retries and one [`Outcome`] per conversion.
//!
//! | file | job |
//! |---|---|
//! | `options.rs` | [`WriteOptions`], [`WriteProgress`] |
//! | `report.rs` | [`Outcome`], [`WriteBatch`], [`WriteReport`] |
//! | `validate.rs` | the checks of one conversion (SA-20, SA-22) |
//! | `dedup.rs` | the same (owner, id, timestamp) twice, in bounded memory |
//! | `batching.rs` | rows into batches as they are read |
//! | `check.rs` | [`InputCheck`]: the same checks one row at a time, nothing sent |
//! | `mapping.rs` | a batch's answer to outcomes (SA-9) |
//! | `run.rs` | the attempts of one batch |
//! | `stream.rs` | [`WriteStream`]: ordered, bounded |
//! | `request.rs` | [`WriteRequest`]: the builder, the HTTP request |
//!
//! # Input, one row at a time
//!
//! The input is any iterator or [`Stream`](futures::Stream) of conversions
//! (owned, or borrowed and cloned one batch at a time). Each conversion is
//! checked as it is read; one that fails (a missing member, a control
//! character, an over-long id, the same (owner, conversion id, timestamp)
//! earlier in the input) is not sent and gets
//! [`Outcome::Invalid`] with an [`Error::Validation`] naming the field and
//! its input index, in its place in the order. The rest is sent. Use
//! [`SearchAds::insert_problems`] to check an input before sending any of it.
//!
//! # Why a repeated insert is safe
//!
//! An insert whose answer was lost (timeout, reset connection, 5xx) may or
//! may not have been stored. The batch is sent again; the server refuses every
//! (owner, conversion id, timestamp) it already holds with `0x0000011A`
//! (SA-15), so nothing is stored twice. A `0x0000011A` for a conversion that an
//! earlier attempt of the same batch may have delivered is therefore reported
//! as [`Outcome::StoredEarlier`], not as a rejection. The same (owner, id,
//! timestamp) twice in the input is refused before sending, so a `0x0000011A`
//! can never hide a second, different conversion of the same call. One id with
//! several timestamps is allowed (they are different conversions), but never in
//! one batch: the server refuses an id repeated within a request
//! (`0x0000011F`), so a new batch starts instead.
//!
//! # Reruns
//!
//! A rerun of an input that was partly sent (an interrupted upload, failures
//! that may have been stored) turns on
//! [`resubmission`](WriteRequest::resubmission): a `0x0000011A` is then
//! [`Outcome::AlreadyStored`], a success. Without it, a `0x0000011A` that no
//! attempt of this call explains is a rejection.
//!
//! [`SearchAds::insert`]: super::SearchAds::insert
//! [`SearchAds::update`]: super::SearchAds::update
//! [`SearchAds::insert_problems`]: super::SearchAds::insert_problems
//! [`Error::Validation`]: super::Error::Validation

mod batching;
mod check;
mod dedup;
mod mapping;
mod options;
mod report;
mod request;
mod run;
mod stream;
mod validate;

pub use check::InputCheck;
pub use options::{
    DEFAULT_BATCH_SIZE, MAX_BATCH_SIZE, MAX_CONCURRENCY, WriteOptions, WriteProgress,
    WriteProgressFn,
};
pub use report::{Outcome, WriteBatch, WriteReport};
pub use request::WriteRequest;
pub use stream::{WriteStream, WriteStreamStats};
pub use validate::{MAX_ID_CHARS, MAX_TEXT_CHARS};

pub(crate) use batching::input_problems;
pub(crate) use request::{from_iter, from_stream};

/// Insert or update: what is required and whether a duplicate counts as stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum WriteKind {
    Insert,
    Update,
}

impl WriteKind {
    pub(crate) fn operation(self) -> &'static str {
        match self {
            WriteKind::Insert => "conversion.insert",
            WriteKind::Update => "conversion.update",
        }
    }

    pub(crate) fn verb(self) -> &'static str {
        match self {
            WriteKind::Insert => "insert",
            WriteKind::Update => "update",
        }
    }
}

#[cfg(test)]
mod tests;

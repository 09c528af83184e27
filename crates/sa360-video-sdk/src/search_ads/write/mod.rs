//! Writing conversions: [`WriteRequest`] (what [`SearchAdsClient::insert`] and
//! [`SearchAdsClient::update`] return), local checks, batching, bounded
//! concurrency, retries and one [`Outcome`] per conversion.
//!
//! | file | job |
//! |---|---|
//! | `options.rs` | [`WriteOptions`], [`WriteProgress`] |
//! | `report.rs` | [`Outcome`], [`WriteBatch`], [`WriteReport`] |
//! | `validate.rs` | the checks of one conversion (SA-20, SA-22) |
//! | `dedup.rs` | the same (owner, id, timestamp) twice, in bounded memory |
//! | `batching.rs` | rows into batches as they are read |
//! | `body.rs` | a batch's conversions in their request shape, built once |
//! | `check.rs` | [`InputCheck`]: the same checks one row at a time, nothing sent |
//! | `mapping.rs` | a batch's answer to outcomes (SA-9) |
//! | `run.rs` | the attempts of one batch |
//! | `send.rs` | one attempt as one HTTP request; the 200 echo checked, not decoded |
//! | `stream.rs` | [`WriteStream`]: ordered, bounded |
//! | `request.rs` | [`WriteRequest`]: the builder, the HTTP request |
//! | `resume.rs` | [`Resume`]: what earlier runs of the same input settled and sent |
//! | `journal/` | [`WriteJournal`]: the file that makes a write resumable, exactly once |
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
//! [`SearchAdsClient::insert_problems`] to check an input before sending any of it.
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
//! The simplest: give the request a [`WriteJournal`]
//! ([`journal`](WriteRequest::journal)) and run the same input again after
//! an interruption; the journal says what was settled and what may have been
//! sent. Finer tools, for applications that keep their own records:
//! [`resume`](WriteRequest::resume) and
//! [`before_send`](WriteRequest::before_send).
//!
//! A rerun of an input that was partly sent (an interrupted upload, failures
//! that may have been stored) turns on
//! [`resubmission`](WriteRequest::resubmission): a `0x0000011A` is then
//! [`Outcome::AlreadyStored`], a success. Without it, a `0x0000011A` that no
//! attempt of this call explains is a rejection.
//!
//! [`SearchAdsClient::insert`]: super::SearchAdsClient::insert
//! [`SearchAdsClient::update`]: super::SearchAdsClient::update
//! [`SearchAdsClient::insert_problems`]: super::SearchAdsClient::insert_problems
//! [`Error::Validation`]: super::Error::Validation

mod batching;
mod body;
mod check;
mod dedup;
mod journal;
mod kind;
mod mapping;
pub(crate) mod options;
mod report;
mod request;
mod resume;
mod run;
mod send;
mod stream;
mod validate;

pub use check::InputCheck;
pub use journal::{JournalState, MAX_JOURNAL_TEXT, WriteJournal};
pub use options::{
    DEFAULT_BATCH_SIZE, MAX_BATCH_SIZE, MAX_CONCURRENCY, WriteOptions, WriteProgress,
    WriteProgressFn,
};
pub use report::{Outcome, WriteBatch, WriteReport};
pub use request::WriteRequest;
pub use resume::Resume;
pub use run::BeforeSendFn;
pub use stream::{WriteStream, WriteStreamStats};
pub use validate::{MAX_ID_CHARS, MAX_TEXT_CHARS};

pub(crate) use batching::input_problems;
use kind::WriteKind;
pub(crate) use request::{from_iter, from_stream};

use super::client::SearchAdsClient;
use super::conversion::Conversion;
use super::error::Error;

/// The entry points of a write.
impl SearchAdsClient {
    /// An insert of `conversions`: any iterator of [`Conversion`]s or
    /// `&Conversion`s (a `Vec`, a slice, a generator). Configure it and end
    /// with [`send`](WriteRequest::send) (one [`WriteReport`]) or
    /// [`stream`](WriteRequest::stream) (a [`WriteBatch`] at a time, in input
    /// order, bounded memory). Nothing is read or sent before that.
    ///
    /// Each conversion gets exactly one [`Outcome`]. Conversions that an
    /// insert refuses locally (see [`insert_problems`](Self::insert_problems))
    /// are not sent and get [`Outcome::Invalid`]; the others are sent in
    /// batches with the client's [`WriteOptions`] unless
    /// [`options`](WriteRequest::options) says otherwise.
    ///
    /// ```no_run
    /// use sa360_video_sdk::search_ads::{Conversion, SearchAdsClient};
    /// # async fn run(client: SearchAdsClient, conversions: Vec<Conversion>) -> Result<(), sa360_video_sdk::search_ads::Error> {
    /// let report = client.insert(&conversions).send().await?;
    /// assert_eq!(report.len(), conversions.len());
    /// # Ok(()) }
    /// ```
    pub fn insert<'a, I>(&self, conversions: I) -> WriteRequest<'a>
    where
        I: IntoIterator,
        I::Item: Into<Conversion> + 'a,
        I::IntoIter: Send + 'a,
    {
        let (input, total) = from_iter(conversions);
        WriteRequest::new(self, WriteKind::Insert, input, total)
    }

    /// An insert of a [`Stream`](futures::Stream) of conversions (rows parsed
    /// from a file as it is read, say). Like [`insert`](Self::insert); the
    /// stream is polled only as far as the batches in flight need.
    pub fn insert_stream<'a, S>(&self, conversions: S) -> WriteRequest<'a>
    where
        S: futures::Stream + Send + 'a,
        S::Item: Into<Conversion> + 'a,
    {
        WriteRequest::new(self, WriteKind::Insert, from_stream(conversions), None)
    }

    /// An update of `conversions` (each identified by its owner,
    /// `conversionId` and `conversionTimestamp`, the latter two required).
    /// Like [`insert`](Self::insert).
    pub fn update<'a, I>(&self, conversions: I) -> WriteRequest<'a>
    where
        I: IntoIterator,
        I::Item: Into<Conversion> + 'a,
        I::IntoIter: Send + 'a,
    {
        let (input, total) = from_iter(conversions);
        WriteRequest::new(self, WriteKind::Update, input, total)
    }

    /// An update of a [`Stream`](futures::Stream) of conversions. Like
    /// [`insert_stream`](Self::insert_stream).
    pub fn update_stream<'a, S>(&self, conversions: S) -> WriteRequest<'a>
    where
        S: futures::Stream + Send + 'a,
        S::Item: Into<Conversion> + 'a,
    {
        WriteRequest::new(self, WriteKind::Update, from_stream(conversions), None)
    }

    /// The conversions an [`insert`](Self::insert) would refuse before sending
    /// (and report as [`Outcome::Invalid`]), each as [`Error::Validation`]
    /// naming the field and the input index, in input order: a missing
    /// `conversionId`, `conversionTimestamp` or `segmentationType`, a
    /// timestamp before 1970, a value outside a set the service closes, no
    /// owner (agency and advertiser, customer, or click ID), a control
    /// character or an over-long id or text (SA-22), the same (owner,
    /// conversion id, timestamp) earlier in the input (SA-15, SA-20). Empty
    /// when every conversion would be sent. Nothing is sent.
    ///
    /// ```
    /// use chrono::{TimeZone, Utc};
    /// use sa360_video_sdk::search_ads::{Conversion, Error, SearchAdsClient};
    ///
    /// let t = Utc.with_ymd_and_hms(2025, 3, 1, 12, 0, 0).unwrap();
    /// let clicked = Conversion {
    ///     click_id: Some("Cj0KCQiA-example".into()),
    ///     ..Conversion::new("order-1", t)
    /// };
    /// let input = [clicked.clone(), clicked];
    /// let problems = SearchAdsClient::insert_problems(&input);
    /// assert!(matches!(
    ///     &problems[..],
    ///     [Error::Validation { field, index: Some(1), .. }] if field == "conversionId"
    /// ));
    /// ```
    pub fn insert_problems<'a>(
        conversions: impl IntoIterator<Item = &'a Conversion>,
    ) -> Vec<Error> {
        input_problems(WriteKind::Insert, conversions)
    }

    /// The conversions an [`update`](Self::update) would refuse before sending.
    /// Like [`insert_problems`](Self::insert_problems), except that
    /// `segmentationType` is not required.
    pub fn update_problems<'a>(
        conversions: impl IntoIterator<Item = &'a Conversion>,
    ) -> Vec<Error> {
        input_problems(WriteKind::Update, conversions)
    }
}

#[cfg(test)]
mod journal_tests;
#[cfg(test)]
mod tests;

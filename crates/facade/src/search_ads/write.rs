//! Writing conversions: validation, batching, bounded concurrency, retries and
//! the per-conversion report.
//!
//! # Why a repeated insert is safe
//!
//! An insert whose answer was lost (timeout, reset connection, 5xx) may or may
//! not have been stored. The batch is sent again; the server refuses every
//! (owner, conversion id, timestamp) it already holds with `0x0000011A`
//! (SA-15), so nothing is stored twice. A `0x0000011A` for a conversion that an
//! earlier attempt of the same batch may have delivered is therefore reported
//! as [`Outcome::StoredEarlier`], not as a rejection. The same (owner, id,
//! timestamp) twice in the input is refused before sending, so a `0x0000011A`
//! can never hide a second, different conversion of the same call. One id with
//! several timestamps is allowed (they are different conversions), but never in
//! one batch: the server refuses an id repeated within a request
//! (`0x0000011F`), so [`batch_ranges`] starts a new batch instead.

use std::collections::HashMap;
use std::future::Future;
use std::ops::Range;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use futures::stream::{self, StreamExt};

use super::conversion::Conversion;
use super::error::{ConversionIssue, Error, counted};
use super::retry::{RetryPolicy, traced_attempt};

/// Default conversions per request (SA-10: the size of Google's own sample).
pub const DEFAULT_BATCH_SIZE: usize = 100;

/// Largest batch the facade sends (SA-10).
pub const MAX_BATCH_SIZE: usize = 1000;

/// Batching of [`insert`](super::SearchAds::insert) and [`update`](super::SearchAds::update).
///
/// ```
/// use facade::search_ads::WriteOptions;
/// let options = WriteOptions { batch_size: 500, concurrency: 8 };
/// assert_eq!(WriteOptions::default(), WriteOptions { batch_size: 100, concurrency: 4 });
/// # let _ = options;
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WriteOptions {
    /// Conversions per request, 1 ..= 1000. Default 100.
    pub batch_size: usize,
    /// Requests in flight at once, 1 ..= 64. Default 4.
    pub concurrency: usize,
}

impl Default for WriteOptions {
    fn default() -> Self {
        Self {
            batch_size: DEFAULT_BATCH_SIZE,
            concurrency: 4,
        }
    }
}

/// Most requests in flight at once for one insert or update.
pub const MAX_CONCURRENCY: usize = 64;

impl WriteOptions {
    /// Checks the options: `batch_size` 1 to [`MAX_BATCH_SIZE`], `concurrency`
    /// 1 to [`MAX_CONCURRENCY`]. Inserts and updates call it first; a tool that
    /// takes the options from its user can call it before reading any input.
    pub fn validate(&self) -> Result<(), Error> {
        if !(1..=MAX_BATCH_SIZE).contains(&self.batch_size) {
            return Err(Error::validation(
                "batch_size",
                None,
                format!("is {}, must be 1 to {MAX_BATCH_SIZE}", self.batch_size),
            ));
        }
        if !(1..=MAX_CONCURRENCY).contains(&self.concurrency) {
            return Err(Error::validation(
                "concurrency",
                None,
                format!("is {}, must be 1 to {MAX_CONCURRENCY}", self.concurrency),
            ));
        }
        Ok(())
    }
}

/// How far an insert or update has come, reported after each batch finished
/// (see [`SearchAds::insert_with_progress`](super::SearchAds::insert_with_progress)).
///
/// A batch finishes when it has its outcomes: answered, failed for good after
/// its retries, or not sent after another batch failed with an error that
/// would fail every batch. The counts only grow; the last report has
/// `conversions_done == conversions_total` and `batches_done == batches_total`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct WriteProgress {
    /// Conversions of the finished batches, whatever their outcome.
    pub conversions_done: usize,
    /// Conversions of the call.
    pub conversions_total: usize,
    /// Batches finished.
    pub batches_done: usize,
    /// Batches the conversions were split into.
    pub batches_total: usize,
}

/// Receives [`WriteProgress`] reports. It is called on the task that awaits
/// the insert or update, once per finished batch and never concurrently, so it
/// should return quickly (move a progress bar, send on a channel).
pub type WriteProgressFn = Arc<dyn Fn(WriteProgress) + Send + Sync>;

/// What happened to one input conversion.
#[derive(Debug, Clone)]
pub enum Outcome {
    /// The server stored (insert) or applied (update) it.
    Stored,
    /// Insert only: an earlier attempt whose answer was lost stored it; the
    /// retry was answered `0x0000011A` (conversion id already used).
    StoredEarlier,
    /// The server refused it; the issue's index is the index in the input.
    Rejected(ConversionIssue),
    /// No definite answer: the batch failed for good (after retries for
    /// transient failures), or was not sent because another batch failed with
    /// an error that would fail every batch (authentication, permission).
    Failed {
        /// The last error.
        error: Error,
        /// Requests made for its batch (0: not sent).
        attempts: u32,
        /// True when a request that carried it may have reached the server
        /// without an answer: it may be stored. Inserting it again is safe
        /// (it would come back as `0x0000011A` if it was).
        may_have_been_stored: bool,
    },
}

impl Outcome {
    /// True for [`Outcome::Stored`] and [`Outcome::StoredEarlier`].
    pub fn is_stored(&self) -> bool {
        matches!(self, Outcome::Stored | Outcome::StoredEarlier)
    }
}

/// One outcome per input conversion, in input order.
#[derive(Debug, Clone)]
pub struct WriteReport {
    outcomes: Vec<Outcome>,
    requests: usize,
    batches: usize,
}

impl WriteReport {
    /// The outcomes; `outcomes()[i]` belongs to input conversion `i`.
    pub fn outcomes(&self) -> &[Outcome] {
        &self.outcomes
    }

    /// Consumes the report into its outcomes.
    pub fn into_outcomes(self) -> Vec<Outcome> {
        self.outcomes
    }

    /// Number of input conversions (= number of outcomes).
    pub fn len(&self) -> usize {
        self.outcomes.len()
    }

    /// True for an empty report (never returned by the client: empty input is
    /// refused).
    pub fn is_empty(&self) -> bool {
        self.outcomes.is_empty()
    }

    /// Conversions stored, [`Outcome::StoredEarlier`] included.
    pub fn stored(&self) -> usize {
        self.outcomes.iter().filter(|o| o.is_stored()).count()
    }

    /// Conversions stored by an earlier attempt whose answer was lost.
    pub fn stored_earlier(&self) -> usize {
        self.outcomes
            .iter()
            .filter(|o| matches!(o, Outcome::StoredEarlier))
            .count()
    }

    /// Conversions the server refused.
    pub fn rejected(&self) -> usize {
        self.outcomes
            .iter()
            .filter(|o| matches!(o, Outcome::Rejected(_)))
            .count()
    }

    /// Conversions without a definite answer.
    pub fn failed(&self) -> usize {
        self.outcomes
            .iter()
            .filter(|o| matches!(o, Outcome::Failed { .. }))
            .count()
    }

    /// True when every conversion was stored.
    pub fn all_stored(&self) -> bool {
        self.outcomes.iter().all(Outcome::is_stored)
    }

    /// The rejections, with their input indices.
    pub fn rejections(&self) -> impl Iterator<Item = (usize, &ConversionIssue)> {
        self.outcomes
            .iter()
            .enumerate()
            .filter_map(|(i, o)| match o {
                Outcome::Rejected(issue) => Some((i, issue)),
                _ => None,
            })
    }

    /// The failures, with their input indices.
    pub fn failures(&self) -> impl Iterator<Item = (usize, &Error)> {
        self.outcomes
            .iter()
            .enumerate()
            .filter_map(|(i, o)| match o {
                Outcome::Failed { error, .. } => Some((i, error)),
                _ => None,
            })
    }

    /// HTTP requests made, retries included.
    pub fn requests(&self) -> usize {
        self.requests
    }

    /// Batches the input was split into.
    pub fn batches(&self) -> usize {
        self.batches
    }
}

impl std::fmt::Display for WriteReport {
    /// `3 conversions: 2 stored (1 by an earlier attempt whose answer was
    /// lost), 1 rejected, 0 failed; 1 batch, 2 requests`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}: {} stored",
            counted(self.len(), "conversion", "conversions"),
            self.stored()
        )?;
        if self.stored_earlier() > 0 {
            write!(
                f,
                " ({} by an earlier attempt whose answer was lost)",
                self.stored_earlier()
            )?;
        }
        write!(
            f,
            ", {} rejected, {} failed; {}, {}",
            self.rejected(),
            self.failed(),
            counted(self.batches, "batch", "batches"),
            counted(self.requests, "request", "requests")
        )
    }
}

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

    fn verb(self) -> &'static str {
        match self {
            WriteKind::Insert => "insert",
            WriteKind::Update => "update",
        }
    }
}

/// Checks the whole input before anything is sent (SA-7, SA-15): the first
/// problem [`input_problems`] finds, or an empty input.
pub(crate) fn validate(kind: WriteKind, conversions: &[Conversion]) -> Result<(), Error> {
    if conversions.is_empty() {
        return Err(Error::validation(
            "conversions",
            None,
            format!("is empty: give at least one conversion to {}", kind.verb()),
        ));
    }
    match input_problems(kind, conversions).into_iter().next() {
        Some(problem) => Err(problem),
        None => Ok(()),
    }
}

/// Every conversion of `conversions` that an insert or update would refuse
/// before sending, as [`Error::Validation`] with the field and the input index,
/// in input order (SA-7, SA-15).
///
/// [`SearchAds::insert`](super::SearchAds::insert) and
/// [`update`](super::SearchAds::update) refuse the whole input when this is not
/// empty. A tool that prefers to send the rest (a file upload, say) removes the
/// conversions named here and sends what is left: what is left passes.
pub(crate) fn input_problems<'a>(
    kind: WriteKind,
    conversions: impl IntoIterator<Item = &'a Conversion>,
) -> Vec<Error> {
    let verb = kind.verb();
    let mut problems = Vec::new();
    // SA-15: (owner, id, timestamp) is the identity; a conversion without an
    // advertiser or customer (click-ID attribution, SA-17) may belong to any.
    let mut seen: HashMap<(&str, i64), Vec<(OwnerKey<'_>, usize)>> = HashMap::new();
    for (i, c) in conversions.into_iter().enumerate() {
        let id = match c.conversion_id.as_deref().map(str::trim) {
            Some(id) if !id.is_empty() => id,
            _ => {
                problems.push(Error::validation(
                    "conversionId",
                    Some(i),
                    format!("is required for {verb}: set Conversion::conversion_id"),
                ));
                continue;
            }
        };
        let timestamp = match c.conversion_timestamp {
            None => {
                problems.push(Error::validation(
                    "conversionTimestamp",
                    Some(i),
                    format!("is required for {verb}: set Conversion::conversion_timestamp"),
                ));
                continue;
            }
            Some(t) if t.timestamp_millis() < 0 => {
                problems.push(Error::validation(
                    "conversionTimestamp",
                    Some(i),
                    format!("is {t}, before 1970-01-01: the API takes epoch milliseconds >= 0"),
                ));
                continue;
            }
            Some(t) => t.timestamp_millis(),
        };
        if kind == WriteKind::Insert && c.segmentation_type.is_none() {
            problems.push(Error::validation(
                "segmentationType",
                Some(i),
                "is required for insert: set Conversion::segmentation_type (FLOODLIGHT)",
            ));
            continue;
        }
        if let Some((field, reason)) = request_shape_problem(c) {
            problems.push(Error::validation(field, Some(i), reason));
            continue;
        }
        let owner = OwnerKey::of(c);
        let same = seen.entry((id, timestamp)).or_default();
        if let Some(&(_, first)) = same.iter().find(|(other, _)| other.may_equal(&owner)) {
            problems.push(Error::validation(
                "conversionId",
                Some(i),
                format!(
                    "{id:?} with conversionTimestamp {timestamp} repeats the conversion at index \
                     {first}: an (advertiser, conversion id, timestamp) may appear once per call \
                     (the server would refuse the second as 0x0000011F or 0x0000011A)"
                ),
            ));
            continue;
        }
        same.push((owner, i));
    }
    problems
}

/// What the insert and update request schemas refuse besides the required
/// members (SA-20): a value outside a closed set, a malformed currency code, no
/// owner (an agency and advertiser, a customer, or a click, SA-17).
fn request_shape_problem(c: &Conversion) -> Option<(&'static str, String)> {
    use super::values::{Channel, Consent, ConversionState, ConversionType, SegmentationType};
    let closed = |field: &'static str, value: &str, allowed: &str| {
        (
            field,
            format!("is {value:?}: the service takes only {allowed}"),
        )
    };
    if let Some(SegmentationType::Other(v)) = &c.segmentation_type {
        return Some(closed("segmentationType", v, "FLOODLIGHT"));
    }
    if let Some(ConversionType::Other(v)) = &c.conversion_type {
        return Some(closed("type", v, "ACTION or TRANSACTION"));
    }
    if let Some(ConversionState::Other(v)) = &c.state {
        return Some(closed("state", v, "ACTIVE, REMOVED or DELETED"));
    }
    if let Some(Channel::Other(v)) = &c.channel {
        return Some(closed("channel", v, "local or online"));
    }
    if let Some(Consent::Other(v)) = &c.ad_user_data_consent {
        return Some(closed("adUserDataConsent", v, "UNKNOWN, GRANTED or DENIED"));
    }
    if let Some(code) = &c.currency_code
        && !(code.len() == 3 && code.bytes().all(|b| b.is_ascii_uppercase()))
    {
        return Some((
            "currencyCode",
            format!("is {code:?}: give an ISO 4217 code of three upper-case letters, e.g. USD"),
        ));
    }
    let owned = (c.agency_id.is_some() && c.advertiser_id.is_some())
        || c.customer_id.is_some()
        || c.click_id.is_some();
    if !owned {
        let field = if c.advertiser_id.is_some() {
            "agencyId"
        } else {
            "advertiserId"
        };
        return Some((
            field,
            "names no owner: set Conversion::agency_id and advertiser_id, customer_id, or \
             click_id (the service attributes a click-ID-only conversion from its click)"
                .to_owned(),
        ));
    }
    None
}

/// Who a conversion belongs to, as far as the input says (SA-15, SA-17).
#[derive(Debug, Clone, PartialEq, Eq)]
enum OwnerKey<'a> {
    Advertiser(i64),
    Customer(&'a str),
    /// Neither: attributed from its click by the server.
    Unknown,
}

impl<'a> OwnerKey<'a> {
    fn of(c: &'a Conversion) -> Self {
        match (&c.advertiser_id, &c.customer_id) {
            (Some(advertiser), _) => OwnerKey::Advertiser(advertiser.get()),
            (None, Some(customer)) => OwnerKey::Customer(customer.as_str()),
            (None, None) => OwnerKey::Unknown,
        }
    }

    /// Whether the server could take both for the same owner.
    fn may_equal(&self, other: &Self) -> bool {
        *self == OwnerKey::Unknown || *other == OwnerKey::Unknown || self == other
    }
}

/// Splits `ids` (the conversion ids of the input, in order) into batches of at
/// most `size`, starting a new batch early where an id would repeat within one
/// (the server refuses that with `0x0000011F`, SA-15). Every index is in exactly
/// one range, in order.
pub(crate) fn batch_ranges<'a>(
    ids: impl IntoIterator<Item = &'a str>,
    size: usize,
) -> Vec<Range<usize>> {
    let size = size.max(1);
    let mut ranges = Vec::new();
    let mut start = 0;
    let mut in_batch: std::collections::HashSet<&str> = std::collections::HashSet::new();
    let mut count = 0;
    for (i, id) in ids.into_iter().enumerate() {
        if i - start == size || in_batch.contains(id) {
            ranges.push(start..i);
            start = i;
            in_batch.clear();
        }
        in_batch.insert(id);
        count = i + 1;
    }
    if count > start {
        ranges.push(start..count);
    }
    ranges
}

/// Errors after which no other batch is started: they would fail every batch.
fn fails_every_batch(error: &Error) -> bool {
    match error {
        Error::Auth { .. } | Error::Config { .. } => true,
        Error::Api { status, .. } => (*status == 401 || *status == 403) && !error.is_transient(),
        _ => false,
    }
}

/// Sends `count` conversions in batches with `send(range, attempt)` and
/// assembles the report. `send` returns `Ok` when the whole batch was stored.
/// `progress` hears of every finished batch.
#[cfg(test)]
pub(crate) async fn run_batches<S, Fut>(
    kind: WriteKind,
    count: usize,
    options: WriteOptions,
    retry: &RetryPolicy,
    progress: Option<&(dyn Fn(WriteProgress) + Send + Sync)>,
    send: S,
) -> WriteReport
where
    S: Fn(Range<usize>, u32) -> Fut,
    Fut: Future<Output = Result<(), Error>>,
{
    let size = options.batch_size.max(1);
    let ranges: Vec<Range<usize>> = (0..count)
        .step_by(size)
        .map(|start| start..(start + size).min(count))
        .collect();
    run_batch_ranges(kind, count, ranges, options, retry, progress, send).await
}

/// [`run_batches`] with the batches given: `ranges` must cover `0..count`
/// exactly once, in order (as [`batch_ranges`] returns them).
pub(crate) async fn run_batch_ranges<S, Fut>(
    kind: WriteKind,
    count: usize,
    ranges: Vec<Range<usize>>,
    options: WriteOptions,
    retry: &RetryPolicy,
    progress: Option<&(dyn Fn(WriteProgress) + Send + Sync)>,
    send: S,
) -> WriteReport
where
    S: Fn(Range<usize>, u32) -> Fut,
    Fut: Future<Output = Result<(), Error>>,
{
    let batches = ranges.len();
    let abort: Arc<std::sync::Mutex<Option<Error>>> = Arc::default();
    let aborted = AtomicBool::new(false);
    let requests = AtomicUsize::new(0);
    let send = &send;
    let abort_ref = &abort;
    let aborted_ref = &aborted;
    let requests_ref = &requests;
    let mut done = WriteProgress {
        conversions_done: 0,
        conversions_total: count,
        batches_done: 0,
        batches_total: batches,
    };

    let results: Vec<(Range<usize>, Vec<Outcome>)> = stream::iter(ranges)
        .map(|range| async move {
            let outcomes = run_batch(
                kind,
                range.clone(),
                retry,
                send,
                abort_ref,
                aborted_ref,
                requests_ref,
            )
            .await;
            (range, outcomes)
        })
        .buffer_unordered(options.concurrency.max(1))
        .inspect(|(range, _)| {
            if let Some(report) = progress {
                done.conversions_done += range.len();
                done.batches_done += 1;
                report(done);
            }
        })
        .collect()
        .await;

    let mut slots: Vec<Option<Outcome>> = vec![None; count];
    for (range, outcomes) in results {
        for (slot, outcome) in slots[range].iter_mut().zip(outcomes) {
            *slot = Some(outcome);
        }
    }
    let outcomes = slots
        .into_iter()
        .map(|o| {
            // Every range is covered exactly once above; this is unreachable
            // but must not panic or drop a conversion.
            o.unwrap_or_else(|| Outcome::Failed {
                error: Error::unexpected(kind.operation(), None, "no outcome was recorded"),
                attempts: 0,
                may_have_been_stored: true,
            })
        })
        .collect();
    WriteReport {
        outcomes,
        requests: requests.load(Ordering::SeqCst),
        batches,
    }
}

async fn run_batch<S, Fut>(
    kind: WriteKind,
    range: Range<usize>,
    retry: &RetryPolicy,
    send: &S,
    abort: &std::sync::Mutex<Option<Error>>,
    aborted: &AtomicBool,
    requests: &AtomicUsize,
) -> Vec<Outcome>
where
    S: Fn(Range<usize>, u32) -> Fut,
    Fut: Future<Output = Result<(), Error>>,
{
    let len = range.len();
    let operation = kind.operation();
    // True once an attempt may have reached the server without an answer.
    let mut maybe_delivered = false;
    let mut attempt: u32 = 0;
    loop {
        if aborted.load(Ordering::SeqCst) && attempt == 0 {
            let cause = abort
                .lock()
                .ok()
                .and_then(|g| g.clone())
                .unwrap_or_else(|| Error::unexpected(operation, None, "aborted"));
            return vec![
                Outcome::Failed {
                    error: cause,
                    attempts: 0,
                    may_have_been_stored: false,
                };
                len
            ];
        }
        attempt += 1;
        requests.fetch_add(1, Ordering::SeqCst);
        let result = traced_attempt(operation, attempt, send(range.clone(), attempt)).await;
        let error = match result {
            Ok(()) => return vec![Outcome::Stored; len],
            Err(e) => e,
        };
        if let Some(outcomes) = per_conversion(kind, &range, &error, maybe_delivered, attempt) {
            return outcomes;
        }
        if let Some(wait) = retry.next_delay(attempt, &error) {
            maybe_delivered |= error.may_have_reached_server();
            tracing::warn!(
                operation,
                attempt,
                batch_start = range.start,
                batch_len = len,
                wait_ms = u64::try_from(wait.as_millis()).unwrap_or(u64::MAX),
                error = %error,
                "transient failure, sending the batch again"
            );
            tokio::time::sleep(wait).await;
            continue;
        }
        if fails_every_batch(&error) {
            if let Ok(mut slot) = abort.lock() {
                slot.get_or_insert_with(|| error.clone());
            }
            aborted.store(true, Ordering::SeqCst);
        }
        let may_have_been_stored = maybe_delivered || error.may_have_reached_server();
        return vec![
            Outcome::Failed {
                error,
                attempts: attempt,
                may_have_been_stored,
            };
            len
        ];
    }
}

/// A 400 whose details name conversions: the batch's answer (SA-9). `None`
/// when the error is not such an answer.
///
/// A conversion is [`Outcome::Stored`] only with evidence: a complete list of
/// details that does not name it. When the list arrived cut short or could
/// not be read whole, the conversions it does not name are
/// [`Outcome::Failed`] with `may_have_been_stored: true`. A `0x0000011A` is
/// [`Outcome::StoredEarlier`] only when an earlier attempt of this batch may
/// have been processed (`maybe_delivered`).
fn per_conversion(
    kind: WriteKind,
    range: &Range<usize>,
    error: &Error,
    maybe_delivered: bool,
    attempts: u32,
) -> Option<Vec<Outcome>> {
    let Error::Api {
        status: 400,
        details,
        details_complete,
        ..
    } = error
    else {
        return None;
    };
    if details.is_empty() && *details_complete {
        return None;
    }
    let len = range.len();
    let mut outcomes: Vec<Option<Outcome>> = vec![None; len];
    let mut batch_wide: Option<&ConversionIssue> = None;
    for issue in details {
        match issue.index {
            Some(i) if i < len => {
                outcomes[i] = Some(
                    if kind == WriteKind::Insert && maybe_delivered && issue.is_duplicate() {
                        Outcome::StoredEarlier
                    } else {
                        Outcome::Rejected(ConversionIssue {
                            index: Some(range.start + i),
                            ..issue.clone()
                        })
                    },
                );
            }
            Some(outside) => {
                // An index outside the batch: the answer cannot be mapped to
                // conversions, so nothing in it is definite.
                return Some(vec![
                    Outcome::Failed {
                        error: Error::unexpected(
                            kind.operation(),
                            Some(400),
                            format!(
                                "a detail names conversion index {outside} in a batch of {}: \
                                 {issue}",
                                counted(len, "conversion", "conversions")
                            ),
                        ),
                        attempts,
                        may_have_been_stored: true,
                    };
                    len
                ]);
            }
            None => batch_wide = batch_wide.or(Some(issue)),
        }
    }
    let unnamed = |i: usize| match batch_wide {
        // The list is cut short: a conversion it does not name may have
        // been stored or refused in the part that was lost.
        _ if !details_complete => Outcome::Failed {
            error: error.clone(),
            attempts,
            may_have_been_stored: true,
        },
        // A batch-wide detail means the batch stored nothing (SA-9).
        Some(issue) => Outcome::Rejected(ConversionIssue {
            index: Some(range.start + i),
            ..issue.clone()
        }),
        None => Outcome::Stored,
    };
    Some(
        outcomes
            .into_iter()
            .enumerate()
            .map(|(i, o)| o.unwrap_or_else(|| unnamed(i)))
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;
    use std::time::Duration;

    use chrono::DateTime;

    use super::*;
    use crate::search_ads::error::IssueCode;

    fn fast() -> RetryPolicy {
        RetryPolicy {
            base_delay: Duration::from_millis(1),
            max_delay: Duration::from_millis(2),
            ..RetryPolicy::default()
        }
    }

    fn detail(index: usize, code: u32) -> ConversionIssue {
        ConversionIssue {
            index: Some(index),
            code: Some(IssueCode(code)),
            message: "m".into(),
        }
    }

    fn rejected_400(details: Vec<ConversionIssue>) -> Error {
        Error::Api {
            operation: "conversion.insert",
            status: 400,
            reason: Some("requestValidation".into()),
            message: String::new(),
            details,
            details_complete: true,
            retry_after: None,
        }
    }

    fn opts(batch_size: usize) -> WriteOptions {
        WriteOptions {
            batch_size,
            concurrency: 3,
        }
    }

    #[tokio::test]
    async fn every_input_gets_one_outcome_in_order() {
        let report = run_batches(
            WriteKind::Insert,
            25,
            opts(10),
            &fast(),
            None,
            |range, _| async move {
                if range.start == 10 {
                    Err(rejected_400(vec![detail(3, 0x101)]))
                } else {
                    Ok(())
                }
            },
        )
        .await;
        assert_eq!(report.len(), 25);
        assert_eq!(report.batches(), 3);
        assert_eq!(report.rejected(), 1);
        let (i, issue) = report.rejections().next().unwrap();
        assert_eq!(i, 13);
        assert_eq!(issue.index, Some(13));
        assert_eq!(report.stored(), 24);
    }

    #[tokio::test]
    async fn progress_is_reported_once_per_finished_batch() {
        let seen = Mutex::new(Vec::new());
        let record = |p: WriteProgress| seen.lock().unwrap().push(p);
        let report = run_batches(
            WriteKind::Insert,
            25,
            opts(10),
            &fast(),
            Some(&record),
            |range, _| async move {
                // The first batch finishes last.
                if range.start == 0 {
                    tokio::time::sleep(Duration::from_millis(20)).await;
                    Err(rejected_400(vec![detail(0, 0x101)]))
                } else {
                    Ok(())
                }
            },
        )
        .await;
        assert_eq!(report.len(), 25);
        let seen = seen.into_inner().unwrap();
        let done: Vec<(usize, usize)> = seen
            .iter()
            .map(|p| (p.conversions_done, p.batches_done))
            .collect();
        assert_eq!(done, vec![(10, 1), (15, 2), (25, 3)]);
        for p in &seen {
            assert_eq!((p.conversions_total, p.batches_total), (25, 3));
        }

        // Batches that are not sent after an auth failure finish too.
        let seen = Mutex::new(Vec::new());
        let record = |p: WriteProgress| seen.lock().unwrap().push(p);
        let serial = WriteOptions {
            batch_size: 2,
            concurrency: 1,
        };
        let report = run_batches(
            WriteKind::Insert,
            5,
            serial,
            &fast(),
            Some(&record),
            |_, _| async {
                Err(Error::Auth {
                    message: "no token".into(),
                })
            },
        )
        .await;
        assert_eq!(report.failed(), 5);
        let seen = seen.into_inner().unwrap();
        assert_eq!(seen.len(), 3);
        assert_eq!(seen[2].conversions_done, 5);
        assert_eq!(seen[2].batches_done, 3);
    }

    #[tokio::test]
    async fn a_duplicate_after_a_lost_answer_counts_as_stored() {
        let calls = Mutex::new(0);
        let report = run_batches(
            WriteKind::Insert,
            3,
            opts(10),
            &fast(),
            None,
            |_, attempt| {
                *calls.lock().unwrap() += 1;
                async move {
                    match attempt {
                        1 => Err(Error::Timeout {
                            after: None,
                            operation: "conversion.insert",
                            connect: false,
                        }),
                        _ => Err(rejected_400(vec![detail(0, 0x11A), detail(2, 0x11A)])),
                    }
                }
            },
        )
        .await;
        assert!(matches!(report.outcomes()[0], Outcome::StoredEarlier));
        assert!(matches!(report.outcomes()[1], Outcome::Stored));
        assert!(matches!(report.outcomes()[2], Outcome::StoredEarlier));
        assert_eq!(report.requests(), 2);
        assert!(report.all_stored());
        assert_eq!(
            report.to_string(),
            "3 conversions: 3 stored (2 by an earlier attempt whose answer was lost), \
             0 rejected, 0 failed; 1 batch, 2 requests"
        );
    }

    #[tokio::test]
    async fn a_duplicate_on_a_first_attempt_is_a_rejection() {
        let report = run_batches(
            WriteKind::Insert,
            2,
            opts(10),
            &fast(),
            None,
            |_, _| async { Err(rejected_400(vec![detail(1, 0x11A)])) },
        )
        .await;
        assert!(matches!(report.outcomes()[1], Outcome::Rejected(_)));
        // So is one after a refused connection (the request never left).
        let report = run_batches(
            WriteKind::Insert,
            2,
            opts(10),
            &fast(),
            None,
            |_, attempt| async move {
                if attempt == 1 {
                    Err(Error::Transport {
                        operation: "conversion.insert",
                        connect: true,
                        message: "refused".into(),
                        source: None,
                    })
                } else {
                    Err(rejected_400(vec![detail(1, 0x11A)]))
                }
            },
        )
        .await;
        assert!(matches!(report.outcomes()[1], Outcome::Rejected(_)));
        // For update a duplicate code is never "stored earlier".
        let report = run_batches(
            WriteKind::Update,
            1,
            opts(10),
            &fast(),
            None,
            |_, attempt| async move {
                if attempt == 1 {
                    Err(Error::Timeout {
                        after: None,
                        operation: "conversion.update",
                        connect: false,
                    })
                } else {
                    Err(rejected_400(vec![detail(0, 0x11A)]))
                }
            },
        )
        .await;
        assert!(matches!(report.outcomes()[0], Outcome::Rejected(_)));
    }

    fn api(status: u16, reason: Option<&str>) -> Error {
        Error::Api {
            operation: "conversion.insert",
            status,
            reason: reason.map(str::to_owned),
            message: String::new(),
            details: vec![],
            details_complete: true,
            retry_after: None,
        }
    }

    #[tokio::test]
    async fn a_duplicate_after_a_rate_limit_is_a_rejection() {
        // 429 and rate-limit 403 answers store nothing: a 0x0000011A on the
        // retry means a different, earlier call stored that id.
        for refusal in [
            api(429, None),
            api(403, Some("rateLimitExceeded")),
            api(403, Some("userRateLimitExceeded")),
        ] {
            let report = run_batches(
                WriteKind::Insert,
                2,
                opts(10),
                &fast(),
                None,
                |_, attempt| {
                    let refusal = refusal.clone();
                    async move {
                        match attempt {
                            1 => Err(refusal),
                            _ => Err(rejected_400(vec![detail(1, 0x11A)])),
                        }
                    }
                },
            )
            .await;
            assert_eq!(report.requests(), 2, "{refusal:?}");
            assert!(matches!(report.outcomes()[0], Outcome::Stored));
            assert!(
                matches!(report.outcomes()[1], Outcome::Rejected(_)),
                "{refusal:?}: {:?}",
                report.outcomes()[1]
            );
        }
        // A 500 may have been processed: the same answer is a success.
        let report = run_batches(
            WriteKind::Insert,
            2,
            opts(10),
            &fast(),
            None,
            |_, attempt| async move {
                match attempt {
                    1 => Err(api(500, None)),
                    _ => Err(rejected_400(vec![detail(1, 0x11A)])),
                }
            },
        )
        .await;
        assert!(matches!(report.outcomes()[1], Outcome::StoredEarlier));
    }

    #[tokio::test]
    async fn a_cut_detail_list_stores_nothing_it_does_not_name() {
        let mut cut = rejected_400(vec![detail(0, 0x116)]);
        if let Error::Api {
            details_complete, ..
        } = &mut cut
        {
            *details_complete = false;
        }
        let report = run_batches(WriteKind::Insert, 3, opts(10), &fast(), None, |_, _| {
            let cut = cut.clone();
            async move { Err(cut) }
        })
        .await;
        assert!(matches!(report.outcomes()[0], Outcome::Rejected(_)));
        for o in &report.outcomes()[1..] {
            assert!(
                matches!(
                    o,
                    Outcome::Failed {
                        may_have_been_stored: true,
                        attempts: 1,
                        ..
                    }
                ),
                "{o:?}"
            );
        }
        assert_eq!(report.stored(), 0);
        // A cut list with no whole detail at all: every conversion unknown.
        let mut empty = rejected_400(vec![]);
        if let Error::Api {
            details_complete, ..
        } = &mut empty
        {
            *details_complete = false;
        }
        let report = run_batches(WriteKind::Insert, 2, opts(10), &fast(), None, |_, _| {
            let empty = empty.clone();
            async move { Err(empty) }
        })
        .await;
        assert_eq!(report.failed(), 2);
        assert_eq!(report.requests(), 1);
    }

    #[tokio::test]
    async fn refusals_before_processing_were_not_stored() {
        let policy = RetryPolicy {
            max_attempts: 1,
            ..fast()
        };
        for refusal in [api(429, None), api(403, Some("insufficientPermissions"))] {
            let report = run_batches(WriteKind::Insert, 1, opts(10), &policy, None, |_, _| {
                let refusal = refusal.clone();
                async move { Err(refusal) }
            })
            .await;
            assert!(
                matches!(
                    report.outcomes()[0],
                    Outcome::Failed {
                        may_have_been_stored: false,
                        ..
                    }
                ),
                "{refusal:?}"
            );
        }
    }

    #[tokio::test]
    async fn exhausted_retries_are_failures_that_may_have_been_stored() {
        let report = run_batches(WriteKind::Insert, 5, opts(2), &fast(), None, |_, _| async {
            Err(Error::Api {
                operation: "conversion.insert",
                status: 503,
                reason: None,
                message: String::new(),
                details: vec![],
                details_complete: true,
                retry_after: None,
            })
        })
        .await;
        assert_eq!(report.failed(), 5);
        assert_eq!(report.requests(), 3 * 4);
        for o in report.outcomes() {
            match o {
                Outcome::Failed {
                    attempts,
                    may_have_been_stored,
                    ..
                } => {
                    assert_eq!(*attempts, 4);
                    assert!(*may_have_been_stored);
                }
                other => panic!("{other:?}"),
            }
        }
    }

    #[tokio::test]
    async fn an_auth_failure_stops_the_remaining_batches() {
        let opts = WriteOptions {
            batch_size: 1,
            concurrency: 1,
        };
        let report = run_batches(WriteKind::Insert, 5, opts, &fast(), None, |_, _| async {
            Err(Error::Api {
                operation: "conversion.insert",
                status: 401,
                reason: Some("authError".into()),
                message: "Invalid Credentials".into(),
                details: vec![],
                details_complete: true,
                retry_after: None,
            })
        })
        .await;
        assert_eq!(report.failed(), 5);
        assert_eq!(report.requests(), 1);
        let unsent = report
            .outcomes()
            .iter()
            .filter(|o| matches!(o, Outcome::Failed { attempts: 0, .. }))
            .count();
        assert_eq!(unsent, 4);
    }

    #[tokio::test]
    async fn a_batch_wide_detail_rejects_the_whole_batch() {
        let report = run_batches(
            WriteKind::Insert,
            3,
            opts(10),
            &fast(),
            None,
            |_, _| async {
                Err(rejected_400(vec![ConversionIssue {
                    index: None,
                    code: None,
                    message: "Empty batch encountered.".into(),
                }]))
            },
        )
        .await;
        assert_eq!(report.rejected(), 3);
        let report = run_batches(
            WriteKind::Insert,
            3,
            opts(10),
            &fast(),
            None,
            |_, _| async { Err(rejected_400(vec![detail(7, 0x101)])) },
        )
        .await;
        assert_eq!(report.failed(), 3);
    }

    #[test]
    fn validation_names_the_field_and_index() {
        let t = DateTime::from_timestamp_millis(1_000).unwrap();
        assert!(validate(WriteKind::Insert, &[]).is_err());
        let mut missing = clicked("a", t);
        missing.segmentation_type = None;
        let e = validate(WriteKind::Insert, &[clicked("x", t), missing.clone()]).unwrap_err();
        match e {
            Error::Validation { field, index, .. } => {
                assert_eq!(field, "segmentationType");
                assert_eq!(index, Some(1));
            }
            other => panic!("{other:?}"),
        }
        assert!(validate(WriteKind::Update, &[missing]).is_ok());
        let e = validate(WriteKind::Insert, &[clicked("a", t), clicked("a", t)]).unwrap_err();
        assert!(
            e.to_string().contains("repeats the conversion at index 0"),
            "{e}"
        );
        let e = validate(WriteKind::Insert, &[clicked(" ", t)]).unwrap_err();
        assert!(e.to_string().contains("conversionId"), "{e}");
        let early = DateTime::from_timestamp_millis(-1).unwrap();
        assert!(validate(WriteKind::Insert, &[clicked("a", early)]).is_err());
        let e = WriteOptions {
            batch_size: 1001,
            concurrency: 1,
        }
        .validate()
        .unwrap_err();
        assert!(e.to_string().contains("batch_size"), "{e}");
        assert!(
            WriteOptions {
                batch_size: 1,
                concurrency: 0
            }
            .validate()
            .is_err()
        );
    }

    #[test]
    fn identity_is_owner_id_and_timestamp() {
        // SA-15: one id at two timestamps is two conversions; the same triple is a repeat.
        let t = DateTime::from_timestamp_millis(1_000).unwrap();
        let later = DateTime::from_timestamp_millis(2_000).unwrap();
        let owned = |id: &str, ts, advertiser: i64| {
            let mut c = Conversion::new(id, ts);
            c.agency_id = Some("7".parse().unwrap());
            c.advertiser_id = Some(advertiser.to_string().parse().unwrap());
            c
        };
        assert!(validate(WriteKind::Insert, &[owned("a", t, 1), owned("a", later, 1)]).is_ok());
        assert!(validate(WriteKind::Insert, &[owned("a", t, 1), owned("a", t, 2)]).is_ok());
        let problems = input_problems(
            WriteKind::Insert,
            &[owned("a", t, 1), owned("a", later, 1), owned("a", t, 1)],
        );
        assert_eq!(problems.len(), 1);
        assert!(
            matches!(&problems[0], Error::Validation { index: Some(2), .. }),
            "{problems:?}"
        );
        // Without an advertiser the server attributes from the click: it may be advertiser 1.
        let problems = input_problems(WriteKind::Update, &[owned("a", t, 1), clicked("a", t)]);
        assert_eq!(problems.len(), 1, "{problems:?}");
    }

    #[test]
    fn a_batch_never_repeats_an_id() {
        assert_eq!(
            batch_ranges(["a", "b", "c", "d", "e"], 2),
            [0..2, 2..4, 4..5]
        );
        assert_eq!(batch_ranges(["a", "b", "a", "c"], 10), [0..2, 2..4]);
        assert_eq!(batch_ranges(["a", "a", "a"], 10), [0..1, 1..2, 2..3]);
        assert_eq!(batch_ranges(["a"], 1), vec![0..1]);
        assert!(batch_ranges(std::iter::empty::<&str>(), 3).is_empty());
    }

    /// A conversion attributed through its click (SA-17): no agency or advertiser.
    fn clicked(id: &str, t: DateTime<chrono::Utc>) -> Conversion {
        let mut c = Conversion::new(id, t);
        c.click_id = Some("gclid-1".into());
        c
    }

    #[test]
    fn the_request_schemas_closed_sets_and_owner_are_checked_locally() {
        use crate::search_ads::values::{ConversionState, ConversionType};
        let t = DateTime::from_timestamp_millis(1_000).unwrap();
        let field_of = |c: Conversion| match validate(WriteKind::Insert, &[c]) {
            Err(Error::Validation { field, index, .. }) => {
                assert_eq!(index, Some(0));
                field
            }
            other => panic!("{other:?}"),
        };
        let mut c = clicked("a", t);
        c.conversion_type = Some(ConversionType::Other("SALE".into()));
        assert_eq!(field_of(c), "type");
        let mut c = clicked("a", t);
        c.state = Some(ConversionState::Other("GONE".into()));
        assert_eq!(field_of(c), "state");
        let mut c = clicked("a", t);
        c.currency_code = Some("usd".into());
        assert_eq!(field_of(c), "currencyCode");
        assert_eq!(field_of(Conversion::new("a", t)), "advertiserId");
        let mut c = Conversion::new("a", t);
        c.advertiser_id = Some("5".parse().unwrap());
        assert_eq!(field_of(c.clone()), "agencyId");
        c.agency_id = Some("7".parse().unwrap());
        assert!(validate(WriteKind::Insert, &[c]).is_ok());
        let mut c = Conversion::new("a", t);
        c.customer_id = Some("2000012350".parse().unwrap());
        assert!(validate(WriteKind::Update, &[c]).is_ok());
    }
}

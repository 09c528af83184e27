//! What happened to each conversion: [`Outcome`], per batch ([`WriteBatch`])
//! and per call ([`WriteReport`]).

use std::ops::Range;

use super::super::error::{ConversionIssue, Error, counted};

/// What happened to one input conversion.
///
/// `#[non_exhaustive]`: a later version may tell more cases apart. Decide with
/// [`is_stored`](Self::is_stored) and [`is_definite`](Self::is_definite), and
/// give a `match` a wildcard arm that falls back on them (never one that
/// silently drops the conversion).
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum Outcome {
    /// The server stored (insert) or applied (update) it.
    Stored,
    /// Insert only: an earlier attempt of this call whose answer was lost
    /// stored it; the retry was answered `0x0000011A` (conversion id already
    /// used).
    StoredEarlier,
    /// Insert in resubmission mode only
    /// ([`WriteRequest::resubmission`](super::WriteRequest::resubmission)):
    /// the server answered `0x0000011A`, so an earlier run already stored
    /// this (owner, conversion id, timestamp). A success.
    AlreadyStored,
    /// Rerun only ([`WriteRequest::resume`](super::WriteRequest::resume)): an
    /// earlier run gave this conversion its outcome, so it was not sent again.
    /// It was still counted for the duplicate check.
    Settled,
    /// Refused locally, never sent: the [`Error::Validation`] names the field
    /// and the input index (a missing or malformed field, a control
    /// character, an over-long id, or the same (owner, conversion id,
    /// timestamp) earlier in the input).
    Invalid(Error),
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
        /// (it would come back as `0x0000011A` if it was; send it again with
        /// [`resubmission`](super::WriteRequest::resubmission) on to see that
        /// as [`Outcome::AlreadyStored`]).
        may_have_been_stored: bool,
    },
}

impl Outcome {
    /// True for [`Outcome::Stored`], [`Outcome::StoredEarlier`] and
    /// [`Outcome::AlreadyStored`].
    pub fn is_stored(&self) -> bool {
        matches!(
            self,
            Outcome::Stored | Outcome::StoredEarlier | Outcome::AlreadyStored
        )
    }

    /// True when the outcome is final: stored, settled by an earlier run,
    /// invalid, rejected, or failed without having been stored. Only `Failed { may_have_been_stored: true }`
    /// is not (a rerun in resubmission mode settles it).
    pub fn is_definite(&self) -> bool {
        !matches!(
            self,
            Outcome::Failed {
                may_have_been_stored: true,
                ..
            }
        )
    }
}

/// The outcomes of one batch, yielded by a [`WriteStream`](super::WriteStream)
/// in input order: `outcomes()[k]` belongs to input conversion
/// `range().start + k`.
#[derive(Debug, Clone)]
pub struct WriteBatch {
    pub(crate) range: Range<usize>,
    pub(crate) outcomes: Vec<Outcome>,
    pub(crate) requests: u32,
    /// The journal's fingerprint of the input through this batch; `None`
    /// when the input differs from the journal's (nothing is recorded).
    pub(crate) fingerprint: Option<u64>,
}

impl WriteBatch {
    /// The input indices of the batch (0-based, counted over the whole
    /// input). Consecutive batches' ranges touch: together they cover the
    /// input once, in order.
    pub fn range(&self) -> Range<usize> {
        self.range.clone()
    }

    /// One outcome per input conversion of [`range`](Self::range).
    pub fn outcomes(&self) -> &[Outcome] {
        &self.outcomes
    }

    /// Consumes the batch into its outcomes.
    pub fn into_outcomes(self) -> Vec<Outcome> {
        self.outcomes
    }

    /// `(input index, outcome)` pairs.
    pub fn indexed(&self) -> impl Iterator<Item = (usize, &Outcome)> {
        self.range.clone().zip(&self.outcomes)
    }

    /// HTTP requests made for the batch, retries included (0 when every
    /// conversion of it was invalid, or it was not sent).
    pub fn requests(&self) -> u32 {
        self.requests
    }
}

/// One outcome per input conversion, in input order.
#[derive(Debug, Clone, Default)]
pub struct WriteReport {
    outcomes: Vec<Outcome>,
    requests: usize,
    batches: usize,
}

/// Appends batches, which must come in input order (as a
/// [`WriteStream`](super::WriteStream) yields them), so that
/// `stream.collect::<WriteReport>()` is what
/// [`send`](super::WriteRequest::send) returns.
impl Extend<WriteBatch> for WriteReport {
    fn extend<T: IntoIterator<Item = WriteBatch>>(&mut self, batches: T) {
        for batch in batches {
            self.push(batch);
        }
    }
}

impl WriteReport {
    /// Appends a batch (they arrive in input order).
    pub(crate) fn push(&mut self, batch: WriteBatch) {
        self.requests += batch.requests as usize;
        self.batches += 1;
        self.outcomes.extend(batch.outcomes);
    }

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

    /// True for an empty report (never returned by
    /// [`WriteRequest::send`](super::WriteRequest::send): empty input is
    /// refused).
    pub fn is_empty(&self) -> bool {
        self.outcomes.is_empty()
    }

    fn count(&self, f: impl Fn(&Outcome) -> bool) -> usize {
        self.outcomes.iter().filter(|o| f(o)).count()
    }

    /// Conversions stored, [`Outcome::StoredEarlier`] and
    /// [`Outcome::AlreadyStored`] included.
    pub fn stored(&self) -> usize {
        self.count(Outcome::is_stored)
    }

    /// Conversions stored by an earlier attempt whose answer was lost.
    pub fn stored_earlier(&self) -> usize {
        self.count(|o| matches!(o, Outcome::StoredEarlier))
    }

    /// Conversions an earlier run had stored (resubmission mode).
    pub fn already_stored(&self) -> usize {
        self.count(|o| matches!(o, Outcome::AlreadyStored))
    }

    /// Conversions an earlier run settled, not sent by this one
    /// ([`WriteRequest::resume`](super::WriteRequest::resume)).
    pub fn settled(&self) -> usize {
        self.count(|o| matches!(o, Outcome::Settled))
    }

    /// Conversions refused locally, never sent.
    pub fn invalid(&self) -> usize {
        self.count(|o| matches!(o, Outcome::Invalid(_)))
    }

    /// Conversions the server refused.
    pub fn rejected(&self) -> usize {
        self.count(|o| matches!(o, Outcome::Rejected(_)))
    }

    /// Conversions without a definite answer.
    pub fn failed(&self) -> usize {
        self.count(|o| matches!(o, Outcome::Failed { .. }))
    }

    /// True when every conversion was stored (by this call or, in
    /// resubmission mode, by an earlier one).
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

    /// The local refusals and the failures, with their input indices.
    pub fn failures(&self) -> impl Iterator<Item = (usize, &Error)> {
        self.outcomes
            .iter()
            .enumerate()
            .filter_map(|(i, o)| match o {
                Outcome::Failed { error, .. } | Outcome::Invalid(error) => Some((i, error)),
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
    /// lost), 1 rejected, 0 failed; 1 batch, 2 requests`; the already stored
    /// and the invalid are named only when there are some.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}: {} stored",
            counted(self.len(), "conversion", "conversions"),
            self.stored()
        )?;
        let mut notes = Vec::new();
        if self.stored_earlier() > 0 {
            notes.push(format!(
                "{} by an earlier attempt whose answer was lost",
                self.stored_earlier()
            ));
        }
        if self.already_stored() > 0 {
            notes.push(format!(
                "{} already by an earlier run",
                self.already_stored()
            ));
        }
        if !notes.is_empty() {
            write!(f, " ({})", notes.join(", "))?;
        }
        if self.settled() > 0 {
            write!(f, ", {} settled by an earlier run", self.settled())?;
        }
        if self.invalid() > 0 {
            write!(f, ", {} invalid", self.invalid())?;
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

#[cfg(test)]
mod tests {
    use super::*;

    fn batch(range: Range<usize>, outcomes: Vec<Outcome>, requests: u32) -> WriteBatch {
        WriteBatch {
            range,
            outcomes,
            requests,
            fingerprint: None,
        }
    }

    #[test]
    fn counts_and_text() {
        let mut report = WriteReport::default();
        report.push(batch(
            0..3,
            vec![
                Outcome::Stored,
                Outcome::StoredEarlier,
                Outcome::AlreadyStored,
            ],
            2,
        ));
        assert!(report.all_stored());
        report.push(batch(
            3..5,
            vec![
                Outcome::Invalid(Error::validation("conversionId", Some(3), "is empty")),
                Outcome::Failed {
                    error: Error::auth(
                        crate::search_ads::auth::credential_kind::CredentialKind::Other,
                        "no",
                    ),
                    attempts: 0,
                    may_have_been_stored: false,
                },
            ],
            0,
        ));
        assert_eq!(report.len(), 5);
        assert_eq!(report.stored(), 3);
        assert_eq!(report.already_stored(), 1);
        assert_eq!(report.invalid(), 1);
        assert_eq!(report.failed(), 1);
        assert!(!report.all_stored());
        assert_eq!(
            report.failures().map(|(i, _)| i).collect::<Vec<_>>(),
            [3, 4]
        );
        assert_eq!(
            report.to_string(),
            "5 conversions: 3 stored (1 by an earlier attempt whose answer was lost, 1 already \
             by an earlier run), 1 invalid, 0 rejected, 1 failed; 2 batches, 2 requests"
        );
        assert!(report.outcomes()[4].is_definite());
        assert!(
            !Outcome::Failed {
                error: Error::auth(
                    crate::search_ads::auth::credential_kind::CredentialKind::Other,
                    "no"
                ),
                attempts: 1,
                may_have_been_stored: true
            }
            .is_definite()
        );
    }
}

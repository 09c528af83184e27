//! Mapping a batch's answer to one [`Outcome`] per sent conversion (SA-9).

use super::super::error::{ConversionIssue, Error, counted};
use super::batching::Batch;
use super::kind::WriteKind;
use super::report::Outcome;

/// What the caller says about the input and the attempts so far.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Context {
    pub(crate) kind: WriteKind,
    /// The input may have been sent by an earlier run.
    pub(crate) resubmission: bool,
    /// An earlier attempt of this batch may have been processed.
    pub(crate) maybe_delivered: bool,
    /// Requests made for the batch so far.
    pub(crate) attempts: u32,
}

/// A 400 whose details name conversions: the batch's answer (SA-9). `None`
/// when the error is not such an answer. One outcome per sent conversion of
/// `batch`.
///
/// A conversion is [`Outcome::Stored`] only with evidence: a complete list of
/// details that does not name it. When the list arrived cut short or could
/// not be read whole, the conversions it does not name are
/// [`Outcome::Failed`] with `may_have_been_stored: true`. On insert, a
/// `0x0000011A` is [`Outcome::StoredEarlier`] when an earlier attempt of this
/// batch may have been processed, else [`Outcome::AlreadyStored`] in
/// resubmission mode or when an earlier run may have sent it (a resume),
/// else a rejection: a conflict with a conversion this call did not send.
pub(crate) fn per_conversion(ctx: Context, batch: &Batch, error: &Error) -> Option<Vec<Outcome>> {
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
    let len = batch.sent();
    let mut outcomes: Vec<Option<Outcome>> = vec![None; len];
    let mut batch_wide: Option<&ConversionIssue> = None;
    for issue in details {
        match issue.index {
            Some(k) if k < len => outcomes[k] = Some(named(ctx, batch, k, issue)),
            Some(outside) => {
                // An index outside the batch: the answer cannot be mapped to
                // conversions, so nothing in it is definite.
                return Some(vec![
                    Outcome::Failed {
                        error: Error::unexpected(
                            ctx.kind.operation(),
                            Some(400),
                            format!(
                                "a detail names conversion index {outside} in a batch of {}: \
                                 {issue}",
                                counted(len, "conversion", "conversions")
                            ),
                        ),
                        attempts: ctx.attempts,
                        may_have_been_stored: true,
                    };
                    len
                ]);
            }
            None => batch_wide = batch_wide.or(Some(issue)),
        }
    }
    let unnamed = |k: usize| match batch_wide {
        // The list is cut short: a conversion it does not name may have
        // been stored or refused in the part that was lost.
        _ if !details_complete => Outcome::Failed {
            error: error.clone(),
            attempts: ctx.attempts,
            may_have_been_stored: true,
        },
        // A batch-wide detail means the batch stored nothing (SA-9).
        Some(issue) => Outcome::Rejected(ConversionIssue {
            index: Some(batch.input_index(k)),
            ..issue.clone()
        }),
        None => Outcome::Stored,
    };
    Some(
        outcomes
            .into_iter()
            .enumerate()
            .map(|(k, o)| o.unwrap_or_else(|| unnamed(k)))
            .collect(),
    )
}

/// The outcome of sent conversion `k`, which a detail names.
fn named(ctx: Context, batch: &Batch, k: usize, issue: &ConversionIssue) -> Outcome {
    if ctx.kind == WriteKind::Insert && issue.is_duplicate() {
        if ctx.maybe_delivered {
            return Outcome::StoredEarlier;
        }
        if ctx.resubmission || batch.sent_earlier(k) {
            return Outcome::AlreadyStored;
        }
    }
    Outcome::Rejected(ConversionIssue {
        index: Some(batch.input_index(k)),
        ..issue.clone()
    })
}

#[cfg(test)]
mod tests {
    use chrono::DateTime;

    use super::*;
    use crate::search_ads::conversion::Conversion;
    use crate::search_ads::error::IssueCode;

    fn detail(index: usize, code: u32) -> ConversionIssue {
        ConversionIssue {
            index: Some(index),
            code: Some(IssueCode(code)),
            message: "m".into(),
        }
    }

    fn answer(details: Vec<ConversionIssue>, complete: bool) -> Error {
        Error::Api {
            operation: "conversion.insert",
            status: 400,
            reason: Some("requestValidation".into()),
            message: String::new(),
            details,
            details_complete: complete,
            retry_after: None,
        }
    }

    /// Three sent conversions at input 10, 12 and 13 (11 was refused locally).
    fn batch() -> Batch {
        let mut batch = Batch::new(WriteKind::Insert, 10);
        for id in ["a", "b", "c"] {
            let c = Conversion::new(id, DateTime::from_timestamp_millis(1).unwrap());
            batch.body.push(c).unwrap();
        }
        batch.len = 4;
        batch.positions = vec![0, 2, 3];
        batch
    }

    fn ctx(kind: WriteKind, resubmission: bool, maybe_delivered: bool) -> Context {
        Context {
            kind,
            resubmission,
            maybe_delivered,
            attempts: 1,
        }
    }

    #[test]
    fn details_name_input_indices() {
        let e = answer(vec![detail(1, 0x101)], true);
        let o = per_conversion(ctx(WriteKind::Insert, false, false), &batch(), &e).unwrap();
        assert!(matches!(o[0], Outcome::Stored));
        assert!(matches!(&o[1], Outcome::Rejected(i) if i.index == Some(12)));
        assert!(matches!(o[2], Outcome::Stored));
    }

    #[test]
    fn a_duplicate_is_what_the_caller_and_the_attempts_say() {
        let e = answer(vec![detail(2, 0x11A)], true);
        let at = |kind, resubmission, maybe_delivered| {
            per_conversion(ctx(kind, resubmission, maybe_delivered), &batch(), &e).unwrap()[2]
                .clone()
        };
        assert!(matches!(
            at(WriteKind::Insert, false, false),
            Outcome::Rejected(_)
        ));
        assert!(matches!(
            at(WriteKind::Insert, false, true),
            Outcome::StoredEarlier
        ));
        assert!(matches!(
            at(WriteKind::Insert, true, false),
            Outcome::AlreadyStored
        ));
        assert!(matches!(
            at(WriteKind::Insert, true, true),
            Outcome::StoredEarlier
        ));
        // An update is never "already stored".
        assert!(matches!(
            at(WriteKind::Update, true, false),
            Outcome::Rejected(_)
        ));
        // Another code is a rejection in resubmission mode too.
        let e = answer(vec![detail(2, 0x101)], true);
        let o = per_conversion(ctx(WriteKind::Insert, true, false), &batch(), &e).unwrap();
        assert!(matches!(o[2], Outcome::Rejected(_)));
    }

    #[test]
    fn a_cut_list_stores_nothing_it_does_not_name() {
        let e = answer(vec![detail(0, 0x116)], false);
        let o = per_conversion(ctx(WriteKind::Insert, false, false), &batch(), &e).unwrap();
        assert!(matches!(o[0], Outcome::Rejected(_)));
        for o in &o[1..] {
            assert!(
                matches!(
                    o,
                    Outcome::Failed {
                        may_have_been_stored: true,
                        ..
                    }
                ),
                "{o:?}"
            );
        }
        let e = answer(vec![], false);
        let o = per_conversion(ctx(WriteKind::Insert, false, false), &batch(), &e).unwrap();
        assert!(o.iter().all(|o| !o.is_definite()));
    }

    #[test]
    fn batch_wide_and_outside_details() {
        let wide = ConversionIssue {
            index: None,
            code: None,
            message: "Empty batch encountered.".into(),
        };
        let e = answer(vec![wide], true);
        let o = per_conversion(ctx(WriteKind::Insert, false, false), &batch(), &e).unwrap();
        assert!(
            o.iter()
                .zip([10, 12, 13])
                .all(|(o, i)| matches!(o, Outcome::Rejected(x) if x.index == Some(i)))
        );
        let e = answer(vec![detail(7, 0x101)], true);
        let o = per_conversion(ctx(WriteKind::Insert, false, false), &batch(), &e).unwrap();
        assert!(o.iter().all(|o| !o.is_definite()));
        // Not a 400 with details: no answer per conversion.
        assert!(
            per_conversion(
                ctx(WriteKind::Insert, false, false),
                &batch(),
                &answer(vec![], true)
            )
            .is_none()
        );
    }
}

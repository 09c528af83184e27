//! [`Resume`]: what an earlier run of the same input did, so that a rerun
//! gives every conversion the verdict one uninterrupted run gives it.

use std::ops::Range;

/// What earlier runs of the same input did, by input index (0-based, over
/// the whole input in its order): which conversions already have their
/// outcome, and which ones a request may have carried to the server.
/// Given to [`WriteRequest::resume`](super::WriteRequest::resume).
///
/// The input of the rerun must be the whole input again, in the same order:
/// a settled conversion is not sent again, but it is still read and counted
/// for the duplicate check, so that a later repeat of it is refused exactly
/// as in one uninterrupted run (SA-15). A conversion an earlier run may have
/// sent (its batch had started) that the server answers `0x0000011A` (already
/// stored) is [`Outcome::AlreadyStored`](super::Outcome::AlreadyStored), a
/// success; any other conversion answered so is a conflict,
/// [`Outcome::Rejected`](super::Outcome::Rejected), as in a first run.
///
/// ```
/// use sa360_video_sdk::search_ads::Resume;
/// // Conversions 0..500 have their outcome; batches covering 0..700 were sent.
/// let resume = Resume::new().settled(0..500).sent(0..700);
/// # let _ = resume;
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Resume {
    settled: Vec<Range<usize>>,
    sent: Vec<Range<usize>>,
}

impl Resume {
    /// Nothing settled, nothing sent (a first run).
    pub fn new() -> Self {
        Self::default()
    }

    /// Marks input conversions `rows` as settled by an earlier run: they are
    /// not sent, and get [`Outcome::Settled`](super::Outcome::Settled). May be
    /// called any number of times, in any order.
    pub fn settled(mut self, rows: Range<usize>) -> Self {
        if !rows.is_empty() {
            self.settled.push(rows);
        }
        self
    }

    /// Marks input conversions `rows` as carried by a request of an earlier
    /// run (their batch was sent, answered or not). May be called any number
    /// of times, in any order.
    pub fn sent(mut self, rows: Range<usize>) -> Self {
        if !rows.is_empty() {
            self.sent.push(rows);
        }
        self
    }

    pub(crate) fn cursor(self) -> ResumeCursor {
        ResumeCursor {
            settled: Ranges::new(self.settled),
            sent: Ranges::new(self.sent),
        }
    }
}

/// A [`Resume`] asked about input indices in increasing order.
#[derive(Debug)]
pub(crate) struct ResumeCursor {
    pub(crate) settled: Ranges,
    pub(crate) sent: Ranges,
}

/// Sorted, disjoint ranges, asked in increasing order.
#[derive(Debug)]
pub(crate) struct Ranges {
    list: Vec<Range<usize>>,
    at: usize,
}

impl Ranges {
    fn new(mut list: Vec<Range<usize>>) -> Self {
        list.sort_by_key(|r| r.start);
        let mut merged: Vec<Range<usize>> = Vec::with_capacity(list.len());
        for r in list {
            match merged.last_mut() {
                Some(last) if r.start <= last.end => last.end = last.end.max(r.end),
                _ => merged.push(r),
            }
        }
        Self {
            list: merged,
            at: 0,
        }
    }

    /// True when `index` is in a range; `index` never decreases between calls.
    pub(crate) fn contains(&mut self, index: usize) -> bool {
        while let Some(r) = self.list.get(self.at) {
            if r.end <= index {
                self.at += 1;
            } else {
                return r.contains(&index);
            }
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_merge_and_answer_in_order() {
        let mut c = Resume::new()
            .settled(5..8)
            .settled(0..2)
            .settled(7..10)
            .settled(3..3)
            .cursor();
        let hits: Vec<usize> = (0..12).filter(|&i| c.settled.contains(i)).collect();
        assert_eq!(hits, [0, 1, 5, 6, 7, 8, 9]);
        assert!(!c.sent.contains(0));
    }
}

//! Splitting the input into batches as it is read: each row is checked
//! ([`validate`](super::validate), the [`DuplicateDetector`]) and joins the
//! open batch, which closes at `batch_size` rows or before a conversion id
//! would repeat within it (the server refuses that with `0x0000011F`, SA-15).

use std::collections::HashSet;
use std::hash::{BuildHasher, RandomState};

use super::super::conversion::Conversion;
use super::super::error::Error;
use super::body::Body;
use super::dedup::{DuplicateDetector, PassThroughState};
use super::journal::RowPrint;
use super::kind::WriteKind;
use super::resume::ResumeCursor;
use super::validate;

/// A contiguous range of input rows: the ones to send and the ones refused
/// locally.
#[derive(Debug)]
pub(crate) struct Batch {
    /// Input index of the first row.
    pub(crate) start: usize,
    /// Rows of the input the batch covers (sent and refused).
    pub(crate) len: usize,
    /// Offsets in the batch (`0..len`) of the conversions to send, in order.
    pub(crate) positions: Vec<usize>,
    /// The conversions to send, in their request shape; conversion `k` of
    /// it is input row `start + positions[k]`.
    pub(crate) body: Body,
    /// Rows refused before sending: offset and the validation error.
    pub(crate) invalid: Vec<(usize, Error)>,
    /// Offsets of rows an earlier run settled ([`Resume`](super::Resume)):
    /// checked for duplicates, not sent.
    pub(crate) settled: Vec<usize>,
    /// Indices `k` (into `positions`, ascending) of sent conversions an
    /// earlier run may have sent: a `0x0000011A` for them is "already stored".
    pub(crate) earlier: Vec<usize>,
    /// The [`RowPrint`] of the input through the batch's last row.
    pub(crate) fingerprint: u64,
    /// Set when the rows read so far differ from the ones a journal recorded
    /// (see [`WriteJournal`](super::WriteJournal)): nothing of the batch is sent.
    pub(crate) mismatch: Option<Error>,
}

impl Batch {
    /// An empty batch of `kind` starting at input index `start`.
    pub(crate) fn new(kind: WriteKind, start: usize) -> Self {
        Self {
            start,
            len: 0,
            positions: Vec::new(),
            body: Body::new(kind),
            invalid: Vec::new(),
            settled: Vec::new(),
            earlier: Vec::new(),
            fingerprint: 0,
            mismatch: None,
        }
    }

    /// Conversions to send (as many as `positions`).
    pub(crate) fn sent(&self) -> usize {
        self.body.len()
    }

    /// The input index of sent conversion `k`.
    pub(crate) fn input_index(&self, k: usize) -> usize {
        self.start + self.positions.get(k).copied().unwrap_or(0)
    }

    /// True when an earlier run may have sent sent conversion `k`.
    pub(crate) fn sent_earlier(&self, k: usize) -> bool {
        self.earlier.binary_search(&k).is_ok()
    }
}

/// Turns input rows into [`Batch`]es; holds at most one open batch.
#[derive(Debug)]
pub(crate) struct Batcher {
    kind: WriteKind,
    size: usize,
    duplicates: DuplicateDetector,
    open: Batch,
    /// Hashes of the trimmed conversion ids of the open batch's conversions
    /// to send (under `id_keys`). Two ids whose hashes collide close the
    /// batch early, which costs one more request and nothing else.
    ids: HashSet<u64, PassThroughState>,
    id_keys: RandomState,
    next: usize,
    /// What earlier runs did (a rerun), asked row by row.
    resume: Option<ResumeCursor>,
    /// The fingerprint of the rows read, when a journal is kept.
    print: Option<RowPrint>,
    /// A journal's (rows through, fingerprint) checkpoints not reached yet, ascending.
    checkpoints: std::collections::VecDeque<(u64, u64)>,
    /// The first checkpoint that did not match.
    mismatch: Option<Error>,
}

impl Batcher {
    pub(crate) fn new(kind: WriteKind, batch_size: usize) -> Self {
        Self::resuming(kind, batch_size, None)
    }

    /// A batcher of a rerun: rows `resume` calls settled are counted for
    /// duplicates and not sent.
    pub(crate) fn resuming(
        kind: WriteKind,
        batch_size: usize,
        resume: Option<ResumeCursor>,
    ) -> Self {
        Self {
            resume,
            kind,
            size: batch_size.max(1),
            duplicates: DuplicateDetector::default(),
            open: Batch::new(kind, 0),
            ids: HashSet::default(),
            id_keys: RandomState::new(),
            next: 0,
            print: None,
            checkpoints: std::collections::VecDeque::new(),
            mismatch: None,
        }
    }

    /// Keeps the fingerprint of the rows read (for a journal) and checks it
    /// at `checkpoints` ((rows through, fingerprint), from a journal's `done`
    /// records).
    pub(crate) fn journaled(mut self, checkpoints: &[(u64, u64)]) -> Self {
        self.print = Some(RowPrint::default());
        self.checkpoints = checkpoints.iter().copied().collect();
        self
    }

    /// Adds row `index` to the fingerprint and checks a checkpoint it reaches.
    fn fingerprint(&mut self, index: usize, c: &Conversion) {
        let Some(print) = self.print.as_mut() else {
            return;
        };
        print.push(c);
        let through = index as u64 + 1;
        while let Some(&(at, expected)) = self.checkpoints.front() {
            if at > through {
                break;
            }
            self.checkpoints.pop_front();
            if at == through && expected != print.value() && self.mismatch.is_none() {
                let e = Error::validation(
                    "journal",
                    Some(index),
                    format!(
                        "the input differs from the one the journal recorded: its rows 1 to {through} are not the same; nothing more is sent (give the same input in the same order, or remove the journal to start over)"
                    ),
                );
                self.open.mismatch = Some(e.clone());
                self.mismatch = Some(e);
            }
        }
    }

    /// Rows taken so far.
    pub(crate) fn rows(&self) -> usize {
        self.next
    }

    /// The rows the open batch may cover once it closes (it closes at
    /// `batch_size` rows or earlier), when it holds a conversion to send and
    /// the input matches the journal's so far: what a `send` record may
    /// declare before the batch is read to its end. `None` otherwise.
    pub(crate) fn open_reach(&self) -> Option<std::ops::Range<usize>> {
        let sends = self.open.sent() > 0 && self.open.mismatch.is_none();
        sends.then(|| self.open.start..self.open.start + self.size)
    }

    /// Checks the next input row: `Err` when it is refused locally.
    pub(crate) fn check(&mut self, index: usize, c: &Conversion) -> Result<(), Error> {
        validate::check(self.kind, index, c)?;
        if self.duplicates.repeats(c) {
            let id = c.conversion_id.as_deref().map_or("", str::trim);
            let timestamp = c.conversion_timestamp.map_or(0, |t| t.timestamp_millis());
            return Err(Error::validation(
                "conversionId",
                Some(index),
                format!(
                    "{id:?} with conversionTimestamp {timestamp} repeats an earlier conversion \
                     of this call (by its 64-bit fingerprint, DECISIONS SA-22): an (advertiser, conversion id, timestamp) may appear once per \
                     call (the server would refuse the second as 0x0000011F or 0x0000011A)"
                ),
            ));
        }
        Ok(())
    }

    /// Takes the next input row. Returns the batch it closed, if any (the
    /// row itself then opens the next one).
    pub(crate) fn push(&mut self, c: Conversion) -> Option<Batch> {
        let index = self.next;
        self.next += 1;
        let (settled, earlier) = match self.resume.as_mut() {
            Some(r) => (r.settled.contains(index), r.sent.contains(index)),
            None => (false, false),
        };
        if settled {
            // Its outcome is known; it still counts for the duplicate check,
            // as it did in the run that settled it (its verdict is ignored).
            let _ = self.check(index, &c);
            let closed = (self.open.len == self.size).then(|| self.close(index));
            self.open.settled.push(self.open.len);
            self.open.len += 1;
            self.fingerprint(index, &c);
            return closed;
        }
        let checked = self.check(index, &c);
        let id = self
            .id_keys
            .hash_one(c.conversion_id.as_deref().map_or("", str::trim));
        let closed = if self.open.len == self.size || (checked.is_ok() && self.ids.contains(&id)) {
            Some(self.close(index))
        } else {
            None
        };
        let offset = self.open.len;
        self.open.len += 1;
        self.fingerprint(index, &c);
        match checked {
            Ok(()) => {
                self.ids.insert(id);
                match self.open.body.push(c) {
                    Ok(()) => {
                        if earlier {
                            self.open.earlier.push(self.open.positions.len());
                        }
                        self.open.positions.push(offset);
                    }
                    // Not expected: the checks refuse what the request shape lacks.
                    Err(e) => self.open.invalid.push((
                        offset,
                        Error::validation(
                            "conversions",
                            Some(index),
                            format!("cannot be sent: {e}"),
                        ),
                    )),
                }
            }
            Err(e) => self.open.invalid.push((offset, e)),
        }
        closed
    }

    /// Closes the open batch at the end of the input (`None` when it is empty).
    pub(crate) fn finish(&mut self) -> Option<Batch> {
        (self.open.len > 0).then(|| self.close(self.next))
    }

    fn close(&mut self, next_start: usize) -> Batch {
        self.ids.clear();
        let mut next = Batch::new(self.kind, next_start);
        next.mismatch = self.mismatch.clone();
        let mut closed = std::mem::replace(&mut self.open, next);
        closed.body.seal();
        closed.fingerprint = self.print.as_ref().map_or(0, RowPrint::value);
        closed
    }
}

/// Every conversion an insert or update would refuse before sending, as
/// [`Error::Validation`] with the field and the input index, in input order.
pub(crate) fn input_problems<'a>(
    kind: WriteKind,
    conversions: impl IntoIterator<Item = &'a Conversion>,
) -> Vec<Error> {
    let mut batcher = Batcher::new(kind, 1);
    conversions
        .into_iter()
        .enumerate()
        .filter_map(|(i, c)| batcher.check(i, c).err())
        .collect()
}

#[cfg(test)]
mod tests {
    use chrono::DateTime;

    use super::*;

    fn clicked(id: &str) -> Conversion {
        let mut c = Conversion::new(id, DateTime::from_timestamp_millis(1_000).unwrap());
        c.click_id = Some("gclid-1".into());
        c
    }

    fn split(ids: &[&str], size: usize) -> Vec<(usize, usize, Vec<usize>, Vec<usize>)> {
        let mut b = Batcher::new(WriteKind::Insert, size);
        let mut out = Vec::new();
        let mut keep = |batch: Batch| {
            out.push((
                batch.start,
                batch.len,
                batch.positions.clone(),
                batch.invalid.iter().map(|(o, _)| *o).collect(),
            ))
        };
        for (n, id) in ids.iter().enumerate() {
            // A different timestamp per row: the same id is then another
            // conversion, valid, but not in the same batch.
            let mut c = clicked(id);
            c.conversion_timestamp = DateTime::from_timestamp_millis(1_000 + n as i64);
            if let Some(batch) = b.push(c) {
                keep(batch);
            }
        }
        if let Some(batch) = b.finish() {
            keep(batch);
        }
        out
    }

    #[test]
    fn batches_cover_the_input_in_order_and_never_repeat_an_id() {
        assert_eq!(
            split(&["a", "b", "c", "d", "e"], 2),
            [
                (0, 2, vec![0, 1], vec![]),
                (2, 2, vec![0, 1], vec![]),
                (4, 1, vec![0], vec![])
            ]
        );
        assert_eq!(
            split(&["a", "b", "a", "c"], 10),
            [(0, 2, vec![0, 1], vec![]), (2, 2, vec![0, 1], vec![])]
        );
        assert_eq!(split(&["a", "a", "a"], 10).len(), 3);
        assert!(split(&[], 3).is_empty());
    }

    #[test]
    fn refused_rows_keep_their_place() {
        // "" is refused (no id): it stays in its batch, unsent.
        assert_eq!(
            split(&["a", "", "b", ""], 2),
            [(0, 2, vec![0], vec![1]), (2, 2, vec![0], vec![1])]
        );
    }

    #[test]
    fn a_repeated_conversion_is_its_own_refusal() {
        let mut b = Batcher::new(WriteKind::Insert, 10);
        assert!(b.push(clicked("a")).is_none());
        assert!(b.push(clicked("a")).is_none());
        let batch = b.finish().unwrap();
        assert_eq!(batch.positions, [0]);
        let (offset, e) = &batch.invalid[0];
        assert_eq!(*offset, 1);
        assert!(
            matches!(e, Error::Validation { field, index: Some(1), .. } if field == "conversionId"),
            "{e:?}"
        );
        assert!(
            e.to_string().contains("repeats an earlier conversion"),
            "{e}"
        );
        assert_eq!(b.rows(), 2);
    }

    #[test]
    fn problems_are_listed_without_sending() {
        let mut bad = clicked("b");
        bad.segmentation_type = None;
        let input = [clicked("a"), bad.clone(), clicked("a")];
        let problems = input_problems(WriteKind::Insert, &input);
        let at: Vec<_> = problems
            .iter()
            .map(|e| match e {
                Error::Validation { field, index, .. } => (field.as_str(), *index),
                other => panic!("{other:?}"),
            })
            .collect();
        assert_eq!(
            at,
            [("segmentationType", Some(1)), ("conversionId", Some(2))]
        );
        assert_eq!(input_problems(WriteKind::Update, &[bad]).len(), 0);
    }
}

//! The knobs of inserts and updates: batching, concurrency, progress. A leaf: the client
//! holds the defaults, `write/` uses them.

use std::sync::Arc;

use crate::search_ads::error::Error;
use crate::setters::field_setters;

/// Default conversions per request: the largest batch (SA-10: a tenth of the
/// requests of Google's sample size of 100 against the quota, and of the
/// round trips).
pub const DEFAULT_BATCH_SIZE: usize = MAX_BATCH_SIZE;

/// Largest batch the SDK sends (SA-10).
pub const MAX_BATCH_SIZE: usize = 1000;

/// Most requests in flight at once for one insert or update.
pub const MAX_CONCURRENCY: usize = 64;

/// Batching of [`insert`](crate::search_ads::SearchAdsClient::insert) and
/// [`update`](crate::search_ads::SearchAdsClient::update).
///
/// At most `concurrency` batches are in flight, and batches in flight plus
/// batches that finished out of order and wait for an earlier one (the
/// reorder buffer of a [`WriteStream`](super::WriteStream)) never exceed
/// [`max_held_batches`](Self::max_held_batches), so one call holds at most
/// `(2 × concurrency + 1) × batch_size` input conversions at once.
///
/// ```
/// use sa360_video_sdk::search_ads::WriteOptions;
/// let options = WriteOptions::default().batch_size(500).concurrency(8);
/// assert_eq!((options.batch_size, options.concurrency), (500, 8));
/// let default = WriteOptions::default();
/// assert_eq!((default.batch_size, default.concurrency), (1000, 4));
/// ```
///
/// `#[non_exhaustive]`: build it from [`WriteOptions::default`] and the
/// setters named after the fields; a struct literal does not compile outside this crate.
///
/// ```compile_fail,E0639
/// use sa360_video_sdk::search_ads::WriteOptions;
/// let options = WriteOptions { batch_size: 500, concurrency: 8 };
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct WriteOptions {
    /// Input conversions per batch (one request), 1 ..= 1000. Default 1000 (SA-10).
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

field_setters!(WriteOptions {
    value {
        batch_size => batch_size: usize,
        concurrency => concurrency: usize,
    }
});

impl WriteOptions {
    /// Checks the options: `batch_size` 1 to [`MAX_BATCH_SIZE`], `concurrency`
    /// 1 to [`MAX_CONCURRENCY`]. Inserts and updates call it first; a tool that
    /// takes the options from its user can call it before reading any input.
    ///
    /// ```
    /// use sa360_video_sdk::search_ads::WriteOptions;
    /// let e = WriteOptions::default().batch_size(1001).validate().unwrap_err();
    /// assert!(e.to_string().contains("batch_size"));
    /// ```
    pub fn validate(&self) -> Result<(), Error> {
        if !(1..=MAX_BATCH_SIZE).contains(&self.batch_size) {
            return Err(Error::invalid(
                "batch_size",
                format!("is {}, must be 1 to {MAX_BATCH_SIZE}", self.batch_size),
            ));
        }
        if !(1..=MAX_CONCURRENCY).contains(&self.concurrency) {
            return Err(Error::invalid(
                "concurrency",
                format!("is {}, must be 1 to {MAX_CONCURRENCY}", self.concurrency),
            ));
        }
        Ok(())
    }

    /// Most batches a [`WriteStream`](super::WriteStream) holds at once, in
    /// flight or finished and waiting for an earlier batch: `2 ×
    /// concurrency`. A batch that is slow to finish thus lets the others run
    /// ahead by up to `concurrency` batches before the stream stops reading.
    pub fn max_held_batches(&self) -> usize {
        2 * self.concurrency.max(1)
    }
}

/// How far an insert or update has come, reported after each batch finished
/// (see [`WriteRequest::progress`](super::WriteRequest::progress)).
///
/// A batch finishes when it has its outcomes: answered, failed for good after
/// its retries, refused locally, or not sent after another batch failed with
/// an error that would fail every batch. The counts only grow.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct WriteProgress {
    /// Conversions of the finished batches, whatever their outcome.
    pub conversions_done: usize,
    /// Conversions taken from the input so far (finished or not).
    pub conversions_read: usize,
    /// All conversions of the call, when the input said its exact length
    /// (an iterator whose `size_hint` is exact, such as a `Vec`'s); `None`
    /// for a stream.
    pub conversions_total: Option<usize>,
    /// Batches finished.
    pub batches_done: usize,
}

impl WriteProgress {
    pub(crate) fn new(total: Option<usize>) -> Self {
        Self {
            conversions_done: 0,
            conversions_read: 0,
            conversions_total: total,
            batches_done: 0,
        }
    }
}

/// Receives [`WriteProgress`] reports. It is called on the task that polls
/// the insert or update, once per finished batch and never concurrently, so
/// it should return quickly (move a progress bar, send on a channel).
pub type WriteProgressFn = Arc<dyn Fn(WriteProgress) + Send + Sync>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounds_are_checked() {
        assert!(WriteOptions::default().validate().is_ok());
        for (batch_size, concurrency, field) in [
            (0, 1, "batch_size"),
            (1001, 1, "batch_size"),
            (1, 0, "concurrency"),
            (1, 65, "concurrency"),
        ] {
            match (WriteOptions {
                batch_size,
                concurrency,
            })
            .validate()
            {
                Err(Error::Validation { field: f, .. }) => assert_eq!(f, field),
                other => panic!("{other:?}"),
            }
        }
        assert!(
            WriteOptions {
                batch_size: 1000,
                concurrency: 64
            }
            .validate()
            .is_ok()
        );
        assert_eq!(
            WriteOptions {
                batch_size: 1,
                concurrency: 7
            }
            .max_held_batches(),
            14
        );
    }
}

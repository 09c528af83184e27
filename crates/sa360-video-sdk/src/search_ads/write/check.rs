//! [`InputCheck`]: the local checks of an insert or update, one conversion at
//! a time, without sending anything (a dry run over an input of any length).

use super::super::conversion::Conversion;
use super::super::error::Error;
use super::batching::Batcher;
use super::kind::WriteKind;

/// The checks an insert or update makes before sending (required members,
/// control characters, lengths, and no (owner, conversion id, timestamp)
/// earlier in the same input), applied to conversions shown one at a time, in
/// input order. Memory grows only with the duplicate detector's hashes, never
/// with the conversions.
///
/// ```
/// use chrono::DateTime;
/// use sa360_video_sdk::search_ads::{Conversion, InputCheck, SegmentationType};
/// let mut c = Conversion::new("order-1", DateTime::from_timestamp_millis(1_000).unwrap());
/// c.segmentation_type = Some(SegmentationType::Floodlight);
/// c.click_id = Some("gclid-1".into());
/// let mut check = InputCheck::insert();
/// assert!(check.check(&c).is_ok());
/// assert!(check.check(&c).is_err(), "the same conversion again is a repeat");
/// ```
#[derive(Debug)]
pub struct InputCheck {
    batcher: Batcher,
    next: usize,
}

impl InputCheck {
    /// The checks of [`SearchAdsClient::insert`](super::super::SearchAdsClient::insert).
    pub fn insert() -> Self {
        Self::new(WriteKind::Insert)
    }

    /// The checks of [`SearchAdsClient::update`](super::super::SearchAdsClient::update).
    pub fn update() -> Self {
        Self::new(WriteKind::Update)
    }

    fn new(kind: WriteKind) -> Self {
        Self {
            batcher: Batcher::new(kind, 1),
            next: 0,
        }
    }

    /// Checks the next conversion of the input: `Err` is the
    /// [`Error::Validation`] the write would give it (as
    /// [`Outcome::Invalid`](super::Outcome::Invalid)), with its input index.
    pub fn check(&mut self, conversion: &Conversion) -> Result<(), Error> {
        let index = self.next;
        self.next += 1;
        self.batcher.check(index, conversion)
    }
}

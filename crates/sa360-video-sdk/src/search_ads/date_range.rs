//! [`DateRange`]: an inclusive range of days the API accepts, shared by the v2 read and the
//! Reporting API's report.

use chrono::NaiveDate;

use super::error::Error;
use super::values::{MAX_DATE, MIN_DATE, to_yyyymmdd};

/// An inclusive range of dates, checked against the API's bounds
/// (2009-11-01 ..= 9999-12-31, start not after end).
///
/// ```
/// use chrono::NaiveDate;
/// use sa360_video_sdk::search_ads::DateRange;
/// let d = |y, m, day| NaiveDate::from_ymd_opt(y, m, day).unwrap();
/// let range = DateRange::new(d(2024, 1, 1), d(2024, 1, 31))?;
/// assert_eq!(range.start(), d(2024, 1, 1));
/// assert!(DateRange::new(d(2024, 2, 1), d(2024, 1, 1)).is_err());
/// assert!(DateRange::new(d(2009, 10, 31), d(2024, 1, 1)).is_err());
/// # Ok::<(), sa360_video_sdk::search_ads::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct DateRange {
    start: NaiveDate,
    end: NaiveDate,
}

impl DateRange {
    /// The dates from `start` to `end`, both included.
    pub fn new(start: NaiveDate, end: NaiveDate) -> Result<Self, Error> {
        for (field, date) in [("startDate", start), ("endDate", end)] {
            if !(MIN_DATE..=MAX_DATE).contains(&date) {
                return Err(Error::validation(
                    field,
                    None,
                    format!("is {date}, outside the API's range {MIN_DATE} to {MAX_DATE}"),
                ));
            }
        }
        if start > end {
            return Err(Error::validation(
                "startDate",
                None,
                format!("({start}) is after endDate ({end}): swap them"),
            ));
        }
        Ok(Self { start, end })
    }

    /// A single day.
    pub fn day(date: NaiveDate) -> Result<Self, Error> {
        Self::new(date, date)
    }

    /// The last `days` days up to and including today (UTC, the day the Reporting API's window is
    /// counted from): `last_days(30)` is today and the 29 days before it. `days` of 0 is refused
    /// (a validation error naming `days`).
    ///
    /// Not the span of the query language's `DURING LAST_30_DAYS`, which excludes today (the 30
    /// days before it, in the account's time zone; see
    /// [`DuringRange`](crate::search_ads::reporting::DuringRange)): today's conversions are in
    /// `last_days(30)` and not in `LAST_30_DAYS`.
    ///
    /// ```
    /// use sa360_video_sdk::search_ads::DateRange;
    /// let dates = DateRange::last_days(30)?;
    /// assert_eq!((dates.end() - dates.start()).num_days(), 29);
    /// assert!(DateRange::last_days(0).is_err());
    /// # Ok::<(), sa360_video_sdk::search_ads::Error>(())
    /// ```
    pub fn last_days(days: u32) -> Result<Self, Error> {
        let today =
            chrono::DateTime::<chrono::Utc>::from(std::time::SystemTime::now()).date_naive();
        Self::last_days_to(today, days)
    }

    /// The `days` days that end on `end`, both included.
    fn last_days_to(end: NaiveDate, days: u32) -> Result<Self, Error> {
        let back = days.checked_sub(1).ok_or_else(|| {
            Error::validation("days", None, "is 0: a date range holds at least one day")
        })?;
        let start = end
            .checked_sub_days(chrono::Days::new(u64::from(back)))
            .unwrap_or(MIN_DATE);
        Self::new(start, end)
    }

    /// The first date.
    pub fn start(&self) -> NaiveDate {
        self.start
    }

    /// The last date.
    pub fn end(&self) -> NaiveDate {
        self.end
    }

    pub(crate) fn wire(&self) -> (i32, i32) {
        (to_yyyymmdd(self.start), to_yyyymmdd(self.end))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn last_days_ends_on_the_day_and_holds_that_many_days() {
        let end = NaiveDate::from_ymd_opt(2026, 3, 1).unwrap();
        let range = DateRange::last_days_to(end, 30).unwrap();
        assert_eq!(range.end(), end);
        assert_eq!(range.start(), NaiveDate::from_ymd_opt(2026, 1, 31).unwrap());
        let one = DateRange::last_days_to(end, 1).unwrap();
        assert_eq!((one.start(), one.end()), (end, end));
        let zero = DateRange::last_days_to(end, 0).unwrap_err();
        assert!(zero.to_string().contains("`days`"), "{zero}");
    }

    #[test]
    fn date_ranges_are_checked() {
        let d = |y, m, day| NaiveDate::from_ymd_opt(y, m, day).unwrap();
        assert_eq!(
            DateRange::new(d(2009, 11, 1), d(9999, 12, 31))
                .unwrap()
                .wire(),
            (20091101, 99991231)
        );
        assert!(DateRange::new(d(2009, 10, 31), d(2010, 1, 1)).is_err());
        assert!(DateRange::day(d(2024, 5, 6)).is_ok());
    }
}

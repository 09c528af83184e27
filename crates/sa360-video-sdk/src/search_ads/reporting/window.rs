//! The Reporting API's 60-day window of event-level conversion data, and the split of a date
//! range into shards.

use chrono::{Days, NaiveDate};

use super::super::date_range::DateRange;
use super::super::error::Error;

/// Days of event-level conversion data the Reporting API keeps, today included (SR-11).
pub const CONVERSION_WINDOW_DAYS: u64 = 60;

/// The first date of the 60-day window on `today` (UTC).
pub(crate) fn window_start(today: NaiveDate) -> NaiveDate {
    today
        .checked_sub_days(Days::new(CONVERSION_WINDOW_DAYS - 1))
        .unwrap_or(today)
}

/// Checks that `dates` lies in the Reporting API's window on `today` (UTC), before sending.
pub(crate) fn check_window(dates: DateRange, today: NaiveDate) -> Result<(), Error> {
    let first = window_start(today);
    if dates.start() < first {
        return Err(Error::validation(
            "startDate",
            None,
            format!(
                "is {}, outside the Reporting API's {CONVERSION_WINDOW_DAYS}-day window for \
                 conversions: the earliest date it serves today ({today}, UTC) is {first}. \
                 Start at {first} or later",
                dates.start()
            ),
        ));
    }
    Ok(())
}

/// Splits `dates` into consecutive shards of `days` days.
pub(crate) fn shards(dates: DateRange, days: u32) -> Vec<(NaiveDate, NaiveDate)> {
    let mut out = Vec::new();
    let mut start = dates.start();
    loop {
        let end = start
            .checked_add_days(Days::new(u64::from(days.max(1)) - 1))
            .map_or(dates.end(), |e| e.min(dates.end()));
        out.push((start, end));
        match end.succ_opt() {
            Some(next) if end < dates.end() => start = next,
            _ => return out,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(y: i32, m: u32, day: u32) -> NaiveDate {
        NaiveDate::from_ymd_opt(y, m, day).unwrap()
    }

    #[test]
    fn shards_cover_the_range_once() {
        let range = DateRange::new(d(2026, 1, 1), d(2026, 1, 10)).unwrap();
        assert_eq!(
            shards(range, 4),
            vec![
                (d(2026, 1, 1), d(2026, 1, 4)),
                (d(2026, 1, 5), d(2026, 1, 8)),
                (d(2026, 1, 9), d(2026, 1, 10))
            ]
        );
        assert_eq!(shards(range, 100), vec![(d(2026, 1, 1), d(2026, 1, 10))]);
        let day = DateRange::day(d(2026, 1, 1)).unwrap();
        assert_eq!(shards(day, 1), vec![(d(2026, 1, 1), d(2026, 1, 1))]);
    }

    #[test]
    fn the_window_is_sixty_days_including_today() {
        let today = d(2026, 11, 23);
        assert_eq!(window_start(today), d(2026, 9, 25));
        assert!(check_window(DateRange::new(d(2026, 9, 25), today).unwrap(), today).is_ok());
        let e = check_window(DateRange::new(d(2026, 9, 24), today).unwrap(), today)
            .unwrap_err()
            .to_string();
        assert!(e.contains("startDate") && e.contains("2026-09-25"), "{e}");
    }
}

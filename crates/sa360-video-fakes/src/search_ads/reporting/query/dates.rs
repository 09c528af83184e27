//! Date ranges ("Date ranges", <https://developers.google.com/search-ads/reporting/query/date-ranges>,
//! and GRAM): the predefined ranges of `DURING`, computed from "today" in the account's time zone,
//! the first day of a week / month / quarter (`MISALIGNED_DATE_FOR_FILTER`), and the range a
//! query's core-date filters leave (`DATE_RANGE_TOO_NARROW` when it is empty).

use chrono::{Datelike, Days, Months, NaiveDate, Weekday};

use super::error::QueryError;
use super::eval::{Const, Filter};
use super::parser::Op;

/// The predefined ranges, as GRAM lists them.
pub(crate) const RANGES: &[&str] = &[
    "TODAY",
    "YESTERDAY",
    "LAST_7_DAYS",
    "LAST_14_DAYS",
    "LAST_30_DAYS",
    "LAST_BUSINESS_WEEK",
    "THIS_MONTH",
    "LAST_MONTH",
    "THIS_WEEK_SUN_TODAY",
    "THIS_WEEK_MON_TODAY",
    "LAST_WEEK_SUN_SAT",
    "LAST_WEEK_MON_SUN",
];

fn back(day: NaiveDate, n: u64) -> NaiveDate {
    day.checked_sub_days(Days::new(n)).unwrap_or(NaiveDate::MIN)
}

fn ahead(day: NaiveDate, n: u64) -> NaiveDate {
    day.checked_add_days(Days::new(n)).unwrap_or(NaiveDate::MAX)
}

fn week_start(day: NaiveDate, first: Weekday) -> NaiveDate {
    back(day, u64::from(day.weekday().days_since(first)))
}

fn month_start(day: NaiveDate) -> NaiveDate {
    day.with_day(1).unwrap_or(day)
}

fn quarter_start(day: NaiveDate) -> NaiveDate {
    let month = (day.month0() / 3) * 3 + 1;
    NaiveDate::from_ymd_opt(day.year(), month, 1).unwrap_or(day)
}

fn last_of_month(day: NaiveDate) -> NaiveDate {
    month_start(day)
        .checked_add_months(Months::new(1))
        .map_or(NaiveDate::MAX, |d| back(d, 1))
}

/// The inclusive range a predefined range stands for on `today`; `None` for an unknown name.
/// The `LAST_n_DAYS` ranges end yesterday ("not including today").
pub(crate) fn during(name: &str, today: NaiveDate) -> Option<(NaiveDate, NaiveDate)> {
    let yesterday = back(today, 1);
    Some(match name.to_ascii_uppercase().as_str() {
        "TODAY" => (today, today),
        "YESTERDAY" => (yesterday, yesterday),
        "LAST_7_DAYS" => (back(today, 7), yesterday),
        "LAST_14_DAYS" => (back(today, 14), yesterday),
        "LAST_30_DAYS" => (back(today, 30), yesterday),
        "LAST_BUSINESS_WEEK" => {
            let monday = back(week_start(today, Weekday::Mon), 7);
            (monday, ahead(monday, 4))
        }
        "THIS_MONTH" => (month_start(today), last_of_month(today)),
        "LAST_MONTH" => {
            let last = back(month_start(today), 1);
            (month_start(last), last)
        }
        "THIS_WEEK_SUN_TODAY" => (week_start(today, Weekday::Sun), today),
        "THIS_WEEK_MON_TODAY" => (week_start(today, Weekday::Mon), today),
        "LAST_WEEK_SUN_SAT" => {
            let sunday = back(week_start(today, Weekday::Sun), 7);
            (sunday, ahead(sunday, 6))
        }
        "LAST_WEEK_MON_SUN" => {
            let monday = back(week_start(today, Weekday::Mon), 7);
            (monday, ahead(monday, 6))
        }
        _ => return None,
    })
}

/// The period a core date segment groups days into.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Period {
    Day,
    Week,
    Month,
    Quarter,
    Year,
}

impl Period {
    /// The period of a core date segment (`segments.date` → Day, …).
    pub(crate) fn of(field: &str) -> Option<Self> {
        Some(match field {
            "segments.date" => Period::Day,
            "segments.week" => Period::Week,
            "segments.month" => Period::Month,
            "segments.quarter" => Period::Quarter,
            "segments.year" => Period::Year,
            _ => return None,
        })
    }

    /// The first day of the period holding `day` (weeks start on Monday, as `segments.week`).
    pub(crate) fn start(self, day: NaiveDate) -> NaiveDate {
        match self {
            Period::Day => day,
            Period::Week => week_start(day, Weekday::Mon),
            Period::Month => month_start(day),
            Period::Quarter => quarter_start(day),
            Period::Year => NaiveDate::from_ymd_opt(day.year(), 1, 1).unwrap_or(day),
        }
    }

    /// The last day of the period starting on `start`.
    fn end(self, start: NaiveDate) -> NaiveDate {
        match self {
            Period::Day => start,
            Period::Week => ahead(start, 6),
            Period::Month => last_of_month(start),
            Period::Quarter => start
                .checked_add_months(Months::new(3))
                .map_or(NaiveDate::MAX, |d| back(d, 1)),
            Period::Year => NaiveDate::from_ymd_opt(start.year(), 12, 31).unwrap_or(start),
        }
    }
}

/// `MISALIGNED_DATE_FOR_FILTER` when a week / month / quarter filter's date is not the first day of
/// its period.
pub(crate) fn check_aligned(field: &str, period: Period, day: NaiveDate) -> Result<(), QueryError> {
    if matches!(period, Period::Week | Period::Month | Period::Quarter) && period.start(day) != day
    {
        return Err(QueryError::new(
            "MISALIGNED_DATE_FOR_FILTER",
            format!(
                "{field} takes the first day of a period: {day} should be {}.",
                period.start(day)
            ),
        )
        .at(day.to_string()));
    }
    Ok(())
}

/// The first and last day the core-date filters allow (`None`: no bound on that side).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Bounds {
    pub start: Option<NaiveDate>,
    pub end: Option<NaiveDate>,
}

impl Bounds {
    /// Whether both ends are bounded (a "finite date filter").
    pub(crate) fn finite(&self) -> bool {
        self.start.is_some() && self.end.is_some()
    }

    fn from(&mut self, day: NaiveDate) {
        self.start = Some(self.start.map_or(day, |s| s.max(day)));
    }

    fn to(&mut self, day: NaiveDate) {
        self.end = Some(self.end.map_or(day, |e| e.min(day)));
    }
}

fn day_of(period: Period, c: &Const) -> Option<NaiveDate> {
    match (period, c) {
        (Period::Year, Const::Int(y)) => NaiveDate::from_ymd_opt(i32::try_from(*y).ok()?, 1, 1),
        (_, Const::Date(d)) => Some(*d),
        _ => None,
    }
}

/// The range the filters on core date segments leave; `DATE_RANGE_TOO_NARROW` when they leave
/// none ("Filters on date/week/month/quarter have a start date after end date").
pub(crate) fn bounds(filters: &[Filter]) -> Result<Bounds, QueryError> {
    let mut b = Bounds::default();
    for f in filters {
        let Some(period) = Period::of(&f.field) else {
            continue;
        };
        let days: Vec<NaiveDate> = f.values.iter().filter_map(|c| day_of(period, c)).collect();
        let (Some(&lo), Some(&hi)) = (days.iter().min(), days.iter().max()) else {
            continue;
        };
        match f.op {
            Op::Eq | Op::In => {
                b.from(lo);
                b.to(period.end(hi));
            }
            Op::Between => {
                if let [a, z] = days.as_slice() {
                    b.from(*a);
                    b.to(period.end(*z));
                }
            }
            Op::During => {
                b.from(lo);
                b.to(hi);
            }
            Op::Ge => b.from(lo),
            Op::Gt => b.from(ahead(period.end(lo), 1)),
            Op::Le => b.to(period.end(lo)),
            Op::Lt => b.to(back(lo, 1)),
            _ => {}
        }
    }
    if let (Some(s), Some(e)) = (b.start, b.end)
        && s > e
    {
        return Err(QueryError::new(
            "DATE_RANGE_TOO_NARROW",
            format!("The date filters leave no day: the range starts {s} and ends {e}."),
        ));
    }
    Ok(b)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(s: &str) -> NaiveDate {
        s.parse().unwrap()
    }

    #[test]
    fn predefined_ranges_on_a_thursday() {
        // 2026-11-26 is a Thursday.
        let today = d("2026-11-26");
        let r = |n| {
            let (a, b) = during(n, today).unwrap();
            (a.to_string(), b.to_string())
        };
        let p = |a: &str, b: &str| (a.to_owned(), b.to_owned());
        assert_eq!(r("TODAY"), p("2026-11-26", "2026-11-26"));
        assert_eq!(r("yesterday"), p("2026-11-25", "2026-11-25"));
        assert_eq!(r("LAST_7_DAYS"), p("2026-11-19", "2026-11-25"));
        assert_eq!(r("LAST_14_DAYS"), p("2026-11-12", "2026-11-25"));
        assert_eq!(r("LAST_30_DAYS"), p("2026-10-27", "2026-11-25"));
        assert_eq!(r("LAST_BUSINESS_WEEK"), p("2026-11-16", "2026-11-20"));
        assert_eq!(r("THIS_MONTH"), p("2026-11-01", "2026-11-30"));
        assert_eq!(r("LAST_MONTH"), p("2026-10-01", "2026-10-31"));
        assert_eq!(r("THIS_WEEK_SUN_TODAY"), p("2026-11-22", "2026-11-26"));
        assert_eq!(r("THIS_WEEK_MON_TODAY"), p("2026-11-23", "2026-11-26"));
        assert_eq!(r("LAST_WEEK_SUN_SAT"), p("2026-11-15", "2026-11-21"));
        assert_eq!(r("LAST_WEEK_MON_SUN"), p("2026-11-16", "2026-11-22"));
        assert!(during("LAST_8_DAYS", today).is_none());
        for name in RANGES {
            let (a, b) = during(name, today).unwrap();
            assert!(a <= b, "{name}");
        }
    }

    #[test]
    fn ranges_at_week_and_year_edges() {
        // A Sunday and a Monday, across a year boundary.
        let sunday = d("2027-01-03");
        assert_eq!(during("THIS_WEEK_SUN_TODAY", sunday).unwrap().0, sunday);
        assert_eq!(
            during("THIS_WEEK_MON_TODAY", sunday).unwrap().0,
            d("2026-12-28")
        );
        assert_eq!(
            during("LAST_MONTH", sunday).unwrap(),
            (d("2026-12-01"), d("2026-12-31"))
        );
        let monday = d("2027-01-04");
        assert_eq!(
            during("THIS_WEEK_MON_TODAY", monday).unwrap(),
            (monday, monday)
        );
        assert_eq!(
            during("LAST_BUSINESS_WEEK", monday).unwrap(),
            (d("2026-12-28"), d("2027-01-01"))
        );
    }

    #[test]
    fn alignment_of_week_month_quarter() {
        let ok = |f: &str, s: &str| check_aligned(f, Period::of(f).unwrap(), d(s)).is_ok();
        assert!(ok("segments.month", "2021-05-01"));
        assert!(!ok("segments.month", "2021-05-02"));
        assert!(ok("segments.week", "2026-11-23"));
        assert!(!ok("segments.week", "2026-11-22"));
        assert!(ok("segments.quarter", "2026-10-01"));
        assert!(!ok("segments.quarter", "2026-11-01"));
        assert!(ok("segments.date", "2026-11-22"));
    }

    #[test]
    fn bounds_of_filters() {
        let f = |field: &str, op, values| Filter {
            field: field.into(),
            op,
            values,
        };
        let b = bounds(&[
            f("segments.date", Op::Ge, vec![Const::Date(d("2019-01-01"))]),
            f("segments.date", Op::Le, vec![Const::Date(d("2019-01-31"))]),
        ])
        .unwrap();
        assert_eq!(
            (b.start, b.end),
            (Some(d("2019-01-01")), Some(d("2019-01-31")))
        );
        let b = bounds(&[f(
            "segments.month",
            Op::Eq,
            vec![Const::Date(d("2021-05-01"))],
        )])
        .unwrap();
        assert_eq!(
            (b.start, b.end),
            (Some(d("2021-05-01")), Some(d("2021-05-31")))
        );
        let b = bounds(&[f("segments.year", Op::Eq, vec![Const::Int(2026)])]).unwrap();
        assert_eq!(
            (b.start, b.end),
            (Some(d("2026-01-01")), Some(d("2026-12-31")))
        );
        let b = bounds(&[f(
            "segments.date",
            Op::Lt,
            vec![Const::Date(d("2019-01-31"))],
        )])
        .unwrap();
        assert_eq!((b.start, b.end), (None, Some(d("2019-01-30"))));
        assert!(!b.finite());
        let e = bounds(&[
            f("segments.date", Op::Gt, vec![Const::Date(d("2019-01-31"))]),
            f("segments.date", Op::Lt, vec![Const::Date(d("2019-01-31"))]),
        ])
        .unwrap_err();
        assert_eq!(e.code, "DATE_RANGE_TOO_NARROW");
    }
}

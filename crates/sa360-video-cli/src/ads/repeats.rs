//! Words for a row the SDK refuses as a repeat (the same advertiser,
//! `conversionId` and `conversionTimestamp` as an earlier row): the line it
//! repeats, the columns that differ, and what fixes it. The rule itself is
//! the SDK's; this only remembers where each key was first seen, for the
//! first [`REMEMBERED_KEYS`] rows (about 10 MB), so the memory of a long file
//! stays bounded; a later repeat is worded without its earlier line.

use std::collections::HashMap;
use std::collections::hash_map::Entry;
use std::hash::{DefaultHasher, Hash, Hasher};

use sa360_video_sdk::search_ads::Conversion;

/// Rows whose key and values are remembered.
pub const REMEMBERED_KEYS: usize = 200_000;

/// How a compared column is read from a row.
type Read = fn(&Conversion) -> String;

/// The columns compared, as the input names them, and how each is read.
const COLUMNS: [(&str, Read); 12] = [
    ("segmentationType", |c| format!("{:?}", c.segmentation_type)),
    ("segmentationId", |c| format!("{:?}", c.segmentation_id)),
    ("type", |c| format!("{:?}", c.conversion_type)),
    ("state", |c| format!("{:?}", c.state)),
    ("revenueMicros", |c| format!("{:?}", c.revenue_micros)),
    ("currencyCode", |c| format!("{:?}", c.currency_code)),
    ("quantityMillis", |c| format!("{:?}", c.quantity_millis)),
    ("countMillis", |c| format!("{:?}", c.count_millis)),
    ("clickId", |c| format!("{:?}", c.click_id)),
    ("floodlightOrderId", |c| {
        format!("{:?}", c.floodlight_order_id)
    }),
    ("customDimension", |c| format!("{:?}", c.custom_dimensions)),
    ("customMetric", |c| format!("{:?}", c.custom_metrics)),
];

/// Where a key was first seen, and a 16-bit digest of each compared column.
#[derive(Debug)]
struct First {
    line: u64,
    values: [u16; COLUMNS.len()],
}

/// The earlier row a row repeats.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Repeat {
    /// Its line.
    pub line: u64,
    /// The compared columns whose values differ.
    pub differ: Vec<&'static str>,
}

/// The first line of each key, for the first [`REMEMBERED_KEYS`] rows.
#[derive(Debug, Default)]
pub struct Repeats {
    first: HashMap<u64, First>,
}

fn digest(value: &impl Hash) -> u64 {
    let mut h = DefaultHasher::new();
    value.hash(&mut h);
    h.finish()
}

impl Repeats {
    /// Notes the row at `line`; returns the earlier row with its key, if one was remembered.
    pub fn note(&mut self, line: u64, c: &Conversion) -> Option<Repeat> {
        let owner = match (&c.advertiser_id, &c.customer_id) {
            (Some(a), _) => a.to_string(),
            (None, Some(x)) => x.to_string(),
            (None, None) => String::new(),
        };
        let key = digest(&(
            owner,
            c.conversion_id.as_deref().map(str::trim),
            c.conversion_timestamp.map(|t| t.timestamp_millis()),
        ));
        let values = COLUMNS.map(|(_, read)| digest(&read(c)) as u16);
        let room = self.first.len() < REMEMBERED_KEYS;
        match self.first.entry(key) {
            Entry::Occupied(first) => {
                let first = first.get();
                let differ = COLUMNS
                    .iter()
                    .zip(first.values.iter().zip(values.iter()))
                    .filter(|(_, (a, b))| a != b)
                    .map(|((name, _), _)| *name)
                    .collect();
                Some(Repeat {
                    line: first.line,
                    differ,
                })
            }
            Entry::Vacant(slot) => {
                if room {
                    slot.insert(First { line, values });
                }
                None
            }
        }
    }
}

/// The reason of a row refused as a repeat, in words.
pub fn reason(repeat: Option<&Repeat>) -> String {
    let fix = "remove one of the two rows; to change a conversion already stored, upload the changed row with --update";
    match repeat {
        Some(Repeat { line, differ }) if differ.is_empty() => format!(
            "repeats line {line}: the same conversion (advertiser, conversionId, conversionTimestamp and the other values); a conversion is uploaded once per file: remove this row"
        ),
        Some(Repeat { line, differ }) => format!(
            "repeats line {line}'s advertiser, conversionId and conversionTimestamp with another {}; a conversion is uploaded once per file: {fix}",
            differ.join(", ")
        ),
        None => format!(
            "repeats an earlier row's advertiser, conversionId and conversionTimestamp; a conversion is uploaded once per file: {fix}"
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::DateTime;
    use sa360_video_sdk::search_ads::Micros;

    fn row(id: &str, revenue: i64) -> Conversion {
        let mut c = Conversion::new(id, DateTime::from_timestamp_millis(1_000).unwrap());
        c.revenue_micros = Micros::from_units(revenue);
        c
    }

    #[test]
    fn a_repeat_names_the_earlier_line_and_the_columns_that_differ() {
        let mut r = Repeats::default();
        assert_eq!(r.note(2, &row("a", 1)), None);
        assert_eq!(r.note(3, &row("b", 1)), None);
        let same = r.note(7, &row("a", 1)).unwrap();
        assert_eq!(
            same,
            Repeat {
                line: 2,
                differ: vec![]
            }
        );
        assert!(reason(Some(&same)).starts_with("repeats line 2: the same conversion"));
        let other = r.note(9, &row("a", 5)).unwrap();
        assert_eq!(other.differ, vec!["revenueMicros"]);
        let text = reason(Some(&other));
        assert!(
            text.contains("line 2's") && text.contains("another revenueMicros"),
            "{text}"
        );
        assert!(text.contains("--update"), "{text}");
    }
}

//! Int64 values of a report row, for a caller's own row struct.
//!
//! The Reporting API sends its rows in Google's JSON mapping of protocol buffers, where an int64
//! value (`campaign.id`, `metrics.impressions`, `metrics.cost_micros`, …) is a JSON *string* of
//! digits and a value equal to zero is left out
//! (<https://protobuf.dev/programming-guides/json/>). A plain `i64` member of a `serde` struct
//! therefore fails on the first row. This module reads such a member as `i64` the way the
//! conversion report does (a string of digits or a JSON number; anything else is an error that
//! names the value):
//!
//! ```
//! use sa360_video_sdk::search_ads::reporting::int64;
//! use serde::Deserialize;
//!
//! #[derive(Deserialize)]
//! #[serde(rename_all = "camelCase")]
//! struct Metrics {
//!     // Zero is left out of the JSON: `default` reads it as 0.
//!     #[serde(default, with = "int64")]
//!     impressions: i64,
//!     #[serde(default, with = "int64")]
//!     cost_micros: i64,
//! }
//!
//! #[derive(Deserialize)]
//! struct Campaign {
//!     // Absent and present-but-zero told apart.
//!     #[serde(default, with = "int64::option")]
//!     id: Option<i64>,
//! }
//!
//! let m: Metrics = serde_json::from_str(r#"{"impressions": "1200"}"#).unwrap();
//! assert_eq!((m.impressions, m.cost_micros), (1200, 0));
//! let c: Campaign = serde_json::from_str(r#"{"id": "9007199254740993"}"#).unwrap();
//! assert_eq!(c.id, Some(9_007_199_254_740_993));
//! assert!(serde_json::from_str::<Metrics>(r#"{"impressions": "12e3"}"#).is_err());
//! ```
//!
//! Serializing writes the string form, as the service does, so a row read this way can be written
//! back as the same JSON.

use std::fmt;

use sa360_reporting_client::I64String;
use serde::de::{self, Visitor};
use serde::{Deserialize, Deserializer, Serializer};

/// An int64 member, read as the spec's `I64String` reads it (a string of digits or a JSON
/// number; anything else is the error `I64String` gives), with plain digits read without
/// `str::parse` (the conversion report reads six a row).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Int64(i64);

impl Int64 {
    /// The value.
    pub(crate) fn get(self) -> i64 {
        self.0
    }
}

impl<'de> Deserialize<'de> for Int64 {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Int64Visitor;
        impl Visitor<'_> for Int64Visitor {
            type Value = Int64;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a 64-bit integer as a string of digits or a number")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Int64, E> {
                // Up to 18 digits cannot overflow.
                if (1..=18).contains(&v.len()) && v.bytes().all(|b| b.is_ascii_digit()) {
                    let n = v.bytes().fold(0i64, |n, b| n * 10 + i64::from(b - b'0'));
                    return Ok(Int64(n));
                }
                v.parse::<I64String>()
                    .map(|n| Int64(n.get()))
                    .map_err(E::custom)
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Int64, E> {
                Ok(Int64(v))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Int64, E> {
                i64::try_from(v)
                    .map(Int64)
                    .map_err(|_| E::invalid_value(de::Unexpected::Unsigned(v), &self))
            }
        }
        d.deserialize_any(Int64Visitor)
    }
}

/// Reads an int64 member (a string of digits, or a JSON number) as `i64`; use with
/// `#[serde(default, with = "int64")]` so that a value of zero, which the service leaves out,
/// reads as 0.
///
/// # Errors
///
/// A value that is not an integer in `i64`'s range (text, a fraction, an exponent, `null`).
pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<i64, D::Error> {
    Int64::deserialize(d).map(Int64::get)
}

/// Writes an `i64` as the service writes int64 values: a JSON string of digits.
///
/// # Errors
///
/// Only the serializer's own.
// `serialize_with` hands the value by reference.
#[allow(clippy::trivially_copy_pass_by_ref)]
pub fn serialize<S: Serializer>(value: &i64, s: S) -> Result<S::Ok, S::Error> {
    s.collect_str(value)
}

/// The same for `Option<i64>` members: `null` or absent (with `#[serde(default)]`) is `None`.
///
/// ```
/// use sa360_video_sdk::search_ads::reporting::int64;
/// #[derive(serde::Deserialize)]
/// struct AdGroup {
///     #[serde(default, with = "int64::option")]
///     cpc_bid_micros: Option<i64>,
/// }
/// let a: AdGroup = serde_json::from_str(r#"{"cpc_bid_micros": null}"#).unwrap();
/// assert_eq!(a.cpc_bid_micros, None);
/// ```
pub mod option {
    use serde::{Deserialize, Deserializer, Serializer};

    use super::Int64;

    /// Reads an optional int64 member; `null` is `None`.
    ///
    /// # Errors
    ///
    /// A present value that is not an integer in `i64`'s range.
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<i64>, D::Error> {
        Option::<Int64>::deserialize(d).map(|v| v.map(Int64::get))
    }

    /// Writes `Some` as a JSON string of digits and `None` as `null`.
    ///
    /// # Errors
    ///
    /// Only the serializer's own.
    // `serialize_with` hands the value by reference.
    #[allow(clippy::ref_option)]
    pub fn serialize<S: Serializer>(value: &Option<i64>, s: S) -> Result<S::Ok, S::Error> {
        match value {
            Some(v) => s.collect_str(v),
            None => s.serialize_none(),
        }
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;
    use serde::{Deserialize, Serialize};

    #[derive(Debug, PartialEq, Deserialize, Serialize)]
    struct Row {
        #[serde(default, with = "super")]
        n: i64,
        #[serde(default, with = "super::option")]
        o: Option<i64>,
    }

    fn read(json: &str) -> Result<Row, serde_json::Error> {
        serde_json::from_str(json)
    }

    #[test]
    fn strings_numbers_and_absence_read_as_the_service_means_them() {
        assert_eq!(
            read(r#"{"n":"42","o":"-7"}"#).unwrap(),
            Row { n: 42, o: Some(-7) }
        );
        assert_eq!(
            read(r#"{"n":42,"o":7}"#).unwrap(),
            Row { n: 42, o: Some(7) }
        );
        assert_eq!(read("{}").unwrap(), Row { n: 0, o: None });
        assert_eq!(read(r#"{"o":null}"#).unwrap(), Row { n: 0, o: None });
        let max = read(r#"{"n":"9223372036854775807"}"#).unwrap();
        assert_eq!(max.n, i64::MAX);
        let min = read(r#"{"n":"-9223372036854775808"}"#).unwrap();
        assert_eq!(min.n, i64::MIN);
    }

    #[test]
    fn anything_else_is_an_error_that_names_the_value() {
        for bad in [
            r#"{"n":"9223372036854775808"}"#,
            r#"{"n":"1.5"}"#,
            r#"{"n":"12e3"}"#,
            r#"{"n":" 1"}"#,
            r#"{"n":""}"#,
            r#"{"n":1.5}"#,
            r#"{"n":18446744073709551615}"#,
            r#"{"n":null}"#,
            r#"{"n":true}"#,
            r#"{"o":"x"}"#,
        ] {
            let err = read(bad).expect_err(bad).to_string();
            assert!(!err.is_empty(), "{bad}: {err}");
        }
        let err = read(r#"{"n":"12x"}"#).unwrap_err().to_string();
        assert!(err.contains("12x"), "{err}");
    }

    #[test]
    fn writing_gives_the_services_string_form() {
        let row = Row {
            n: -3,
            o: Some(9_007_199_254_740_993),
        };
        let json = serde_json::to_string(&row).unwrap();
        assert_eq!(json, r#"{"n":"-3","o":"9007199254740993"}"#);
        assert_eq!(read(&json).unwrap(), row);
        let none = serde_json::to_string(&Row { n: 0, o: None }).unwrap();
        assert_eq!(none, r#"{"n":"0","o":null}"#);
    }

    proptest! {
        #[test]
        fn every_i64_reads_back_from_both_forms(n in any::<i64>()) {
            prop_assert_eq!(read(&format!(r#"{{"n":"{n}"}}"#)).unwrap().n, n);
            prop_assert_eq!(read(&format!(r#"{{"n":{n}}}"#)).unwrap().n, n);
        }
    }
}

//! [`I64String`]: a 64-bit integer carried in JSON as a string of digits.

use std::fmt;
use std::num::ParseIntError;
use std::str::FromStr;

use schemars::JsonSchema;
use schemars::r#gen::SchemaGenerator;
use schemars::schema::{InstanceType, Schema, SchemaObject};
use serde::de::{self, Visitor};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A 64-bit integer that the API carries as a JSON string of digits
/// (`{type: string, format: int64}`), e.g. `"20700000001"`.
///
/// Serializes as a string; deserializes from a string of digits **or** a JSON
/// number (servers sometimes send numbers). Every such schema of the
/// search-ads spec, including path and query parameters, is generated as this
/// type.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct I64String(pub i64);

impl I64String {
    /// Wrap a value.
    pub const fn new(value: i64) -> Self {
        Self(value)
    }

    /// The wrapped value.
    pub const fn get(self) -> i64 {
        self.0
    }
}

/// Error parsing an [`I64String`] from text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseI64StringError {
    input: String,
    source: ParseIntError,
}

impl fmt::Display for ParseI64StringError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "invalid int64 string {:?}: {}", self.input, self.source)
    }
}

impl std::error::Error for ParseI64StringError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.source)
    }
}

impl FromStr for I64String {
    type Err = ParseI64StringError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        s.parse::<i64>()
            .map(Self)
            .map_err(|source| ParseI64StringError {
                input: s.to_owned(),
                source,
            })
    }
}

impl TryFrom<&str> for I64String {
    type Error = ParseI64StringError;

    fn try_from(s: &str) -> Result<Self, Self::Error> {
        s.parse()
    }
}

impl TryFrom<String> for I64String {
    type Error = ParseI64StringError;

    fn try_from(s: String) -> Result<Self, Self::Error> {
        s.parse()
    }
}

impl TryFrom<&String> for I64String {
    type Error = ParseI64StringError;

    fn try_from(s: &String) -> Result<Self, Self::Error> {
        s.parse()
    }
}

impl fmt::Display for I64String {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.0, f)
    }
}

impl From<i64> for I64String {
    fn from(value: i64) -> Self {
        Self(value)
    }
}

impl From<I64String> for i64 {
    fn from(value: I64String) -> Self {
        value.0
    }
}

impl Serialize for I64String {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(&self.0)
    }
}

struct I64StringVisitor;

impl Visitor<'_> for I64StringVisitor {
    type Value = I64String;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a 64-bit integer as a string of digits or a number")
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
        v.parse().map_err(E::custom)
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Self::Value, E> {
        Ok(I64String(v))
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Self::Value, E> {
        i64::try_from(v)
            .map(I64String)
            .map_err(|_| E::invalid_value(de::Unexpected::Unsigned(v), &self))
    }

    fn visit_i128<E: de::Error>(self, v: i128) -> Result<Self::Value, E> {
        i64::try_from(v)
            .map(I64String)
            .map_err(|_| E::invalid_value(de::Unexpected::Other("128-bit integer"), &self))
    }

    fn visit_u128<E: de::Error>(self, v: u128) -> Result<Self::Value, E> {
        i64::try_from(v)
            .map(I64String)
            .map_err(|_| E::invalid_value(de::Unexpected::Other("128-bit integer"), &self))
    }
}

impl<'de> Deserialize<'de> for I64String {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(I64StringVisitor)
    }
}

impl JsonSchema for I64String {
    fn is_referenceable() -> bool {
        false
    }

    fn schema_name() -> String {
        "I64String".to_owned()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        SchemaObject {
            instance_type: Some(InstanceType::String.into()),
            format: Some("int64".to_owned()),
            ..SchemaObject::default()
        }
        .into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn serializes_as_string() {
        assert_eq!(serde_json::to_value(I64String(42)).unwrap(), json!("42"));
        assert_eq!(
            serde_json::to_string(&I64String(i64::MIN)).unwrap(),
            "\"-9223372036854775808\""
        );
    }

    #[test]
    fn deserializes_from_string_or_number() {
        let from_str: I64String = serde_json::from_value(json!("9007199254740993")).unwrap();
        assert_eq!(from_str, I64String(9_007_199_254_740_993));
        let from_num: I64String = serde_json::from_value(json!(-7)).unwrap();
        assert_eq!(from_num, I64String(-7));
        let max: I64String = serde_json::from_str("9223372036854775807").unwrap();
        assert_eq!(max.get(), i64::MAX);
    }

    #[test]
    fn rejects_non_integers() {
        for bad in [
            json!("12a"),
            json!(""),
            json!(1.5),
            json!(true),
            json!(null),
            json!("1e3"),
        ] {
            assert!(
                serde_json::from_value::<I64String>(bad.clone()).is_err(),
                "{bad}"
            );
        }
        assert!(serde_json::from_str::<I64String>("9223372036854775808").is_err());
        assert!(serde_json::from_str::<I64String>("\"9223372036854775808\"").is_err());
    }

    #[test]
    fn round_trips_through_text() {
        let v: I64String = "-123".parse().unwrap();
        assert_eq!(v.to_string(), "-123");
        assert_eq!(i64::from(v), -123);
        assert_eq!(I64String::from(5), I64String::new(5));
        assert_eq!(I64String::try_from("7").unwrap(), I64String(7));
        let err = "x".parse::<I64String>().unwrap_err();
        assert_eq!(
            err.to_string(),
            "invalid int64 string \"x\": invalid digit found in string"
        );
    }

    #[test]
    fn orders_numerically() {
        let mut v = vec![I64String(10), I64String(-1), I64String(2)];
        v.sort();
        assert_eq!(v, vec![I64String(-1), I64String(2), I64String(10)]);
    }

    #[test]
    fn schema_is_string_int64() {
        let schema = schemars::schema_for!(I64String);
        let value = serde_json::to_value(&schema).unwrap();
        assert_eq!(value["type"], "string");
        assert_eq!(value["format"], "int64");
    }
}

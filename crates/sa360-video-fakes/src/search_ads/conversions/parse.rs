//! Parsing the body of a batch method (insert, update, updateAvailability) as Google's JSON
//! parser does: malformed JSON or an unknown name anywhere fails the whole request; each item is
//! checked for its fields' JSON types and becomes a [`Record`] or the detail that rejects it.
//!
//! The body is read once, straight into records: no `serde_json::Value` tree is built for an
//! item (only for a `customDimension` or `customMetric` list), so a batch of 1 000 conversions
//! costs a few allocations per item rather than dozens.

use std::borrow::Cow;
use std::fmt;

use axum::response::Response;
use serde::Deserialize;
use serde::de::{DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Number, Value};

use super::batch::{Detail, bad_payload, unknown_name};
use crate::search_ads::record::{Kind, Record, Schema, Val};

/// One item of a batch: its record, or the detail that rejects it.
pub(super) type Item = Result<Record, Detail>;

/// Parses the body into its items, in order. `list_field` names the list (`conversion`,
/// `availabilities`); the top-level object may also have `kind`.
pub(super) fn parse_batch(
    body: &[u8],
    list_field: &str,
    schema: Schema,
) -> Result<Vec<Item>, Response> {
    let mut de = serde_json::Deserializer::from_slice(body);
    let top = TopSeed { list_field, schema }
        .deserialize(&mut de)
        .and_then(|top| de.end().map(|()| top))
        .map_err(|e| bad_payload(format!("Invalid JSON payload received. {e}"), "parseError"))?;
    let Top::Object { unknown, list } = top else {
        return Err(bad_payload(
            "Invalid JSON payload received. Expected an object.".to_owned(),
            "parseError",
        ));
    };
    if let Some(name) = unknown {
        return Err(unknown_name(&name, None));
    }
    match list {
        None | Some(List::Null) => Ok(Vec::new()),
        Some(List::Other) => Err(bad_payload(
            format!("Invalid JSON payload received. '{list_field}' must be a list."),
            "parseError",
        )),
        Some(List::Items(items)) => {
            if let Some(unknown) = items.iter().find_map(|item| item.unknown.as_ref()) {
                return Err(unknown_name(&unknown.name, Some(&unknown.at)));
            }
            Ok(items.into_iter().map(|item| item.record).collect())
        }
    }
}

/// One item given as a JSON value (a seeded conversion, a test's item), checked as a body's item
/// is. A name that is not a field of `schema` rejects it.
pub(crate) fn record_from_value(schema: Schema, item: Value) -> Item {
    let parsed = ItemSeed {
        schema,
        list_field: "conversion",
        index: 0,
    }
    .deserialize(item)
    .map_err(|e| Detail::new(0x100, format!("Field is missing or invalid: {e}")))?;
    if let Some(unknown) = parsed.unknown {
        return Err(Detail::invalid(&unknown.name));
    }
    parsed.record
}

/// The top-level value of a body.
enum Top {
    /// An object: its first unknown name (in name order) and its list member.
    Object {
        unknown: Option<String>,
        list: Option<List>,
    },
    /// Anything else.
    NotObject,
}

/// The list member of a body.
enum List {
    /// `null`: no items.
    Null,
    /// Anything but a list or `null`.
    Other,
    /// The items, in order.
    Items(Vec<ParsedItem>),
}

/// An item as parsed, before the request-wide check for unknown names.
struct ParsedItem {
    record: Item,
    unknown: Option<UnknownName>,
}

/// The name Google's parser reports, and where.
struct UnknownName {
    /// The item's member it is found under, to pick the first in name order.
    member: String,
    /// The unknown name.
    name: String,
    /// `conversion[3]` or `conversion[3].customMetric[0]`.
    at: String,
}

/// A member name, borrowed from the body when it has no escapes.
struct Key<'de>(Cow<'de, str>);

impl<'de> Deserialize<'de> for Key<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct KeyVisitor;
        impl<'de> Visitor<'de> for KeyVisitor {
            type Value = Key<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a member name")
            }
            fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Borrowed(v)))
            }
            fn visit_str<E>(self, v: &str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Owned(v.to_owned())))
            }
            fn visit_string<E>(self, v: String) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Owned(v)))
            }
        }
        deserializer.deserialize_str(KeyVisitor)
    }
}

/// Reads the rest of a list or object that is not wanted, so that a syntax error in it still
/// fails the request.
fn skip_seq<'de, A: SeqAccess<'de>>(mut seq: A) -> Result<(), A::Error> {
    while seq.next_element::<IgnoredAny>()?.is_some() {}
    Ok(())
}

fn skip_map<'de, A: MapAccess<'de>>(mut map: A) -> Result<(), A::Error> {
    while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
    Ok(())
}

/// Implements the visits of scalars for a visitor whose every scalar gives `$value`.
macro_rules! scalars_are {
    ($value:expr) => {
        fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> {
            Ok($value)
        }
        fn visit_i64<E>(self, _: i64) -> Result<Self::Value, E> {
            Ok($value)
        }
        fn visit_u64<E>(self, _: u64) -> Result<Self::Value, E> {
            Ok($value)
        }
        fn visit_f64<E>(self, _: f64) -> Result<Self::Value, E> {
            Ok($value)
        }
        fn visit_str<E>(self, _: &str) -> Result<Self::Value, E> {
            Ok($value)
        }
    };
}

struct TopSeed<'s> {
    list_field: &'s str,
    schema: Schema,
}

impl<'de> DeserializeSeed<'de> for TopSeed<'_> {
    type Value = Top;
    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Top, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for TopSeed<'_> {
    type Value = Top;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an object")
    }
    scalars_are!(Top::NotObject);
    fn visit_unit<E>(self) -> Result<Top, E> {
        Ok(Top::NotObject)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Top, A::Error> {
        skip_seq(seq)?;
        Ok(Top::NotObject)
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Top, A::Error> {
        let mut unknown: Option<String> = None;
        let mut list = None;
        while let Some(Key(name)) = map.next_key()? {
            if name == self.list_field {
                list = Some(map.next_value_seed(ListSeed {
                    list_field: self.list_field,
                    schema: self.schema,
                })?);
                continue;
            }
            map.next_value::<IgnoredAny>()?;
            if name != "kind" && unknown.as_deref().is_none_or(|u| *name < *u) {
                unknown = Some(name.into_owned());
            }
        }
        Ok(Top::Object { unknown, list })
    }
}

struct ListSeed<'s> {
    list_field: &'s str,
    schema: Schema,
}

impl<'de> DeserializeSeed<'de> for ListSeed<'_> {
    type Value = List;
    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<List, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for ListSeed<'_> {
    type Value = List;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a list")
    }
    scalars_are!(List::Other);
    fn visit_unit<E>(self) -> Result<List, E> {
        Ok(List::Null)
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<List, A::Error> {
        skip_map(map)?;
        Ok(List::Other)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<List, A::Error> {
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(1024));
        let mut index = 0;
        while let Some(item) = seq.next_element_seed(ItemSeed {
            schema: self.schema,
            list_field: self.list_field,
            index,
        })? {
            items.push(item);
            index += 1;
        }
        Ok(List::Items(items))
    }
}

struct ItemSeed<'s> {
    schema: Schema,
    list_field: &'s str,
    index: usize,
}

impl<'de> DeserializeSeed<'de> for ItemSeed<'_> {
    type Value = ParsedItem;
    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<ParsedItem, D::Error> {
        deserializer.deserialize_any(self)
    }
}

/// An item that is not an object.
fn not_an_object() -> ParsedItem {
    ParsedItem {
        record: Err(Detail::new(
            0x100,
            "Field is missing or invalid: conversion is not an object",
        )),
        unknown: None,
    }
}

impl<'de> Visitor<'de> for ItemSeed<'_> {
    type Value = ParsedItem;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an item")
    }
    scalars_are!(not_an_object());
    fn visit_unit<E>(self) -> Result<ParsedItem, E> {
        Ok(not_an_object())
    }
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<ParsedItem, A::Error> {
        skip_seq(seq)?;
        Ok(not_an_object())
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<ParsedItem, A::Error> {
        let fields = self.schema.fields();
        let mut raw: Vec<(u8, Raw<'de>)> = Vec::with_capacity(16);
        let mut unknown: Option<UnknownName> = None;
        let at = || format!("{}[{}]", self.list_field, self.index);
        while let Some(Key(name)) = map.next_key()? {
            let Some(field) = self.schema.field(&name) else {
                map.next_value::<IgnoredAny>()?;
                if unknown.as_ref().is_none_or(|u| *name < *u.member) {
                    unknown = Some(UnknownName {
                        member: name.to_string(),
                        name: name.into_owned(),
                        at: at(),
                    });
                }
                continue;
            };
            let value = match fields[usize::from(field)].1 {
                Kind::Dimensions | Kind::Metrics => Raw::Json(map.next_value()?),
                Kind::Int64 | Kind::UnsignedDigits | Kind::Str => Raw::Scalar(map.next_value()?),
            };
            raw.push((field, value));
        }
        // Of a name given twice the last counts, as in a parsed JSON object.
        raw.sort_by_key(|(field, _)| *field);
        let mut kept: Vec<(u8, Raw<'de>)> = Vec::with_capacity(raw.len());
        for (field, value) in raw {
            match kept.last_mut() {
                Some(last) if last.0 == field => last.1 = value,
                _ => kept.push((field, value)),
            }
        }
        for (field, value) in &kept {
            let (member, _) = fields[usize::from(*field)];
            if let Raw::Json(Value::Array(entries)) = value
                && unknown.as_ref().is_none_or(|u| member < u.member.as_str())
                && let Some((j, bad)) = entries.iter().enumerate().find_map(|(j, entry)| {
                    let Value::Object(entry) = entry else {
                        return None;
                    };
                    entry
                        .keys()
                        .find(|k| *k != "name" && *k != "value")
                        .map(|bad| (j, bad))
                })
            {
                unknown = Some(UnknownName {
                    member: member.to_owned(),
                    name: bad.clone(),
                    at: format!("{}.{member}[{j}]", at()),
                });
            }
        }
        Ok(ParsedItem {
            record: normalize(self.schema, kept),
            unknown,
        })
    }
}

/// A member's value as read.
enum Raw<'de> {
    Scalar(Scalar<'de>),
    Json(Value),
}

/// A value read for a string or int64 field: what matters is whether it is null, a string or an
/// integer; anything else is the wrong type.
enum Scalar<'de> {
    Null,
    Str(Cow<'de, str>),
    Int(i64),
    Other,
}

impl<'de> Deserialize<'de> for Scalar<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct ScalarVisitor;
        impl<'de> Visitor<'de> for ScalarVisitor {
            type Value = Scalar<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a value")
            }
            fn visit_unit<E>(self) -> Result<Scalar<'de>, E> {
                Ok(Scalar::Null)
            }
            fn visit_bool<E>(self, _: bool) -> Result<Scalar<'de>, E> {
                Ok(Scalar::Other)
            }
            fn visit_i64<E>(self, v: i64) -> Result<Scalar<'de>, E> {
                Ok(Scalar::Int(v))
            }
            fn visit_u64<E>(self, v: u64) -> Result<Scalar<'de>, E> {
                Ok(i64::try_from(v).map_or(Scalar::Other, Scalar::Int))
            }
            fn visit_f64<E>(self, _: f64) -> Result<Scalar<'de>, E> {
                Ok(Scalar::Other)
            }
            fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Scalar<'de>, E> {
                Ok(Scalar::Str(Cow::Borrowed(v)))
            }
            fn visit_str<E>(self, v: &str) -> Result<Scalar<'de>, E> {
                Ok(Scalar::Str(Cow::Owned(v.to_owned())))
            }
            fn visit_string<E>(self, v: String) -> Result<Scalar<'de>, E> {
                Ok(Scalar::Str(Cow::Owned(v)))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Scalar<'de>, A::Error> {
                skip_seq(seq)?;
                Ok(Scalar::Other)
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Scalar<'de>, A::Error> {
                skip_map(map)?;
                Ok(Scalar::Other)
            }
        }
        deserializer.deserialize_any(ScalarVisitor)
    }
}

/// Checks the JSON type of every present member, in name order (the first wrong one is the
/// item's detail), drops nulls, and keeps int64 values as numbers.
fn normalize(schema: Schema, members: Vec<(u8, Raw<'_>)>) -> Item {
    let fields = schema.fields();
    let mut kept = Vec::with_capacity(members.len() + 2);
    for (field, value) in members {
        let (name, kind) = fields[usize::from(field)];
        let val = match (kind, value) {
            (_, Raw::Scalar(Scalar::Null) | Raw::Json(Value::Null)) => continue,
            (Kind::Int64, Raw::Scalar(s)) => int_of(&s).map(Val::Int),
            (Kind::UnsignedDigits, Raw::Scalar(s)) => int_of(&s).filter(|&n| n >= 0).map(Val::Int),
            (Kind::Str, Raw::Scalar(Scalar::Str(s))) => Some(Val::text(&s)),
            (Kind::Dimensions, Raw::Json(v)) => normalize_named(v, |v| v.is_string().then_some(v)),
            (Kind::Metrics, Raw::Json(v)) => normalize_named(v, |v| match v {
                Value::Number(_) => Some(v),
                Value::String(s) => s
                    .parse::<f64>()
                    .ok()
                    .and_then(Number::from_f64)
                    .map(Value::Number),
                _ => None,
            }),
            _ => None,
        };
        let Some(val) = val else {
            return Err(Detail::invalid(name));
        };
        kept.push((field, val));
    }
    Ok(Record::from_fields(schema, kept))
}

/// An int64 member: a JSON integer, or a string of digits with an optional `-`.
fn int_of(value: &Scalar<'_>) -> Option<i64> {
    match value {
        Scalar::Int(n) => Some(*n),
        Scalar::Str(s) => {
            let digits = s.strip_prefix('-').unwrap_or(s);
            if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            s.parse().ok()
        }
        Scalar::Null | Scalar::Other => None,
    }
}

/// A `customDimension` or `customMetric` list with each entry's `value` checked by `check`.
fn normalize_named(value: Value, check: impl Fn(Value) -> Option<Value>) -> Option<Val> {
    let Value::Array(entries) = value else {
        return None;
    };
    let mut out = Vec::with_capacity(entries.len());
    for entry in entries {
        let Value::Object(mut entry) = entry else {
            return None;
        };
        let name = entry.remove("name").filter(Value::is_string)?;
        let value = check(entry.remove("value")?)?;
        let mut m = Map::new();
        m.insert("name".to_owned(), name);
        m.insert("value".to_owned(), value);
        out.push(Value::Object(m));
    }
    Some(Val::Json(Box::new(Value::Array(out))))
}

#[cfg(test)]
mod tests {
    use axum::http::StatusCode;
    use serde_json::{Value, json};

    use super::{parse_batch, record_from_value};
    use crate::search_ads::conversions::batch::Detail;
    use crate::search_ads::conversions::test_app::{answer, message};
    use crate::search_ads::record::{Record, Schema};

    async fn parse_error(body: &Value, list: &str) -> String {
        let schema = if list == "conversion" {
            Schema::Conversion
        } else {
            Schema::Availability
        };
        match parse_batch(body.to_string().as_bytes(), list, schema) {
            Ok(items) => panic!("parsed {} items", items.len()),
            Err(response) => {
                let (status, body) = answer(response).await;
                assert_eq!(status, StatusCode::BAD_REQUEST);
                message(&body).to_owned()
            }
        }
    }

    #[tokio::test]
    async fn unknown_names_anywhere_fail_the_whole_request() {
        let top = parse_error(&json!({ "conversion": [], "extra": 1 }), "conversion").await;
        assert!(
            top.contains("Unknown name \"extra\": Cannot find field."),
            "{top}"
        );
        let item = parse_error(&json!({ "conversion": [{}, { "bogus": 1 }] }), "conversion").await;
        assert!(
            item.contains("Unknown name \"bogus\" at 'conversion[1]'"),
            "{item}"
        );
        let nested = json!({ "conversion": [{ "customMetric": [{ "name": "a", "value": 1, "unit": "x" }] }] });
        let nested = parse_error(&nested, "conversion").await;
        assert!(
            nested.contains("\"unit\" at 'conversion[0].customMetric[0]'"),
            "{nested}"
        );
        let not_list = parse_error(&json!({ "availabilities": {} }), "availabilities").await;
        assert!(
            not_list.contains("'availabilities' must be a list"),
            "{not_list}"
        );
        let not_object = parse_error(&json!([{ "conversion": [] }]), "conversion").await;
        assert!(not_object.ends_with("Expected an object."), "{not_object}");
        let not_json = match parse_batch(b"{", "conversion", Schema::Conversion) {
            Ok(_) => String::new(),
            Err(response) => message(&answer(response).await.1).to_owned(),
        };
        assert!(
            not_json.starts_with("Invalid JSON payload received."),
            "{not_json}"
        );
        let trailing =
            match parse_batch(br#"{"conversion":[]} x"#, "conversion", Schema::Conversion) {
                Ok(_) => String::new(),
                Err(response) => message(&answer(response).await.1).to_owned(),
            };
        assert!(trailing.contains("trailing characters"), "{trailing}");
        let ok = parse_batch(
            br#"{"kind":"k","conversion":[{"adId":1}, 5]}"#,
            "conversion",
            Schema::Conversion,
        );
        let items = ok.unwrap_or_else(|_| panic!("a valid body is refused"));
        assert_eq!(items.len(), 2);
        assert!(items[0].is_ok());
        assert!(matches!(&items[1], Err(d) if d.text.ends_with("not an object")));
    }

    #[tokio::test]
    async fn of_several_unknown_names_google_reports_the_first_item_and_the_first_name() {
        let body = json!({ "zz": 1, "yy": 2, "conversion": [{ "b": 1 }] });
        assert!(parse_error(&body, "conversion").await.contains("\"yy\""));
        let body = json!({ "conversion": [
            {},
            { "zz": 1, "customMetric": [{ "name": "m", "value": 1 }, { "b": 2 }], "aa": 3 },
            { "a": 1 },
        ] });
        let first = parse_error(&body, "conversion").await;
        assert!(first.contains("\"aa\" at 'conversion[1]'"), "{first}");
        let body = json!({ "conversion": [
            { "zz": 1, "customMetric": [{ "name": "m", "value": 1 }, { "b": 2 }] },
        ] });
        let nested = parse_error(&body, "conversion").await;
        assert!(
            nested.contains("\"b\" at 'conversion[0].customMetric[1]'"),
            "{nested}"
        );
        let text = r#"{"conversion":[{"adId":1,"bogus":1}]"#;
        let cut = match parse_batch(text.as_bytes(), "conversion", Schema::Conversion) {
            Ok(_) => String::new(),
            Err(response) => message(&answer(response).await.1).to_owned(),
        };
        assert!(
            cut.contains("EOF"),
            "malformed JSON is reported first: {cut}"
        );
    }

    fn record(item: Value) -> Record {
        record_from_value(Schema::Conversion, item).unwrap_or_else(|d| panic!("{}", d.text))
    }

    fn invalid_field(item: Value) -> String {
        match record_from_value(Schema::Conversion, item) {
            Ok(record) => panic!("accepted {record:?}"),
            Err(Detail { code, text }) => {
                assert_eq!(code, 0x100);
                text
            }
        }
    }

    #[test]
    fn int64_values_are_carried_as_strings_and_every_type_is_checked() {
        let item = json!({
            "adId": 12,
            "campaignId": "-7",
            "conversionTimestamp": "1700000000000",
            "state": null,
            "customMetric": [{ "name": "Basket Size", "value": "2.5" }],
            "customDimension": [{ "name": "Store Region", "value": "north" }],
        });
        let map = record(item.clone()).to_value();
        assert_eq!(map["adId"], "12");
        assert_eq!(map["campaignId"], "-7");
        for (given, normal) in [("007", "7"), ("-0", "0"), ("0", "0"), ("-12", "-12")] {
            assert_eq!(
                record(json!({ "adId": given })).to_value()["adId"],
                normal,
                "{given}"
            );
        }
        assert!(map.get("state").is_none(), "nulls are dropped");
        assert_eq!(map["customMetric"][0]["value"], 2.5);
        assert_eq!(map["customDimension"][0]["value"], "north");
        let parsed = parse_batch(
            json!({ "conversion": [item] }).to_string().as_bytes(),
            "conversion",
            Schema::Conversion,
        );
        let from_body = parsed
            .ok()
            .and_then(|items| items.into_iter().next())
            .and_then(Result::ok)
            .map(|r| r.to_value());
        assert_eq!(
            from_body.as_ref(),
            Some(&map),
            "a body's item reads the same"
        );

        assert!(invalid_field(json!({ "adId": "12a" })).ends_with(": adId"));
        assert!(invalid_field(json!({ "adId": 1.5 })).ends_with(": adId"));
        assert!(
            invalid_field(json!({ "adId": 9_223_372_036_854_775_808_u64 })).ends_with(": adId")
        );
        assert!(invalid_field(json!({ "adId": [1] })).ends_with(": adId"));
        assert!(
            invalid_field(json!({ "conversionTimestamp": "-1" }))
                .ends_with(": conversionTimestamp")
        );
        assert!(invalid_field(json!({ "clickId": 5 })).ends_with(": clickId"));
        assert!(invalid_field(json!({ "clickId": { "a": 1 } })).ends_with(": clickId"));
        assert!(
            invalid_field(json!({ "customMetric": [{ "name": "m" }] })).ends_with(": customMetric")
        );
        assert!(
            invalid_field(json!({ "customMetric": [{ "name": "m", "value": "x" }] }))
                .ends_with(": customMetric")
        );
        assert!(
            invalid_field(json!({ "type": 1, "adId": "x" })).ends_with(": adId"),
            "the first wrong field in name order is named"
        );
    }
}

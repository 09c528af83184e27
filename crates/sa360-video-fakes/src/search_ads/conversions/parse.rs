//! Reading the body of a batch method (insert, update, updateAvailability) as Google's JSON
//! parser does: malformed JSON or an unknown name anywhere fails the whole request; each item is
//! checked for its fields' JSON types and becomes a [`Record`] or the detail that rejects it.

use axum::response::Response;
use serde_json::{Map, Number, Value};

use super::batch::{Detail, bad_payload, unknown_name};
use crate::search_ads::record::{Kind, Record, Schema};

/// One item of a batch: its record, or the detail that rejects it.
pub(super) type Item = Result<Record, Detail>;

/// Parses the body into its items, in order. `list_field` names the list (`conversion`,
/// `availabilities`); the top-level object may also have `kind`. Of several unknown names, the
/// first item's first in name order is reported (a JSON object's members are read sorted).
pub(super) fn parse_batch(
    body: &[u8],
    list_field: &str,
    schema: Schema,
) -> Result<Vec<Item>, Response> {
    let parse_error = |text: String| {
        bad_payload(
            format!("Invalid JSON payload received. {text}"),
            "parseError",
        )
    };
    let top: Value = serde_json::from_slice(body).map_err(|e| parse_error(e.to_string()))?;
    let Value::Object(mut top) = top else {
        return Err(parse_error("Expected an object.".to_owned()));
    };
    let list = top.remove(list_field);
    if let Some(name) = top.keys().find(|name| *name != "kind") {
        return Err(unknown_name(name, None));
    }
    let items = match list {
        None | Some(Value::Null) => return Ok(Vec::new()),
        Some(Value::Array(items)) => items,
        Some(_) => return Err(parse_error(format!("'{list_field}' must be a list."))),
    };
    for (index, item) in items.iter().enumerate() {
        if let Some((name, within)) = unknown_in(schema, item) {
            return Err(unknown_name(
                name,
                Some(&format!("{list_field}[{index}]{within}")),
            ));
        }
    }
    Ok(items
        .into_iter()
        .map(|item| record_from_value(schema, item))
        .collect())
}

/// An item's first unknown name in name order, and where below the item it is (`""` or
/// `.customMetric[0]`).
fn unknown_in(schema: Schema, item: &Value) -> Option<(&str, String)> {
    for (member, value) in item.as_object()? {
        match schema.kind(member) {
            None => return Some((member, String::new())),
            Some(Kind::Dimensions | Kind::Metrics) => {
                let entries = value.as_array().map(Vec::as_slice).unwrap_or_default();
                for (j, entry) in entries.iter().enumerate() {
                    let bad = entry.as_object().into_iter().flat_map(Map::keys);
                    if let Some(bad) = bad.into_iter().find(|k| *k != "name" && *k != "value") {
                        return Some((bad, format!(".{member}[{j}]")));
                    }
                }
            }
            Some(_) => {}
        }
    }
    None
}

/// One item given as a JSON value (a body's, a seeded conversion, a test's), checked for its
/// fields' JSON types in name order (the first wrong one is the item's detail): nulls are
/// dropped and int64 values kept as the strings of their canonical digits. A name that is not a
/// field of `schema` rejects it.
pub(crate) fn record_from_value(schema: Schema, item: Value) -> Item {
    let Value::Object(members) = item else {
        return Err(Detail::invalid("conversion is not an object"));
    };
    if let Some(name) = members.keys().find(|name| schema.kind(name).is_none()) {
        return Err(Detail::invalid(name));
    }
    let mut record = Map::new();
    for (name, value) in members {
        let kind = schema.kind(&name);
        let value = match (kind, value) {
            (_, Value::Null) => continue,
            (Some(Kind::Int64), v) => int_of(&v).map(|n| n.to_string().into()),
            (Some(Kind::UnsignedDigits), v) => {
                int_of(&v).filter(|&n| n >= 0).map(|n| n.to_string().into())
            }
            (Some(Kind::Str), v @ Value::String(_)) => Some(v),
            (Some(Kind::Dimensions), v) => named_list(v, |v| v.is_string().then_some(v)),
            (Some(Kind::Metrics), v) => named_list(v, |v| match v {
                Value::Number(_) => Some(v),
                Value::String(s) => s.parse().ok().and_then(Number::from_f64).map(Value::Number),
                _ => None,
            }),
            _ => None,
        };
        let Some(value) = value else {
            return Err(Detail::invalid(&name));
        };
        record.insert(name, value);
    }
    Ok(Record(record))
}

/// An int64 member: a JSON integer, or a string of digits with an optional `-`.
fn int_of(value: &Value) -> Option<i64> {
    match value {
        Value::Number(n) => n.as_i64(),
        Value::String(s) => {
            let digits = s.strip_prefix('-').unwrap_or(s);
            if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            s.parse().ok()
        }
        _ => None,
    }
}

/// A `customDimension` or `customMetric` list of `{name, value}` with each `value` checked by
/// `check`.
fn named_list(value: Value, check: impl Fn(Value) -> Option<Value>) -> Option<Value> {
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
        out.push(serde_json::json!({ "name": name, "value": value }));
    }
    Some(Value::Array(out))
}

#[cfg(test)]
mod tests {
    use axum::http::StatusCode;
    use serde_json::{Value, json};

    use super::{parse_batch, record_from_value};
    use crate::search_ads::conversions::batch::Detail;
    use crate::search_ads::conversions::tests::{answer, message};
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

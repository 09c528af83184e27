//! The bodies of the batch methods (insert, update, updateAvailability): the fields of each item
//! and their JSON types, parsing as Google's JSON parser does (an unknown name fails the whole
//! request), normalising an item, and the one 400 that names every rejected item.

use axum::http::StatusCode;
use axum::response::Response;
use serde_json::{Map, Number, Value};

use crate::errors::{GoogleErrorItem, google_error};
use crate::faults::{DetailsCut, DetailsTruncationApplied};

/// How Google starts the message of a 400 that lists rejected items.
const REQUEST_NOT_VALID: &str = "The request was not valid. Details: ";

/// The JSON type a field of an item must have.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    /// `string`/`int64`: a JSON string of digits or a JSON integer; stored as a string.
    Int64,
    /// A non-negative integer carried as a string (`conversionTimestamp`).
    UnsignedDigits,
    /// A string.
    Str,
    /// `customDimension`.
    Dimensions,
    /// `customMetric`.
    Metrics,
}

/// The fields of `Conversion`.
pub(super) const CONVERSION_FIELDS: &[(&str, Kind)] = &[
    ("adGroupId", Kind::Int64),
    ("adId", Kind::Int64),
    ("adUserDataConsent", Kind::Str),
    ("advertiserId", Kind::Int64),
    ("agencyId", Kind::Int64),
    ("attributionModel", Kind::Str),
    ("campaignId", Kind::Int64),
    ("channel", Kind::Str),
    ("clickId", Kind::Str),
    ("conversionId", Kind::Str),
    ("conversionModifiedTimestamp", Kind::Int64),
    ("conversionTimestamp", Kind::UnsignedDigits),
    ("countMillis", Kind::Int64),
    ("criterionId", Kind::Int64),
    ("currencyCode", Kind::Str),
    ("customDimension", Kind::Dimensions),
    ("customMetric", Kind::Metrics),
    ("customerId", Kind::Str),
    ("deviceType", Kind::Str),
    ("dsConversionId", Kind::Int64),
    ("engineAccountId", Kind::Int64),
    ("floodlightOrderId", Kind::Str),
    ("inventoryAccountId", Kind::Int64),
    ("productCountry", Kind::Str),
    ("productGroupId", Kind::Int64),
    ("productId", Kind::Str),
    ("productLanguage", Kind::Str),
    ("quantityMillis", Kind::Int64),
    ("revenueMicros", Kind::Int64),
    ("segmentationId", Kind::Int64),
    ("segmentationName", Kind::Str),
    ("segmentationType", Kind::Str),
    ("state", Kind::Str),
    ("storeId", Kind::Str),
    ("type", Kind::Str),
];

/// The fields of `Availability`.
pub(super) const AVAILABILITY_FIELDS: &[(&str, Kind)] = &[
    ("advertiserId", Kind::Int64),
    ("agencyId", Kind::Int64),
    ("availabilityTimestamp", Kind::Int64),
    ("customerId", Kind::Str),
    ("segmentationId", Kind::Int64),
    ("segmentationName", Kind::Str),
    ("segmentationType", Kind::Str),
];

/// The kind of field `name` in `fields` (sorted by name, as both lists are), `None` when it is
/// not one.
fn field_kind(fields: &[(&str, Kind)], name: &str) -> Option<Kind> {
    fields
        .binary_search_by(|(n, _)| (*n).cmp(name))
        .ok()
        .map(|i| fields[i].1)
}

/// Whether `name` is a field of `Conversion`.
pub(crate) fn is_conversion_field(name: &str) -> bool {
    field_kind(CONVERSION_FIELDS, name).is_some()
}

/// Whether `name` is a field of `Availability`.
pub(crate) fn is_availability_field(name: &str) -> bool {
    field_kind(AVAILABILITY_FIELDS, name).is_some()
}

/// A rejected item: its hex code and text (without the index suffix).
pub(super) struct Detail {
    pub(super) code: u32,
    pub(super) text: String,
}

impl Detail {
    pub(super) fn new(code: u32, text: impl Into<String>) -> Self {
        Self {
            code,
            text: text.into(),
        }
    }

    pub(super) fn invalid(field: &str) -> Self {
        Self::new(0x100, format!("Field is missing or invalid: {field}"))
    }
}

/// A whole-request problem: Google's JSON parser or a batch-wide validation failure.
fn bad_payload(message: String, reason: &'static str) -> Response {
    google_error(
        StatusCode::BAD_REQUEST,
        &message,
        &[GoogleErrorItem::new(reason, message.clone())],
    )
}

/// A 400 for a batch without items.
pub(super) fn empty_batch() -> Response {
    let message = format!("{REQUEST_NOT_VALID}[Empty batch encountered.]");
    bad_payload(message, "requestValidation")
}

/// Parses the body and returns the batch items, checking names like Google's JSON parser does
/// (an unknown name fails the whole request).
pub(super) fn parse_batch(
    body: &[u8],
    list_field: &str,
    fields: &[(&str, Kind)],
) -> Result<Vec<Value>, Response> {
    let value: Value = serde_json::from_slice(body)
        .map_err(|e| bad_payload(format!("Invalid JSON payload received. {e}"), "parseError"))?;
    let Value::Object(mut top) = value else {
        return Err(bad_payload(
            "Invalid JSON payload received. Expected an object.".to_owned(),
            "parseError",
        ));
    };
    for name in top.keys() {
        if name != list_field && name != "kind" {
            return Err(unknown_name(name, None));
        }
    }
    let items = match top.remove(list_field) {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(items)) => items,
        Some(_) => {
            return Err(bad_payload(
                format!("Invalid JSON payload received. '{list_field}' must be a list."),
                "parseError",
            ));
        }
    };
    for (i, item) in items.iter().enumerate() {
        if let Value::Object(map) = item {
            let at = || format!("{list_field}[{i}]");
            for (name, v) in map {
                let Some(kind) = field_kind(fields, name) else {
                    return Err(unknown_name(name, Some(&at())));
                };
                if let (Kind::Dimensions | Kind::Metrics, Value::Array(entries)) = (kind, v) {
                    for (j, entry) in entries.iter().enumerate() {
                        if let Value::Object(entry) = entry
                            && let Some(bad) = entry.keys().find(|k| *k != "name" && *k != "value")
                        {
                            return Err(unknown_name(bad, Some(&format!("{}.{name}[{j}]", at()))));
                        }
                    }
                }
            }
        }
    }
    Ok(items)
}

fn unknown_name(name: &str, at: Option<&str>) -> Response {
    let message = match at {
        Some(at) => {
            format!(
                "Invalid JSON payload received. Unknown name \"{name}\" at '{at}': Cannot find field."
            )
        }
        None => {
            format!("Invalid JSON payload received. Unknown name \"{name}\": Cannot find field.")
        }
    };
    bad_payload(message, "invalid")
}

fn parse_i64_value(v: &Value) -> Option<i64> {
    match v {
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

/// Checks the JSON types of every present field and returns the object with int64 values turned
/// into strings and nulls removed. The object is changed in place: a member already in its
/// normal form (a string, an int64 as its canonical digits) is kept as it is.
pub(super) fn normalize(
    item: Value,
    fields: &[(&str, Kind)],
) -> Result<Map<String, Value>, Detail> {
    let Value::Object(mut map) = item else {
        return Err(Detail::new(
            0x100,
            "Field is missing or invalid: conversion is not an object",
        ));
    };
    map.retain(|_, value| !value.is_null());
    for (name, value) in &mut map {
        let valid = match field_kind(fields, name).unwrap_or(Kind::Str) {
            Kind::Int64 => normalize_int(value, |_| true),
            Kind::UnsignedDigits => normalize_int(value, |n| n >= 0),
            Kind::Str => value.is_string(),
            Kind::Dimensions => normalize_named(value.take(), |v| v.is_string().then_some(v))
                .map(|v| *value = v)
                .is_some(),
            Kind::Metrics => normalize_named(value.take(), |v| match v {
                Value::Number(_) => Some(v),
                Value::String(s) => s
                    .parse::<f64>()
                    .ok()
                    .and_then(Number::from_f64)
                    .map(Value::Number),
                _ => None,
            })
            .map(|v| *value = v)
            .is_some(),
        };
        if !valid {
            return Err(Detail::invalid(name));
        }
    }
    Ok(map)
}

/// Turns an int64 member (a JSON integer or a string of digits) that `accept`s into its canonical
/// string, in place; false when it is not one.
fn normalize_int(value: &mut Value, accept: impl Fn(i64) -> bool) -> bool {
    let Some(n) = parse_i64_value(value).filter(|&n| accept(n)) else {
        return false;
    };
    if !matches!(value, Value::String(s) if is_canonical_int(s)) {
        *value = Value::String(n.to_string());
    }
    true
}

/// Whether `s`, which parses as an i64, is the text `i64::to_string` gives: no `+`, no leading
/// zero, no `-0`.
fn is_canonical_int(s: &str) -> bool {
    let digits = s.strip_prefix('-').unwrap_or(s);
    !digits.starts_with('0') || s == "0"
}

fn normalize_named(value: Value, check: impl Fn(Value) -> Option<Value>) -> Option<Value> {
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
    Some(Value::Array(out))
}

/// A string field of a normalised item.
pub(super) fn str_field<'a>(map: &'a Map<String, Value>, name: &str) -> Option<&'a str> {
    map.get(name).and_then(Value::as_str)
}

/// An int64 field of a normalised item (stored as a string).
pub(super) fn i64_field(map: &Map<String, Value>, name: &str) -> Option<i64> {
    str_field(map, name).and_then(|s| s.parse().ok())
}

/// The 400 naming every rejected item (`0x...: text for {item} index=i`), cut short as Google
/// cuts long lists when `cut` says so.
pub(super) fn batch_failure(
    details: &[(usize, Detail)],
    item: &str,
    cut: Option<DetailsCut>,
) -> Response {
    let mut rendered: Vec<String> = details
        .iter()
        .map(|(i, d)| format!("0x{:08X}: {} for {item} index={i}", d.code, d.text))
        .collect();
    let Some(cut) = cut.filter(|_| !details.is_empty()) else {
        let message = format!("{REQUEST_NOT_VALID}[{}]", rendered.join(", "));
        let items: Vec<GoogleErrorItem> = rendered
            .into_iter()
            .map(|detail| GoogleErrorItem::new("requestValidation", detail))
            .collect();
        return google_error(StatusCode::BAD_REQUEST, &message, &items);
    };
    // A long message cut short, as Google cuts them: the last detail loses
    // its end, the list its `]`, and `errors[]` ends with the same fragment.
    let (index, last) = &details[details.len() - 1];
    let fragment = match cut {
        DetailsCut::InsideCode => format!("0x{:04X}", last.code >> 16),
        DetailsCut::InsideText => {
            let half: String = last
                .text
                .chars()
                .take(last.text.chars().count() / 2)
                .collect();
            format!("0x{:08X}: {half}", last.code)
        }
    };
    tracing::debug!(index, ?cut, "list of details cut short");
    rendered.pop();
    rendered.push(fragment);
    let message = format!("{REQUEST_NOT_VALID}[{}", rendered.join(", "));
    let items: Vec<GoogleErrorItem> = rendered
        .into_iter()
        .map(|detail| GoogleErrorItem::new("requestValidation", detail))
        .collect();
    let mut response = google_error(StatusCode::BAD_REQUEST, &message, &items);
    response.extensions_mut().insert(DetailsTruncationApplied);
    response
}

#[cfg(test)]
mod tests {
    use axum::http::StatusCode;
    use serde_json::{Value, json};

    use super::{
        AVAILABILITY_FIELDS, CONVERSION_FIELDS, Detail, batch_failure, normalize, parse_batch,
    };
    use crate::faults::{DetailsCut, DetailsTruncationApplied};
    use crate::search_ads::conversions::test_app::{answer, message};

    async fn parse_error(body: &Value, list: &str) -> String {
        let fields = if list == "conversion" {
            CONVERSION_FIELDS
        } else {
            AVAILABILITY_FIELDS
        };
        match parse_batch(body.to_string().as_bytes(), list, fields) {
            Ok(items) => panic!("parsed {items:?}"),
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
        let not_json = match parse_batch(b"{", "conversion", CONVERSION_FIELDS) {
            Ok(_) => String::new(),
            Err(response) => message(&answer(response).await.1).to_owned(),
        };
        assert!(
            not_json.starts_with("Invalid JSON payload received."),
            "{not_json}"
        );
        let ok = parse_batch(
            br#"{"kind":"k","conversion":[{"adId":1}]}"#,
            "conversion",
            CONVERSION_FIELDS,
        );
        assert_eq!(ok.ok().map(|items| items.len()), Some(1));
    }

    #[test]
    fn the_field_lists_are_sorted_for_their_binary_search() {
        for fields in [CONVERSION_FIELDS, AVAILABILITY_FIELDS] {
            assert!(fields.windows(2).all(|w| w[0].0 < w[1].0));
        }
        assert!(super::is_conversion_field("customerId"));
        assert!(super::is_conversion_field("adGroupId"));
        assert!(!super::is_conversion_field("customer"));
        assert!(super::is_availability_field("availabilityTimestamp"));
    }

    fn invalid_field(item: Value) -> String {
        match normalize(item, CONVERSION_FIELDS) {
            Ok(map) => panic!("accepted {map:?}"),
            Err(Detail { code, text }) => {
                assert_eq!(code, 0x100);
                text
            }
        }
    }

    #[test]
    fn normalize_carries_int64_values_as_strings_and_checks_every_type() {
        let map = normalize(
            json!({
                "adId": 12,
                "campaignId": "-7",
                "conversionTimestamp": "1700000000000",
                "state": null,
                "customMetric": [{ "name": "Basket Size", "value": "2.5" }],
                "customDimension": [{ "name": "Store Region", "value": "north" }],
            }),
            CONVERSION_FIELDS,
        )
        .unwrap_or_else(|d| panic!("{}", d.text));
        assert_eq!(map["adId"], "12");
        assert_eq!(map["campaignId"], "-7");
        for (given, normal) in [("007", "7"), ("-0", "0"), ("0", "0"), ("-12", "-12")] {
            let map = normalize(json!({ "adId": given }), CONVERSION_FIELDS)
                .unwrap_or_else(|d| panic!("{}", d.text));
            assert_eq!(map["adId"], normal, "{given}");
        }
        assert!(!map.contains_key("state"), "nulls are dropped");
        assert_eq!(map["customMetric"][0]["value"], 2.5);
        assert_eq!(map["customDimension"][0]["value"], "north");

        assert!(invalid_field(json!({ "adId": "12a" })).ends_with(": adId"));
        assert!(invalid_field(json!({ "adId": 1.5 })).ends_with(": adId"));
        assert!(
            invalid_field(json!({ "conversionTimestamp": "-1" }))
                .ends_with(": conversionTimestamp")
        );
        assert!(invalid_field(json!({ "clickId": 5 })).ends_with(": clickId"));
        assert!(
            invalid_field(json!({ "customMetric": [{ "name": "m" }] })).ends_with(": customMetric")
        );
        assert!(
            invalid_field(json!({ "customMetric": [{ "name": "m", "value": "x" }] }))
                .ends_with(": customMetric")
        );
        assert!(invalid_field(json!([])).contains("not an object"));
    }

    #[tokio::test]
    async fn the_400_names_every_rejected_item_and_can_be_cut_as_google_cuts_it() {
        let details = [
            (1, Detail::new(0x11F, "first problem")),
            (4, Detail::invalid("state")),
        ];
        let whole = batch_failure(&details, "conversion", None);
        assert!(
            whole
                .extensions()
                .get::<DetailsTruncationApplied>()
                .is_none()
        );
        let (_, body) = answer(whole).await;
        assert_eq!(
            message(&body),
            "The request was not valid. Details: [0x0000011F: first problem for conversion index=1, 0x00000100: Field is missing or invalid: state for conversion index=4]"
        );
        assert_eq!(body["error"]["errors"].as_array().map(Vec::len), Some(2));

        let cut = batch_failure(&details, "conversion", Some(DetailsCut::InsideCode));
        assert!(cut.extensions().get::<DetailsTruncationApplied>().is_some());
        let (_, body) = answer(cut).await;
        assert_eq!(
            message(&body),
            "The request was not valid. Details: [0x0000011F: first problem for conversion index=1, 0x0000"
        );
        assert_eq!(body["error"]["errors"][1]["message"], "0x0000");

        let (_, body) = answer(batch_failure(
            &details,
            "conversion",
            Some(DetailsCut::InsideText),
        ))
        .await;
        assert!(
            message(&body).ends_with(", 0x00000100: Field is missing "),
            "half the text: {body}"
        );
    }
}

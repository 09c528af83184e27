//! Conversions as rows: the Conversion JSON field names, read from CSV or JSON
//! lines and written as either.
//!
//! Values keep their wire forms on output (ids and micros as digits,
//! timestamps as epoch milliseconds) so a listing can be uploaded again. On
//! input, ids and numbers may be JSON strings or numbers, timestamps epoch
//! milliseconds or RFC 3339, and `customDimension` / `customMetric` are JSON
//! arrays of `{"name", "value"}` (in a CSV cell, as JSON text).

use std::collections::{BTreeMap, HashMap};
use std::io::Read;

use chrono::{DateTime, Utc};
use facade::search_ads::{
    Conversion, CustomDimension, CustomMetric, CustomerId, Micros, SegmentationType,
};
use serde_json::{Map, Value};

/// Every field of a conversion, in the column order of CSV output.
pub const FIELDS: [&str; 35] = [
    "conversionId",
    "conversionTimestamp",
    "segmentationType",
    "segmentationId",
    "segmentationName",
    "type",
    "state",
    "revenueMicros",
    "currencyCode",
    "quantityMillis",
    "countMillis",
    "clickId",
    "agencyId",
    "advertiserId",
    "engineAccountId",
    "campaignId",
    "adGroupId",
    "adId",
    "criterionId",
    "customerId",
    "dsConversionId",
    "floodlightOrderId",
    "channel",
    "deviceType",
    "adUserDataConsent",
    "attributionModel",
    "conversionModifiedTimestamp",
    "customDimension",
    "customMetric",
    "inventoryAccountId",
    "productCountry",
    "productGroupId",
    "productId",
    "productLanguage",
    "storeId",
];

/// One input row: where it starts in the file and what it holds.
#[derive(Debug)]
pub struct InputRow {
    /// The 1-based line of the file where the row starts (a CSV header is line 1).
    pub line: u64,
    /// The conversion, or why the row cannot be one.
    pub parsed: Result<Conversion, String>,
    /// The row's `conversionId` as written, when it has one (for reports).
    pub conversion_id: Option<String>,
}

/// A field's value as read: text (CSV cells, JSON strings and numbers) or a
/// JSON array (custom dimensions and metrics).
enum Cell {
    Text(String),
    Json(Value),
}

/// Reads CSV rows. A header that names an unknown field is an error for the
/// whole file (every row would lose that column).
pub fn read_csv(input: impl Read) -> Result<Vec<InputRow>, String> {
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(true)
        .flexible(false)
        .from_reader(input);
    let headers: Vec<String> = reader
        .headers()
        .map_err(|e| format!("cannot read the CSV header: {e}"))?
        .iter()
        .map(|h| h.trim().trim_start_matches('\u{feff}').to_owned())
        .collect();
    for h in &headers {
        if !FIELDS.contains(&h.as_str()) {
            return Err(format!(
                "the CSV header names an unknown field {h:?}; the columns are Conversion JSON field names such as conversionId, conversionTimestamp, segmentationType"
            ));
        }
    }
    if !headers.iter().any(|h| h == "conversionId") {
        return Err("the CSV header has no conversionId column".to_owned());
    }
    let mut rows = Vec::new();
    let mut record = csv::StringRecord::new();
    loop {
        let line = reader.position().line();
        match reader.read_record(&mut record) {
            Ok(false) => break,
            Ok(true) => {
                let line = record.position().map_or(line, |p| p.line());
                let mut cells = BTreeMap::new();
                for (name, value) in headers.iter().zip(record.iter()) {
                    let value = value.trim();
                    if !value.is_empty() {
                        cells.insert(name.clone(), Cell::Text(value.to_owned()));
                    }
                }
                rows.push(row_from_cells(line, cells));
            }
            Err(e) => {
                let line = e.position().map_or(line, |p| p.line());
                match e.kind() {
                    // A row with the wrong number of fields is that row's problem.
                    csv::ErrorKind::UnequalLengths { len, .. } => rows.push(InputRow {
                        line,
                        parsed: Err(format!(
                            "has {len} fields, the header has {}",
                            headers.len()
                        )),
                        conversion_id: None,
                    }),
                    _ => return Err(format!("cannot read the CSV at line {line}: {e}")),
                }
            }
        }
    }
    Ok(rows)
}

/// Reads JSON lines: one Conversion object per line; blank lines are skipped.
pub fn read_jsonl(text: &str) -> Vec<InputRow> {
    let mut rows = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line = i as u64 + 1;
        let raw = raw.trim();
        if raw.is_empty() {
            continue;
        }
        let object = match serde_json::from_str::<Value>(raw) {
            Ok(Value::Object(map)) => map,
            Ok(_) => {
                rows.push(InputRow {
                    line,
                    parsed: Err("is not a JSON object".to_owned()),
                    conversion_id: None,
                });
                continue;
            }
            Err(e) => {
                rows.push(InputRow {
                    line,
                    parsed: Err(format!("is not valid JSON ({e})")),
                    conversion_id: None,
                });
                continue;
            }
        };
        let mut cells = BTreeMap::new();
        let mut problem = None;
        for (name, value) in object {
            let cell = match value {
                Value::Null => continue,
                Value::String(s) => Cell::Text(s),
                Value::Number(n) => Cell::Text(n.to_string()),
                v @ Value::Array(_) => Cell::Json(v),
                Value::Bool(_) | Value::Object(_) => {
                    problem.get_or_insert_with(|| format!("{name} must be a string or a number"));
                    continue;
                }
            };
            cells.insert(name, cell);
        }
        let mut row = row_from_cells(line, cells);
        if let Some(p) = problem
            && row.parsed.is_ok()
        {
            row.parsed = Err(p);
        }
        rows.push(row);
    }
    rows
}

fn row_from_cells(line: u64, cells: BTreeMap<String, Cell>) -> InputRow {
    let conversion_id = match cells.get("conversionId") {
        Some(Cell::Text(t)) => Some(t.clone()),
        _ => None,
    };
    InputRow {
        line,
        parsed: conversion_from_cells(cells),
        conversion_id,
    }
}

fn conversion_from_cells(cells: BTreeMap<String, Cell>) -> Result<Conversion, String> {
    let mut c = Conversion::default();
    for (name, cell) in cells {
        let text = match &cell {
            Cell::Text(t) => Some(t.as_str()),
            Cell::Json(_) => None,
        };
        let need_text =
            || text.ok_or_else(|| format!("{name} must be a string or a number, not an array"));
        macro_rules! id {
            ($field:ident) => {{
                let t = need_text()?;
                c.$field = Some(
                    t.parse()
                        .map_err(|_| format!("{name} {t:?} is not an id (decimal digits)"))?,
                );
            }};
        }
        macro_rules! text {
            ($field:ident) => {{
                c.$field = Some(need_text()?.to_owned());
            }};
        }
        macro_rules! open {
            ($field:ident) => {{
                c.$field = Some(need_text()?.into());
            }};
        }
        match name.as_str() {
            "conversionId" => text!(conversion_id),
            "conversionTimestamp" => c.conversion_timestamp = Some(timestamp(&name, need_text()?)?),
            "conversionModifiedTimestamp" => {
                c.conversion_modified_timestamp = Some(timestamp(&name, need_text()?)?)
            }
            "segmentationType" => open!(segmentation_type),
            "segmentationId" => id!(segmentation_id),
            "segmentationName" => text!(segmentation_name),
            "type" => open!(conversion_type),
            "state" => open!(state),
            "revenueMicros" => {
                c.revenue_micros = Some(Micros::new(integer(&name, need_text()?)?));
            }
            "currencyCode" => text!(currency_code),
            "quantityMillis" => c.quantity_millis = Some(integer(&name, need_text()?)?),
            "countMillis" => c.count_millis = Some(integer(&name, need_text()?)?),
            "clickId" => text!(click_id),
            "agencyId" => id!(agency_id),
            "advertiserId" => id!(advertiser_id),
            "engineAccountId" => id!(engine_account_id),
            "campaignId" => id!(campaign_id),
            "adGroupId" => id!(ad_group_id),
            "adId" => id!(ad_id),
            "criterionId" => id!(criterion_id),
            "customerId" => {
                c.customer_id = Some(
                    CustomerId::new(need_text()?)
                        .map_err(|_| format!("{name} is not a valid customer id"))?,
                );
            }
            "dsConversionId" => id!(ds_conversion_id),
            "floodlightOrderId" => text!(floodlight_order_id),
            "channel" => open!(channel),
            "deviceType" => open!(device_type),
            "adUserDataConsent" => open!(ad_user_data_consent),
            "attributionModel" => text!(attribution_model),
            "customDimension" => c.custom_dimensions = custom_dimensions(json_cell(&name, cell)?)?,
            "customMetric" => c.custom_metrics = custom_metrics(json_cell(&name, cell)?)?,
            "inventoryAccountId" => id!(inventory_account_id),
            "productCountry" => text!(product_country),
            "productGroupId" => id!(product_group_id),
            "productId" => text!(product_id),
            "productLanguage" => text!(product_language),
            "storeId" => text!(store_id),
            other => {
                return Err(format!(
                    "has an unknown field {other:?} (fields are Conversion JSON field names)"
                ));
            }
        }
    }
    Ok(c)
}

fn integer(name: &str, text: &str) -> Result<i64, String> {
    text.parse::<i64>()
        .map_err(|_| format!("{name} {text:?} is not a whole number"))
}

/// Epoch milliseconds (digits) or RFC 3339.
fn timestamp(name: &str, text: &str) -> Result<DateTime<Utc>, String> {
    if !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit()) {
        return text
            .parse::<i64>()
            .ok()
            .and_then(DateTime::from_timestamp_millis)
            .ok_or_else(|| format!("{name} {text:?} is out of range"));
    }
    DateTime::parse_from_rfc3339(text)
        .map(|t| t.with_timezone(&Utc))
        .map_err(|_| {
            format!(
                "{name} {text:?} is not a time: use epoch milliseconds or RFC 3339 (2024-06-01T10:00:00Z)"
            )
        })
}

fn json_cell(name: &str, cell: Cell) -> Result<Value, String> {
    match cell {
        Cell::Json(v) => Ok(v),
        Cell::Text(t) => serde_json::from_str(&t)
            .map_err(|_| format!("{name} must be a JSON array of {{\"name\", \"value\"}} objects")),
    }
}

fn named_entries(value: Value, name: &str) -> Result<Vec<(String, Value)>, String> {
    let bad = || format!("{name} must be a JSON array of {{\"name\", \"value\"}} objects");
    let Value::Array(items) = value else {
        return Err(bad());
    };
    items
        .into_iter()
        .map(|item| {
            let Value::Object(mut m) = item else {
                return Err(bad());
            };
            match (m.remove("name"), m.remove("value")) {
                (Some(Value::String(n)), Some(v)) => Ok((n, v)),
                _ => Err(bad()),
            }
        })
        .collect()
}

fn custom_dimensions(value: Value) -> Result<Vec<CustomDimension>, String> {
    named_entries(value, "customDimension")?
        .into_iter()
        .map(|(name, v)| match v {
            Value::String(value) => Ok(CustomDimension { name, value }),
            _ => Err(format!("customDimension {name:?} must have a string value")),
        })
        .collect()
}

fn custom_metrics(value: Value) -> Result<Vec<CustomMetric>, String> {
    named_entries(value, "customMetric")?
        .into_iter()
        .map(|(name, v)| {
            let value = match &v {
                Value::Number(n) => n.as_f64(),
                Value::String(s) => s.parse().ok(),
                _ => None,
            };
            value
                .map(|value| CustomMetric {
                    name: name.clone(),
                    value,
                })
                .ok_or_else(|| format!("customMetric {name:?} must have a number value"))
        })
        .collect()
}

/// What an upload sends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WriteMode {
    /// `conversion.insert`.
    Insert,
    /// `conversion.update`.
    Update,
}

/// A row refused before sending.
#[derive(Debug, Clone)]
pub struct LocalRejection {
    /// Index of the row in the input.
    pub row: usize,
    /// Why.
    pub reason: String,
}

/// Checks what the API requires per method (SA-7) and that no conversionId
/// repeats; returns the indices of the rows to send and the local rejections.
/// Checking here, per row, keeps one bad row from refusing the whole upload.
pub fn check_rows(rows: &[InputRow], mode: WriteMode) -> (Vec<usize>, Vec<LocalRejection>) {
    let mut send = Vec::new();
    let mut rejected = Vec::new();
    let mut seen: HashMap<&str, u64> = HashMap::new();
    for (i, row) in rows.iter().enumerate() {
        let reject = |reason: String| LocalRejection { row: i, reason };
        let c = match &row.parsed {
            Ok(c) => c,
            Err(reason) => {
                rejected.push(reject(reason.clone()));
                continue;
            }
        };
        let verb = match mode {
            WriteMode::Insert => "insert",
            WriteMode::Update => "update",
        };
        let Some(id) = c
            .conversion_id
            .as_deref()
            .map(str::trim)
            .filter(|s| !s.is_empty())
        else {
            rejected.push(reject(format!("conversionId is required for {verb}")));
            continue;
        };
        match c.conversion_timestamp {
            None => {
                rejected.push(reject(format!(
                    "conversionTimestamp is required for {verb}"
                )));
                continue;
            }
            Some(t) if t.timestamp_millis() < 0 => {
                rejected.push(reject("conversionTimestamp is before 1970".to_owned()));
                continue;
            }
            Some(_) => {}
        }
        if mode == WriteMode::Insert && c.segmentation_type.is_none() {
            rejected.push(reject(
                "segmentationType is required for insert (FLOODLIGHT)".to_owned(),
            ));
            continue;
        }
        if let Some(first) = seen.get(id) {
            rejected.push(reject(format!(
                "conversionId {id:?} repeats the row at line {first}"
            )));
            continue;
        }
        seen.insert(id, row.line);
        send.push(i);
    }
    (send, rejected)
}

/// A conversion as a JSON object with the wire's field names and forms.
pub fn to_json(c: &Conversion) -> Map<String, Value> {
    let mut m = Map::new();
    for field in FIELDS {
        if let Some(v) = field_value(c, field) {
            m.insert(field.to_owned(), v);
        }
    }
    m
}

/// A conversion as CSV cells in [`FIELDS`] order (empty when absent).
pub fn to_csv_cells(c: &Conversion) -> Vec<String> {
    FIELDS
        .iter()
        .map(|f| match field_value(c, f) {
            None => String::new(),
            Some(Value::String(s)) => s,
            Some(other) => other.to_string(),
        })
        .collect()
}

fn field_value(c: &Conversion, field: &str) -> Option<Value> {
    let s = |v: Option<String>| v.map(Value::String);
    let num = |v: Option<i64>| v.map(|n| Value::String(n.to_string()));
    let ts = |v: Option<DateTime<Utc>>| v.map(|t| Value::String(t.timestamp_millis().to_string()));
    match field {
        "conversionId" => s(c.conversion_id.clone()),
        "conversionTimestamp" => ts(c.conversion_timestamp),
        "segmentationType" => s(c
            .segmentation_type
            .as_ref()
            .map(SegmentationType::to_string)),
        "segmentationId" => num(c.segmentation_id.map(|v| v.get())),
        "segmentationName" => s(c.segmentation_name.clone()),
        "type" => s(c.conversion_type.as_ref().map(|v| v.to_string())),
        "state" => s(c.state.as_ref().map(|v| v.to_string())),
        "revenueMicros" => num(c.revenue_micros.map(Micros::get)),
        "currencyCode" => s(c.currency_code.clone()),
        "quantityMillis" => num(c.quantity_millis),
        "countMillis" => num(c.count_millis),
        "clickId" => s(c.click_id.clone()),
        "agencyId" => num(c.agency_id.map(|v| v.get())),
        "advertiserId" => num(c.advertiser_id.map(|v| v.get())),
        "engineAccountId" => num(c.engine_account_id.map(|v| v.get())),
        "campaignId" => num(c.campaign_id.map(|v| v.get())),
        "adGroupId" => num(c.ad_group_id.map(|v| v.get())),
        "adId" => num(c.ad_id.map(|v| v.get())),
        "criterionId" => num(c.criterion_id.map(|v| v.get())),
        "customerId" => s(c.customer_id.as_ref().map(|v| v.as_str().to_owned())),
        "dsConversionId" => num(c.ds_conversion_id.map(|v| v.get())),
        "floodlightOrderId" => s(c.floodlight_order_id.clone()),
        "channel" => s(c.channel.as_ref().map(|v| v.to_string())),
        "deviceType" => s(c.device_type.as_ref().map(|v| v.to_string())),
        "adUserDataConsent" => s(c.ad_user_data_consent.as_ref().map(|v| v.to_string())),
        "attributionModel" => s(c.attribution_model.clone()),
        "conversionModifiedTimestamp" => ts(c.conversion_modified_timestamp),
        "customDimension" => (!c.custom_dimensions.is_empty()).then(|| {
            Value::Array(
                c.custom_dimensions
                    .iter()
                    .map(|d| serde_json::json!({"name": d.name, "value": d.value}))
                    .collect(),
            )
        }),
        "customMetric" => (!c.custom_metrics.is_empty()).then(|| {
            Value::Array(
                c.custom_metrics
                    .iter()
                    .map(|m| serde_json::json!({"name": m.name, "value": m.value}))
                    .collect(),
            )
        }),
        "inventoryAccountId" => num(c.inventory_account_id.map(|v| v.get())),
        "productCountry" => s(c.product_country.clone()),
        "productGroupId" => num(c.product_group_id.map(|v| v.get())),
        "productId" => s(c.product_id.clone()),
        "productLanguage" => s(c.product_language.clone()),
        "storeId" => s(c.store_id.clone()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CSV: &str = "conversionId,conversionTimestamp,segmentationType,segmentationId,revenueMicros,customDimension\n\
        a-1,1717200000000,FLOODLIGHT,551234,19990000,\"[{\"\"name\"\":\"\"Store Region\"\",\"\"value\"\":\"\"North\"\"}]\"\n\
        a-2,2024-06-01T10:00:00Z,FLOODLIGHT,,,\n\
        a-1,1717200000000,FLOODLIGHT,,,\n\
        a-3,yesterday,FLOODLIGHT,,,\n\
        a-4,1717200000000,,,,\n\
        a-5,1717200000000,FLOODLIGHT,12x,,\n";

    #[test]
    fn csv_rows_are_read_and_checked_per_row() {
        let rows = read_csv(CSV.as_bytes()).unwrap();
        assert_eq!(rows.len(), 6);
        assert_eq!(rows[0].line, 2);
        let first = rows[0].parsed.as_ref().unwrap();
        assert_eq!(first.revenue_micros, Some(Micros::new(19_990_000)));
        assert_eq!(first.custom_dimensions[0].value, "North");
        assert_eq!(
            rows[1].parsed.as_ref().unwrap().conversion_timestamp,
            DateTime::from_timestamp_millis(1_717_236_000_000)
        );
        let (send, rejected) = check_rows(&rows, WriteMode::Insert);
        assert_eq!(send, vec![0, 1]);
        let reasons: Vec<_> = rejected
            .iter()
            .map(|r| (r.row, r.reason.as_str()))
            .collect();
        assert_eq!(reasons[0].0, 2);
        assert!(
            reasons[0].1.contains("repeats the row at line 2"),
            "{reasons:?}"
        );
        assert!(reasons[1].1.contains("conversionTimestamp"), "{reasons:?}");
        assert!(reasons[2].1.contains("segmentationType"), "{reasons:?}");
        assert!(
            reasons[3].1.contains("segmentationId \"12x\""),
            "{reasons:?}"
        );
        // An update needs no segmentationType.
        let (send, _) = check_rows(&rows, WriteMode::Update);
        assert_eq!(send, vec![0, 1, 4]);
    }

    #[test]
    fn unknown_csv_columns_refuse_the_file() {
        let e = read_csv("conversionId,colour\nx,red\n".as_bytes()).unwrap_err();
        assert!(e.contains("colour"));
    }

    #[test]
    fn json_lines_accept_numbers_and_round_trip() {
        let text = "{\"conversionId\":\"j-1\",\"conversionTimestamp\":1717200000000,\"segmentationType\":\"FLOODLIGHT\",\"agencyId\":20700000000000125,\"customMetric\":[{\"name\":\"Basket Size\",\"value\":3.5}]}\n\n[1]\n{\"conversionId\":true}\n";
        let rows = read_jsonl(text);
        assert_eq!(rows.len(), 3);
        assert_eq!(rows[1].line, 3);
        assert!(rows[1].parsed.is_err());
        assert!(rows[2].parsed.is_err());
        let c = rows[0].parsed.as_ref().unwrap();
        let json = to_json(c);
        assert_eq!(json["agencyId"], "20700000000000125");
        assert_eq!(json["conversionTimestamp"], "1717200000000");
        assert_eq!(json["customMetric"][0]["value"], 3.5);
        let again = read_jsonl(&Value::Object(json).to_string());
        assert_eq!(again[0].parsed.as_ref().unwrap(), c);
        let cells = to_csv_cells(c);
        assert_eq!(cells.len(), FIELDS.len());
        assert_eq!(cells[0], "j-1");
    }
}

//! The conversion methods: `get`, `getByCustomerId`, `insert`, `update`, `updateAvailability`, and
//! `savedColumns.list`.

use std::collections::btree_map::Entry;
use std::collections::{HashMap, HashSet};

use axum::Extension;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::Response;
use bytes::Bytes;
use chrono::NaiveDate;
use serde::Serialize;
use serde_json::{Map, Number, Value};

use super::AppState;
use super::data::{
    Congruence, DAY_MS, Generator, INSERTED_DS_BASE, IdFilter, SeededConversion, click_origin,
    day_start_ms, filter_congruence, parse_date_number, parse_seeded_conversion_id,
    seeded_conversion_id,
};
use super::ledger::{ConversionKey, Counters, Origin, Owner, Store, StoredConversion};
use crate::errors::{GoogleErrorItem, google_error, google_simple, json_response};
use crate::faults::{DetailsCut, DetailsTruncation, DetailsTruncationApplied, RequestSeq};

const CONVERSION_LIST_KIND: &str = "doubleclicksearch#conversionList";
const REQUEST_NOT_VALID: &str = "The request was not valid. Details: ";

// ------------------------------------------------------------------------------------- reads

/// The validated query of a read.
struct ReadQuery {
    start: NaiveDate,
    end: NaiveDate,
    start_row: u64,
    row_count: u64,
    /// ID filters that map to congruences on seeded rows.
    id_filters: Vec<(IdFilter, &'static str, i64)>,
    /// Filters on values that are constant per account (`customerId`, `agencyId`, ...).
    account_filters: Vec<(&'static str, String)>,
}

fn param_error(name: &str, message: String) -> Response {
    google_error(
        StatusCode::BAD_REQUEST,
        &message,
        &[GoogleErrorItem::new("requestValidation", message.clone()).at(name, "parameter")],
    )
}

fn missing_param(name: &str) -> Response {
    let message = format!("Required parameter: {name}");
    google_error(
        StatusCode::BAD_REQUEST,
        &message,
        &[GoogleErrorItem::new("required", message.clone()).at(name, "parameter")],
    )
}

fn range_error(name: &str, raw: &str, min: i64, max: i64) -> Response {
    param_error(
        name,
        format!("Invalid value '{raw}'. Values must be within the range: [{min}, {max}]"),
    )
}

fn int_param(
    query: &HashMap<String, String>,
    name: &str,
    min: i64,
    max: i64,
) -> Result<i64, Response> {
    let raw = query.get(name).ok_or_else(|| missing_param(name))?;
    let value: i64 = raw.trim().parse().map_err(|_| {
        param_error(
            name,
            format!("Invalid value '{raw}' for parameter {name}: not an integer"),
        )
    })?;
    if value < min || value > max {
        return Err(range_error(name, raw, min, max));
    }
    Ok(value)
}

fn int64_param(query: &HashMap<String, String>, name: &str) -> Result<Option<i64>, Response> {
    match query.get(name) {
        None => Ok(None),
        Some(raw) => raw.trim().parse::<i64>().map(Some).map_err(|_| {
            param_error(
                name,
                format!("Invalid value '{raw}' for parameter {name}: not a 64-bit integer"),
            )
        }),
    }
}

fn parse_path_id(name: &str, raw: &str) -> Result<i64, Response> {
    raw.parse::<i64>().map_err(|_| {
        param_error(
            name,
            format!("Invalid value '{raw}' for path parameter {name}: not a 64-bit integer"),
        )
    })
}

fn parse_read_query(
    query: &HashMap<String, String>,
    account_filter_names: &[&'static str],
) -> Result<ReadQuery, Response> {
    let date = |name: &str| -> Result<NaiveDate, Response> {
        let n = int_param(query, name, 20_091_101, 99_991_231)?;
        parse_date_number(n).ok_or_else(|| {
            param_error(
                name,
                format!("Invalid value '{n}' for parameter {name}: not a calendar date yyyymmdd"),
            )
        })
    };
    let start = date("startDate")?;
    let end = date("endDate")?;
    if end < start {
        return Err(param_error(
            "endDate",
            "Invalid date range: endDate is before startDate".to_owned(),
        ));
    }
    let start_row = int_param(query, "startRow", 0, i64::from(u32::MAX))?;
    let row_count = int_param(query, "rowCount", 1, 1000)?;
    let mut id_filters = Vec::new();
    for (filter, name) in [
        (IdFilter::Campaign, "campaignId"),
        (IdFilter::AdGroup, "adGroupId"),
        (IdFilter::Ad, "adId"),
        (IdFilter::Criterion, "criterionId"),
    ] {
        if let Some(id) = int64_param(query, name)? {
            id_filters.push((filter, name, id));
        }
    }
    let mut account_filters = Vec::new();
    for &name in account_filter_names {
        if let Some(raw) = query.get(name) {
            if name != "customerId" {
                int64_param(query, name)?;
            }
            account_filters.push((name, raw.trim().to_owned()));
        }
    }
    Ok(ReadQuery {
        start,
        end,
        start_row: u64::try_from(start_row).unwrap_or(0),
        row_count: u64::try_from(row_count).unwrap_or(1),
        id_filters,
        account_filters,
    })
}

/// One row of a page: computed or stored.
#[derive(Serialize)]
#[serde(untagged)]
enum PageRow {
    Seeded(Box<SeededConversion>),
    Stored(Value),
}

#[derive(Serialize)]
struct ConversionPage {
    kind: &'static str,
    /// Omitted when empty, as Google omits empty repeated fields.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    conversion: Vec<PageRow>,
}

pub(crate) fn forbidden(what: &str) -> Response {
    google_simple(
        StatusCode::FORBIDDEN,
        "insufficientPermissions",
        &format!("The caller does not have permission to access {what}."),
    )
}

/// `GET .../agency/{agencyId}/advertiser/{advertiserId}/engine/{engineAccountId}/conversion`.
pub(crate) async fn get_conversions(
    State(app): State<AppState>,
    Path((agency, advertiser, engine)): Path<(String, String, String)>,
    Query(query): Query<HashMap<String, String>>,
) -> Response {
    Counters::bump(&app.shared.counters.read_requests);
    let ids = (|| {
        Ok::<_, Response>((
            parse_path_id("agencyId", &agency)?,
            parse_path_id("advertiserId", &advertiser)?,
            parse_path_id("engineAccountId", &engine)?,
        ))
    })();
    let (agency, advertiser, engine) = match ids {
        Ok(ids) => ids,
        Err(response) => return response,
    };
    let query = match parse_read_query(&query, &["customerId"]) {
        Ok(q) => q,
        Err(response) => return response,
    };
    let account = app.config.accounts.iter().position(|a| {
        a.engine_account_id == engine && a.advertiser_id == advertiser && a.agency_id == agency
    });
    let Some(a) = account else {
        return forbidden(&format!("engine account {engine}"));
    };
    read_page(&app, a, &query)
}

/// `GET .../customer/{customerId}/conversion`.
pub(crate) async fn get_by_customer_id(
    State(app): State<AppState>,
    Path(customer): Path<String>,
    Query(query): Query<HashMap<String, String>>,
) -> Response {
    Counters::bump(&app.shared.counters.read_requests);
    let query = match parse_read_query(&query, &["agencyId", "advertiserId", "engineAccountId"]) {
        Ok(q) => q,
        Err(response) => return response,
    };
    let Some(a) = app
        .config
        .accounts
        .iter()
        .position(|acc| acc.customer_id == customer)
    else {
        return forbidden(&format!("customer {customer}"));
    };
    read_page(&app, a, &query)
}

fn read_page(app: &AppState, a: usize, query: &ReadQuery) -> Response {
    let config = &app.config;
    let account = &config.accounts[a];
    let generator = Generator { config };
    let (lo, hi) = generator.index_range(query.start, query.end);
    let account_value = |name: &str| -> String {
        match name {
            "customerId" => account.customer_id.clone(),
            "agencyId" => account.agency_id.to_string(),
            "advertiserId" => account.advertiser_id.to_string(),
            _ => account.engine_account_id.to_string(),
        }
    };
    let account_matches = query
        .account_filters
        .iter()
        .all(|(name, value)| normalize_id(value) == normalize_id(&account_value(name)));
    let mut congruence = Congruence::ALL;
    for &(filter, _, id) in &query.id_filters {
        congruence = congruence.and(filter_congruence(config.seed, a, filter, id));
    }
    let seeded_count = if account_matches {
        congruence.count(lo, hi)
    } else {
        0
    };

    let store = app.shared.store();
    let row_count = query.row_count;
    let mut rows: Vec<PageRow> = Vec::with_capacity(usize::try_from(row_count).unwrap_or(0));
    let mut k = query.start_row;
    let overrides = store.seeded_overrides.get(a).copied().unwrap_or(0) > 0;
    while (rows.len() as u64) < row_count && k < seeded_count {
        let Some(i) = congruence.nth_from(lo, k) else {
            break;
        };
        let stored = overrides
            .then(|| {
                store.conversions.get(&(
                    ConversionKey::advertiser(
                        account.advertiser_id,
                        seeded_conversion_id(account, i),
                    ),
                    generator.timestamp(a, i),
                ))
            })
            .flatten();
        rows.push(match stored {
            Some(stored) => PageRow::Stored(stored.conversion.clone()),
            None => PageRow::Seeded(Box::new(generator.conversion(a, i))),
        });
        k += 1;
    }
    if (rows.len() as u64) < row_count
        && let Some(view) = store.views.get(a)
    {
        let skip = query.start_row.saturating_sub(seeded_count);
        let ts_lo = day_start_ms(query.start);
        let ts_hi = day_start_ms(query.end) + DAY_MS;
        let wanted = row_count - rows.len() as u64;
        let matching = view
            .range((ts_lo, String::new())..(ts_hi, String::new()))
            .filter_map(|(_, key)| store.conversions.get(key))
            .filter(|stored| stored_matches(&stored.conversion, query))
            .skip(usize::try_from(skip).unwrap_or(usize::MAX))
            .take(usize::try_from(wanted).unwrap_or(usize::MAX));
        for stored in matching {
            rows.push(PageRow::Stored(stored.conversion.clone()));
        }
    }
    drop(store);
    json_response(
        StatusCode::OK,
        &ConversionPage {
            kind: CONVERSION_LIST_KIND,
            conversion: rows,
        },
    )
}

fn normalize_id(s: &str) -> String {
    match s.parse::<i64>() {
        Ok(n) => n.to_string(),
        Err(_) => s.to_owned(),
    }
}

fn stored_matches(conversion: &Value, query: &ReadQuery) -> bool {
    let field = |name: &str| conversion.get(name).and_then(Value::as_str);
    query
        .id_filters
        .iter()
        .all(|(_, name, id)| field(name).and_then(|v| v.parse::<i64>().ok()) == Some(*id))
        && query
            .account_filters
            .iter()
            .all(|(name, value)| field(name).map(normalize_id) == Some(normalize_id(value)))
}

// ----------------------------------------------------------------------- body validation

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
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

const CONVERSION_FIELDS: &[(&str, Kind)] = &[
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

const AVAILABILITY_FIELDS: &[(&str, Kind)] = &[
    ("advertiserId", Kind::Int64),
    ("agencyId", Kind::Int64),
    ("availabilityTimestamp", Kind::Int64),
    ("customerId", Kind::Str),
    ("segmentationId", Kind::Int64),
    ("segmentationName", Kind::Str),
    ("segmentationType", Kind::Str),
];

/// Whether `name` is a field of `Conversion`.
pub(crate) fn is_conversion_field(name: &str) -> bool {
    CONVERSION_FIELDS.iter().any(|(n, _)| *n == name)
}

/// Whether `name` is a field of `Availability`.
pub(crate) fn is_availability_field(name: &str) -> bool {
    AVAILABILITY_FIELDS.iter().any(|(n, _)| *n == name)
}

/// A rejected item: its hex code and text (without the index suffix).
struct Detail {
    code: u32,
    text: String,
}

impl Detail {
    fn new(code: u32, text: impl Into<String>) -> Self {
        Self {
            code,
            text: text.into(),
        }
    }

    fn invalid(field: &str) -> Self {
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

fn empty_batch() -> Response {
    let message = format!("{REQUEST_NOT_VALID}[Empty batch encountered.]");
    bad_payload(message, "requestValidation")
}

/// Parses the body and returns the batch items, checking names like Google's JSON parser does
/// (an unknown name fails the whole request).
fn parse_batch(
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
            let at = format!("{list_field}[{i}]");
            for (name, v) in map {
                let Some((_, kind)) = fields.iter().find(|(n, _)| n == name) else {
                    return Err(unknown_name(name, Some(&at)));
                };
                if let (Kind::Dimensions | Kind::Metrics, Value::Array(entries)) = (kind, v) {
                    for (j, entry) in entries.iter().enumerate() {
                        if let Value::Object(entry) = entry
                            && let Some(bad) = entry.keys().find(|k| *k != "name" && *k != "value")
                        {
                            return Err(unknown_name(bad, Some(&format!("{at}.{name}[{j}]"))));
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
/// into strings and nulls removed.
fn normalize(item: Value, fields: &[(&str, Kind)]) -> Result<Map<String, Value>, Detail> {
    let Value::Object(map) = item else {
        return Err(Detail::new(
            0x100,
            "Field is missing or invalid: conversion is not an object",
        ));
    };
    let mut out = Map::with_capacity(map.len());
    for (name, value) in map {
        if value.is_null() {
            continue;
        }
        let kind = fields
            .iter()
            .find(|(n, _)| *n == name)
            .map_or(Kind::Str, |(_, k)| *k);
        let normalized = match kind {
            Kind::Int64 => parse_i64_value(&value).map(|n| Value::String(n.to_string())),
            Kind::UnsignedDigits => parse_i64_value(&value)
                .filter(|n| *n >= 0)
                .map(|n| Value::String(n.to_string())),
            Kind::Str => value.is_string().then_some(value),
            Kind::Dimensions => normalize_named(value, |v| v.is_string().then_some(v)),
            Kind::Metrics => normalize_named(value, |v| match v {
                Value::Number(_) => Some(v),
                Value::String(s) => s
                    .parse::<f64>()
                    .ok()
                    .and_then(Number::from_f64)
                    .map(Value::Number),
                _ => None,
            }),
        };
        match normalized {
            Some(v) => {
                out.insert(name, v);
            }
            None => return Err(Detail::invalid(&name)),
        }
    }
    Ok(out)
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

fn str_field<'a>(map: &'a Map<String, Value>, name: &str) -> Option<&'a str> {
    map.get(name).and_then(Value::as_str)
}

fn i64_field(map: &Map<String, Value>, name: &str) -> Option<i64> {
    str_field(map, name).and_then(|s| s.parse().ok())
}

/// The owner of a conversion or availability, with the permission check (`0x0000011D`).
fn owner_of(app: &AppState, map: &Map<String, Value>) -> Result<Owner, Detail> {
    if let Some(advertiser) = i64_field(map, "advertiserId") {
        let Some(agency) = i64_field(map, "agencyId") else {
            return Err(Detail::invalid("agencyId"));
        };
        let known = app
            .config
            .accounts
            .iter()
            .any(|a| a.advertiser_id == advertiser && a.agency_id == agency);
        if !known {
            return Err(Detail::new(
                0x11D,
                format!("The user does not have permission to view advertiser {advertiser}"),
            ));
        }
        if let Some(engine) = i64_field(map, "engineAccountId")
            && app
                .config
                .accounts
                .iter()
                .any(|a| a.engine_account_id == engine && a.advertiser_id != advertiser)
        {
            return Err(Detail::invalid("engineAccountId"));
        }
        return Ok(Owner::Advertiser(advertiser));
    }
    if let Some(customer) = str_field(map, "customerId") {
        if !app
            .config
            .accounts
            .iter()
            .any(|a| a.customer_id == customer)
        {
            return Err(Detail::new(
                0x11D,
                format!("The user does not have permission to view customer {customer}"),
            ));
        }
        return Ok(Owner::Customer(customer.to_owned()));
    }
    Err(Detail::invalid("advertiserId"))
}

fn check_segmentation(app: &AppState, map: &Map<String, Value>) -> Result<(), Detail> {
    match str_field(map, "segmentationType") {
        Some("FLOODLIGHT") => {}
        _ => return Err(Detail::invalid("segmentationType")),
    }
    let activities = &app.config.floodlight_activities;
    let by_id =
        i64_field(map, "segmentationId").map(|id| (id, activities.iter().find(|a| a.id == id)));
    let by_name =
        str_field(map, "segmentationName").map(|n| (n, activities.iter().find(|a| a.name == n)));
    match (by_id, by_name) {
        (Some((id, None)), _) => Err(Detail::new(
            0x10E,
            format!("Floodlight activity with ID {id} is not found"),
        )),
        (_, Some((name, None))) => Err(Detail::new(
            0x10E,
            format!("Floodlight activity '{name}' is not found"),
        )),
        (Some((_, Some(a))), Some((name, Some(b)))) if a.id != b.id => Err(Detail::new(
            0x10E,
            format!("Floodlight activity '{name}' does not have ID {}", a.id),
        )),
        _ => Ok(()),
    }
}

fn check_value_sets(map: &Map<String, Value>) -> Result<(), Detail> {
    let one_of = |name: &str, allowed: &[&str]| -> Result<(), Detail> {
        match str_field(map, name) {
            Some(v) if !allowed.contains(&v) => Err(Detail::invalid(name)),
            _ => Ok(()),
        }
    };
    one_of("type", &["ACTION", "TRANSACTION"])?;
    one_of("state", &["ACTIVE", "REMOVED", "DELETED"])?;
    one_of("channel", &["local", "online"])?;
    one_of("adUserDataConsent", &["UNKNOWN", "GRANTED", "DENIED"])?;
    if let Some(code) = str_field(map, "currencyCode")
        && !(code.len() == 3 && code.bytes().all(|b| b.is_ascii_uppercase()))
    {
        return Err(Detail::invalid("currencyCode"));
    }
    Ok(())
}

fn check_references(app: &AppState, map: &Map<String, Value>) -> Result<(), Detail> {
    let names = |field: &str| -> Vec<String> {
        map.get(field)
            .and_then(Value::as_array)
            .map(|entries| {
                entries
                    .iter()
                    .filter_map(|e| e.get("name").and_then(Value::as_str).map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default()
    };
    for name in names("customDimension") {
        if !app.config.custom_dimensions.contains(&name) {
            return Err(Detail::new(
                0x115,
                format!("Custom dimension '{name}' is not found"),
            ));
        }
    }
    for name in names("customMetric") {
        if !app.config.custom_metrics.contains(&name) {
            return Err(Detail::new(
                0x116,
                format!("Custom metric '{name}' is not found"),
            ));
        }
    }
    Ok(())
}

/// The oldest click a conversion may be attributed to, measured at the conversion's timestamp
/// (help center answer 2411961: clicks less than 90 days old; SA-17).
const CLICK_MAX_AGE_MS: i64 = 90 * DAY_MS;

/// The oldest click an update may name a conversion by (update how-to: "within 60 days of the
/// click"; SA-17).
const UPDATE_CLICK_MAX_AGE_MS: i64 = 60 * DAY_MS;

/// The click a `clickId` names: (account number, click number), checked against the conversion's
/// timestamp. An ID the fake never issued, a click after the conversion and a click more than 90
/// days before it are all `0x00000101` (SA-17).
fn click_of(
    app: &AppState,
    click: &str,
    timestamp: i64,
    max_age_ms: i64,
) -> Result<(usize, u64), Detail> {
    let not_found = || Detail::new(0x101, format!("Click ID '{click}' is not found"));
    let (a, i) = click_origin(app.config.seed, click).ok_or_else(not_found)?;
    if a >= app.config.accounts.len() {
        return Err(not_found());
    }
    let clicked = Generator {
        config: &app.config,
    }
    .click_timestamp(a, i);
    if timestamp < clicked {
        return Err(Detail::new(
            0x101,
            format!("Click ID '{click}' is not found before conversion timestamp {timestamp}"),
        ));
    }
    if timestamp - clicked > max_age_ms {
        let days = max_age_ms / DAY_MS;
        return Err(Detail::new(
            0x101,
            format!(
                "Click ID '{click}' is not found: the click is more than {days} days older than conversion timestamp {timestamp}"
            ),
        ));
    }
    Ok((a, i))
}

/// The owner of a conversion (SA-17). With a `clickId`, the click decides: a conversion naming
/// no advertiser and no customer is attributed to the click's engine account (its agency,
/// advertiser, engine account, campaign, ad group, ad and criterion IDs are filled in where
/// absent); one that names them must name the click's. Without a click, [`owner_of`].
fn attributed_owner(
    app: &AppState,
    map: &mut Map<String, Value>,
    timestamp: i64,
    click_max_age_ms: i64,
) -> Result<Owner, Detail> {
    let Some(click) = str_field(map, "clickId").map(str::to_owned) else {
        return owner_of(app, map);
    };
    let (a, i) = click_of(app, &click, timestamp, click_max_age_ms)?;
    let account = &app.config.accounts[a];
    if map.contains_key("advertiserId") || map.contains_key("customerId") {
        let owner = owner_of(app, map)?;
        let same_owner = match &owner {
            Owner::Advertiser(advertiser) => *advertiser == account.advertiser_id,
            Owner::Customer(customer) => *customer == account.customer_id,
        };
        let same_engine =
            i64_field(map, "engineAccountId").is_none_or(|e| e == account.engine_account_id);
        if !(same_owner && same_engine) {
            return Err(Detail::new(
                0x101,
                format!("Click ID '{click}' is not found for the conversion's account"),
            ));
        }
        return Ok(owner);
    }
    let row = Generator {
        config: &app.config,
    }
    .conversion(a, i);
    for (name, value) in [
        ("agencyId", account.agency_id.to_string()),
        ("advertiserId", account.advertiser_id.to_string()),
        ("engineAccountId", account.engine_account_id.to_string()),
        ("campaignId", row.campaign_id),
        ("adGroupId", row.ad_group_id),
        ("adId", row.ad_id),
        ("criterionId", row.criterion_id),
    ] {
        map.entry(name).or_insert(Value::String(value));
    }
    Ok(Owner::Advertiser(account.advertiser_id))
}

/// The seeded conversion a conversion ID names for this owner: (account number, index).
fn seeded_target(app: &AppState, owner: &Owner, conversion_id: &str) -> Option<(usize, u64)> {
    let (engine, i) = parse_seeded_conversion_id(conversion_id)?;
    let a = app
        .config
        .accounts
        .iter()
        .position(|acc| acc.engine_account_id == engine)?;
    let account = &app.config.accounts[a];
    let owned = match owner {
        Owner::Advertiser(adv) => *adv == account.advertiser_id,
        Owner::Customer(c) => *c == account.customer_id,
    };
    (owned && i < app.config.conversions_per_account).then_some((a, i))
}

/// The account whose reads show an inserted conversion.
fn view_of(app: &AppState, map: &Map<String, Value>) -> Option<usize> {
    if let Some(engine) = i64_field(map, "engineAccountId") {
        return app
            .config
            .accounts
            .iter()
            .position(|a| a.engine_account_id == engine);
    }
    let customer = str_field(map, "customerId")?;
    app.config
        .accounts
        .iter()
        .position(|a| a.customer_id == customer)
}

fn batch_failure(details: &[(usize, Detail)], item: &str, cut: Option<DetailsCut>) -> Response {
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

#[derive(Serialize)]
struct ConversionEcho<'a> {
    kind: &'static str,
    conversion: &'a [Value],
}

/// `POST /conversion`.
pub(crate) async fn insert(
    State(app): State<AppState>,
    seq: Option<Extension<RequestSeq>>,
    cut: Option<Extension<DetailsTruncation>>,
    body: Bytes,
) -> Response {
    write_batch(&app, seq, cut, &body, WriteKind::Insert)
}

/// `PUT /conversion`.
pub(crate) async fn update(
    State(app): State<AppState>,
    seq: Option<Extension<RequestSeq>>,
    cut: Option<Extension<DetailsTruncation>>,
    body: Bytes,
) -> Response {
    write_batch(&app, seq, cut, &body, WriteKind::Update)
}

/// What tells `insert` and `update` apart.
#[derive(Clone, Copy)]
enum WriteKind {
    Insert,
    Update,
}

/// Insert or update a batch: best effort per conversion (SA-9). The valid
/// conversions are stored; when any is rejected the answer is one 400 naming
/// every rejected index.
fn write_batch(
    app: &AppState,
    seq: Option<Extension<RequestSeq>>,
    cut: Option<Extension<DetailsTruncation>>,
    body: &[u8],
    kind: WriteKind,
) -> Response {
    let counters = &app.shared.counters;
    Counters::bump(match kind {
        WriteKind::Insert => &counters.insert_requests,
        WriteKind::Update => &counters.update_requests,
    });
    let request = seq.map_or(0, |Extension(RequestSeq(n))| n);
    let items = match parse_batch(body, "conversion", CONVERSION_FIELDS) {
        Ok(items) => items,
        Err(response) => return response,
    };
    if items.is_empty() {
        return empty_batch();
    }
    let now_ms = app.now_ms();
    let mut details = Vec::new();
    let mut echoed = Vec::with_capacity(items.len());
    let mut seen = HashSet::new();
    let mut store = app.shared.store();
    for (index, item) in items.into_iter().enumerate() {
        let result = match kind {
            WriteKind::Insert => insert_one(app, &mut store, &mut seen, item, now_ms, request),
            WriteKind::Update => update_one(app, &mut store, &mut seen, item, now_ms, request),
        };
        match result {
            Ok(conversion) => echoed.push(conversion),
            Err(detail) => details.push((index, detail)),
        }
    }
    drop(store);
    Counters::add(
        match kind {
            WriteKind::Insert => &counters.conversions_inserted,
            WriteKind::Update => &counters.conversions_updated,
        },
        echoed.len() as u64,
    );
    Counters::add(&counters.conversions_rejected, details.len() as u64);
    if details.is_empty() {
        json_response(
            StatusCode::OK,
            &ConversionEcho {
                kind: CONVERSION_LIST_KIND,
                conversion: &echoed,
            },
        )
    } else {
        tracing::debug!(
            rejected = details.len(),
            stored = echoed.len(),
            "batch partly rejected"
        );
        batch_failure(
            &details,
            "conversion",
            cut.map(|Extension(DetailsTruncation(cut))| cut),
        )
    }
}

fn required_common(map: &Map<String, Value>) -> Result<(String, i64), Detail> {
    let id = str_field(map, "conversionId")
        .filter(|s| !s.is_empty())
        .ok_or_else(|| Detail::invalid("conversionId"))?;
    let ts = i64_field(map, "conversionTimestamp")
        .ok_or_else(|| Detail::invalid("conversionTimestamp"))?;
    Ok((id.to_owned(), ts))
}

fn insert_one(
    app: &AppState,
    store: &mut Store,
    seen: &mut HashSet<ConversionKey>,
    item: Value,
    now_ms: i64,
    request: u64,
) -> Result<Value, Detail> {
    let mut map = normalize(item, CONVERSION_FIELDS)?;
    let (conversion_id, timestamp) = required_common(&map)?;
    if !map.contains_key("segmentationType") {
        return Err(Detail::invalid("segmentationType"));
    }
    let owner = attributed_owner(app, &mut map, timestamp, CLICK_MAX_AGE_MS)?;
    let key = ConversionKey {
        owner,
        conversion_id,
    };
    if !seen.insert(key.clone()) {
        return Err(Detail::new(
            0x11F,
            format!(
                "Advertiser conversion ID '{}' is already specified in this request",
                key.conversion_id
            ),
        ));
    }
    check_segmentation(app, &map)?;
    check_value_sets(&map)?;
    check_references(app, &map)?;
    // SA-15: (conversionId, conversionTimestamp) is unique per advertiser.
    let generator = Generator {
        config: &app.config,
    };
    let existing_ds = store
        .conversions
        .get(&(key.clone(), timestamp))
        .map(|s| s.ds_conversion_id)
        .or_else(|| {
            seeded_target(app, &key.owner, &key.conversion_id)
                .filter(|&(a, i)| generator.timestamp(a, i) == timestamp)
                .map(|(a, i)| generator.seeded_ds_id(a, i))
        });
    if !app.config.deduplicate
        && let Some(stored) = store.conversions.get_mut(&(key.clone(), timestamp))
    {
        // Without deduplication a repeated insert is stored again.
        stored.copies += 1;
        return Ok(stored.conversion.clone());
    }
    if let Some(ds) = existing_ds {
        return Err(Detail::new(
            0x11A,
            format!(
                "Advertiser conversion ID '{}' with conversion timestamp {timestamp} is already used by another conversion with SA360 conversion ID {ds}",
                key.conversion_id
            ),
        ));
    }
    if store.next_ds_id == 0 {
        store.next_ds_id = INSERTED_DS_BASE;
    }
    store.next_ds_id += 1;
    let ds = store.next_ds_id;
    map.insert("dsConversionId".to_owned(), Value::String(ds.to_string()));
    map.insert(
        "conversionModifiedTimestamp".to_owned(),
        Value::String(now_ms.to_string()),
    );
    let view = view_of(app, &map);
    let conversion = Value::Object(map);
    if let Some(a) = view
        && let Some(index) = store.views.get_mut(a)
    {
        index.insert(
            (timestamp, key.conversion_id.clone()),
            (key.clone(), timestamp),
        );
    }
    store.conversions.insert(
        (key.clone(), timestamp),
        StoredConversion {
            key,
            conversion: conversion.clone(),
            origin: Origin::Inserted,
            ds_conversion_id: ds,
            timestamp_ms: timestamp,
            request,
            updates: 0,
            copies: 1,
        },
    );
    Ok(conversion)
}

/// The fields `update` may change.
const WRITABLE: &[&str] = &["currencyCode", "quantityMillis", "revenueMicros", "state"];

fn update_one(
    app: &AppState,
    store: &mut Store,
    seen: &mut HashSet<ConversionKey>,
    item: Value,
    now_ms: i64,
    request: u64,
) -> Result<Value, Detail> {
    let mut map = normalize(item, CONVERSION_FIELDS)?;
    let (conversion_id, timestamp) = required_common(&map)?;
    let owner = attributed_owner(app, &mut map, timestamp, UPDATE_CLICK_MAX_AGE_MS)?;
    let mut key = ConversionKey {
        owner,
        conversion_id,
    };
    if !seen.insert(key.clone()) {
        return Err(Detail::new(
            0x11F,
            format!(
                "Advertiser conversion ID '{}' is already specified in this request",
                key.conversion_id
            ),
        ));
    }
    if map.contains_key("segmentationType") {
        check_segmentation(app, &map)?;
    }
    check_value_sets(&map)?;
    let not_found = |key: &ConversionKey| {
        Detail::new(
            0x11B,
            format!(
                "Advertiser conversion ID '{}' with conversion timestamp {timestamp} is not found",
                key.conversion_id
            ),
        )
    };
    // A seeded conversion is stored under its advertiser the first time it changes.
    if !store.conversions.contains_key(&(key.clone(), timestamp))
        && let Some((a, i)) = seeded_target(app, &key.owner, &key.conversion_id)
    {
        let generator = Generator {
            config: &app.config,
        };
        if generator.timestamp(a, i) != timestamp {
            return Err(not_found(&key));
        }
        let account = &app.config.accounts[a];
        key = ConversionKey::advertiser(account.advertiser_id, key.conversion_id.clone());
        if let Entry::Vacant(slot) = store.conversions.entry((key.clone(), timestamp)) {
            let seeded = serde_json::to_value(generator.conversion(a, i))
                .map_err(|_| Detail::new(0x100, "Internal error while reading the conversion"))?;
            slot.insert(StoredConversion {
                key: key.clone(),
                conversion: seeded,
                origin: Origin::SeededUpdated,
                ds_conversion_id: generator.seeded_ds_id(a, i),
                timestamp_ms: timestamp,
                request,
                updates: 0,
                copies: 1,
            });
            if let Some(count) = store.seeded_overrides.get_mut(a) {
                *count += 1;
            }
        }
    }
    let Some(stored) = store.conversions.get_mut(&(key.clone(), timestamp)) else {
        return Err(not_found(&key));
    };
    if let Value::Object(target) = &mut stored.conversion {
        for &field in WRITABLE {
            if let Some(v) = map.get(field) {
                target.insert(field.to_owned(), v.clone());
            }
        }
        target.insert(
            "conversionModifiedTimestamp".to_owned(),
            Value::String(now_ms.to_string()),
        );
    }
    stored.updates += 1;
    Ok(stored.conversion.clone())
}

// -------------------------------------------------------------------- updateAvailability

#[derive(Serialize)]
struct AvailabilityEcho<'a> {
    availabilities: &'a [Value],
}

/// `POST /conversion/updateAvailability`. All or nothing: any invalid availability rejects the
/// request (the real service documents nothing here).
pub(crate) async fn update_availability(State(app): State<AppState>, body: Bytes) -> Response {
    Counters::bump(&app.shared.counters.availability_requests);
    let items = match parse_batch(&body, "availabilities", AVAILABILITY_FIELDS) {
        Ok(items) => items,
        Err(response) => return response,
    };
    if items.is_empty() {
        return empty_batch();
    }
    let mut details = Vec::new();
    let mut accepted = Vec::with_capacity(items.len());
    for (index, item) in items.into_iter().enumerate() {
        match check_availability(&app, item) {
            Ok(v) => accepted.push(v),
            Err(detail) => details.push((index, detail)),
        }
    }
    if !details.is_empty() {
        return batch_failure(&details, "availability", None);
    }
    app.shared
        .store()
        .availabilities
        .extend(accepted.iter().cloned());
    json_response(
        StatusCode::OK,
        &AvailabilityEcho {
            availabilities: &accepted,
        },
    )
}

fn check_availability(app: &AppState, item: Value) -> Result<Value, Detail> {
    let map = normalize(item, AVAILABILITY_FIELDS)?;
    for required in [
        "agencyId",
        "advertiserId",
        "availabilityTimestamp",
        "segmentationType",
    ] {
        if !map.contains_key(required) {
            return Err(Detail::invalid(required));
        }
    }
    owner_of(app, &map)?;
    check_segmentation(app, &map)?;
    Ok(Value::Object(map))
}

// ------------------------------------------------------------------------------ savedColumns

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct SavedColumnOut<'a> {
    kind: &'static str,
    saved_column_name: &'a str,
    #[serde(rename = "type")]
    column_type: &'a str,
}

#[derive(Serialize)]
struct SavedColumnListOut<'a> {
    kind: &'static str,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    items: Vec<SavedColumnOut<'a>>,
}

/// `GET .../agency/{agencyId}/advertiser/{advertiserId}/savedcolumns`.
pub(crate) async fn saved_columns(
    State(app): State<AppState>,
    Path((agency, advertiser)): Path<(String, String)>,
) -> Response {
    Counters::bump(&app.shared.counters.saved_columns_requests);
    let (agency, advertiser) = match (
        parse_path_id("agencyId", &agency),
        parse_path_id("advertiserId", &advertiser),
    ) {
        (Ok(a), Ok(b)) => (a, b),
        (Err(r), _) | (_, Err(r)) => return r,
    };
    if !app.knows_advertiser(agency, advertiser) {
        return forbidden(&format!("advertiser {advertiser}"));
    }
    let items = app
        .config
        .saved_columns
        .iter()
        .map(|c| SavedColumnOut {
            kind: "doubleclicksearch#savedColumn",
            saved_column_name: &c.name,
            column_type: &c.column_type,
        })
        .collect();
    json_response(
        StatusCode::OK,
        &SavedColumnListOut {
            kind: "doubleclicksearch#savedColumnList",
            items,
        },
    )
}

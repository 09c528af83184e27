//! `searchAds360Fields.get` and `.search` over the fields the fake's `FROM conversion` queries know.
//!
//! `search` accepts `SELECT <metadata fields> [WHERE name = 'x' | name IN ('x', ...) | name LIKE
//! 'prefix%']` (no FROM, as the service requires); anything else is a `QueryError`.

use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::Response;
use serde_json::{Value, json};

use super::Failure;
use super::query::SELECTABLE;
use crate::errors::json_response;
use crate::search_ads::AppState;
use crate::search_ads::ledger::Counters;

fn data_type(name: &str) -> &'static str {
    const INT64: &[&str] = &[
        "conversion.ad_id",
        "conversion.asset_id",
        "conversion.conversion_quantity",
        "conversion.conversion_revenue_micros",
        "conversion.criterion_id",
        "conversion.floodlight_original_revenue",
        "conversion.id",
        "conversion.merchant_id",
        "conversion.visit_id",
        "customer.id",
        "customer.manager_id",
        "campaign.id",
        "ad_group.id",
    ];
    const ENUM: &[&str] = &[
        "conversion.status",
        "conversion.attribution_type",
        "conversion.asset_field_type",
        "conversion.product_channel",
    ];
    if name == "segments.date" {
        "DATE"
    } else if name.ends_with("resource_name") {
        "RESOURCE_NAME"
    } else if INT64.contains(&name) {
        "INT64"
    } else if ENUM.contains(&name) {
        "ENUM"
    } else {
        "STRING"
    }
}

fn field(name: &str) -> Value {
    let dt = data_type(name);
    let filterable = dt != "RESOURCE_NAME";
    json!({
        "resourceName": format!("searchAds360Fields/{name}"),
        "name": name,
        "category": if name.starts_with("segments.") { "SEGMENT" } else { "ATTRIBUTE" },
        "dataType": dt,
        "selectable": true,
        "filterable": filterable,
        "sortable": filterable,
        "isRepeated": false,
        "typeUrl": "",
        "enumValues": if name == "conversion.status" { json!(["UNSPECIFIED", "UNKNOWN", "ENABLED", "REMOVED"]) } else { json!([]) },
    })
}

fn resource(name: &str) -> Option<Value> {
    (name == "conversion").then(|| {
        json!({
            "resourceName": "searchAds360Fields/conversion",
            "name": "conversion",
            "category": "RESOURCE",
            "dataType": "MESSAGE",
            "selectable": false,
            "filterable": false,
            "sortable": false,
            "isRepeated": false,
            "attributeResources": ["ad_group", "ad_group_criterion", "campaign", "customer"],
            "segments": ["segments.date"],
            "selectableWith": ["segments.date"],
        })
    })
}

fn not_found(name: &str) -> Failure {
    Failure::new(
        StatusCode::NOT_FOUND,
        "requestError",
        "RESOURCE_NOT_FOUND",
        format!("No field or resource named '{name}'."),
    )
}

/// `GET /v0/searchAds360Fields/{name}`.
pub(crate) async fn fields_get(State(app): State<AppState>, Path(name): Path<String>) -> Response {
    Counters::bump(&app.shared.counters.reporting_other_requests);
    if SELECTABLE.contains(&name.as_str()) {
        return json_response(StatusCode::OK, &field(&name));
    }
    match resource(&name) {
        Some(v) => json_response(StatusCode::OK, &v),
        None => not_found(&name).into_response(&app),
    }
}

fn query_error(code: &'static str, message: &str) -> Failure {
    Failure::new(StatusCode::BAD_REQUEST, "queryError", code, message)
}

/// Which field names a field query's WHERE clause keeps.
type NamePredicate = Box<dyn Fn(&str) -> bool>;

/// Splits `SELECT a, b WHERE name <op> <values>` into the selected names and the name predicate.
fn parse(text: &str) -> Result<(Vec<String>, NamePredicate), Failure> {
    let trimmed = text.trim();
    let rest = trimmed
        .get(..7)
        .filter(|s| s.eq_ignore_ascii_case("SELECT "))
        .map(|_| &trimmed[7..])
        .ok_or_else(|| query_error("EXPECTED_SELECT", "Expected SELECT."))?;
    let upper = rest.to_ascii_uppercase();
    if upper.contains(" FROM ") {
        return Err(query_error(
            "UNEXPECTED_FROM_CLAUSE",
            "Field metadata queries take no FROM clause.",
        ));
    }
    let (select, condition) = match upper.find(" WHERE ") {
        Some(i) => (&rest[..i], Some(rest[i + 7..].trim())),
        None => (rest, None),
    };
    let selected: Vec<String> = select.split(',').map(|s| s.trim().to_owned()).collect();
    const META: &[&str] = &[
        "name",
        "category",
        "data_type",
        "selectable",
        "filterable",
        "sortable",
        "selectable_with",
        "attribute_resources",
        "metrics",
        "segments",
        "enum_values",
        "type_url",
        "is_repeated",
        "resource_name",
    ];
    if let Some(bad) = selected.iter().find(|s| !META.contains(&s.as_str())) {
        return Err(query_error(
            "UNRECOGNIZED_FIELD",
            &format!("Unrecognized field '{bad}'."),
        ));
    }
    let Some(condition) = condition else {
        return Ok((selected, Box::new(|_| true)));
    };
    let strings = |list: &str| -> Result<Vec<String>, Failure> {
        list.split(',')
            .map(|s| {
                let s = s.trim();
                s.strip_prefix('\'')
                    .and_then(|s| s.strip_suffix('\''))
                    .filter(|s| !s.contains(['\'', '\\', '\n']))
                    .map(str::to_owned)
                    .ok_or_else(|| query_error("BAD_VALUE", "Expected a quoted name."))
            })
            .collect()
    };
    let cond_upper = condition.to_ascii_uppercase();
    if let Some(v) = condition.strip_prefix("name = ") {
        let [name] = <[String; 1]>::try_from(strings(v)?)
            .map_err(|_| query_error("EXPECTED_SINGLE_VALUE", "Expected one value."))?;
        Ok((selected, Box::new(move |n| n == name)))
    } else if cond_upper.starts_with("NAME IN (") && condition.ends_with(')') {
        let names = strings(&condition[9..condition.len() - 1])?;
        Ok((selected, Box::new(move |n| names.iter().any(|x| x == n))))
    } else if cond_upper.starts_with("NAME LIKE ") {
        let [pattern] = <[String; 1]>::try_from(strings(&condition[10..])?)
            .map_err(|_| query_error("EXPECTED_SINGLE_VALUE", "Expected one value."))?;
        let prefix = pattern
            .strip_suffix('%')
            .filter(|p| !p.contains(['%', '_', '[']))
            .map(str::to_owned)
            .ok_or_else(|| {
                query_error(
                    "INVALID_VALUE_WITH_LIKE_OPERATOR",
                    "This fake supports only LIKE 'prefix%'.",
                )
            })?;
        Ok((selected, Box::new(move |n| n.starts_with(&prefix))))
    } else {
        Err(query_error(
            "BAD_OPERATOR",
            "This fake filters field metadata only on name (=, IN, LIKE 'prefix%').",
        ))
    }
}

/// `POST /v0/searchAds360Fields:search`.
pub(crate) async fn fields_search(State(app): State<AppState>, body: Bytes) -> Response {
    Counters::bump(&app.shared.counters.reporting_other_requests);
    let request: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let text = request.get("query").and_then(Value::as_str).unwrap_or("");
    let (selected, keep) = match parse(text) {
        Ok(p) => p,
        Err(f) => return f.into_response(&app),
    };
    let results: Vec<Value> = SELECTABLE
        .iter()
        .filter(|n| keep(n))
        .map(|n| {
            let full = field(n);
            let mut out = serde_json::Map::new();
            out.insert("resourceName".into(), full["resourceName"].clone());
            for s in &selected {
                let camel = match s.as_str() {
                    "data_type" => "dataType",
                    "selectable_with" => "selectableWith",
                    "attribute_resources" => "attributeResources",
                    "enum_values" => "enumValues",
                    "type_url" => "typeUrl",
                    "is_repeated" => "isRepeated",
                    "resource_name" => "resourceName",
                    other => other,
                };
                if let Some(v) = full.get(camel) {
                    out.insert(camel.into(), v.clone());
                }
            }
            Value::Object(out)
        })
        .collect();
    json_response(
        StatusCode::OK,
        &json!({"results": results, "totalResultsCount": results.len().to_string()}),
    )
}

//! `searchAds360Fields.get` and `.search`: the catalogue of fields and resources (read from the
//! discovery document, [`catalogue`]) as `SearchAds360Field` artifacts.
//!
//! `search` takes the query language without `FROM` (GRAM: "FROM … forbidden for
//! searchAds360Fields:search"; a FROM is `UNEXPECTED_FROM_CLAUSE`), e.g. Google's
//! `SELECT name, category, selectable, filterable, sortable, selectable_with, data_type, is_repeated
//! WHERE name = "campaign.id"`. Its fields are the artifact's members (snake_case); WHERE works on
//! `name`, `type_url` (STRING), `category`, `data_type` (ENUM) and `selectable`, `filterable`,
//! `sortable`, `is_repeated` (BOOLEAN) with the operators of those types; ORDER BY and LIMIT apply.

use std::borrow::Cow;
use std::cmp::Ordering;

use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::Response;
use serde_json::{Value, json};

use super::failure::Failure;
use super::query::QueryError;
use super::query::catalogue::{self, CATALOGUE, Category, DataType, FieldInfo};
use super::query::checks::{Typed, typed};
use super::query::eval::{Filter, Val};
use super::query::parser;
use crate::errors::json_response;
use crate::search_ads::ledger::Counters;
use crate::search_ads::state::AppState;

fn field(f: &FieldInfo) -> Value {
    let filterable = f.filterable();
    json!({
        "resourceName": format!("searchAds360Fields/{}", f.name),
        "name": f.name,
        "category": f.category.name(),
        "dataType": f.data_type.name(),
        "selectable": true,
        "filterable": filterable,
        "sortable": f.sortable(),
        "isRepeated": f.repeated,
        "typeUrl": "",
        "enumValues": f.enum_values,
        "selectableWith": catalogue::SERVED
            .iter()
            .filter(|s| catalogue::selectable_with(s, f))
            .map(|s| s.name)
            .collect::<Vec<_>>(),
    })
}

/// The segments or metrics a served resource takes (SR-22).
fn with_category(served: Option<&catalogue::Served>, category: Category) -> Vec<&'static str> {
    let Some(served) = served else {
        return Vec::new();
    };
    CATALOGUE
        .fields
        .values()
        .filter(|f| f.category == category && catalogue::selectable_with(served, f))
        .map(|f| f.name.as_str())
        .collect()
}

fn resource(name: &str) -> Value {
    let served = catalogue::served(name);
    let segments = with_category(served, Category::Segment);
    json!({
        "resourceName": format!("searchAds360Fields/{name}"),
        "name": name,
        "category": "RESOURCE",
        "dataType": "MESSAGE",
        "selectable": false,
        "filterable": false,
        "sortable": false,
        "isRepeated": false,
        "typeUrl": "",
        "attributeResources": served.map_or(&[][..], |s| s.attributed),
        "selectableWith": segments,
        "segments": segments,
        "metrics": with_category(served, Category::Metric),
    })
}

fn artifacts() -> impl Iterator<Item = Value> {
    CATALOGUE
        .resources
        .iter()
        .map(|r| resource(r))
        .chain(CATALOGUE.fields.values().map(field))
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
    if let Some(f) = catalogue::field(&name) {
        return json_response(StatusCode::OK, &field(f));
    }
    if catalogue::is_resource(&name) {
        return json_response(StatusCode::OK, &resource(&name));
    }
    not_found(&name).into_response(&app)
}

/// The members of an artifact a query may name: (query name, JSON name, type for WHERE).
const META: &[(&str, &str, Option<DataType>)] = &[
    ("name", "name", Some(DataType::String)),
    ("category", "category", Some(DataType::Enum)),
    ("data_type", "dataType", Some(DataType::Enum)),
    ("selectable", "selectable", Some(DataType::Boolean)),
    ("filterable", "filterable", Some(DataType::Boolean)),
    ("sortable", "sortable", Some(DataType::Boolean)),
    ("is_repeated", "isRepeated", Some(DataType::Boolean)),
    ("type_url", "typeUrl", Some(DataType::String)),
    ("resource_name", "resourceName", None),
    ("selectable_with", "selectableWith", None),
    ("attribute_resources", "attributeResources", None),
    ("metrics", "metrics", None),
    ("segments", "segments", None),
    ("enum_values", "enumValues", None),
];

fn meta(name: &str) -> Result<&'static (&'static str, &'static str, Option<DataType>), QueryError> {
    META.iter().find(|(q, _, _)| *q == name).ok_or_else(|| {
        QueryError::new(
            "UNRECOGNIZED_FIELD",
            format!("Unrecognized field in the query: '{name}'."),
        )
        .at(name)
    })
}

fn enum_values(name: &str) -> Vec<String> {
    let values: &[&str] = match name {
        "category" => &[
            "UNSPECIFIED",
            "UNKNOWN",
            "RESOURCE",
            "ATTRIBUTE",
            "SEGMENT",
            "METRIC",
        ],
        _ => &[
            "UNSPECIFIED",
            "UNKNOWN",
            "BOOLEAN",
            "DATE",
            "DOUBLE",
            "ENUM",
            "FLOAT",
            "INT32",
            "INT64",
            "MESSAGE",
            "RESOURCE_NAME",
            "STRING",
            "UINT64",
        ],
    };
    values.iter().map(|v| (*v).to_owned()).collect()
}

fn value<'v>(artifact: &'v Value, json_name: &str) -> Option<Val<'v>> {
    match artifact.get(json_name)? {
        Value::String(s) => Some(Val::Str(Cow::Borrowed(s))),
        Value::Bool(b) => Some(Val::Bool(*b)),
        _ => None,
    }
}

/// A checked field query: selected members, conditions, order and limit.
struct FieldQuery {
    select: Vec<&'static str>,
    filters: Vec<(&'static str, Filter)>,
    order: Vec<(&'static str, bool)>,
    limit: Option<u64>,
}

fn parse(text: &str) -> Result<FieldQuery, QueryError> {
    let ast = parser::parse(text)?;
    if let Some(from) = ast.from {
        return Err(QueryError::new(
            "UNEXPECTED_FROM_CLAUSE",
            "Field metadata queries take no FROM clause.",
        )
        .at(from));
    }
    let select = ast
        .select
        .iter()
        .map(|s| meta(s).map(|m| m.1))
        .collect::<Result<_, _>>()?;
    let mut filters = Vec::new();
    for c in &ast.conditions {
        let (name, json_name, t) = meta(&c.field)?;
        let Some(t) = t else {
            return Err(QueryError::new(
                "PROHIBITED_FIELD_IN_WHERE_CLAUSE",
                format!("This fake does not filter field metadata on '{name}'."),
            )
            .at(*name));
        };
        let values = enum_values(name);
        let typed_field = Typed {
            name,
            data_type: *t,
            enum_values: &values,
        };
        filters.push((*json_name, typed(&typed_field, c, chrono::NaiveDate::MIN)?));
    }
    let mut order = Vec::new();
    for (name, desc) in &ast.order {
        let (_, json_name, _) = meta(name)?;
        if !ast.select.contains(name) {
            return Err(QueryError::new(
                "EXPECTED_REFERENCED_FIELD_IN_SELECT_CLAUSE",
                format!("'{name}' is used in ORDER BY but missing from the SELECT clause."),
            )
            .at(name.clone()));
        }
        order.push((*json_name, *desc));
    }
    if !ast.parameters.is_empty() {
        return Err(QueryError::new(
            "BAD_PARAMETER_NAME",
            "Field metadata queries take no PARAMETERS.",
        ));
    }
    Ok(FieldQuery {
        select,
        filters,
        order,
        limit: ast.limit,
    })
}

/// `POST /v0/searchAds360Fields:search`.
pub(crate) async fn fields_search(State(app): State<AppState>, body: Bytes) -> Response {
    Counters::bump(&app.shared.counters.reporting_other_requests);
    let request: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let text = request.get("query").and_then(Value::as_str).unwrap_or("");
    let q = match parse(text) {
        Ok(q) => q,
        Err(e) => return Failure::query(e).into_response(&app),
    };
    let mut found: Vec<Value> = artifacts()
        .filter(|a| {
            q.filters
                .iter()
                .all(|(name, f)| f.holds(value(a, name).as_ref()))
        })
        .collect();
    found.sort_by(|a, b| {
        for (name, desc) in &q.order {
            let o = match (value(a, name), value(b, name)) {
                (Some(x), Some(y)) => x.cmp_to(&y).unwrap_or(Ordering::Equal),
                (x, y) => x.is_some().cmp(&y.is_some()),
            };
            let o = if *desc { o.reverse() } else { o };
            if o.is_ne() {
                return o;
            }
        }
        Ordering::Equal
    });
    let total = found.len();
    let limit = q
        .limit
        .map_or(usize::MAX, |l| usize::try_from(l).unwrap_or(usize::MAX));
    let results: Vec<Value> = found
        .into_iter()
        .take(limit)
        .map(|full| {
            let mut out = serde_json::Map::new();
            out.insert("resourceName".into(), full["resourceName"].clone());
            for s in &q.select {
                if let Some(v) = full.get(*s) {
                    out.insert((*s).into(), v.clone());
                }
            }
            Value::Object(out)
        })
        .collect();
    json_response(
        StatusCode::OK,
        &json!({"results": results, "totalResultsCount": total.to_string()}),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(1024))]

        /// No field query panics the field service, however malformed.
        #[test]
        fn arbitrary_field_queries_never_panic(
            text in "\\PC{0,120}",
            tail in "(SELECT name|WHERE|name|category|LIKE|IN|=|'x%'|\\(|\\)|,| ){0,12}",
        ) {
            let _ = parse(&text);
            let _ = parse(&format!("SELECT name WHERE {tail}"));
        }
    }

    fn names(text: &str) -> Vec<String> {
        let q = parse(text).unwrap();
        artifacts()
            .filter(|a| q.filters.iter().all(|(n, f)| f.holds(value(a, n).as_ref())))
            .map(|a| a["name"].as_str().unwrap().to_owned())
            .collect()
    }

    #[test]
    fn google_example_and_operators_on_metadata() {
        assert_eq!(
            names(
                "SELECT name, category, selectable, filterable, sortable, selectable_with, \
                 data_type, is_repeated WHERE name = \"campaign.id\""
            ),
            ["campaign.id"]
        );
        assert_eq!(
            names("SELECT name WHERE name LIKE 'conversion.%'").len(),
            24
        );
        assert_eq!(
            names("SELECT name WHERE category = RESOURCE AND name IN ('conversion', 'campaign')"),
            ["campaign", "conversion"]
        );
        assert!(
            names("SELECT name WHERE name LIKE 'conversion.%' AND data_type = ENUM")
                .contains(&"conversion.status".to_owned())
        );
        assert_eq!(
            names("SELECT name WHERE name LIKE 'conversion.%' AND filterable = FALSE"),
            ["conversion.resource_name"]
        );
    }

    #[test]
    fn field_queries_refuse_from_and_unknown_members() {
        let code = |t: &str| parse(t).err().map(|e| e.code);
        assert_eq!(
            code("SELECT name FROM conversion"),
            Some("UNEXPECTED_FROM_CLAUSE")
        );
        assert_eq!(code("SELECT nope"), Some("UNRECOGNIZED_FIELD"));
        assert_eq!(
            code("SELECT name WHERE category = NOPE"),
            Some("BAD_ENUM_CONSTANT")
        );
        assert_eq!(
            code("SELECT name WHERE selectable LIKE 'x'"),
            Some("OPERATOR_FIELD_MISMATCH")
        );
        assert_eq!(
            code("SELECT name ORDER BY category"),
            Some("EXPECTED_REFERENCED_FIELD_IN_SELECT_CLAUSE")
        );
    }
}

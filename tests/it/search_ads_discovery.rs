//! `specs/search-ads.yaml` agrees with Google's discovery document for the
//! Search Ads 360 API v2 (revision 20250430, copied to
//! `tests/fixtures/reference/sa360-v2-discovery.json`).
//!
//! For every schema the spec covers, each discovery property must exist in the
//! spec with the same JSON name, type and format (array items: the same
//! referenced schema); for every covered method, each discovery parameter must
//! exist on the operation with the same location, requiredness, type, format
//! and bounds. Deliberate differences are listed in `specs/DECISIONS.md` and
//! here, so a new one cannot slip in unreviewed.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::discovery;

use discovery::{
    assert_agree, extra_parameters, last_segment, matching_parameter, oauth_scopes, resolve,
};

/// Schemas of the discovery document that the spec describes (issue: "every
/// schema field of the covered schemas").
const COVERED_SCHEMAS: &[&str] = &[
    "Conversion",
    "ConversionList",
    "CustomDimension",
    "CustomMetric",
    "Availability",
    "UpdateAvailabilityRequest",
    "UpdateAvailabilityResponse",
    "SavedColumn",
    "SavedColumnList",
];

/// Discovery method id → the spec's operationId.
const COVERED_METHODS: &[(&str, &str)] = &[
    ("conversion.get", "conversionGet"),
    ("conversion.getByCustomerId", "conversionGetByCustomerId"),
    ("conversion.insert", "conversionInsert"),
    ("conversion.update", "conversionUpdate"),
    (
        "conversion.updateAvailability",
        "conversionUpdateAvailability",
    ),
    ("reports.getIdMappingFile", "reportsGetIdMappingFile"),
    ("savedColumns.list", "savedColumnsList"),
];

/// Deliberate differences, each with its DECISIONS entry.
const ALLOWED: &[(&str, &str)] = &[
    // SA-6: a closed enum in a response breaks clients when Google adds a value.
    ("Conversion.adUserDataConsent", "enum dropped"),
    // SA-12: discovery gives startRow no minimum; it is 0-based (uint32).
    ("conversion.get?startRow", "minimum added"),
    ("conversion.getByCustomerId?startRow", "minimum added"),
    // SA-12: and the uint32 maximum (SA-20: a larger value is refused).
    ("conversion.get?startRow", "maximum added"),
    ("conversion.getByCustomerId?startRow", "maximum added"),
    // SA-20: updateAvailability states its required fields in `AvailabilityUpdate`.
    ("UpdateAvailabilityRequest.availabilities", "items refined"),
];

fn discovery() -> Value {
    discovery::discovery("tests/fixtures/reference/sa360-v2-discovery.json")
}

fn spec() -> Value {
    discovery::spec("search-ads.yaml")
}

/// Name of the component a `$ref` (possibly under `allOf`) points at.
fn ref_name(node: &Value) -> Option<&str> {
    node.get("$ref").and_then(Value::as_str).map(last_segment)
}

fn describe(node: &Value) -> String {
    let field = |k: &str| node.get(k).map(|v| v.to_string()).unwrap_or_default();
    format!(
        "type={} format={} min={} max={} enum={}",
        field("type"),
        field("format"),
        // Discovery writes bounds as strings, YAML as numbers.
        field("minimum").trim_matches('"'),
        field("maximum").trim_matches('"'),
        field("enum")
    )
}

fn allowed(subject: &str, what: &str) -> bool {
    discovery::allowed(ALLOWED, subject, what)
}

#[test]
fn every_covered_schema_field_has_the_discovery_name_type_and_format() {
    let discovery = discovery();
    let spec = spec();
    let mut problems = Vec::new();
    for name in COVERED_SCHEMAS {
        let theirs = &discovery["schemas"][name]["properties"];
        let ours = &spec["components"]["schemas"][name]["properties"];
        let theirs = theirs
            .as_object()
            .unwrap_or_else(|| panic!("discovery has {name}"));
        let ours = ours
            .as_object()
            .unwrap_or_else(|| panic!("spec lacks {name}"));
        for (field, their) in theirs {
            let subject = format!("{name}.{field}");
            let Some(our) = ours.get(field) else {
                problems.push(format!("{subject}: missing from the spec"));
                continue;
            };
            let our = resolve(&spec, our);
            let same = |k: &str| their.get(k) == our.get(k);
            if !same("type") || !same("format") {
                problems.push(format!(
                    "{subject}: discovery {} but spec {}",
                    describe(their),
                    describe(our)
                ));
            }
            if their.get("enum").is_some()
                && our.get("enum").is_none()
                && !allowed(&subject, "enum dropped")
            {
                problems.push(format!("{subject}: discovery has an enum the spec lacks"));
            }
            if let Some(their_item) = their
                .get("items")
                .and_then(|i| i.get("$ref"))
                .and_then(Value::as_str)
            {
                let our_item = our.get("items").and_then(ref_name);
                // SA-20: a request schema of its own with exactly the properties of the
                // discovery schema (a YAML alias of them) plus requirements.
                let schemas = &spec["components"]["schemas"];
                let refines = our_item.is_some_and(|name| {
                    schemas[name]["properties"].is_object()
                        && schemas[name]["properties"] == schemas[their_item]["properties"]
                }) && allowed(&subject, "items refined");
                if our_item != Some(their_item) && !refines {
                    problems.push(format!(
                        "{subject}: items are {their_item} in discovery, {our_item:?} in the spec"
                    ));
                }
            }
        }
        for field in ours.keys() {
            if !theirs.contains_key(field) {
                problems.push(format!("{name}.{field}: not in the discovery document"));
            }
        }
    }
    assert_agree(&problems);
}

/// The spec's operations by operationId, with their parameters resolved.
fn operations(spec: &Value) -> BTreeMap<String, (String, Vec<Value>)> {
    let mut found = BTreeMap::new();
    for (path, item) in spec["paths"].as_object().unwrap() {
        for (method, op) in item.as_object().unwrap() {
            let Some(id) = op.get("operationId").and_then(Value::as_str) else {
                continue;
            };
            let params = op
                .get("parameters")
                .and_then(Value::as_array)
                .map(|ps| ps.iter().map(|p| resolve(spec, p).clone()).collect())
                .unwrap_or_default();
            found.insert(
                id.to_owned(),
                (format!("{} {path}", method.to_uppercase()), params),
            );
        }
    }
    found
}

#[test]
fn every_covered_method_has_the_discovery_path_and_parameters() {
    let discovery = discovery();
    let spec = spec();
    let ours = operations(&spec);
    let mut problems = Vec::new();
    for (method_id, operation_id) in COVERED_METHODS {
        let (resource, method) = method_id.split_once('.').unwrap();
        let their = &discovery["resources"][resource]["methods"][method];
        assert!(their.is_object(), "discovery has {method_id}");
        let Some((route, params)) = ours.get(*operation_id) else {
            problems.push(format!(
                "{method_id}: no operation {operation_id} in the spec"
            ));
            continue;
        };
        let their_route = format!(
            "{} /{}",
            their["httpMethod"].as_str().unwrap(),
            their["path"]
                .as_str()
                .unwrap()
                .trim_start_matches("doubleclicksearch/v2/")
        );
        if *route != their_route {
            problems.push(format!(
                "{method_id}: discovery {their_route}, spec {route}"
            ));
        }
        let their_params = their["parameters"].as_object().cloned().unwrap_or_default();
        for (name, their_param) in &their_params {
            let subject = format!("{method_id}?{name}");
            let Some(our) = matching_parameter(params, name, their_param, &subject, &mut problems)
            else {
                continue;
            };
            let schema = resolve(&spec, &our["schema"]);
            if describe(their_param) != describe(schema) {
                // A bound discovery lacks may be added where a DECISIONS entry says so.
                let bound_ok = |bound: &str| {
                    their_param.get(bound) == schema.get(bound)
                        || (their_param.get(bound).is_none()
                            && schema.get(bound).is_some()
                            && allowed(&subject, &format!("{bound} added")))
                };
                let bounds_added = bound_ok("minimum")
                    && bound_ok("maximum")
                    && their_param.get("enum") == schema.get("enum")
                    && their_param.get("type") == schema.get("type")
                    && their_param.get("format") == schema.get("format");
                if !bounds_added {
                    problems.push(format!(
                        "{subject}: discovery {} but spec {}",
                        describe(their_param),
                        describe(schema)
                    ));
                }
            }
        }
        // `alt` is Google's global parameter (SA-13), not a method parameter.
        let global_alt = |name: &str| name == "alt" && *operation_id == "reportsGetIdMappingFile";
        extra_parameters(params, &their_params, method_id, global_alt, &mut problems);
    }
    assert_agree(&problems);
}

#[test]
fn the_oauth_scope_is_the_discovery_scope() {
    let discovery = discovery();
    let spec = spec();
    let (theirs, ours) = oauth_scopes(&discovery, &spec);
    assert_eq!(ours, theirs);
}

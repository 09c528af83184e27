//! Rules on operations: operationIds, responses progenitor can type, request
//! media types, and the review rules on operations and parameters.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use serde_json::Value;

use super::rules::{
    DEFAULT_WITH_TYPED_2XX, ERROR_SCHEMAS_MULTIPLE, Linter, OPERATION_ERROR_RESPONSE,
    OPERATION_ID_DUPLICATE, OPERATION_ID_MISSING, OPERATION_ID_STYLE, OPERATION_SUMMARY,
    OPERATION_TAG, PARAMETER_DESCRIPTION, REQUEST_MEDIA_TYPES_MULTIPLE, SUCCESS_SCHEMAS_MULTIPLE,
    non_empty_str,
};
use crate::openapi::METHODS;
use crate::openapi::escape;

/// Classified body of one response, as progenitor sees it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
enum Body {
    /// No content.
    Empty,
    /// A non-JSON content type: an untyped byte stream.
    Raw,
    /// `application/json` with this schema (canonical JSON text).
    Json(String),
}

impl fmt::Display for Body {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Body::Empty => f.write_str("no body"),
            Body::Raw => f.write_str("raw (non-JSON) body"),
            Body::Json(schema) => f.write_str(schema),
        }
    }
}

fn response_body(content: Option<&Value>) -> Body {
    let Some(content) = content.and_then(Value::as_object).filter(|c| !c.is_empty()) else {
        return Body::Empty;
    };
    let json = crate::sorted(content)
        .into_iter()
        .find(|(media, _)| *media == "application/json" || media.starts_with("application/json;"));
    match json {
        Some((_, media)) => Body::Json(
            media
                .get("schema")
                .map_or_else(|| "<no schema>".to_owned(), Value::to_string),
        ),
        None => Body::Raw,
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum StatusClass {
    Success,
    /// `2XX`: progenitor drops a `default` beside it.
    SuccessRange,
    Error,
    Default,
    Other,
}

fn classify(status: &str) -> StatusClass {
    match status {
        "default" => StatusClass::Default,
        "2XX" | "2xx" => StatusClass::SuccessRange,
        "4XX" | "4xx" | "5XX" | "5xx" => StatusClass::Error,
        s => match s.parse::<u16>() {
            Ok(200..=299) => StatusClass::Success,
            Ok(400..=599) => StatusClass::Error,
            _ => StatusClass::Other,
        },
    }
}

fn describe(bodies: &BTreeMap<Body, Vec<String>>) -> String {
    bodies
        .iter()
        .map(|(body, statuses)| format!("{} → {body}", statuses.join("/")))
        .collect::<Vec<_>>()
        .join("; ")
}

pub(super) fn lint_operations(l: &mut Linter<'_>) {
    let mut seen_ids: BTreeMap<String, String> = BTreeMap::new();
    for (typed, op) in l.operations() {
        {
            let pointer = typed.pointer.clone();
            let label = typed.label();
            match op.get("operationId").and_then(Value::as_str) {
                None | Some("") => l.add(
                    &pointer,
                    &OPERATION_ID_MISSING,
                    format!("{label} has no operationId"),
                ),
                Some(id) => {
                    if let Some(first) = seen_ids.get(id) {
                        l.add(
                            &pointer,
                            &OPERATION_ID_DUPLICATE,
                            format!("operationId {id:?} of {label} is already used by {first}"),
                        );
                    } else {
                        seen_ids.insert(id.to_owned(), label.clone());
                    }
                }
            }
            lint_request_body(l, op, &pointer);
            lint_responses(l, op, &pointer);
        }
    }
}

fn lint_request_body(l: &mut Linter<'_>, op: &Value, pointer: &str) {
    let Some(body) = op.get("requestBody") else {
        return;
    };
    let Some((body, _)) = l.deref(body) else {
        return;
    };
    if let Some(content) = body.get("content").and_then(Value::as_object)
        && content.len() > 1
    {
        let media: Vec<&str> = crate::sorted(content)
            .into_iter()
            .map(|(k, _)| k.as_str())
            .collect();
        l.add(
            format!("{pointer}/requestBody"),
            &REQUEST_MEDIA_TYPES_MULTIPLE,
            format!("request media types: {}", media.join(", ")),
        );
    }
}

fn lint_responses(l: &mut Linter<'_>, op: &Value, pointer: &str) {
    let Some(responses) = op.get("responses").and_then(Value::as_object) else {
        return;
    };
    let mut success: BTreeMap<Body, Vec<String>> = BTreeMap::new();
    let mut errors: BTreeMap<Body, Vec<String>> = BTreeMap::new();
    let mut default = None;
    let mut has_success_range = false;
    for (status, response) in crate::sorted(responses) {
        let Some((response, _)) = l.deref(response) else {
            continue;
        };
        let body = response_body(response.get("content"));
        match classify(status) {
            StatusClass::Success => success.entry(body).or_default().push(status.clone()),
            StatusClass::SuccessRange => {
                has_success_range = true;
                success.entry(body).or_default().push(status.clone());
            }
            StatusClass::Error => errors.entry(body).or_default().push(status.clone()),
            StatusClass::Default => {
                errors.entry(body.clone()).or_default().push(status.clone());
                default = Some(body);
            }
            StatusClass::Other => {}
        }
    }
    let responses_ptr = format!("{pointer}/responses");
    if let Some(default) = &default
        && !has_success_range
    {
        let typed: Vec<&str> = success
            .iter()
            .filter(|(body, _)| *body != default)
            .flat_map(|(_, statuses)| statuses.iter().map(String::as_str))
            .collect();
        if !typed.is_empty() {
            l.add(
                &responses_ptr,
                &DEFAULT_WITH_TYPED_2XX,
                format!(
                    "`default` ({default}) beside differently-typed {}",
                    typed.join(", ")
                ),
            );
        }
    }
    if success.len() > 1 {
        l.add(
            &responses_ptr,
            &SUCCESS_SCHEMAS_MULTIPLE,
            format!("2xx bodies differ: {}", describe(&success)),
        );
    }
    if errors.len() > 1 {
        l.add(
            &responses_ptr,
            &ERROR_SCHEMAS_MULTIPLE,
            format!("error bodies differ: {}", describe(&errors)),
        );
    }
}

/// Whether `id` is lowerCamelCase: an ASCII lower-case letter, then ASCII
/// letters and digits.
pub fn is_lower_camel_case(id: &str) -> bool {
    let mut chars = id.chars();
    chars.next().is_some_and(|c| c.is_ascii_lowercase()) && chars.all(|c| c.is_ascii_alphanumeric())
}

pub(super) fn lint_review_operations(l: &mut Linter<'_>) {
    let declared: BTreeSet<&str> = l
        .doc
        .get("tags")
        .and_then(Value::as_array)
        .map(|tags| {
            tags.iter()
                .filter_map(|t| t.get("name").and_then(Value::as_str))
                .collect()
        })
        .unwrap_or_default();
    let mut found = Vec::new();
    for (typed, op) in l.operations() {
        {
            let pointer = typed.pointer.clone();
            let label = typed.label();
            if let Some(id) = op.get("operationId").and_then(Value::as_str)
                && !id.is_empty()
                && !is_lower_camel_case(id)
            {
                found.push((
                    pointer.clone(),
                    &OPERATION_ID_STYLE,
                    format!("operationId {id:?} of {label} is not lowerCamelCase"),
                ));
            }
            if !non_empty_str(op.get("summary")) {
                found.push((
                    pointer.clone(),
                    &OPERATION_SUMMARY,
                    format!("{label} has no summary"),
                ));
            }
            let tags: Vec<&str> = op
                .get("tags")
                .and_then(Value::as_array)
                .map(|t| t.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            if tags.is_empty() {
                found.push((
                    pointer.clone(),
                    &OPERATION_TAG,
                    format!("{label} has no tag"),
                ));
            }
            for tag in tags.iter().filter(|t| !declared.contains(*t)) {
                found.push((
                    pointer.clone(),
                    &OPERATION_TAG,
                    format!("tag {tag:?} of {label} is not declared in the top-level tags"),
                ));
            }
            let has_error = op
                .get("responses")
                .and_then(Value::as_object)
                .is_some_and(|r| {
                    r.keys()
                        .any(|s| matches!(classify(s), StatusClass::Error | StatusClass::Default))
                });
            if !has_error {
                found.push((
                    format!("{pointer}/responses"),
                    &OPERATION_ERROR_RESPONSE,
                    format!("{label} declares no 4xx, 5xx or default response"),
                ));
            }
        }
    }
    for (pointer, rule, detail) in found {
        l.add(pointer, rule, detail);
    }
}

/// Every parameter where it is defined: inline in a path item or an
/// operation, or in `components/parameters`.
pub(super) fn lint_parameter_descriptions(l: &mut Linter<'_>) {
    let mut found = Vec::new();
    let mut check = |param: &Value, pointer: String| {
        if param.get("$ref").is_none() && !non_empty_str(param.get("description")) {
            let name = param.get("name").and_then(Value::as_str).unwrap_or("?");
            let location = param.get("in").and_then(Value::as_str).unwrap_or("?");
            found.push((
                pointer,
                format!("{location} parameter {name:?} has no description"),
            ));
        }
    };
    if let Some(paths) = l.doc.get("paths").and_then(Value::as_object) {
        for (path, item) in crate::sorted(paths) {
            let base = format!("#/paths/{}", escape(path));
            let lists = std::iter::once((base.clone(), item.get("parameters"))).chain(
                METHODS.iter().filter_map(|m| {
                    item.get(*m)
                        .map(|op| (format!("{base}/{m}"), op.get("parameters")))
                }),
            );
            for (pointer, params) in lists {
                for (i, param) in params
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .enumerate()
                {
                    check(param, format!("{pointer}/parameters/{i}"));
                }
            }
        }
    }
    if let Some(params) = l
        .doc
        .pointer("/components/parameters")
        .and_then(Value::as_object)
    {
        for (name, param) in crate::sorted(params) {
            check(param, format!("#/components/parameters/{}", escape(name)));
        }
    }
    for (pointer, detail) in found {
        l.add(pointer, &PARAMETER_DESCRIPTION, detail);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lint::test_support::{CLEAN, findings, ids};

    #[test]
    fn operation_ids() {
        let spec = CLEAN
            .replace("additionalProperties: false", "")
            .replace("operationId: getReport", "operationId: getThing");
        let found = findings(&spec);
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(
            found[0].starts_with(
                "specs/t.yaml:#/paths/~1things~1{id}/get: operation-id-duplicate: \
                 operationId \"getThing\" of GET /things/{id} is already used by GET /report"
            ),
            "{found:?}"
        );
        let spec = CLEAN
            .replace("additionalProperties: false", "")
            .replace("operationId: getReport", "");
        assert_eq!(ids(&spec), vec!["operation-id-missing"]);
    }

    #[test]
    fn default_beside_typed_200() {
        let spec = CLEAN.replace("additionalProperties: false", "").replace(
            "        4XX:",
            "        default:\n          description: d\n          content:\n            application/json:\n              schema: {$ref: \"#/components/schemas/Error\"}\n        4XX:",
        );
        assert_eq!(ids(&spec), vec!["default-with-typed-2xx"]);
    }

    #[test]
    fn multiple_error_and_success_bodies() {
        let spec = CLEAN
            .replace("additionalProperties: false", "")
            .replace(
                "        \"500\":\n          description: e\n          content:\n            application/json:\n              schema: {$ref: \"#/components/schemas/Error\"}",
                "        \"500\":\n          description: e\n          content:\n            application/json:\n              schema: {$ref: \"#/components/schemas/Tag\"}",
            )
            .replace(
                "        \"201\":\n          description: also ok\n          content:\n            application/json:\n              schema: {$ref: \"#/components/schemas/Thing\"}",
                "        \"204\":\n          description: empty",
            );
        assert_eq!(
            ids(&spec),
            vec!["success-schemas-multiple", "error-schemas-multiple"]
        );
    }

    #[test]
    fn review_rules_on_operations() {
        let spec = CLEAN
            .replace("additionalProperties: false", "")
            .replace("operationId: getReport", "operationId: get_report")
            .replace("      summary: Get the report.\n", "")
            .replace("      tags: [things]\n      responses:\n        \"200\":\n          description: csv", "      tags: [thing]\n      responses:\n        \"200\":\n          description: csv")
            .replace(
                "        default:\n          description: e\n          content:\n            application/json:\n              schema: {$ref: \"#/components/schemas/Error\"}\n",
                "",
            );
        let found = findings(&spec);
        let rules: Vec<&str> = found
            .iter()
            .map(|f| f.split(": ").nth(1).unwrap())
            .collect();
        assert_eq!(
            rules,
            vec![
                "operation-id-style",
                "operation-summary",
                "operation-tag",
                "operation-error-response"
            ],
            "{found:#?}"
        );
        assert!(
            found[2].contains("tag \"thing\" of GET /report is not declared"),
            "{found:#?}"
        );
        let untagged = CLEAN.replace("additionalProperties: false", "").replace(
            "      tags: [things]\n      parameters:",
            "      parameters:",
        );
        assert_eq!(ids(&untagged), vec!["operation-tag"]);
    }

    #[test]
    fn lower_camel_case() {
        assert!(is_lower_camel_case("conversionGet"));
        assert!(is_lower_camel_case("login"));
        for bad in [
            "ConversionGet",
            "conversion_get",
            "conversion-get",
            "",
            "1op",
        ] {
            assert!(!is_lower_camel_case(bad), "{bad}");
        }
    }
}

//! Spec lint rules: constructs that break progenitor 0.15.1 generation (it
//! errors or panics) or silently degrade the generated client, and review
//! rules that keep the specs consistent (naming, documentation, no dead
//! components).
//!
//! Findings print as `spec:location: rule-id: message`, where `location` is a
//! JSON pointer into the spec (`#/paths/~1users~1{id}/get`).

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use openapiv3::OpenAPI;
use serde_json::Value;

use crate::specs::{INT64_METADATA_KEYS, INT64_PATTERN, SpecConfig, is_int64_string};

/// A lint rule: a stable id and a one-line reason.
#[derive(Debug, PartialEq, Eq)]
pub struct Rule {
    /// Stable identifier, printed with each finding.
    pub id: &'static str,
    /// Why the construct is a problem, in one line.
    pub reason: &'static str,
}

/// `openapi` is not `3.0.x`.
pub const OPENAPI_VERSION: Rule = Rule {
    id: "openapi-version",
    reason: "progenitor 0.15 only accepts OpenAPI 3.0.x documents",
};
/// An operation without `operationId`.
pub const OPERATION_ID_MISSING: Rule = Rule {
    id: "operation-id-missing",
    reason: "progenitor rejects operations without an operationId (it names the method)",
};
/// Two operations with the same `operationId`.
pub const OPERATION_ID_DUPLICATE: Rule = Rule {
    id: "operation-id-duplicate",
    reason: "progenitor rejects duplicate operationIds (method and type names would clash)",
};
/// `default` response beside a 2xx response of another type.
pub const DEFAULT_WITH_TYPED_2XX: Rule = Rule {
    id: "default-with-typed-2xx",
    reason: "progenitor counts `default` as both success and error, so a differently-typed 2xx makes it panic; use 4XX/5XX",
};
/// Error responses with more than one body type.
pub const ERROR_SCHEMAS_MULTIPLE: Rule = Rule {
    id: "error-schemas-multiple",
    reason: "progenitor supports one error body type per operation and panics otherwise",
};
/// Success responses with more than one body type.
pub const SUCCESS_SCHEMAS_MULTIPLE: Rule = Rule {
    id: "success-schemas-multiple",
    reason: "progenitor supports one 2xx body type per operation (an empty body counts as a type) and panics otherwise",
};
/// A request body with more than one media type.
pub const REQUEST_MEDIA_TYPES_MULTIPLE: Rule = Rule {
    id: "request-media-types-multiple",
    reason: "progenitor panics (todo!) on a requestBody with more than one media type",
};
/// `additionalProperties: false` on a schema reachable from a response.
pub const RESPONSE_ADDITIONAL_PROPERTIES_FALSE: Rule = Rule {
    id: "response-additional-properties-false",
    reason: "becomes #[serde(deny_unknown_fields)]: a field added by the server breaks deserialization",
};
/// A component schema without `description`.
pub const COMPONENT_SCHEMA_DESCRIPTION: Rule = Rule {
    id: "component-schema-description",
    reason: "the generated type gets no doc comment",
};
/// A `{type: string, format: int64}` schema that the `I64String` conversion
/// cannot match (only for specs with `int64_strings`).
pub const INT64_STRING_UNCONVERTED: Rule = Rule {
    id: "int64-string-unconverted",
    reason: "extra keywords defeat the exact-match I64String conversion, leaving a plain String",
};

// ------------------------------------------------------------- review rules

/// An operationId that is not lowerCamelCase.
pub const OPERATION_ID_STYLE: Rule = Rule {
    id: "operation-id-style",
    reason: "operationIds name the generated methods and types; one style (lowerCamelCase) keeps them predictable and collision-free after snake_casing",
};
/// An operation without `summary`.
pub const OPERATION_SUMMARY: Rule = Rule {
    id: "operation-summary",
    reason: "the summary is the first line of the generated method's documentation",
};
/// An operation without a tag, or with a tag not declared at the top level.
pub const OPERATION_TAG: Rule = Rule {
    id: "operation-tag",
    reason: "tags group the operations in the docs and the inventory; an undeclared tag is a typo",
};
/// An operation without a 4xx/5xx (or `default`) response.
pub const OPERATION_ERROR_RESPONSE: Rule = Rule {
    id: "operation-error-response",
    reason: "without one, every error reaches callers as an untyped Error::UnexpectedResponse",
};
/// A parameter without `description`.
pub const PARAMETER_DESCRIPTION: Rule = Rule {
    id: "parameter-description",
    reason: "it documents the argument in the generated method's docs",
};
/// A schema property without `description` (a `$ref`, possibly in a
/// single-member `allOf` wrapper, is described by its target).
pub const PROPERTY_DESCRIPTION: Rule = Rule {
    id: "property-description",
    reason: "it becomes the generated field's doc comment",
};
/// An `enum` without `type`.
pub const ENUM_TYPED: Rule = Rule {
    id: "enum-typed",
    reason: "the type decides the generated Rust type (string enum, validated integer newtype); untyped values may mix JSON types",
};
/// A component nothing refers to (directly or through other components).
pub const COMPONENT_UNUSED: Rule = Rule {
    id: "component-unused",
    reason: "dead definitions go unreviewed, and unused schemas still become public Rust types",
};

/// Every rule, in reporting order.
pub const RULES: &[&Rule] = &[
    &OPENAPI_VERSION,
    &OPERATION_ID_MISSING,
    &OPERATION_ID_DUPLICATE,
    &DEFAULT_WITH_TYPED_2XX,
    &ERROR_SCHEMAS_MULTIPLE,
    &SUCCESS_SCHEMAS_MULTIPLE,
    &REQUEST_MEDIA_TYPES_MULTIPLE,
    &RESPONSE_ADDITIONAL_PROPERTIES_FALSE,
    &COMPONENT_SCHEMA_DESCRIPTION,
    &INT64_STRING_UNCONVERTED,
    &OPERATION_ID_STYLE,
    &OPERATION_SUMMARY,
    &OPERATION_TAG,
    &OPERATION_ERROR_RESPONSE,
    &PARAMETER_DESCRIPTION,
    &PROPERTY_DESCRIPTION,
    &ENUM_TYPED,
    &COMPONENT_UNUSED,
];

/// One lint finding.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    /// Workspace-relative spec path.
    pub spec: String,
    /// JSON pointer of the offending construct.
    pub location: String,
    /// The rule violated.
    pub rule: &'static Rule,
    /// What is wrong here, followed by the rule's reason.
    pub message: String,
}

impl fmt::Display for Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}:{}: {}: {}",
            self.spec, self.location, self.rule.id, self.message
        )
    }
}

const METHODS: [&str; 8] = [
    "get", "put", "post", "delete", "options", "head", "patch", "trace",
];

/// Escape one JSON pointer segment.
pub fn escape(segment: &str) -> String {
    segment.replace('~', "~0").replace('/', "~1")
}

struct Linter<'a> {
    spec: &'a str,
    doc: &'a Value,
    findings: Vec<Finding>,
}

impl Linter<'_> {
    fn add(&mut self, location: impl Into<String>, rule: &'static Rule, detail: impl fmt::Display) {
        self.findings.push(Finding {
            spec: self.spec.to_owned(),
            location: location.into(),
            rule,
            message: format!("{detail} ({})", rule.reason),
        });
    }

    /// Follow a local `$ref` (`#/a/b`) if `value` is one.
    fn deref<'v>(&'v self, value: &'v Value) -> Option<(&'v Value, Option<String>)> {
        match value.get("$ref").and_then(Value::as_str) {
            None => Some((value, None)),
            Some(r) => {
                let pointer = r.strip_prefix('#')?;
                self.doc.pointer(pointer).map(|v| (v, Some(r.to_owned())))
            }
        }
    }
}

/// Check only the `openapi` version field of a raw document (works even when
/// the document does not parse as OpenAPI 3.0).
pub fn check_version(spec: &str, version: Option<&str>) -> Option<Finding> {
    match version {
        Some(v) if v.starts_with("3.0.") => None,
        other => Some(Finding {
            spec: spec.to_owned(),
            location: "#/openapi".to_owned(),
            rule: &OPENAPI_VERSION,
            message: format!(
                "openapi is {} ({})",
                other.map_or("missing".to_owned(), |v| format!("{v:?}")),
                OPENAPI_VERSION.reason
            ),
        }),
    }
}

/// Run every rule on a parsed spec.
pub fn lint(config: &SpecConfig, spec: &OpenAPI) -> Vec<Finding> {
    let doc = match serde_json::to_value(spec) {
        Ok(doc) => doc,
        Err(e) => {
            return vec![Finding {
                spec: config.spec.to_owned(),
                location: "#".to_owned(),
                rule: &OPENAPI_VERSION,
                message: format!("spec does not serialize to JSON: {e}"),
            }];
        }
    };
    let mut linter = Linter {
        spec: config.spec,
        doc: &doc,
        findings: Vec::new(),
    };
    if let Some(f) = check_version(config.spec, Some(spec.openapi.as_str())) {
        linter.findings.push(f);
    }
    lint_operations(&mut linter);
    lint_response_schemas(&mut linter);
    lint_component_descriptions(&mut linter);
    if config.int64_strings {
        lint_int64_strings(&mut linter, &doc, "#".to_owned());
    }
    lint_review_operations(&mut linter);
    lint_parameter_descriptions(&mut linter);
    lint_schemas(&mut linter);
    lint_unused_components(&mut linter);
    linter.findings
}

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

fn lint_operations(l: &mut Linter<'_>) {
    let Some(paths) = l.doc.get("paths").and_then(Value::as_object) else {
        return;
    };
    let mut seen_ids: BTreeMap<String, String> = BTreeMap::new();
    for (path, item) in crate::sorted(paths) {
        for method in METHODS {
            let Some(op) = item.get(method) else { continue };
            let pointer = format!("#/paths/{}/{method}", escape(path));
            let label = format!("{} {path}", method.to_uppercase());
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

/// Every schema reachable from a response, via `$ref` too.
fn lint_response_schemas(l: &mut Linter<'_>) {
    let Some(paths) = l.doc.get("paths").and_then(Value::as_object) else {
        return;
    };
    let mut roots = Vec::new();
    for (path, item) in crate::sorted(paths) {
        for method in METHODS {
            let Some(responses) = item
                .get(method)
                .and_then(|op| op.get("responses"))
                .and_then(Value::as_object)
            else {
                continue;
            };
            for (status, response) in crate::sorted(responses) {
                let Some((response, via)) = l.deref(response) else {
                    continue;
                };
                let base = via.unwrap_or_else(|| {
                    format!(
                        "#/paths/{}/{method}/responses/{}",
                        escape(path),
                        escape(status)
                    )
                });
                let Some(content) = response.get("content").and_then(Value::as_object) else {
                    continue;
                };
                for (media, mt) in crate::sorted(content) {
                    if let Some(schema) = mt.get("schema") {
                        roots.push((
                            schema.clone(),
                            format!("{base}/content/{}/schema", escape(media)),
                        ));
                    }
                }
            }
        }
    }
    let mut visited = BTreeSet::new();
    let mut reported = BTreeSet::new();
    for (schema, pointer) in roots {
        walk_schema(l, &schema, pointer, &mut visited, &mut reported);
    }
}

fn walk_schema(
    l: &mut Linter<'_>,
    schema: &Value,
    pointer: String,
    visited: &mut BTreeSet<String>,
    reported: &mut BTreeSet<String>,
) {
    if let Some(r) = schema.get("$ref").and_then(Value::as_str) {
        if visited.insert(r.to_owned())
            && let Some(target) = r.strip_prefix('#').and_then(|p| l.doc.pointer(p))
        {
            walk_schema(l, &target.clone(), r.to_owned(), visited, reported);
        }
        return;
    }
    if schema.get("additionalProperties") == Some(&Value::Bool(false))
        && reported.insert(pointer.clone())
    {
        l.add(
            &pointer,
            &RESPONSE_ADDITIONAL_PROPERTIES_FALSE,
            "schema reachable from a response has additionalProperties: false",
        );
    }
    if let Some(props) = schema.get("properties").and_then(Value::as_object) {
        for (name, sub) in crate::sorted(props) {
            walk_schema(
                l,
                sub,
                format!("{pointer}/properties/{}", escape(name)),
                visited,
                reported,
            );
        }
    }
    for key in ["items", "additionalProperties", "not"] {
        if let Some(sub) = schema.get(key).filter(|v| v.is_object()) {
            walk_schema(l, sub, format!("{pointer}/{key}"), visited, reported);
        }
    }
    for key in ["allOf", "oneOf", "anyOf"] {
        if let Some(list) = schema.get(key).and_then(Value::as_array) {
            for (i, sub) in list.iter().enumerate() {
                walk_schema(l, sub, format!("{pointer}/{key}/{i}"), visited, reported);
            }
        }
    }
}

fn lint_component_descriptions(l: &mut Linter<'_>) {
    let Some(schemas) = l
        .doc
        .pointer("/components/schemas")
        .and_then(Value::as_object)
    else {
        return;
    };
    let missing: Vec<String> = crate::sorted(schemas)
        .into_iter()
        .filter(|(_, s)| {
            s.get("description")
                .and_then(Value::as_str)
                .is_none_or(|d| d.trim().is_empty())
        })
        .map(|(name, _)| name.clone())
        .collect();
    for name in missing {
        l.add(
            format!("#/components/schemas/{}", escape(&name)),
            &COMPONENT_SCHEMA_DESCRIPTION,
            format!("component schema {name} has no description"),
        );
    }
}

fn lint_int64_strings(l: &mut Linter<'_>, value: &Value, pointer: String) {
    match value {
        Value::Object(map) => {
            let looks_int64 = map.get("type").and_then(Value::as_str) == Some("string")
                && map.get("format").and_then(Value::as_str) == Some("int64");
            if looks_int64 && !is_int64_string(value, true) {
                let extra: Vec<String> = map
                    .iter()
                    .filter(|(k, v)| {
                        !INT64_METADATA_KEYS.contains(&k.as_str())
                            && *k != "nullable"
                            && !(*k == "pattern" && v.as_str() == Some(INT64_PATTERN))
                    })
                    .map(|(k, _)| {
                        if k == "pattern" {
                            format!("pattern other than {INT64_PATTERN:?}")
                        } else {
                            k.clone()
                        }
                    })
                    .collect();
                {
                    l.add(
                        &pointer,
                        &INT64_STRING_UNCONVERTED,
                        format!("int64 string schema also has {}", extra.join(", ")),
                    );
                }
            }
            for (key, sub) in crate::sorted(map) {
                lint_int64_strings(l, sub, format!("{pointer}/{}", escape(key)));
            }
        }
        Value::Array(list) => {
            for (i, sub) in list.iter().enumerate() {
                lint_int64_strings(l, sub, format!("{pointer}/{i}"));
            }
        }
        _ => {}
    }
}

// --------------------------------------------------------------- review

/// Whether `id` is lowerCamelCase: an ASCII lower-case letter, then ASCII
/// letters and digits.
pub fn is_lower_camel_case(id: &str) -> bool {
    let mut chars = id.chars();
    chars.next().is_some_and(|c| c.is_ascii_lowercase()) && chars.all(|c| c.is_ascii_alphanumeric())
}

fn non_empty_str(v: Option<&Value>) -> bool {
    v.and_then(Value::as_str)
        .is_some_and(|s| !s.trim().is_empty())
}

fn lint_review_operations(l: &mut Linter<'_>) {
    let Some(paths) = l.doc.get("paths").and_then(Value::as_object) else {
        return;
    };
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
    for (path, item) in crate::sorted(paths) {
        for method in METHODS {
            let Some(op) = item.get(method) else { continue };
            let pointer = format!("#/paths/{}/{method}", escape(path));
            let label = format!("{} {path}", method.to_uppercase());
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
fn lint_parameter_descriptions(l: &mut Linter<'_>) {
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

/// Every schema root of the document, with its pointer: component schemas and
/// the schemas of parameters, headers and media types, inline or in
/// components. `$ref`s are not followed (their targets are roots themselves).
fn schema_roots(doc: &Value) -> Vec<(String, &Value)> {
    /// Pointers of the schemas a parameter, header, body or response holds.
    fn push_holder(base: String, holder: &Value, pointers: &mut Vec<String>) {
        if holder.get("schema").is_some() {
            pointers.push(format!("{base}/schema"));
        }
        if let Some(content) = holder.get("content").and_then(Value::as_object) {
            for (media, _) in crate::sorted(content) {
                pointers.push(format!("{base}/content/{}/schema", escape(media)));
            }
        }
        if let Some(headers) = holder.get("headers").and_then(Value::as_object) {
            for (name, header) in crate::sorted(headers) {
                if header.get("schema").is_some() {
                    pointers.push(format!("{base}/headers/{}/schema", escape(name)));
                }
            }
        }
    }
    let mut pointers: Vec<String> = Vec::new();
    if let Some(schemas) = doc
        .pointer("/components/schemas")
        .and_then(Value::as_object)
    {
        for (name, _) in crate::sorted(schemas) {
            pointers.push(format!("#/components/schemas/{}", escape(name)));
        }
    }
    for kind in ["parameters", "requestBodies", "responses", "headers"] {
        if let Some(map) = doc
            .pointer(&format!("/components/{kind}"))
            .and_then(Value::as_object)
        {
            for (name, holder) in crate::sorted(map) {
                push_holder(
                    format!("#/components/{kind}/{}", escape(name)),
                    holder,
                    &mut pointers,
                );
            }
        }
    }
    if let Some(paths) = doc.get("paths").and_then(Value::as_object) {
        for (path, item) in crate::sorted(paths) {
            let base = format!("#/paths/{}", escape(path));
            let mut holders: Vec<(String, &Value)> = Vec::new();
            for (i, p) in item
                .get("parameters")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .enumerate()
            {
                holders.push((format!("{base}/parameters/{i}"), p));
            }
            for method in METHODS {
                let Some(op) = item.get(method) else { continue };
                let op_base = format!("{base}/{method}");
                for (i, p) in op
                    .get("parameters")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .enumerate()
                {
                    holders.push((format!("{op_base}/parameters/{i}"), p));
                }
                if let Some(body) = op.get("requestBody") {
                    holders.push((format!("{op_base}/requestBody"), body));
                }
                if let Some(responses) = op.get("responses").and_then(Value::as_object) {
                    for (status, response) in crate::sorted(responses) {
                        holders.push((format!("{op_base}/responses/{}", escape(status)), response));
                    }
                }
            }
            for (pointer, holder) in holders {
                push_holder(pointer, holder, &mut pointers);
            }
        }
    }
    pointers
        .into_iter()
        .filter_map(|p| {
            let value = p.strip_prefix('#').and_then(|ptr| doc.pointer(ptr))?;
            Some((p, value))
        })
        .collect()
}

/// Whether a property schema is a `$ref`, or a single-member
/// `allOf`/`oneOf`/`anyOf` wrapper around one (described by its target).
fn is_reference(schema: &Value) -> bool {
    if schema.get("$ref").is_some() {
        return true;
    }
    ["allOf", "oneOf", "anyOf"].iter().any(|k| {
        schema
            .get(*k)
            .and_then(Value::as_array)
            .is_some_and(|list| list.len() == 1 && list[0].get("$ref").is_some())
    })
}

fn lint_schemas(l: &mut Linter<'_>) {
    let mut found = Vec::new();
    for (pointer, schema) in schema_roots(l.doc) {
        walk_review(schema, &pointer, &mut found);
    }
    for (pointer, rule, detail) in found {
        l.add(pointer, rule, detail);
    }
}

fn walk_review(schema: &Value, pointer: &str, found: &mut Vec<(String, &'static Rule, String)>) {
    if schema.get("$ref").is_some() || !schema.is_object() {
        return;
    }
    if schema.get("enum").is_some() && schema.get("type").is_none() {
        found.push((
            pointer.to_owned(),
            &ENUM_TYPED,
            "enum without a type".to_owned(),
        ));
    }
    if let Some(props) = schema.get("properties").and_then(Value::as_object) {
        for (name, sub) in crate::sorted(props) {
            let sub_pointer = format!("{pointer}/properties/{}", escape(name));
            if !is_reference(sub) && !non_empty_str(sub.get("description")) {
                found.push((
                    sub_pointer.clone(),
                    &PROPERTY_DESCRIPTION,
                    format!("property {name:?} has no description"),
                ));
            }
            walk_review(sub, &sub_pointer, found);
        }
    }
    for key in ["items", "additionalProperties", "not"] {
        if let Some(sub) = schema.get(key).filter(|v| v.is_object()) {
            walk_review(sub, &format!("{pointer}/{key}"), found);
        }
    }
    for key in ["allOf", "oneOf", "anyOf"] {
        if let Some(list) = schema.get(key).and_then(Value::as_array) {
            for (i, sub) in list.iter().enumerate() {
                walk_review(sub, &format!("{pointer}/{key}/{i}"), found);
            }
        }
    }
}

/// Every `$ref` string inside `value`.
fn collect_refs<'v>(value: &'v Value, out: &mut Vec<&'v str>) {
    match value {
        Value::Object(map) => {
            if let Some(r) = map.get("$ref").and_then(Value::as_str) {
                out.push(r);
            }
            for v in map.values() {
                collect_refs(v, out);
            }
        }
        Value::Array(list) => list.iter().for_each(|v| collect_refs(v, out)),
        _ => {}
    }
}

/// The local `$ref`s reachable from `start` (following references into the
/// document, each once), e.g. `#/components/schemas/Conversion`.
pub fn reachable_refs(doc: &Value, start: &Value) -> BTreeSet<String> {
    let mut seen = BTreeSet::new();
    let mut queue = Vec::new();
    collect_refs(start, &mut queue);
    while let Some(r) = queue.pop() {
        if !seen.insert(r.to_owned()) {
            continue;
        }
        if let Some(target) = r.strip_prefix('#').and_then(|p| doc.pointer(p)) {
            collect_refs(target, &mut queue);
        }
    }
    seen
}

/// Security scheme names used by the document's security requirements.
fn used_security_schemes(doc: &Value) -> BTreeSet<String> {
    let mut lists: Vec<&Value> = doc.get("security").into_iter().collect();
    if let Some(paths) = doc.get("paths").and_then(Value::as_object) {
        for item in paths.values() {
            for method in METHODS {
                if let Some(security) = item.get(method).and_then(|op| op.get("security")) {
                    lists.push(security);
                }
            }
        }
    }
    lists
        .into_iter()
        .filter_map(Value::as_array)
        .flatten()
        .filter_map(Value::as_object)
        .flat_map(|req| req.keys().cloned())
        .collect()
}

fn lint_unused_components(l: &mut Linter<'_>) {
    let used = l
        .doc
        .get("paths")
        .map(|paths| reachable_refs(l.doc, paths))
        .unwrap_or_default();
    let schemes = used_security_schemes(l.doc);
    let mut found = Vec::new();
    for kind in [
        "schemas",
        "parameters",
        "requestBodies",
        "responses",
        "headers",
        "securitySchemes",
    ] {
        let Some(map) = l
            .doc
            .pointer(&format!("/components/{kind}"))
            .and_then(Value::as_object)
        else {
            continue;
        };
        for (name, _) in crate::sorted(map) {
            let pointer = format!("#/components/{kind}/{}", escape(name));
            let is_used = if kind == "securitySchemes" {
                schemes.contains(name)
            } else {
                used.contains(&pointer)
            };
            if !is_used {
                found.push((
                    pointer,
                    format!("{kind} component {name:?} is never referenced"),
                ));
            }
        }
    }
    for (pointer, detail) in found {
        l.add(pointer, &COMPONENT_UNUSED, detail);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codegen::parse_spec;

    const CONFIG: SpecConfig = SpecConfig {
        name: "t",
        spec: "specs/t.yaml",
        output: "out.rs",
        int64_strings: true,
        plain_constrained_strings: false,
        inner_type: None,
    };

    fn findings(yaml: &str) -> Vec<String> {
        lint(&CONFIG, &parse_spec(yaml).unwrap())
            .iter()
            .map(ToString::to_string)
            .collect()
    }

    fn ids(yaml: &str) -> Vec<&'static str> {
        lint(&CONFIG, &parse_spec(yaml).unwrap())
            .iter()
            .map(|f| f.rule.id)
            .collect()
    }

    const CLEAN: &str = r##"
openapi: 3.0.3
info: {title: T, version: "1"}
tags:
  - {name: things, description: Things.}
paths:
  /things/{id}:
    get:
      operationId: getThing
      summary: Get a thing.
      tags: [things]
      parameters:
        - {name: id, in: path, required: true, description: The ID., schema: {type: string, format: int64}}
      responses:
        "200":
          description: ok
          content:
            application/json:
              schema: {$ref: "#/components/schemas/Thing"}
        "201":
          description: also ok
          content:
            application/json:
              schema: {$ref: "#/components/schemas/Thing"}
        4XX:
          description: e
          content:
            application/json:
              schema: {$ref: "#/components/schemas/Error"}
        "500":
          description: e
          content:
            application/json:
              schema: {$ref: "#/components/schemas/Error"}
  /report:
    get:
      operationId: getReport
      summary: Get the report.
      tags: [things]
      responses:
        "200":
          description: csv
          content:
            text/csv:
              schema: {type: string}
        2XX:
          description: csv
          content:
            text/csv:
              schema: {type: string}
        default:
          description: e
          content:
            application/json:
              schema: {$ref: "#/components/schemas/Error"}
components:
  schemas:
    Thing:
      description: A thing.
      type: object
      properties:
        id: {type: string, format: int64, nullable: true, description: ID, example: "1"}
        tags: {type: array, items: {$ref: "#/components/schemas/Tag"}, description: Tags.}
    Tag:
      description: A tag.
      type: object
      properties:
        name: {type: string, description: Name.}
    Error:
      description: An error.
      type: object
      additionalProperties: false
      properties:
        message: {type: string, description: Message.}
"##;

    #[test]
    fn clean_spec_only_flags_the_error_schema() {
        assert_eq!(
            findings(CLEAN),
            vec![
                "specs/t.yaml:#/components/schemas/Error: response-additional-properties-false: \
                 schema reachable from a response has additionalProperties: false \
                 (becomes #[serde(deny_unknown_fields)]: a field added by the server breaks deserialization)"
            ]
        );
    }

    #[test]
    fn version() {
        let spec = CLEAN
            .replace("additionalProperties: false", "")
            .replace("3.0.3", "3.1.0");
        assert_eq!(ids(&spec), vec!["openapi-version"]);
    }

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
    fn request_media_types_and_descriptions_and_int64() {
        let spec = CLEAN
            .replace("additionalProperties: false", "")
            .replace("      description: A tag.\n", "")
            .replace(
                "{type: string, format: int64}}",
                "{type: string, format: int64, pattern: \"^[0-9]+$\"}}",
            )
            .replace(
                "      operationId: getReport\n",
                "      operationId: getReport\n      requestBody:\n        content:\n          application/json:\n            schema: {type: object}\n          application/x-www-form-urlencoded:\n            schema: {type: object}\n",
            );
        let found = findings(&spec);
        let ids: Vec<_> = found
            .iter()
            .map(|f| f.split(": ").nth(1).unwrap())
            .collect();
        assert_eq!(
            ids,
            vec![
                "request-media-types-multiple",
                "component-schema-description",
                "int64-string-unconverted"
            ],
            "{found:#?}"
        );
        assert!(found[2].starts_with(
            "specs/t.yaml:#/paths/~1things~1{id}/get/parameters/0/schema: int64-string-unconverted: \
             int64 string schema also has pattern"
        ), "{found:#?}");
    }

    #[test]
    fn the_int64_digits_pattern_keeps_the_conversion() {
        // SA-20: the one pattern the I64String conversion also matches.
        let clean = CLEAN.replace("additionalProperties: false", "");
        assert!(findings(&clean).is_empty(), "{:#?}", findings(&clean));
        let spec = clean.replace(
            "{type: string, format: int64}}",
            "{type: string, format: int64, pattern: \"^-?[0-9]{1,18}$\"}}",
        );
        assert_ne!(spec, clean);
        assert!(findings(&spec).is_empty(), "{:#?}", findings(&spec));
    }

    #[test]
    fn every_rule_is_listed_once() {
        let ids: BTreeSet<_> = RULES.iter().map(|r| r.id).collect();
        assert_eq!(ids.len(), RULES.len());
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

    #[test]
    fn review_rules_on_parameters_properties_and_enums() {
        let spec = CLEAN
            .replace("additionalProperties: false", "")
            .replace(" description: The ID.,", "")
            .replace("{type: string, description: Name.}", "{type: string, enum: [a, b], description: Name.}")
            .replace("        message: {type: string, description: Message.}", "        message: {enum: [a, b]}\n        code: {$ref: \"#/components/schemas/Tag\"}\n        wrapped: {nullable: true, allOf: [{$ref: \"#/components/schemas/Tag\"}]}");
        let found = findings(&spec);
        let short: Vec<String> = found
            .iter()
            .map(|f| f.split(" (").next().unwrap().to_owned())
            .collect();
        assert_eq!(
            short,
            vec![
                "specs/t.yaml:#/paths/~1things~1{id}/get/parameters/0: parameter-description: path parameter \"id\" has no description",
                "specs/t.yaml:#/components/schemas/Error/properties/message: property-description: property \"message\" has no description",
                "specs/t.yaml:#/components/schemas/Error/properties/message: enum-typed: enum without a type",
            ],
            "{found:#?}"
        );
    }

    #[test]
    fn unused_components() {
        let spec = CLEAN.replace("additionalProperties: false", "").replace(
            "components:\n  schemas:\n",
            "components:\n  parameters:\n    unusedParam: {name: x, in: query, description: X., schema: {$ref: \"#/components/schemas/OnlyFromUnused\"}}\n  securitySchemes:\n    key: {type: apiKey, in: header, name: X-Key}\n  schemas:\n    OnlyFromUnused: {type: string, description: Only used by an unused component.}\n    Orphan: {type: string, description: Nobody uses it.}\n",
        );
        let found = findings(&spec);
        let short: Vec<String> = found
            .iter()
            .map(|f| f.split(" (").next().unwrap().to_owned())
            .collect();
        assert_eq!(
            short,
            vec![
                "specs/t.yaml:#/components/schemas/OnlyFromUnused: component-unused: schemas component \"OnlyFromUnused\" is never referenced",
                "specs/t.yaml:#/components/schemas/Orphan: component-unused: schemas component \"Orphan\" is never referenced",
                "specs/t.yaml:#/components/parameters/unusedParam: component-unused: parameters component \"unusedParam\" is never referenced",
                "specs/t.yaml:#/components/securitySchemes/key: component-unused: securitySchemes component \"key\" is never referenced",
            ],
            "{found:#?}"
        );
        let used = spec.replace("paths:\n", "security: [{key: []}]\npaths:\n");
        assert_eq!(ids(&used).len(), 3, "{:#?}", findings(&used));
    }
}

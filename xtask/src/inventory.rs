//! A stable, human-readable inventory of a spec's operations (for snapshot
//! tests and spec reviews): method, path, operationId, tags, parameters,
//! request body, responses and the deprecated flag.

use std::fmt::Write as _;

use openapiv3::{Content, ParameterSchemaOrContent, ReferenceOr, Response, Schema};
use serde_json::Value;

use crate::openapi::{Document, Op};

/// Short name of a `$ref`: the last path segment.
fn ref_name(r: &str) -> &str {
    r.rsplit('/').next().unwrap_or(r)
}

/// One-line summary of a schema: `string/int64`, `array<Conversion>`,
/// `object{a,b}`, `integer/int32 [1..1000]`, `string len[..100]`,
/// `integer enum[1,2]`, `string?` (nullable), `$ref` names.
pub fn schema_summary(schema: &Value) -> String {
    if let Some(r) = schema.get("$ref").and_then(Value::as_str) {
        return ref_name(r).to_owned();
    }
    let mut s = String::new();
    for key in ["allOf", "oneOf", "anyOf"] {
        if let Some(list) = schema.get(key).and_then(Value::as_array) {
            let parts: Vec<String> = list.iter().map(schema_summary).collect();
            let _ = write!(s, "{key}[{}]", parts.join(", "));
        }
    }
    if let Some(t) = schema.get("type").and_then(Value::as_str) {
        s.push_str(t);
        match t {
            "array" => {
                let items = schema.get("items").map_or("?".to_owned(), schema_summary);
                let _ = write!(s, "<{items}>");
            }
            "object" => {
                if let Some(props) = schema.get("properties").and_then(Value::as_object) {
                    let names: Vec<&str> = crate::sorted(props)
                        .into_iter()
                        .map(|(k, _)| k.as_str())
                        .collect();
                    let _ = write!(s, "{{{}}}", names.join(","));
                }
                match schema.get("additionalProperties") {
                    Some(Value::Bool(b)) => {
                        let _ = write!(s, " additionalProperties={b}");
                    }
                    Some(other) => {
                        let _ = write!(s, " map<{}>", schema_summary(other));
                    }
                    None => {}
                }
            }
            _ => {}
        }
    } else if s.is_empty() {
        s.push_str("any");
    }
    if let Some(format) = schema.get("format").and_then(Value::as_str) {
        let _ = write!(s, "/{format}");
    }
    let bound = |key: &str| schema.get(key).map(Value::to_string);
    match (bound("minimum"), bound("maximum")) {
        (None, None) => {}
        (min, max) => {
            let _ = write!(
                s,
                " [{}..{}]",
                min.unwrap_or_default(),
                max.unwrap_or_default()
            );
        }
    }
    match (bound("minLength"), bound("maxLength")) {
        (None, None) => {}
        (min, max) => {
            let _ = write!(
                s,
                " len[{}..{}]",
                min.unwrap_or_default(),
                max.unwrap_or_default()
            );
        }
    }
    if let Some(pattern) = schema.get("pattern").and_then(Value::as_str) {
        let _ = write!(s, " pattern {pattern:?}");
    }
    if let Some(values) = schema.get("enum").and_then(Value::as_array) {
        let values: Vec<String> = values
            .iter()
            .map(|v| v.as_str().map_or_else(|| v.to_string(), str::to_owned))
            .collect();
        let _ = write!(s, " enum[{}]", values.join(","));
    }
    if schema.get("nullable") == Some(&Value::Bool(true)) {
        s.push('?');
    }
    s
}

fn content_summary(content: &Content) -> Vec<String> {
    let mut lines: Vec<String> = content
        .iter()
        .map(|(media, mt)| {
            let schema = mt
                .schema
                .as_ref()
                .map_or_else(|| "-".to_owned(), |s| schema_summary(&json_of(s)));
            format!("{media} {schema}")
        })
        .collect();
    lines.sort();
    lines
}

/// Render the inventory of `doc` as text: operations sorted by path, methods
/// in [`crate::openapi::METHODS`] order (deterministic).
pub fn render(doc: &Document) -> String {
    let spec = &doc.spec;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{} {} (openapi {})",
        spec.info.title, spec.info.version, spec.openapi
    );
    let mut operations = doc.operations();
    // Stable: methods keep their order within a path.
    operations.sort_by(|a, b| a.path.cmp(b.path));
    for op in &operations {
        render_operation(&mut out, doc, op);
    }
    out
}

/// A typed part as JSON (for the summaries).
fn json_of<T: serde::Serialize>(value: &T) -> Value {
    serde_json::to_value(value).unwrap_or(Value::Null)
}

fn render_operation(out: &mut String, doc: &Document, op: &Op<'_>) {
    let operation = op.operation;
    let _ = writeln!(out, "\n{}", op.label());
    let _ = writeln!(
        out,
        "  operationId: {}",
        operation.operation_id.as_deref().unwrap_or("-")
    );
    let tags = if operation.tags.is_empty() {
        "-".to_owned()
    } else {
        operation.tags.join(", ")
    };
    let _ = writeln!(out, "  tags: {tags}");
    let _ = writeln!(out, "  deprecated: {}", operation.deprecated);

    let params = doc.parameters(op);
    if params.is_empty() {
        let _ = writeln!(out, "  parameters: -");
    } else {
        let _ = writeln!(out, "  parameters:");
        for p in params {
            let data = p.param.parameter_data_ref();
            let schema = match &data.format {
                ParameterSchemaOrContent::Schema(ReferenceOr::Reference { reference }) => {
                    let target = doc
                        .resolve(&ReferenceOr::<Schema>::ref_(reference))
                        .map_or(Value::Null, |r| json_of(r.item));
                    format!("{} = {}", ref_name(reference), schema_summary(&target))
                }
                ParameterSchemaOrContent::Schema(schema) => schema_summary(&json_of(schema)),
                ParameterSchemaOrContent::Content(_) => "-".to_owned(),
            };
            let mut flags = vec![if data.required {
                "required"
            } else {
                "optional"
            }];
            if data.deprecated == Some(true) {
                flags.push("deprecated");
            }
            let _ = writeln!(
                out,
                "    {} {}: {schema} ({})",
                p.location,
                data.name,
                flags.join(", ")
            );
        }
    }

    match &operation.request_body {
        None => {
            let _ = writeln!(out, "  request body: -");
        }
        Some(body) => {
            let name = reference_label(body);
            match doc.resolve(body) {
                Some(resolved) => {
                    let required = if resolved.item.required {
                        "required"
                    } else {
                        "optional"
                    };
                    let _ = writeln!(out, "  request body{name} ({required}):");
                    for line in content_summary(&resolved.item.content) {
                        let _ = writeln!(out, "    {line}");
                    }
                }
                None => {
                    let _ = writeln!(out, "  request body{name}: (unresolved)");
                }
            }
        }
    }

    let _ = writeln!(out, "  responses:");
    let mut responses: Vec<(String, &ReferenceOr<Response>)> = operation
        .responses
        .responses
        .iter()
        .map(|(status, r)| (status.to_string(), r))
        .collect();
    if let Some(default) = &operation.responses.default {
        responses.push(("default".to_owned(), default));
    }
    responses.sort_by(|a, b| a.0.cmp(&b.0));
    for (status, response) in responses {
        let name = reference_label(response);
        let content = doc
            .resolve(response)
            .map(|r| content_summary(&r.item.content))
            .unwrap_or_default();
        if content.is_empty() {
            let _ = writeln!(out, "    {status}{name}: (no body)");
        } else {
            let _ = writeln!(out, "    {status}{name}: {}", content.join("; "));
        }
    }
}

/// ` [Name]` for a `$ref`, empty for an inline item.
fn reference_label<T>(item: &ReferenceOr<T>) -> String {
    match item {
        ReferenceOr::Reference { reference } => format!(" [{}]", ref_name(reference)),
        ReferenceOr::Item(_) => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn schema_summaries() {
        assert_eq!(
            schema_summary(&json!({"type": "string", "format": "int64"})),
            "string/int64"
        );
        assert_eq!(
            schema_summary(&json!({"type": "array", "items": {"$ref": "#/components/schemas/X"}})),
            "array<X>"
        );
        assert_eq!(
            schema_summary(&json!({"type": "integer", "enum": [1, 2], "nullable": true})),
            "integer enum[1,2]?"
        );
        assert_eq!(
            schema_summary(&json!({"type": "object", "properties": {"b": {}, "a": {}}})),
            "object{a,b}"
        );
        assert_eq!(
            schema_summary(
                &json!({"type": "integer", "format": "int32", "minimum": 1, "maximum": 1000})
            ),
            "integer/int32 [1..1000]"
        );
        assert_eq!(
            schema_summary(&json!({"type": "string", "maxLength": 100})),
            "string len[..100]"
        );
    }
}

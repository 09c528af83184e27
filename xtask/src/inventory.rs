//! A stable, human-readable inventory of a spec's operations (for snapshot
//! tests and spec reviews): method, path, operationId, tags, parameters,
//! request body, responses and the deprecated flag.

use std::fmt::Write as _;

use openapiv3::OpenAPI;
use serde_json::Value;

const METHODS: [&str; 8] = [
    "get", "put", "post", "delete", "options", "head", "patch", "trace",
];

/// Short name of a `$ref`: the last path segment.
fn ref_name(r: &str) -> &str {
    r.rsplit('/').next().unwrap_or(r)
}

/// Resolve a local `$ref`, if `value` is one.
fn deref<'a>(doc: &'a Value, value: &'a Value) -> &'a Value {
    match value.get("$ref").and_then(Value::as_str) {
        Some(r) => r
            .strip_prefix('#')
            .and_then(|p| doc.pointer(p))
            .unwrap_or(value),
        None => value,
    }
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

fn content_summary(content: Option<&Value>) -> Vec<String> {
    let Some(content) = content.and_then(Value::as_object) else {
        return Vec::new();
    };
    crate::sorted(content)
        .into_iter()
        .map(|(media, mt)| {
            let schema = mt
                .get("schema")
                .map_or_else(|| "-".to_owned(), schema_summary);
            format!("{media} {schema}")
        })
        .collect()
}

/// Render the inventory of `spec` as text (document order; deterministic).
pub fn render(spec: &OpenAPI) -> String {
    let doc = serde_json::to_value(spec).unwrap_or(Value::Null);
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{} {} (openapi {})",
        spec.info.title, spec.info.version, spec.openapi
    );
    let Some(paths) = doc.get("paths").and_then(Value::as_object) else {
        return out;
    };
    for (path, item) in crate::sorted(paths) {
        let item = deref(&doc, item);
        let path_params: Vec<&Value> = item
            .get("parameters")
            .and_then(Value::as_array)
            .map(|v| v.iter().collect())
            .unwrap_or_default();
        for method in METHODS {
            let Some(op) = item.get(method) else { continue };
            render_operation(&mut out, &doc, path, method, op, &path_params);
        }
    }
    out
}

fn render_operation(
    out: &mut String,
    doc: &Value,
    path: &str,
    method: &str,
    op: &Value,
    path_params: &[&Value],
) {
    let str_of = |key: &str| op.get(key).and_then(Value::as_str);
    let _ = writeln!(out, "\n{} {path}", method.to_uppercase());
    let _ = writeln!(
        out,
        "  operationId: {}",
        str_of("operationId").unwrap_or("-")
    );
    let tags: Vec<&str> = op
        .get("tags")
        .and_then(Value::as_array)
        .map(|t| t.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let _ = writeln!(
        out,
        "  tags: {}",
        if tags.is_empty() {
            "-".to_owned()
        } else {
            tags.join(", ")
        }
    );
    let deprecated = op.get("deprecated") == Some(&Value::Bool(true));
    let _ = writeln!(out, "  deprecated: {deprecated}");

    let op_params: Vec<&Value> = op
        .get("parameters")
        .and_then(Value::as_array)
        .map(|v| v.iter().collect())
        .unwrap_or_default();
    let params: Vec<&Value> = path_params
        .iter()
        .chain(op_params.iter())
        .map(|p| deref(doc, p))
        .collect();
    if params.is_empty() {
        let _ = writeln!(out, "  parameters: -");
    } else {
        let _ = writeln!(out, "  parameters:");
        for p in params {
            let name = p.get("name").and_then(Value::as_str).unwrap_or("?");
            let location = p.get("in").and_then(Value::as_str).unwrap_or("?");
            let required = p.get("required") == Some(&Value::Bool(true));
            let schema = p.get("schema").map_or_else(
                || "-".to_owned(),
                |schema| match schema.get("$ref").and_then(Value::as_str) {
                    Some(r) => format!("{} = {}", ref_name(r), schema_summary(deref(doc, schema))),
                    None => schema_summary(schema),
                },
            );
            let mut flags = vec![if required { "required" } else { "optional" }];
            if p.get("deprecated") == Some(&Value::Bool(true)) {
                flags.push("deprecated");
            }
            let _ = writeln!(
                out,
                "    {location} {name}: {schema} ({})",
                flags.join(", ")
            );
        }
    }

    match op.get("requestBody") {
        None => {
            let _ = writeln!(out, "  request body: -");
        }
        Some(body) => {
            let name = body
                .get("$ref")
                .and_then(Value::as_str)
                .map(|r| format!(" [{}]", ref_name(r)))
                .unwrap_or_default();
            let body = deref(doc, body);
            let required = body.get("required") == Some(&Value::Bool(true));
            let _ = writeln!(
                out,
                "  request body{name} ({}):",
                if required { "required" } else { "optional" }
            );
            for line in content_summary(body.get("content")) {
                let _ = writeln!(out, "    {line}");
            }
        }
    }

    let _ = writeln!(out, "  responses:");
    if let Some(responses) = op.get("responses").and_then(Value::as_object) {
        for (status, response) in crate::sorted(responses) {
            let name = response
                .get("$ref")
                .and_then(Value::as_str)
                .map(|r| format!(" [{}]", ref_name(r)))
                .unwrap_or_default();
            let response = deref(doc, response);
            let content = content_summary(response.get("content"));
            if content.is_empty() {
                let _ = writeln!(out, "    {status}{name}: (no body)");
            } else {
                let _ = writeln!(out, "    {status}{name}: {}", content.join("; "));
            }
        }
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

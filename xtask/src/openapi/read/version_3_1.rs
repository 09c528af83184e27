//! OpenAPI 3.1 spellings with a 3.0 meaning, translated in every schema.

use serde_json::{Map, Value};

/// Translate the OpenAPI 3.1 spellings with a 3.0 meaning in every schema of
/// a document (`in_schema`: `value` is a schema): schemas are the values of
/// `schema` keys and of `components/schemas`, and their subschemas.
/// Examples, defaults and enum values are data and left alone.
pub(super) fn spellings_3_1(value: &mut Value, in_schema: bool) {
    match value {
        Value::Object(map) => {
            if in_schema {
                translate_3_1(map);
            }
            for (key, child) in map.iter_mut() {
                match key.as_str() {
                    "example" | "examples" | "default" | "enum" | "x-extensible-enum" => {}
                    "schema" => spellings_3_1(child, true),
                    "schemas" if !in_schema => {
                        if let Value::Object(schemas) = child {
                            for schema in schemas.values_mut() {
                                spellings_3_1(schema, true);
                            }
                        }
                    }
                    "items" | "not" | "additionalProperties" if in_schema => {
                        spellings_3_1(child, true)
                    }
                    "properties" | "allOf" | "oneOf" | "anyOf" if in_schema => match child {
                        Value::Object(subs) => {
                            subs.values_mut().for_each(|s| spellings_3_1(s, true))
                        }
                        Value::Array(subs) => subs.iter_mut().for_each(|s| spellings_3_1(s, true)),
                        _ => {}
                    },
                    _ if in_schema => {}
                    _ => spellings_3_1(child, false),
                }
            }
        }
        Value::Array(list) if !in_schema => list.iter_mut().for_each(|v| spellings_3_1(v, false)),
        _ => {}
    }
}

/// OpenAPI 3.1 spellings with a 3.0 equivalent, in one schema object.
pub(super) fn translate_3_1(map: &mut Map<String, Value>) {
    // `oneOf`/`anyOf` with a `{type: "null"}` member: nullable.
    for key in ["oneOf", "anyOf"] {
        if let Some(Value::Array(members)) = map.get_mut(key) {
            let before = members.len();
            members.retain(|m| m.get("type").and_then(Value::as_str) != Some("null"));
            if members.len() < before {
                map.insert("nullable".into(), Value::Bool(true));
            }
        }
    }
    if let Some(Value::Array(types)) = map.get("type").cloned() {
        let mut names: Vec<&str> = types.iter().filter_map(Value::as_str).collect();
        if names.contains(&"null") {
            names.retain(|t| *t != "null");
            map.insert("nullable".into(), Value::Bool(true));
        }
        match names.as_slice() {
            [one] => {
                map.insert("type".into(), Value::from(*one));
            }
            _ => {
                map.remove("type");
            }
        }
    }
    for (exclusive, bound) in [
        ("exclusiveMinimum", "minimum"),
        ("exclusiveMaximum", "maximum"),
    ] {
        if let Some(Value::Number(n)) = map.get(exclusive).cloned() {
            map.insert(bound.into(), Value::Number(n));
            map.insert(exclusive.into(), Value::Bool(true));
        }
    }
    if let Some(value) = map.remove("const") {
        map.entry("enum").or_insert(Value::Array(vec![value]));
    }
}

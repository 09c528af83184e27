//! Rules on schemas: response objects closed to new fields, component and
//! property descriptions, typed enums, int64 strings.

use std::collections::BTreeSet;

use serde_json::Value;

use super::rules::{
    COMPONENT_SCHEMA_DESCRIPTION, ENUM_TYPED, INT64_STRING_UNCONVERTED, Linter,
    PROPERTY_DESCRIPTION, RESPONSE_ADDITIONAL_PROPERTIES_FALSE, Rule, non_empty_str,
};
use crate::openapi::METHODS;
use crate::openapi::escape;
use crate::specs::{INT64_METADATA_KEYS, INT64_PATTERN, is_int64_string};

/// Every schema reachable from a response, via `$ref` too.
pub(super) fn lint_response_schemas(l: &mut Linter<'_>) {
    let mut roots = Vec::new();
    for (typed, op) in l.operations() {
        {
            let Some(responses) = op.get("responses").and_then(Value::as_object) else {
                continue;
            };
            for (status, response) in crate::sorted(responses) {
                let Some((response, via)) = l.deref(response) else {
                    continue;
                };
                let base = via
                    .unwrap_or_else(|| format!("{}/responses/{}", typed.pointer, escape(status)));
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

pub(super) fn lint_component_descriptions(l: &mut Linter<'_>) {
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

pub(super) fn lint_int64_strings(l: &mut Linter<'_>, value: &Value, pointer: String) {
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

/// Whether a property schema is a `$ref`, or a wrapper (the model's one
/// rule, [`crate::openapi::wrapped_reference`]) around one: described by its
/// target.
fn is_reference(schema: &Value) -> bool {
    match serde_json::from_value::<openapiv3::ReferenceOr<openapiv3::Schema>>(schema.clone()) {
        Ok(openapiv3::ReferenceOr::Reference { .. }) => true,
        Ok(openapiv3::ReferenceOr::Item(schema)) => matches!(
            crate::openapi::wrapped_reference(&schema),
            Some(openapiv3::ReferenceOr::Reference { .. })
        ),
        Err(_) => false,
    }
}

pub(super) fn lint_schemas(l: &mut Linter<'_>) {
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

#[cfg(test)]
mod tests {
    use crate::lint::test_support::{CLEAN, findings};

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
}

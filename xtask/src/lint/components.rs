//! Rules on components: every component is referenced.

use std::collections::BTreeSet;

use serde_json::Value;

use super::rules::{COMPONENT_UNUSED, Linter};
use crate::openapi::{METHODS, escape};

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

pub(super) fn lint_unused_components(l: &mut Linter<'_>) {
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
    use crate::lint::test_support::{CLEAN, findings, ids};

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

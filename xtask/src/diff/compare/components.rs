//! Components: schemas added, removed and renamed; security schemes.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use super::differ::{Differ, SCHEMA_PREFIX, Subject};
use crate::diff::rules::{self as r, Direction};
use crate::openapi::{Document, escape};

const DOC_KEYS: &[&str] = &["description", "title", "example", "externalDocs"];

/// A schema's JSON without documentation keys, recursively (property names
/// are kept even when they are called `description`).
fn strip_docs(schema: &Value) -> Value {
    let Value::Object(map) = schema else {
        return schema.clone();
    };
    let mut out = serde_json::Map::new();
    for (k, v) in map {
        if DOC_KEYS.contains(&k.as_str()) {
            continue;
        }
        let v = match (k.as_str(), v) {
            ("properties", Value::Object(props)) => Value::Object(
                props
                    .iter()
                    .map(|(name, s)| (name.clone(), strip_docs(s)))
                    .collect(),
            ),
            ("items" | "additionalProperties" | "not", s) => strip_docs(s),
            ("allOf" | "oneOf" | "anyOf", Value::Array(list)) => {
                Value::Array(list.iter().map(strip_docs).collect())
            }
            _ => v.clone(),
        };
        out.insert(k.clone(), v);
    }
    Value::Object(out)
}

/// Component schemas removed from `old` and added to `new` with the same
/// shape (documentation aside), paired one to one.
pub(super) fn detect_renames(old: &Document, new: &Document) -> BTreeMap<String, String> {
    let names = |doc: &Document| -> BTreeMap<String, Value> {
        doc.spec
            .components
            .iter()
            .flat_map(|c| c.schemas.iter())
            .map(|(k, v)| {
                (
                    k.clone(),
                    strip_docs(&serde_json::to_value(v).unwrap_or(Value::Null)),
                )
            })
            .collect()
    };
    let (old_schemas, new_schemas) = (names(old), names(new));
    let removed: Vec<(&String, &Value)> = old_schemas
        .iter()
        .filter(|(k, _)| !new_schemas.contains_key(*k))
        .collect();
    let added: Vec<(&String, &Value)> = new_schemas
        .iter()
        .filter(|(k, _)| !old_schemas.contains_key(*k))
        .collect();
    let mut renames = BTreeMap::new();
    for (old_name, shape) in &removed {
        let matches: Vec<&String> = added
            .iter()
            .filter(|(_, s)| s == shape)
            .map(|(k, _)| *k)
            .collect();
        let reverse = removed.iter().filter(|(_, s)| s == shape).count();
        if let [new_name] = matches.as_slice()
            && reverse == 1
        {
            renames.insert((*old_name).clone(), (*new_name).clone());
        }
    }
    renames
}

impl<'a> Differ<'a> {
    pub(super) fn components(&mut self) {
        let names = |doc: &Document| -> Vec<String> {
            doc.spec
                .components
                .iter()
                .flat_map(|c| c.schemas.keys().cloned())
                .collect()
        };
        let (old, new) = (names(self.old), names(self.new));
        let renames = self.renames.clone();
        for name in &old {
            if new.contains(name) {
                continue;
            }
            let location = format!("{SCHEMA_PREFIX}{}", escape(name));
            match renames.get(name) {
                Some(to) => {
                    let subject = Subject::Schema(to.clone());
                    let location = format!("{SCHEMA_PREFIX}{}", escape(to));
                    let detail = format!("`{name}` renamed to `{to}`");
                    self.record(&subject, &location, &r::SCHEMA_RENAMED, detail, None);
                }
                None => {
                    let subject = Subject::Schema(name.clone());
                    let detail = format!("`{name}` removed");
                    self.record(&subject, &location, &r::SCHEMA_REMOVED, detail, None);
                }
            }
        }
        for name in &new {
            if old.contains(name) || renames.values().any(|v| v == name) {
                continue;
            }
            let subject = Subject::Schema(name.clone());
            let location = format!("{SCHEMA_PREFIX}{}", escape(name));
            self.record(
                &subject,
                &location,
                &r::SCHEMA_ADDED,
                format!("`{name}` added"),
                None,
            );
        }
        // Components no operation reached: compare as if used both ways.
        let pairs: Vec<(String, String)> = old
            .iter()
            .filter_map(|name| {
                if new.contains(name) {
                    Some((name.clone(), name.clone()))
                } else {
                    renames.get(name).map(|to| (name.clone(), to.clone()))
                }
            })
            .collect();
        for (a, b) in pairs {
            let (a, b) = (format!("{SCHEMA_PREFIX}{a}"), format!("{SCHEMA_PREFIX}{b}"));
            let seen = self.visited.iter().any(|(x, y, _, _)| *x == a && *y == b);
            if !seen {
                self.component(&a, &b, Direction::Request, false);
                self.component(&a, &b, Direction::Response, false);
            }
        }
    }

    pub(super) fn security_schemes(&mut self) {
        // A scheme the reader could not type (`type: http` without `scheme`,
        // say) is compared as written: a change to it is still a change.
        const LEFT_OUT: &str = "#/components/securitySchemes/";
        let normalized = |doc: &Document| -> BTreeMap<String, Value> {
            let typed = doc
                .spec
                .components
                .iter()
                .flat_map(|c| c.security_schemes.iter())
                .map(|(name, s)| (name.clone(), serde_json::to_value(s).unwrap_or(Value::Null)));
            let written = doc.left_out.iter().filter_map(|(pointer, v)| {
                let name = pointer.strip_prefix(LEFT_OUT)?;
                (!name.contains('/')).then(|| (unescape(name), v.clone()))
            });
            typed
                .chain(written)
                .map(|(name, mut v)| {
                    normalize_scheme(&mut v);
                    (name, v)
                })
                .collect()
        };
        let (old, new) = (normalized(self.old), normalized(self.new));
        for (name, o) in &old {
            if let Some(n) = new.get(name)
                && o != n
            {
                let subject = Subject::SecurityScheme(name.clone());
                let location = format!("#/components/securitySchemes/{}", escape(name));
                let changed = changed_keys(o, n);
                let detail = format!("security scheme `{name}` changed: {}", changed.join(", "));
                // How tokens are obtained, not how credentials are sent.
                let rule = if changed.iter().all(|k| {
                    ["`flows`", "`openIdConnectUrl`", "`bearerFormat`"].contains(&k.as_str())
                }) {
                    &r::SECURITY_FLOWS_CHANGED
                } else {
                    &r::SECURITY_SCHEME_CHANGED
                };
                self.record(&subject, &location, rule, detail, None);
            }
        }
    }
}

/// Undo [`escape`] on one JSON pointer segment.
fn unescape(segment: &str) -> String {
    segment.replace("~1", "/").replace("~0", "~")
}

fn normalize_scheme(v: &mut Value) {
    if let Value::Object(map) = v {
        map.remove("description");
        if let Some(Value::Object(flows)) = map.get_mut("flows") {
            for flow in flows.values_mut() {
                if let Some(Value::Object(scopes)) = flow.get_mut("scopes") {
                    for d in scopes.values_mut() {
                        *d = Value::Null;
                    }
                }
            }
        }
    }
}

/// Which top-level keys of a security scheme differ (`` `flows` ``).
fn changed_keys(o: &Value, n: &Value) -> Vec<String> {
    let keys: BTreeSet<&String> = o
        .as_object()
        .into_iter()
        .chain(n.as_object())
        .flat_map(|m| m.keys())
        .collect();
    let changed: Vec<String> = keys
        .into_iter()
        .filter(|k| o.get(k.as_str()) != n.get(k.as_str()))
        .map(|k| format!("`{k}`"))
        .collect();
    changed
}

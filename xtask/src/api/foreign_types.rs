//! Rule `foreign-types`: no type of the HTTP stack or of the generated clients in
//! the SDK's public API (a signature, variant, field, re-export or trait impl).
//!
//! It reads the SDK's rustdoc JSON (`cargo rustdoc -p sa360-video-sdk --all-features --
//! --output-format json`, an unstable rustdoc output: `RUSTC_BOOTSTRAP=1` lets the
//! stable toolchain write it). Every item of the SDK that rustdoc documents is
//! public; each one's description is searched for a reference (an `id`) to an item
//! of a crate in [`FORBIDDEN`]. Blanket and auto-trait impls that rustdoc adds
//! (`impl<T> From<T> for T`, `Send`) are not the SDK's API and are skipped.
//! The JSON is read as untyped values, so a new rustdoc format version does not
//! break the rule unless it renames `index`, `paths`, `external_crates` or `id`.

use std::collections::BTreeSet;
use std::fmt;

use serde_json::Value;

/// Crates whose types must not appear in the SDK's public API: a change of
/// theirs (a new major version, a regenerated client) would break our users.
pub const FORBIDDEN: &[&str] = &[
    "reqwest",
    "progenitor_client",
    "sa360_v2_client",
    "sa360_reporting_client",
    "video_session_client",
    "http",
    "hyper",
];

/// A public item that refers to a forbidden crate.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Violation {
    /// Where the item is declared (`file:line`), when rustdoc says.
    pub location: String,
    /// The item (its name, or `impl` for an impl block) and its kind.
    pub item: String,
    /// The foreign path it refers to (`reqwest::Error`).
    pub foreign: String,
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: public {} refers to `{}`; the SDK's API must not expose the HTTP stack or \
             the generated clients (wrap it in an SDK type)",
            self.location, self.item, self.foreign
        )
    }
}

/// The violations in a rustdoc JSON document of the SDK.
pub fn check(doc: &Value) -> Result<Vec<Violation>, String> {
    let index = doc
        .get("index")
        .and_then(Value::as_object)
        .ok_or("the rustdoc JSON has no `index`")?;
    let paths = doc
        .get("paths")
        .and_then(Value::as_object)
        .ok_or("the rustdoc JSON has no `paths`")?;
    let crates = doc
        .get("external_crates")
        .and_then(Value::as_object)
        .ok_or("the rustdoc JSON has no `external_crates`")?;
    let root_crate = doc
        .get("root")
        .and_then(|root| index.get(&key(root)))
        .and_then(|item| item.get("crate_id"))
        .map(key)
        .unwrap_or_else(|| "0".to_owned());
    // The external path an id stands for, when it is in a forbidden crate.
    let forbidden = |id: &str| -> Option<String> {
        let entry = paths.get(id)?;
        let crate_id = key(entry.get("crate_id")?);
        let name = crates.get(&crate_id)?.get("name")?.as_str()?;
        if !FORBIDDEN.contains(&name) {
            return None;
        }
        let path: Vec<&str> = entry
            .get("path")?
            .as_array()?
            .iter()
            .filter_map(Value::as_str)
            .collect();
        Some(if path.is_empty() {
            name.to_owned()
        } else {
            path.join("::")
        })
    };
    let mut found = BTreeSet::new();
    for item in index.values() {
        if item.get("crate_id").map(key).as_deref() != Some(root_crate.as_str()) {
            continue;
        }
        let Some(inner) = item.get("inner") else {
            continue;
        };
        if let Some(imp) = inner.get("impl")
            && (imp.get("is_synthetic").and_then(Value::as_bool) == Some(true)
                || imp.get("blanket_impl").is_some_and(|b| !b.is_null()))
        {
            continue;
        }
        let mut ids = Vec::new();
        collect_ids(inner, &mut ids);
        for id in ids {
            if let Some(foreign) = forbidden(&id) {
                found.insert(Violation {
                    location: location(item),
                    item: describe(item, inner),
                    foreign,
                });
            }
        }
    }
    Ok(found.into_iter().collect())
}

/// Every value under an `id` key (ids are numbers in recent formats, strings before).
fn collect_ids(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            for (k, v) in map {
                if k == "id" && (v.is_number() || v.is_string()) {
                    out.push(key(v));
                } else {
                    collect_ids(v, out);
                }
            }
        }
        Value::Array(values) => values.iter().for_each(|v| collect_ids(v, out)),
        _ => {}
    }
}

fn key(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

fn location(item: &Value) -> String {
    let span = item.get("span");
    let file = span
        .and_then(|s| s.get("filename"))
        .and_then(Value::as_str)
        .unwrap_or("(unknown file)");
    let line = span
        .and_then(|s| s.get("begin"))
        .and_then(|b| b.get(0))
        .and_then(Value::as_u64)
        .map(|l| format!(":{l}"))
        .unwrap_or_default();
    format!("{file}{line}")
}

fn describe(item: &Value, inner: &Value) -> String {
    let kind = inner
        .as_object()
        .and_then(|m| m.keys().next().cloned())
        .unwrap_or_else(|| "item".to_owned());
    match item.get("name").and_then(Value::as_str) {
        Some(name) => format!("{kind} `{name}`"),
        None => kind,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// An SDK with one clean function and one variant that holds `reqwest::Error`.
    fn doc(variant_type_id: u64) -> Value {
        json!({
            "root": 0,
            "index": {
                "0": {"crate_id": 0, "name": "SDK", "inner": {"module": {"items": [1, 2]}}},
                "1": {"crate_id": 0, "name": "Transport", "inner": {"variant": {"kind": {"tuple": [3]}}}},
                "3": {"crate_id": 0, "name": "0", "span": {"filename": "src/error.rs", "begin": [7, 15]}, "inner": {"struct_field": {"resolved_path": {"path": "Error", "id": variant_type_id, "args": null}}}},
                "2": {"crate_id": 0, "name": "send", "inner": {"function": {"sig": {"output": {"resolved_path": {"path": "String", "id": 20}}}}}},
                "9": {"crate_id": 0, "inner": {"impl": {"is_synthetic": false, "blanket_impl": {"generic": "T"},
                      "for": {"resolved_path": {"path": "reqwest::Error", "id": 10}}}}}
            },
            "paths": {
                "10": {"crate_id": 5, "path": ["reqwest", "error", "Error"], "kind": "struct"},
                "20": {"crate_id": 1, "path": ["alloc", "string", "String"], "kind": "struct"},
                "30": {"crate_id": 0, "path": ["SDK", "http", "TransportError"], "kind": "struct"}
            },
            "external_crates": {"1": {"name": "alloc"}, "5": {"name": "reqwest"}}
        })
    }

    #[test]
    fn a_foreign_type_in_a_variant_is_named_with_its_place() {
        let found = check(&doc(10)).unwrap();
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].foreign, "reqwest::error::Error");
        assert_eq!(found[0].location, "src/error.rs:7");
        assert_eq!(found[0].item, "struct_field `0`");
    }

    #[test]
    fn own_and_std_types_and_blanket_impls_pass() {
        assert_eq!(check(&doc(30)).unwrap(), vec![]);
    }

    #[test]
    fn a_document_without_an_index_is_an_error() {
        assert!(check(&json!({})).is_err());
    }
}

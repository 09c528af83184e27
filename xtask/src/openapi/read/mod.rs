//! The tolerant reader: any document a lenient OpenAPI 3.0 reader accepts
//! becomes a [`Document`].
//!
//! 1. The text is read as YAML (JSON is YAML); merge keys (`<<`) are applied.
//! 2. Mapping keys become strings (`200:` and `{0: …}` are common), YAML tags
//!    are dropped, non-finite numbers become `null`.
//! 3. OpenAPI 3.1 spellings with a 3.0 meaning are translated in every
//!    schema (`type: [string, "null"]`, a `{type: "null"}` member of
//!    `oneOf`/`anyOf`, numeric `exclusiveMinimum`/`exclusiveMaximum`,
//!    `const`).
//! 4. The typed form is tried on the whole document. Only where it fails is
//!    the document repaired, part by part, from the root down:
//!    * parts that are optional in practice are defaulted: a missing `info`,
//!      `paths`, `responses`, response `description` or parameter `schema`,
//!      a `content`, `headers` or media type left `null`;
//!    * a keyword that still cannot be read is dropped, and a part that
//!      still cannot be read is dropped (a schema becomes "any value"),
//!      each with a [`Warning`] naming its JSON pointer.
//!
//! Only a text that is not YAML, or whose root is not a mapping, or a Swagger
//! 2.0 document, is refused ([`ReadError`]).
//!
//! One file a job: this one reads and drives the repair; `objects` repairs each kind of
//! object; `version_3_1` translates 3.1 spellings; `yaml` turns YAML into JSON and back.

mod objects;
#[cfg(test)]
mod tests;
mod version_3_1;
mod yaml;

use std::collections::BTreeMap;
use std::fmt;

use openapiv3::OpenAPI;
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use self::version_3_1::spellings_3_1;
use self::yaml::{key_string, ordered, short};
use crate::openapi::document::{Document, Warning, escape};
/// Why a text could not be read at all.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadError(pub String);

impl fmt::Display for ReadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ReadError {}

/// The largest document read (a spec is kilobytes; this bounds memory when
/// an argument names the wrong file).
pub const MAX_DOCUMENT_BYTES: usize = 64 * 1024 * 1024;

/// Read `text` (YAML or JSON) as an OpenAPI 3.0 document.
pub fn read(text: &str) -> Result<Document, ReadError> {
    if text.len() > MAX_DOCUMENT_BYTES {
        return Err(ReadError(format!(
            "the document is {} bytes, more than the {MAX_DOCUMENT_BYTES} bytes read",
            text.len()
        )));
    }
    let mut yaml: serde_norway::Value = serde_norway::from_str(text)
        .map_err(|e| ReadError(format!("not a YAML or JSON document: {e}")))?;
    yaml.apply_merge()
        .map_err(|e| ReadError(format!("YAML merge keys cannot be applied: {e}")))?;
    let mut reader = Reader::default();
    let mut json = reader.json_of(yaml.clone(), "#");
    let Value::Object(root) = &mut json else {
        return Err(ReadError(
            "the document is not a mapping (an OpenAPI document is an object)".to_owned(),
        ));
    };
    if root.contains_key("swagger") && !root.contains_key("openapi") {
        return Err(ReadError(
            "a Swagger 2.0 document; only OpenAPI 3.0 documents can be compared".to_owned(),
        ));
    }
    match root.get("openapi") {
        Some(Value::String(v)) if v.starts_with("3.0") => {}
        Some(Value::String(v)) => reader.warn(
            "#/openapi",
            format!("openapi is {v:?}; read as an OpenAPI 3.0 document"),
        ),
        Some(other) => {
            let shown = other.to_string();
            reader.warn(
                "#/openapi",
                format!("openapi is {shown}, not a string; read as 3.0"),
            );
            root.insert("openapi".into(), Value::String(shown));
        }
        None => {
            reader.warn("#/openapi", "no openapi version; read as 3.0.3");
            root.insert("openapi".into(), Value::from("3.0.3"));
        }
    }
    spellings_3_1(&mut json, false);
    if try_as::<OpenAPI>(&json).is_err() {
        reader.document(&mut json);
    }
    // The typed form is read from YAML in the document's own key order (the
    // JSON map is sorted), so operations and properties keep their order.
    let spec = OpenAPI::deserialize(ordered(&json, Some(&yaml))).map_err(|e| {
        ReadError(format!(
            "the document cannot be read even after repairs: {e}"
        ))
    })?;
    reader.references(&json, &json, "#");
    Ok(Document {
        spec,
        json,
        warnings: reader.warnings,
        left_out: reader.left_out,
    })
}

fn try_as<T: DeserializeOwned>(value: &Value) -> Result<T, serde_json::Error> {
    T::deserialize(value)
}

/// Keys of a schema object whose values are schemas (or lists or maps of
/// them); they are repaired one by one, never dropped as a whole keyword.
const SCHEMA_CHILD_KEYS: &[&str] = &[
    "properties",
    "items",
    "additionalProperties",
    "allOf",
    "oneOf",
    "anyOf",
    "not",
];

#[derive(Default)]
struct Reader {
    warnings: Vec<Warning>,
    left_out: BTreeMap<String, Value>,
}

impl Reader {
    fn warn(&mut self, pointer: &str, message: impl Into<String>) {
        self.warnings.push(Warning {
            pointer: pointer.to_owned(),
            message: message.into(),
        });
    }

    /// Warn about every `$ref` that does not lead anywhere in the document
    /// (a local pointer with no target, or another file or URL): what uses
    /// it is compared as if the part were absent.
    fn references(&mut self, root: &Value, value: &Value, pointer: &str) {
        match value {
            Value::Object(map) => {
                if let Some(Value::String(r)) = map.get("$ref") {
                    match r.strip_prefix('#') {
                        Some(local) if root.pointer(local).is_some() => {}
                        Some(_) => self.warn(
                            pointer,
                            format!("`$ref: {r}` points at nothing in this document; ignored"),
                        ),
                        None => self.warn(
                            pointer,
                            format!("`$ref: {r}` points outside this document and is not followed"),
                        ),
                    }
                }
                for (k, v) in map {
                    if k == "example" || k == "examples" || k == "default" || k == "enum" {
                        continue; // values, not schema structure
                    }
                    self.references(root, v, &format!("{pointer}/{}", escape(k)));
                }
            }
            Value::Array(list) => {
                for (i, v) in list.iter().enumerate() {
                    self.references(root, v, &format!("{pointer}/{i}"));
                }
            }
            _ => {}
        }
    }

    // ------------------------------------------------------------ YAML → JSON

    fn json_of(&mut self, yaml: serde_norway::Value, pointer: &str) -> Value {
        use serde_norway::Value as Y;
        match yaml {
            Y::Null => Value::Null,
            Y::Bool(b) => Value::Bool(b),
            Y::Number(n) => {
                if let Some(i) = n.as_i64() {
                    Value::from(i)
                } else if let Some(u) = n.as_u64() {
                    Value::from(u)
                } else {
                    match n.as_f64().and_then(serde_json::Number::from_f64) {
                        Some(f) => Value::Number(f),
                        None => {
                            self.warn(pointer, format!("number {n} is not finite; read as null"));
                            Value::Null
                        }
                    }
                }
            }
            Y::String(s) => Value::String(s),
            Y::Sequence(items) => Value::Array(
                items
                    .into_iter()
                    .enumerate()
                    .map(|(i, v)| self.json_of(v, &format!("{pointer}/{i}")))
                    .collect(),
            ),
            Y::Mapping(map) => {
                let mut out = Map::new();
                for (k, v) in map {
                    let key = key_string(&k);
                    let child = format!("{pointer}/{}", escape(&key));
                    let value = self.json_of(v, &child);
                    out.insert(key, value);
                }
                Value::Object(out)
            }
            Y::Tagged(tagged) => self.json_of(tagged.value, pointer),
        }
    }

    // --------------------------------------------------------------- helpers

    /// Keep `value` if it reads as `T`; else repair it with `fix` and try
    /// again; else drop keywords one by one (those in `keep` are never
    /// dropped) until it reads. Returns whether it now reads.
    fn repair<T: DeserializeOwned>(
        &mut self,
        value: &mut Value,
        pointer: &str,
        keep: &[&str],
        fix: impl FnOnce(&mut Self, &mut Value),
    ) -> bool {
        if try_as::<T>(value).is_ok() {
            return true;
        }
        fix(self, value);
        if try_as::<T>(value).is_ok() {
            return true;
        }
        let Value::Object(map) = value else {
            return false;
        };
        let keys: Vec<String> = map.keys().cloned().collect();
        for key in keys {
            if keep.contains(&key.as_str()) {
                continue;
            }
            let mut without = map.clone();
            let Some(removed) = without.remove(&key) else {
                continue;
            };
            let error = try_as::<T>(&Value::Object(map.clone()))
                .err()
                .map(|e| e.to_string())
                .unwrap_or_default();
            if try_as::<T>(&Value::Object(without.clone())).is_ok() {
                self.warn(
                    &format!("{pointer}/{}", escape(&key)),
                    format!(
                        "`{key}: {}` cannot be read ({error}); ignored",
                        short(&removed)
                    ),
                );
                *map = without;
                return true;
            }
        }
        false
    }

    /// Repair each entry of the map at `key` of `parent` with `fix_entry`;
    /// entries that still cannot be read are dropped with a warning.
    fn map_entries(
        &mut self,
        parent: &mut Value,
        key: &str,
        pointer: &str,
        what: &str,
        mut fix_entry: impl FnMut(&mut Self, &mut Value, &str) -> bool,
    ) {
        let Some(obj) = parent.as_object_mut() else {
            return;
        };
        let child_pointer = format!("{pointer}/{}", escape(key));
        match obj.get_mut(key) {
            None => {}
            Some(Value::Null) => {
                obj.remove(key);
            }
            Some(Value::Object(map)) => {
                let names: Vec<String> = map.keys().cloned().collect();
                for name in names {
                    let entry_pointer = format!("{child_pointer}/{}", escape(&name));
                    let Some(entry) = map.get_mut(&name) else {
                        continue;
                    };
                    if !fix_entry(self, entry, &entry_pointer) {
                        let error = short(entry);
                        if let Some(written) = map.remove(&name) {
                            self.left_out.insert(entry_pointer.clone(), written);
                        }
                        self.warn(
                            &entry_pointer,
                            format!("{what} `{name}` cannot be read ({error}); left out"),
                        );
                    }
                }
            }
            Some(other) => {
                let shown = short(other);
                obj.remove(key);
                self.warn(
                    &child_pointer,
                    format!("`{key}` is {shown}, not a mapping; left out"),
                );
            }
        }
    }

    /// Like [`Reader::map_entries`] for a list at `key`.
    fn list_entries(
        &mut self,
        parent: &mut Value,
        key: &str,
        pointer: &str,
        what: &str,
        mut fix_entry: impl FnMut(&mut Self, &mut Value, &str) -> bool,
    ) {
        let Some(obj) = parent.as_object_mut() else {
            return;
        };
        let child_pointer = format!("{pointer}/{}", escape(key));
        match obj.get_mut(key) {
            None => {}
            Some(Value::Null) => {
                obj.remove(key);
            }
            Some(Value::Array(list)) => {
                let mut kept = Vec::new();
                for (i, mut entry) in std::mem::take(list).into_iter().enumerate() {
                    let entry_pointer = format!("{child_pointer}/{i}");
                    if fix_entry(self, &mut entry, &entry_pointer) {
                        kept.push(entry);
                    } else {
                        self.warn(
                            &entry_pointer,
                            format!("{what} cannot be read ({}); left out", short(&entry)),
                        );
                    }
                }
                *list = kept;
            }
            Some(other) => {
                let shown = short(other);
                obj.remove(key);
                self.warn(
                    &child_pointer,
                    format!("`{key}` is {shown}, not a list; left out"),
                );
            }
        }
    }
}

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

use std::collections::BTreeMap;
use std::fmt;

use openapiv3::{
    Encoding, Example, Header, Link, MediaType, OpenAPI, Operation, Parameter, PathItem,
    RequestBody, Response, Schema, SecurityRequirement, SecurityScheme,
};
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use super::{Document, Warning, escape};

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

    // --------------------------------------------------------------- objects

    fn document(&mut self, doc: &mut Value) {
        let Some(root) = doc.as_object_mut() else {
            return;
        };
        let info = root
            .entry("info")
            .or_insert_with(|| Value::Object(Map::new()));
        if !info.is_object() {
            *info = Value::Object(Map::new());
        }
        for key in ["title", "version"] {
            if let Some(info) = info.as_object_mut() {
                match info.get(key) {
                    Some(Value::String(_)) => {}
                    Some(Value::Null) | None => {
                        info.insert(key.into(), Value::from(""));
                    }
                    Some(other) => {
                        let text = other.to_string();
                        info.insert(key.into(), Value::String(text));
                    }
                }
            }
        }
        if !matches!(root.get("paths"), Some(Value::Object(_))) {
            root.insert("paths".into(), Value::Object(Map::new()));
        }
        self.map_entries(doc, "paths", "#", "path item", |r, item, ptr| {
            r.path_item(item, ptr)
        });
        if let Some(components) = doc.get_mut("components") {
            if components.is_null() {
                if let Some(root) = doc.as_object_mut() {
                    root.remove("components");
                }
            } else {
                self.components(components, "#/components");
            }
        }
        self.list_entries(doc, "security", "#", "security requirement", |_, v, _| {
            try_as::<SecurityRequirement>(v).is_ok()
        });
        // Anything else at the top level (tags, servers, externalDocs) that
        // still does not read is dropped.
        let root_keep = ["openapi", "info", "paths", "components"];
        if try_as::<OpenAPI>(doc).is_err() {
            self.repair::<OpenAPI>(doc, "#", &root_keep, |_, _| {});
        }
    }

    fn path_item(&mut self, item: &mut Value, pointer: &str) -> bool {
        if item.is_null() {
            *item = Value::Object(Map::new());
        }
        if item.get("$ref").is_some() {
            // Path item references are not followed: the caller leaves the
            // path out with a warning showing the reference.
            return false;
        }
        self.repair::<PathItem>(item, pointer, &super::METHODS, |r, item| {
            for method in super::METHODS {
                let op_pointer = format!("{pointer}/{method}");
                if let Some(op) = item.get_mut(method)
                    && !r.operation(op, &op_pointer)
                {
                    let shown = short(op);
                    if let Some(map) = item.as_object_mut() {
                        map.remove(method);
                    }
                    r.warn(
                        &op_pointer,
                        format!("operation cannot be read ({shown}); left out"),
                    );
                }
            }
            r.list_entries(item, "parameters", pointer, "parameter", |r, p, ptr| {
                r.parameter(p, ptr)
            });
        })
    }

    fn operation(&mut self, op: &mut Value, pointer: &str) -> bool {
        if op.is_null() {
            *op = Value::Object(Map::new());
        }
        self.repair::<Operation>(op, pointer, &["responses"], |r, op| {
            let Some(map) = op.as_object_mut() else {
                return;
            };
            if !matches!(map.get("responses"), Some(Value::Object(_))) {
                map.insert("responses".into(), Value::Object(Map::new()));
            }
            if let Some(Value::Array(tags)) = map.get_mut("tags") {
                for tag in tags.iter_mut() {
                    if !tag.is_string() {
                        *tag = Value::String(tag.to_string());
                    }
                }
            }
            r.list_entries(op, "parameters", pointer, "parameter", |r, p, ptr| {
                r.parameter(p, ptr)
            });
            if let Some(body) = op.get_mut("requestBody") {
                let body_pointer = format!("{pointer}/requestBody");
                if !r.request_body(body, &body_pointer) {
                    let shown = short(body);
                    if let Some(map) = op.as_object_mut() {
                        map.remove("requestBody");
                    }
                    r.warn(
                        &body_pointer,
                        format!("request body cannot be read ({shown}); left out"),
                    );
                }
            }
            r.map_entries(op, "responses", pointer, "response", |r, resp, ptr| {
                r.response(resp, ptr)
            });
            r.map_entries(op, "callbacks", pointer, "callback", |r, cb, ptr| {
                r.callback(cb, ptr)
            });
        })
    }

    fn callback(&mut self, cb: &mut Value, pointer: &str) -> bool {
        if cb.get("$ref").is_some() {
            return true;
        }
        let Some(map) = cb.as_object_mut() else {
            return false;
        };
        let expressions: Vec<String> = map.keys().cloned().collect();
        for expression in expressions {
            let item_pointer = format!("{pointer}/{}", escape(&expression));
            if let Some(item) = map.get_mut(&expression)
                && !self.path_item(item, &item_pointer)
            {
                map.remove(&expression);
            }
        }
        true
    }

    fn parameter(&mut self, p: &mut Value, pointer: &str) -> bool {
        if p.get("$ref").is_some() {
            return true;
        }
        self.repair::<Parameter>(p, pointer, &["name", "in", "schema", "content"], |r, p| {
            let Some(map) = p.as_object_mut() else {
                return;
            };
            if !map.contains_key("schema") && !map.contains_key("content") {
                map.insert("schema".into(), Value::Object(Map::new()));
            }
            if map.get("in").and_then(Value::as_str) == Some("path")
                && !map.contains_key("required")
            {
                map.insert("required".into(), Value::Bool(true));
            }
            if let Some(Value::Number(n)) = map.get("name") {
                let name = n.to_string();
                map.insert("name".into(), Value::String(name));
            }
            if let Some(schema) = map.get_mut("schema") {
                r.schema(schema, &format!("{pointer}/schema"));
            }
            r.content(p, pointer);
        })
    }

    fn request_body(&mut self, body: &mut Value, pointer: &str) -> bool {
        if body.get("$ref").is_some() {
            return true;
        }
        if body.is_null() {
            *body = Value::Object(Map::new());
        }
        self.repair::<RequestBody>(body, pointer, &["content"], |r, body| {
            if let Some(map) = body.as_object_mut()
                && !matches!(map.get("content"), Some(Value::Object(_)))
            {
                map.insert("content".into(), Value::Object(Map::new()));
            }
            r.content(body, pointer);
        })
    }

    fn response(&mut self, resp: &mut Value, pointer: &str) -> bool {
        if resp.get("$ref").is_some() {
            return true;
        }
        if resp.is_null() {
            *resp = Value::Object(Map::new());
        }
        self.repair::<Response>(resp, pointer, &["description"], |r, resp| {
            let Some(map) = resp.as_object_mut() else {
                return;
            };
            match map.get("description") {
                Some(Value::String(_)) => {}
                Some(Value::Null) | None => {
                    map.insert("description".into(), Value::from(""));
                }
                Some(other) => {
                    let text = other.to_string();
                    map.insert("description".into(), Value::String(text));
                }
            }
            r.content(resp, pointer);
            r.map_entries(resp, "headers", pointer, "header", |r, h, ptr| {
                r.header(h, ptr)
            });
            r.map_entries(resp, "links", pointer, "link", |_, l, _| {
                l.get("$ref").is_some() || try_as::<Link>(l).is_ok()
            });
        })
    }

    fn header(&mut self, h: &mut Value, pointer: &str) -> bool {
        if h.get("$ref").is_some() {
            return true;
        }
        if h.is_null() {
            *h = Value::Object(Map::new());
        }
        self.repair::<Header>(h, pointer, &["schema", "content"], |r, h| {
            let Some(map) = h.as_object_mut() else {
                return;
            };
            // A header object has no name or location of its own.
            map.remove("name");
            map.remove("in");
            if !map.contains_key("schema") && !map.contains_key("content") {
                map.insert("schema".into(), Value::Object(Map::new()));
            }
            if let Some(schema) = map.get_mut("schema") {
                r.schema(schema, &format!("{pointer}/schema"));
            }
            r.content(h, pointer);
        })
    }

    /// The `content` map of a parameter, header, body or response.
    fn content(&mut self, holder: &mut Value, pointer: &str) {
        self.map_entries(holder, "content", pointer, "media type", |r, media, ptr| {
            r.media_type(media, ptr)
        });
    }

    fn media_type(&mut self, media: &mut Value, pointer: &str) -> bool {
        if media.is_null() {
            *media = Value::Object(Map::new());
        }
        self.repair::<MediaType>(media, pointer, &["schema"], |r, media| {
            if let Some(schema) = media.get_mut("schema") {
                r.schema(schema, &format!("{pointer}/schema"));
            }
            r.map_entries(media, "encoding", pointer, "encoding", |r, e, ptr| {
                r.repair::<Encoding>(e, ptr, &[], |r, e| {
                    r.map_entries(e, "headers", ptr, "header", |r, h, p| r.header(h, p));
                })
            });
            r.map_entries(media, "examples", pointer, "example", |_, x, _| {
                x.get("$ref").is_some() || try_as::<Example>(x).is_ok()
            });
        })
    }

    fn schema(&mut self, schema: &mut Value, pointer: &str) {
        match schema {
            Value::Bool(true) | Value::Null => {
                *schema = Value::Object(Map::new());
                return;
            }
            Value::Bool(false) => {
                let mut not = Map::new();
                not.insert("not".into(), Value::Object(Map::new()));
                *schema = Value::Object(not);
                return;
            }
            _ => {}
        }
        if schema.get("$ref").is_some() {
            return;
        }
        let ok = self.repair::<Schema>(schema, pointer, SCHEMA_CHILD_KEYS, |r, schema| {
            let Some(map) = schema.as_object_mut() else {
                return;
            };
            translate_3_1(map);
            if let Some(Value::Object(props)) = map.get_mut("properties") {
                let names: Vec<String> = props.keys().cloned().collect();
                for name in names {
                    if let Some(sub) = props.get_mut(&name) {
                        r.schema(sub, &format!("{pointer}/properties/{}", escape(&name)));
                    }
                }
            }
            for key in ["items", "not"] {
                if let Some(sub) = map.get_mut(key) {
                    r.schema(sub, &format!("{pointer}/{key}"));
                }
            }
            if let Some(sub) = map.get_mut("additionalProperties")
                && !sub.is_boolean()
            {
                r.schema(sub, &format!("{pointer}/additionalProperties"));
            }
            for key in ["allOf", "oneOf", "anyOf"] {
                if let Some(Value::Array(list)) = map.get_mut(key) {
                    for (i, sub) in list.iter_mut().enumerate() {
                        r.schema(sub, &format!("{pointer}/{key}/{i}"));
                    }
                }
            }
        });
        if !ok {
            let shown = short(schema);
            self.warn(
                pointer,
                format!("schema cannot be read ({shown}); read as any value"),
            );
            *schema = Value::Object(Map::new());
        }
    }

    fn components(&mut self, components: &mut Value, pointer: &str) {
        if !components.is_object() {
            let shown = short(components);
            self.warn(
                pointer,
                format!("components is {shown}, not a mapping; left out"),
            );
            *components = Value::Object(Map::new());
            return;
        }
        self.map_entries(components, "schemas", pointer, "schema", |r, s, ptr| {
            r.schema(s, ptr);
            true
        });
        self.map_entries(components, "responses", pointer, "response", |r, x, ptr| {
            r.response(x, ptr)
        });
        self.map_entries(
            components,
            "parameters",
            pointer,
            "parameter",
            |r, x, ptr| r.parameter(x, ptr),
        );
        self.map_entries(
            components,
            "requestBodies",
            pointer,
            "request body",
            |r, x, ptr| r.request_body(x, ptr),
        );
        self.map_entries(components, "headers", pointer, "header", |r, x, ptr| {
            r.header(x, ptr)
        });
        self.map_entries(components, "callbacks", pointer, "callback", |r, x, ptr| {
            r.callback(x, ptr)
        });
        self.map_entries(
            components,
            "securitySchemes",
            pointer,
            "security scheme",
            |_, x, _| x.get("$ref").is_some() || try_as::<SecurityScheme>(x).is_ok(),
        );
        self.map_entries(components, "examples", pointer, "example", |_, x, _| {
            x.get("$ref").is_some() || try_as::<Example>(x).is_ok()
        });
        self.map_entries(components, "links", pointer, "link", |_, x, _| {
            x.get("$ref").is_some() || try_as::<Link>(x).is_ok()
        });
    }
}

/// Translate the OpenAPI 3.1 spellings with a 3.0 meaning in every schema of
/// a document (`in_schema`: `value` is a schema): schemas are the values of
/// `schema` keys and of `components/schemas`, and their subschemas.
/// Examples, defaults and enum values are data and left alone.
fn spellings_3_1(value: &mut Value, in_schema: bool) {
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
fn translate_3_1(map: &mut Map<String, Value>) {
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

/// A YAML mapping key as a string: `200` → `"200"`, `true` → `"true"`.
fn key_string(k: &serde_norway::Value) -> String {
    use serde_norway::Value as Y;
    match k {
        Y::String(s) => s.clone(),
        Y::Number(n) => n.to_string(),
        Y::Bool(b) => b.to_string(),
        Y::Null => "null".to_owned(),
        Y::Tagged(t) => key_string(&t.value),
        other => yaml_scalar_text(other),
    }
}

/// `json` as YAML, with mapping keys in the order of `original` (the text
/// as read) where they were there, keys added by the reader last.
fn ordered(json: &Value, original: Option<&serde_norway::Value>) -> serde_norway::Value {
    use serde_norway::Value as Y;
    let original = match original {
        Some(Y::Tagged(t)) => Some(&t.value),
        other => other,
    };
    match json {
        Value::Null => Y::Null,
        Value::Bool(b) => Y::Bool(*b),
        Value::Number(n) => {
            if let Some(i) = n.as_i64() {
                Y::Number(i.into())
            } else if let Some(u) = n.as_u64() {
                Y::Number(u.into())
            } else {
                Y::Number(n.as_f64().unwrap_or_default().into())
            }
        }
        Value::String(s) => Y::String(s.clone()),
        Value::Array(list) => {
            let originals = original.and_then(Y::as_sequence);
            Y::Sequence(
                list.iter()
                    .enumerate()
                    .map(|(i, v)| ordered(v, originals.and_then(|o| o.get(i))))
                    .collect(),
            )
        }
        Value::Object(map) => {
            let mut out = serde_norway::Mapping::new();
            if let Some(originals) = original.and_then(Y::as_mapping) {
                for (k, v) in originals {
                    let key = key_string(k);
                    if let Some(value) = map.get(&key)
                        && !out.contains_key(key.as_str())
                    {
                        out.insert(Y::String(key), ordered(value, Some(v)));
                    }
                }
            }
            for (key, value) in map {
                if !out.contains_key(key.as_str()) {
                    out.insert(Y::String(key.clone()), ordered(value, None));
                }
            }
            Y::Mapping(out)
        }
    }
}

/// A YAML scalar as text (for unusual mapping keys).
fn yaml_scalar_text(v: &serde_norway::Value) -> String {
    serde_norway::to_string(v)
        .map(|s| s.trim().to_owned())
        .unwrap_or_default()
}

/// A value shown in a warning, cut to 60 characters.
fn short(v: &Value) -> String {
    let text = match v {
        Value::Null => "null".to_owned(),
        Value::Object(map) if map.is_empty() => "{}".to_owned(),
        other => other.to_string(),
    };
    if text.chars().count() > 60 {
        let cut: String = text.chars().take(57).collect();
        format!("{cut}...")
    } else {
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn warnings(doc: &Document) -> Vec<String> {
        doc.warnings.iter().map(ToString::to_string).collect()
    }

    #[test]
    fn anchors_aliases_and_merge_keys_are_resolved() {
        // The specs share schemas through anchors (`&id`), aliases (`*id`) and merge keys
        // (`<<: *id`): the YAML crate must resolve all three.
        let doc = read(
            r##"
openapi: 3.0.3
info: {title: t, version: '1'}
paths: {}
components:
  schemas:
    Base: &base {type: string, format: int64, description: shared}
    Alias: *base
    Merged:
      <<: *base
      description: own
"##,
        )
        .unwrap();
        let schemas = &doc.json["components"]["schemas"];
        assert_eq!(schemas["Alias"], schemas["Base"]);
        assert_eq!(schemas["Merged"]["format"], "int64");
        assert_eq!(schemas["Merged"]["description"], "own");
        assert!(schemas["Merged"].get("<<").is_none(), "{schemas}");
    }

    #[test]
    fn a_valid_document_reads_without_warnings() {
        let doc = read("openapi: 3.0.3\ninfo: {title: t, version: '1'}\npaths: {}\n").unwrap();
        assert!(doc.warnings.is_empty());
        assert_eq!(doc.spec.info.title, "t");
    }

    #[test]
    fn ordinary_omissions_are_defaulted_without_warnings() {
        let doc = read(
            r##"
openapi: 3.0.0
info: {title: t, version: '1'}
paths:
  /a/{id}:
    get:
      parameters:
        - {name: id, in: path}
      responses:
        200:
          content:
          headers:
        404: {description: gone, content: {application/json: }}
    post: {}
components:
  responses:
    Plain: {}
  schemas:
    WithExamples:
      type: object
      example: {0: zero, 1: one}
"##,
        )
        .unwrap();
        assert_eq!(warnings(&doc), Vec::<String>::new());
        let ops = doc.operations();
        assert_eq!(ops.len(), 2);
        let params = doc.parameters(&ops[0]);
        assert_eq!(params[0].param.parameter_data_ref().name, "id");
        assert!(params[0].param.parameter_data_ref().required);
        let responses = &ops[0].operation.responses.responses;
        assert_eq!(responses.len(), 2, "{responses:?}");
        assert!(ops[1].operation.responses.responses.is_empty());
        assert_eq!(
            doc.json
                .pointer("/components/schemas/WithExamples/example/0"),
            Some(&Value::from("zero"))
        );
    }

    #[test]
    fn unreadable_parts_are_dropped_with_their_pointer() {
        let doc = read(
            r##"
openapi: 3.0.3
info: {title: t, version: '1'}
paths:
  /a:
    get:
      parameters:
        - {name: q, in: body, schema: {type: string}}
        - {name: ok, in: query, schema: {type: integer, minimum: low}}
      responses:
        "200": {description: ok}
  /b: {$ref: "#/paths/~1a"}
components:
  securitySchemes:
    broken: {type: magic}
"##,
        )
        .unwrap();
        assert_eq!(
            warnings(&doc),
            [
                "#/paths/~1a/get/parameters/0: parameter cannot be read ({\"in\":\"body\",\"name\":\"q\",\"schema\":{\"type\":\"string\"}}); left out",
                "#/paths/~1a/get/parameters/1/schema/minimum: `minimum: \"low\"` cannot be read (invalid type: string \"low\", expected a JSON number); ignored",
                "#/paths/~1b: path item `/b` cannot be read ({\"$ref\":\"#/paths/~1a\"}); left out",
                "#/components/securitySchemes/broken: security scheme `broken` cannot be read ({\"type\":\"magic\"}); left out",
            ]
        );
        let ops = doc.operations();
        assert_eq!(ops.len(), 1);
        assert_eq!(doc.parameters(&ops[0]).len(), 1);
    }

    #[test]
    fn swagger_2_isms_and_broken_references_are_named() {
        let doc = read(
            r##"
openapi: 3.0.3
info: {title: t, version: '1'}
paths:
  /a:
    get:
      responses:
        "200":
          description: ok
          content:
            application/json:
              schema:
                type: object
                properties:
                  id: {type: string, required: true}
                  owner: {$ref: "#/components/schemas/Missing"}
                  other: {$ref: "other.yaml#/Thing"}
"##,
        )
        .unwrap();
        assert_eq!(
            warnings(&doc),
            [
                "#/paths/~1a/get/responses/200/content/application~1json/schema/properties/id/required: `required: true` cannot be read (invalid type: boolean `true`, expected a sequence); ignored",
                "#/paths/~1a/get/responses/200/content/application~1json/schema/properties/other: `$ref: other.yaml#/Thing` points outside this document and is not followed",
                "#/paths/~1a/get/responses/200/content/application~1json/schema/properties/owner: `$ref: #/components/schemas/Missing` points at nothing in this document; ignored",
            ]
        );
        assert_eq!(doc.operations().len(), 1);
    }

    #[test]
    fn oversized_documents_are_refused() {
        let big = " ".repeat(MAX_DOCUMENT_BYTES + 1);
        assert!(read(&big).unwrap_err().0.contains("bytes"));
    }

    #[test]
    fn a_3_1_null_member_becomes_nullable() {
        let doc = read(
            r##"
openapi: 3.1.0
info: {title: t, version: '1'}
paths:
  /a:
    get:
      parameters:
        - name: s
          in: query
          schema:
            oneOf: [{type: "null"}, {type: string, enum: [x]}]
      responses: {}
"##,
        )
        .unwrap();
        let schema = doc
            .json
            .pointer("/paths/~1a/get/parameters/0/schema")
            .unwrap();
        assert_eq!(schema["nullable"], true);
        assert_eq!(schema["oneOf"].as_array().unwrap().len(), 1);
    }

    #[test]
    fn openapi_3_1_spellings_are_translated() {
        let doc = read(
            r##"
openapi: 3.0.3
info: {title: t, version: '1'}
paths: {}
components:
  schemas:
    N: {type: [integer, "null"], exclusiveMinimum: 0}
    C: {const: fixed}
"##,
        )
        .unwrap();
        assert_eq!(warnings(&doc), Vec::<String>::new());
        let n = doc.json.pointer("/components/schemas/N").unwrap();
        assert_eq!(n["type"], "integer");
        assert_eq!(n["nullable"], true);
        assert_eq!(n["minimum"], 0);
        assert_eq!(n["exclusiveMinimum"], true);
        assert_eq!(
            doc.json.pointer("/components/schemas/C/enum/0"),
            Some(&Value::from("fixed"))
        );
    }

    #[test]
    fn only_non_documents_are_refused() {
        assert!(
            read("just: [unclosed")
                .unwrap_err()
                .0
                .contains("not a YAML")
        );
        assert!(read("- a\n- b\n").unwrap_err().0.contains("not a mapping"));
        assert!(
            read("swagger: '2.0'\n")
                .unwrap_err()
                .0
                .contains("Swagger 2.0")
        );
        let doc = read("info: {title: t}\n").unwrap();
        assert_eq!(
            warnings(&doc),
            ["#/openapi: no openapi version; read as 3.0.3"]
        );
    }
}

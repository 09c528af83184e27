//! Repairing a document part by part: each kind of object its own method, from the root down.

use openapiv3::{
    Encoding, Example, Header, Link, MediaType, OpenAPI, Operation, Parameter, PathItem,
    RequestBody, Response, Schema, SecurityRequirement, SecurityScheme,
};
use serde_json::{Map, Value};

use super::version_3_1::translate_3_1;
use super::yaml::short;
use super::{Reader, SCHEMA_CHILD_KEYS, try_as};
use crate::openapi::document::{METHODS, escape};
impl Reader {
    pub(super) fn document(&mut self, doc: &mut Value) {
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
        self.repair::<PathItem>(item, pointer, &METHODS, |r, item| {
            for method in METHODS {
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

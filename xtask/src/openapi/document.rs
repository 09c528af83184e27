//! The model itself: a read [`Document`] (typed and as JSON), its operations
//! ([`Op`], [`Param`]) and the helpers that name their parts ([`escape`],
//! [`route_of`], [`METHODS`]). Reading is `read/`'s job, resolving `$ref`s
//! `resolve.rs`'s.

use std::collections::BTreeMap;
use std::fmt;

use openapiv3::{OpenAPI, Operation, Parameter, PathItem, ReferenceOr};
use serde_json::Value;

/// The HTTP methods of a path item, in the order the OpenAPI specification
/// lists them (and [`PathItem::iter`] yields them).
pub const METHODS: [&str; 8] = [
    "get", "put", "post", "delete", "options", "head", "patch", "trace",
];

/// Escape one JSON pointer segment (`~` → `~0`, `/` → `~1`).
pub fn escape(segment: &str) -> String {
    segment.replace('~', "~0").replace('/', "~1")
}

/// A part of a document the reader could not understand and left out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Warning {
    /// JSON pointer of the part, e.g. `#/paths/~1things/get/responses/20X`.
    pub pointer: String,
    /// What was wrong and what the reader did instead.
    pub message: String,
}

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.pointer, self.message)
    }
}

/// A read OpenAPI document: the typed form, the (normalised, repaired) JSON
/// it was built from, and what the reader had to leave out.
#[derive(Debug, Clone, Default)]
pub struct Document {
    /// The typed document.
    pub spec: OpenAPI,
    /// The JSON the typed document was read from: YAML keys as strings,
    /// unreadable parts removed. Pointers in findings and changes point into
    /// it (and so into the original file, for every part that was kept).
    pub json: Value,
    /// What could not be understood, with where it was.
    pub warnings: Vec<Warning>,
    /// The entries of named maps (components, responses, headers, …) that
    /// were left out, as written, by JSON pointer: a comparison can still
    /// tell whether an unreadable entry changed.
    pub left_out: BTreeMap<String, Value>,
}

/// One operation of a document, with where it lives.
#[derive(Debug, Clone)]
pub struct Op<'a> {
    /// The path template, e.g. `/things/{id}`.
    pub path: &'a str,
    /// The lower-case HTTP method (one of [`METHODS`]).
    pub method: &'static str,
    /// The operation.
    pub operation: &'a Operation,
    /// The path item holding it (for path-level parameters).
    pub item: &'a PathItem,
    /// JSON pointer of the operation, e.g. `#/paths/~1things~1{id}/get`.
    pub pointer: String,
}

impl Op<'_> {
    /// `GET /things/{id}`.
    pub fn label(&self) -> String {
        format!("{} {}", self.method.to_uppercase(), self.path)
    }

    /// The operationId, or `METHOD path` when it has none.
    pub fn id(&self) -> String {
        self.operation
            .operation_id
            .clone()
            .unwrap_or_else(|| self.label())
    }

    /// The path with parameter names erased: `/a/{}/b`.
    pub fn route(&self) -> String {
        route_of(self.path)
    }
}

/// A path template with parameter names erased: `/a/{id}/b` → `/a/{}/b`.
pub fn route_of(path: &str) -> String {
    let mut out = String::new();
    let mut in_param = false;
    for c in path.chars() {
        match c {
            '{' => {
                in_param = true;
                out.push_str("{}");
            }
            '}' => in_param = false,
            _ if in_param => {}
            _ => out.push(c),
        }
    }
    out
}

/// A parameter of an operation (path-item level or operation level),
/// resolved.
#[derive(Debug, Clone)]
pub struct Param<'a> {
    /// The parameter.
    pub param: &'a Parameter,
    /// `query`, `header`, `path` or `cookie`.
    pub location: &'static str,
    /// Pointer of the entry in the operation's or path item's list.
    pub pointer: String,
    /// The component it came from through a `$ref`, if any.
    pub component: Option<&'a str>,
}

/// `query`, `header`, `path` or `cookie`.
pub fn location_of(p: &Parameter) -> &'static str {
    match p {
        Parameter::Query { .. } => "query",
        Parameter::Header { .. } => "header",
        Parameter::Path { .. } => "path",
        Parameter::Cookie { .. } => "cookie",
    }
}

impl Document {
    /// An empty document (a spec that does not exist on one side).
    pub fn empty() -> Document {
        Document {
            json: serde_json::to_value(OpenAPI::default()).unwrap_or(Value::Null),
            ..Document::default()
        }
    }

    /// Every operation in document order (paths as written, methods in
    /// [`METHODS`] order). Path items that are `$ref`s are skipped (the
    /// reader warns about them).
    pub fn operations(&self) -> Vec<Op<'_>> {
        operations_in(
            self.spec
                .paths
                .paths
                .iter()
                .filter_map(|(path, item)| match item {
                    ReferenceOr::Item(item) => Some((path, item)),
                    ReferenceOr::Reference { .. } => None,
                }),
            "#/paths",
        )
    }

    /// The parameters of `op`: path-item level first, then operation level;
    /// an operation-level parameter replaces a path-level one with the same
    /// location and name. Unresolvable `$ref`s are left out.
    pub fn parameters<'a>(&'a self, op: &Op<'a>) -> Vec<Param<'a>> {
        let path_pointer = op
            .pointer
            .rsplit_once('/')
            .map_or(String::new(), |(p, _)| p.to_owned());
        let mut out: Vec<Param<'a>> = Vec::new();
        let lists = [
            (&op.item.parameters, path_pointer),
            (&op.operation.parameters, op.pointer.clone()),
        ];
        for (list, base) in lists {
            for (i, p) in list.iter().enumerate() {
                let Some(resolved) = self.resolve(p) else {
                    continue;
                };
                let param = resolved.item;
                let location = location_of(param);
                let name = &param.parameter_data_ref().name;
                out.retain(|q| {
                    !(q.location == location
                        && same_name(location, &q.param.parameter_data_ref().name, name))
                });
                out.push(Param {
                    param,
                    location,
                    pointer: format!("{base}/parameters/{i}"),
                    component: resolved.name,
                });
            }
        }
        out
    }
}

/// Whether two parameter names in `location` name the same parameter:
/// header names are case-insensitive (RFC 9110), the others are not.
pub fn same_name(location: &str, a: &str, b: &str) -> bool {
    if location == "header" {
        a.eq_ignore_ascii_case(b)
    } else {
        a == b
    }
}

/// The operations of a map of path items (the document's `paths`, or a
/// callback's expressions), under `base` (a JSON pointer).
pub fn operations_in<'a>(
    paths: impl IntoIterator<Item = (&'a String, &'a PathItem)>,
    base: &str,
) -> Vec<Op<'a>> {
    let mut out = Vec::new();
    for (path, item) in paths {
        out.extend(path_item_operations(
            path,
            item,
            &format!("{base}/{}", escape(path)),
        ));
    }
    out
}

/// The operations of one path item at `pointer`.
pub fn path_item_operations<'a>(path: &'a str, item: &'a PathItem, pointer: &str) -> Vec<Op<'a>> {
    let slots = [
        &item.get,
        &item.put,
        &item.post,
        &item.delete,
        &item.options,
        &item.head,
        &item.patch,
        &item.trace,
    ];
    METHODS
        .iter()
        .zip(slots)
        .filter_map(|(method, slot)| {
            slot.as_ref().map(|operation| Op {
                path,
                method,
                operation,
                item,
                pointer: format!("{pointer}/{method}"),
            })
        })
        .collect()
}

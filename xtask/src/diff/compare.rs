//! Compare two OpenAPI 3.0 documents (parsed with `openapiv3`) and list the
//! changes, each tagged with a [`Rule`] from [`super::rules`] and the
//! direction(s) it was found in.
//!
//! What is walked:
//!
//! * operations, paired by operationId, then by method and path (path
//!   parameter names ignored); their deprecation, effective security
//!   requirements, parameters (path-item and operation level, `$ref`s to
//!   `components/parameters` resolved), request body (`components/requestBodies`
//!   resolved) and responses (`components/responses` resolved; a status
//!   missing on one side is compared with the range or `default` that covers
//!   it there);
//! * schemas, from each parameter and body: `$ref`s to `components/schemas`
//!   are followed (chains too) and single-member `allOf`/`oneOf`/`anyOf`
//!   wrappers are unwrapped, their `nullable`, `deprecated` and `default`
//!   counting for the value they wrap (the video spec's `nullable: true` +
//!   `allOf: [$ref]`). A component is compared once per direction (this also
//!   stops recursive schemas); its changes are reported against the component,
//!   not against every operation that uses it;
//! * component schemas added, removed or renamed (same shape, new name), and
//!   unused ones (compared as if used both ways);
//! * security scheme definitions.
//!
//! Left out on purpose: descriptions, summaries, examples, titles, tags,
//! servers, response headers, links, callbacks, `readOnly`/`writeOnly`,
//! parameter `style`/`explode`. None of them changes the generated client's
//! types or methods (progenitor ignores them) except descriptions, which only
//! change doc comments.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use openapiv3::{
    AdditionalProperties, Components, Content, MediaType, OpenAPI, Operation, Parameter,
    ParameterSchemaOrContent, PathItem, ReferenceOr, RequestBody, Response, Schema, SchemaKind,
    SecurityRequirement, StatusCode, Type,
};
use serde_json::Value;

use super::rules::{self as r, Class, Direction, Rule};
use crate::lint::escape;

/// What a change is about: the unit a reviewer reads changes by.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Subject {
    /// An operation (named as in the new spec, or the base when removed).
    Operation {
        /// The operationId (or `METHOD path` when it has none).
        id: String,
        /// Upper-case HTTP method.
        method: String,
        /// Path template.
        path: String,
    },
    /// A component schema.
    Schema(String),
    /// A security scheme.
    SecurityScheme(String),
}

impl fmt::Display for Subject {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Subject::Operation { id, method, path } => {
                write!(f, "operation `{id}` ({method} {path})")
            }
            Subject::Schema(name) => write!(f, "schema `{name}`"),
            Subject::SecurityScheme(name) => write!(f, "security scheme `{name}`"),
        }
    }
}

/// One change between the two documents.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    /// What the change is about.
    pub subject: Subject,
    /// JSON pointer into the new spec (into the base for removals), e.g.
    /// `#/components/schemas/Conversion/properties/agencyId`.
    pub location: String,
    /// The kind of change, which decides its class.
    pub rule: &'static Rule,
    /// What changed, without the direction.
    pub detail: String,
    /// Where the data flows at the change (empty for operation-level
    /// changes); a component used both ways has both.
    pub directions: BTreeSet<Direction>,
}

impl Change {
    /// The class: the union over the directions it was found in.
    pub fn class(&self) -> Class {
        if self.directions.is_empty() {
            return self.rule.class(None);
        }
        self.directions
            .iter()
            .map(|d| self.rule.class(Some(*d)))
            .fold(Class::Compatible, Class::union)
    }

    /// The detail plus, for schema-level changes, where the data flows, e.g.
    /// `… [request: breaking for clients; response: breaking for servers]`.
    pub fn message(&self) -> String {
        let dirs: Vec<Direction> = self.directions.iter().copied().collect();
        match dirs.as_slice() {
            [] => self.detail.clone(),
            [d] => format!("{} [{d}]", self.detail),
            many => {
                let classes: Vec<Class> = many.iter().map(|d| self.rule.class(Some(*d))).collect();
                if classes.windows(2).all(|w| w[0] == w[1]) {
                    let names: Vec<String> = many.iter().map(ToString::to_string).collect();
                    format!("{} [{}]", self.detail, names.join(", "))
                } else {
                    let parts: Vec<String> = many
                        .iter()
                        .zip(classes)
                        .map(|(d, c)| format!("{d}: {c}"))
                        .collect();
                    format!("{} [{}]", self.detail, parts.join("; "))
                }
            }
        }
    }
}

/// Compare `old` (the base) with `new` (the working tree).
///
/// Changes come grouped by subject: operations in the base's document order
/// (added ones last), then component schemas and security schemes by name.
pub fn compare(old: &OpenAPI, new: &OpenAPI) -> Vec<Change> {
    let mut differ = Differ {
        old,
        new,
        renames: detect_renames(old, new),
        changes: Vec::new(),
        index: BTreeMap::new(),
        visited: BTreeSet::new(),
        depth: 0,
    };
    differ.operations();
    differ.components();
    differ.security_schemes();
    let mut changes = differ.changes;
    let mut first_seen: BTreeMap<Subject, usize> = BTreeMap::new();
    for (i, change) in changes.iter().enumerate() {
        first_seen.entry(change.subject.clone()).or_insert(i);
    }
    // Stable sort: within a subject, changes keep their walk order.
    changes.sort_by_key(|c| match &c.subject {
        Subject::Operation { .. } => (0, first_seen[&c.subject], String::new()),
        Subject::Schema(name) => (1, 0, name.clone()),
        Subject::SecurityScheme(name) => (2, 0, name.clone()),
    });
    changes
}

// ------------------------------------------------------------------ plumbing

/// Where in a document a schema is being compared, and how to name it.
#[derive(Debug, Clone)]
struct Site {
    subject: Subject,
    location: String,
    direction: Direction,
    /// How messages name the root: a component name (shown as `Name.path`)
    /// or a phrase like `request body` (shown as `` `path` in request body``).
    root: Root,
    /// `.prop`, `[]`, `{}` segments below the root.
    path: String,
}

#[derive(Debug, Clone)]
enum Root {
    Named(String),
    Phrase(String),
}

impl Site {
    fn child(&self, pointer_segments: &str, path: &str) -> Site {
        Site {
            location: format!("{}/{pointer_segments}", self.location),
            path: format!("{}{path}", self.path),
            ..self.clone()
        }
    }

    /// The value being compared, for messages.
    fn what(&self) -> String {
        match &self.root {
            Root::Named(name) => format!("`{name}{}`", self.path),
            Root::Phrase(phrase) if self.path.is_empty() => phrase.clone(),
            Root::Phrase(phrase) => {
                format!("`{}` in {phrase}", self.path.trim_start_matches('.'))
            }
        }
    }
}

/// A schema position: a `$ref`, an inline schema, or nothing (any value).
#[derive(Debug, Clone, Copy)]
enum SRef<'a> {
    Ref(&'a str),
    Inline(&'a Schema),
    Any,
}

impl<'a> From<&'a ReferenceOr<Schema>> for SRef<'a> {
    fn from(r: &'a ReferenceOr<Schema>) -> Self {
        match r {
            ReferenceOr::Reference { reference } => SRef::Ref(reference),
            ReferenceOr::Item(schema) => SRef::Inline(schema),
        }
    }
}

impl<'a> From<&'a ReferenceOr<Box<Schema>>> for SRef<'a> {
    fn from(r: &'a ReferenceOr<Box<Schema>>) -> Self {
        match r {
            ReferenceOr::Reference { reference } => SRef::Ref(reference),
            ReferenceOr::Item(schema) => SRef::Inline(schema),
        }
    }
}

/// The metadata of a value that matters to the contract.
#[derive(Debug, Clone, Default, PartialEq)]
struct Meta {
    nullable: bool,
    deprecated: bool,
    default: Option<Value>,
}

impl Meta {
    fn of(schema: &Schema) -> Meta {
        Meta {
            nullable: schema.schema_data.nullable,
            deprecated: schema.schema_data.deprecated,
            default: schema.schema_data.default.clone(),
        }
    }

    fn merge(&mut self, other: Meta) {
        self.nullable |= other.nullable;
        self.deprecated |= other.deprecated;
        if self.default.is_none() {
            self.default = other.default;
        }
    }
}

const SCHEMA_PREFIX: &str = "#/components/schemas/";
/// Deeper than any sane schema; guards against pathological inline nesting.
const MAX_DEPTH: usize = 64;

/// Name of a component schema reference (`#/components/schemas/X` → `X`).
fn component_name(reference: &str) -> Option<&str> {
    reference.strip_prefix(SCHEMA_PREFIX)
}

fn schema_component<'a>(spec: &'a OpenAPI, name: &str) -> Option<&'a ReferenceOr<Schema>> {
    spec.components.as_ref()?.schemas.get(name)
}

/// Unwrap single-member `allOf`/`oneOf`/`anyOf` wrappers, collecting their
/// metadata.
fn unwrap(mut s: SRef<'_>) -> (SRef<'_>, Meta) {
    let mut meta = Meta::default();
    while let SRef::Inline(schema) = s {
        let inner = match &schema.schema_kind {
            SchemaKind::AllOf { all_of: list }
            | SchemaKind::OneOf { one_of: list }
            | SchemaKind::AnyOf { any_of: list }
                if list.len() == 1 =>
            {
                SRef::from(&list[0])
            }
            _ => break,
        };
        meta.merge(Meta::of(schema));
        s = inner;
    }
    (s, meta)
}

/// Follow `$ref`s and wrappers down to a concrete schema (or `None` for any
/// value or an unresolvable reference); returns the metadata met on the way
/// (the final schema's own included).
fn flatten<'a>(spec: &'a OpenAPI, s: SRef<'a>) -> (Option<&'a Schema>, Meta) {
    let mut meta = Meta::default();
    let mut current = s;
    for _ in 0..MAX_DEPTH {
        let (inner, wrapper) = unwrap(current);
        meta.merge(wrapper);
        match inner {
            SRef::Any => return (None, meta),
            SRef::Inline(schema) => {
                meta.merge(Meta::of(schema));
                return (Some(schema), meta);
            }
            SRef::Ref(reference) => {
                match component_name(reference).and_then(|n| schema_component(spec, n)) {
                    Some(target) => current = SRef::from(target),
                    None => return (None, meta),
                }
            }
        }
    }
    (None, meta)
}

/// One-line summary of a schema position for messages: `string/int64`,
/// `Conversion`, `array<CustomDimension>`.
fn summary(s: SRef<'_>) -> String {
    match s {
        SRef::Ref(r) => component_name(r).unwrap_or(r).to_owned(),
        SRef::Inline(schema) => serde_json::to_value(schema)
            .map(|v| crate::inventory::schema_summary(&v))
            .unwrap_or_else(|_| "?".to_owned()),
        SRef::Any => "any".to_owned(),
    }
}

fn show(v: &Value) -> String {
    v.to_string()
}

fn show_list(values: &[&Value]) -> String {
    values
        .iter()
        .map(|v| show(v))
        .collect::<Vec<_>>()
        .join(", ")
}

// -------------------------------------------------------------------- facets

/// The constraints of one schema, read off the `openapiv3` types.
#[derive(Default)]
struct Facets<'a> {
    ty: Option<String>,
    format: Option<String>,
    enumeration: Option<Vec<Value>>,
    /// (value, exclusive, as written)
    minimum: Option<(f64, bool, String)>,
    maximum: Option<(f64, bool, String)>,
    multiple_of: Option<f64>,
    pattern: Option<String>,
    min_length: Option<usize>,
    max_length: Option<usize>,
    min_items: Option<usize>,
    max_items: Option<usize>,
    unique_items: bool,
    min_properties: Option<usize>,
    max_properties: Option<usize>,
    properties: Vec<(&'a str, SRef<'a>)>,
    required: BTreeSet<&'a str>,
    has_object_keywords: bool,
    additional: Additional<'a>,
    items: Option<SRef<'a>>,
    one_of: Vec<SRef<'a>>,
    any_of: Vec<SRef<'a>>,
    all_of: Vec<SRef<'a>>,
    not: Option<Value>,
    discriminator: Option<Value>,
}

#[derive(Default, Clone, Copy)]
enum Additional<'a> {
    #[default]
    Open,
    Closed,
    Schema(SRef<'a>),
}

impl<'a> Facets<'a> {
    fn of(schema: Option<&'a Schema>) -> Facets<'a> {
        let Some(schema) = schema else {
            return Facets::default();
        };
        // Scalar keywords from the JSON form (the same keys whichever
        // `SchemaKind` variant openapiv3 chose).
        let json = serde_json::to_value(&schema.schema_kind).unwrap_or(Value::Null);
        let str_of = |k: &str| json.get(k).and_then(Value::as_str).map(str::to_owned);
        let usize_of = |k: &str| {
            json.get(k)
                .and_then(Value::as_u64)
                .and_then(|n| usize::try_from(n).ok())
        };
        let bound = |k: &str, exclusive: &str| {
            json.get(k).and_then(|v| {
                v.as_f64().map(|n| {
                    (
                        n,
                        json.get(exclusive) == Some(&Value::Bool(true)),
                        v.to_string(),
                    )
                })
            })
        };
        let mut f = Facets {
            ty: str_of("type"),
            format: str_of("format"),
            enumeration: json
                .get("enum")
                .and_then(Value::as_array)
                .filter(|v| !v.is_empty())
                .cloned(),
            minimum: bound("minimum", "exclusiveMinimum"),
            maximum: bound("maximum", "exclusiveMaximum"),
            multiple_of: json.get("multipleOf").and_then(Value::as_f64),
            pattern: str_of("pattern"),
            min_length: usize_of("minLength"),
            max_length: usize_of("maxLength"),
            min_items: usize_of("minItems"),
            max_items: usize_of("maxItems"),
            unique_items: json.get("uniqueItems") == Some(&Value::Bool(true)),
            min_properties: usize_of("minProperties"),
            max_properties: usize_of("maxProperties"),
            not: json.get("not").cloned(),
            discriminator: schema
                .schema_data
                .discriminator
                .as_ref()
                .and_then(|d| serde_json::to_value(d).ok()),
            ..Facets::default()
        };
        let additional = |ap: &'a Option<AdditionalProperties>| match ap {
            None | Some(AdditionalProperties::Any(true)) => Additional::Open,
            Some(AdditionalProperties::Any(false)) => Additional::Closed,
            Some(AdditionalProperties::Schema(s)) => Additional::Schema(SRef::from(s.as_ref())),
        };
        match &schema.schema_kind {
            SchemaKind::Type(Type::Object(o)) => {
                f.properties = o
                    .properties
                    .iter()
                    .map(|(k, v)| (k.as_str(), v.into()))
                    .collect();
                f.required = o.required.iter().map(String::as_str).collect();
                f.additional = additional(&o.additional_properties);
                f.has_object_keywords = true;
            }
            SchemaKind::Type(Type::Array(a)) => f.items = a.items.as_ref().map(SRef::from),
            SchemaKind::OneOf { one_of } => f.one_of = one_of.iter().map(SRef::from).collect(),
            SchemaKind::AnyOf { any_of } => f.any_of = any_of.iter().map(SRef::from).collect(),
            SchemaKind::AllOf { all_of } => f.all_of = all_of.iter().map(SRef::from).collect(),
            SchemaKind::Any(any) => {
                f.properties = any
                    .properties
                    .iter()
                    .map(|(k, v)| (k.as_str(), v.into()))
                    .collect();
                f.required = any.required.iter().map(String::as_str).collect();
                f.additional = additional(&any.additional_properties);
                f.has_object_keywords = !any.properties.is_empty()
                    || !any.required.is_empty()
                    || any.additional_properties.is_some();
                f.items = any.items.as_ref().map(SRef::from);
                f.one_of = any.one_of.iter().map(SRef::from).collect();
                f.any_of = any.any_of.iter().map(SRef::from).collect();
                f.all_of = any.all_of.iter().map(SRef::from).collect();
            }
            SchemaKind::Type(_) | SchemaKind::Not { .. } => {}
        }
        f
    }

    /// The composition keyword in use, if any.
    fn composition(&self) -> Option<&'static str> {
        if !self.one_of.is_empty() {
            Some("oneOf")
        } else if !self.any_of.is_empty() {
            Some("anyOf")
        } else if !self.all_of.is_empty() {
            Some("allOf")
        } else if self.not.is_some() {
            Some("not")
        } else {
            None
        }
    }

    /// `string`, `object`, `oneOf`, `any`.
    fn kind_name(&self) -> String {
        match (&self.ty, self.composition()) {
            (Some(t), _) => t.clone(),
            (None, Some(c)) => c.to_owned(),
            (None, None) => "any".to_owned(),
        }
    }
}

/// How a format change moves the value set.
#[derive(Debug, PartialEq, Eq)]
enum Moved {
    Narrowed,
    Widened,
    Unrelated,
}

/// `int32` → (signed, 32); `uint64` → (unsigned, 64).
fn int_width(format: &str) -> Option<(bool, u32)> {
    let (signed, bits) = match format.strip_prefix('u') {
        Some(rest) => (false, rest.strip_prefix("int")?),
        None => (true, format.strip_prefix("int")?),
    };
    Some((signed, bits.parse().ok()?))
}

/// Whether every value of format `a` is a value of format `b`.
fn format_within(a: &str, b: &str) -> bool {
    if let (Some((sa, ba)), Some((sb, bb))) = (int_width(a), int_width(b)) {
        return (sa == sb && ba <= bb) || (!sa && sb && ba < bb);
    }
    a == b || (a == "float" && b == "double")
}

fn format_moved(old: &str, new: &str) -> Moved {
    if format_within(old, new) {
        Moved::Widened
    } else if format_within(new, old) {
        Moved::Narrowed
    } else {
        Moved::Unrelated
    }
}

// -------------------------------------------------------------------- differ

struct Differ<'a> {
    old: &'a OpenAPI,
    new: &'a OpenAPI,
    /// Component schemas renamed without a change of shape: old → new name.
    renames: BTreeMap<String, String>,
    changes: Vec<Change>,
    /// (subject, location, rule, detail) → index into `changes`.
    index: BTreeMap<(Subject, String, &'static str, String), usize>,
    /// Schema pairs already compared, per direction: this makes each
    /// component compared once per direction and stops recursive schemas.
    visited: BTreeSet<(String, String, Direction)>,
    depth: usize,
}

/// An operation with where it lives.
struct OpInfo<'a> {
    path: &'a str,
    method: &'a str,
    op: &'a Operation,
    item: &'a PathItem,
    pointer: String,
}

impl OpInfo<'_> {
    fn id(&self) -> String {
        self.op
            .operation_id
            .clone()
            .unwrap_or_else(|| format!("{} {}", self.method.to_uppercase(), self.path))
    }

    fn subject(&self) -> Subject {
        Subject::Operation {
            id: self.id(),
            method: self.method.to_uppercase(),
            path: self.path.to_owned(),
        }
    }

    /// The path with parameter names erased: `/a/{}/b`.
    fn route(&self) -> String {
        let mut out = String::new();
        let mut in_param = false;
        for c in self.path.chars() {
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
}

fn operations_of(spec: &OpenAPI) -> Vec<OpInfo<'_>> {
    let mut out = Vec::new();
    for (path, item) in spec.paths.paths.iter() {
        let ReferenceOr::Item(item) = item else {
            continue;
        };
        for (method, op) in item.iter() {
            out.push(OpInfo {
                path,
                method,
                op,
                item,
                pointer: format!("#/paths/{}/{method}", escape(path)),
            });
        }
    }
    out
}

/// Names of path parameters in template order.
fn template_names(path: &str) -> Vec<&str> {
    path.split('{')
        .skip(1)
        .filter_map(|s| s.split_once('}').map(|(name, _)| name))
        .collect()
}

/// How parameters are matched between the two sides: path parameters by
/// position in the template, the others by location and name.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
enum ParamKey {
    PathPosition(usize),
    Named(&'static str, String),
}

struct ParamInfo<'a> {
    location: &'static str,
    param: &'a Parameter,
    pointer: String,
}

fn location_of(p: &Parameter) -> &'static str {
    match p {
        Parameter::Query { .. } => "query",
        Parameter::Header { .. } => "header",
        Parameter::Path { .. } => "path",
        Parameter::Cookie { .. } => "cookie",
    }
}

/// Follows a `$ref` chain into one component table (`prefix` is the
/// reference's path up to the name, `lookup` finds a name in the table);
/// returns the item and the last component name met, if any.
fn resolve_component<'a, T>(
    spec: &'a OpenAPI,
    item: &'a ReferenceOr<T>,
    prefix: &str,
    lookup: impl Fn(&'a Components, &str) -> Option<&'a ReferenceOr<T>>,
) -> Option<(&'a T, Option<&'a str>)> {
    let mut current = item;
    let mut name = None;
    for _ in 0..MAX_DEPTH {
        match current {
            ReferenceOr::Item(item) => return Some((item, name)),
            ReferenceOr::Reference { reference } => {
                let n = reference.strip_prefix(prefix)?;
                name = Some(n);
                current = lookup(spec.components.as_ref()?, n)?;
            }
        }
    }
    None
}

fn resolve_parameter<'a>(
    spec: &'a OpenAPI,
    p: &'a ReferenceOr<Parameter>,
) -> Option<&'a Parameter> {
    resolve_component(spec, p, "#/components/parameters/", |c, n| {
        c.parameters.get(n)
    })
    .map(|(p, _)| p)
}

fn resolve_request_body<'a>(
    spec: &'a OpenAPI,
    b: &'a ReferenceOr<RequestBody>,
) -> Option<(&'a RequestBody, Option<&'a str>)> {
    resolve_component(spec, b, "#/components/requestBodies/", |c, n| {
        c.request_bodies.get(n)
    })
}

fn resolve_response<'a>(
    spec: &'a OpenAPI,
    r: &'a ReferenceOr<Response>,
) -> Option<(&'a Response, Option<&'a str>)> {
    resolve_component(spec, r, "#/components/responses/", |c, n| {
        c.responses.get(n)
    })
}

fn parameters_of<'a>(spec: &'a OpenAPI, info: &OpInfo<'a>) -> BTreeMap<ParamKey, ParamInfo<'a>> {
    let names = template_names(info.path);
    let path_pointer = format!("#/paths/{}", escape(info.path));
    let mut out = BTreeMap::new();
    let lists = [
        (&info.item.parameters, path_pointer),
        (&info.op.parameters, info.pointer.clone()),
    ];
    for (list, base) in lists {
        for (i, p) in list.iter().enumerate() {
            let Some(param) = resolve_parameter(spec, p) else {
                continue;
            };
            let location = location_of(param);
            let name = &param.parameter_data_ref().name;
            let key = match names.iter().position(|n| n == name) {
                Some(pos) if location == "path" => ParamKey::PathPosition(pos),
                _ => ParamKey::Named(location, name.clone()),
            };
            // Operation-level parameters override path-level ones.
            out.insert(
                key,
                ParamInfo {
                    location,
                    param,
                    pointer: format!("{base}/parameters/{i}"),
                },
            );
        }
    }
    out
}

/// Security requirement alternatives: scheme-name set → scheme → scopes.
type Alternatives = BTreeMap<Vec<String>, BTreeMap<String, BTreeSet<String>>>;

fn alternatives(reqs: &[SecurityRequirement]) -> Alternatives {
    reqs.iter()
        .map(|req| {
            let schemes: BTreeMap<String, BTreeSet<String>> = req
                .iter()
                .map(|(k, v)| (k.clone(), v.iter().cloned().collect()))
                .collect();
            (schemes.keys().cloned().collect(), schemes)
        })
        .collect()
}

/// Documentation-only keys of a schema object (left out of shape comparisons).
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
fn detect_renames(old: &OpenAPI, new: &OpenAPI) -> BTreeMap<String, String> {
    let names = |spec: &OpenAPI| -> BTreeMap<String, Value> {
        spec.components
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
    fn record(
        &mut self,
        subject: &Subject,
        location: &str,
        rule: &'static Rule,
        detail: String,
        direction: Option<Direction>,
    ) {
        let key = (
            subject.clone(),
            location.to_owned(),
            rule.id,
            detail.clone(),
        );
        let i = *self.index.entry(key).or_insert_with(|| {
            self.changes.push(Change {
                subject: subject.clone(),
                location: location.to_owned(),
                rule,
                detail,
                directions: BTreeSet::new(),
            });
            self.changes.len() - 1
        });
        if let Some(d) = direction {
            self.changes[i].directions.insert(d);
        }
    }

    fn at(&mut self, site: &Site, rule: &'static Rule, detail: impl fmt::Display) {
        let detail = format!("{}: {detail}", site.what());
        let (subject, location) = (site.subject.clone(), site.location.clone());
        self.record(&subject, &location, rule, detail, Some(site.direction));
    }

    fn same_component(&self, a: &str, b: &str) -> bool {
        a == b
            || matches!(
                (component_name(a), component_name(b)),
                (Some(x), Some(y)) if self.renames.get(x).is_some_and(|n| n == y)
            )
    }

    // ------------------------------------------------------------ operations

    fn operations(&mut self) {
        let old_ops = operations_of(self.old);
        let new_ops = operations_of(self.new);
        let mut paired_new = vec![false; new_ops.len()];
        let mut pairs: Vec<(usize, Option<usize>)> = Vec::new();
        // By operationId first, then by route.
        for (i, o) in old_ops.iter().enumerate() {
            let by_id = o.op.operation_id.as_ref().and_then(|id| {
                new_ops
                    .iter()
                    .position(|n| n.op.operation_id.as_ref() == Some(id))
            });
            if let Some(j) = by_id {
                paired_new[j] = true;
            }
            pairs.push((i, by_id));
        }
        for pair in &mut pairs {
            if pair.1.is_some() {
                continue;
            }
            let o = &old_ops[pair.0];
            let by_route = new_ops.iter().enumerate().position(|(j, n)| {
                !paired_new[j] && n.method == o.method && n.route() == o.route()
            });
            if let Some(j) = by_route {
                paired_new[j] = true;
                pair.1 = Some(j);
            }
        }
        for (i, j) in pairs {
            let o = &old_ops[i];
            match j {
                None => {
                    let detail = format!(
                        "operation `{}` ({} {}) removed",
                        o.id(),
                        o.method.to_uppercase(),
                        o.path
                    );
                    self.record(
                        &o.subject(),
                        &o.pointer,
                        &r::OPERATION_REMOVED,
                        detail,
                        None,
                    );
                }
                Some(j) => self.operation(o, &new_ops[j]),
            }
        }
        for (j, n) in new_ops.iter().enumerate() {
            if !paired_new[j] {
                let detail = format!(
                    "operation `{}` ({} {}) added",
                    n.id(),
                    n.method.to_uppercase(),
                    n.path
                );
                self.record(&n.subject(), &n.pointer, &r::OPERATION_ADDED, detail, None);
            }
        }
    }

    fn operation(&mut self, o: &OpInfo<'a>, n: &OpInfo<'a>) {
        let subject = n.subject();
        let at = n.pointer.clone();
        if o.op.operation_id != n.op.operation_id {
            let detail = format!("operationId changed from `{}` to `{}`", o.id(), n.id());
            self.record(&subject, &at, &r::OPERATION_ID_CHANGED, detail, None);
        }
        if o.method != n.method || o.route() != n.route() {
            let detail = format!(
                "route changed from {} {} to {} {}",
                o.method.to_uppercase(),
                o.path,
                n.method.to_uppercase(),
                n.path
            );
            self.record(&subject, &at, &r::OPERATION_ROUTE_CHANGED, detail, None);
        }
        match (o.op.deprecated, n.op.deprecated) {
            (false, true) => self.record(
                &subject,
                &at,
                &r::DEPRECATED,
                "operation deprecated".into(),
                None,
            ),
            (true, false) => self.record(
                &subject,
                &at,
                &r::UNDEPRECATED,
                "operation no longer deprecated".into(),
                None,
            ),
            _ => {}
        }
        self.security(&subject, o, n);
        self.parameters(&subject, o, n);
        self.request_body(&subject, o, n);
        self.responses(&subject, o, n);
    }

    fn security(&mut self, subject: &Subject, o: &OpInfo<'a>, n: &OpInfo<'a>) {
        let effective = |spec: &'a OpenAPI, info: &OpInfo<'a>| -> Alternatives {
            alternatives(
                info.op
                    .security
                    .as_deref()
                    .or(spec.security.as_deref())
                    .unwrap_or(&[]),
            )
        };
        let (old, new) = (effective(self.old, o), effective(self.new, n));
        let at = format!("{}/security", n.pointer);
        let open = |a: &Alternatives| a.is_empty() || a.contains_key(&Vec::new());
        let show_alt = |k: &Vec<String>| format!("`{}`", k.join(" + "));
        match (open(&old), open(&new)) {
            (true, false) => {
                let alts: Vec<String> = new.keys().map(show_alt).collect();
                let detail = format!("authentication now required: {}", alts.join(" or "));
                self.record(subject, &at, &r::SECURITY_TIGHTENED, detail, None);
                return;
            }
            (false, true) => {
                let detail = "authentication no longer required".to_owned();
                self.record(subject, &at, &r::SECURITY_RELAXED, detail, None);
                return;
            }
            _ => {}
        }
        for (key, schemes) in &old {
            match new.get(key) {
                None if !key.is_empty() => {
                    let detail = format!("security alternative {} removed", show_alt(key));
                    self.record(subject, &at, &r::SECURITY_TIGHTENED, detail, None);
                }
                None => {}
                Some(new_schemes) => {
                    for (scheme, scopes) in schemes {
                        let new_scopes = &new_schemes[scheme];
                        let added: Vec<&String> = new_scopes.difference(scopes).collect();
                        let removed: Vec<&String> = scopes.difference(new_scopes).collect();
                        if !added.is_empty() {
                            let detail = format!(
                                "scopes required for `{scheme}` added: {}",
                                join_code(&added)
                            );
                            self.record(subject, &at, &r::SECURITY_TIGHTENED, detail, None);
                        }
                        if !removed.is_empty() {
                            let detail = format!(
                                "scopes required for `{scheme}` removed: {}",
                                join_code(&removed)
                            );
                            self.record(subject, &at, &r::SECURITY_RELAXED, detail, None);
                        }
                    }
                }
            }
        }
        for key in new.keys() {
            if !old.contains_key(key) && !key.is_empty() {
                let detail = format!("security alternative {} added", show_alt(key));
                self.record(subject, &at, &r::SECURITY_RELAXED, detail, None);
            }
        }
    }

    fn parameters(&mut self, subject: &Subject, o: &OpInfo<'a>, n: &OpInfo<'a>) {
        let old = parameters_of(self.old, o);
        let new = parameters_of(self.new, n);
        for (key, op) in &old {
            let data = op.param.parameter_data_ref();
            match new.get(key) {
                None => {
                    let detail = format!("{} parameter `{}` removed", op.location, data.name);
                    self.record(subject, &op.pointer, &r::PARAMETER_REMOVED, detail, None);
                }
                Some(np) => self.parameter(subject, op, np),
            }
        }
        for (key, np) in &new {
            if old.contains_key(key) {
                continue;
            }
            let data = np.param.parameter_data_ref();
            let ty = match &data.format {
                ParameterSchemaOrContent::Schema(s) => summary(s.into()),
                ParameterSchemaOrContent::Content(_) => "content".to_owned(),
            };
            let (rule, word) = if data.required {
                (&r::PARAMETER_ADDED_REQUIRED, "required")
            } else {
                (&r::PARAMETER_ADDED, "optional")
            };
            let detail = format!(
                "{word} {} parameter `{}` ({ty}) added",
                np.location, data.name
            );
            self.record(subject, &np.pointer, rule, detail, None);
        }
    }

    fn parameter(&mut self, subject: &Subject, op: &ParamInfo<'a>, np: &ParamInfo<'a>) {
        let (od, nd) = (op.param.parameter_data_ref(), np.param.parameter_data_ref());
        let at = np.pointer.clone();
        let label = format!("{} parameter `{}`", np.location, nd.name);
        if od.name != nd.name {
            let detail = format!(
                "path parameter `{}` renamed to `{}` (same position)",
                od.name, nd.name
            );
            self.record(subject, &at, &r::PARAMETER_RENAMED, detail, None);
        }
        match (od.required, nd.required) {
            (false, true) => self.record(
                subject,
                &at,
                &r::PARAMETER_BECAME_REQUIRED,
                format!("{label} became required"),
                None,
            ),
            (true, false) => self.record(
                subject,
                &at,
                &r::PARAMETER_BECAME_OPTIONAL,
                format!("{label} became optional"),
                None,
            ),
            _ => {}
        }
        match (od.deprecated == Some(true), nd.deprecated == Some(true)) {
            (false, true) => self.record(
                subject,
                &at,
                &r::DEPRECATED,
                format!("{label} deprecated"),
                None,
            ),
            (true, false) => self.record(
                subject,
                &at,
                &r::UNDEPRECATED,
                format!("{label} no longer deprecated"),
                None,
            ),
            _ => {}
        }
        let site = Site {
            subject: subject.clone(),
            location: format!("{at}/schema"),
            direction: Direction::Request,
            root: Root::Phrase(label.clone()),
            path: String::new(),
        };
        match (&od.format, &nd.format) {
            (ParameterSchemaOrContent::Schema(a), ParameterSchemaOrContent::Schema(b)) => {
                self.node(&site, a.into(), b.into());
            }
            (ParameterSchemaOrContent::Content(a), ParameterSchemaOrContent::Content(b)) => {
                let site = Site {
                    location: at.clone(),
                    ..site
                };
                self.content(&site, a, b);
            }
            _ => self.at(
                &site,
                &r::CONSTRAINT_CHANGED,
                "switched between `schema` and `content`",
            ),
        }
    }

    fn request_body(&mut self, subject: &Subject, o: &OpInfo<'a>, n: &OpInfo<'a>) {
        let at = format!("{}/requestBody", n.pointer);
        let old =
            o.op.request_body
                .as_ref()
                .and_then(|b| resolve_request_body(self.old, b));
        let new =
            n.op.request_body
                .as_ref()
                .and_then(|b| resolve_request_body(self.new, b));
        match (old, new) {
            (None, None) => {}
            (None, Some((b, _))) => {
                let (rule, word) = if b.required {
                    (&r::REQUEST_BODY_ADDED_REQUIRED, "required")
                } else {
                    (&r::REQUEST_BODY_ADDED, "optional")
                };
                self.record(
                    subject,
                    &at,
                    rule,
                    format!("{word} request body added"),
                    None,
                );
            }
            (Some(_), None) => {
                let detail = "request body removed".to_owned();
                self.record(subject, &at, &r::REQUEST_BODY_REMOVED, detail, None);
            }
            (Some((ob, _)), Some((nb, name))) => {
                match (ob.required, nb.required) {
                    (false, true) => self.record(
                        subject,
                        &at,
                        &r::REQUEST_BODY_BECAME_REQUIRED,
                        "request body became required".into(),
                        None,
                    ),
                    (true, false) => self.record(
                        subject,
                        &at,
                        &r::REQUEST_BODY_BECAME_OPTIONAL,
                        "request body became optional".into(),
                        None,
                    ),
                    _ => {}
                }
                let (location, phrase) = match name {
                    Some(name) => (
                        format!("#/components/requestBodies/{}", escape(name)),
                        format!("request body `{name}`"),
                    ),
                    None => (at, "request body".to_owned()),
                };
                let site = Site {
                    subject: subject.clone(),
                    location,
                    direction: Direction::Request,
                    root: Root::Phrase(phrase),
                    path: String::new(),
                };
                self.content(&site, &ob.content, &nb.content);
            }
        }
    }

    fn responses(&mut self, subject: &Subject, o: &OpInfo<'a>, n: &OpInfo<'a>) {
        type Entry<'x> = (String, Option<StatusCode>, &'x ReferenceOr<Response>);
        let entries = |op: &'a Operation| -> Vec<Entry<'a>> {
            let mut v: Vec<Entry<'a>> = op
                .responses
                .responses
                .iter()
                .map(|(k, r)| (k.to_string(), Some(k.clone()), r))
                .collect();
            if let Some(d) = &op.responses.default {
                v.push(("default".to_owned(), None, d));
            }
            v
        };
        let (old, new) = (entries(o.op), entries(n.op));
        // The response of `list` that covers `status`: exact, range, default.
        fn covering<'x>(list: &[Entry<'x>], status: &Option<StatusCode>) -> Option<usize> {
            let exact = list.iter().position(|(_, s, _)| s == status);
            let range = match status {
                Some(StatusCode::Code(c)) => list
                    .iter()
                    .position(|(_, s, _)| *s == Some(StatusCode::Range(c / 100))),
                _ => None,
            };
            let default = list.iter().position(|(_, s, _)| s.is_none());
            exact.or(range).or(default)
        }
        let at = format!("{}/responses", n.pointer);
        for (label, status, resp) in &old {
            match covering(&new, status) {
                Some(j) => {
                    let (new_label, _, new_resp) = &new[j];
                    self.response(subject, &at, label, new_label, resp, new_resp);
                }
                None => {
                    let detail = format!("response `{label}` removed");
                    self.record(subject, &at, &r::RESPONSE_REMOVED, detail, None);
                }
            }
        }
        for (label, status, resp) in &new {
            if old.iter().any(|(l, _, _)| l == label) {
                continue;
            }
            match covering(&old, status) {
                Some(i) => {
                    let (old_label, _, old_resp) = &old[i];
                    self.response(subject, &at, old_label, label, old_resp, resp);
                }
                None => {
                    let detail = format!("response `{label}` added");
                    self.record(subject, &at, &r::RESPONSE_ADDED, detail, None);
                }
            }
        }
    }

    fn response(
        &mut self,
        subject: &Subject,
        at: &str,
        old_label: &str,
        new_label: &str,
        old: &'a ReferenceOr<Response>,
        new: &'a ReferenceOr<Response>,
    ) {
        let (Some((or, _)), Some((nr, name))) = (
            resolve_response(self.old, old),
            resolve_response(self.new, new),
        ) else {
            return;
        };
        let label = if old_label == new_label {
            format!("response `{new_label}`")
        } else {
            format!("response `{new_label}` (was `{old_label}`)")
        };
        let at = format!("{at}/{}", escape(new_label));
        match (or.content.is_empty(), nr.content.is_empty()) {
            (true, true) => {}
            (true, false) => self.record(
                subject,
                &at,
                &r::RESPONSE_BODY_ADDED,
                format!("{label}: body added"),
                None,
            ),
            (false, true) => self.record(
                subject,
                &at,
                &r::RESPONSE_BODY_REMOVED,
                format!("{label}: body removed"),
                None,
            ),
            (false, false) => {
                let (location, phrase) = match name {
                    // A shared response: one entry per operation, not per status.
                    Some(name) if old_label == new_label => (
                        format!("#/components/responses/{}", escape(name)),
                        format!("response `{name}`"),
                    ),
                    _ => (at, format!("{label} body")),
                };
                let site = Site {
                    subject: subject.clone(),
                    location,
                    direction: Direction::Response,
                    root: Root::Phrase(phrase),
                    path: String::new(),
                };
                self.content(&site, &or.content, &nr.content);
            }
        }
    }

    /// Compare the media types of a body (or a `content` parameter).
    fn content(&mut self, site: &Site, old: &'a Content, new: &'a Content) {
        for media in old.keys() {
            if !new.contains_key(media) {
                self.at(
                    site,
                    &r::MEDIA_TYPE_REMOVED,
                    format_args!("media type `{media}` removed"),
                );
            }
        }
        for media in new.keys() {
            if !old.contains_key(media) {
                self.at(
                    site,
                    &r::MEDIA_TYPE_ADDED,
                    format_args!("media type `{media}` added"),
                );
            }
        }
        let several = old.len().max(new.len()) > 1;
        for (media, om) in old {
            let Some(nm) = new.get(media) else {
                continue;
            };
            let mut child = site.child(&format!("content/{}/schema", escape(media)), "");
            if several && let Root::Phrase(p) = &child.root {
                child.root = Root::Phrase(format!("{p} (`{media}`)"));
            }
            let to_ref = |m: &'a MediaType| m.schema.as_ref().map_or(SRef::Any, SRef::from);
            self.node(&child, to_ref(om), to_ref(nm));
        }
    }

    // --------------------------------------------------------------- schemas

    /// Compare two schema positions at `site`.
    fn node(&mut self, site: &Site, old: SRef<'a>, new: SRef<'a>) {
        if self.depth >= MAX_DEPTH {
            return;
        }
        self.depth += 1;
        self.node_inner(site, old, new);
        self.depth -= 1;
    }

    fn node_inner(&mut self, site: &Site, old: SRef<'a>, new: SRef<'a>) {
        let (o, o_meta) = unwrap(old);
        let (n, n_meta) = unwrap(new);
        if let (SRef::Ref(a), SRef::Ref(b)) = (o, n)
            && self.same_component(a, b)
        {
            // Same component: only the wrappers' metadata is this site's; the
            // component itself is compared (once per direction) on its own.
            self.meta(site, &o_meta, &n_meta);
            self.component(a, b, site.direction);
            return;
        }
        let key_of = |s: SRef<'_>| match s {
            SRef::Ref(r) => Some(r.to_owned()),
            _ => None,
        };
        let (ok, nk) = (key_of(o), key_of(n));
        match (&ok, &nk) {
            (Some(a), Some(b)) => self.at(
                site,
                &r::SCHEMA_REPLACED,
                format_args!(
                    "type `{}` replaced by `{}`",
                    component_name(a).unwrap_or(a),
                    component_name(b).unwrap_or(b)
                ),
            ),
            (Some(a), None) => self.at(
                site,
                &r::SCHEMA_REPLACED,
                format_args!(
                    "reference to `{}` replaced by an inline schema",
                    component_name(a).unwrap_or(a)
                ),
            ),
            (None, Some(b)) => self.at(
                site,
                &r::SCHEMA_REPLACED,
                format_args!(
                    "inline schema replaced by a reference to `{}`",
                    component_name(b).unwrap_or(b)
                ),
            ),
            (None, None) => {}
        }
        if ok.is_some() || nk.is_some() {
            // A reference on either side can recurse: compare each pair once.
            let key = (
                ok.unwrap_or_else(|| format!("@{}", site.location)),
                nk.unwrap_or_else(|| format!("@{}", site.location)),
                site.direction,
            );
            if !self.visited.insert(key) {
                return;
            }
        }
        let (os, mut om) = flatten(self.old, o);
        let (ns, mut nm) = flatten(self.new, n);
        om.merge(o_meta);
        nm.merge(n_meta);
        self.meta(site, &om, &nm);
        self.facets(site, Facets::of(os), Facets::of(ns));
    }

    /// Compare component `a` (base) with `b` (new; same name unless renamed).
    fn component(&mut self, a: &str, b: &str, direction: Direction) {
        let (Some(an), Some(bn)) = (component_name(a), component_name(b)) else {
            return;
        };
        if !self.visited.insert((a.to_owned(), b.to_owned(), direction)) {
            return;
        }
        let (Some(os), Some(ns)) = (
            schema_component(self.old, an),
            schema_component(self.new, bn),
        ) else {
            return;
        };
        let site = Site {
            subject: Subject::Schema(bn.to_owned()),
            location: format!("{SCHEMA_PREFIX}{}", escape(bn)),
            direction,
            root: Root::Named(bn.to_owned()),
            path: String::new(),
        };
        self.node(&site, os.into(), ns.into());
    }

    fn meta(&mut self, site: &Site, o: &Meta, n: &Meta) {
        match (o.nullable, n.nullable) {
            (false, true) => self.at(site, &r::NULLABLE_ADDED, "now nullable"),
            (true, false) => self.at(site, &r::NULLABLE_REMOVED, "no longer nullable"),
            _ => {}
        }
        match (o.deprecated, n.deprecated) {
            (false, true) => self.at(site, &r::DEPRECATED, "deprecated"),
            (true, false) => self.at(site, &r::UNDEPRECATED, "no longer deprecated"),
            _ => {}
        }
        match (&o.default, &n.default) {
            (None, Some(d)) => self.at(
                site,
                &r::DEFAULT_CHANGED,
                format_args!("default {} added", show(d)),
            ),
            (Some(d), None) => self.at(
                site,
                &r::DEFAULT_CHANGED,
                format_args!("default {} removed", show(d)),
            ),
            (Some(a), Some(b)) if a != b => self.at(
                site,
                &r::DEFAULT_CHANGED,
                format_args!("default changed from {} to {}", show(a), show(b)),
            ),
            _ => {}
        }
    }

    fn facets(&mut self, site: &Site, o: Facets<'a>, n: Facets<'a>) {
        // The type (or composition keyword) first: if it changed, the rest is noise.
        let (ok, nk) = (o.kind_name(), n.kind_name());
        if ok != nk {
            self.at(
                site,
                &r::TYPE_CHANGED,
                format_args!("type changed from {ok} to {nk}"),
            );
            return;
        }
        self.format(site, &o, &n);
        self.enumeration(site, &o, &n);
        self.bounds(site, &o, &n);
        if o.has_object_keywords || n.has_object_keywords || !o.properties.is_empty() {
            self.object(site, &o, &n);
        }
        match (o.items, n.items) {
            (Some(a), Some(b)) => self.node(&site.child("items", "[]"), a, b),
            (None, Some(b)) => self.at(
                site,
                &r::BOUND_NARROWED,
                format_args!("array items restricted to {}", summary(b)),
            ),
            (Some(_), None) => self.at(site, &r::BOUND_WIDENED, "array items no longer restricted"),
            (None, None) => {}
        }
        self.composition(site, "oneOf", &o.one_of, &n.one_of, false);
        self.composition(site, "anyOf", &o.any_of, &n.any_of, false);
        self.composition(site, "allOf", &o.all_of, &n.all_of, true);
        if o.not != n.not {
            self.at(site, &r::CONSTRAINT_CHANGED, "`not` changed");
        }
        if o.discriminator != n.discriminator {
            self.at(site, &r::CONSTRAINT_CHANGED, "discriminator changed");
        }
    }

    fn format(&mut self, site: &Site, o: &Facets<'a>, n: &Facets<'a>) {
        match (&o.format, &n.format) {
            (None, Some(f)) => self.at(
                site,
                &r::FORMAT_NARROWED,
                format_args!("format `{f}` added"),
            ),
            (Some(f), None) => self.at(
                site,
                &r::FORMAT_WIDENED,
                format_args!("format `{f}` removed"),
            ),
            (Some(a), Some(b)) if a != b => {
                let rule = match format_moved(a, b) {
                    Moved::Narrowed => &r::FORMAT_NARROWED,
                    Moved::Widened => &r::FORMAT_WIDENED,
                    Moved::Unrelated => &r::FORMAT_CHANGED,
                };
                self.at(
                    site,
                    rule,
                    format_args!("format changed from `{a}` to `{b}`"),
                );
            }
            _ => {}
        }
    }

    fn enumeration(&mut self, site: &Site, o: &Facets<'a>, n: &Facets<'a>) {
        match (&o.enumeration, &n.enumeration) {
            (None, None) => {}
            (None, Some(values)) => {
                let values: Vec<&Value> = values.iter().collect();
                self.at(
                    site,
                    &r::ENUM_NARROWED,
                    format_args!("now restricted to the enum {}", show_list(&values)),
                );
            }
            (Some(_), None) => self.at(site, &r::ENUM_WIDENED, "enum restriction removed"),
            (Some(a), Some(b)) => {
                let removed: Vec<&Value> = a.iter().filter(|v| !b.contains(v)).collect();
                let added: Vec<&Value> = b.iter().filter(|v| !a.contains(v)).collect();
                if !removed.is_empty() {
                    self.at(
                        site,
                        &r::ENUM_NARROWED,
                        format_args!("enum values removed: {}", show_list(&removed)),
                    );
                }
                if !added.is_empty() {
                    self.at(
                        site,
                        &r::ENUM_WIDENED,
                        format_args!("enum values added: {}", show_list(&added)),
                    );
                }
            }
        }
    }

    fn bounds(&mut self, site: &Site, o: &Facets<'a>, n: &Facets<'a>) {
        self.numeric_bound(site, "minimum", &o.minimum, &n.minimum, true);
        self.numeric_bound(site, "maximum", &o.maximum, &n.maximum, false);
        let counts = [
            ("minLength", o.min_length, n.min_length, true),
            ("maxLength", o.max_length, n.max_length, false),
            ("minItems", o.min_items, n.min_items, true),
            ("maxItems", o.max_items, n.max_items, false),
            ("minProperties", o.min_properties, n.min_properties, true),
            ("maxProperties", o.max_properties, n.max_properties, false),
        ];
        for (name, a, b, lower) in counts {
            let to = |v: Option<usize>| v.map(|v| (v as f64, false, v.to_string()));
            self.numeric_bound(site, name, &to(a), &to(b), lower);
        }
        match (o.unique_items, n.unique_items) {
            (false, true) => self.at(site, &r::BOUND_NARROWED, "uniqueItems added"),
            (true, false) => self.at(site, &r::BOUND_WIDENED, "uniqueItems removed"),
            _ => {}
        }
        match (&o.pattern, &n.pattern) {
            (None, Some(p)) => self.at(
                site,
                &r::BOUND_NARROWED,
                format_args!("pattern `{p}` added"),
            ),
            (Some(p), None) => self.at(
                site,
                &r::BOUND_WIDENED,
                format_args!("pattern `{p}` removed"),
            ),
            (Some(a), Some(b)) if a != b => self.at(
                site,
                &r::CONSTRAINT_CHANGED,
                format_args!("pattern changed from `{a}` to `{b}`"),
            ),
            _ => {}
        }
        match (o.multiple_of, n.multiple_of) {
            (None, Some(m)) => self.at(
                site,
                &r::BOUND_NARROWED,
                format_args!("multipleOf {m} added"),
            ),
            (Some(m), None) => self.at(
                site,
                &r::BOUND_WIDENED,
                format_args!("multipleOf {m} removed"),
            ),
            (Some(a), Some(b)) if a != b => {
                let rule = if (b / a).fract() == 0.0 {
                    &r::BOUND_NARROWED
                } else if (a / b).fract() == 0.0 {
                    &r::BOUND_WIDENED
                } else {
                    &r::CONSTRAINT_CHANGED
                };
                self.at(
                    site,
                    rule,
                    format_args!("multipleOf changed from {a} to {b}"),
                );
            }
            _ => {}
        }
    }

    /// A lower (`minimum`, `minLength`, …) or upper bound.
    fn numeric_bound(
        &mut self,
        site: &Site,
        name: &str,
        o: &Option<(f64, bool, String)>,
        n: &Option<(f64, bool, String)>,
        lower: bool,
    ) {
        let show_bound = |(_, exclusive, text): &(f64, bool, String)| {
            if *exclusive {
                format!("{text} (exclusive)")
            } else {
                text.clone()
            }
        };
        match (o, n) {
            (None, None) => {}
            (None, Some(b)) => self.at(
                site,
                &r::BOUND_NARROWED,
                format_args!("{name} {} added", show_bound(b)),
            ),
            (Some(a), None) => self.at(
                site,
                &r::BOUND_WIDENED,
                format_args!("{name} {} removed", show_bound(a)),
            ),
            (Some(a), Some(b)) => {
                // Tighter: a lower bound goes up (or becomes exclusive), an
                // upper bound goes down (or becomes exclusive).
                let key = |(v, exclusive, _): &(f64, bool, String)| {
                    if lower {
                        (*v, *exclusive)
                    } else {
                        (-*v, *exclusive)
                    }
                };
                let (ka, kb) = (key(a), key(b));
                if ka == kb {
                    return;
                }
                let tighter = kb.0 > ka.0 || (kb.0 == ka.0 && kb.1);
                let (rule, verb) = match (tighter, lower) {
                    (true, true) => (&r::BOUND_NARROWED, "raised"),
                    (true, false) => (&r::BOUND_NARROWED, "lowered"),
                    (false, true) => (&r::BOUND_WIDENED, "lowered"),
                    (false, false) => (&r::BOUND_WIDENED, "raised"),
                };
                self.at(
                    site,
                    rule,
                    format_args!("{name} {verb} from {} to {}", show_bound(a), show_bound(b)),
                );
            }
        }
    }

    fn object(&mut self, site: &Site, o: &Facets<'a>, n: &Facets<'a>) {
        let closed = matches!(o.additional, Additional::Closed);
        let prop_site = |name: &str| Site {
            location: format!("{}/properties/{}", site.location, escape(name)),
            ..site.clone()
        };
        for (name, _) in &o.properties {
            if !n.properties.iter().any(|(k, _)| k == name) {
                let was = if o.required.contains(name) {
                    "required"
                } else {
                    "optional"
                };
                self.at(
                    &prop_site(name),
                    &r::PROPERTY_REMOVED,
                    format_args!("{was} property `{name}` removed"),
                );
            }
        }
        for (name, schema) in &n.properties {
            if o.properties.iter().any(|(k, _)| k == name) {
                continue;
            }
            let (rule, word) = if n.required.contains(name) {
                (&r::PROPERTY_ADDED_REQUIRED, "required")
            } else if closed {
                (&r::PROPERTY_ADDED_TO_CLOSED, "optional")
            } else {
                (&r::PROPERTY_ADDED, "optional")
            };
            self.at(
                &prop_site(name),
                rule,
                format_args!("{word} property `{name}` ({}) added", summary(*schema)),
            );
        }
        for (name, old_schema) in &o.properties {
            let Some((_, new_schema)) = n.properties.iter().find(|(k, _)| k == name) else {
                continue;
            };
            let child = site.child(&format!("properties/{}", escape(name)), &format!(".{name}"));
            match (o.required.contains(name), n.required.contains(name)) {
                (false, true) => self.at(&child, &r::PROPERTY_BECAME_REQUIRED, "became required"),
                (true, false) => self.at(&child, &r::PROPERTY_BECAME_OPTIONAL, "became optional"),
                _ => {}
            }
            self.node(&child, *old_schema, *new_schema);
        }
        match (o.additional, n.additional) {
            (Additional::Open, Additional::Closed) => self.at(
                site,
                &r::OBJECT_CLOSED,
                "closed (additionalProperties: false)",
            ),
            (Additional::Closed, Additional::Open) => self.at(
                site,
                &r::OBJECT_OPENED,
                "opened (additionalProperties: false removed)",
            ),
            (Additional::Open, Additional::Schema(s)) => self.at(
                site,
                &r::OBJECT_CLOSED,
                format_args!("additional properties restricted to {}", summary(s)),
            ),
            (Additional::Schema(_), Additional::Open) => self.at(
                site,
                &r::OBJECT_OPENED,
                "additional properties no longer restricted",
            ),
            (Additional::Closed, Additional::Schema(s)) => self.at(
                site,
                &r::OBJECT_OPENED,
                format_args!("additional properties of type {} now allowed", summary(s)),
            ),
            (Additional::Schema(_), Additional::Closed) => self.at(
                site,
                &r::OBJECT_CLOSED,
                "additional properties no longer allowed",
            ),
            (Additional::Schema(a), Additional::Schema(b)) => {
                self.node(&site.child("additionalProperties", "{}"), a, b)
            }
            (Additional::Open, Additional::Open) | (Additional::Closed, Additional::Closed) => {}
        }
    }

    /// Compare a `oneOf`/`anyOf`/`allOf` list. Members are matched by
    /// `$ref` name, inline members by position among the inline ones.
    fn composition(
        &mut self,
        site: &Site,
        keyword: &str,
        o: &[SRef<'a>],
        n: &[SRef<'a>],
        all_of: bool,
    ) {
        let keys = |list: &[SRef<'a>]| -> Vec<String> {
            let mut inline = 0;
            list.iter()
                .map(|s| match s {
                    SRef::Ref(r) => component_name(r).unwrap_or(r).to_owned(),
                    _ => {
                        inline += 1;
                        format!("inline #{inline}")
                    }
                })
                .collect()
        };
        let (ok, nk) = (keys(o), keys(n));
        let (more, fewer) = if all_of {
            (&r::COMPOSITION_NARROWED, &r::COMPOSITION_WIDENED)
        } else {
            (&r::COMPOSITION_WIDENED, &r::COMPOSITION_NARROWED)
        };
        let member = |key: &str, s: SRef<'_>| match s {
            SRef::Ref(_) => format!("`{key}`"),
            _ => format!("{key} ({})", summary(s)),
        };
        for (key, s) in ok.iter().zip(o) {
            if !nk.contains(key) {
                let member = member(key, *s);
                self.at(
                    site,
                    fewer,
                    format_args!("{keyword} member {member} removed"),
                );
            }
        }
        for (key, s) in nk.iter().zip(n) {
            if !ok.contains(key) {
                let member = member(key, *s);
                self.at(site, more, format_args!("{keyword} member {member} added"));
            }
        }
        for (i, key) in ok.iter().enumerate() {
            if let Some(j) = nk.iter().position(|k| k == key) {
                let child = site.child(&format!("{keyword}/{j}"), &format!("<{keyword} {key}>"));
                self.node(&child, o[i], n[j]);
            }
        }
    }

    // ------------------------------------------------------------ components

    fn components(&mut self) {
        let names = |spec: &OpenAPI| -> Vec<String> {
            spec.components
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
            let seen = self.visited.iter().any(|(x, y, _)| *x == a && *y == b);
            if !seen {
                self.component(&a, &b, Direction::Request);
                self.component(&a, &b, Direction::Response);
            }
        }
    }

    fn security_schemes(&mut self) {
        let normalized = |spec: &OpenAPI| -> BTreeMap<String, Value> {
            spec.components
                .iter()
                .flat_map(|c| c.security_schemes.iter())
                .map(|(name, s)| {
                    let mut v = serde_json::to_value(s).unwrap_or(Value::Null);
                    normalize_scheme(&mut v);
                    (name.clone(), v)
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
                let detail = format!("security scheme `{name}` changed: {}", scheme_summary(o, n));
                self.record(
                    &subject,
                    &location,
                    &r::SECURITY_SCHEME_CHANGED,
                    detail,
                    None,
                );
            }
        }
    }
}

/// Drop descriptions (and scope descriptions) from a security scheme's JSON.
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

/// Which top-level keys of a security scheme differ.
fn scheme_summary(o: &Value, n: &Value) -> String {
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
    changed.join(", ")
}

fn join_code(items: &[&String]) -> String {
    items
        .iter()
        .map(|s| format!("`{s}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codegen::parse_spec;
    use crate::diff::rules::RULES;

    /// A small spec exercising both directions: `Thing` only in responses,
    /// `ThingInput` (closed) and `Color` only in requests, `Kind` in both.
    const BASE: &str = r##"
openapi: 3.0.3
info: {title: T, version: "1"}
security: [{key: []}]
paths:
  /things/{id}:
    get:
      operationId: getThing
      parameters:
        - {name: id, in: path, required: true, schema: {type: string}}
        - {name: limit, in: query, required: false, schema: {type: integer, format: int32, minimum: 1, maximum: 100}}
      responses:
        "200": {description: ok, content: {application/json: {schema: {$ref: "#/components/schemas/Thing"}}}}
        4XX: {description: e, content: {application/json: {schema: {$ref: "#/components/schemas/Error"}}}}
    put:
      operationId: putThing
      parameters:
        - {name: id, in: path, required: true, schema: {type: string}}
      requestBody:
        required: true
        content: {application/json: {schema: {$ref: "#/components/schemas/ThingInput"}}}
      responses:
        "204": {description: done}
        4XX: {description: e, content: {application/json: {schema: {$ref: "#/components/schemas/Error"}}}}
components:
  securitySchemes:
    key: {type: apiKey, in: header, name: X-Key}
  schemas:
    Thing:
      type: object
      required: [id]
      properties:
        id: {type: string}
        kind: {$ref: "#/components/schemas/Kind"}
        size: {type: integer, format: int32}
        note: {nullable: true, allOf: [{$ref: "#/components/schemas/Note"}]}
        tags: {type: array, items: {type: string}}
        parent: {$ref: "#/components/schemas/Thing"}
    ThingInput:
      type: object
      additionalProperties: false
      required: [name]
      properties:
        name: {type: string, maxLength: 10}
        kind: {$ref: "#/components/schemas/Kind"}
        color: {$ref: "#/components/schemas/Color"}
    Kind: {type: string, enum: [a, b, c]}
    Color: {type: string, enum: [red, green]}
    Note: {type: string}
    Error: {type: object, properties: {message: {type: string}}}
"##;

    /// One row per rule: the edits to `BASE` and the class the rule's change
    /// must get.
    struct Case {
        rule: &'static str,
        /// Edits to `BASE` giving the base side (usually none).
        base: &'static [(&'static str, &'static str)],
        /// Edits to `BASE` giving the new side.
        edits: &'static [(&'static str, &'static str)],
        class: Class,
    }

    use Class::{Clients, ClientsAndServers as Both, Compatible, Servers};

    const GET_LIMIT: &str = "        - {name: limit, in: query, required: false, schema: {type: integer, format: int32, minimum: 1, maximum: 100}}\n";
    const NAME: &str = "name: {type: string, maxLength: 10}";
    const SIZE: &str = "size: {type: integer, format: int32}";
    const NOTE: &str = "note: {nullable: true, allOf: [{$ref: \"#/components/schemas/Note\"}]}";
    const ONE_OF_2: &str =
        "note: {oneOf: [{$ref: \"#/components/schemas/Note\"}, {type: integer}]}";
    const ONE_OF_3: &str =
        "note: {oneOf: [{$ref: \"#/components/schemas/Note\"}, {type: integer}, {type: boolean}]}";
    const PUT_OP: &str = "    put:\n      operationId: putThing\n      parameters:\n        - {name: id, in: path, required: true, schema: {type: string}}\n      requestBody:\n        required: true\n        content: {application/json: {schema: {$ref: \"#/components/schemas/ThingInput\"}}}\n      responses:\n        \"204\": {description: done}\n        4XX: {description: e, content: {application/json: {schema: {$ref: \"#/components/schemas/Error\"}}}}\n";

    #[rustfmt::skip]
    const CASES: &[Case] = &[
        Case { base: &[], rule: "operation-removed", edits: &[(PUT_OP, "")], class: Clients },
        Case { base: &[], rule: "operation-added", edits: &[("paths:\n", "paths:\n  /ping:\n    get:\n      operationId: ping\n      responses: {\"204\": {description: ok}}\n")], class: Compatible },
        Case { base: &[], rule: "operation-id-changed", edits: &[("operationId: getThing", "operationId: fetchThing")], class: Clients },
        Case { base: &[], rule: "operation-route-changed", edits: &[("/things/{id}:", "/items/{id}:")], class: Both },
        Case { base: &[], rule: "deprecated", edits: &[("      operationId: getThing\n", "      operationId: getThing\n      deprecated: true\n")], class: Compatible },
        Case { base: &[("Note: {type: string}", "Note: {type: string, deprecated: true}")], rule: "undeprecated", edits: &[], class: Compatible },
        Case { base: &[], rule: "security-tightened", edits: &[("security: [{key: []}]", "security: [{key: [admin]}]")], class: Clients },
        Case { base: &[], rule: "security-relaxed", edits: &[("security: [{key: []}]", "security: [{key: []}, {}]")], class: Servers },
        Case { base: &[], rule: "security-scheme-changed", edits: &[("name: X-Key}", "name: X-Api-Key}")], class: Both },
        Case { base: &[], rule: "parameter-added", edits: &[(GET_LIMIT, "        - {name: limit, in: query, required: false, schema: {type: integer, format: int32, minimum: 1, maximum: 100}}\n        - {name: q, in: query, schema: {type: string}}\n")], class: Compatible },
        Case { base: &[], rule: "parameter-added-required", edits: &[(GET_LIMIT, "        - {name: limit, in: query, required: false, schema: {type: integer, format: int32, minimum: 1, maximum: 100}}\n        - {name: q, in: query, required: true, schema: {type: string}}\n")], class: Clients },
        Case { base: &[], rule: "parameter-removed", edits: &[(GET_LIMIT, "")], class: Clients },
        Case { base: &[], rule: "parameter-renamed", edits: &[("/things/{id}:", "/things/{thingId}:"), ("{name: id, in: path", "{name: thingId, in: path"), ("{name: id, in: path", "{name: thingId, in: path")], class: Clients },
        Case { base: &[], rule: "parameter-became-required", edits: &[("name: limit, in: query, required: false", "name: limit, in: query, required: true")], class: Clients },
        Case { base: &[("name: limit, in: query, required: false", "name: limit, in: query, required: true")], rule: "parameter-became-optional", edits: &[], class: Servers },
        Case { base: &[], rule: "request-body-added", edits: &[("      operationId: getThing\n", "      operationId: getThing\n      requestBody: {content: {application/json: {schema: {type: string}}}}\n")], class: Compatible },
        Case { base: &[], rule: "request-body-added-required", edits: &[("      operationId: getThing\n", "      operationId: getThing\n      requestBody: {required: true, content: {application/json: {schema: {type: string}}}}\n")], class: Clients },
        Case { base: &[], rule: "request-body-removed", edits: &[("      requestBody:\n        required: true\n        content: {application/json: {schema: {$ref: \"#/components/schemas/ThingInput\"}}}\n", "")], class: Clients },
        Case { base: &[("      requestBody:\n        required: true\n", "      requestBody:\n        required: false\n")], rule: "request-body-became-required", edits: &[], class: Clients },
        Case { base: &[], rule: "request-body-became-optional", edits: &[("      requestBody:\n        required: true\n", "      requestBody:\n        required: false\n")], class: Servers },
        Case { base: &[], rule: "response-added", edits: &[("        \"204\": {description: done}\n", "        \"204\": {description: done}\n        \"202\": {description: accepted}\n")], class: Clients },
        Case { base: &[], rule: "response-removed", edits: &[("        \"204\": {description: done}\n", "        \"200\": {description: done}\n")], class: Servers },
        Case { base: &[], rule: "response-body-added", edits: &[("\"204\": {description: done}", "\"204\": {description: done, content: {application/json: {schema: {type: string}}}}")], class: Compatible },
        Case { base: &[], rule: "response-body-removed", edits: &[("4XX: {description: e, content: {application/json: {schema: {$ref: \"#/components/schemas/Error\"}}}}\n    put:", "4XX: {description: e}\n    put:")], class: Clients },
        Case { base: &[], rule: "media-type-added", edits: &[("content: {application/json: {schema: {$ref: \"#/components/schemas/ThingInput\"}}}", "content: {application/json: {schema: {$ref: \"#/components/schemas/ThingInput\"}}, application/x-www-form-urlencoded: {schema: {$ref: \"#/components/schemas/ThingInput\"}}}")], class: Servers },
        Case { base: &[], rule: "media-type-removed", edits: &[("\"200\": {description: ok, content: {application/json:", "\"200\": {description: ok, content: {application/vnd.thing+json:")], class: Servers },
        Case { base: &[], rule: "property-added", edits: &[(SIZE, "size: {type: integer, format: int32}\n        weight: {type: number}")], class: Compatible },
        Case { base: &[], rule: "property-added-to-closed-object", edits: &[(NAME, "name: {type: string, maxLength: 10}\n        extra: {type: string}")], class: Servers },
        Case { base: &[], rule: "property-added-required", edits: &[(NAME, "name: {type: string, maxLength: 10}\n        extra: {type: string}"), ("required: [name]", "required: [name, extra]")], class: Clients },
        Case { base: &[], rule: "property-removed", edits: &[("        tags: {type: array, items: {type: string}}\n", "")], class: Clients },
        Case { base: &[], rule: "property-became-required", edits: &[("required: [id]", "required: [id, size]")], class: Servers },
        Case { base: &[], rule: "property-became-optional", edits: &[("required: [id]", "required: []")], class: Clients },
        Case { base: &[], rule: "object-closed", edits: &[("Error: {type: object, properties", "Error: {type: object, additionalProperties: false, properties")], class: Servers },
        Case { base: &[], rule: "object-opened", edits: &[("      additionalProperties: false\n", "")], class: Servers },
        Case { base: &[], rule: "type-changed", edits: &[(SIZE, "size: {type: string}")], class: Both },
        Case { base: &[], rule: "format-narrowed", edits: &[("id: {type: string}", "id: {type: string, format: uuid}")], class: Servers },
        Case { base: &[], rule: "format-widened", edits: &[(SIZE, "size: {type: integer, format: int64}")], class: Clients },
        Case { base: &[("id: {type: string}", "id: {type: string, format: date}")], rule: "format-changed", edits: &[("id: {type: string}", "id: {type: string, format: uuid}")], class: Both },
        Case { base: &[], rule: "enum-narrowed", edits: &[("enum: [red, green]", "enum: [red]")], class: Clients },
        Case { base: &[], rule: "enum-widened", edits: &[("enum: [a, b, c]", "enum: [a, b, c, d]")], class: Both },
        Case { base: &[], rule: "bound-narrowed", edits: &[("maximum: 100", "maximum: 50")], class: Clients },
        Case { base: &[], rule: "bound-widened", edits: &[("maxLength: 10", "maxLength: 20")], class: Servers },
        Case { base: &[("Note: {type: string}", "Note: {type: string, pattern: \"^a\"}")], rule: "constraint-changed", edits: &[("Note: {type: string}", "Note: {type: string, pattern: \"^b\"}")], class: Both },
        Case { base: &[], rule: "nullable-removed", edits: &[("note: {nullable: true, allOf", "note: {allOf")], class: Servers },
        Case { base: &[], rule: "nullable-added", edits: &[("id: {type: string}", "id: {type: string, nullable: true}")], class: Clients },
        Case { base: &[(NOTE, ONE_OF_3)], rule: "composition-narrowed", edits: &[(NOTE, ONE_OF_2)], class: Servers },
        Case { base: &[(NOTE, ONE_OF_2)], rule: "composition-widened", edits: &[(NOTE, ONE_OF_3)], class: Clients },
        Case { base: &[], rule: "default-changed", edits: &[("minimum: 1, maximum: 100}", "minimum: 1, maximum: 100, default: 10}")], class: Clients },
        Case { base: &[], rule: "schema-replaced", edits: &[("color: {$ref: \"#/components/schemas/Color\"}", "color: {type: string, enum: [red, green]}")], class: Clients },
        Case { base: &[], rule: "schema-added", edits: &[("    Note: {type: string}\n", "    Note: {type: string}\n    Spare: {type: boolean}\n")], class: Compatible },
        Case { base: &[("    Note: {type: string}\n", "    Note: {type: string}\n    Spare: {type: boolean}\n")], rule: "schema-removed", edits: &[], class: Clients },
        Case { base: &[], rule: "schema-renamed", edits: &[("Color: {type: string", "Colour: {type: string"), ("schemas/Color\"", "schemas/Colour\"")], class: Clients },
    ];

    fn diff(old: &str, new: &str) -> Vec<Change> {
        compare(&parse_spec(old).unwrap(), &parse_spec(new).unwrap())
    }

    fn edited(edits: &[(&str, &str)]) -> String {
        let mut spec = BASE.to_owned();
        for (from, to) in edits {
            assert!(spec.contains(from), "edit target not found: {from:?}");
            spec = spec.replacen(from, to, 1);
        }
        spec
    }

    #[test]
    fn every_rule_has_a_case() {
        for rule in RULES {
            assert!(
                CASES.iter().any(|c| c.rule == rule.id),
                "rule {} has no case in CASES",
                rule.id
            );
        }
        for case in CASES {
            assert!(r::find(case.rule).is_some(), "unknown rule {}", case.rule);
        }
    }

    #[test]
    fn each_rule_is_detected_and_classed() {
        let mut failures = Vec::new();
        for case in CASES {
            let (old, new) = (edited(case.base), edited(case.edits));
            let changes = diff(&old, &new);
            let shown: Vec<String> = changes
                .iter()
                .map(|c| {
                    format!(
                        "{} {}: {} -> {}",
                        c.rule.id,
                        c.location,
                        c.message(),
                        c.class()
                    )
                })
                .collect();
            // `DIFF_CASES_SHOW=1 cargo test -p xtask each_rule -- --nocapture`
            // prints what every case finds.
            if std::env::var_os("DIFF_CASES_SHOW").is_some() {
                eprintln!("== {}\n{}", case.rule, shown.join("\n"));
            }
            match changes.iter().find(|c| c.rule.id == case.rule) {
                None => failures.push(format!("{}: not detected; got {shown:#?}", case.rule)),
                Some(c) if c.class() != case.class => failures.push(format!(
                    "{}: class {} (expected {}); got {shown:#?}",
                    case.rule,
                    c.class(),
                    case.class
                )),
                Some(_) => {}
            }
        }
        assert!(failures.is_empty(), "{}", failures.join("\n"));
    }

    #[test]
    fn identical_specs_have_no_changes() {
        assert_eq!(diff(BASE, BASE), vec![]);
        // Descriptions, examples and summaries are not changes.
        let documented = BASE
            .replace(
                "Note: {type: string}",
                "Note: {type: string, description: A note., example: hi}",
            )
            .replace(
                "      operationId: getThing\n",
                "      operationId: getThing\n      summary: Get it.\n",
            );
        assert_eq!(diff(BASE, &documented), vec![]);
    }

    #[test]
    fn a_component_used_both_ways_gets_both_classes() {
        let changes = diff(BASE, &BASE.replace("enum: [a, b, c]", "enum: [a, b]"));
        assert_eq!(changes.len(), 1, "{changes:#?}");
        let c = &changes[0];
        assert_eq!(c.subject, Subject::Schema("Kind".into()));
        assert_eq!(c.location, "#/components/schemas/Kind");
        assert_eq!(c.class(), Class::ClientsAndServers);
        assert_eq!(
            c.message(),
            "`Kind`: enum values removed: \"c\" [request: breaking for clients; response: breaking for servers]"
        );
    }

    #[test]
    fn nullable_all_of_wrappers_are_unwrapped() {
        // The wrapper's nullable belongs to the property; the wrapped
        // component's own change is reported once, against the component.
        let changes = diff(
            BASE,
            &BASE
                .replace("note: {nullable: true, allOf", "note: {allOf")
                .replace("Note: {type: string}", "Note: {type: string, maxLength: 5}"),
        );
        let shown: Vec<String> = changes
            .iter()
            .map(|c| format!("{} {}", c.location, c.message()))
            .collect();
        assert_eq!(
            shown,
            vec![
                "#/components/schemas/Note `Note`: maxLength 5 added [response]",
                "#/components/schemas/Thing/properties/note `Thing.note`: no longer nullable [response]",
            ]
        );
    }

    #[test]
    fn recursive_schemas_terminate() {
        // `Thing.parent` refers to `Thing` itself.
        let changes = diff(
            BASE,
            &BASE.replace(SIZE, "size: {type: integer, format: int64}"),
        );
        assert_eq!(changes.len(), 1, "{changes:#?}");
        assert_eq!(
            changes[0].detail,
            "`Thing.size`: format changed from `int32` to `int64`"
        );
    }

    #[test]
    fn a_status_covered_by_a_range_is_not_a_new_response() {
        let changes = diff(
            BASE,
            &BASE.replace(
                "        \"204\": {description: done}\n",
                "        \"204\": {description: done}\n        \"404\": {description: e, content: {application/json: {schema: {$ref: \"#/components/schemas/Error\"}}}}\n",
            ),
        );
        assert_eq!(changes, vec![]);
    }

    #[test]
    fn a_missing_base_means_everything_is_added() {
        let changes = compare(&OpenAPI::default(), &parse_spec(BASE).unwrap());
        assert!(
            changes.iter().all(|c| !c.class().is_breaking()),
            "{changes:#?}"
        );
        let ops = changes
            .iter()
            .filter(|c| c.rule.id == "operation-added")
            .count();
        assert_eq!(ops, 2);
    }

    #[test]
    fn done_criteria() {
        // Removing an operation, adding a required parameter or narrowing an
        // enum is breaking; adding an optional field is not, and is listed.
        for (edit, rule) in [
            ((PUT_OP, ""), "operation-removed"),
            (
                (
                    GET_LIMIT,
                    "        - {name: q, in: query, required: true, schema: {type: string}}\n",
                ),
                "parameter-added-required",
            ),
            (("enum: [red, green]", "enum: [red]"), "enum-narrowed"),
        ] {
            let changes = diff(BASE, &edited(&[edit]));
            assert!(
                changes
                    .iter()
                    .any(|c| c.rule.id == rule && c.class().is_breaking()),
                "{rule}: {changes:#?}"
            );
        }
        let changes = diff(
            BASE,
            &edited(&[(
                SIZE,
                "size: {type: integer, format: int32}\n        weight: {type: number}",
            )]),
        );
        assert_eq!(changes.len(), 1);
        assert_eq!(changes[0].rule.id, "property-added");
        assert!(!changes[0].class().is_breaking());
    }
}

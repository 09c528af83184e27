//! Schemas: types, formats, enums, bounds, objects and compositions, per
//! direction.

use std::collections::BTreeSet;

use openapiv3::{AdditionalProperties, Schema, SchemaKind, Type};
use serde_json::Value;

use super::{Differ, Root, SCHEMA_PREFIX, Site, Subject, show, show_list, summary};
use crate::diff::rules::{self as r, Direction};
use crate::openapi::resolve::MAX_DEPTH;
use crate::openapi::{Document, Meta, SchemaRef, escape, unwrap_wrappers};

/// Name of a component schema reference (`#/components/schemas/X` → `X`).
fn schema_name(reference: &str) -> Option<&str> {
    SchemaRef::Ref(reference).component()
}

// -------------------------------------------------------------------- facets

/// The constraints of one schema, read off the `openapiv3` types.
#[derive(Default)]
struct Facets<'a> {
    ty: Option<String>,
    format: Option<String>,
    enumeration: Option<Vec<Value>>,
    /// The values of an `x-extensible-enum` (an open enum).
    extensible: Option<Vec<Value>>,
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
    properties: Vec<(&'a str, SchemaRef<'a>)>,
    required: BTreeSet<&'a str>,
    has_object_keywords: bool,
    additional: Additional<'a>,
    items: Option<SchemaRef<'a>>,
    one_of: Vec<SchemaRef<'a>>,
    any_of: Vec<SchemaRef<'a>>,
    all_of: Vec<SchemaRef<'a>>,
    not: Option<Value>,
    discriminator: Option<Value>,
}

#[derive(Default, Clone, Copy)]
enum Additional<'a> {
    #[default]
    Open,
    Closed,
    Schema(SchemaRef<'a>),
}

impl<'a> Facets<'a> {
    pub(super) fn of(schema: Option<&'a Schema>) -> Facets<'a> {
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
            extensible: schema
                .schema_data
                .extensions
                .get("x-extensible-enum")
                .and_then(Value::as_array)
                .cloned(),
            ..Facets::default()
        };
        let additional = |ap: &'a Option<AdditionalProperties>| match ap {
            None | Some(AdditionalProperties::Any(true)) => Additional::Open,
            Some(AdditionalProperties::Any(false)) => Additional::Closed,
            Some(AdditionalProperties::Schema(s)) => {
                Additional::Schema(SchemaRef::from(s.as_ref()))
            }
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
            SchemaKind::Type(Type::Array(a)) => f.items = a.items.as_ref().map(SchemaRef::from),
            SchemaKind::OneOf { one_of } => f.one_of = one_of.iter().map(SchemaRef::from).collect(),
            SchemaKind::AnyOf { any_of } => f.any_of = any_of.iter().map(SchemaRef::from).collect(),
            SchemaKind::AllOf { all_of } => f.all_of = all_of.iter().map(SchemaRef::from).collect(),
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
                f.items = any.items.as_ref().map(SchemaRef::from);
                f.one_of = any.one_of.iter().map(SchemaRef::from).collect();
                f.any_of = any.any_of.iter().map(SchemaRef::from).collect();
                f.all_of = any.all_of.iter().map(SchemaRef::from).collect();
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
    pub(super) fn kind_name(&self) -> String {
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

impl<'a> Differ<'a> {
    /// Compare two schema positions at `site`.
    pub(super) fn node(&mut self, site: &Site, old: SchemaRef<'a>, new: SchemaRef<'a>) {
        if self.depth >= MAX_DEPTH {
            return;
        }
        self.depth += 1;
        self.node_inner(site, old, new);
        self.depth -= 1;
    }

    fn node_inner(&mut self, site: &Site, old: SchemaRef<'a>, new: SchemaRef<'a>) {
        let (o, o_meta) = unwrap_wrappers(old);
        let (n, n_meta) = unwrap_wrappers(new);
        if let (SchemaRef::Ref(a), SchemaRef::Ref(b)) = (o, n)
            && self.same_component(a, b)
        {
            // Same component: only the wrappers' metadata is this site's; the
            // component itself is compared (once per direction) on its own.
            self.meta(site, &o_meta, &n_meta);
            self.component(a, b, site.direction);
            return;
        }
        let key_of = |s: SchemaRef<'_>| match s {
            SchemaRef::Ref(r) => Some(r.to_owned()),
            _ => None,
        };
        let (ok, nk) = (key_of(o), key_of(n));
        match (&ok, &nk) {
            (Some(a), Some(b)) => self.at(
                site,
                &r::SCHEMA_REPLACED,
                format_args!(
                    "type `{}` replaced by `{}`",
                    schema_name(a).unwrap_or(a),
                    schema_name(b).unwrap_or(b)
                ),
            ),
            (Some(a), None) => self.at(
                site,
                &r::SCHEMA_REPLACED,
                format_args!(
                    "reference to `{}` replaced by an inline schema",
                    schema_name(a).unwrap_or(a)
                ),
            ),
            (None, Some(b)) => self.at(
                site,
                &r::SCHEMA_REPLACED,
                format_args!(
                    "inline schema replaced by a reference to `{}`",
                    schema_name(b).unwrap_or(b)
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
        let (os, mut om) = self.old.flatten(o);
        let (ns, mut nm) = self.new.flatten(n);
        om.merge(o_meta);
        nm.merge(n_meta);
        self.meta(site, &om, &nm);
        self.facets(site, Facets::of(os), Facets::of(ns));
    }

    /// Compare component `a` (base) with `b` (new; same name unless renamed).
    pub(super) fn component(&mut self, a: &str, b: &str, direction: Direction) {
        let (Some(an), Some(bn)) = (schema_name(a), schema_name(b)) else {
            return;
        };
        if !self.visited.insert((a.to_owned(), b.to_owned(), direction)) {
            return;
        }
        let (Some(os), Some(ns)) = (self.old.schema_component(an), self.new.schema_component(bn))
        else {
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
        match (ok.as_str(), nk.as_str()) {
            (a, b) if a == b => {}
            ("number", "integer") => self.at(
                site,
                &r::TYPE_NARROWED,
                "type narrowed from number to integer",
            ),
            ("integer", "number") => self.at(
                site,
                &r::TYPE_WIDENED,
                "type widened from integer to number",
            ),
            // No type or composition: any value. Gaining one narrows,
            // losing one widens; the other keywords are still compared.
            ("any", to) => self.at(
                site,
                &r::TYPE_NARROWED,
                format_args!("type restricted from any value to {to}"),
            ),
            (from, "any") => self.at(
                site,
                &r::TYPE_WIDENED,
                format_args!("type widened from {from} to any value"),
            ),
            _ => {
                self.at(
                    site,
                    &r::TYPE_CHANGED,
                    format_args!("type changed from {ok} to {nk}"),
                );
                return;
            }
        }
        self.format(site, &o, &n);
        self.enumeration(site, &o, &n);
        self.extensible_enumeration(site, &o, &n);
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

    /// Values of an `x-extensible-enum` removed or added.
    fn extensible_enumeration(&mut self, site: &Site, o: &Facets<'a>, n: &Facets<'a>) {
        let empty = Vec::new();
        let (a, b) = (
            o.extensible.as_ref().unwrap_or(&empty),
            n.extensible.as_ref().unwrap_or(&empty),
        );
        let removed: Vec<&Value> = a.iter().filter(|v| !b.contains(v)).collect();
        let added: Vec<&Value> = b.iter().filter(|v| !a.contains(v)).collect();
        if !removed.is_empty() && n.extensible.is_some() {
            self.at(
                site,
                &r::EXTENSIBLE_ENUM_NARROWED,
                format_args!("x-extensible-enum values removed: {}", show_list(&removed)),
            );
        }
        if !added.is_empty() {
            self.at(
                site,
                &r::EXTENSIBLE_ENUM_WIDENED,
                format_args!("x-extensible-enum values added: {}", show_list(&added)),
            );
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
        // Only the properties that travel in this direction: a `readOnly`
        // property is not in requests, a `writeOnly` one not in responses.
        let (old_props, old_hidden) = self.visible(self.old, &o.properties, site.direction);
        let (new_props, new_hidden) = self.visible(self.new, &n.properties, site.direction);
        let note = |hidden: &[(&str, &'static str)], name: &str| {
            hidden
                .iter()
                .find(|(k, _)| *k == name)
                .map(|(_, why)| format!(" (now {why})"))
                .unwrap_or_default()
        };
        for (name, _) in &old_props {
            if !new_props.iter().any(|(k, _)| k == name) {
                let was = if o.required.contains(name) {
                    "required"
                } else {
                    "optional"
                };
                let why = note(&new_hidden, name);
                self.at(
                    &prop_site(name),
                    &r::PROPERTY_REMOVED,
                    format_args!("{was} property `{name}` removed{why}"),
                );
            }
        }
        for (name, schema) in &new_props {
            if old_props.iter().any(|(k, _)| k == name) {
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
                format_args!(
                    "{word} property `{name}` ({}) added{}",
                    summary(*schema),
                    old_hidden
                        .iter()
                        .find(|(k, _)| k == name)
                        .map(|(_, why)| format!(" (no longer {why})"))
                        .unwrap_or_default()
                ),
            );
        }
        for (name, old_schema) in &old_props {
            let Some((_, new_schema)) = new_props.iter().find(|(k, _)| k == name) else {
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

    /// The properties of an object that travel in `direction`, and the
    /// names left out with why (`readOnly`, `writeOnly`).
    #[allow(clippy::type_complexity)]
    fn visible(
        &self,
        doc: &'a Document,
        properties: &[(&'a str, SchemaRef<'a>)],
        direction: Direction,
    ) -> (Vec<(&'a str, SchemaRef<'a>)>, Vec<(&'a str, &'static str)>) {
        let mut shown = Vec::new();
        let mut hidden = Vec::new();
        for (name, schema) in properties {
            let (_, meta) = doc.flatten(*schema);
            match direction {
                Direction::Request if meta.read_only => hidden.push((*name, "readOnly")),
                Direction::Response if meta.write_only => hidden.push((*name, "writeOnly")),
                _ => shown.push((*name, *schema)),
            }
        }
        (shown, hidden)
    }

    /// Compare a `oneOf`/`anyOf`/`allOf` list. Members are matched by
    /// `$ref` name, inline members by position among the inline ones.
    fn composition(
        &mut self,
        site: &Site,
        keyword: &str,
        o: &[SchemaRef<'a>],
        n: &[SchemaRef<'a>],
        all_of: bool,
    ) {
        let keys = |list: &[SchemaRef<'a>]| -> Vec<String> {
            let mut inline = 0;
            list.iter()
                .map(|s| match s {
                    SchemaRef::Ref(r) => schema_name(r).unwrap_or(r).to_owned(),
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
        let member = |key: &str, s: SchemaRef<'_>| match s {
            SchemaRef::Ref(_) => format!("`{key}`"),
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
}

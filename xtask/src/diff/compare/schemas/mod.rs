//! Schemas: each schema position compared per direction. This file walks
//! (references, wrappers, recursion, components) and compares the type or
//! composition keyword; each other rule has a file of its own: wrapper
//! metadata (`meta.rs`), formats (`format.rs`), enums (`enums.rs`), bounds
//! (`bounds.rs`), objects (`object.rs`) and compositions (`composition.rs`),
//! over the constraints read by `facets.rs`.

mod bounds;
mod composition;
mod enums;
mod facets;
mod format;
mod meta;
mod object;

use super::differ::{Differ, Root, SCHEMA_PREFIX, Site, Subject, summary};
use crate::diff::rules::{self as r, Direction};
use crate::openapi::resolve::MAX_DEPTH;
use crate::openapi::{SchemaRef, escape, unwrap_wrappers};
use facets::Facets;

/// Name of a component schema reference (`#/components/schemas/X` → `X`).
fn schema_name(reference: &str) -> Option<&str> {
    SchemaRef::Ref(reference).component()
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
        let (o, mut o_meta) = unwrap_wrappers(old);
        let (n, mut n_meta) = unwrap_wrappers(new);
        if let (SchemaRef::Ref(a), SchemaRef::Ref(b)) = (o, n)
            && self.same_component(a, b)
        {
            // Same component: only the wrappers' metadata is this site's; the
            // component itself is compared (once per direction) on its own.
            // A parameter's default is its schema's wherever that schema is
            // defined: a default the component gains is the parameter's too.
            if site.is_parameter_value() {
                o_meta.default = self.old.flatten(old).1.default;
                n_meta.default = self.new.flatten(new).1.default;
            }
            self.meta(site, &o_meta, &n_meta);
            self.component(a, b, site.direction, site.text);
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
                site.text,
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

    /// Compare component `a` (base) with `b` (new; same name unless renamed)
    /// where its values flow in `direction`, as typed JSON or as `text`.
    pub(super) fn component(&mut self, a: &str, b: &str, direction: Direction, text: bool) {
        let (Some(an), Some(bn)) = (schema_name(a), schema_name(b)) else {
            return;
        };
        if !self
            .visited
            .insert((a.to_owned(), b.to_owned(), direction, text))
        {
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
            text,
        };
        self.node(&site, os.into(), ns.into());
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
            // Where values travel as text, every value reads as a string:
            // to `string` widens, from `string` narrows (oasdiff: a loosely
            // typed media type). The shapes differ: only the format is
            // still worth comparing.
            (from, "string") if site.text => {
                self.at(
                    site,
                    &r::TYPE_WIDENED,
                    format_args!("type widened from {from} to string (the value travels as text)"),
                );
                self.format(site, &o, &n);
                return;
            }
            ("string", to) if site.text => {
                self.at(
                    site,
                    &r::TYPE_NARROWED,
                    format_args!("type narrowed from string to {to} (the value travels as text)"),
                );
                self.format(site, &o, &n);
                return;
            }
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
            self.at(site, &r::DISCRIMINATOR_CHANGED, "discriminator changed");
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::diff::compare::tests::{BASE, SIZE, diff};
    use crate::diff::rules::Class;

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
    fn number_to_integer_in_a_request_breaks_clients_only() {
        let base = BASE.replace(
            "maxLength: 10}",
            "maxLength: 10}\n        weight: {type: number}",
        );
        let edited = base.replace("weight: {type: number}", "weight: {type: integer}");
        let changes = diff(&base, &edited);
        assert_eq!(changes.len(), 1, "{changes:#?}");
        assert_eq!(changes[0].rule.id, "type-narrowed");
        assert_eq!(changes[0].class(), Class::Clients);
    }

    #[test]
    fn a_schema_gaining_or_losing_its_type_narrows_or_widens() {
        // `{}` accepts any value: a type narrows it (request: clients break),
        // and dropping the type widens it (response: clients break).
        let base = BASE.replace("maxLength: 10}", "maxLength: 10}\n        extra: {}");
        let typed = base.replace("extra: {}", "extra: {type: string}");
        let changes = diff(&base, &typed);
        assert_eq!(changes.len(), 1, "{changes:#?}");
        assert_eq!(
            (changes[0].rule.id, changes[0].class()),
            ("type-narrowed", Class::Clients)
        );
        let untyped = BASE.replace("id: {type: string}", "id: {}");
        let changes = diff(BASE, &untyped);
        assert_eq!(changes.len(), 1, "{changes:#?}");
        assert_eq!(
            (changes[0].rule.id, changes[0].class()),
            ("type-widened", Class::Clients)
        );
    }

    #[test]
    fn where_values_travel_as_text_a_change_to_or_from_string_widens_or_narrows() {
        // oasdiff's loosely typed media types: any value reads as a string.
        let body = |media: &str, ty: &str| {
            BASE.replace(
                "content: {application/json: {schema: {$ref: \"#/components/schemas/ThingInput\"}}}",
                &format!("content: {{{media}: {{schema: {{type: {ty}}}}}}}"),
            )
        };
        let verdict = |old: &str, new: &str| -> Vec<(&'static str, Class)> {
            diff(old, new)
                .iter()
                .map(|c| (c.rule.id, c.class()))
                .collect()
        };
        // Request: to string widens (old servers expect the object), from
        // string narrows (old clients send text).
        assert_eq!(
            verdict(
                &body("application/xml", "object"),
                &body("application/xml", "string")
            ),
            [("type-widened", Class::Servers)]
        );
        assert_eq!(
            verdict(
                &body("application/xml", "string"),
                &body("application/xml", "object")
            ),
            [("type-narrowed", Class::Clients)]
        );
        // In JSON the same edit changes the type.
        assert_eq!(
            verdict(
                &body("application/json", "object"),
                &body("application/json", "string")
            ),
            [("type-changed", Class::ClientsAndServers)]
        );
        assert_eq!(
            verdict(
                &body("application/problem+json", "object"),
                &body("application/problem+json", "string")
            ),
            [("type-changed", Class::ClientsAndServers)]
        );
        // A parameter is text on the wire.
        let param = BASE.replace(
            "{type: integer, format: int32, minimum: 1, maximum: 100}",
            "{type: string}",
        );
        assert_eq!(
            verdict(BASE, &param),
            [
                ("type-widened", Class::Servers),
                ("format-widened", Class::Servers)
            ]
        );
    }
}

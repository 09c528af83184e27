//! The one `$ref` resolver and the one wrapper rule.
//!
//! * [`Document::resolve`] follows a chain of local references
//!   (`#/components/<kind>/<name>`, a component may itself be a `$ref`) to the
//!   item, for every component kind ([`Component`]); a broken or cyclic chain
//!   resolves to `None`.
//! * A *wrapper* is a schema that is only a single-member `allOf`, `oneOf` or
//!   `anyOf` (`{nullable: true, allOf: [$ref: X]}`): it stands for its member,
//!   and its own `nullable`, `deprecated`, `default`, `readOnly` and
//!   `writeOnly` count for the value ([`unwrap_wrappers`], [`wrapped_reference`]).

use openapiv3::{
    Callback, Components, Example, Header, Link, Parameter, ReferenceOr, RequestBody, Response,
    Schema, SchemaKind, SecurityScheme,
};
use serde_json::Value;

use super::document::{Document, escape};

/// Deeper than any sane chain or schema; guards against pathological input.
pub const MAX_DEPTH: usize = 64;

/// A kind of reusable component (`components/<KIND>`).
pub trait Component: Sized {
    /// The key under `components`, e.g. `schemas`.
    const KIND: &'static str;
    /// The entry `name` of this kind's table.
    fn lookup<'a>(components: &'a Components, name: &str) -> Option<&'a ReferenceOr<Self>>;
}

macro_rules! component {
    ($($ty:ty => $kind:literal, $field:ident;)*) => {$(
        impl Component for $ty {
            const KIND: &'static str = $kind;
            fn lookup<'a>(c: &'a Components, name: &str) -> Option<&'a ReferenceOr<Self>> {
                c.$field.get(name)
            }
        }
    )*};
}

component! {
    Schema => "schemas", schemas;
    Parameter => "parameters", parameters;
    RequestBody => "requestBodies", request_bodies;
    Response => "responses", responses;
    Header => "headers", headers;
    Example => "examples", examples;
    Link => "links", links;
    Callback => "callbacks", callbacks;
    SecurityScheme => "securitySchemes", security_schemes;
}

/// A resolved reference.
#[derive(Debug, Clone, Copy)]
pub struct Resolved<'a, T> {
    /// The item at the end of the chain.
    pub item: &'a T,
    /// The last component name met on the way (`None` for an inline item).
    pub name: Option<&'a str>,
}

impl<T> Resolved<'_, T> {
    /// Pointer of the component the item came from, if it came from one.
    pub fn pointer(&self) -> Option<String>
    where
        T: Component,
    {
        self.name
            .map(|n| format!("#/components/{}/{}", T::KIND, escape(n)))
    }
}

/// The component name of a local reference of kind `T`
/// (`#/components/schemas/X` → `X`).
pub fn component_name<T: Component>(reference: &str) -> Option<&str> {
    reference
        .strip_prefix("#/components/")?
        .strip_prefix(T::KIND)?
        .strip_prefix('/')
}

impl Document {
    /// Follow `item` through `$ref`s to a component of the same kind.
    pub fn resolve<'a, T: Component>(
        &'a self,
        item: &'a ReferenceOr<T>,
    ) -> Option<Resolved<'a, T>> {
        let mut current = item;
        let mut name = None;
        for _ in 0..MAX_DEPTH {
            match current {
                ReferenceOr::Item(item) => return Some(Resolved { item, name }),
                ReferenceOr::Reference { reference } => {
                    let n = component_name::<T>(reference)?;
                    name = Some(n);
                    current = T::lookup(self.spec.components.as_ref()?, n)?;
                }
            }
        }
        None
    }

    /// The component schema `name`, if any.
    pub fn schema_component(&self, name: &str) -> Option<&ReferenceOr<Schema>> {
        Schema::lookup(self.spec.components.as_ref()?, name)
    }

    /// Follow `$ref`s and wrappers down to a concrete schema (`None` for any
    /// value or a broken reference); also returns the metadata met on the
    /// way, the final schema's own included.
    pub fn flatten<'a>(&'a self, s: SchemaRef<'a>) -> (Option<&'a Schema>, Meta) {
        let mut meta = Meta::default();
        let mut current = s;
        for _ in 0..MAX_DEPTH {
            let (inner, wrapper) = unwrap_wrappers(current);
            meta.merge(wrapper);
            match inner {
                SchemaRef::Any => return (None, meta),
                SchemaRef::Inline(schema) => {
                    meta.merge(Meta::of(schema));
                    return (Some(schema), meta);
                }
                SchemaRef::Ref(reference) => {
                    match component_name::<Schema>(reference).and_then(|n| self.schema_component(n))
                    {
                        Some(target) => current = SchemaRef::from(target),
                        None => return (None, meta),
                    }
                }
            }
        }
        (None, meta)
    }
}

/// A schema position: a `$ref`, an inline schema, or nothing (any value).
#[derive(Debug, Clone, Copy)]
pub enum SchemaRef<'a> {
    /// A `$ref` (the reference string).
    Ref(&'a str),
    /// An inline schema.
    Inline(&'a Schema),
    /// No schema: any value.
    Any,
}

impl<'a> From<&'a ReferenceOr<Schema>> for SchemaRef<'a> {
    fn from(r: &'a ReferenceOr<Schema>) -> Self {
        match r {
            ReferenceOr::Reference { reference } => SchemaRef::Ref(reference),
            ReferenceOr::Item(schema) => SchemaRef::Inline(schema),
        }
    }
}

impl<'a> From<&'a ReferenceOr<Box<Schema>>> for SchemaRef<'a> {
    fn from(r: &'a ReferenceOr<Box<Schema>>) -> Self {
        match r {
            ReferenceOr::Reference { reference } => SchemaRef::Ref(reference),
            ReferenceOr::Item(schema) => SchemaRef::Inline(schema),
        }
    }
}

impl<'a> SchemaRef<'a> {
    /// The component name of a `$ref` to `components/schemas`.
    pub fn component(&self) -> Option<&'a str> {
        match *self {
            SchemaRef::Ref(r) => component_name::<Schema>(r),
            _ => None,
        }
    }
}

/// The metadata of a value that matters to the contract.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Meta {
    /// `nullable: true` somewhere on the way.
    pub nullable: bool,
    /// `deprecated: true` somewhere on the way.
    pub deprecated: bool,
    /// `readOnly: true` somewhere on the way.
    pub read_only: bool,
    /// `writeOnly: true` somewhere on the way.
    pub write_only: bool,
    /// The outermost `default`.
    pub default: Option<Value>,
}

impl Meta {
    /// The metadata of one schema object.
    pub fn of(schema: &Schema) -> Meta {
        let data = &schema.schema_data;
        Meta {
            nullable: data.nullable,
            deprecated: data.deprecated,
            read_only: data.read_only,
            write_only: data.write_only,
            default: data.default.clone(),
        }
    }

    /// Add what an inner schema says (an outer `default` wins).
    pub fn merge(&mut self, other: Meta) {
        self.nullable |= other.nullable;
        self.deprecated |= other.deprecated;
        self.read_only |= other.read_only;
        self.write_only |= other.write_only;
        if self.default.is_none() {
            self.default = other.default;
        }
    }
}

/// The member of a wrapper schema: a schema that is only a single-member
/// `allOf`, `oneOf` or `anyOf`.
pub fn wrapped_reference(schema: &Schema) -> Option<&ReferenceOr<Schema>> {
    match &schema.schema_kind {
        SchemaKind::AllOf { all_of: list }
        | SchemaKind::OneOf { one_of: list }
        | SchemaKind::AnyOf { any_of: list }
            if list.len() == 1 =>
        {
            list.first()
        }
        _ => None,
    }
}

/// Unwrap wrappers (see [`wrapped_reference`]), collecting their metadata.
pub fn unwrap_wrappers(mut s: SchemaRef<'_>) -> (SchemaRef<'_>, Meta) {
    let mut meta = Meta::default();
    for _ in 0..MAX_DEPTH {
        let SchemaRef::Inline(schema) = s else { break };
        let Some(inner) = wrapped_reference(schema) else {
            break;
        };
        meta.merge(Meta::of(schema));
        s = SchemaRef::from(inner);
    }
    (s, meta)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::openapi::read;

    const DOC: &str = r##"
openapi: 3.0.3
info: {title: t, version: "1"}
paths: {}
components:
  schemas:
    A: {$ref: "#/components/schemas/B"}
    B: {nullable: true, allOf: [{$ref: "#/components/schemas/C"}]}
    C: {type: string, readOnly: true, default: x}
    Loop: {$ref: "#/components/schemas/Loop"}
  responses:
    R1: {$ref: "#/components/responses/R2"}
    R2: {description: two}
"##;

    #[test]
    fn chains_and_wrappers_resolve_to_the_concrete_schema() {
        let doc = read(DOC).unwrap();
        let (schema, meta) = doc.flatten(SchemaRef::Ref("#/components/schemas/A"));
        let schema = schema.expect("resolves");
        assert!(matches!(schema.schema_kind, SchemaKind::Type(_)));
        assert!(meta.nullable && meta.read_only);
        assert_eq!(meta.default, Some(Value::from("x")));
    }

    #[test]
    fn cycles_and_broken_references_resolve_to_nothing() {
        let doc = read(DOC).unwrap();
        assert!(
            doc.flatten(SchemaRef::Ref("#/components/schemas/Loop"))
                .0
                .is_none()
        );
        assert!(
            doc.flatten(SchemaRef::Ref("#/components/schemas/Nope"))
                .0
                .is_none()
        );
        let r: ReferenceOr<Response> = ReferenceOr::ref_("#/components/responses/R1");
        let resolved = doc.resolve(&r).unwrap();
        assert_eq!(resolved.item.description, "two");
        assert_eq!(resolved.name, Some("R2"));
        assert_eq!(
            resolved.pointer().as_deref(),
            Some("#/components/responses/R2")
        );
        let wrong_kind: ReferenceOr<Response> = ReferenceOr::ref_("#/components/schemas/A");
        assert!(doc.resolve(&wrong_kind).is_none());
    }
}

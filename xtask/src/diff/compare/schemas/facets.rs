//! The constraints of one schema, read off the `openapiv3` types: what the
//! schema rules compare.

use std::collections::BTreeSet;

use openapiv3::{AdditionalProperties, Schema, SchemaKind, Type};
use serde_json::Value;

use crate::openapi::SchemaRef;

/// The constraints of one schema, read off the `openapiv3` types.
#[derive(Default)]
pub(super) struct Facets<'a> {
    pub(super) ty: Option<String>,
    pub(super) format: Option<String>,
    pub(super) enumeration: Option<Vec<Value>>,
    /// The values of an `x-extensible-enum` (an open enum).
    pub(super) extensible: Option<Vec<Value>>,
    /// (value, exclusive, as written)
    pub(super) minimum: Option<(f64, bool, String)>,
    pub(super) maximum: Option<(f64, bool, String)>,
    pub(super) multiple_of: Option<f64>,
    pub(super) pattern: Option<String>,
    pub(super) min_length: Option<usize>,
    pub(super) max_length: Option<usize>,
    pub(super) min_items: Option<usize>,
    pub(super) max_items: Option<usize>,
    pub(super) unique_items: bool,
    pub(super) min_properties: Option<usize>,
    pub(super) max_properties: Option<usize>,
    pub(super) properties: Vec<(&'a str, SchemaRef<'a>)>,
    pub(super) required: BTreeSet<&'a str>,
    pub(super) has_object_keywords: bool,
    pub(super) additional: Additional<'a>,
    pub(super) items: Option<SchemaRef<'a>>,
    pub(super) one_of: Vec<SchemaRef<'a>>,
    pub(super) any_of: Vec<SchemaRef<'a>>,
    pub(super) all_of: Vec<SchemaRef<'a>>,
    pub(super) not: Option<Value>,
    pub(super) discriminator: Option<Value>,
}

#[derive(Default, Clone, Copy)]
pub(super) enum Additional<'a> {
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

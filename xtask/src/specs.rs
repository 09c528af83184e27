//! The table of OpenAPI specs the workspace generates clients from, and the
//! progenitor settings for each.

use anyhow::{Context, Result};
use openapiv3::{OpenAPI, ReferenceOr};
use progenitor::{GenerationSettings, InterfaceStyle, TagStyle, TypeImpl};
use schemars::schema::{InstanceType, SchemaObject, SingleOrVec};
use serde_json::Value;

/// One spec → one generated file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SpecConfig {
    /// Short name, e.g. `search-ads` (the client crate is `<name>-client`).
    pub name: &'static str,
    /// Workspace-relative path of the spec (OpenAPI 3.0.x YAML).
    pub spec: &'static str,
    /// Workspace-relative path of the generated Rust file.
    pub output: &'static str,
    /// Map every `{type: string, format: int64}` schema to `crate::I64String`.
    pub int64_strings: bool,
    /// Path of the `Client`'s inner (context) type, passed to the client hooks.
    pub inner_type: Option<&'static str>,
}

/// Every spec the workspace generates a client from.
pub const SPECS: &[SpecConfig] = &[
    SpecConfig {
        name: "search-ads",
        spec: "specs/search-ads.yaml",
        output: "crates/search-ads-client/src/generated.rs",
        int64_strings: true,
        inner_type: Some("crate::ClientContext"),
    },
    SpecConfig {
        name: "search-ads-reporting",
        spec: "specs/search-ads-reporting.yaml",
        output: "crates/search-ads-reporting-client/src/generated.rs",
        int64_strings: true,
        inner_type: Some("crate::ClientContext"),
    },
    SpecConfig {
        name: "video-session",
        spec: "specs/video-session.yaml",
        output: "crates/video-session-client/src/generated.rs",
        int64_strings: false,
        inner_type: Some("crate::ClientContext"),
    },
];

/// Rust path of the int64-in-a-string type (defined in `search-ads-client`,
/// re-exported by `search-ads-reporting-client`).
pub const I64_STRING_TYPE: &str = "crate::I64String";

/// Extra derives added to every generated type.
pub const EXTRA_DERIVES: &[&str] = &["PartialEq", "schemars::JsonSchema"];

/// Look a spec up by name.
pub fn find(name: &str) -> Option<&'static SpecConfig> {
    SPECS.iter().find(|s| s.name == name)
}

/// The schema shape that [`I64_STRING_TYPE`] replaces: `{type: string, format: int64}`.
///
/// typify matches conversions by *exact* schema equality ignoring only the
/// metadata (description, title, default, examples, deprecated, readOnly,
/// writeOnly). Nullability is handled (the inner schema is converted, giving
/// `Option<I64String>`), but any extra keyword (`pattern`, `enum`,
/// `minLength`, an `x-` extension) defeats the match and leaves a plain
/// `String`; `cargo xtask check` flags those (rule `int64-string-unconverted`).
///
/// A *named* component of exactly this shape (e.g. `components/schemas/Int64`)
/// would still become a newtype `types::Int64(I64String)`; [`SpecConfig::settings`]
/// replaces such components by `I64String` itself (see [`int64_string_components`]).
pub fn int64_string_schema() -> SchemaObject {
    SchemaObject {
        instance_type: Some(SingleOrVec::Single(Box::new(InstanceType::String))),
        format: Some("int64".to_owned()),
        ..SchemaObject::default()
    }
}

/// Keywords that do not stop a `{type: string, format: int64}` schema from
/// matching the conversion: typify keeps them in `metadata`, which the match
/// ignores.
pub const INT64_METADATA_KEYS: &[&str] = &[
    "type",
    "format",
    "description",
    "title",
    "default",
    "example",
    "deprecated",
    "readOnly",
    "writeOnly",
    "externalDocs",
];

/// Whether `schema` (as JSON) is `{type: string, format: int64}` plus only
/// [`INT64_METADATA_KEYS`] (and `nullable` if `allow_nullable`).
pub fn is_int64_string(schema: &Value, allow_nullable: bool) -> bool {
    let Some(map) = schema.as_object() else {
        return false;
    };
    map.get("type").and_then(Value::as_str) == Some("string")
        && map.get("format").and_then(Value::as_str) == Some("int64")
        && map.iter().all(|(k, v)| {
            INT64_METADATA_KEYS.contains(&k.as_str())
                || (allow_nullable && k == "nullable")
                || (k == "nullable" && v == &Value::Bool(false))
        })
}

/// Names of component schemas that are exactly an int64 string (not
/// nullable), sorted: they are replaced by [`I64_STRING_TYPE`] so that `$ref`s
/// to them (typically shared path/query parameters) use `I64String` directly.
pub fn int64_string_components(spec: &OpenAPI) -> Vec<String> {
    let Some(components) = &spec.components else {
        return Vec::new();
    };
    let mut names: Vec<String> = components
        .schemas
        .iter()
        .filter_map(|(name, schema)| match schema {
            ReferenceOr::Item(schema) => serde_json::to_value(schema)
                .ok()
                .filter(|v| is_int64_string(v, false))
                .map(|_| name.clone()),
            ReferenceOr::Reference { .. } => None,
        })
        .collect();
    names.sort();
    names
}

impl SpecConfig {
    /// The progenitor settings for this spec (some depend on its components).
    pub fn settings(&self, spec: &OpenAPI) -> Result<GenerationSettings> {
        let mut settings = GenerationSettings::default();
        settings
            .with_interface(InterfaceStyle::Builder)
            .with_tag(TagStyle::Merged)
            .with_map_type("::std::collections::BTreeMap");
        for derive in EXTRA_DERIVES {
            settings.with_derive(*derive);
        }
        if let Some(inner) = self.inner_type {
            let tokens: proc_macro2::TokenStream = inner
                .parse()
                .map_err(|e| anyhow::anyhow!("{e}"))
                .with_context(|| format!("invalid inner type {inner:?}"))?;
            settings.with_inner_type(tokens);
        }
        if self.int64_strings {
            settings.with_conversion(
                int64_string_schema(),
                I64_STRING_TYPE,
                [TypeImpl::FromStr, TypeImpl::Display].into_iter(),
            );
            for name in int64_string_components(spec) {
                settings.with_replacement(
                    name,
                    I64_STRING_TYPE,
                    [TypeImpl::FromStr, TypeImpl::Display].into_iter(),
                );
            }
        }
        Ok(settings)
    }
}

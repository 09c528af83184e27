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
    /// Map every `{type: string, format: int64}` schema (bare or with
    /// [`INT64_PATTERN`]) to `crate::I64String`.
    pub int64_strings: bool,
    /// Keep inline string schemas whose only constraints are among these keys
    /// (a subset of [`STRING_CONSTRAINT_KEYS`]) as plain `String`s (see
    /// [`constrained_string_schemas`]); empty: none. (Every spec is generated as if its
    /// requiredness alternatives were absent: [`without_requiredness_alternatives`].)
    pub plain_string_constraints: &'static [&'static str],
    /// Path of the `Client`'s inner (context) type, passed to the client hooks.
    pub inner_type: Option<&'static str>,
}

/// Every spec the workspace generates a client from.
pub const SPECS: &[SpecConfig] = &[
    SpecConfig {
        name: "search-ads",
        spec: "specs/search-ads.yaml",
        output: "crates/sa360-v2-client/src/generated.rs",
        int64_strings: true,
        plain_string_constraints: STRING_CONSTRAINT_KEYS,
        inner_type: Some("crate::context::ClientContext"),
    },
    SpecConfig {
        name: "search-ads-reporting",
        spec: "specs/search-ads-reporting.yaml",
        output: "crates/sa360-reporting-client/src/generated.rs",
        int64_strings: true,
        // Closed value sets stay generated enums; patterns and lengths (the
        // login-customer-id header) are the SDK's to check.
        plain_string_constraints: &["pattern", "minLength", "maxLength"],
        inner_type: Some("crate::context::ClientContext"),
    },
    SpecConfig {
        name: "video-session",
        spec: "specs/video-session.yaml",
        output: "crates/video-session-client/src/generated.rs",
        int64_strings: false,
        plain_string_constraints: &[],
        inner_type: Some("crate::context::ClientContext"),
    },
];

/// Rust path of the int64-in-a-string type (defined in `sa360-v2-client`'s
/// `i64_string` module); each client crate's `context` module re-exports it, so
/// the generated code names a module, never the crate root that re-exports the
/// generated code (no import cycle: `cargo xtask api --rule module-cycles`).
pub const I64_STRING_TYPE: &str = "crate::context::I64String";

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

/// The one `pattern` an int64 string may carry (SA-20): an optional minus and
/// 1 to 18 digits, so every value it admits fits an `i64`.
pub const INT64_PATTERN: &str = "^-?[0-9]{1,18}$";

/// [`int64_string_schema`] with [`INT64_PATTERN`]: converted to the same
/// [`I64_STRING_TYPE`], so a spec can state the digits without losing the type.
pub fn int64_string_pattern_schema() -> SchemaObject {
    let mut schema = int64_string_schema();
    schema.string = Some(Box::new(schemars::schema::StringValidation {
        pattern: Some(INT64_PATTERN.to_owned()),
        ..Default::default()
    }));
    schema
}

/// Keywords of a string schema that only constrain its values; a schema of
/// `type: string` with these and metadata only is kept a plain `String` when
/// [`SpecConfig::plain_string_constraints`] lists them.
pub const STRING_CONSTRAINT_KEYS: &[&str] = &["pattern", "minLength", "maxLength", "enum"];

/// Every distinct inline (not a component's root) `type: string` schema
/// without `format` that has at least one of [`STRING_CONSTRAINT_KEYS`] and
/// otherwise only metadata, reduced to `type` and its constraints, in a stable
/// order.
///
/// typify would turn each into a validating newtype or a closed enum named
/// after its position. The spec states these constraints for reviewers and
/// contract tests (SA-20: what the service refuses); the SDK validates
/// them with its own typed values and errors, so the generated types stay
/// `String`, and a value the service may add to a set later still parses.
pub fn constrained_string_schemas(spec: &OpenAPI, keys: &[&str]) -> Result<Vec<SchemaObject>> {
    fn walk(value: &Value, is_component_root: bool, keys: &[&str], out: &mut Vec<Value>) {
        match value {
            Value::Object(map) => {
                if !is_component_root
                    && map.get("type").and_then(Value::as_str) == Some("string")
                    && !map.contains_key("format")
                    && map.keys().any(|k| keys.contains(&k.as_str()))
                    && map.keys().all(|k| {
                        keys.contains(&k.as_str()) || INT64_METADATA_KEYS.contains(&k.as_str())
                    })
                {
                    let reduced: serde_json::Map<String, Value> = map
                        .iter()
                        .filter(|(k, _)| k.as_str() == "type" || keys.contains(&k.as_str()))
                        .map(|(k, v)| (k.clone(), v.clone()))
                        .collect();
                    let reduced = Value::Object(reduced);
                    if !out.contains(&reduced) {
                        out.push(reduced);
                    }
                }
                for (_, sub) in crate::sorted(map) {
                    walk(sub, false, keys, out);
                }
            }
            Value::Array(list) => list.iter().for_each(|v| walk(v, false, keys, out)),
            _ => {}
        }
    }
    let doc = serde_json::to_value(spec).context("serializing the spec")?;
    let mut found = Vec::new();
    if let Some(paths) = doc.get("paths") {
        walk(paths, false, keys, &mut found);
    }
    if let Some(components) = doc.get("components").and_then(Value::as_object) {
        for (kind, entries) in crate::sorted(components) {
            let Some(entries) = entries.as_object() else {
                continue;
            };
            for (_, entry) in crate::sorted(entries) {
                walk(entry, kind == "schemas", keys, &mut found);
            }
        }
    }
    found
        .into_iter()
        .map(|v| {
            // Through openapiv3, as progenitor reads the spec, then schemars.
            let schema: openapiv3::Schema =
                serde_json::from_value(v).context("reading a constrained string schema")?;
            let schemars_value = serde_json::to_value(&schema)?;
            serde_json::from_value::<SchemaObject>(schemars_value)
                .context("converting a constrained string schema")
        })
        .collect()
}

/// The keywords of an `anyOf` member that only constrains an object described
/// beside it (which members it requires or forbids, and narrower values for
/// them), without describing a shape of its own.
pub const ALTERNATIVE_KEYS: &[&str] = &["required", "not", "properties", "description"];

/// `spec` without its *requiredness alternatives*: `anyOf` lists whose members
/// only have [`ALTERNATIVE_KEYS`] (SA-20: "an agency and advertiser, a
/// customer, or a click ID"; VS-6: the members each invitation type needs).
/// typify turns such a list into an untagged enum
/// whose variants each drop the members the other alternatives require, so a
/// conversion naming both an advertiser and a click would lose its click on
/// the wire. The generated type keeps every member optional instead; the spec
/// (and so the contract tests) keeps the rule, and the SDK checks it.
pub fn without_requiredness_alternatives(spec: &OpenAPI) -> Result<OpenAPI> {
    fn strip(value: &mut Value) {
        match value {
            Value::Object(map) => {
                let alternatives_only =
                    map.get("anyOf")
                        .and_then(Value::as_array)
                        .is_some_and(|list| {
                            list.iter().all(|member| {
                                member.as_object().is_some_and(|m| {
                                    m.keys().all(|k| ALTERNATIVE_KEYS.contains(&k.as_str()))
                                })
                            })
                        });
                if alternatives_only {
                    map.remove("anyOf");
                }
                map.values_mut().for_each(strip);
            }
            Value::Array(list) => list.iter_mut().for_each(strip),
            _ => {}
        }
    }
    let mut doc = serde_json::to_value(spec).context("serializing the spec")?;
    strip(&mut doc);
    serde_json::from_value(doc).context("reading the spec back")
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
/// [`INT64_METADATA_KEYS`], optionally `pattern:` [`INT64_PATTERN`] (and
/// `nullable` if `allow_nullable`).
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
                || (k == "pattern" && v.as_str() == Some(INT64_PATTERN))
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
            for schema in [int64_string_schema(), int64_string_pattern_schema()] {
                settings.with_conversion(
                    schema,
                    I64_STRING_TYPE,
                    [TypeImpl::FromStr, TypeImpl::Display].into_iter(),
                );
            }
            for name in int64_string_components(spec) {
                settings.with_replacement(
                    name,
                    I64_STRING_TYPE,
                    [TypeImpl::FromStr, TypeImpl::Display].into_iter(),
                );
            }
        }
        if !self.plain_string_constraints.is_empty() {
            for schema in constrained_string_schemas(spec, self.plain_string_constraints)? {
                settings.with_conversion(
                    schema,
                    "::std::string::String",
                    [TypeImpl::FromStr, TypeImpl::Display].into_iter(),
                );
            }
        }
        Ok(settings)
    }
}

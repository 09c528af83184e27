//! The lint rules' table ([`RULES`]: id, kind, what, why, reason), the
//! [`Finding`]s they report, and the `Linter` every check writes to. The
//! checks live in `operations.rs`, `schemas.rs` and `components.rs`; `mod.rs`
//! runs them.

use std::fmt;

use serde_json::Value;

use crate::openapi::{Document, Op};

/// Why a rule exists.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// progenitor would fail, panic or produce a worse client.
    Generation,
    /// Consistency for reviewers.
    Review,
}

/// A lint rule: a stable id, what it asks for and why.
#[derive(Debug, PartialEq, Eq)]
pub struct Rule {
    /// Stable identifier, printed with each finding.
    pub id: &'static str,
    /// Generation or review rule.
    pub kind: Kind,
    /// What the rule asks for (CONTRIBUTING.md's "rule" column, Markdown).
    pub what: &'static str,
    /// Why, in a few words (CONTRIBUTING.md's "why" column, Markdown).
    pub why: &'static str,
    /// Why the construct is a problem, in one line (printed with findings).
    pub reason: &'static str,
}

macro_rules! rules {
    ($($name:ident = $id:literal, $kind:ident, $what:literal, $why:literal, $reason:literal;)*) => {
        $(
            #[doc = concat!("`", $id, "`: ", $what, " (", $why, ").")]
            pub const $name: Rule = Rule {
                id: $id,
                kind: Kind::$kind,
                what: $what,
                why: $why,
                reason: $reason,
            };
        )*
        /// Every rule, in reporting order.
        pub const RULES: &[&Rule] = &[$(&$name),*];
    };
}

rules! {
    OPENAPI_VERSION = "openapi-version", Generation,
        "`openapi: 3.0.x`",
        "progenitor rejects 3.1",
        "progenitor 0.15 only accepts OpenAPI 3.0.x documents";
    OPERATION_ID_MISSING = "operation-id-missing", Generation,
        "every operation has an `operationId`",
        "progenitor names methods and types after it and refuses specs without one",
        "progenitor rejects operations without an operationId (it names the method)";
    OPERATION_ID_DUPLICATE = "operation-id-duplicate", Generation,
        "… and it is unique",
        "method and type names would clash; progenitor refuses it",
        "progenitor rejects duplicate operationIds (method and type names would clash)";
    DEFAULT_WITH_TYPED_2XX = "default-with-typed-2xx", Generation,
        "no `default` response beside a typed 2xx",
        "progenitor counts `default` as success and error and panics",
        "progenitor counts `default` as both success and error, so a differently-typed 2xx makes it panic; use 4XX/5XX";
    ERROR_SCHEMAS_MULTIPLE = "error-schemas-multiple", Generation,
        "one schema for all error responses of an operation",
        "progenitor supports one error type per operation and panics on more",
        "progenitor supports one error body type per operation and panics otherwise";
    SUCCESS_SCHEMAS_MULTIPLE = "success-schemas-multiple", Generation,
        "one schema for all 2xx responses of an operation",
        "same, for success bodies",
        "progenitor supports one 2xx body type per operation (an empty body counts as a type) and panics otherwise";
    REQUEST_MEDIA_TYPES_MULTIPLE = "request-media-types-multiple", Generation,
        "at most one request media type",
        "progenitor panics (\"more media types than expected\")",
        "progenitor panics (todo!) on a requestBody with more than one media type";
    RESPONSE_ADDITIONAL_PROPERTIES_FALSE = "response-additional-properties-false", Generation,
        "no `additionalProperties: false` on a schema reachable from a response",
        "it becomes `deny_unknown_fields`; a new server field would break every client",
        "becomes #[serde(deny_unknown_fields)]: a field added by the server breaks deserialization";
    COMPONENT_SCHEMA_DESCRIPTION = "component-schema-description", Generation,
        "every component schema has a description",
        "the descriptions become the generated docs",
        "the generated type gets no doc comment";
    INT64_STRING_UNCONVERTED = "int64-string-unconverted", Generation,
        "`{type: string, format: int64}` carries no other keyword (search ads)",
        "an extra keyword defeats the `I64String` conversion and leaves a plain `String`",
        "extra keywords defeat the exact-match I64String conversion, leaving a plain String";
    OPERATION_ID_STYLE = "operation-id-style", Review,
        "operationIds are lowerCamelCase",
        "they name the generated methods and types; one style keeps those predictable and collision-free",
        "operationIds name the generated methods and types; one style (lowerCamelCase) keeps them predictable and collision-free after snake_casing";
    OPERATION_SUMMARY = "operation-summary", Review,
        "every operation has a `summary`",
        "it is the first line of the generated method's docs",
        "the summary is the first line of the generated method's documentation";
    OPERATION_TAG = "operation-tag", Review,
        "every operation has a tag, declared in the top-level `tags`",
        "tags group operations in the docs and the inventory; an undeclared tag is a typo",
        "tags group the operations in the docs and the inventory; an undeclared tag is a typo";
    OPERATION_ERROR_RESPONSE = "operation-error-response", Review,
        "every operation has a 4xx/5xx (or `default`) response",
        "otherwise every error reaches callers as an untyped `Error::UnexpectedResponse`",
        "without one, every error reaches callers as an untyped Error::UnexpectedResponse";
    PARAMETER_DESCRIPTION = "parameter-description", Review,
        "every parameter has a description",
        "it documents the argument in the generated method's docs",
        "it documents the argument in the generated method's docs";
    PROPERTY_DESCRIPTION = "property-description", Review,
        "every property has a description (a `$ref`, bare or in a one-member `allOf`, is described by its target)",
        "it becomes the generated field's doc comment",
        "it becomes the generated field's doc comment";
    ENUM_TYPED = "enum-typed", Review,
        "every `enum` has a `type`",
        "the type decides the Rust type (string enum → Rust enum, integer enum → validated newtype)",
        "the type decides the generated Rust type (string enum, validated integer newtype); untyped values may mix JSON types";
    COMPONENT_UNUSED = "component-unused", Review,
        "every component is referenced (schemas, parameters, responses, request bodies, headers, security schemes)",
        "dead definitions go unreviewed, and unused schemas still become public Rust types",
        "dead definitions go unreviewed, and unused schemas still become public Rust types";
}

/// CONTRIBUTING.md's lint table, row by row, generated from [`RULES`] (a
/// test keeps CONTRIBUTING.md equal to it).
pub fn contributing_rows() -> Vec<String> {
    RULES
        .iter()
        .map(|rule| {
            let prefix = match rule.kind {
                Kind::Generation => "",
                Kind::Review => "*review:* ",
            };
            format!("| {prefix}{} | `{}` | {} |", rule.what, rule.id, rule.why)
        })
        .collect()
}

/// One lint finding.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    /// Workspace-relative spec path.
    pub spec: String,
    /// JSON pointer of the offending construct.
    pub location: String,
    /// The rule violated.
    pub rule: &'static Rule,
    /// What is wrong here, followed by the rule's reason.
    pub message: String,
}

impl fmt::Display for Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}:{}: {}: {}",
            self.spec, self.location, self.rule.id, self.message
        )
    }
}

/// The state of one lint run: the document and the findings so far.
pub(crate) struct Linter<'a> {
    pub(crate) spec: &'a str,
    /// The typed document.
    pub(crate) document: &'a Document,
    /// Its JSON form.
    pub(crate) doc: &'a Value,
    pub(crate) findings: Vec<Finding>,
}

impl Linter<'_> {
    pub(crate) fn add(
        &mut self,
        location: impl Into<String>,
        rule: &'static Rule,
        detail: impl fmt::Display,
    ) {
        self.findings.push(Finding {
            spec: self.spec.to_owned(),
            location: location.into(),
            rule,
            message: format!("{detail} ({})", rule.reason),
        });
    }

    /// Follow a local `$ref` (`#/a/b`) if `value` is one.
    pub(crate) fn deref<'v>(&'v self, value: &'v Value) -> Option<(&'v Value, Option<String>)> {
        match value.get("$ref").and_then(Value::as_str) {
            None => Some((value, None)),
            Some(r) => {
                let pointer = r.strip_prefix('#')?;
                self.doc.pointer(pointer).map(|v| (v, Some(r.to_owned())))
            }
        }
    }
}

/// Check only the `openapi` version field of a raw document (works even when
/// the document does not parse as OpenAPI 3.0).
pub fn check_version(spec: &str, version: Option<&str>) -> Option<Finding> {
    match version {
        Some(v) if v.starts_with("3.0.") => None,
        other => Some(Finding {
            spec: spec.to_owned(),
            location: "#/openapi".to_owned(),
            rule: &OPENAPI_VERSION,
            message: format!(
                "openapi is {} ({})",
                other.map_or("missing".to_owned(), |v| format!("{v:?}")),
                OPENAPI_VERSION.reason
            ),
        }),
    }
}

/// Whether a JSON value is a non-blank string.
pub(crate) fn non_empty_str(v: Option<&Value>) -> bool {
    v.and_then(Value::as_str)
        .is_some_and(|s| !s.trim().is_empty())
}

impl<'a> Linter<'a> {
    /// The document's operations, sorted by path (methods in their order),
    /// each with its JSON form.
    pub(crate) fn operations(&self) -> Vec<(Op<'a>, &'a Value)> {
        let doc: &'a Value = self.doc;
        let mut ops: Vec<(Op<'a>, &'a Value)> = self
            .document
            .operations()
            .into_iter()
            .filter_map(|op| {
                let json = doc.pointer(op.pointer.strip_prefix('#')?)?;
                Some((op, json))
            })
            .collect();
        ops.sort_by(|a, b| a.0.path.cmp(b.0.path));
        ops
    }
}

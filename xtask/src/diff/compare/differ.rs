//! The model every comparison shares: what a change is about ([`Subject`]),
//! the change itself ([`Change`]), and the walker (`Differ`) with the sites
//! it compares at. The walks themselves are the sibling modules' `impl Differ`
//! blocks (`operations/`, `schemas/`, `components.rs`).

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use serde_json::Value;

use crate::diff::rules::{Class, Direction, Rule};
use crate::openapi::{Document, SchemaRef};

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
    /// Found inside a callback, where the API provider is the client and
    /// the API consumer the server: an operation-level class is swapped
    /// (directions are already flipped for schema-level changes).
    pub in_callback: bool,
}

impl Change {
    /// The class: the union over the directions it was found in.
    pub fn class(&self) -> Class {
        if self.directions.is_empty() {
            let class = self.rule.class(None);
            return if self.in_callback {
                class.swapped()
            } else {
                class
            };
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

// ------------------------------------------------------------------ plumbing

/// Where in a document a schema is being compared, and how to name it.
#[derive(Debug, Clone)]
pub(crate) struct Site {
    pub(crate) subject: Subject,
    pub(crate) location: String,
    pub(crate) direction: Direction,
    /// How messages name the root: a component name (shown as `Name.path`)
    /// or a phrase like `request body` (shown as `` `path` in request body``).
    pub(crate) root: Root,
    /// `.prop`, `[]`, `{}` segments below the root.
    pub(crate) path: String,
    /// Values here travel as text, not as typed JSON: a body of a media
    /// type other than JSON (`application/xml`, `text/plain`, forms), a
    /// parameter or a response header. There any value can be read as a
    /// string, so a change to or from `string` widens or narrows instead of
    /// changing the type (oasdiff: loosely typed).
    pub(crate) text: bool,
}

#[derive(Debug, Clone)]
pub(crate) enum Root {
    Named(String),
    Phrase(String),
}

impl Site {
    pub(crate) fn child(&self, pointer_segments: &str, path: &str) -> Site {
        Site {
            location: format!("{}/{pointer_segments}", self.location),
            path: format!("{}{path}", self.path),
            ..self.clone()
        }
    }

    /// The value of a parameter itself (not a part of it): its default is the
    /// parameter's default.
    pub(crate) fn is_parameter_value(&self) -> bool {
        self.location.contains("/parameters/") && self.path.is_empty()
    }

    /// The value being compared, for messages.
    pub(crate) fn what(&self) -> String {
        match &self.root {
            Root::Named(name) => format!("`{name}{}`", self.path),
            Root::Phrase(phrase) if self.path.is_empty() => phrase.clone(),
            Root::Phrase(phrase) => {
                format!("`{}` in {phrase}", self.path.trim_start_matches('.'))
            }
        }
    }
}

/// One-line summary of a schema position for messages: `string/int64`,
/// `Conversion`, `array<CustomDimension>`.
pub(crate) fn summary(s: SchemaRef<'_>) -> String {
    match s {
        SchemaRef::Ref(r) => s.component().unwrap_or(r).to_owned(),
        SchemaRef::Inline(schema) => serde_json::to_value(schema)
            .map(|v| crate::inventory::schema_summary(&v))
            .unwrap_or_else(|_| "?".to_owned()),
        SchemaRef::Any => "any".to_owned(),
    }
}

pub(crate) const SCHEMA_PREFIX: &str = "#/components/schemas/";

pub(crate) fn show(v: &Value) -> String {
    v.to_string()
}

pub(crate) fn show_list(values: &[&Value]) -> String {
    values
        .iter()
        .map(|v| show(v))
        .collect::<Vec<_>>()
        .join(", ")
}

// -------------------------------------------------------------------- differ

pub(crate) struct Differ<'a> {
    pub(crate) old: &'a Document,
    pub(crate) new: &'a Document,
    /// Component schemas renamed without a change of shape: old → new name.
    pub(crate) renames: BTreeMap<String, String>,
    pub(crate) changes: Vec<Change>,
    /// (subject, location, rule, detail) → index into `changes`.
    pub(crate) index: BTreeMap<(Subject, String, &'static str, String), usize>,
    /// Schema pairs already compared, per direction: this makes each
    /// component compared once per direction and stops recursive schemas.
    pub(crate) visited: BTreeSet<(String, String, Direction, bool)>,
    pub(crate) depth: usize,
    /// Set while walking a callback (its name): there the API provider
    /// sends the request and the API consumer answers, so the roles of
    /// client and server are swapped.
    pub(crate) callback: Option<String>,
}

impl<'a> Differ<'a> {
    pub(crate) fn record(
        &mut self,
        subject: &Subject,
        location: &str,
        rule: &'static Rule,
        detail: String,
        direction: Option<Direction>,
    ) {
        let detail = match (&self.callback, direction) {
            (Some(name), None) => format!("callback `{name}`: {detail}"),
            _ => detail,
        };
        // Callbacks added or removed are classed from the consumer's side
        // already; everything else found inside one swaps roles.
        let in_callback =
            self.callback.is_some() && direction.is_none() && !rule.id.starts_with("callback-");
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
                in_callback,
            });
            self.changes.len() - 1
        });
        if let Some(d) = direction {
            self.changes[i].directions.insert(d);
        }
    }

    pub(crate) fn at(&mut self, site: &Site, rule: &'static Rule, detail: impl fmt::Display) {
        let detail = format!("{}: {detail}", site.what());
        let (subject, location) = (site.subject.clone(), site.location.clone());
        self.record(&subject, &location, rule, detail, Some(site.direction));
    }

    pub(crate) fn same_component(&self, a: &str, b: &str) -> bool {
        a == b
            || matches!(
                (SchemaRef::Ref(a).component(), SchemaRef::Ref(b).component()),
                (Some(x), Some(y)) if self.renames.get(x).is_some_and(|n| n == y)
            )
    }

    /// Where data flows at a request or response position of the operation
    /// being walked: swapped inside a callback (the provider sends the
    /// callback's request).
    pub(crate) fn flow(&self, direction: Direction) -> Direction {
        match (&self.callback, direction) {
            (None, d) => d,
            (Some(_), Direction::Request) => Direction::Response,
            (Some(_), Direction::Response) => Direction::Request,
        }
    }

    /// A phrase naming a position, prefixed with the callback walked, if any.
    pub(crate) fn phrase(&self, phrase: String) -> String {
        match &self.callback {
            Some(name) => format!("callback `{name}` {phrase}"),
            None => phrase,
        }
    }
}

pub(crate) fn join_code(items: &[&String]) -> String {
    items
        .iter()
        .map(|s| format!("`{s}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

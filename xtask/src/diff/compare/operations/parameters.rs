//! Parameters: pairing (path parameters by position, the others by location and name) and
//! their serialization (`style`, `explode`, `allowReserved`, defaults applied).

use std::collections::BTreeMap;

use openapiv3::{Parameter, ParameterSchemaOrContent, PathStyle, QueryStyle};

use super::{sunset_of, today};
use crate::diff::compare::differ::{Differ, Root, Site, Subject, summary};

use crate::diff::rules::{self as r, Direction};
use crate::openapi::{Document, Op, Param, same_name};

/// Names of path parameters in template order.
pub(super) fn template_names(path: &str) -> Vec<&str> {
    path.split('{')
        .skip(1)
        .filter_map(|s| s.split_once('}').map(|(name, _)| name))
        .collect()
}

/// How parameters are matched between the two sides: path parameters by
/// position in the template, the others by location and name (header names
/// in lower case: they are case-insensitive).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum ParamKey {
    PathPosition(usize),
    Named(&'static str, String),
}

/// The parameters of an operation keyed for pairing.
pub(super) fn parameters_of<'a>(doc: &'a Document, op: &Op<'a>) -> BTreeMap<ParamKey, Param<'a>> {
    let names = template_names(op.path);
    doc.parameters(op)
        .into_iter()
        .map(|p| {
            let name = &p.param.parameter_data_ref().name;
            let key = match names.iter().position(|n| n == name) {
                Some(pos) if p.location == "path" => ParamKey::PathPosition(pos),
                _ if p.location == "header" => {
                    ParamKey::Named(p.location, name.to_ascii_lowercase())
                }
                _ => ParamKey::Named(p.location, name.clone()),
            };
            (key, p)
        })
        .collect()
}

/// How a parameter is written on the wire, defaults applied.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct Serialization {
    style: &'static str,
    explode: bool,
    allow_reserved: bool,
}

impl Serialization {
    fn describe(&self) -> String {
        let mut out = format!("style {}", self.style);
        out.push_str(if self.explode {
            ", explode"
        } else {
            ", no explode"
        });
        if self.allow_reserved {
            out.push_str(", allowReserved");
        }
        out
    }
}

pub(super) fn query_style_name(style: &QueryStyle) -> &'static str {
    match style {
        QueryStyle::Form => "form",
        QueryStyle::SpaceDelimited => "spaceDelimited",
        QueryStyle::PipeDelimited => "pipeDelimited",
        QueryStyle::DeepObject => "deepObject",
    }
}

/// The effective serialization of a parameter: the OpenAPI defaults are
/// `form` with explode for query and cookie, `simple` without for path and
/// header; `explode` defaults to true exactly when the style is `form`.
pub(super) fn serialization(p: &Parameter) -> Serialization {
    let (style, allow_reserved) = match p {
        Parameter::Query {
            style,
            allow_reserved,
            ..
        } => (query_style_name(style), *allow_reserved),
        Parameter::Path { style, .. } => (
            match style {
                PathStyle::Simple => "simple",
                PathStyle::Label => "label",
                PathStyle::Matrix => "matrix",
            },
            false,
        ),
        Parameter::Header { .. } => ("simple", false),
        Parameter::Cookie { .. } => ("form", false),
    };
    let explode = p.parameter_data_ref().explode.unwrap_or(style == "form");
    Serialization {
        style,
        explode,
        allow_reserved,
    }
}

impl<'a> Differ<'a> {
    pub(in crate::diff::compare) fn parameters(
        &mut self,
        subject: &Subject,
        o: &Op<'a>,
        n: &Op<'a>,
    ) {
        let old_params = parameters_of(self.old, o);
        let new_params = parameters_of(self.new, n);
        for (key, old) in &old_params {
            let data = old.param.parameter_data_ref();
            match new_params.get(key) {
                None => {
                    let deprecated = data.deprecated == Some(true)
                        || data.extensions.get("x-deprecated")
                            == Some(&serde_json::Value::Bool(true));
                    let (rule, why) = match sunset_of(&data.extensions) {
                        Some(date) if deprecated && date.as_str() <= today().as_str() => (
                            &r::PARAMETER_REMOVED_AFTER_SUNSET,
                            format!(" (deprecated, sunset {date} has passed)"),
                        ),
                        _ => (&r::PARAMETER_REMOVED, String::new()),
                    };
                    let detail = format!("{} parameter `{}` removed{why}", old.location, data.name);
                    self.record(subject, &old.pointer, rule, detail, None);
                }
                Some(new) => self.parameter(subject, old, new),
            }
        }
        for (key, new) in &new_params {
            if old_params.contains_key(key) {
                continue;
            }
            let data = new.param.parameter_data_ref();
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
                new.location, data.name
            );
            self.record(subject, &new.pointer, rule, detail, None);
        }
    }

    pub(in crate::diff::compare) fn parameter(
        &mut self,
        subject: &Subject,
        old: &Param<'a>,
        new: &Param<'a>,
    ) {
        let (od, nd) = (
            old.param.parameter_data_ref(),
            new.param.parameter_data_ref(),
        );
        let at = new.pointer.clone();
        let label = format!("{} parameter `{}`", new.location, nd.name);
        // Paired by position (path) or by case-insensitive name (header): a
        // header whose name only changed case is the same header.
        if !same_name(new.location, &od.name, &nd.name) {
            let detail = format!(
                "path parameter `{}` renamed to `{}` (same position)",
                od.name, nd.name
            );
            self.record(subject, &at, &r::PARAMETER_RENAMED, detail, None);
        }
        let required = (&r::PARAMETER_BECAME_REQUIRED, "became required");
        let optional = (&r::PARAMETER_BECAME_OPTIONAL, "became optional");
        self.toggle(
            subject,
            &at,
            &label,
            (od.required, nd.required),
            required,
            optional,
        );
        let deprecated = |d: Option<bool>| d == Some(true);
        self.deprecation(
            subject,
            &at,
            &label,
            deprecated(od.deprecated),
            deprecated(nd.deprecated),
        );
        self.sunset(subject, &at, &label, &od.extensions, &nd.extensions);
        let (old_style, new_style) = (serialization(old.param), serialization(new.param));
        if old_style != new_style {
            let detail = format!(
                "{label} serialization changed from {} to {}",
                old_style.describe(),
                new_style.describe()
            );
            self.record(subject, &at, &r::PARAMETER_STYLE_CHANGED, detail, None);
        }
        let site = Site {
            subject: subject.clone(),
            location: format!("{at}/schema"),
            direction: self.flow(Direction::Request),
            root: Root::Phrase(self.phrase(label.clone())),
            path: String::new(),
            // A parameter's value is text on the wire (a `content`
            // parameter's media type decides below).
            text: true,
        };
        self.schema_or_content(site, &at, &od.format, &nd.format);
    }

    /// A parameter's or header's value: its `schema` at `site`, or its `content` at `at`.
    pub(super) fn schema_or_content(
        &mut self,
        site: Site,
        at: &str,
        old: &'a ParameterSchemaOrContent,
        new: &'a ParameterSchemaOrContent,
    ) {
        match (old, new) {
            (ParameterSchemaOrContent::Schema(a), ParameterSchemaOrContent::Schema(b)) => {
                self.node(&site, a.into(), b.into());
            }
            (ParameterSchemaOrContent::Content(a), ParameterSchemaOrContent::Content(b)) => {
                let site = Site {
                    location: at.to_owned(),
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

    /// `deprecated` set or cleared on an operation, parameter or header (`label`).
    pub(super) fn deprecation(
        &mut self,
        subject: &Subject,
        at: &str,
        label: &str,
        old: bool,
        new: bool,
    ) {
        let set = (&r::DEPRECATED, "deprecated");
        self.toggle(
            subject,
            at,
            label,
            (old, new),
            set,
            (&r::UNDEPRECATED, "no longer deprecated"),
        );
    }

    /// A flag of `label` set (`set`: its rule and word) or cleared (`cleared`).
    pub(super) fn toggle(
        &mut self,
        subject: &Subject,
        at: &str,
        label: &str,
        (old, new): (bool, bool),
        set: (&'static r::Rule, &str),
        cleared: (&'static r::Rule, &str),
    ) {
        let (rule, word) = match (old, new) {
            (false, true) => set,
            (true, false) => cleared,
            _ => return,
        };
        self.record(subject, at, rule, format!("{label} {word}"), None);
    }
}

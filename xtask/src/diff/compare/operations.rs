//! Operations: pairing, security, parameters, request bodies, responses.

use std::collections::{BTreeMap, BTreeSet};

use openapiv3::{
    Content, Encoding, Header, Link, MediaType, Operation, Parameter, ParameterSchemaOrContent,
    PathStyle, QueryStyle, ReferenceOr, Response, SecurityRequirement, StatusCode,
};

use super::{Differ, Root, Site, Subject, join_code, summary};
use crate::diff::rules::{self as r, Direction};
use crate::openapi::{Document, Op, Param, SchemaRef, escape};

/// The report subject of an operation.
fn subject_of(op: &Op<'_>) -> Subject {
    Subject::Operation {
        id: op.id(),
        method: op.method.to_uppercase(),
        path: op.path.to_owned(),
    }
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

/// The parameters of an operation keyed for pairing.
fn parameters_of<'a>(doc: &'a Document, op: &Op<'a>) -> BTreeMap<ParamKey, Param<'a>> {
    let names = template_names(op.path);
    doc.parameters(op)
        .into_iter()
        .map(|p| {
            let name = &p.param.parameter_data_ref().name;
            let key = match names.iter().position(|n| n == name) {
                Some(pos) if p.location == "path" => ParamKey::PathPosition(pos),
                _ => ParamKey::Named(p.location, name.clone()),
            };
            (key, p)
        })
        .collect()
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

/// Pair operations: the same operationId on the same route first, then the
/// same operationId, then the same route; each operation is paired at most
/// once (an operationId reused on several routes pairs route by route).
fn pair_operations(old: &[Op<'_>], new: &[Op<'_>]) -> Vec<Option<usize>> {
    fn same_id(o: &Op<'_>, n: &Op<'_>) -> bool {
        o.operation.operation_id.is_some() && o.operation.operation_id == n.operation.operation_id
    }
    fn same_route(o: &Op<'_>, n: &Op<'_>) -> bool {
        o.method == n.method && o.route() == n.route()
    }
    fn same_both(o: &Op<'_>, n: &Op<'_>) -> bool {
        same_id(o, n) && same_route(o, n)
    }
    let mut pairs = vec![None; old.len()];
    let mut taken = vec![false; new.len()];
    let passes: [fn(&Op<'_>, &Op<'_>) -> bool; 3] = [same_both, same_id, same_route];
    for pass in passes {
        for (i, o) in old.iter().enumerate() {
            if pairs[i].is_some() {
                continue;
            }
            if let Some(j) = (0..new.len()).find(|&j| !taken[j] && pass(o, &new[j])) {
                taken[j] = true;
                pairs[i] = Some(j);
            }
        }
    }
    pairs
}

/// `deprecated: true`, or the `x-deprecated: true` extension.
fn is_deprecated(flag: bool, extensions: &Extensions) -> bool {
    flag || extensions.get("x-deprecated") == Some(&serde_json::Value::Bool(true))
}

/// The sunset date (`YYYY-MM-DD`) of an `x-sunset` extension.
fn sunset_of(extensions: &Extensions) -> Option<String> {
    let value = extensions.get("x-sunset")?.as_str()?;
    let date: String = value.chars().take(10).collect();
    let valid = date.len() == 10
        && date.char_indices().all(|(i, c)| {
            if i == 4 || i == 7 {
                c == '-'
            } else {
                c.is_ascii_digit()
            }
        });
    valid.then_some(date)
}

/// Today's UTC date, `YYYY-MM-DD` (`XTASK_DIFF_TODAY` overrides it, for
/// tests and to replay a review).
fn today() -> String {
    if let Ok(day) = std::env::var("XTASK_DIFF_TODAY") {
        return day;
    }
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let days = i64::try_from(secs / 86_400).unwrap_or(0);
    // Howard Hinnant's civil_from_days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02}")
}

/// The extensions map of `openapiv3` objects (`x-…` keys).
type Extensions = indexmap::IndexMap<String, serde_json::Value>;

impl<'a> Differ<'a> {
    pub(super) fn operations(&mut self) {
        let (old, new) = (self.old.operations(), self.new.operations());
        self.operation_lists(&old, &new);
    }

    /// Pair and compare two lists of operations (the documents', or a
    /// callback's on both sides).
    fn operation_lists(&mut self, old_ops: &[Op<'a>], new_ops: &[Op<'a>]) {
        let pairs = pair_operations(old_ops, new_ops);
        let mut paired_new = vec![false; new_ops.len()];
        for (o, j) in old_ops.iter().zip(&pairs) {
            match j {
                None => {
                    let sunset = sunset_of(&o.operation.extensions);
                    let deprecated = is_deprecated(o.operation.deprecated, &o.operation.extensions);
                    let (rule, why) = match sunset {
                        Some(date) if deprecated && date.as_str() <= today().as_str() => (
                            &r::OPERATION_REMOVED_AFTER_SUNSET,
                            format!(" (deprecated, sunset {date} has passed)"),
                        ),
                        Some(date) if deprecated => {
                            (&r::OPERATION_REMOVED, format!(" before its sunset {date}"))
                        }
                        _ => (&r::OPERATION_REMOVED, String::new()),
                    };
                    let detail = format!("operation `{}` ({}) removed{why}", o.id(), o.label());
                    self.record(&subject_of(o), &o.pointer, rule, detail, None);
                }
                Some(j) => {
                    paired_new[*j] = true;
                    self.operation(o, &new_ops[*j]);
                }
            }
        }
        for (n, paired) in new_ops.iter().zip(paired_new) {
            if !paired {
                let detail = format!("operation `{}` ({}) added", n.id(), n.label());
                self.record(
                    &subject_of(n),
                    &n.pointer,
                    &r::OPERATION_ADDED,
                    detail,
                    None,
                );
            }
        }
    }

    fn operation(&mut self, o: &Op<'a>, n: &Op<'a>) {
        let subject = subject_of(n);
        let at = n.pointer.clone();
        if o.operation.operation_id != n.operation.operation_id {
            let detail = format!("operationId changed from `{}` to `{}`", o.id(), n.id());
            self.record(&subject, &at, &r::OPERATION_ID_CHANGED, detail, None);
        }
        if o.method != n.method || o.route() != n.route() {
            let detail = format!("route changed from {} to {}", o.label(), n.label());
            self.record(&subject, &at, &r::OPERATION_ROUTE_CHANGED, detail, None);
        }
        let deprecated =
            |op: &Op<'_>| is_deprecated(op.operation.deprecated, &op.operation.extensions);
        match (deprecated(o), deprecated(n)) {
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
        self.sunset(
            &subject,
            &at,
            "operation",
            &o.operation.extensions,
            &n.operation.extensions,
        );
        self.security(&subject, o, n);
        self.parameters(&subject, o, n);
        self.request_body(&subject, o, n);
        self.responses(&subject, o, n);
        self.callbacks(&subject, o, n);
    }

    /// Compare the sunset dates (`x-sunset`) of an operation or parameter.
    fn sunset(
        &mut self,
        subject: &Subject,
        at: &str,
        what: &str,
        old: &Extensions,
        new: &Extensions,
    ) {
        match (sunset_of(old), sunset_of(new)) {
            (Some(a), Some(b)) if b < a => self.record(
                subject,
                at,
                &r::SUNSET_BROUGHT_FORWARD,
                format!("{what} sunset brought forward from {a} to {b}"),
                None,
            ),
            (Some(a), Some(b)) if a != b => self.record(
                subject,
                at,
                &r::SUNSET_CHANGED,
                format!("{what} sunset postponed from {a} to {b}"),
                None,
            ),
            (None, Some(b)) => self.record(
                subject,
                at,
                &r::SUNSET_CHANGED,
                format!("{what} sunset {b} announced"),
                None,
            ),
            (Some(a), None) => self.record(
                subject,
                at,
                &r::SUNSET_CHANGED,
                format!("{what} sunset {a} withdrawn"),
                None,
            ),
            _ => {}
        }
    }

    /// Compare the callbacks of two paired operations; inside a callback
    /// the provider sends the requests, so directions and roles swap.
    fn callbacks(&mut self, subject: &Subject, o: &Op<'a>, n: &Op<'a>) {
        if self.callback.is_some() {
            // Callbacks of callbacks: not walked (no known API uses them).
            return;
        }
        let at = format!("{}/callbacks", n.pointer);
        for (name, old_cb) in &o.operation.callbacks {
            let Some(new_cb) = n.operation.callbacks.get(name) else {
                let detail = format!("callback `{name}` removed");
                self.record(subject, &at, &r::CALLBACK_REMOVED, detail, None);
                continue;
            };
            let base_old = format!("{}/callbacks/{}", o.pointer, escape(name));
            let base_new = format!("{}/callbacks/{}", n.pointer, escape(name));
            let old_ops = crate::openapi::operations_in(old_cb.iter(), &base_old);
            let new_ops = crate::openapi::operations_in(new_cb.iter(), &base_new);
            self.callback = Some(name.clone());
            self.callback_lists(subject, &old_ops, &new_ops);
            self.callback = None;
        }
        for name in n.operation.callbacks.keys() {
            if !o.operation.callbacks.contains_key(name) {
                let detail = format!("callback `{name}` added");
                self.record(subject, &at, &r::CALLBACK_ADDED, detail, None);
            }
        }
    }

    /// The operations of one callback on both sides, reported against the
    /// operation owning the callback.
    fn callback_lists(&mut self, subject: &Subject, old_ops: &[Op<'a>], new_ops: &[Op<'a>]) {
        let pairs = pair_operations(old_ops, new_ops);
        let mut paired_new = vec![false; new_ops.len()];
        for (o, j) in old_ops.iter().zip(&pairs) {
            match j {
                None => {
                    let detail = format!("request {} removed", o.label());
                    self.record(subject, &o.pointer, &r::CALLBACK_REMOVED, detail, None);
                }
                Some(j) => {
                    paired_new[*j] = true;
                    let n = &new_ops[*j];
                    self.security(subject, o, n);
                    self.parameters(subject, o, n);
                    self.request_body(subject, o, n);
                    self.responses(subject, o, n);
                }
            }
        }
        for (n, paired) in new_ops.iter().zip(paired_new) {
            if !paired {
                let detail = format!("request {} added", n.label());
                self.record(subject, &n.pointer, &r::CALLBACK_ADDED, detail, None);
            }
        }
    }

    fn security(&mut self, subject: &Subject, o: &Op<'a>, n: &Op<'a>) {
        let effective = |doc: &'a Document, op: &Op<'a>| -> Alternatives {
            alternatives(
                op.operation
                    .security
                    .as_deref()
                    .or(doc.spec.security.as_deref())
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
                        let Some(new_scopes) = new_schemes.get(scheme) else {
                            continue;
                        };
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

    fn parameters(&mut self, subject: &Subject, o: &Op<'a>, n: &Op<'a>) {
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

    fn parameter(&mut self, subject: &Subject, old: &Param<'a>, new: &Param<'a>) {
        let (od, nd) = (
            old.param.parameter_data_ref(),
            new.param.parameter_data_ref(),
        );
        let at = new.pointer.clone();
        let label = format!("{} parameter `{}`", new.location, nd.name);
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

    fn request_body(&mut self, subject: &Subject, o: &Op<'a>, n: &Op<'a>) {
        let at = format!("{}/requestBody", n.pointer);
        let old = o
            .operation
            .request_body
            .as_ref()
            .and_then(|b| self.old.resolve(b));
        let new = n
            .operation
            .request_body
            .as_ref()
            .and_then(|b| self.new.resolve(b));
        match (old, new) {
            (None, None) => {}
            (None, Some(b)) => {
                let (rule, word) = if b.item.required {
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
            (Some(old), Some(new)) => {
                match (old.item.required, new.item.required) {
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
                let (location, phrase) = match (new.pointer(), new.name) {
                    (Some(pointer), Some(name)) => (pointer, format!("request body `{name}`")),
                    _ => (at, "request body".to_owned()),
                };
                let site = Site {
                    subject: subject.clone(),
                    location,
                    direction: self.flow(Direction::Request),
                    root: Root::Phrase(self.phrase(phrase)),
                    path: String::new(),
                };
                self.content(&site, &old.item.content, &new.item.content);
            }
        }
    }

    fn responses(&mut self, subject: &Subject, o: &Op<'a>, n: &Op<'a>) {
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
        let (old, new) = (entries(o.operation), entries(n.operation));
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
        let (Some(old), Some(new)) = (self.old.resolve(old), self.new.resolve(new)) else {
            return;
        };
        let label = if old_label == new_label {
            format!("response `{new_label}`")
        } else {
            format!("response `{new_label}` (was `{old_label}`)")
        };
        let at = format!("{at}/{}", escape(new_label));
        // A shared response: one entry per operation, not per status.
        let shared = match (new.pointer(), new.name) {
            (Some(pointer), Some(name)) if old_label == new_label => {
                Some((pointer, format!("response `{name}`")))
            }
            _ => None,
        };
        let (location, phrase) = shared.unwrap_or_else(|| (at.clone(), label.clone()));
        self.headers(
            subject,
            &location,
            &phrase,
            &old.item.headers,
            &new.item.headers,
        );
        self.links(
            subject,
            &location,
            &phrase,
            &old.item.links,
            &new.item.links,
        );
        match (old.item.content.is_empty(), new.item.content.is_empty()) {
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
                let phrase = if location == at {
                    format!("{label} body")
                } else {
                    phrase
                };
                let site = Site {
                    subject: subject.clone(),
                    location,
                    direction: self.flow(Direction::Response),
                    root: Root::Phrase(self.phrase(phrase)),
                    path: String::new(),
                };
                self.content(&site, &old.item.content, &new.item.content);
            }
        }
    }

    /// Compare the headers of a response (names are case-insensitive).
    fn headers(
        &mut self,
        subject: &Subject,
        at: &str,
        phrase: &str,
        old: &'a Headers,
        new: &'a Headers,
    ) {
        let find =
            |map: &'a Headers, name: &str| map.iter().find(|(k, _)| k.eq_ignore_ascii_case(name));
        for (name, old_header) in old {
            if name.eq_ignore_ascii_case("content-type") {
                continue; // described by the media types
            }
            let Some(old_header) = self.old.resolve(old_header) else {
                continue;
            };
            let pointer = format!("{at}/headers/{}", escape(name));
            match find(new, name).and_then(|(k, h)| self.new.resolve(h).map(|h| (k, h))) {
                None => {
                    let detail = format!("{phrase}: header `{name}` removed");
                    self.record(subject, &pointer, &r::RESPONSE_HEADER_REMOVED, detail, None);
                }
                Some((new_name, new_header)) => {
                    let pointer = format!("{at}/headers/{}", escape(new_name));
                    self.header(
                        subject,
                        &pointer,
                        phrase,
                        new_name,
                        old_header.item,
                        new_header.item,
                    );
                }
            }
        }
        for (name, new_header) in new {
            if name.eq_ignore_ascii_case("content-type") || find(old, name).is_some() {
                continue;
            }
            let Some(new_header) = self.new.resolve(new_header) else {
                continue;
            };
            let pointer = format!("{at}/headers/{}", escape(name));
            let (rule, word) = if new_header.item.required {
                (&r::RESPONSE_HEADER_ADDED_REQUIRED, "required")
            } else {
                (&r::RESPONSE_HEADER_ADDED, "optional")
            };
            let detail = format!("{phrase}: {word} header `{name}` added");
            self.record(subject, &pointer, rule, detail, None);
        }
    }

    fn header(
        &mut self,
        subject: &Subject,
        at: &str,
        phrase: &str,
        name: &str,
        old: &'a Header,
        new: &'a Header,
    ) {
        let label = format!("{phrase}: header `{name}`");
        match (old.required, new.required) {
            (true, false) => self.record(
                subject,
                at,
                &r::RESPONSE_HEADER_BECAME_OPTIONAL,
                format!("{label} became optional"),
                None,
            ),
            (false, true) => self.record(
                subject,
                at,
                &r::RESPONSE_HEADER_BECAME_REQUIRED,
                format!("{label} became required"),
                None,
            ),
            _ => {}
        }
        match (old.deprecated == Some(true), new.deprecated == Some(true)) {
            (false, true) => self.record(
                subject,
                at,
                &r::DEPRECATED,
                format!("{label} deprecated"),
                None,
            ),
            (true, false) => self.record(
                subject,
                at,
                &r::UNDEPRECATED,
                format!("{label} no longer deprecated"),
                None,
            ),
            _ => {}
        }
        let site = Site {
            subject: subject.clone(),
            location: format!("{at}/schema"),
            direction: self.flow(Direction::Response),
            root: Root::Phrase(self.phrase(format!("{phrase} header `{name}`"))),
            path: String::new(),
        };
        match (&old.format, &new.format) {
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

    /// Compare the links of a response.
    fn links(&mut self, subject: &Subject, at: &str, phrase: &str, old: &'a Links, new: &'a Links) {
        for (name, old_link) in old {
            let pointer = format!("{at}/links/{}", escape(name));
            let Some(old_link) = self.old.resolve(old_link) else {
                continue;
            };
            match new.get(name).and_then(|l| self.new.resolve(l)) {
                None => {
                    let detail = format!("{phrase}: link `{name}` removed");
                    self.record(subject, &pointer, &r::LINK_REMOVED, detail, None);
                }
                Some(new_link) => {
                    let what = link_changes(old_link.item, new_link.item);
                    if !what.is_empty() {
                        let detail =
                            format!("{phrase}: link `{name}` changed: {}", what.join(", "));
                        self.record(subject, &pointer, &r::LINK_CHANGED, detail, None);
                    }
                }
            }
        }
        for name in new.keys() {
            if !old.contains_key(name) {
                let pointer = format!("{at}/links/{}", escape(name));
                let detail = format!("{phrase}: link `{name}` added");
                self.record(subject, &pointer, &r::LINK_ADDED, detail, None);
            }
        }
    }

    /// Compare the media types of a body (or a `content` parameter).
    pub(super) fn content(&mut self, site: &Site, old: &'a Content, new: &'a Content) {
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
            let media_site = site.child(&format!("content/{}", escape(media)), "");
            let mut child = media_site.child("schema", "");
            if several && let Root::Phrase(p) = &child.root {
                child.root = Root::Phrase(format!("{p} (`{media}`)"));
            }
            self.encoding(&child, &media_site.location, om, nm);
            let to_ref =
                |m: &'a MediaType| m.schema.as_ref().map_or(SchemaRef::Any, SchemaRef::from);
            self.node(&child, to_ref(om), to_ref(nm));
        }
    }

    /// Compare the `encoding` of a media type, part by part (defaults taken
    /// into account: `style: form`, `explode` true for `form`).
    fn encoding(&mut self, site: &Site, at: &str, old: &'a MediaType, new: &'a MediaType) {
        let parts: std::collections::BTreeSet<&String> =
            old.encoding.keys().chain(new.encoding.keys()).collect();
        for part in parts {
            let describe = |e: Option<&Encoding>| -> String {
                let Some(e) = e else {
                    return "default".to_owned();
                };
                let mut bits = Vec::new();
                if let Some(ct) = &e.content_type {
                    bits.push(format!("contentType {ct}"));
                }
                if let Some(style) = &e.style {
                    bits.push(format!("style {}", query_style_name(style)));
                }
                if e.explode {
                    bits.push("explode".to_owned());
                }
                if e.allow_reserved {
                    bits.push("allowReserved".to_owned());
                }
                let mut headers: Vec<&String> = e.headers.keys().collect();
                headers.sort();
                for h in headers {
                    bits.push(format!("header {h}"));
                }
                if bits.is_empty() {
                    "default".to_owned()
                } else {
                    bits.join(", ")
                }
            };
            let (a, b) = (
                describe(old.encoding.get(part)),
                describe(new.encoding.get(part)),
            );
            if a != b {
                let location = format!("{at}/encoding/{}", escape(part));
                let site = Site {
                    location,
                    ..site.clone()
                };
                self.at(
                    &site,
                    &r::ENCODING_CHANGED,
                    format_args!("encoding of part `{part}` changed from {a} to {b}"),
                );
            }
        }
    }
}

/// The response headers map of `openapiv3`.
type Headers = indexmap::IndexMap<String, ReferenceOr<Header>>;
/// The response links map of `openapiv3`.
type Links = indexmap::IndexMap<String, ReferenceOr<Link>>;

/// What differs between two links: target, parameters, request body.
fn link_changes(old: &Link, new: &Link) -> Vec<&'static str> {
    let mut what = Vec::new();
    if old.operation != new.operation {
        what.push("target operation");
    }
    if old.parameters != new.parameters {
        what.push("parameters");
    }
    if old.request_body != new.request_body {
        what.push("request body");
    }
    what
}

/// How a parameter is written on the wire, defaults applied.
#[derive(Debug, PartialEq, Eq)]
struct Serialization {
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

fn query_style_name(style: &QueryStyle) -> &'static str {
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
fn serialization(p: &Parameter) -> Serialization {
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

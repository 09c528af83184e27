//! Responses, their headers and links.

use openapiv3::{Header, Link, Operation, ReferenceOr, Response, StatusCode};

use crate::diff::compare::differ::{Differ, Root, Site, Subject};
use crate::diff::rules::{self as r, Direction};
use crate::openapi::{Op, escape};

/// The response headers map of `openapiv3`.
pub(super) type Headers = indexmap::IndexMap<String, ReferenceOr<Header>>;
/// The response links map of `openapiv3`.
pub(super) type Links = indexmap::IndexMap<String, ReferenceOr<Link>>;

/// What differs between two links: target, parameters, request body.
pub(super) fn link_changes(old: &Link, new: &Link) -> Vec<&'static str> {
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

impl<'a> Differ<'a> {
    pub(in crate::diff::compare) fn responses(
        &mut self,
        subject: &Subject,
        o: &Op<'a>,
        n: &Op<'a>,
    ) {
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
                    let success = matches!(
                        status,
                        Some(StatusCode::Code(200..=299)) | Some(StatusCode::Range(2))
                    );
                    let rule = if success {
                        &r::RESPONSE_SUCCESS_REMOVED
                    } else {
                        &r::RESPONSE_REMOVED
                    };
                    self.record(subject, &at, rule, detail, None);
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

    pub(in crate::diff::compare) fn response(
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
                    text: false,
                };
                self.content(&site, &old.item.content, &new.item.content);
            }
        }
    }

    /// Compare the headers of a response (names are case-insensitive).
    pub(in crate::diff::compare) fn headers(
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

    pub(in crate::diff::compare) fn header(
        &mut self,
        subject: &Subject,
        at: &str,
        phrase: &str,
        name: &str,
        old: &'a Header,
        new: &'a Header,
    ) {
        let label = format!("{phrase}: header `{name}`");
        let required = (&r::RESPONSE_HEADER_BECAME_REQUIRED, "became required");
        let optional = (&r::RESPONSE_HEADER_BECAME_OPTIONAL, "became optional");
        self.toggle(
            subject,
            at,
            &label,
            (old.required, new.required),
            required,
            optional,
        );
        let deprecated = |d: Option<bool>| d == Some(true);
        self.deprecation(
            subject,
            at,
            &label,
            deprecated(old.deprecated),
            deprecated(new.deprecated),
        );
        let site = Site {
            subject: subject.clone(),
            location: format!("{at}/schema"),
            direction: self.flow(Direction::Response),
            root: Root::Phrase(self.phrase(format!("{phrase} header `{name}`"))),
            path: String::new(),
            // A header value is text on the wire.
            text: true,
        };
        self.schema_or_content(site, at, &old.format, &new.format);
    }

    /// Compare the links of a response.
    pub(in crate::diff::compare) fn links(
        &mut self,
        subject: &Subject,
        at: &str,
        phrase: &str,
        old: &'a Links,
        new: &'a Links,
    ) {
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
}

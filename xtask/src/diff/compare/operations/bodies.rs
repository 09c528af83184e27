//! Request bodies and media types (`content`, with their `encoding`).

use openapiv3::{Content, Encoding, MediaType};

use super::parameters::query_style_name;
use crate::diff::compare::differ::{Differ, Root, Site, Subject};

use crate::diff::rules::{self as r, Direction};
use crate::openapi::{Op, SchemaRef, escape};

impl<'a> Differ<'a> {
    pub(in crate::diff::compare) fn request_body(
        &mut self,
        subject: &Subject,
        o: &Op<'a>,
        n: &Op<'a>,
    ) {
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
                let required = (&r::REQUEST_BODY_BECAME_REQUIRED, "became required");
                let optional = (&r::REQUEST_BODY_BECAME_OPTIONAL, "became optional");
                let flags = (old.item.required, new.item.required);
                self.toggle(subject, &at, "request body", flags, required, optional);
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
                    text: false,
                };
                self.content(&site, &old.item.content, &new.item.content);
            }
        }
    }

    /// Compare the media types of a body (or a `content` parameter). A
    /// media type that disappears while a more specific or more general one
    /// appears (`application/json` ↔ `application/problem+json`, or only
    /// its parameters change) is paired with it, as oasdiff does, and their
    /// schemas are compared.
    pub(in crate::diff::compare) fn content(
        &mut self,
        site: &Site,
        old: &'a Content,
        new: &'a Content,
    ) {
        let removed: Vec<&String> = old.keys().filter(|m| !new.contains_key(*m)).collect();
        let added: Vec<&String> = new.keys().filter(|m| !old.contains_key(*m)).collect();
        let mut pairs: Vec<(&String, &String)> = old
            .keys()
            .filter(|m| new.contains_key(*m))
            .map(|m| (m, m))
            .collect();
        let mut renamed: Vec<(&String, &String)> = Vec::new();
        for from in &removed {
            if let Some(to) = added.iter().find(|to| {
                !renamed.iter().any(|(_, t)| t == *to)
                    && (media_contains(from, to) || media_contains(to, from))
            }) {
                renamed.push((from, to));
            }
        }
        for media in removed
            .iter()
            .filter(|m| !renamed.iter().any(|(f, _)| f == *m))
        {
            self.at(
                site,
                &r::MEDIA_TYPE_REMOVED,
                format_args!("media type `{media}` removed"),
            );
        }
        for media in added
            .iter()
            .filter(|m| !renamed.iter().any(|(_, t)| t == *m))
        {
            self.at(
                site,
                &r::MEDIA_TYPE_ADDED,
                format_args!("media type `{media}` added"),
            );
        }
        for (from, to) in &renamed {
            let (rule, how) = if media_contains(from, to) {
                (&r::MEDIA_TYPE_SPECIALIZED, "a more specific")
            } else {
                (&r::MEDIA_TYPE_GENERALIZED, "a more general")
            };
            self.at(
                site,
                rule,
                format_args!("media type `{from}` changed to {how} one, `{to}`"),
            );
        }
        pairs.extend(renamed);
        let several = old.len().max(new.len()) > 1;
        for (old_media, media) in pairs {
            let (Some(om), Some(nm)) = (old.get(old_media), new.get(media)) else {
                continue;
            };
            let media_site = site.child(&format!("content/{}", escape(media)), "");
            let mut child = media_site.child("schema", "");
            child.text = !is_json(media);
            if several && let Root::Phrase(p) = &child.root {
                child.root = Root::Phrase(format!("{p} (`{media}`)"));
            }
            self.encoding(&child, &media_site.location, om, nm);
            let to_ref =
                |m: &'a MediaType| m.schema.as_ref().map_or(SchemaRef::Any, SchemaRef::from);
            self.node(&child, to_ref(om), to_ref(nm));
        }
    }
}

/// `type`, `subtype` and `+suffix` of a media type (parameters dropped,
/// lower case).
fn media_parts(media: &str) -> (String, String, Option<String>) {
    let essence = media
        .split(';')
        .next()
        .unwrap_or(media)
        .trim()
        .to_ascii_lowercase();
    let (ty, sub) = essence.split_once('/').unwrap_or((essence.as_str(), ""));
    match sub.split_once('+') {
        Some((sub, suffix)) => (ty.to_owned(), sub.to_owned(), Some(suffix.to_owned())),
        None => (ty.to_owned(), sub.to_owned(), None),
    }
}

/// Whether `specific` is `general` or a specialization of it, oasdiff's
/// media type containment: `application/json` contains
/// `application/problem+json` and `application/json; charset=utf-8`.
fn media_contains(general: &str, specific: &str) -> bool {
    let (gt, gs, gx) = media_parts(general);
    let (st, ss, sx) = media_parts(specific);
    gt == st && ((gx.is_none() && sx.as_deref() == Some(gs.as_str())) || (gs == ss && gx == sx))
}

/// Whether values of `media` are typed JSON (`application/json`, a `+json`
/// type, parameters ignored), as oasdiff tells strongly typed media types.
pub(in crate::diff::compare) fn is_json(media: &str) -> bool {
    let essence = media.split(';').next().unwrap_or(media).trim();
    essence.eq_ignore_ascii_case("application/json")
        || essence.to_ascii_lowercase().ends_with("+json")
}

impl<'a> Differ<'a> {
    /// Compare the `encoding` of a media type, part by part (defaults taken
    /// into account: `style: form`, `explode` true for `form`).
    pub(in crate::diff::compare) fn encoding(
        &mut self,
        site: &Site,
        at: &str,
        old: &'a MediaType,
        new: &'a MediaType,
    ) {
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

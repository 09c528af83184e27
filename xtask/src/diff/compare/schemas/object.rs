//! Objects: properties added, removed, made required or optional (only those
//! that travel in the direction: `readOnly`/`writeOnly`), and
//! `additionalProperties`.

use super::facets::{Additional, Facets};
use crate::diff::compare::differ::{Differ, Site, summary};
use crate::diff::rules::{self as r, Direction};
use crate::openapi::{Document, SchemaRef, escape};

impl<'a> Differ<'a> {
    pub(super) fn object(&mut self, site: &Site, o: &Facets<'a>, n: &Facets<'a>) {
        let closed = matches!(o.additional, Additional::Closed);
        let prop_site = |name: &str| Site {
            location: format!("{}/properties/{}", site.location, escape(name)),
            ..site.clone()
        };
        // Only the properties that travel in this direction: a `readOnly`
        // property is not in requests, a `writeOnly` one not in responses.
        let (old_props, old_hidden) = self.visible(self.old, &o.properties, site.direction);
        let (new_props, new_hidden) = self.visible(self.new, &n.properties, site.direction);
        let note = |hidden: &[(&str, &'static str)], name: &str| {
            hidden
                .iter()
                .find(|(k, _)| *k == name)
                .map(|(_, why)| format!(" (now {why})"))
                .unwrap_or_default()
        };
        for (name, _) in &old_props {
            if !new_props.iter().any(|(k, _)| k == name) {
                let was = if o.required.contains(name) {
                    "required"
                } else {
                    "optional"
                };
                let why = note(&new_hidden, name);
                // Still in the schema, only hidden in responses.
                let rule = if new_hidden
                    .iter()
                    .any(|(k, w)| k == name && *w == "writeOnly")
                {
                    &r::PROPERTY_BECAME_WRITE_ONLY
                } else if matches!(n.additional, Additional::Closed) {
                    &r::PROPERTY_REMOVED_FROM_CLOSED
                } else {
                    &r::PROPERTY_REMOVED
                };
                self.at(
                    &prop_site(name),
                    rule,
                    format_args!("{was} property `{name}` removed{why}"),
                );
            }
        }
        for (name, schema) in &new_props {
            if old_props.iter().any(|(k, _)| k == name) {
                continue;
            }
            let (rule, word) = if n.required.contains(name) {
                (&r::PROPERTY_ADDED_REQUIRED, "required")
            } else if closed {
                (&r::PROPERTY_ADDED_TO_CLOSED, "optional")
            } else {
                (&r::PROPERTY_ADDED, "optional")
            };
            self.at(
                &prop_site(name),
                rule,
                format_args!(
                    "{word} property `{name}` ({}) added{}",
                    summary(*schema),
                    old_hidden
                        .iter()
                        .find(|(k, _)| k == name)
                        .map(|(_, why)| format!(" (no longer {why})"))
                        .unwrap_or_default()
                ),
            );
        }
        for (name, old_schema) in &old_props {
            let Some((_, new_schema)) = new_props.iter().find(|(k, _)| k == name) else {
                continue;
            };
            let child = site.child(&format!("properties/{}", escape(name)), &format!(".{name}"));
            match (o.required.contains(name), n.required.contains(name)) {
                (false, true) => self.at(&child, &r::PROPERTY_BECAME_REQUIRED, "became required"),
                (true, false) => self.at(&child, &r::PROPERTY_BECAME_OPTIONAL, "became optional"),
                _ => {}
            }
            self.node(&child, *old_schema, *new_schema);
        }
        // A `readOnly` property left out of a request still has its
        // `pattern` compared there, as oasdiff does (its pattern check knows
        // no readOnly: a client that sends back an object it read sends the
        // readOnly members too, and a server validating the new pattern
        // rejects old values). Its other constraints stay out, as in oasdiff
        // (`request-read-only-property-*`: info).
        if site.direction == Direction::Request {
            for (name, _) in old_hidden.iter().filter(|(_, why)| *why == "readOnly") {
                if !new_hidden
                    .iter()
                    .any(|(k, w)| k == name && *w == "readOnly")
                {
                    continue;
                }
                let find = |props: &[(&'a str, SchemaRef<'a>)]| {
                    props.iter().find(|(k, _)| k == name).map(|(_, s)| *s)
                };
                let (Some(a), Some(b)) = (find(&o.properties), find(&n.properties)) else {
                    continue;
                };
                let child =
                    site.child(&format!("properties/{}", escape(name)), &format!(".{name}"));
                let (os, _) = self.old.flatten(a);
                let (ns, _) = self.new.flatten(b);
                self.pattern(&child, &Facets::of(os), &Facets::of(ns));
            }
        }
        match (o.additional, n.additional) {
            (Additional::Open, Additional::Closed) => self.at(
                site,
                &r::OBJECT_CLOSED,
                "closed (additionalProperties: false)",
            ),
            (Additional::Closed, Additional::Open) => self.at(
                site,
                &r::OBJECT_OPENED,
                "opened (additionalProperties: false removed)",
            ),
            (Additional::Open, Additional::Schema(s)) => self.at(
                site,
                &r::OBJECT_CLOSED,
                format_args!("additional properties restricted to {}", summary(s)),
            ),
            (Additional::Schema(_), Additional::Open) => self.at(
                site,
                &r::OBJECT_OPENED,
                "additional properties no longer restricted",
            ),
            (Additional::Closed, Additional::Schema(s)) => self.at(
                site,
                &r::OBJECT_OPENED,
                format_args!("additional properties of type {} now allowed", summary(s)),
            ),
            (Additional::Schema(_), Additional::Closed) => self.at(
                site,
                &r::OBJECT_CLOSED,
                "additional properties no longer allowed",
            ),
            (Additional::Schema(a), Additional::Schema(b)) => {
                self.node(&site.child("additionalProperties", "{}"), a, b)
            }
            (Additional::Open, Additional::Open) | (Additional::Closed, Additional::Closed) => {}
        }
    }

    /// The properties of an object that travel in `direction`, and the
    /// names left out with why (`readOnly`, `writeOnly`).
    #[allow(clippy::type_complexity)]
    fn visible(
        &self,
        doc: &'a Document,
        properties: &[(&'a str, SchemaRef<'a>)],
        direction: Direction,
    ) -> (Vec<(&'a str, SchemaRef<'a>)>, Vec<(&'a str, &'static str)>) {
        let mut shown = Vec::new();
        let mut hidden = Vec::new();
        for (name, schema) in properties {
            let (_, meta) = doc.flatten(*schema);
            match direction {
                Direction::Request if meta.read_only => hidden.push((*name, "readOnly")),
                Direction::Response if meta.write_only => hidden.push((*name, "writeOnly")),
                _ => shown.push((*name, *schema)),
            }
        }
        (shown, hidden)
    }
}

#[cfg(test)]
mod tests {
    use crate::diff::compare::tests::{BASE, NAME, diff};

    #[test]
    fn read_only_and_write_only_properties_travel_one_way() {
        // A new required readOnly property of a request-only object: clients
        // never send it, nothing breaks.
        let edited = BASE.replace(
            NAME,
            "name: {type: string, maxLength: 10}\n        created: {type: string, readOnly: true}",
        );
        let edited = edited.replace("required: [name]", "required: [name, created]");
        assert_eq!(diff(BASE, &edited), vec![]);
        // A response property that becomes writeOnly is no longer sent: a
        // warning (oasdiff: info), not a break.
        let edited = BASE.replace("id: {type: string}", "id: {type: string, writeOnly: true}");
        let changes = diff(BASE, &edited);
        let shown: Vec<String> = changes
            .iter()
            .map(|c| format!("{} {} -> {}", c.rule.id, c.message(), c.class()))
            .collect();
        assert_eq!(
            shown,
            [
                "property-became-write-only `Thing`: required property `id` removed (now writeOnly) [response] -> warning"
            ]
        );
    }

    #[test]
    fn a_read_only_property_keeps_its_pattern_compared_in_requests() {
        // oasdiff: request-property-pattern-added (error) even for a
        // readOnly property: clients send back what they read.
        let base = BASE.replace(
            NAME,
            "name: {type: string, maxLength: 10}\n        created: {type: string, readOnly: true}",
        );
        let edited = base.replace(
            "created: {type: string, readOnly: true}",
            "created: {type: string, readOnly: true, pattern: \"^[a-z]+$\", minLength: 3}",
        );
        let shown: Vec<String> = diff(&base, &edited)
            .iter()
            .map(|c| format!("{} {} -> {}", c.rule.id, c.message(), c.class()))
            .collect();
        // Only the pattern: its other bounds stay out of requests, as in
        // oasdiff (request-read-only-property-*: info).
        assert_eq!(
            shown,
            [
                "bound-narrowed `ThingInput.created`: pattern `^[a-z]+$` added [request] -> breaking for clients"
            ]
        );
    }
}

//! What a wrapper or schema says about its value: `nullable`, `deprecated`
//! and `default`.

use crate::diff::compare::differ::show;
use crate::diff::compare::differ::{Differ, Site};
use crate::diff::rules as r;
use crate::openapi::Meta;

impl<'a> Differ<'a> {
    pub(super) fn meta(&mut self, site: &Site, o: &Meta, n: &Meta) {
        match (o.nullable, n.nullable) {
            (false, true) => self.at(site, &r::NULLABLE_ADDED, "now nullable"),
            (true, false) => self.at(site, &r::NULLABLE_REMOVED, "no longer nullable"),
            _ => {}
        }
        match (o.deprecated, n.deprecated) {
            (false, true) => self.at(site, &r::DEPRECATED, "deprecated"),
            (true, false) => self.at(site, &r::UNDEPRECATED, "no longer deprecated"),
            _ => {}
        }
        // A parameter's own default (written inline or on the component its
        // schema references) is what the server assumes when a client leaves
        // it out; elsewhere it documents the receiver.
        let rule = if site.is_parameter_value() {
            &r::PARAMETER_DEFAULT_CHANGED
        } else {
            &r::DEFAULT_CHANGED
        };
        match (&o.default, &n.default) {
            (None, Some(d)) => self.at(site, rule, format_args!("default {} added", show(d))),
            (Some(d), None) => self.at(site, rule, format_args!("default {} removed", show(d))),
            (Some(a), Some(b)) if a != b => self.at(
                site,
                rule,
                format_args!("default changed from {} to {}", show(a), show(b)),
            ),
            _ => {}
        }
    }
}

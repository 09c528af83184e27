//! Enums: `enum` values added or removed (or the restriction itself), and
//! the values of an open `x-extensible-enum`.

use serde_json::Value;

use super::facets::Facets;
use crate::diff::compare::differ::show_list;
use crate::diff::compare::differ::{Differ, Site};
use crate::diff::rules as r;

impl<'a> Differ<'a> {
    /// Values of an `x-extensible-enum` removed or added.
    pub(super) fn extensible_enumeration(&mut self, site: &Site, o: &Facets<'a>, n: &Facets<'a>) {
        let empty = Vec::new();
        let (a, b) = (
            o.extensible.as_ref().unwrap_or(&empty),
            n.extensible.as_ref().unwrap_or(&empty),
        );
        let removed: Vec<&Value> = a.iter().filter(|v| !b.contains(v)).collect();
        let added: Vec<&Value> = b.iter().filter(|v| !a.contains(v)).collect();
        if !removed.is_empty() && n.extensible.is_some() {
            self.at(
                site,
                &r::EXTENSIBLE_ENUM_NARROWED,
                format_args!("x-extensible-enum values removed: {}", show_list(&removed)),
            );
        }
        if !added.is_empty() {
            self.at(
                site,
                &r::EXTENSIBLE_ENUM_WIDENED,
                format_args!("x-extensible-enum values added: {}", show_list(&added)),
            );
        }
    }

    pub(super) fn enumeration(&mut self, site: &Site, o: &Facets<'a>, n: &Facets<'a>) {
        match (&o.enumeration, &n.enumeration) {
            (None, None) => {}
            (None, Some(values)) => {
                let values: Vec<&Value> = values.iter().collect();
                self.at(
                    site,
                    &r::ENUM_NARROWED,
                    format_args!("now restricted to the enum {}", show_list(&values)),
                );
            }
            (Some(_), None) => self.at(site, &r::ENUM_WIDENED, "enum restriction removed"),
            (Some(a), Some(b)) => {
                let removed: Vec<&Value> = a.iter().filter(|v| !b.contains(v)).collect();
                let added: Vec<&Value> = b.iter().filter(|v| !a.contains(v)).collect();
                if !removed.is_empty() {
                    self.at(
                        site,
                        &r::ENUM_NARROWED,
                        format_args!("enum values removed: {}", show_list(&removed)),
                    );
                }
                if !added.is_empty() {
                    self.at(
                        site,
                        &r::ENUM_WIDENED,
                        format_args!("enum values added: {}", show_list(&added)),
                    );
                }
            }
        }
    }
}

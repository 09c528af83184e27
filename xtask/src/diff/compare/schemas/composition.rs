//! Compositions: `oneOf`/`anyOf`/`allOf` members added or removed (matched
//! by `$ref` name, inline ones by position), and the matched pairs compared.

use super::schema_name;
use crate::diff::compare::differ::{Differ, Site, summary};
use crate::diff::rules as r;
use crate::openapi::SchemaRef;

impl<'a> Differ<'a> {
    /// Compare a `oneOf`/`anyOf`/`allOf` list. Members are matched by
    /// `$ref` name, inline members by position among the inline ones.
    pub(super) fn composition(
        &mut self,
        site: &Site,
        keyword: &str,
        o: &[SchemaRef<'a>],
        n: &[SchemaRef<'a>],
        all_of: bool,
    ) {
        let keys = |list: &[SchemaRef<'a>]| -> Vec<String> {
            let mut inline = 0;
            list.iter()
                .map(|s| match s {
                    SchemaRef::Ref(r) => schema_name(r).unwrap_or(r).to_owned(),
                    _ => {
                        inline += 1;
                        format!("inline #{inline}")
                    }
                })
                .collect()
        };
        let (ok, nk) = (keys(o), keys(n));
        let (more, fewer) = match keyword {
            _ if all_of => (&r::COMPOSITION_NARROWED, &r::COMPOSITION_LOOSENED),
            "anyOf" => (&r::COMPOSITION_LOOSENED, &r::COMPOSITION_NARROWED),
            _ => (&r::COMPOSITION_WIDENED, &r::COMPOSITION_NARROWED),
        };
        let member = |key: &str, s: SchemaRef<'_>| match s {
            SchemaRef::Ref(_) => format!("`{key}`"),
            _ => format!("{key} ({})", summary(s)),
        };
        for (key, s) in ok.iter().zip(o) {
            if !nk.contains(key) {
                let member = member(key, *s);
                self.at(
                    site,
                    fewer,
                    format_args!("{keyword} member {member} removed"),
                );
            }
        }
        for (key, s) in nk.iter().zip(n) {
            if !ok.contains(key) {
                let member = member(key, *s);
                self.at(site, more, format_args!("{keyword} member {member} added"));
            }
        }
        for (i, key) in ok.iter().enumerate() {
            if let Some(j) = nk.iter().position(|k| k == key) {
                let child = site.child(&format!("{keyword}/{j}"), &format!("<{keyword} {key}>"));
                self.node(&child, o[i], n[j]);
            }
        }
    }
}

//! Effective security requirements of an operation.

use std::collections::{BTreeMap, BTreeSet};

use openapiv3::SecurityRequirement;

use crate::diff::compare::differ::{Differ, Subject, join_code};
use crate::diff::rules as r;
use crate::openapi::{Document, Op};

/// Security requirement alternatives: scheme-name set → scheme → scopes.
pub(super) type Alternatives = BTreeMap<Vec<String>, BTreeMap<String, BTreeSet<String>>>;

pub(super) fn alternatives(reqs: &[SecurityRequirement]) -> Alternatives {
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

impl<'a> Differ<'a> {
    pub(in crate::diff::compare) fn security(&mut self, subject: &Subject, o: &Op<'a>, n: &Op<'a>) {
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
        // A new alternative asking for a subset of an old one's schemes (and
        // of their scopes) is met by every client that met the old one.
        let implied = |old_schemes: &BTreeMap<String, BTreeSet<String>>| {
            new.iter().find(|(_, new_schemes)| {
                new_schemes.iter().all(|(scheme, scopes)| {
                    old_schemes
                        .get(scheme)
                        .is_some_and(|old_scopes| scopes.is_subset(old_scopes))
                })
            })
        };
        let mut relaxed_to: BTreeSet<&Vec<String>> = BTreeSet::new();
        for (key, schemes) in &old {
            match new.get(key) {
                None if !key.is_empty() => match implied(schemes) {
                    Some((new_key, _)) => {
                        relaxed_to.insert(new_key);
                        let detail = format!(
                            "security alternative {} relaxed to {}",
                            show_alt(key),
                            show_alt(new_key)
                        );
                        self.record(subject, &at, &r::SECURITY_RELAXED, detail, None);
                    }
                    None => {
                        let detail = format!("security alternative {} removed", show_alt(key));
                        self.record(subject, &at, &r::SECURITY_TIGHTENED, detail, None);
                    }
                },
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
            if !old.contains_key(key) && !key.is_empty() && !relaxed_to.contains(key) {
                let detail = format!("security alternative {} added", show_alt(key));
                self.record(subject, &at, &r::SECURITY_RELAXED, detail, None);
            }
        }
    }
}

//! Compare two OpenAPI 3.0 documents (read with [`crate::openapi::read()`]) and list the
//! changes, each tagged with a [`Rule`](super::rules::Rule) and the direction(s) it was found in.
//! The walk is split by what it walks: [`operations`] (pairing, security, parameters, bodies,
//! responses, headers, links, callbacks, encodings), [`schemas`] (types, formats, enums, bounds,
//! objects, compositions) and [`components`] (schemas added, removed or renamed; security
//! schemes). A component is compared once per direction (which also stops recursive schemas)
//! and its changes are reported against it. Descriptions, summaries, examples, titles, tags,
//! servers and `info` are left out: none changes the wire or the generated types.

use std::collections::{BTreeMap, BTreeSet};

use crate::openapi::Document;

use differ::Differ;
pub use differ::{Change, Subject};

/// Compare `old` (the base) with `new` (the working tree).
///
/// Changes come grouped by subject: operations in the base's document order
/// (added ones last), then component schemas and security schemes by name.
pub fn compare(old: &Document, new: &Document) -> Vec<Change> {
    let mut differ = Differ {
        old,
        new,
        renames: components::detect_renames(old, new),
        changes: Vec::new(),
        index: BTreeMap::new(),
        visited: BTreeSet::new(),
        depth: 0,
        callback: None,
    };
    differ.operations();
    differ.components();
    differ.security_schemes();
    let mut changes = differ.changes;
    let mut first_seen: BTreeMap<Subject, usize> = BTreeMap::new();
    for (i, change) in changes.iter().enumerate() {
        first_seen.entry(change.subject.clone()).or_insert(i);
    }
    // Stable sort: within a subject, changes keep their walk order.
    changes.sort_by_key(|c| match &c.subject {
        Subject::Operation { .. } => (0, first_seen[&c.subject], String::new()),
        Subject::Schema(name) => (1, 0, name.clone()),
        Subject::SecurityScheme(name) => (2, 0, name.clone()),
    });
    changes
}

pub mod components;
pub mod differ;
pub mod operations;
pub mod schemas;
#[cfg(test)]
mod tests;

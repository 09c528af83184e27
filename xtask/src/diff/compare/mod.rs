//! Compare two OpenAPI 3.0 documents (read with [`crate::openapi::read()`])
//! and list the changes, each tagged with a [`Rule`](super::rules::Rule) from [`super::rules`]
//! and the direction(s) it was found in.
//!
//! The walk is split by what it walks: [`operations`] (pairing, security,
//! parameters, bodies, responses, headers, links, callbacks, encodings),
//! [`schemas`] (types, formats, enums, bounds, objects, compositions) and
//! [`components`] (schemas added, removed or renamed; security schemes).
//!
//! What is walked:
//!
//! * operations, paired by the same operationId on the same route, then by
//!   operationId, then by method and path (path parameter names ignored),
//!   each at most once (so an operationId reused on several routes pairs
//!   route by route); their deprecation (`deprecated` or `x-deprecated`) and
//!   sunset (`x-sunset`), effective security requirements, parameters
//!   (path-item and operation level, with their serialization: `style`,
//!   `explode`, `allowReserved`, defaults applied), request body, responses
//!   (a status missing on one side is compared with the range or `default`
//!   that covers it there), response headers and links, and callbacks (where
//!   the provider sends the request: directions flip and operation-level
//!   classes swap clients and servers);
//! * schemas, from each parameter, header and body (with the media type's
//!   `encoding`): `$ref`s are followed and wrappers unwrapped by the model
//!   ([`crate::openapi::resolve`]), their `nullable`, `deprecated`,
//!   `default`, `readOnly` and `writeOnly` counting for the value they wrap.
//!   A `readOnly` property exists only in responses and a `writeOnly` one
//!   only in requests. A component is compared once per direction (this also
//!   stops recursive schemas); its changes are reported against the
//!   component, not against every operation that uses it;
//! * component schemas added, removed or renamed (same shape, new name), and
//!   unused ones (compared as if used both ways);
//! * security scheme definitions.
//!
//! Left out on purpose: descriptions, summaries, examples, titles, tags,
//! servers and `info`. None of them changes what is valid on the wire or the
//! generated client's types or methods (descriptions only change doc
//! comments).

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

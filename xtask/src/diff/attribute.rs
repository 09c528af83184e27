//! Which spec change each breaking change of the generated Rust API comes
//! from: the `rust_api` verdict of a change.
//!
//! progenitor names a `Client` method after the operationId (snake case) and
//! a type after its component schema, or after the operation and the place
//! for an inline schema (PascalCase: `GetThingResponse`, `ThingKind`). A
//! breaking item is tied to
//!
//! * a method `Client::m`: the changes of the operation whose id is `m` in
//!   snake case (or, for a renamed operation or schema, whose detail names
//!   the old id);
//! * a type `types::T`: the changes of the component schema whose PascalCase
//!   name is the longest prefix of `T`, else of the operation whose
//!   PascalCase id is a prefix of `T`.
//!
//! Inside a struct or enum change, a detail line naming a member (field
//! `weight`) goes to the change that names the same property; when no
//! change names one, every change of the subject gets all lines. A breaking
//! item that no change claims is listed on its own
//! ([`super::SpecDiff::rust_api_unattributed`]).

use std::collections::BTreeSet;

use super::compare::{Change, Subject};
use super::rust_api::ApiChange;

/// `getThing`, `get-thing`, `get_thing` → `get_thing`.
pub fn snake(name: &str) -> String {
    let mut out = String::new();
    let mut prev_lower = false;
    for c in name.chars() {
        if c.is_ascii_alphanumeric() {
            if c.is_ascii_uppercase() && prev_lower {
                out.push('_');
            }
            prev_lower = c.is_ascii_lowercase() || c.is_ascii_digit();
            out.push(c.to_ascii_lowercase());
        } else {
            if !out.ends_with('_') && !out.is_empty() {
                out.push('_');
            }
            prev_lower = false;
        }
    }
    out.trim_end_matches('_').to_owned()
}

/// `getThing`, `get-thing`, `get_thing` → `GetThing`.
pub fn pascal(name: &str) -> String {
    snake(name)
        .split('_')
        .map(|part| {
            let mut chars = part.chars();
            match chars.next() {
                Some(first) => first.to_ascii_uppercase().to_string() + chars.as_str(),
                None => String::new(),
            }
        })
        .collect()
}

/// The words between backticks in `text`.
fn quoted(text: &str) -> Vec<&str> {
    text.split('`').skip(1).step_by(2).collect()
}

/// The names a change is known by: its subject, plus for a rename the old
/// name found in its detail.
fn names(change: &Change) -> (Vec<String>, Vec<String>) {
    let renamed = matches!(
        change.rule.id,
        "operation-id-changed" | "schema-renamed" | "schema-replaced"
    );
    let extra: Vec<&str> = if renamed {
        quoted(&change.detail)
    } else {
        Vec::new()
    };
    match &change.subject {
        Subject::Operation { id, .. } => {
            let mut ops = vec![id.clone()];
            ops.extend(extra.iter().map(|s| (*s).to_owned()));
            (ops, Vec::new())
        }
        Subject::Schema(name) => {
            let mut schemas = vec![name.clone()];
            schemas.extend(extra.iter().map(|s| (*s).to_owned()));
            (Vec::new(), schemas)
        }
        Subject::SecurityScheme(_) => (Vec::new(), Vec::new()),
    }
}

/// The changes (indices) an API item belongs to.
fn owners(changes: &[Change], item: &str) -> Vec<usize> {
    if let Some(method) = item.strip_prefix("Client::") {
        return (0..changes.len())
            .filter(|&i| names(&changes[i]).0.iter().any(|id| snake(id) == method))
            .collect();
    }
    let Some(ty) = item.strip_prefix("types::") else {
        return Vec::new();
    };
    // Longest schema-name prefix, then operation prefix.
    for pick in [
        |n: (Vec<String>, Vec<String>)| n.1,
        |n: (Vec<String>, Vec<String>)| n.0,
    ] {
        let mut best = 0;
        let mut found = Vec::new();
        for (i, change) in changes.iter().enumerate() {
            for name in pick(names(change)) {
                let p = pascal(&name);
                if p.is_empty() || !ty.starts_with(&p) {
                    continue;
                }
                if p.len() > best {
                    best = p.len();
                    found.clear();
                }
                if p.len() == best && !found.contains(&i) {
                    found.push(i);
                }
            }
        }
        if !found.is_empty() {
            return found;
        }
    }
    Vec::new()
}

/// The member a detail line is about (`field `weight: f64` added` →
/// `weight`).
fn member(line: &str) -> Option<String> {
    let first = quoted(line).into_iter().next()?;
    let name = first.split([':', '(', ' ']).next()?;
    Some(snake(name))
}

/// For each change, the breaking API changes it causes; and the breaking
/// API changes no change claims.
pub fn attribute(changes: &[Change], api: &[ApiChange]) -> (Vec<Vec<ApiChange>>, Vec<ApiChange>) {
    let mut by_change: Vec<Vec<ApiChange>> = vec![Vec::new(); changes.len()];
    let mut unclaimed = Vec::new();
    for item in api.iter().filter(|a| a.breaks) {
        let owners = owners(changes, &item.item);
        if owners.is_empty() {
            unclaimed.push(item.clone());
            continue;
        }
        // Detail lines per owner: those naming a member the change names.
        let mut claimed: BTreeSet<usize> = BTreeSet::new();
        let mut lines: Vec<Vec<String>> = vec![Vec::new(); owners.len()];
        for (k, &i) in owners.iter().enumerate() {
            let words: BTreeSet<String> = quoted(&changes[i].detail)
                .iter()
                .map(|w| snake(w.split([' ', ':']).next().unwrap_or(w)))
                .collect();
            for (j, line) in item.details.iter().enumerate() {
                if member(line).is_some_and(|m| words.contains(&m)) {
                    lines[k].push(line.clone());
                    claimed.insert(j);
                }
            }
        }
        let rest: Vec<String> = item
            .details
            .iter()
            .enumerate()
            .filter(|(j, _)| !claimed.contains(j))
            .map(|(_, l)| l.clone())
            .collect();
        for (k, &i) in owners.iter().enumerate() {
            let mut details = std::mem::take(&mut lines[k]);
            if details.is_empty() || claimed.is_empty() {
                details.extend(rest.iter().cloned());
            }
            if details.is_empty() && !item.details.is_empty() {
                continue;
            }
            by_change[i].push(ApiChange {
                details,
                ..item.clone()
            });
        }
    }
    (by_change, unclaimed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_follow_progenitor() {
        assert_eq!(snake("getThing"), "get_thing");
        assert_eq!(snake("get-thing"), "get_thing");
        assert_eq!(snake("conversion.get"), "conversion_get");
        assert_eq!(pascal("getThing"), "GetThing");
        assert_eq!(pascal("thing_input"), "ThingInput");
        assert_eq!(
            member("field `weight: f64` added").as_deref(),
            Some("weight")
        );
        assert_eq!(member("variant `Blue` added").as_deref(), Some("blue"));
    }
}

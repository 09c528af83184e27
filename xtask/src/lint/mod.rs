//! Spec lint rules: constructs that break progenitor 0.15.1 generation (it
//! errors or panics) or silently degrade the generated client, and review
//! rules that keep the specs consistent (naming, documentation, no dead
//! components).
//!
//! Every rule is one line of the `rules!` table below ([`RULES`]) (CONTRIBUTING.md's lint
//! table is checked against it); its check lives with its tests in
//! [`operations`], [`schemas`] or [`components`]. The checks read the one
//! model of [`crate::openapi`]: typed operations for the walk, the JSON the
//! reader kept for keyword-level questions.
//!
//! Findings print as `spec:location: rule-id: message`, where `location` is a
//! JSON pointer into the spec (`#/paths/~1users~1{id}/get`).

pub mod components;
pub mod operations;
pub mod rules;
pub mod schemas;
#[cfg(test)]
mod test_support;

use crate::openapi::Document;
use crate::specs::SpecConfig;
pub use components::reachable_refs;
pub use operations::is_lower_camel_case;
pub use rules::*;

/// Run every rule on a read spec (its JSON form, as the reader kept it).
pub fn lint(config: &SpecConfig, document: &Document) -> Vec<Finding> {
    let doc = &document.json;
    let mut linter = Linter {
        spec: config.spec,
        document,
        doc,
        findings: Vec::new(),
    };
    if let Some(f) = check_version(config.spec, Some(document.spec.openapi.as_str())) {
        linter.findings.push(f);
    }
    operations::lint_operations(&mut linter);
    schemas::lint_response_schemas(&mut linter);
    schemas::lint_component_descriptions(&mut linter);
    if config.int64_strings {
        schemas::lint_int64_strings(&mut linter, doc, "#".to_owned());
    }
    operations::lint_review_operations(&mut linter);
    operations::lint_parameter_descriptions(&mut linter);
    schemas::lint_schemas(&mut linter);
    components::lint_unused_components(&mut linter);
    linter.findings
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    use crate::lint::test_support::{CLEAN, findings, ids};

    #[test]
    fn clean_spec_only_flags_the_error_schema() {
        assert_eq!(
            findings(CLEAN),
            vec![
                "specs/t.yaml:#/components/schemas/Error: response-additional-properties-false: \
                 schema reachable from a response has additionalProperties: false \
                 (becomes #[serde(deny_unknown_fields)]: a field added by the server breaks deserialization)"
            ]
        );
    }

    #[test]
    fn version() {
        let spec = CLEAN
            .replace("additionalProperties: false", "")
            .replace("3.0.3", "3.1.0");
        assert_eq!(ids(&spec), vec!["openapi-version"]);
    }

    #[test]
    fn every_rule_is_listed_once() {
        let ids: BTreeSet<_> = RULES.iter().map(|r| r.id).collect();
        assert_eq!(ids.len(), RULES.len());
    }

    #[test]
    fn the_contributing_lint_table_is_the_rule_table() {
        let guide =
            std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../CONTRIBUTING.md"))
                .expect("CONTRIBUTING.md at the workspace root");
        let section = guide
            .split("### Spec lint rules")
            .nth(1)
            .expect("CONTRIBUTING.md has a `### Spec lint rules` section");
        let rows: Vec<&str> = section
            .lines()
            .skip_while(|l| !l.starts_with("| rule |"))
            .skip(2)
            .take_while(|l| l.starts_with('|'))
            .collect();
        let expected = contributing_rows();
        assert_eq!(
            rows,
            expected,
            "CONTRIBUTING.md's lint table differs from lint::RULES; the table should read:\n{}",
            expected.join("\n")
        );
    }
}

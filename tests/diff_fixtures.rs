//! `cargo xtask diff` on fixture pairs: `tests/fixtures/diff/<case>/base.yaml`
//! (absent: the spec is new) and `new.yaml`, one pair per class of change.
//! Each case snapshots the text and Markdown reports (which include the
//! generated Rust API summary) and asserts the exit status and the kinds of
//! change found.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

use xtask::diff::{self, Format, Report};
use xtask::specs::SpecConfig;

/// Expected exit status (1 = breaking) and the change kinds that must appear.
const EXPECTED: &[(&str, u8, &[&str])] = &[
    ("bounds-changed", 1, &["bound-narrowed", "bound-widened"]),
    ("deprecations", 0, &["deprecated"]),
    ("enum-narrowed-both-ways", 1, &["enum-narrowed"]),
    ("enum-narrowed-in-request", 1, &["enum-narrowed"]),
    ("enum-narrowed-in-response", 1, &["enum-narrowed"]),
    ("enum-widened-in-response", 1, &["enum-widened"]),
    ("new-spec", 0, &["operation-added", "schema-added"]),
    ("nullable-wrapper-changed", 1, &["nullable-removed"]),
    ("operation-id-renamed", 1, &["operation-id-changed"]),
    ("operation-removed", 1, &["operation-removed"]),
    ("optional-property-added", 0, &["property-added"]),
    ("required-parameter-added", 1, &["parameter-added-required"]),
    ("response-added", 1, &["response-added"]),
    (
        "response-property-became-optional",
        1,
        &["property-became-optional"],
    ),
    ("response-property-removed", 1, &["property-removed"]),
    ("schema-renamed", 1, &["schema-renamed"]),
    ("security-required", 1, &["security-tightened"]),
    (
        "type-and-format-changed",
        1,
        &["type-changed", "format-widened"],
    ),
];

fn fixtures_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/diff")
}

fn read(path: &Path) -> Option<String> {
    fs::read_to_string(path).ok()
}

fn report(case: &str) -> Report {
    let dir = fixtures_dir().join(case);
    let spec: &'static str = Box::leak(format!("fixtures/diff/{case}/new.yaml").into_boxed_str());
    let config = SpecConfig {
        name: "fixture",
        spec,
        output: "unused.rs",
        int64_strings: false,
        plain_constrained_strings: false,
        inner_type: None,
    };
    let base = read(&dir.join("base.yaml"));
    let new = read(&dir.join("new.yaml"));
    let spec = diff::diff_texts(&config, base.as_deref(), new.as_deref()).unwrap();
    Report {
        base: "the fixture's base.yaml".to_owned(),
        specs: vec![spec],
    }
}

#[test]
fn every_fixture_has_an_expectation() {
    let on_disk: BTreeSet<String> = fs::read_dir(fixtures_dir())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    let expected: BTreeSet<String> = EXPECTED.iter().map(|(c, _, _)| (*c).to_owned()).collect();
    assert_eq!(on_disk, expected);
}

#[test]
fn fixtures() {
    for (case, status, kinds) in EXPECTED {
        let report = report(case);
        let found: BTreeSet<&str> = report.specs[0].changes.iter().map(|c| c.rule.id).collect();
        for kind in *kinds {
            assert!(
                found.contains(kind),
                "{case}: no {kind} change; found {found:?}"
            );
        }
        assert_eq!(
            report.exit_status(false),
            *status,
            "{case}: exit status\n{}",
            report.render(Format::Text)
        );
        assert_eq!(report.exit_status(true), 0, "{case}: --allow-breaking");
        let diff::RustApi::Changes(_) = &report.specs[0].rust_api else {
            panic!("{case}: the Rust API summary is unavailable");
        };
        insta::assert_snapshot!(format!("{case}-text"), report.render(Format::Text));
        insta::assert_snapshot!(format!("{case}-markdown"), report.render(Format::Markdown));
    }
}

#[test]
fn json_output_has_a_stable_schema() {
    let report = report("enum-narrowed-both-ways");
    let json: serde_json::Value = serde_json::from_str(&report.render(Format::Json)).unwrap();
    let keys: Vec<&str> = json
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(
        keys,
        [
            "base",
            "breaking",
            "changes",
            "rust_api",
            "rust_api_unavailable"
        ]
    );
    assert_eq!(json["breaking"], true);
    let change = &json["changes"][0];
    let keys: Vec<&str> = change
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(
        keys,
        ["class", "kind", "location", "message", "spec", "subject"]
    );
    assert_eq!(change["class"], "breaking-clients-and-servers");
    assert_eq!(change["kind"], "enum-narrowed");
    assert_eq!(change["location"], "#/components/schemas/Kind");
    assert_eq!(change["spec"], "fixture");
    insta::assert_snapshot!("enum-narrowed-both-ways-json", report.render(Format::Json));
}

//! `cargo xtask diff` on fixture pairs: `tests/fixtures/diff/<case>/base.yaml`
//! (absent: the spec is new) and `new.yaml`, one pair per class of change.
//! Each case snapshots the text and Markdown reports (which include the
//! generated Rust API summary) and asserts the exit status and the kinds of
//! change found.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

use xtask::diff::{self, FailOn, Format, Report};
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
    ("operation-id-renamed", 0, &["operation-id-changed"]),
    ("operation-removed", 1, &["operation-removed"]),
    ("optional-property-added", 0, &["property-added"]),
    ("required-parameter-added", 1, &["parameter-added-required"]),
    ("response-added", 0, &["response-added"]),
    (
        "response-property-became-optional",
        1,
        &["property-became-optional"],
    ),
    ("response-property-removed", 1, &["property-removed"]),
    ("schema-renamed", 0, &["schema-renamed"]),
    ("security-required", 0, &["security-tightened"]),
    (
        "type-and-format-changed",
        1,
        &["type-changed", "format-widened"],
    ),
    (
        "response-header-became-optional",
        1,
        &["response-header-became-optional"],
    ),
    ("response-header-removed", 1, &["response-header-removed"]),
    (
        "response-header-type-generalized",
        1,
        &["type-widened", "nullable-added", "format-widened"],
    ),
    ("parameter-style-changed", 1, &["parameter-style-changed"]),
    ("encoding-changed", 1, &["encoding-changed"]),
    ("callback-event-widened", 1, &["enum-widened"]),
    ("callback-removed", 1, &["callback-removed"]),
    ("link-removed", 1, &["link-removed"]),
    (
        "extensible-enum-value-added",
        0,
        &["extensible-enum-widened"],
    ),
    ("sunset-brought-forward", 1, &["sunset-brought-forward"]),
    (
        "read-only-required-property-added",
        1,
        &["property-added-required"],
    ),
    ("response-number-to-integer", 1, &["type-narrowed"]),
    ("reused-operation-id", 0, &[]),
    ("header-name-case", 0, &[]),
    (
        "header-parameter-default-added",
        1,
        &["parameter-default-changed"],
    ),
    (
        "header-parameter-schema-default-added",
        1,
        &["parameter-default-changed"],
    ),
    (
        "security-scheme-unreadable",
        1,
        &["security-scheme-changed"],
    ),
    ("response-media-type-removed", 1, &["media-type-removed"]),
    // Wire-compatible; the new side does not generate, so the Rust API breaks.
    ("multipart-operation-added", 0, &["operation-added"]),
    ("security-requirement-relaxed", 1, &["security-relaxed"]),
    (
        "tolerant-reader",
        1,
        &["parameter-became-required", "bound-widened"],
    ),
    // Wire-compatible changes that rename or keep the generated API (the
    // rust-api verdict is checked against rustc in xtask's
    // diff_ground_truth test).
    ("path-parameter-renamed", 0, &["parameter-renamed"]),
    ("success-response-added", 0, &["response-added"]),
    ("success-response-removed", 1, &["response-success-removed"]),
    (
        "response-property-became-write-only",
        0,
        &["property-became-write-only"],
    ),
];

/// The class each new case's key change must get (kind → class id).
const CLASSES: &[(&str, &str, &str)] = &[
    (
        "header-parameter-default-added",
        "parameter-default-changed",
        "breaking-clients",
    ),
    (
        "response-header-became-optional",
        "response-header-became-optional",
        "breaking-clients",
    ),
    (
        "response-header-removed",
        "response-header-removed",
        "breaking-clients",
    ),
    (
        "response-header-type-generalized",
        "type-widened",
        "breaking-clients",
    ),
    (
        "response-header-type-generalized",
        "nullable-added",
        "breaking-clients",
    ),
    (
        "parameter-style-changed",
        "parameter-style-changed",
        "breaking-clients-and-servers",
    ),
    (
        "encoding-changed",
        "encoding-changed",
        "breaking-clients-and-servers",
    ),
    // The provider sends the callback's request: a widened event breaks the
    // consumers' receivers, i.e. clients.
    ("callback-event-widened", "enum-widened", "breaking-clients"),
    ("callback-removed", "callback-removed", "breaking-clients"),
    ("link-removed", "link-removed", "breaking-clients"),
    (
        "extensible-enum-value-added",
        "extensible-enum-widened",
        "compatible",
    ),
    (
        "sunset-brought-forward",
        "sunset-brought-forward",
        "breaking-clients",
    ),
    // readOnly: only in responses, so only servers must now send it.
    (
        "read-only-required-property-added",
        "property-added-required",
        "breaking-servers",
    ),
    (
        "response-number-to-integer",
        "type-narrowed",
        "breaking-servers",
    ),
    (
        "tolerant-reader",
        "parameter-became-required",
        "breaking-clients",
    ),
    ("tolerant-reader", "bound-widened", "breaking-clients"),
    (
        "security-scheme-unreadable",
        "security-scheme-changed",
        "breaking-clients-and-servers",
    ),
    // Old servers still send it; old clients that accept or decode only it
    // get something else.
    (
        "response-media-type-removed",
        "media-type-removed",
        "breaking-clients-and-servers",
    ),
    (
        "success-response-removed",
        "response-success-removed",
        "breaking-clients-and-servers",
    ),
    (
        "response-property-became-write-only",
        "property-became-write-only",
        "warning",
    ),
    // One credential fewer in a requirement: every old client still passes.
    (
        "security-requirement-relaxed",
        "security-relaxed",
        "breaking-servers",
    ),
];

/// Cases where progenitor cannot generate a side (a multipart body, a reused
/// operationId, operations without operationId): the Rust API section says
/// which side and why, and the spec changes are still all listed. Each is
/// checked against progenitor in xtask's diff_ground_truth test.
const UNGENERATED: &[&str] = &[
    "encoding-changed",
    "multipart-operation-added",
    "reused-operation-id",
    "tolerant-reader",
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
        plain_string_constraints: &[],
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
            report.exit_status(FailOn::Wire, false),
            *status,
            "{case}: exit status\n{}",
            report.render(Format::Text)
        );
        assert_eq!(
            report.exit_status(FailOn::Any, true),
            0,
            "{case}: --allow-breaking"
        );
        for (_, kind, class) in CLASSES.iter().filter(|(c, _, _)| c == case) {
            let change = report.specs[0]
                .changes
                .iter()
                .find(|c| c.rule.id == *kind)
                .unwrap_or_else(|| panic!("{case}: no {kind}"));
            assert_eq!(change.class().id(), *class, "{case}: class of {kind}");
        }
        let generated = matches!(&report.specs[0].rust_api, diff::RustApi::Changes(_));
        assert_eq!(
            generated,
            !UNGENERATED.contains(case),
            "{case}: Rust API summary {:?}",
            report.specs[0].rust_api
        );
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
            "rust_api_breaking",
            "rust_api_unattributed",
            "rust_api_unavailable",
            "warnings"
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
        [
            "kind", "level", "location", "message", "rust_api", "spec", "subject", "wire"
        ]
    );
    assert_eq!(change["wire"], "both");
    assert_eq!(change["level"], "breaking");
    assert_eq!(change["kind"], "enum-narrowed");
    assert_eq!(change["location"], "#/components/schemas/Kind");
    assert_eq!(change["spec"], "fixture");
    insta::assert_snapshot!("enum-narrowed-both-ways-json", report.render(Format::Json));
}

#[test]
fn the_tolerant_reader_compares_what_it_understands() {
    let report = report("tolerant-reader");
    let warnings: Vec<String> = report.specs[0]
        .warnings
        .iter()
        .map(|(side, w)| format!("{} {}", side.id(), w.pointer))
        .collect();
    // Only the `in: body` parameter is left out, on each side; integer keys,
    // missing descriptions, a parameter without schema and a null
    // `content` are read without complaint.
    assert_eq!(
        warnings,
        [
            "base #/paths/~1items/get/parameters/1",
            "new #/paths/~1items/get/parameters/1"
        ]
    );
    let json: serde_json::Value = serde_json::from_str(&report.render(Format::Json)).unwrap();
    assert_eq!(json["warnings"][0]["side"], "base");
    assert_eq!(
        json["warnings"][0]["pointer"],
        "#/paths/~1items/get/parameters/1"
    );
}

#[test]
fn a_new_side_that_does_not_generate_breaks_the_rust_api() {
    // The base crate exists, the new spec generates none: wire-compatible,
    // but every program using the crate breaks.
    let added = report("multipart-operation-added");
    assert_eq!(added.exit_status(FailOn::Wire, false), 0);
    assert_eq!(added.exit_status(FailOn::RustApi, false), 1);
    assert!(added.is_rust_api_breaking());
    // A base that never generated had no users: nothing to break.
    let sloppy = report("tolerant-reader");
    assert!(!sloppy.is_rust_api_breaking());
    assert_eq!(sloppy.exit_status(FailOn::RustApi, false), 0);
}

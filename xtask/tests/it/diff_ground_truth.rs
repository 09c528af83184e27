//! The compiler as ground truth for the rust-api verdict of `cargo xtask
//! diff`, for every fixture pair in `tests/fixtures/diff/`:
//!
//! * where progenitor generates both sides, a program using every item of
//!   the base crate ([`xtask::diff::ground_truth::usage_program`]) is
//!   compiled against the base crate (it must compile: the program itself
//!   is right) and against the new crate, which must compile exactly when
//!   the diff's rust-api verdict is `none`;
//! * where it does not, the generator is the ground truth: the diff must say
//!   which side does not generate, and rust-api breaks exactly when the base
//!   generated and the new side does not (a base that never generated had
//!   no users). The fixtures allowed not to generate are [`NOT_GENERATED`],
//!   each with the construct its point needs; any other fixture that stops
//!   generating fails the test, and so does a listed one that generates.
//!
//! All fixtures are built by one `cargo check --offline --keep-going` in one
//! workspace under the test's temporary target directory, one crate per
//! fixture and side (shared dependencies, built once and kept between
//! runs); rustc's errors are attributed to their crate. The test prints how
//! long that takes.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use xtask::codegen;
use xtask::diff::rules::RustApiClass;
use xtask::diff::{self, RustApi, Side, ground_truth};
use xtask::openapi;
use xtask::specs::SpecConfig;

/// Fixtures whose point needs a construct progenitor refuses: the construct.
const NOT_GENERATED: &[(&str, &str)] = &[
    (
        "encoding-changed",
        "a multipart body's `encoding` (progenitor takes no multipart/form-data body and no \
         `encoding` on any body)",
    ),
    (
        "multipart-operation-added",
        "a multipart/form-data body added on the new side only (rust-api breaks: the base crate \
         has no successor)",
    ),
    ("reused-operation-id", "one operationId on two operations"),
    (
        "tolerant-reader",
        "a sloppy document (operations without operationId, a parameter without schema, \
         `in: body`) that the tolerant reader still compares",
    ),
];

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

fn config(case: &str) -> SpecConfig {
    SpecConfig {
        name: "fixture",
        spec: Box::leak(format!("tests/fixtures/diff/{case}/new.yaml").into_boxed_str()),
        output: "unused.rs",
        int64_strings: false,
        plain_string_constraints: &[],
        inner_type: None,
    }
}

/// One crate of the workspace: the generated code as `api`, the usage
/// program of the base as `usage`.
struct Unit {
    case: String,
    side: &'static str,
    /// Whether the diff says the Rust API breaks (for the `new` side).
    breaks: bool,
    /// The rule and rust-api class of each change where progenitor
    /// generates the value (not in a response header or a callback).
    classes: Vec<(&'static str, RustApiClass)>,
}

const MANIFEST: &str = r#"[package]
name = "NAME"
version = "0.0.0"
edition = "2024"
publish = false

[lib]
path = "lib.rs"

[dependencies]
progenitor-client = "=0.15.1"
reqwest = { version = "0.13.4", default-features = false, features = ["json", "query", "stream"] }
serde = { version = "1.0.228", features = ["derive"] }
serde_json = "1.0.145"
schemars = { version = "0.8.22", features = ["uuid1", "chrono"] }
chrono = { version = "0.4.42", default-features = false, features = ["std", "serde"] }
uuid = { version = "1.18", features = ["serde"] }
regress = "0.12"
"#;

#[test]
fn the_rust_api_verdict_matches_the_compiler() {
    let root = repo_root();
    let fixtures = root.join("tests/fixtures/diff");
    let ws = Path::new(env!("CARGO_TARGET_TMPDIR")).join("diff-ground-truth");
    let crates = ws.join("crates");
    let _ = fs::remove_dir_all(&crates);
    fs::create_dir_all(&crates).unwrap();
    fs::write(
        ws.join("Cargo.toml"),
        "[workspace]\nresolver = \"3\"\nmembers = [\"crates/*\"]\n",
    )
    .unwrap();
    // The workspace's own versions, so the dependencies are the fetched ones.
    fs::copy(root.join("Cargo.lock"), ws.join("Cargo.lock")).unwrap();

    let mut cases: Vec<String> = fs::read_dir(&fixtures)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    cases.sort();
    let test_started = Instant::now();
    let mut units = Vec::new();
    // Fixtures judged by the generator: (case, what the diff says).
    let mut by_generator = Vec::new();
    let mut failures = Vec::new();
    for case in &cases {
        let dir = fixtures.join(case);
        let base = fs::read_to_string(dir.join("base.yaml")).ok();
        let new = fs::read_to_string(dir.join("new.yaml")).unwrap();
        let cfg = config(case);
        let spec = diff::diff_texts(&cfg, base.as_deref(), Some(&new)).unwrap();
        // The generator, run on each side on its own.
        let old_code = match &base {
            Some(text) => codegen::render(&cfg, &openapi::read(text).unwrap().spec)
                .map(|g| g.code)
                .map_err(|e| format!("{e:#}")),
            None => Ok(String::new()),
        };
        let new_code = codegen::render(&cfg, &openapi::read(&new).unwrap().spec)
            .map(|g| g.code)
            .map_err(|e| format!("{e:#}"));
        let expected_failure = NOT_GENERATED.iter().any(|(c, _)| c == case);
        let (old_code, new_code) =
            match (old_code, new_code) {
                (Ok(old), Ok(new)) => (old, new),
                (old, new) => {
                    let failing = if old.is_err() { Side::Base } else { Side::New };
                    // rust-api breaks exactly when a base crate existed and the
                    // new spec has none.
                    let breaks = failing == Side::New && base.is_some();
                    match &spec.rust_api {
                    RustApi::Unavailable { side, why } if *side == failing => {
                        if spec.rust_api_breaks() != breaks {
                            failures.push(format!(
                                "{case}: the {} spec does not generate, so rust-api {}; the \
                                 diff says {}",
                                failing.id(),
                                if breaks { "breaks" } else { "has nothing to break" },
                                if breaks { "none" } else { "breaks" },
                            ));
                        }
                        by_generator.push(format!(
                            "{case} ({} side: {}; rust-api {})",
                            side.id(),
                            why.lines().next().unwrap_or_default(),
                            if breaks { "breaks" } else { "none" }
                        ));
                    }
                    other => failures.push(format!(
                        "{case}: the {} spec does not generate ({}), but the diff says {other:?}",
                        failing.id(),
                        old.err().or(new.err()).unwrap_or_default()
                    )),
                }
                    if !expected_failure {
                        failures.push(format!(
                        "{case}: progenitor does not generate it, and it is not in NOT_GENERATED"
                    ));
                    }
                    continue;
                }
            };
        if expected_failure {
            failures.push(format!(
                "{case}: progenitor generates it: take it off NOT_GENERATED"
            ));
        }
        let RustApi::Changes(_) = &spec.rust_api else {
            failures.push(format!(
                "{case}: both sides generate, but the diff says {:?}",
                spec.rust_api
            ));
            continue;
        };
        let breaks = spec.rust_api_breaks();
        let classes: Vec<(&'static str, RustApiClass)> = spec
            .changes
            .iter()
            .filter(|c| !c.location.contains("/headers/") && !c.location.contains("/callbacks/"))
            .map(|c| (c.rule.id, c.rule.rust_api))
            .collect();
        let usage = ground_truth::usage_program(&old_code).unwrap();
        for (side, code) in [("old", &old_code), ("new", &new_code)] {
            if code.is_empty() {
                continue;
            }
            let name = format!("gt-{case}-{side}");
            let krate = crates.join(&name);
            fs::create_dir_all(&krate).unwrap();
            fs::write(krate.join("Cargo.toml"), MANIFEST.replace("NAME", &name)).unwrap();
            fs::write(
                krate.join("lib.rs"),
                "#![allow(warnings, clippy::all)]\npub mod api;\npub mod usage;\n",
            )
            .unwrap();
            fs::write(krate.join("api.rs"), code).unwrap();
            fs::write(krate.join("usage.rs"), &usage).unwrap();
            units.push(Unit {
                case: case.clone(),
                side,
                breaks,
                classes: classes.clone(),
            });
        }
    }

    let started = Instant::now();
    let check = |offline: bool| {
        let mut cmd = Command::new(env!("CARGO"));
        cmd.current_dir(&ws)
            .args([
                "check",
                "--keep-going",
                "--workspace",
                "--message-format=json",
            ])
            .env("CARGO_TARGET_DIR", ws.join("target"))
            .env_remove("RUSTFLAGS")
            .env_remove("CARGO_ENCODED_RUSTFLAGS");
        if offline {
            cmd.arg("--offline");
        }
        cmd.output().expect("cargo runs")
    };
    // Offline from the registry `cargo fetch` filled; a feature this
    // workspace enables beyond the main one (schemars' chrono impls) may
    // need the index once, then the lock file here keeps it.
    let mut out = check(true);
    if String::from_utf8_lossy(&out.stderr).contains("offline") {
        out = check(false);
    }
    let elapsed = started.elapsed();

    // Errors per crate and file.
    let mut errors: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let Ok(msg) = serde_json::from_str::<serde_json::Value>(line) else {
            continue;
        };
        if msg["reason"] != "compiler-message" || msg["message"]["level"] != "error" {
            continue;
        }
        let target = msg["target"]["name"]
            .as_str()
            .unwrap_or_default()
            .replace('_', "-");
        let file = msg["message"]["spans"][0]["file_name"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        let text = msg["message"]["rendered"].as_str().unwrap_or_default();
        errors
            .entry(target)
            .or_default()
            .push(format!("[{file}] {text}"));
    }
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !stderr.contains("error: failed to") && !stderr.contains("no matching package"),
        "cargo could not build the ground-truth workspace:\n{stderr}"
    );

    let mut checked = 0;
    for unit in &units {
        let name = format!("gt-{}-{}", unit.case, unit.side);
        let errs = errors.get(&name).cloned().unwrap_or_default();
        let in_api: Vec<&String> = errs.iter().filter(|e| e.contains("api.rs]")).collect();
        if !in_api.is_empty() {
            failures.push(format!(
                "{name}: the generated code does not compile:\n{in_api:#?}"
            ));
            continue;
        }
        let compiles = errs.is_empty();
        match unit.side {
            "old" if !compiles => failures.push(format!(
                "{name}: the usage program does not compile against the base crate:\n{}",
                errs.join("\n")
            )),
            "new" if compiles == unit.breaks => failures.push(format!(
                "{}: diff says rust-api {}, but the base usage {} against the new crate{}",
                unit.case,
                if unit.breaks { "breaks" } else { "none" },
                if compiles {
                    "compiles"
                } else {
                    "does not compile"
                },
                if compiles {
                    String::new()
                } else {
                    format!(":\n{}", errs.join("\n"))
                }
            )),
            "new" => {
                checked += 1;
                // The rule table's rust-api classes against rustc.
                let none = |c: &RustApiClass| matches!(c, RustApiClass::None(_));
                if !compiles && unit.classes.iter().all(|(_, c)| none(c)) {
                    failures.push(format!(
                        "{}: rustc rejects the base usage against the new crate, but every rule \
                         found says rust-api none: {:?}",
                        unit.case, unit.classes
                    ));
                }
                let sure: Vec<&str> = unit
                    .classes
                    .iter()
                    .filter(|(_, c)| matches!(c, RustApiClass::Breaks(_)))
                    .map(|(id, _)| *id)
                    .collect();
                if compiles && !sure.is_empty() {
                    failures.push(format!(
                        "{}: the base usage compiles against the new crate, but {sure:?} say \
                         rust-api breaks",
                        unit.case
                    ));
                }
            }
            _ => {}
        }
    }
    println!(
        "ground truth: {} fixtures, every one checked in {:.1}s: {checked} by rustc ({} crates \
         in one cargo check, {:.1}s), {} by progenitor refusing a side:\n  {}",
        cases.len(),
        test_started.elapsed().as_secs_f64(),
        units.len(),
        elapsed.as_secs_f64(),
        by_generator.len(),
        by_generator.join("\n  ")
    );
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    assert_eq!(
        checked + by_generator.len(),
        cases.len(),
        "every fixture is checked by rustc or by the generator"
    );
}

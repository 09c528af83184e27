//! The compiler as ground truth for the rust-api verdict of `cargo xtask
//! diff`: for every fixture pair in `tests/fixtures/diff/` that progenitor
//! can generate, a program using every item of the base crate
//! ([`xtask::diff::ground_truth::usage_program`]) is compiled against the
//! base crate (it must compile: the program itself is right) and against the
//! new crate, which must compile exactly when the diff's rust-api verdict is
//! `none`.
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
use xtask::diff::{self, RustApi, ground_truth};
use xtask::openapi;
use xtask::specs::SpecConfig;

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
    let mut units = Vec::new();
    let mut skipped = Vec::new();
    for case in &cases {
        let dir = fixtures.join(case);
        let base = fs::read_to_string(dir.join("base.yaml")).ok();
        let new = fs::read_to_string(dir.join("new.yaml")).unwrap();
        let cfg = config(case);
        let spec = diff::diff_texts(&cfg, base.as_deref(), Some(&new)).unwrap();
        let breaks = match (&spec.rust_api, spec.rust_api_breaks()) {
            (_, Some(breaks)) => breaks,
            (RustApi::Unavailable(why), None) => {
                skipped.push(format!(
                    "{case}: {}",
                    why.lines().next().unwrap_or_default()
                ));
                continue;
            }
            (RustApi::Changes(_), None) => unreachable!("generated specs have a verdict"),
        };
        let old_code = match &base {
            Some(text) => {
                let doc = openapi::read(text).unwrap();
                codegen::render(&cfg, &doc.spec).unwrap().code
            }
            None => String::new(),
        };
        let new_doc = openapi::read(&new).unwrap();
        let new_code = codegen::render(&cfg, &new_doc.spec).unwrap().code;
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

    let mut failures = Vec::new();
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
            "new" => checked += 1,
            _ => {}
        }
    }
    println!(
        "ground truth: {checked} fixture pairs agree with rustc ({} crates checked in {:.1}s); \
         {} fixtures not generated by progenitor:\n  {}",
        units.len(),
        elapsed.as_secs_f64(),
        skipped.len(),
        skipped.join("\n  ")
    );
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    assert!(checked >= 20, "only {checked} fixtures were compiled");
}

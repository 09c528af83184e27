//! The release workflow publishes every published crate, each after every crate of ours it
//! depends on (issue 37, DECISIONS G-7). crates.io needs each dependency of a crate to exist,
//! dev-dependencies included, unless cargo strips it (a path dependency without a version), so a
//! crate published before one it names fails, and the crates after it are never published.

use std::collections::{BTreeMap, BTreeSet};
use std::process::Command;

use serde_json::Value;

use crate::self_contained::root;

/// The crates of the `for crate in …; do` loop of `.github/workflows/release.yml`, in order.
fn release_order() -> Vec<String> {
    let text = std::fs::read_to_string(root().join(".github/workflows/release.yml")).unwrap();
    let start = text
        .find("for crate in ")
        .expect("release.yml publishes with `for crate in …; do`")
        + "for crate in ".len();
    let end = start + text[start..].find("; do").expect("the loop's `; do`");
    text[start..end]
        .replace("\\\n", " ")
        .split_whitespace()
        .map(str::to_owned)
        .collect()
}

/// Each published package of the workspace with the packages of the workspace it names in a way
/// that survives `cargo publish` (every kind of dependency that carries a version).
fn published_packages() -> BTreeMap<String, BTreeSet<String>> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let out = Command::new(cargo)
        .args(["metadata", "--format-version", "1", "--no-deps", "--locked"])
        .current_dir(root())
        .output()
        .expect("cargo metadata runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let metadata: Value = serde_json::from_slice(&out.stdout).unwrap();
    let packages = metadata["packages"].as_array().unwrap();
    let ours: BTreeSet<&str> = packages
        .iter()
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    packages
        .iter()
        // `publish = false` is an empty list; unset is null.
        .filter(|p| p["publish"].is_null())
        .map(|p| {
            let name = p["name"].as_str().unwrap();
            let deps = p["dependencies"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|d| d["req"].as_str() != Some("*"))
                .map(|d| d["name"].as_str().unwrap())
                .filter(|d| ours.contains(d) && *d != name)
                .map(str::to_owned)
                .collect();
            (name.to_owned(), deps)
        })
        .collect()
}

/// The crates of `order` that come after one they depend on, as `crate (needs dep)`.
fn out_of_order(order: &[String], deps: &BTreeMap<String, BTreeSet<String>>) -> Vec<String> {
    let mut problems = Vec::new();
    for (i, name) in order.iter().enumerate() {
        for dep in deps.get(name).into_iter().flatten() {
            if !order[..i].contains(dep) {
                problems.push(format!("{name} (needs {dep} published before it)"));
            }
        }
    }
    problems
}

#[test]
fn the_release_publishes_every_published_crate_after_its_dependencies() {
    let order = release_order();
    let packages = published_packages();
    let listed: BTreeSet<&String> = order.iter().collect();
    let published: BTreeSet<&String> = packages.keys().collect();
    assert_eq!(
        listed, published,
        "release.yml's list and the crates without `publish = false` differ"
    );
    assert_eq!(listed.len(), order.len(), "a crate listed twice: {order:?}");
    let problems = out_of_order(&order, &packages);
    assert!(
        problems.is_empty(),
        "release.yml publishes crates before what they depend on:\n{}",
        problems.join("\n")
    );
}

#[test]
fn a_crate_before_its_dev_dependency_is_out_of_order() {
    let deps = BTreeMap::from([
        ("sdk".to_owned(), BTreeSet::from(["fakes".to_owned()])),
        ("fakes".to_owned(), BTreeSet::new()),
    ]);
    let order = |names: &[&str]| names.iter().map(|n| n.to_string()).collect::<Vec<_>>();
    assert!(out_of_order(&order(&["fakes", "sdk"]), &deps).is_empty());
    assert_eq!(
        out_of_order(&order(&["sdk", "fakes"]), &deps),
        ["sdk (needs fakes published before it)"]
    );
}

//! `cargo xtask diff` between real commits: the repository is cloned into a
//! temporary directory (only its `HEAD` is used), a spec edit is committed
//! there, and the diff runs on the clone. The real checkout is never touched.

use std::path::{Path, PathBuf};

use tempfile::TempDir;
use test_support::git::{clone_head, git};
use xtask::Workspace;
use xtask::diff::{self, Args, Format};

/// A clone of this repository's `HEAD`, on a branch `main`.
fn clone() -> (TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let repo = clone_head(Path::new(env!("CARGO_MANIFEST_DIR")), tmp.path());
    (tmp, repo)
}

/// Remove the first operation of a spec; returns its operationId.
fn remove_first_operation(path: &Path) -> String {
    let mut doc: serde_norway::Value =
        serde_norway::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let paths = doc["paths"].as_mapping_mut().unwrap();
    let (path_key, item) = paths
        .iter_mut()
        .next()
        .map(|(k, v)| (k.clone(), v))
        .unwrap();
    let item = item.as_mapping_mut().unwrap();
    let methods = ["get", "put", "post", "delete", "patch"];
    let method = item
        .keys()
        .find(|k| methods.contains(&k.as_str().unwrap_or_default()))
        .cloned()
        .unwrap();
    let id = item[&method]["operationId"].as_str().unwrap().to_owned();
    item.remove(&method);
    if !item
        .keys()
        .any(|k| methods.contains(&k.as_str().unwrap_or_default()))
    {
        paths.remove(&path_key);
    }
    std::fs::write(path, serde_norway::to_string(&doc).unwrap()).unwrap();
    id
}

/// Add an optional string property to the first open component schema (not
/// `additionalProperties: false`, where a new property is breaking for
/// servers) that has properties; returns `Schema.property`.
fn add_optional_property(path: &Path) -> String {
    let mut doc: serde_norway::Value =
        serde_norway::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let schemas = doc["components"]["schemas"].as_mapping_mut().unwrap();
    let (name, schema) = schemas
        .iter_mut()
        .find(|(_, s)| {
            s.get("properties").is_some()
                && s.get("additionalProperties") != Some(&serde_norway::Value::Bool(false))
        })
        .unwrap();
    let name = name.as_str().unwrap().to_owned();
    schema["properties"].as_mapping_mut().unwrap().insert(
        "diffProbe".into(),
        serde_norway::from_str("{type: string, description: Added by the diff test.}").unwrap(),
    );
    std::fs::write(path, serde_norway::to_string(&doc).unwrap()).unwrap();
    format!("{name}.diffProbe")
}

#[test]
fn diff_between_two_commits_of_a_clone() {
    let (_tmp, repo) = clone();
    let ws = Workspace::new(&repo);
    let base = git(&repo, &["rev-parse", "HEAD"]);

    // On main with a clean tree, the default base is HEAD: nothing to report.
    let (out, status) = diff::execute(&ws, &Args::default()).unwrap();
    assert_eq!(status, 0, "{out}");
    assert!(out.contains("Spec changes against HEAD (on main)"), "{out}");
    assert!(out.contains("no changes"), "{out}");

    // A feature branch whose commit removes an operation.
    git(&repo, &["checkout", "--quiet", "-b", "feature"]);
    let removed = remove_first_operation(&repo.join("specs/search-ads.yaml"));
    git(&repo, &["commit", "--quiet", "-am", "Remove an operation"]);

    // Default base on a branch: the merge base with main, i.e. `base`.
    let (out, status) = diff::execute(&ws, &Args::default()).unwrap();
    assert_eq!(status, 1, "{out}");
    assert!(
        out.contains(&format!("merge base with main ({})", &base[..12])),
        "{out}"
    );
    assert!(
        out.contains(&format!("operation `{removed}`")) && out.contains("(operation-removed)"),
        "{out}"
    );
    assert!(out.contains("- removed method `Client::"), "{out}");

    // The same, with an explicit base, as Markdown and JSON.
    let args = |format| Args {
        base: Some(base.clone()),
        format,
        ..Args::default()
    };
    let (md, status) = diff::execute(&ws, &args(Format::Markdown)).unwrap();
    assert_eq!(status, 1);
    assert!(
        md.starts_with("## Spec changes: 1 breaking change on the wire"),
        "{md}"
    );
    let (json, _) = diff::execute(&ws, &args(Format::Json)).unwrap();
    let json: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(json["breaking"], true);
    assert_eq!(json["rust_api_breaking"], true);
    assert_eq!(json["changes"][0]["kind"], "operation-removed");
    assert_eq!(json["changes"][0]["wire"], "clients");
    assert_eq!(json["changes"][0]["rust_api"][0]["change"], "removed");
    assert_eq!(json["changes"][0]["spec"], "search-ads");

    // --allow-breaking: same report, exit status 0.
    let allowed = Args {
        allow_breaking: true,
        ..args(Format::Text)
    };
    let (_, status) = diff::execute(&ws, &allowed).unwrap();
    assert_eq!(status, 0);

    // An uncommitted, compatible edit against the feature commit: listed,
    // exit status 0.
    let head = git(&repo, &["rev-parse", "HEAD"]);
    let probe = add_optional_property(&repo.join("specs/video-session.yaml"));
    let (out, status) = diff::execute(
        &ws,
        &Args {
            base: Some(head),
            ..Args::default()
        },
    )
    .unwrap();
    assert_eq!(status, 0, "{out}");
    let property = probe.split('.').nth(1).unwrap();
    assert!(
        out.contains(&format!("optional property `{property}` (string) added")),
        "{out}"
    );
    assert!(out.contains("No breaking changes"), "{out}");
}

#[test]
fn an_unknown_base_is_an_error() {
    let (_tmp, repo) = clone();
    let err = diff::execute(
        &Workspace::new(&repo),
        &Args {
            base: Some("no-such-rev".into()),
            ..Args::default()
        },
    )
    .unwrap_err();
    assert!(
        format!("{err:#}").contains("--base \"no-such-rev\" is not a commit"),
        "{err:#}"
    );
}

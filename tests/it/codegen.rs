//! `cargo xtask check` catches a stale generated file (hand edit, or a spec
//! edited without regenerating), and `cargo xtask generate` is deterministic.
//! Runs the xtask library on a temporary copy of `specs/` and the generated
//! files, never on the checkout itself.

use std::fs;
use std::path::Path;

use tempfile::TempDir;
use xtask::Workspace;
use xtask::check::{self, Problem};
use xtask::specs::SPECS;

/// Copy `specs/*.yaml`, the discovery document the field catalogue reads and
/// every generated file into a temp workspace.
fn temp_workspace() -> (TempDir, Workspace) {
    let source = Workspace::from_manifest_dir();
    let dir = tempfile::tempdir().unwrap();
    let ws = Workspace::new(dir.path());
    for config in SPECS {
        for relative in [config.spec, config.output] {
            let to = ws.path(relative);
            fs::create_dir_all(to.parent().unwrap()).unwrap();
            fs::copy(source.path(relative), &to).unwrap();
        }
    }
    // The field catalogue: its two inputs and its output (SR-30).
    use xtask::report_fields::{DISCOVERY, OUTPUT, TABLE};
    for relative in [DISCOVERY, TABLE, OUTPUT] {
        let to = ws.path(relative);
        fs::create_dir_all(to.parent().unwrap()).unwrap();
        fs::copy(source.path(relative), &to).unwrap();
    }
    (dir, ws)
}

fn check(ws: &Workspace) -> check::Report {
    check::check(ws, &check::Args::default()).unwrap()
}

fn stale_files(report: &check::Report) -> Vec<&str> {
    report
        .problems
        .iter()
        .filter_map(|p| match p {
            Problem::Stale { file, .. } => Some(file.as_str()),
            _ => None,
        })
        .collect()
}

#[test]
fn the_checkout_copy_is_clean() {
    let (_dir, ws) = temp_workspace();
    let report = check(&ws);
    assert!(report.is_clean(), "{report}");
}

#[test]
fn a_hand_edit_to_a_generated_file_is_caught() {
    let (_dir, ws) = temp_workspace();
    let file = "crates/sa360-v2-client/src/generated.rs";
    let mut text = fs::read_to_string(ws.path(file)).unwrap();
    text.push_str("// a hand edit\n");
    fs::write(ws.path(file), text).unwrap();

    let report = check(&ws);
    assert_eq!(stale_files(&report), vec![file], "{report}");
    let shown = report.to_string();
    assert!(
        shown.contains(&format!(
            "{file} is out of date with its spec; run `cargo xtask generate`"
        )),
        "{shown}"
    );
    assert!(shown.contains("\n-// a hand edit\n"), "{shown}");
}

/// Edit a spec structurally (independent of its text layout): `f` gets the
/// `components.schemas` mapping.
fn edit_schemas(path: &Path, f: impl FnOnce(&mut serde_norway::Mapping)) {
    let mut doc: serde_norway::Value =
        serde_norway::from_str(&fs::read_to_string(path).unwrap()).unwrap();
    let schemas = doc["components"]["schemas"].as_mapping_mut().unwrap();
    f(schemas);
    fs::write(path, serde_norway::to_string(&doc).unwrap()).unwrap();
}

/// Name of the first (sorted) component schema for which `pick` holds.
fn first_schema(
    schemas: &serde_norway::Mapping,
    pick: impl Fn(&serde_norway::Value) -> bool,
) -> serde_norway::Value {
    let mut names: Vec<&serde_norway::Value> = schemas
        .iter()
        .filter(|(_, schema)| pick(schema))
        .map(|(name, _)| name)
        .collect();
    names.sort_by_key(|name| name.as_str().unwrap_or_default().to_owned());
    names.first().copied().cloned().expect("a matching schema")
}

#[test]
fn a_spec_description_edit_without_regenerating_is_caught() {
    let (_dir, ws) = temp_workspace();
    edit_schemas(&ws.path("specs/video-session.yaml"), |schemas| {
        let name = first_schema(schemas, |s| {
            s.get("description").is_some()
                && s.get("type").and_then(|t| t.as_str()) == Some("object")
        });
        let schema = schemas.get_mut(&name).unwrap();
        let description = schema["description"].as_str().unwrap().trim().to_owned();
        schema["description"] = format!("{description} Edited by the drift test.").into();
    });
    let report = check(&ws);
    assert_eq!(
        stale_files(&report),
        vec!["crates/video-session-client/src/generated.rs"],
        "{report}"
    );
    let shown = report.to_string();
    assert!(shown.contains("Edited by the drift test."), "{shown}");
    assert!(shown.contains("\n+    ///"), "{shown}");
    assert!(
        shown.contains("--- a/crates/video-session-client/src/generated.rs"),
        "{shown}"
    );
}

#[test]
fn a_new_optional_property_without_regenerating_is_caught() {
    let (_dir, ws) = temp_workspace();
    edit_schemas(&ws.path("specs/search-ads.yaml"), |schemas| {
        let name = first_schema(schemas, |s| s.get("properties").is_some());
        let properties = schemas.get_mut(&name).unwrap()["properties"]
            .as_mapping_mut()
            .unwrap();
        properties.insert(
            "driftProbe".into(),
            serde_norway::from_str("{type: boolean, description: Added by the drift test.}")
                .unwrap(),
        );
    });
    let report = check(&ws);
    assert_eq!(
        stale_files(&report),
        vec!["crates/sa360-v2-client/src/generated.rs"],
        "{report}"
    );
    assert!(
        report.to_string().contains("+        pub drift_probe:"),
        "{report}"
    );
}

#[test]
fn generate_is_deterministic_and_writes_only_changes() {
    let (_dir, ws) = temp_workspace();
    for config in SPECS {
        let first = xtask::generate::generate_one(&ws, config).unwrap();
        let second = xtask::generate::generate_one(&ws, config).unwrap();
        assert_eq!(first, second, "{} differs between two runs", config.name);
        let on_disk = fs::read_to_string(ws.path(config.output)).unwrap();
        assert!(
            first.code == on_disk,
            "{} is stale in the checkout",
            config.output
        );
    }
    // The copies are up to date, so nothing is written.
    let summaries = xtask::generate::generate(&ws, &Default::default()).unwrap();
    assert!(summaries.iter().all(|s| !s.written), "{summaries:?}");

    // A missing file is written, byte-identical to the original.
    let output = ws.path(SPECS[0].output);
    let original = fs::read(&output).unwrap();
    fs::remove_file(&output).unwrap();
    let summaries = xtask::generate::generate(&ws, &Default::default()).unwrap();
    assert!(
        summaries[0].written && !summaries[1].written,
        "{summaries:?}"
    );
    assert_eq!(fs::read(&output).unwrap(), original);
}

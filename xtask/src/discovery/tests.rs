//! Offline, on the two documents the repository holds: its copy (revision 20260810, beside the
//! fake) and the one before it (revision 20251116, `tests/fixtures/reference/`).

use super::*;
use crate::report_fields::{OUTPUT, TABLE};

const OLDER: &str = "tests/fixtures/reference/searchads360-v0-discovery-20251116.json";

fn doc(relative: &str) -> Value {
    report_fields::json_file(&Workspace::from_manifest_dir().path(relative)).unwrap()
}

/// A workspace in a temporary directory with `discovery` as its copy, the table and the output.
fn scratch(discovery: &str) -> (tempfile::TempDir, Workspace) {
    let real = Workspace::from_manifest_dir();
    let dir = tempfile::tempdir().unwrap();
    let ws = Workspace::new(dir.path());
    for (from, to) in [(discovery, DISCOVERY), (TABLE, TABLE), (OUTPUT, OUTPUT)] {
        let target = ws.path(to);
        fs::create_dir_all(target.parent().unwrap()).unwrap();
        fs::copy(real.path(from), target).unwrap();
    }
    (dir, ws)
}

#[test]
fn the_newer_document_adds_the_nineteen_fields_and_removes_none() {
    let diff = difference(&doc(OLDER), &doc(DISCOVERY)).unwrap();
    assert_eq!(
        diff.revisions,
        ("20251116".to_owned(), "20260810".to_owned())
    );
    let names: Vec<&str> = diff
        .added
        .iter()
        .map(|a| a.split(' ').next().unwrap())
        .collect();
    let mut expected = vec![
        "segments.ad_format_type",
        "segments.geo_target_postal_code",
        "segments.vertical_ads_event_participant_display_names",
        "segments.vertical_ads_hotel_class",
        "segments.vertical_ads_listing",
        "segments.vertical_ads_listing_brand",
        "segments.vertical_ads_listing_city",
        "segments.vertical_ads_listing_country",
        "segments.vertical_ads_listing_region",
        "segments.vertical_ads_partner_account",
        "segments.vertical_ads_vertical",
    ];
    for owner in ["ad_group_ad.ad", "asset"] {
        for who in ["advertiser", "system"] {
            for what in ["source", "status"] {
                expected.push(
                    format!("{owner}.synthetic_content_info.{who}_attestation.{what}").leak(),
                );
            }
        }
    }
    expected.sort_unstable();
    assert_eq!(names, expected);
    assert!(
        diff.added
            .contains(&"segments.geo_target_postal_code (RESOURCE_NAME)".to_owned())
    );
    assert!(diff.removed.is_empty() && diff.changed.is_empty(), "{diff}");
    assert!(!diff.is_empty());
    let text = diff.to_string();
    assert!(
        text.starts_with("revision 20251116 → 20260810; fields: 19 added, 0 removed, 0 changed\n"),
        "{text}"
    );
}

#[test]
fn a_document_compared_with_itself_is_the_same() {
    let diff = difference(&doc(DISCOVERY), &doc(DISCOVERY)).unwrap();
    assert!(diff.is_empty(), "{diff}");
}

#[test]
fn a_removed_or_retyped_field_and_another_revision_are_differences() {
    let old = doc(DISCOVERY);
    let mut new = old.clone();
    let segments = &mut new["schemas"]["GoogleAdsSearchads360V0Common__Segments"]["properties"];
    segments
        .as_object_mut()
        .unwrap()
        .remove("geoTargetPostalCode");
    segments["year"]["format"] = "int64".into();
    let diff = difference(&old, &new).unwrap();
    assert_eq!(
        diff.removed,
        ["segments.geo_target_postal_code (RESOURCE_NAME)"]
    );
    assert_eq!(diff.changed, ["segments.year: INT32 → INT64"]);
    let mut later = old.clone();
    later["revision"] = "20270101".into();
    assert!(!difference(&old, &later).unwrap().is_empty());
}

#[test]
fn refresh_on_the_repositorys_own_document_changes_nothing() {
    let (_dir, ws) = scratch(DISCOVERY);
    let before = [
        fs::read(ws.path(DISCOVERY)).unwrap(),
        fs::read(ws.path(OUTPUT)).unwrap(),
    ];
    let lines = refresh(&ws, &ws.path(DISCOVERY)).unwrap();
    let after = [
        fs::read(ws.path(DISCOVERY)).unwrap(),
        fs::read(ws.path(OUTPUT)).unwrap(),
    ];
    assert!(before == after, "{lines:?}");
    assert!(
        lines.iter().any(|l| l.starts_with("discovery: unchanged")),
        "{lines:?}"
    );
    assert!(lines.iter().any(|l| l.contains("(unchanged")), "{lines:?}");
}

#[test]
fn refresh_from_the_older_document_makes_the_repositorys_catalogue() {
    let real = Workspace::from_manifest_dir();
    let (_dir, ws) = scratch(OLDER);
    // The catalogue of the older document first, as the repository had it.
    report_fields::write(&ws).unwrap();
    assert!(
        fs::read_to_string(ws.path(OUTPUT))
            .unwrap()
            .contains("REVISION: &str = \"20251116\"")
    );
    let lines = refresh(&ws, &real.path(DISCOVERY)).unwrap();
    assert_eq!(
        fs::read(ws.path(DISCOVERY)).unwrap(),
        fs::read(real.path(DISCOVERY)).unwrap()
    );
    assert_eq!(
        fs::read_to_string(ws.path(OUTPUT)).unwrap(),
        fs::read_to_string(real.path(OUTPUT)).unwrap(),
        "{lines:?}"
    );
    assert!(
        lines.iter().any(|l| l.contains("left for a person")),
        "{lines:?}"
    );
    // Going back is refused, and changes nothing.
    let error = refresh(&ws, &real.path(OLDER)).unwrap_err().to_string();
    assert!(
        error.contains("older than the repository's 20260810"),
        "{error}"
    );
    assert_eq!(
        fs::read(ws.path(DISCOVERY)).unwrap(),
        fs::read(real.path(DISCOVERY)).unwrap()
    );
}

#[test]
fn another_document_is_refused() {
    let (dir, ws) = scratch(DISCOVERY);
    let other = dir.path().join("other.json");
    fs::write(
        &other,
        r#"{"name": "drive", "version": "v3", "schemas": {}}"#,
    )
    .unwrap();
    let error = refresh(&ws, &other).unwrap_err().to_string();
    assert!(error.contains("is not the discovery document"), "{error}");
}

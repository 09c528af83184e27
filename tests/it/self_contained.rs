//! The repository points at nothing outside itself (issue 38): no tracked text names a
//! path of one machine or a folder beside the checkout, and every relative Markdown link
//! resolves to a tracked file inside the repository. The facts such paths once pointed
//! at are restated in `specs/SOURCES.md`.

use std::path::{Component, Path, PathBuf};

use test_support::git::git;

/// The repository's root (this package lives in `tests/`).
pub(crate) fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("tests/ has a parent")
        .to_path_buf()
}

/// Every tracked file, relative to the root.
pub(crate) fn tracked() -> Vec<String> {
    git(&root(), &["ls-files", "-z"])
        .split('\0')
        .filter(|p| !p.is_empty())
        .map(str::to_owned)
        .collect()
}

/// The tracked files that are UTF-8 text, with their contents.
pub(crate) fn tracked_text() -> Vec<(String, String)> {
    let root = root();
    tracked()
        .into_iter()
        .filter_map(|p| {
            let text = std::fs::read_to_string(root.join(&p)).ok()?;
            Some((p, text))
        })
        .collect()
}

/// Texts that name a place outside the checkout: the folder the project's reference notes
/// sat in beside it, and the home and work folders of one machine. Built from pieces so
/// this file does not match itself.
fn outside_markers() -> Vec<String> {
    let shared = ["..", "/shared"].concat();
    vec![
        shared,
        ["shared", "/reference/"].concat(),
        ["shared", "/seeds/"].concat(),
        ["/work", "/"].concat(),
        ["/home", "/"].concat(),
        ["/Users", "/"].concat(),
        ["C:", "\\Users\\"].concat(),
        // The project's reference notes by name (they were never part of the repository).
        ["-facts", ".md"].concat(),
        ["-notes", ".md"].concat(),
    ]
}

/// Lines of `text` that contain one of `markers`, as `path:line: text`.
fn offending_lines(path: &str, text: &str, markers: &[String]) -> Vec<String> {
    text.lines()
        .enumerate()
        .filter(|(_, line)| markers.iter().any(|m| line.contains(m.as_str())))
        .map(|(n, line)| format!("{path}:{}: {}", n + 1, line.trim()))
        .collect()
}

#[test]
fn no_tracked_text_names_a_path_outside_the_repository() {
    let markers = outside_markers();
    let found: Vec<String> = tracked_text()
        .iter()
        .flat_map(|(path, text)| offending_lines(path, text, &markers))
        .collect();
    assert!(
        found.is_empty(),
        "tracked files name paths outside the repository; restate the fact in specs/SOURCES.md \
         with Google's URL instead:\n{}",
        found.join("\n")
    );
}

#[test]
fn the_marker_scan_catches_each_kind_of_outside_path() {
    let markers = outside_markers();
    for line in [
        concat!("see ../sha", "red/refer", "ence/x.md"),
        concat!("`/wo", "rk/sha", "red/se", "eds/000.txt`"),
        concat!("/ho", "me/someone/notes.md"),
        concat!("see `sa360-fac", "ts.md` §3"),
    ] {
        assert_eq!(
            offending_lines("f.md", line, &markers).len(),
            1,
            "{line} not caught"
        );
    }
    assert!(offending_lines("f.md", "specs/SOURCES.md and ../README.md", &markers).is_empty());
}

/// The relative link targets of a Markdown text: `](target)` with no scheme and no
/// leading `#`, without the `#fragment`.
pub(crate) fn relative_links(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(i) = rest.find("](") {
        rest = &rest[i + 2..];
        let Some(end) = rest.find(')') else { break };
        let target = rest[..end].trim();
        let target = target.split_whitespace().next().unwrap_or("");
        let target = target.split('#').next().unwrap_or("");
        if !target.is_empty() && !target.contains("://") && !target.starts_with("mailto:") {
            out.push(target.to_owned());
        }
    }
    out
}

/// `target` resolved against the folder of `from` (both relative to the root), or `None`
/// when it climbs above the root.
pub(crate) fn resolve(from: &str, target: &str) -> Option<PathBuf> {
    let mut parts: Vec<String> = Path::new(from)
        .parent()
        .map(|p| {
            p.components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    for c in Path::new(target).components() {
        match c {
            Component::ParentDir => {
                parts.pop()?;
            }
            Component::CurDir => {}
            Component::Normal(s) => parts.push(s.to_string_lossy().into_owned()),
            Component::RootDir | Component::Prefix(_) => return None,
        }
    }
    Some(parts.iter().collect())
}

#[test]
fn every_relative_markdown_link_stays_inside_and_exists() {
    let root = root();
    let mut bad = Vec::new();
    for (path, text) in tracked_text() {
        if !path.ends_with(".md") || path.starts_with("tests/fixtures/") {
            continue;
        }
        for target in relative_links(&text) {
            match resolve(&path, &target) {
                None => bad.push(format!("{path}: `{target}` leaves the repository")),
                Some(p) if !root.join(&p).exists() => {
                    bad.push(format!("{path}: `{target}` does not exist"))
                }
                Some(_) => {}
            }
        }
    }
    assert!(bad.is_empty(), "broken Markdown links:\n{}", bad.join("\n"));
}

/// The most lines a hand-written Rust file may have, tests included (issue 38: one file, one
/// job). The generated clients (`src/generated.rs`, written by `cargo xtask generate`) are not
/// hand-written.
const MAX_LINES: usize = 1000;

#[test]
fn no_hand_written_rust_file_is_over_the_line_limit() {
    let long: Vec<String> = tracked_text()
        .into_iter()
        .filter(|(path, _)| path.ends_with(".rs") && !path.ends_with("/generated.rs"))
        .filter(|(_, text)| text.lines().count() > MAX_LINES)
        .map(|(path, text)| format!("{path}: {} lines", text.lines().count()))
        .collect();
    assert!(
        long.is_empty(),
        "split these by job (at most {MAX_LINES} lines each):\n{}",
        long.join("\n")
    );
}

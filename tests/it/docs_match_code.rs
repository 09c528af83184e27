//! The documents newcomers read name only things that exist (issue 38): every file and
//! folder, every Rust module path, every `cargo xtask` command and `cargo … -p` package that
//! `ARCHITECTURE.md`, `CONTRIBUTING.md` and the READMEs name; every xtask command is in the
//! command lists of both guides; and the README's dependency list holds every crate the
//! SDK's examples use. (`apictl` commands are checked by the CLI's own tests, which run
//! the binary: `crates/sa360-video-cli/tests/it/docs_commands.rs`.)

use std::collections::BTreeSet;
use std::path::Path;

use crate::self_contained::{root, tracked};

/// The documents checked: the two guides and every README.
pub(crate) fn documents() -> Vec<String> {
    tracked()
        .into_iter()
        .filter(|p| {
            p == "ARCHITECTURE.md"
                || p == "CONTRIBUTING.md"
                || p == "README.md"
                || (p.starts_with("crates/") && p.ends_with("/README.md"))
        })
        .collect()
}

pub(crate) fn read(path: &str) -> String {
    std::fs::read_to_string(root().join(path)).unwrap()
}

/// The text of every inline code span (`` `…` ``) and every Markdown link target.
pub(crate) fn code_spans(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut in_fence = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            in_fence = !in_fence;
            continue;
        }
        if in_fence {
            continue;
        }
        let mut parts = line.split('`');
        parts.next();
        while let Some(inside) = parts.next() {
            out.push(inside.to_owned());
            parts.next();
        }
    }
    out.extend(crate::self_contained::relative_links(text));
    out
}

const EXTENSIONS: &[&str] = &[
    ".rs", ".md", ".yaml", ".yml", ".toml", ".json", ".csv", ".txt", ".js", ".py",
];

/// Media types look like paths.
const MEDIA_TYPES: &[&str] = &["application/", "text/", "multipart/", "image/"];

/// Files the docs name that live on the user's machine, not in the repository.
const USER_FILES: &[&str] = &[
    "application_default_credentials.json",
    "search-ads-authorized-user.json",
];

/// A file inside a published crate's source (`reqwest-0.13.4/src/…`), cited with its version.
fn crate_source_path(span: &str) -> bool {
    span.split('/').next().is_some_and(|first| {
        first.rsplit_once('-').is_some_and(|(_, v)| {
            v.split('.').count() == 3 && v.split('.').all(|n| n.parse::<u32>().is_ok())
        })
    })
}

/// A code span that names a file or folder of the repository: one word of path
/// characters with a `/` or a known extension, no placeholder (`<x>`, `*`, `{`, `…`,
/// `FILE`, `REV:`), not a URL, not a build output (`target/`).
fn as_path(span: &str) -> Option<String> {
    let span = span.trim().trim_start_matches("./");
    if span.is_empty()
        || span.contains(char::is_whitespace)
        || span.contains("://")
        || span.starts_with("target/")
        || span.starts_with('/')
        || span.starts_with('~')
        || span.starts_with('-')
        || span.starts_with('.') && !span.starts_with(".ci") && !span.starts_with(".github")
        || span.contains(['<', '*', '{', '…', '$', ':', '=', '(', '@', '\'', '"', ','])
        || span.contains("FILE")
        || span.contains("::")
    {
        return None;
    }
    let looks_like_file = EXTENSIONS.iter().any(|e| span.ends_with(e));
    let file_name = span.rsplit('/').next().unwrap_or(span);
    let other_extension = file_name.contains('.') && !looks_like_file;
    if !(span.contains('/') || looks_like_file)
        || other_extension
        || MEDIA_TYPES.iter().any(|m| span.starts_with(m))
        || USER_FILES.contains(&span)
        || crate_source_path(span)
    {
        return None;
    }
    if !span
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || "/_.-".contains(c))
    {
        return None;
    }
    Some(span.to_owned())
}

/// Whether `name` (a path, `dir/` for a folder) is a tracked file or folder: exactly when
/// it starts at a top-level folder, otherwise as the tail of a tracked path.
fn exists(name: &str, files: &[String]) -> bool {
    let name = name.trim_end_matches('/');
    let top_level = ["crates/", "specs/", "tests/", "xtask/", ".ci/", ".github/"]
        .iter()
        .any(|t| name.starts_with(t))
        || !name.contains('/') && root().join(name).exists();
    files.iter().any(|f| {
        if top_level {
            f == name || f.starts_with(&format!("{name}/"))
        } else {
            f == name
                || f.ends_with(&format!("/{name}"))
                || f.starts_with(&format!("{name}/"))
                || f.contains(&format!("/{name}/"))
        }
    })
}

#[test]
fn every_file_the_docs_name_exists() {
    let files = tracked();
    let mut missing = Vec::new();
    for doc in documents() {
        let text = read(&doc);
        let base = Path::new(&doc).parent().unwrap();
        for span in code_spans(&text) {
            let Some(name) = as_path(&span) else { continue };
            // A README may name a file beside it (`data/sample.csv` in crates/sa360-video-cli/).
            let beside = base.join(&name).to_string_lossy().into_owned();
            if !exists(&name, &files) && !exists(&beside, &files) {
                missing.push(format!("{doc}: `{name}`"));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "the docs name files that do not exist:\n{}",
        missing.join("\n")
    );
}

/// The library crates whose Rust paths the docs may name, with their source folders.
const CRATES: &[(&str, &str)] = &[
    ("sa360_video_sdk", "crates/sa360-video-sdk/src"),
    (
        "sa360_video_client_support",
        "crates/sa360-video-client-support/src",
    ),
    ("sa360_v2_client", "crates/sa360-v2-client/src"),
    (
        "sa360_reporting_client",
        "crates/sa360-reporting-client/src",
    ),
    ("video_session_client", "crates/video-session-client/src"),
    ("sa360_video_fakes", "crates/sa360-video-fakes/src"),
    ("test_support", "crates/test-support/src"),
];

/// Every Rust source of a crate, concatenated.
pub(crate) fn crate_source(dir: &str) -> String {
    tracked()
        .into_iter()
        .filter(|p| p.starts_with(&format!("{dir}/")) && p.ends_with(".rs"))
        .map(|p| read(&p))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Whether `word` is declared in `source` (a type, function, constant, module, macro,
/// field or variant, or a re-export).
pub(crate) fn declared(word: &str, source: &str) -> bool {
    let is_ident = |c: char| c.is_ascii_alphanumeric() || c == '_';
    source.match_indices(word).any(|(i, _)| {
        let before = source[..i].chars().next_back();
        let after = source[i + word.len()..].chars().next();
        if before.is_some_and(is_ident) || after.is_some_and(is_ident) {
            return false;
        }
        let line_start = source[..i].rfind('\n').map_or(0, |n| n + 1);
        let prefix = source[line_start..i].trim();
        let rest = source[i + word.len()..].trim_start();
        [
            "struct",
            "enum",
            "fn",
            "trait",
            "type",
            "const",
            "static",
            "mod",
            "macro_rules!",
        ]
        .iter()
        .any(|k| prefix.ends_with(k))
            || prefix.starts_with("pub use")
            || prefix.starts_with("pub(crate) use")
            || prefix.starts_with("pub ") && rest.starts_with(':')
            || prefix.is_empty() && (rest.starts_with([',', '(', '{', '=']))
    })
}

#[test]
fn every_rust_path_the_docs_name_exists() {
    let mut missing = Vec::new();
    for doc in documents() {
        for span in code_spans(&read(&doc)) {
            let path = span
                .split(['(', '<', ' ', '`', '!', ';'])
                .next()
                .unwrap_or("");
            // The SDK's modules are named without the crate, too (`search_ads::reporting`).
            let path = &if ["search_ads::", "video_session::", "http::"]
                .iter()
                .any(|m| path.starts_with(m))
            {
                format!("sa360_video_sdk::{path}")
            } else {
                path.to_owned()
            };
            let mut segments = path.split("::");
            let Some(krate) = segments.next() else {
                continue;
            };
            let Some((_, dir)) = CRATES.iter().find(|(c, _)| *c == krate) else {
                continue;
            };
            let segments: Vec<&str> = segments.filter(|s| !s.is_empty()).collect();
            let source = crate_source(dir);
            let root = root();
            let mut module = dir.to_string();
            for (n, seg) in segments.iter().enumerate() {
                let file = format!("{module}/{seg}.rs");
                let folder = format!("{module}/{seg}/mod.rs");
                if root.join(&file).exists() || root.join(&folder).exists() {
                    module = format!("{module}/{seg}");
                    continue;
                }
                if n + 1 == segments.len()
                    && seg.chars().all(|c| c == '_' || c.is_lowercase())
                    && source.contains(&format!("fn {seg}"))
                {
                    break;
                }
                if !declared(seg, &source) {
                    missing.push(format!("{doc}: `{path}` (`{seg}`)"));
                }
                break;
            }
        }
    }
    assert!(
        missing.is_empty(),
        "the docs name Rust items that do not exist:\n{}",
        missing.join("\n")
    );
}

/// The xtask subcommands, read from the `Command` enum of `xtask/src/main.rs`.
fn xtask_commands() -> BTreeSet<String> {
    let main = read("xtask/src/main.rs");
    let body = main
        .split("enum Command {")
        .nth(1)
        .and_then(|rest| rest.split("\n}").next())
        .expect("xtask/src/main.rs has `enum Command`");
    body.lines()
        .map(str::trim)
        .filter(|l| l.starts_with(char::is_uppercase))
        .filter_map(|l| l.split(['(', ',', ' ', '{']).next())
        .map(str::to_lowercase)
        .collect()
}

/// Every word after `marker` in `text` (`cargo xtask diff` → `diff`).
fn words_after(text: &str, marker: &str) -> Vec<String> {
    text.match_indices(marker)
        .filter_map(|(i, _)| {
            let rest = &text[i + marker.len()..];
            let word: String = rest
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == '_')
                .collect();
            (!word.is_empty()).then_some(word)
        })
        .collect()
}

#[test]
fn every_command_the_docs_name_exists() {
    let commands = xtask_commands();
    assert!(
        commands.contains("check") && commands.contains("api"),
        "{commands:?}"
    );
    let packages: BTreeSet<String> = tracked()
        .into_iter()
        .filter(|p| p.ends_with("Cargo.toml"))
        .filter_map(|p| {
            let toml = read(&p);
            let name = toml.split("\nname = \"").nth(1)?.split('"').next()?;
            Some(name.to_owned())
        })
        .collect();
    let api = read("xtask/src/api/mod.rs");
    let mut missing = Vec::new();
    for doc in documents() {
        let text = read(&doc).replace('\n', " ");
        for word in words_after(&text, "cargo xtask ") {
            if !commands.contains(&word) {
                missing.push(format!("{doc}: `cargo xtask {word}`"));
            }
        }
        for rule in words_after(&text, "xtask api --rule ") {
            if !api.contains(&format!("\"{rule}")) && !api.contains(&format!("`--rule {rule}`")) {
                missing.push(format!("{doc}: `cargo xtask api --rule {rule}`"));
            }
        }
        for package in words_after(&text, " -p ") {
            if !packages.contains(&package) {
                missing.push(format!("{doc}: package `{package}`"));
            }
        }
        for example in words_after(&text, "--example ") {
            if example != "NAME"
                && !root()
                    .join(format!("crates/sa360-video-sdk/examples/{example}.rs"))
                    .exists()
            {
                missing.push(format!("{doc}: example `{example}`"));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "the docs name commands that do not exist:\n{}",
        missing.join("\n")
    );
}

#[test]
fn both_guides_list_every_xtask_command() {
    let architecture = read("ARCHITECTURE.md");
    let codegen_row = architecture
        .lines()
        .find(|l| l.starts_with("| codegen |"))
        .expect("ARCHITECTURE.md has the codegen row");
    let contributing = read("CONTRIBUTING.md");
    let xtask_line = contributing
        .lines()
        .find(|l| l.starts_with("xtask/ "))
        .expect("CONTRIBUTING.md's layout has the xtask/ line");
    for command in xtask_commands() {
        assert!(
            codegen_row.contains(&format!("(`{command}`)")),
            "ARCHITECTURE.md's codegen row leaves out `{command}`"
        );
        assert!(
            xtask_line.contains(&format!(" {command}")),
            "CONTRIBUTING.md's xtask/ line leaves out `{command}`"
        );
    }
}

/// The crates a Rust file names at the start of a path (`use x::`, `x::y(`, `#[x::main]`),
/// other than the language's own and the SDK.
fn crates_used(source: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    // Names a `use` brings in are the program's own, not crates.
    let imported: BTreeSet<&str> = source
        .lines()
        .filter(|l| l.trim_start().starts_with("use "))
        .flat_map(|l| {
            l.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .skip(2)
        })
        .collect();
    for (i, _) in source.match_indices("::") {
        if source[i + 2..].starts_with('<') {
            continue; // a turbofish: `collect::<Vec<_>>()`
        }
        let start = source[..i]
            .rfind(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .map_or(0, |n| n + 1);
        let before = source[..start].chars().next_back();
        if before == Some(':') {
            continue;
        }
        let name = &source[start..i];
        if name.starts_with(|c: char| c.is_ascii_lowercase())
            && ![
                "std",
                "core",
                "alloc",
                "crate",
                "self",
                "super",
                "sa360_video_sdk",
                "str",
            ]
            .contains(&name)
            && !imported.contains(name)
        {
            out.insert(name.to_owned());
        }
    }
    out
}

#[test]
fn the_readme_lists_every_crate_the_examples_use() {
    let readme = read("README.md");
    let block = readme
        .split("```toml\n[dependencies]\n")
        .nth(1)
        .and_then(|rest| rest.split("```").next())
        .expect("README.md has a [dependencies] block");
    let listed: BTreeSet<String> = block
        .lines()
        .filter_map(|l| l.split('=').next())
        .map(|n| n.trim().replace('-', "_"))
        .collect();
    let mut missing = Vec::new();
    for file in tracked()
        .into_iter()
        .filter(|p| p.starts_with("crates/sa360-video-sdk/examples/") && p.ends_with(".rs"))
    {
        for krate in crates_used(&read(&file)) {
            if !listed.contains(&krate) {
                missing.push(format!("{file} uses `{krate}`"));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "README.md's [dependencies] block leaves out:\n{}",
        missing.join("\n")
    );
}

//! Every `apictl` command the workspace's documents name exists (issue 38): each command
//! line in `README.md`, `ARCHITECTURE.md`, `CONTRIBUTING.md` and the crates' READMEs, cut
//! at its first argument that is not a subcommand word, answers `--help` with status 0.

use std::collections::BTreeSet;
use std::path::Path;

use crate::common;

use common::Apictl;

/// The documents that name `apictl` commands, relative to the workspace root.
fn documents(root: &Path) -> Vec<std::path::PathBuf> {
    let mut docs = vec![
        root.join("README.md"),
        root.join("ARCHITECTURE.md"),
        root.join("CONTRIBUTING.md"),
    ];
    for entry in std::fs::read_dir(root.join("crates")).unwrap() {
        let readme = entry.unwrap().path().join("README.md");
        if readme.exists() {
            docs.push(readme);
        }
    }
    docs
}

/// The pieces of `text` that are command lines: inline code spans, and the lines of fenced
/// blocks other than ```` ```text ```` (sample output).
fn code(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut fence: Option<bool> = None; // Some(is_command_block)
    for line in text.lines() {
        let trimmed = line.trim_start();
        if let Some(info) = trimmed.strip_prefix("```") {
            fence = match fence {
                Some(_) => None,
                None => Some(!info.starts_with("text")),
            };
            continue;
        }
        match fence {
            Some(true) => out.push(trimmed.trim_start_matches("$ ").to_owned()),
            Some(false) => {}
            None => out.extend(line.split('`').skip(1).step_by(2).map(str::to_owned)),
        }
    }
    out
}

/// The command words of each code piece that starts with `apictl ` (or runs it with
/// `cargo run -p sa360-video-cli --`): lower-case words, up to the first flag, placeholder or file name.
fn commands(pieces: &[String]) -> BTreeSet<Vec<String>> {
    pieces
        .iter()
        .filter_map(|piece| {
            let rest = piece
                .strip_prefix("apictl ")
                .or_else(|| piece.strip_prefix("cargo run -p sa360-video-cli -- "))?;
            let words: Vec<String> = rest
                .split_whitespace()
                .take_while(|w| {
                    w.chars().all(|c| c.is_ascii_lowercase() || c == '-') && !w.starts_with('-')
                })
                .map(str::to_owned)
                .collect();
            (!words.is_empty()).then_some(words)
        })
        .collect()
}

#[test]
fn every_apictl_command_the_docs_name_exists() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut named = BTreeSet::new();
    for doc in documents(&root) {
        let text = std::fs::read_to_string(&doc).unwrap();
        named.extend(commands(&code(&text)));
    }
    assert!(named.contains(&vec!["sandbox".to_owned()]), "{named:?}");
    let apictl = Apictl::new();
    assert!(named.len() > 5, "{named:?}");
    let mut missing = Vec::new();
    for words in &named {
        let mut args: Vec<&str> = words.iter().map(String::as_str).collect();
        args.push("--help");
        let run = apictl.run_sync(&args);
        if run.code != 0 {
            missing.push(format!("apictl {}: {}", words.join(" "), run.stderr.trim()));
        }
    }
    assert!(
        missing.is_empty(),
        "the docs name apictl commands that do not exist:\n{}",
        missing.join("\n")
    );
}

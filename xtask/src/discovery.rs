//! `cargo xtask discovery`: keeping up with the Reporting API's discovery document (SR-32).
//!
//! - `compare OLD NEW`: the two documents' revisions and the difference of their catalogued
//!   fields (added, removed, changed type), as the catalogue reads them; exit status 0 when the
//!   revisions and the fields are the same, 1 when they differ, 2 when they cannot be compared.
//!   The scheduled workflow `.github/workflows/discovery.yml` runs it on Google's live document.
//! - `refresh NEW`: the repository's copy ([`DISCOVERY`], which the fake reads) replaced by NEW
//!   byte for byte, and the catalogue generated again from it; what changed is printed, and so is
//!   what stays for a person (the spec's hand-written row schemas, the values the fake fills).
//!   On the repository's own document it changes nothing.

use std::fs;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result, bail};
use serde_json::Value;

use crate::Workspace;
use crate::report_fields::{self, DISCOVERY, Read};

/// Arguments of `cargo xtask discovery`.
#[derive(Debug, Clone, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Clone, clap::Subcommand)]
enum Command {
    /// Compare two discovery documents: revision, and the fields added, removed or retyped.
    Compare {
        /// The older document (e.g. the repository's copy).
        old: PathBuf,
        /// The newer document (e.g. Google's live one).
        new: PathBuf,
    },
    /// Replace the repository's copy with a newer document and generate the catalogue from it.
    Refresh {
        /// The newer document.
        new: PathBuf,
    },
}

/// One field as compared: name, data type, repeated.
type Shape = (String, &'static str, bool);

/// What differs between two documents.
#[derive(Debug, PartialEq, Eq)]
pub struct Difference {
    /// The old and the new revision.
    pub revisions: (String, String),
    /// Fields only the new document has (name, data type).
    pub added: Vec<String>,
    /// Fields only the old document has.
    pub removed: Vec<String>,
    /// Fields whose data type or repetition changed (`name: OLD → NEW`).
    pub changed: Vec<String>,
}

impl Difference {
    /// Whether the documents are the same for the catalogue (and of one revision).
    pub fn is_empty(&self) -> bool {
        self.revisions.0 == self.revisions.1
            && self.added.is_empty()
            && self.removed.is_empty()
            && self.changed.is_empty()
    }
}

impl std::fmt::Display for Difference {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (old, new) = &self.revisions;
        writeln!(
            f,
            "revision {old} → {new}; fields: {} added, {} removed, {} changed",
            self.added.len(),
            self.removed.len(),
            self.changed.len()
        )?;
        for (sign, list) in [
            ("+", &self.added),
            ("-", &self.removed),
            ("~", &self.changed),
        ] {
            for line in list {
                writeln!(f, "{sign} {line}")?;
            }
        }
        Ok(())
    }
}

fn shapes(read: &Read) -> Vec<Shape> {
    read.fields
        .iter()
        .map(|f| (f.name.clone(), f.data_type, f.repeated))
        .collect()
}

fn describe(data_type: &str, repeated: bool) -> String {
    format!("{data_type}{}", if repeated { ", repeated" } else { "" })
}

/// The difference between two parsed discovery documents.
pub fn difference(old: &Value, new: &Value) -> Result<Difference> {
    let (old, new) = (
        report_fields::read(old, &[])?,
        report_fields::read(new, &[])?,
    );
    let find = |list: &[Shape], name: &str| list.iter().find(|s| s.0 == name).cloned();
    let (before, after) = (shapes(&old), shapes(&new));
    let mut diff = Difference {
        revisions: (old.revision, new.revision),
        added: Vec::new(),
        removed: Vec::new(),
        changed: Vec::new(),
    };
    for (name, data_type, repeated) in &after {
        match find(&before, name) {
            None => diff
                .added
                .push(format!("{name} ({})", describe(data_type, *repeated))),
            Some((_, t, r)) if (t, r) != (*data_type, *repeated) => diff.changed.push(format!(
                "{name}: {} → {}",
                describe(t, r),
                describe(data_type, *repeated)
            )),
            Some(_) => {}
        }
    }
    for (name, data_type, repeated) in &before {
        if find(&after, name).is_none() {
            diff.removed
                .push(format!("{name} ({})", describe(data_type, *repeated)));
        }
    }
    Ok(diff)
}

/// Checks that `doc` is the Reporting API's v0 discovery document.
fn check_document(doc: &Value, path: &std::path::Path) -> Result<()> {
    let member = |k: &str| doc.get(k).and_then(Value::as_str);
    if member("name") != Some("searchads360") || member("version") != Some("v0") {
        bail!(
            "{} is not the discovery document of the Search Ads 360 Reporting API v0 (name \
             searchads360, version v0)",
            path.display()
        );
    }
    Ok(())
}

/// Replaces the repository's copy with `new` (refused when older) and generates the catalogue;
/// the lines to print.
pub fn refresh(ws: &Workspace, new: &std::path::Path) -> Result<Vec<String>> {
    let bytes = fs::read(new).with_context(|| format!("reading {}", new.display()))?;
    let doc: Value =
        serde_json::from_slice(&bytes).with_context(|| format!("parsing {}", new.display()))?;
    check_document(&doc, new)?;
    let current = report_fields::json_file(&ws.path(DISCOVERY))?;
    let diff = difference(&current, &doc)?;
    if diff.revisions.1 < diff.revisions.0 {
        bail!(
            "{} is revision {}, older than the repository's {}: nothing was changed",
            new.display(),
            diff.revisions.1,
            diff.revisions.0
        );
    }
    let mut lines = vec![diff.to_string().trim_end().to_owned()];
    let unchanged = fs::read(ws.path(DISCOVERY)).is_ok_and(|old| old == bytes);
    if !unchanged {
        fs::write(ws.path(DISCOVERY), &bytes).with_context(|| format!("writing {DISCOVERY}"))?;
    }
    lines.push(format!(
        "discovery: {} {DISCOVERY} (the fake reads it)",
        if unchanged { "unchanged" } else { "wrote" }
    ));
    lines.push(report_fields::write(ws)?);
    if !diff.is_empty() {
        lines.push(
            "left for a person: the spec's row schemas (specs/search-ads-reporting.yaml, SR-21; \
             `cargo test -p workspace-tests --test it search_ads_reporting_discovery` lists what \
             they lack), `cargo xtask generate`, the values the fake fills for new fields \
             (SR-22), and specs/SOURCES.md's revision"
                .to_owned(),
        );
    }
    Ok(lines)
}

/// Runs `cargo xtask discovery`.
pub fn run(ws: &Workspace, args: &Args) -> Result<ExitCode> {
    match &args.command {
        Command::Compare { old, new } => {
            let load = |path: &PathBuf| {
                let doc = report_fields::json_file(path)?;
                check_document(&doc, path).map(|()| doc)
            };
            match load(old).and_then(|old| difference(&old, &load(new)?)) {
                Ok(diff) => {
                    print!("{diff}");
                    Ok(ExitCode::from(u8::from(!diff.is_empty())))
                }
                Err(e) => {
                    eprintln!("error: {e:#}");
                    Ok(ExitCode::from(2))
                }
            }
        }
        Command::Refresh { new } => {
            for line in refresh(ws, new)? {
                println!("{line}");
            }
            Ok(ExitCode::SUCCESS)
        }
    }
}

#[cfg(test)]
mod tests;

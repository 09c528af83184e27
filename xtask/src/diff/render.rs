//! Text, Markdown and JSON renderings of a [`Report`].
//!
//! The JSON schema is stable (keys are emitted in alphabetical order):
//!
//! ```json
//! {
//!   "base": "merge base with main (1a2b3c4d5e6f)",
//!   "breaking": true,
//!   "changes": [
//!     {"class": "breaking-clients", "kind": "operation-removed",
//!      "location": "#/paths/~1conversion/post", "message": "…",
//!      "spec": "search-ads", "subject": "operation `conversionInsert` (POST /conversion)"}
//!   ],
//!   "rust_api": [
//!     {"change": "removed", "details": [], "item": "Client::conversion_insert",
//!      "kind": "method", "spec": "search-ads"}
//!   ],
//!   "rust_api_unavailable": [{"message": "…", "spec": "…"}],
//!   "warnings": [{"message": "…", "pointer": "#/paths/…", "side": "base",
//!                 "spec": "…"}]
//! }
//! ```
//!
//! `warnings` are the parts of a document the tolerant reader could not
//! understand and left out of the comparison (`side` is `base` or `new`).
//!
//! [`comment`] is the body of the pull-request comment: the Markdown report
//! after a hidden [`COMMENT_MARKER`] line (the workflow finds its earlier
//! comment by it), cut to [`COMMENT_MAX_CHARS`].
//!
//! `class` is one of `compatible`, `breaking-clients`, `breaking-servers`,
//! `breaking-clients-and-servers`; `kind` is a rule id of
//! [`super::rules::RULES`]; `change` is `added`, `removed` or `changed`.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde_json::{Value, json};

use super::rules::Class;
use super::{Report, RustApi, SpecDiff, Subject};

/// The hidden first line of the pull-request comment.
pub const COMMENT_MARKER: &str = "<!-- xtask-spec-review -->";

/// The longest comment body (GitHub refuses more than 65 536 characters).
pub const COMMENT_MAX_CHARS: usize = 60_000;

/// The pull-request comment: the marker, then the Markdown report; when too
/// long, cut at a line end with a note pointing at the JSON artifact.
pub fn comment(report: &Report) -> String {
    let mut out = format!("{COMMENT_MARKER}\n{}", markdown(report));
    if out.chars().count() > COMMENT_MAX_CHARS {
        let note = "\n\n*The report is too long for a comment and was cut here; the whole \
                    report is the `spec-diff` artifact of this run (JSON).*\n";
        let budget = COMMENT_MAX_CHARS - note.chars().count();
        let cut: String = out.chars().take(budget).collect();
        let end = cut.rfind('\n').unwrap_or(cut.len());
        out = format!("{}{note}", &cut[..end]);
    }
    out
}

/// Lines for the reader's warnings of one spec.
fn warning_lines(spec: &SpecDiff) -> Vec<String> {
    spec.warnings
        .iter()
        .map(|(side, w)| format!("{} {}: {}", side.id(), w.pointer, w.message))
        .collect()
}

/// Number of changes per class, breaking ones first.
fn counts(report: &Report) -> BTreeMap<Class, usize> {
    let mut counts = BTreeMap::new();
    for spec in &report.specs {
        for change in &spec.changes {
            *counts.entry(change.class()).or_insert(0) += 1;
        }
    }
    counts
}

fn breaking_count(report: &Report) -> usize {
    counts(report)
        .iter()
        .filter(|(c, _)| c.is_breaking())
        .map(|(_, n)| n)
        .sum()
}

fn plural(n: usize, word: &str) -> String {
    if n == 1 {
        format!("{n} {word}")
    } else {
        format!("{n} {word}s")
    }
}

/// `3 changes, 2 breaking`.
fn spec_summary(spec: &SpecDiff) -> String {
    let presence = match spec.present {
        (false, true) => " (new spec)",
        (true, false) => " (spec removed)",
        (false, false) => " (missing on both sides)",
        (true, true) => "",
    };
    if spec.changes.is_empty() {
        return format!("no changes{presence}");
    }
    let breaking = spec
        .changes
        .iter()
        .filter(|c| c.class().is_breaking())
        .count();
    format!(
        "{}, {breaking} breaking{presence}",
        plural(spec.changes.len(), "change")
    )
}

/// The closing line: totals per breaking class.
fn verdict(report: &Report) -> String {
    let counts = counts(report);
    let breaking = breaking_count(report);
    if breaking == 0 {
        let total: usize = counts.values().sum();
        if total == 0 {
            return "No changes.".to_owned();
        }
        return format!(
            "No breaking changes ({}).",
            plural(total, "compatible change")
        );
    }
    let parts: Vec<String> = counts
        .iter()
        .filter(|(c, _)| c.is_breaking())
        .map(|(c, n)| format!("{c}: {n}"))
        .collect();
    format!(
        "{} ({}).",
        plural(breaking, "breaking change"),
        parts.join(", ")
    )
}

/// How a subject is shown: schemas also name the operations that use them.
fn subject_label(spec: &SpecDiff, subject: &Subject) -> String {
    let Subject::Schema(name) = subject else {
        return subject.to_string();
    };
    match spec.schema_users.get(name) {
        None => format!("{subject} (unused)"),
        Some(users) => {
            let users: Vec<&str> = users.iter().map(String::as_str).collect();
            let shown = if users.len() > 4 {
                format!("{} and {} more", users[..3].join(", "), users.len() - 3)
            } else {
                users.join(", ")
            };
            format!("{subject} (used by {shown})")
        }
    }
}

/// Plain text for a terminal.
pub fn text(report: &Report) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "Spec changes against {}", report.base);
    for spec in &report.specs {
        let _ = writeln!(
            out,
            "\n{} ({}): {}",
            spec.name,
            spec.path,
            spec_summary(spec)
        );
        let mut subject: Option<&Subject> = None;
        for change in &spec.changes {
            if subject != Some(&change.subject) {
                let _ = writeln!(out, "  {}", subject_label(spec, &change.subject));
                subject = Some(&change.subject);
            }
            let _ = writeln!(
                out,
                "    {:<32}  {} ({})",
                change.class().label(),
                change.message(),
                change.rule.id
            );
        }
        let warnings = warning_lines(spec);
        if !warnings.is_empty() {
            let _ = writeln!(
                out,
                "  not understood, left out of the comparison ({}):",
                warnings.len()
            );
            for line in warnings {
                let _ = writeln!(out, "    {line}");
            }
        }
        match &spec.rust_api {
            RustApi::Changes(changes) if changes.is_empty() => {
                if !spec.changes.is_empty() {
                    let _ = writeln!(out, "  generated Rust API ({}): unchanged", spec.krate);
                }
            }
            RustApi::Changes(changes) => {
                let _ = writeln!(out, "  generated Rust API ({}):", spec.krate);
                for change in changes {
                    let _ = writeln!(out, "    {change}");
                }
            }
            RustApi::Unavailable(why) => {
                let _ = writeln!(
                    out,
                    "  generated Rust API ({}): unavailable: {why}",
                    spec.krate
                );
            }
        }
    }
    let _ = writeln!(out, "\n{}", verdict(report));
    out
}

/// Escape a table cell.
fn cell(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}

/// Markdown to paste into a pull request.
pub fn markdown(report: &Report) -> String {
    let mut out = String::new();
    let breaking = breaking_count(report);
    let title = if breaking == 0 {
        "no breaking changes".to_owned()
    } else {
        plural(breaking, "breaking change")
    };
    let _ = writeln!(out, "## Spec changes: {title}\n");
    let _ = writeln!(
        out,
        "Compared with {} by `cargo xtask diff`. *Breaking for clients*: existing \
         clients, or code using the generated crates, stop working. *Breaking for \
         servers*: a server built on the base (the real service, `fake-services`) no \
         longer conforms.",
        report.base
    );
    for spec in &report.specs {
        let _ = writeln!(
            out,
            "\n### `{}` (`{}`): {}",
            spec.name,
            spec.path,
            spec_summary(spec)
        );
        if !spec.changes.is_empty() {
            let _ = writeln!(out, "\n| class | subject | change | kind |");
            let _ = writeln!(out, "|---|---|---|---|");
            let mut subject: Option<&Subject> = None;
            for change in &spec.changes {
                let class = change.class();
                let class = if class.is_breaking() {
                    format!("**{class}**")
                } else {
                    class.to_string()
                };
                let shown = if subject == Some(&change.subject) {
                    String::new()
                } else {
                    subject = Some(&change.subject);
                    cell(&subject_label(spec, &change.subject))
                };
                let _ = writeln!(
                    out,
                    "| {class} | {shown} | {} | `{}` |",
                    cell(&change.message()),
                    change.rule.id
                );
            }
        }
        let warnings = warning_lines(spec);
        if !warnings.is_empty() {
            let _ = writeln!(
                out,
                "\nNot understood, left out of the comparison ({}):\n",
                warnings.len()
            );
            for line in warnings {
                let _ = writeln!(out, "- `{}`", line.replace('`', "'"));
            }
        }
        match &spec.rust_api {
            RustApi::Changes(changes) if changes.is_empty() => {
                if !spec.changes.is_empty() {
                    let _ = writeln!(out, "\nGenerated Rust API (`{}`): unchanged.", spec.krate);
                }
            }
            RustApi::Changes(changes) => {
                let _ = writeln!(out, "\nGenerated Rust API (`{}`):\n", spec.krate);
                for change in changes {
                    let line = change.to_string();
                    // Drop the sign: Markdown lists have their own bullets.
                    let line = line.get(2..).unwrap_or(&line);
                    let _ = writeln!(out, "- {line}");
                }
            }
            RustApi::Unavailable(why) => {
                let _ = writeln!(
                    out,
                    "\nGenerated Rust API (`{}`): unavailable: {}",
                    spec.krate,
                    why.replace('\n', " ")
                );
            }
        }
    }
    let _ = writeln!(out, "\n{}", verdict(report));
    out
}

/// JSON with a stable schema (see the module docs).
pub fn json(report: &Report) -> String {
    let mut changes = Vec::new();
    let mut rust_api = Vec::new();
    let mut unavailable = Vec::new();
    let mut warnings = Vec::new();
    for spec in &report.specs {
        for (side, w) in &spec.warnings {
            warnings.push(json!({
                "message": w.message,
                "pointer": w.pointer,
                "side": side.id(),
                "spec": spec.name,
            }));
        }
        for change in &spec.changes {
            changes.push(json!({
                "class": change.class().id(),
                "kind": change.rule.id,
                "location": change.location,
                "message": change.message(),
                "spec": spec.name,
                "subject": change.subject.to_string(),
            }));
        }
        match &spec.rust_api {
            RustApi::Changes(list) => {
                for change in list {
                    rust_api.push(json!({
                        "change": change.change.id(),
                        "details": change.details,
                        "item": change.item,
                        "kind": change.kind,
                        "spec": spec.name,
                    }));
                }
            }
            RustApi::Unavailable(why) => unavailable.push(json!({
                "message": why,
                "spec": spec.name,
            })),
        }
    }
    let value: Value = json!({
        "base": report.base,
        "breaking": report.is_breaking(),
        "changes": changes,
        "rust_api": rust_api,
        "rust_api_unavailable": unavailable,
        "warnings": warnings,
    });
    let mut out = serde_json::to_string_pretty(&value).unwrap_or_else(|_| "{}".to_owned());
    out.push('\n');
    out
}

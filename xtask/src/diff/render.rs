//! Text, Markdown and JSON renderings of a [`Report`]. The JSON schema is stable (keys in
//! alphabetical order) and documented in CONTRIBUTING.md ("Reviewing a spec change"); `kind` is a
//! rule id of [`super::rules::RULES`].
//!
//! [`comment`] is the body of the pull-request comment: the Markdown report after a hidden
//! [`COMMENT_MARKER`] line (the workflow finds its earlier comment by it), cut to
//! [`COMMENT_MAX_CHARS`].

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde_json::{Value, json};

use super::compare::Subject;
use super::report::{FailOn, Report, RustApi, SpecDiff};
use super::rules::Class;
use super::rust_api::ApiChange;

/// The hidden first line of the pull-request comment.
pub const COMMENT_MARKER: &str = "<!-- xtask-spec-review -->";

/// The longest comment body (GitHub refuses more than 65 536 characters).
pub const COMMENT_MAX_CHARS: usize = 60_000;

/// The pull-request comment: the marker, then the Markdown report; when too
/// long, cut at a line end with a note pointing at the JSON artifact.
pub fn comment(report: &Report, fail_on: FailOn) -> String {
    let gate = format!(
        "\nThe `spec review` check enforces {} (`--fail-on {}`); the label \
         `spec: breaking change approved` lets it pass.\n",
        fail_on.describe(),
        fail_on_id(fail_on)
    );
    let mut out = format!("{COMMENT_MARKER}\n{}{gate}", markdown(report));
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

/// The `--fail-on` value.
fn fail_on_id(fail_on: FailOn) -> &'static str {
    match fail_on {
        FailOn::Wire => "wire",
        FailOn::WireClients => "wire-clients",
        FailOn::WireServers => "wire-servers",
        FailOn::RustApi => "rust-api",
        FailOn::Any => "any",
    }
}

/// `breaking`, `warning` or `info`.
fn level(class: Class) -> &'static str {
    if class.is_breaking() {
        "breaking"
    } else if class.is_warning() {
        "warning"
    } else {
        "info"
    }
}

/// A breaking generated item in one line: ``struct `types::Thing`: field `a` removed``.
fn api_line(change: &ApiChange) -> String {
    let mut line = format!("{} {} `{}`", change.change.id(), change.kind, change.item);
    if !change.details.is_empty() {
        let _ = write!(line, ": {}", change.details.join("; "));
    }
    line
}

/// `1 change breaks the Rust API`, `2 changes break the Rust API`.
fn breaks_rust(n: usize) -> String {
    if n == 1 {
        "1 change breaks the Rust API".to_owned()
    } else {
        format!("{n} changes break the Rust API")
    }
}

/// Number of changes that break the generated Rust API (a new spec that
/// does not generate counts once).
fn rust_breaking_count(report: &Report) -> usize {
    report
        .specs
        .iter()
        .map(|s| {
            (0..s.changes.len())
                .filter(|&i| !s.rust_api_of(i).is_empty())
                .count()
                + s.rust_api_unattributed.len()
                + usize::from(
                    matches!(s.rust_api, RustApi::Unavailable { .. }) && s.rust_api_breaks(),
                )
        })
        .sum()
}

/// What the Rust API section says when a side does not generate.
fn unavailable_line(spec: &SpecDiff, why: &str) -> String {
    let verdict = if spec.rust_api_breaks() {
        "breaks: code using the base crate has nothing to compile against"
    } else {
        "nothing to break: no crate was ever generated from the base"
    };
    format!("{verdict}; {}", why.replace('\n', "; "))
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
        "{}, {breaking} breaking on the wire{presence}",
        plural(spec.changes.len(), "change")
    )
}

/// The closing lines: the wire totals per breaking class, then the
/// rust-api total.
fn verdict(report: &Report) -> String {
    let rust = rust_breaking_count(report);
    let unknown: Vec<&str> = report
        .specs
        .iter()
        .filter(|s| {
            matches!(s.rust_api, RustApi::Unavailable { .. })
                && !s.rust_api_breaks()
                && !s.changes.is_empty()
        })
        .map(|s| s.name.as_str())
        .collect();
    let rust_line = if !unknown.is_empty() {
        format!(
            "Rust API: not compared for {} (the base spec does not generate; see above){}.",
            unknown.join(", "),
            if rust == 0 {
                String::new()
            } else {
                format!("; elsewhere {}", breaks_rust(rust))
            }
        )
    } else if rust == 0 {
        "Rust API: nothing breaks code using the generated crates.".to_owned()
    } else {
        format!(
            "Rust API: {} (code using the generated crates).",
            breaks_rust(rust)
        )
    };
    format!("Wire: {}\n{rust_line}", wire_verdict(report))
}

/// The wire totals per breaking class.
fn wire_verdict(report: &Report) -> String {
    let counts = counts(report);
    let breaking = breaking_count(report);
    let warnings = counts.get(&Class::Warning).copied().unwrap_or(0);
    let warned = if warnings == 0 {
        String::new()
    } else {
        format!(", {}", plural(warnings, "warning"))
    };
    if breaking == 0 {
        let compatible = counts.get(&Class::Compatible).copied().unwrap_or(0);
        if compatible + warnings == 0 {
            return "No changes.".to_owned();
        }
        let mut parts = Vec::new();
        if warnings > 0 {
            parts.push(plural(warnings, "warning"));
        }
        if compatible > 0 {
            parts.push(plural(compatible, "compatible change"));
        }
        return format!("No breaking changes ({}).", parts.join(", "));
    }
    let parts: Vec<String> = counts
        .iter()
        .filter(|(c, _)| c.is_breaking())
        .map(|(c, n)| format!("{c}: {n}"))
        .collect();
    format!(
        "{} ({}){warned}.",
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
        let breaking: Vec<(usize, &ApiChange)> = (0..spec.changes.len())
            .flat_map(|i| spec.rust_api_of(i).iter().map(move |a| (i, a)))
            .collect();
        if !breaking.is_empty() || !spec.rust_api_unattributed.is_empty() {
            let _ = writeln!(out, "  rust-api: breaks code using {}:", spec.krate);
            for (i, api) in breaking {
                let change = &spec.changes[i];
                let _ = writeln!(out, "    {} ({})", api_line(api), change.rule.id);
            }
            for api in &spec.rust_api_unattributed {
                let _ = writeln!(out, "    {} (no spec change claims it)", api_line(api));
            }
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
            RustApi::Unavailable { why, .. } => {
                let _ = writeln!(
                    out,
                    "  generated Rust API ({}): {}",
                    spec.krate,
                    unavailable_line(spec, why)
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

/// Markdown to paste into a pull request: per spec, a *wire* section (who
/// breaks on the wire, per change) and a *Rust API* section (what stops
/// compiling in code using the generated crate, per change, then the whole
/// generated API change).
pub fn markdown(report: &Report) -> String {
    let mut out = String::new();
    let breaking = breaking_count(report);
    let rust = rust_breaking_count(report);
    let title = match (breaking, rust) {
        (0, 0) => "nothing breaking".to_owned(),
        (w, 0) => format!("{} on the wire", plural(w, "breaking change")),
        (0, r) => format!("nothing breaking on the wire, {}", breaks_rust(r)),
        (w, r) => format!(
            "{} on the wire, {}",
            plural(w, "breaking change"),
            breaks_rust(r)
        ),
    };
    let _ = writeln!(out, "## Spec changes: {title}\n");
    let _ = writeln!(
        out,
        "Compared with {} by `cargo xtask diff`. Every change has two verdicts. \
         **Wire**: *clients* — clients deployed against the base stop working; \
         *servers* — a server built on the base (the real service, `sa360-video-fakes`) no \
         longer conforms; a *warning* may break, check by hand. **Rust API**: code written \
         against the generated crate stops compiling (a major version of the crate).",
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
            let _ = writeln!(out, "\n#### Wire\n");
            let _ = writeln!(out, "| wire | subject | change | kind |");
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
        if spec.changes.is_empty()
            && !matches!(&spec.rust_api, RustApi::Changes(c) if !c.is_empty())
        {
            continue;
        }
        let _ = writeln!(out, "\n#### Rust API (`{}`)\n", spec.krate);
        match &spec.rust_api {
            RustApi::Changes(changes) => {
                let rows: Vec<(&str, String, String)> = (0..spec.changes.len())
                    .flat_map(|i| {
                        let change = &spec.changes[i];
                        spec.rust_api_of(i)
                            .iter()
                            .map(move |a| (change.rule.id, change.subject.to_string(), api_line(a)))
                    })
                    .chain(
                        spec.rust_api_unattributed
                            .iter()
                            .map(|a| ("", "(no spec change claims it)".to_owned(), api_line(a))),
                    )
                    .collect();
                if rows.is_empty() {
                    let _ = writeln!(
                        out,
                        "Nothing breaks: code using the base crate still compiles."
                    );
                } else {
                    let _ = writeln!(out, "| breaks | caused by | kind |");
                    let _ = writeln!(out, "|---|---|---|");
                    for (kind, subject, line) in rows {
                        let kind = if kind.is_empty() {
                            String::new()
                        } else {
                            format!("`{kind}`")
                        };
                        let _ = writeln!(out, "| {} | {} | {kind} |", cell(&line), cell(&subject));
                    }
                }
                if changes.is_empty() {
                    let _ = writeln!(out, "\nGenerated API: unchanged.");
                } else {
                    let _ = writeln!(out, "\nEvery generated API change:\n");
                    for change in changes {
                        let line = change.to_string();
                        // Drop the sign: Markdown lists have their own bullets.
                        let line = line.get(2..).unwrap_or(&line);
                        let _ = writeln!(out, "- {line}");
                    }
                }
            }
            RustApi::Unavailable { why, .. } => {
                let _ = writeln!(out, "{}", unavailable_line(spec, why));
            }
        }
    }
    let _ = writeln!(out, "\n{}", verdict(report).replace('\n', "\n\n"));
    out
}

/// One breaking generated item as JSON.
fn api_json(api: &ApiChange) -> Value {
    json!({
        "change": api.change.id(),
        "details": api.details,
        "item": api.item,
        "kind": api.kind,
    })
}

/// JSON with a stable schema (see the module docs).
pub fn json(report: &Report) -> String {
    let mut changes = Vec::new();
    let mut rust_api = Vec::new();
    let mut unavailable = Vec::new();
    let mut unattributed = Vec::new();
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
        for (i, change) in spec.changes.iter().enumerate() {
            let api = spec.rust_api_of(i);
            let rust: Value = if api.is_empty() {
                Value::Null
            } else {
                api.iter().map(api_json).collect()
            };
            changes.push(json!({
                "kind": change.rule.id,
                "level": level(change.class()),
                "location": change.location,
                "message": change.message(),
                "rust_api": rust,
                "spec": spec.name,
                "subject": change.subject.to_string(),
                "wire": change.class().wire(),
            }));
        }
        for api in &spec.rust_api_unattributed {
            let mut value = api_json(api);
            value["spec"] = json!(spec.name);
            unattributed.push(value);
        }
        match &spec.rust_api {
            RustApi::Changes(list) => {
                for change in list {
                    rust_api.push(json!({
                        "breaks": change.breaks,
                        "change": change.change.id(),
                        "details": change.details,
                        "item": change.item,
                        "kind": change.kind,
                        "spec": spec.name,
                    }));
                }
            }
            RustApi::Unavailable { side, why } => unavailable.push(json!({
                "breaks": spec.rust_api_breaks(),
                "message": why,
                "side": side.id(),
                "spec": spec.name,
            })),
        }
    }
    let value: Value = json!({
        "base": report.base,
        "breaking": report.is_breaking(),
        "changes": changes,
        "rust_api": rust_api,
        "rust_api_breaking": report.is_rust_api_breaking(),
        "rust_api_unattributed": unattributed,
        "rust_api_unavailable": unavailable,
        "warnings": warnings,
    });
    let mut out = serde_json::to_string_pretty(&value).unwrap_or_else(|_| "{}".to_owned());
    out.push('\n');
    out
}

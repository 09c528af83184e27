//! `cargo xtask diff`: what a spec change means for those who depend on the generated crates
//! and the SDK. CONTRIBUTING.md ("Reviewing a spec change") is the reference: the arguments, the
//! exit status, the two verdicts (*wire*, from the table in [`rules`], the changes found by
//! [`compare`]; *rust-api*, both sides generated and compared by [`rust_api`], each breaking
//! item tied to its change by [`attribute`]) and the formats ([`render`]).
//!
//! Oxide's `drift` 0.2 was evaluated and left: it reports enum, format, bound, property,
//! `required`, nullability, operationId, deprecation and security changes as `Unhandled` or not
//! at all, and panics when a body's media type is added or removed; the comparer is written over
//! the `openapiv3` 2.x types instead, with the classification in one table.

pub mod attribute;
pub mod compare;
pub mod ground_truth;
pub mod render;
pub mod report;
pub mod rules;
pub mod rust_api;

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::Path;
use std::process::{Command, ExitCode};

use anyhow::{Context, Result, bail};

use crate::Workspace;
use crate::codegen;
use crate::generate;
use crate::openapi::{self, Document};
use crate::specs::{self, SpecConfig};

pub use compare::{Change, Subject};
pub use report::{FailOn, Report, RustApi, Side, SpecDiff};
pub use rules::{Class, Direction, Rule};
pub use rust_api::ApiChange;

/// Output format of `cargo xtask diff`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// Plain text for a terminal.
    #[default]
    Text,
    /// Markdown to paste into a pull request.
    Markdown,
    /// JSON: `{"base", "breaking", "changes": [...], "rust_api": [...]}`.
    Json,
}

/// Arguments of `cargo xtask diff`.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct Args {
    /// Git revision to compare the working tree with (default: the merge base
    /// with `main`, or `HEAD` when on `main`).
    #[arg(long, value_name = "GIT-REV", conflicts_with = "old")]
    pub base: Option<String>,
    /// The old document of a pair: a file, or `GIT-REV:PATH` (a file at a
    /// revision, PATH from the repository root). Needs `--new`.
    #[arg(
        long,
        value_name = "PATH_OR_REV:PATH",
        requires = "new",
        conflicts_with = "only"
    )]
    pub old: Option<String>,
    /// The new document of a pair: a file (or `GIT-REV:PATH`). Needs `--old`.
    #[arg(long, value_name = "PATH", requires = "old")]
    pub new: Option<String>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    /// Print exactly the body of the pull-request comment (Markdown with a
    /// hidden marker, cut to fit a comment); needs `--format markdown`.
    #[arg(long)]
    pub comment: bool,
    /// Which verdict fails (exit status 1).
    #[arg(long, value_enum, default_value_t = FailOn::Wire, value_name = "VERDICT")]
    pub fail_on: FailOn,
    /// Exit with status 0 even when a change is breaking.
    #[arg(long)]
    pub allow_breaking: bool,
    /// Only compare these specs (by name); default: all.
    #[arg(long = "only", value_name = "NAME")]
    pub only: Vec<String>,
}

impl Report {
    /// Render in `format`.
    pub fn render(&self, format: Format) -> String {
        match format {
            Format::Text => render::text(self),
            Format::Markdown => render::markdown(self),
            Format::Json => render::json(self),
        }
    }
}

/// The exit status when the documents could not be compared.
pub const EXIT_CANNOT_COMPARE: u8 = 2;

/// Read a spec text, or an empty document when the spec does not exist.
fn read_or_empty(text: Option<&str>, what: &str) -> Result<Document> {
    match text {
        Some(text) => openapi::read(text).with_context(|| format!("reading {what}")),
        None => Ok(Document::empty()),
    }
}

/// Compare two versions of one spec (`None`: the spec does not exist on that
/// side, so everything is added or removed).
pub fn diff_texts(config: &SpecConfig, base: Option<&str>, new: Option<&str>) -> Result<SpecDiff> {
    let old_doc = read_or_empty(base, &format!("{} at the base", config.spec))?;
    let new_doc = read_or_empty(new, &format!("{} (new)", config.spec))?;
    let changes = compare::compare(&old_doc, &new_doc);
    let rust_api = rust_api_changes(config, base.map(|_| &old_doc), new.map(|_| &new_doc));
    let mut schema_users = schema_users(&new_doc);
    for (name, users) in self::schema_users(&old_doc) {
        schema_users.entry(name).or_insert(users);
    }
    let (rust_api_by_change, rust_api_unattributed) = match &rust_api {
        RustApi::Changes(list) => attribute::attribute(&changes, list),
        RustApi::Unavailable { .. } => (vec![Vec::new(); changes.len()], Vec::new()),
    };
    let warnings = old_doc
        .warnings
        .iter()
        .map(|w| (Side::Base, w.clone()))
        .chain(new_doc.warnings.iter().map(|w| (Side::New, w.clone())))
        .collect();
    Ok(SpecDiff {
        name: config.name.to_owned(),
        path: config.spec.to_owned(),
        krate: format!("{}-client", config.name),
        present: (base.is_some(), new.is_some()),
        changes,
        rust_api,
        rust_api_by_change,
        rust_api_unattributed,
        schema_users,
        warnings,
    })
}

/// Component schema → operationIds that reach it.
pub fn schema_users(doc: &Document) -> BTreeMap<String, BTreeSet<String>> {
    let mut users: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for op in doc.operations() {
        let id = op.id();
        let base = format!("/paths/{}", openapi::escape(op.path));
        let mut refs = BTreeSet::new();
        for pointer in [
            format!("{base}/{}", op.method),
            format!("{base}/parameters"),
        ] {
            if let Some(start) = doc.json.pointer(&pointer) {
                refs.extend(crate::lint::reachable_refs(&doc.json, start));
            }
        }
        for r in refs {
            if let Some(name) = r.strip_prefix("#/components/schemas/") {
                users.entry(name.to_owned()).or_default().insert(id.clone());
            }
        }
    }
    users
}

/// Generate both sides in memory and compare their public APIs.
fn rust_api_changes(
    config: &SpecConfig,
    old: Option<&Document>,
    new: Option<&Document>,
) -> RustApi {
    let api = |doc: Option<&Document>, side: Side| -> Result<rust_api::Api, RustApi> {
        match doc {
            None => Ok(rust_api::Api::new()),
            Some(doc) => codegen::render(config, &doc.spec)
                .map_err(|e| format!("{e:#}"))
                .and_then(|g| rust_api::extract(&g.code).map_err(|e| format!("{e:#}")))
                .map_err(|e| RustApi::Unavailable {
                    side,
                    // progenitor's messages name the configured (new) path.
                    why: format!("the {} spec does not generate: {e}", side.id()).replace(
                        &format!("{}: ", config.spec),
                        &format!("{} ({}): ", config.spec, side.id()),
                    ),
                }),
        }
    };
    match (api(old, Side::Base), api(new, Side::New)) {
        (Ok(o), Ok(n)) => RustApi::Changes(rust_api::compare(&o, &n)),
        (Err(e), _) | (_, Err(e)) => e,
    }
}

// ------------------------------------------------------------------------ git

fn git(root: &Path, args: &[&str]) -> Result<std::process::Output> {
    Command::new("git")
        .arg("-C")
        .arg(root)
        .args(args)
        .output()
        .with_context(|| format!("running git {}", args.join(" ")))
}

fn git_stdout(root: &Path, args: &[&str]) -> Result<String> {
    let out = git(root, args)?;
    if !out.status.success() {
        bail!(
            "git {} failed: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_owned())
}

/// The base revision and how to describe it: `--base` as given, else `HEAD`
/// on `main`, else the merge base of `HEAD` with `main` (or `origin/main`).
pub fn resolve_base(root: &Path, base: Option<&str>) -> Result<(String, String)> {
    if let Some(rev) = base {
        let commit = git_stdout(
            root,
            &["rev-parse", "--verify", &format!("{rev}^{{commit}}")],
        )
        .with_context(|| format!("--base {rev:?} is not a commit"))?;
        return Ok((commit, rev.to_owned()));
    }
    let branch = git_stdout(root, &["rev-parse", "--abbrev-ref", "HEAD"])?;
    if branch == "main" {
        let commit = git_stdout(root, &["rev-parse", "HEAD"])?;
        return Ok((commit, "HEAD (on main)".to_owned()));
    }
    for main in ["main", "origin/main"] {
        if let Ok(commit) = git_stdout(root, &["merge-base", "HEAD", main]) {
            let short = &commit[..commit.len().min(12)];
            return Ok((commit.clone(), format!("merge base with {main} ({short})")));
        }
    }
    bail!("no merge base of HEAD with main or origin/main; pass --base <git-rev>")
}

/// The text of `relative` (workspace-relative) at `commit`, or `None` when
/// the file does not exist there.
pub fn read_at(root: &Path, commit: &str, relative: &str) -> Result<Option<String>> {
    let prefix = git_stdout(root, &["rev-parse", "--show-prefix"])?;
    let object = format!("{commit}:{prefix}{relative}");
    if !git(root, &["cat-file", "-e", &object])?.status.success() {
        return Ok(None);
    }
    let out = git(root, &["show", &object])?;
    if !out.status.success() {
        bail!(
            "git show {object} failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    String::from_utf8(out.stdout)
        .map(Some)
        .with_context(|| format!("{object} is not UTF-8"))
}

/// Compare the selected specs of `ws` with `args.base`, or the pair
/// `args.old` / `args.new`.
pub fn diff(ws: &Workspace, args: &Args) -> Result<Report> {
    if let (Some(old), Some(new)) = (&args.old, &args.new) {
        return diff_pair(ws, old, new);
    }
    if args.old.is_some() || args.new.is_some() {
        bail!("--old and --new go together");
    }
    let configs = generate::select(&args.only)?;
    let (commit, label) = resolve_base(&ws.root, args.base.as_deref())?;
    let mut specs = Vec::new();
    for config in configs {
        let base = read_at(&ws.root, &commit, config.spec)?;
        let path = ws.path(config.spec);
        let new = if path.exists() {
            Some(fs::read_to_string(&path).with_context(|| format!("reading {}", path.display()))?)
        } else {
            None
        };
        specs.push(diff_texts(config, base.as_deref(), new.as_deref())?);
    }
    Ok(Report { base: label, specs })
}

/// The text of a `--old`/`--new` argument: a file (relative to the current
/// directory, else to the workspace root), else `GIT-REV:PATH` read from the
/// repository of `ws`.
pub fn read_document_arg(ws: &Workspace, arg: &str) -> Result<String> {
    for candidate in [Path::new(arg).to_path_buf(), ws.path(arg)] {
        if candidate.is_file() {
            return fs::read_to_string(&candidate)
                .with_context(|| format!("reading {}", candidate.display()));
        }
    }
    let Some((rev, path)) = arg.split_once(':') else {
        bail!("{arg}: no such file (for a file at a git revision, write REV:PATH)");
    };
    let commit = git_stdout(
        &ws.root,
        &["rev-parse", "--verify", &format!("{rev}^{{commit}}")],
    )
    .with_context(|| format!("{arg}: {rev:?} is not a commit"))?;
    let toplevel = git_stdout(&ws.root, &["rev-parse", "--show-toplevel"])?;
    let object = format!("{commit}:{path}");
    let out = git(Path::new(&toplevel), &["show", &object])?;
    if !out.status.success() {
        bail!("{arg}: {path} does not exist at {rev}");
    }
    String::from_utf8(out.stdout).with_context(|| format!("{arg} is not UTF-8"))
}

/// Compare any two documents (see [`Args::old`]).
pub fn diff_pair(ws: &Workspace, old: &str, new: &str) -> Result<Report> {
    let old_text = read_document_arg(ws, old)?;
    let new_text = read_document_arg(ws, new)?;
    // A configured spec keeps its generation settings (for the Rust API
    // section); any other document gets the defaults.
    let path_of = |arg: &str| {
        arg.rsplit_once(':')
            .map_or(arg, |(_, p)| p)
            .trim_start_matches("./")
            .to_owned()
    };
    let new_path = path_of(new);
    let config = specs::SPECS
        .iter()
        .find(|c| c.spec == new_path)
        .copied()
        .unwrap_or_else(|| {
            let name = Path::new(&new_path)
                .file_stem()
                .map_or_else(|| "spec".to_owned(), |s| s.to_string_lossy().into_owned());
            SpecConfig {
                name: Box::leak(name.into_boxed_str()),
                spec: Box::leak(new_path.clone().into_boxed_str()),
                output: "(not generated)",
                int64_strings: false,
                plain_string_constraints: &[],
                inner_type: None,
            }
        });
    let spec = diff_texts(&config, Some(&old_text), Some(&new_text))?;
    Ok(Report {
        base: format!("`{old}`"),
        specs: vec![spec],
    })
}

/// Run `diff` and render it: `(output, exit status)`. An error is a failure
/// to compare (the CLI exits with [`EXIT_CANNOT_COMPARE`]).
pub fn execute(ws: &Workspace, args: &Args) -> Result<(String, u8)> {
    if args.comment && args.format != Format::Markdown {
        bail!("--comment prints the Markdown comment body: use it with --format markdown");
    }
    let report = diff(ws, args)?;
    let output = if args.comment {
        render::comment(&report, args.fail_on)
    } else {
        report.render(args.format)
    };
    Ok((
        output,
        report.exit_status(args.fail_on, args.allow_breaking),
    ))
}

/// CLI entry point: prints the report; exit status 0, 1 (breaking) or 2
/// (could not compare, with the reason on stderr).
pub fn run(ws: &Workspace, args: &Args) -> Result<ExitCode> {
    match execute(ws, args) {
        Ok((output, status)) => {
            print!("{output}");
            Ok(ExitCode::from(status))
        }
        Err(e) => {
            eprintln!("error: {e:#}");
            eprintln!(
                "hint: exit status 2 means the documents could not be compared; nothing was judged"
            );
            Ok(ExitCode::from(EXIT_CANNOT_COMPARE))
        }
    }
}

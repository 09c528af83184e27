//! `cargo xtask diff`: what a spec change means for the people who depend on
//! the generated crates and the facade.
//!
//! For every spec it reads the file at a base git revision and in the working
//! tree, and lists
//!
//! * the changes per operation and schema, each classed as breaking for
//!   clients, breaking for servers, or compatible ([`compare`], classified by
//!   the table in [`rules`]);
//! * what the change does to the generated Rust API: types, fields, variants
//!   and `Client` methods added, removed or changed ([`rust_api`]).
//!
//! Output is text, Markdown (to paste into a pull request) or JSON
//! ([`render`]). The exit status is 1 when a breaking change is found, unless
//! `--allow-breaking`.
//!
//! # Why not `drift`
//!
//! Oxide's `drift` 0.2 (`drift::compare(&Value, &Value)`) was evaluated. It
//! pairs operations and parameters, follows `$ref`s, guards cycles and knows
//! request vs response, but everything this command must report beyond that
//! is `Unhandled` or absent: enum narrowing/widening, format and bound changes
//! (every string/integer/number difference is an opaque "schema changed"),
//! properties added/removed and `required` changes (one opaque "object
//! properties changed" without names), nullability (not reported at all
//! unless inside an `allOf` wrapper, where it counts as trivial metadata),
//! operationId renames (operations are keyed by path only), operation and
//! parameter deprecation, and security requirements. It also panics
//! (`assert!`/`todo!`) when a media type is added to or removed from a body.
//! Building on it would have meant re-deriving every one of those cases from
//! its JSON paths; the comparer here is written directly over the
//! `openapiv3` 2.x types instead, with the classification in one table.

pub mod compare;
pub mod render;
pub mod rules;
pub mod rust_api;

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::Path;
use std::process::{Command, ExitCode};

use anyhow::{Context, Result, bail};
use openapiv3::OpenAPI;

use crate::Workspace;
use crate::codegen;
use crate::generate;
use crate::specs::SpecConfig;

pub use compare::{Change, Subject};
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
    #[arg(long, value_name = "GIT-REV")]
    pub base: Option<String>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    /// Exit with status 0 even when a change is breaking.
    #[arg(long)]
    pub allow_breaking: bool,
    /// Only compare these specs (by name); default: all.
    #[arg(long = "only", value_name = "NAME")]
    pub only: Vec<String>,
}

/// The generated Rust API changes of one spec, or why they are unknown.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RustApi {
    /// Both sides generated; the changed items.
    Changes(Vec<ApiChange>),
    /// One side could not be generated (or parsed); the reason.
    Unavailable(String),
}

/// Everything `diff` found for one spec.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpecDiff {
    /// Spec name (`search-ads`).
    pub name: String,
    /// Workspace-relative spec path.
    pub path: String,
    /// Name of the generated crate (`search-ads-client`).
    pub krate: String,
    /// Whether the spec exists at the base / in the working tree.
    pub present: (bool, bool),
    /// The spec changes.
    pub changes: Vec<Change>,
    /// The generated Rust API changes.
    pub rust_api: RustApi,
    /// Component schema → the operations that use it (directly or through
    /// other components), in the new spec or, for schemas only in the base,
    /// in the base.
    pub schema_users: BTreeMap<String, BTreeSet<String>>,
}

impl SpecDiff {
    /// Whether any change breaks clients or servers.
    pub fn is_breaking(&self) -> bool {
        self.changes.iter().any(|c| c.class().is_breaking())
    }
}

/// The whole result of `diff`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Report {
    /// What the working tree was compared with, for the header
    /// (`merge base with main (1a2b3c4)`).
    pub base: String,
    /// One entry per compared spec.
    pub specs: Vec<SpecDiff>,
}

impl Report {
    /// Whether any change breaks clients or servers.
    pub fn is_breaking(&self) -> bool {
        self.specs.iter().any(SpecDiff::is_breaking)
    }

    /// The process exit status: 1 when a change is breaking and breaking
    /// changes are not allowed, else 0.
    pub fn exit_status(&self, allow_breaking: bool) -> u8 {
        u8::from(self.is_breaking() && !allow_breaking)
    }

    /// Render in `format`.
    pub fn render(&self, format: Format) -> String {
        match format {
            Format::Text => render::text(self),
            Format::Markdown => render::markdown(self),
            Format::Json => render::json(self),
        }
    }
}

/// Parse a spec text, or an empty document when the spec does not exist.
fn parse_or_empty(text: Option<&str>, what: &str) -> Result<OpenAPI> {
    match text {
        Some(text) => codegen::parse_spec(text).with_context(|| format!("parsing {what}")),
        None => Ok(OpenAPI::default()),
    }
}

/// Compare two versions of one spec (`None`: the spec does not exist on that
/// side, so everything is added or removed).
pub fn diff_texts(config: &SpecConfig, base: Option<&str>, new: Option<&str>) -> Result<SpecDiff> {
    let old_spec = parse_or_empty(base, &format!("{} at the base", config.spec))?;
    let new_spec = parse_or_empty(new, &format!("{} in the working tree", config.spec))?;
    let changes = compare::compare(&old_spec, &new_spec);
    let rust_api = rust_api_changes(config, base.map(|_| &old_spec), new.map(|_| &new_spec));
    let mut schema_users = schema_users(&new_spec);
    for (name, users) in self::schema_users(&old_spec) {
        schema_users.entry(name).or_insert(users);
    }
    Ok(SpecDiff {
        name: config.name.to_owned(),
        path: config.spec.to_owned(),
        krate: format!("{}-client", config.name),
        present: (base.is_some(), new.is_some()),
        changes,
        rust_api,
        schema_users,
    })
}

/// Component schema → operationIds that reach it.
pub fn schema_users(spec: &OpenAPI) -> BTreeMap<String, BTreeSet<String>> {
    let mut users: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let Ok(doc) = serde_json::to_value(spec) else {
        return users;
    };
    for (path, method, op) in spec.operations() {
        let id = op
            .operation_id
            .clone()
            .unwrap_or_else(|| format!("{} {path}", method.to_uppercase()));
        let base = format!("/paths/{}", crate::lint::escape(path));
        let mut refs = BTreeSet::new();
        for pointer in [format!("{base}/{method}"), format!("{base}/parameters")] {
            if let Some(start) = doc.pointer(&pointer) {
                refs.extend(crate::lint::reachable_refs(&doc, start));
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
fn rust_api_changes(config: &SpecConfig, old: Option<&OpenAPI>, new: Option<&OpenAPI>) -> RustApi {
    let api = |spec: Option<&OpenAPI>, side: &str| -> Result<rust_api::Api, String> {
        match spec {
            None => Ok(rust_api::Api::new()),
            Some(spec) => codegen::render(config, spec)
                .map_err(|e| format!("{e:#}"))
                .and_then(|g| rust_api::extract(&g.code).map_err(|e| format!("{e:#}")))
                .map_err(|e| format!("the {side} spec does not generate: {e}")),
        }
    };
    match (api(old, "base"), api(new, "new")) {
        (Ok(o), Ok(n)) => RustApi::Changes(rust_api::compare(&o, &n)),
        (Err(e), _) | (_, Err(e)) => RustApi::Unavailable(e),
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

/// Compare the selected specs of `ws` with `args.base`.
pub fn diff(ws: &Workspace, args: &Args) -> Result<Report> {
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

/// Run `diff` and render it: `(output, exit status)`.
pub fn execute(ws: &Workspace, args: &Args) -> Result<(String, u8)> {
    let report = diff(ws, args)?;
    Ok((
        report.render(args.format),
        report.exit_status(args.allow_breaking),
    ))
}

/// CLI entry point: prints the report, fails on a breaking change unless
/// `--allow-breaking`.
pub fn run(ws: &Workspace, args: &Args) -> Result<ExitCode> {
    let (output, status) = execute(ws, args)?;
    print!("{output}");
    Ok(ExitCode::from(status))
}

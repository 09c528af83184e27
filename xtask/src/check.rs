//! `cargo xtask check`: the generated files are up to date with the specs,
//! and the specs pass the [`lint`] rules.

use std::fmt;
use std::fs;
use std::process::ExitCode;

use similar::TextDiff;

use crate::Workspace;
use crate::codegen;
use crate::generate;
use crate::lint::{self, Finding};
use crate::specs::SpecConfig;

/// Arguments of `cargo xtask check`.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct Args {
    /// Only check these specs (by name); default: all.
    #[arg(long = "only", value_name = "NAME")]
    pub only: Vec<String>,
}

/// One problem found by `check`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Problem {
    /// The spec could not be read or parsed.
    Spec {
        /// Workspace-relative spec path.
        spec: String,
        /// The error.
        message: String,
    },
    /// progenitor could not generate code from the spec.
    Generation {
        /// The error (names the culprit operations).
        message: String,
    },
    /// The generated file on disk differs from what the spec generates.
    Stale {
        /// Workspace-relative path of the generated file.
        file: String,
        /// Unified diff from the file on disk to the fresh output.
        diff: String,
    },
    /// The generated file does not exist.
    Missing {
        /// Workspace-relative path of the generated file.
        file: String,
    },
    /// A lint finding.
    Lint(Finding),
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Problem::Spec { spec, message } => write!(f, "{spec}: {message}"),
            Problem::Generation { message } => f.write_str(message),
            Problem::Stale { file, diff } => write!(
                f,
                "{file} is out of date with its spec; run `cargo xtask generate`\n{diff}"
            ),
            Problem::Missing { file } => {
                write!(f, "{file} does not exist; run `cargo xtask generate`")
            }
            Problem::Lint(finding) => write!(f, "{finding}"),
        }
    }
}

/// Everything `check` found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Report {
    /// Problems, spec by spec: freshness first, then lint findings.
    pub problems: Vec<Problem>,
}

impl Report {
    /// True if nothing was found.
    pub fn is_clean(&self) -> bool {
        self.problems.is_empty()
    }
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for problem in &self.problems {
            writeln!(f, "{problem}")?;
        }
        Ok(())
    }
}

/// Unified diff between `old` (on disk) and `new` (freshly generated).
pub fn unified_diff(file: &str, old: &str, new: &str) -> String {
    TextDiff::from_lines(old, new)
        .unified_diff()
        .context_radius(3)
        .header(
            &format!("a/{file} (on disk)"),
            &format!("b/{file} (generated)"),
        )
        .to_string()
}

/// Check one spec: freshness of its generated file, then lint.
pub fn check_one(ws: &Workspace, config: &SpecConfig) -> Vec<Problem> {
    let mut problems = Vec::new();
    let path = ws.path(config.spec);
    let text = match fs::read_to_string(&path) {
        Ok(text) => text,
        Err(e) => {
            problems.push(Problem::Spec {
                spec: config.spec.to_owned(),
                message: format!("cannot read: {e}"),
            });
            return problems;
        }
    };
    let spec = match codegen::parse_spec(&text) {
        Ok(spec) => spec,
        Err(e) => {
            let version = serde_norway::from_str::<serde_norway::Value>(&text)
                .ok()
                .and_then(|v| v.get("openapi").and_then(|v| v.as_str().map(str::to_owned)));
            if let Some(finding) = lint::check_version(config.spec, version.as_deref()) {
                problems.push(Problem::Lint(finding));
            }
            problems.push(Problem::Spec {
                spec: config.spec.to_owned(),
                message: format!("does not parse as OpenAPI 3.0: {e:#}"),
            });
            return problems;
        }
    };
    match codegen::render(config, &spec) {
        Err(e) => problems.push(Problem::Generation {
            message: format!("{e:#}"),
        }),
        Ok(generated) => match fs::read_to_string(ws.path(config.output)) {
            Err(_) => problems.push(Problem::Missing {
                file: config.output.to_owned(),
            }),
            Ok(on_disk) if on_disk != generated.code => problems.push(Problem::Stale {
                file: config.output.to_owned(),
                diff: unified_diff(config.output, &on_disk, &generated.code),
            }),
            Ok(_) => {}
        },
    }
    // Lint reads the same text with the model every other tool shares; a
    // part that reader could not understand is a problem in our own specs.
    match crate::openapi::read(&text) {
        Ok(doc) => {
            for warning in &doc.warnings {
                problems.push(Problem::Spec {
                    spec: config.spec.to_owned(),
                    message: format!("not understood: {warning}"),
                });
            }
            problems.extend(lint::lint(config, &doc).into_iter().map(Problem::Lint));
        }
        Err(e) => problems.push(Problem::Spec {
            spec: config.spec.to_owned(),
            message: format!("cannot be read: {e}"),
        }),
    }
    problems
}

/// The SDK's field catalogue (SR-30) is what `generate` writes from its sources.
pub fn check_report_fields(ws: &Workspace) -> Vec<Problem> {
    use crate::report_fields::{OUTPUT, TABLE, render};
    match render(ws) {
        Err(e) => vec![Problem::Spec {
            spec: TABLE.to_owned(),
            message: format!("{e:#}"),
        }],
        Ok(code) => match fs::read_to_string(ws.path(OUTPUT)) {
            Err(_) => vec![Problem::Missing {
                file: OUTPUT.to_owned(),
            }],
            Ok(on_disk) if on_disk != code => vec![Problem::Stale {
                file: OUTPUT.to_owned(),
                diff: unified_diff(OUTPUT, &on_disk, &code),
            }],
            Ok(_) => vec![],
        },
    }
}

/// Check the selected specs (all when `args.only` is empty).
pub fn check(ws: &Workspace, args: &Args) -> anyhow::Result<Report> {
    let mut report = Report::default();
    for config in generate::select(&args.only)? {
        report.problems.extend(check_one(ws, config));
    }
    if args.only.is_empty() {
        report.problems.extend(check_report_fields(ws));
    }
    Ok(report)
}

/// CLI entry point: prints every problem, fails if there is any.
pub fn run(ws: &Workspace, args: &Args) -> anyhow::Result<ExitCode> {
    let report = check(ws, args)?;
    if report.is_clean() {
        println!("check: generated files are up to date and specs pass every lint rule");
        Ok(ExitCode::SUCCESS)
    } else {
        eprint!("{report}");
        eprintln!("check: {} problem(s)", report.problems.len());
        Ok(ExitCode::FAILURE)
    }
}

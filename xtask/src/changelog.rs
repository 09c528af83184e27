//! `cargo xtask changelog VERSION`: the notes of one release, cut from `CHANGELOG.md`.
//!
//! The release workflow (`.github/workflows/release.yml`) gives the tag (`v0.1.0`) and publishes
//! what this prints as the GitHub release's notes: the body of the section headed
//! `## [0.1.0] - YYYY-MM-DD` ([Keep a Changelog](https://keepachangelog.com/en/1.1.0/)), up to the
//! next `## ` heading or the link references at the end of the file. A section still headed
//! `Unreleased` is refused unless `--allow-unreleased` is given (to preview the notes): a release
//! carries its date.

use std::fmt;
use std::process::ExitCode;

use anyhow::Context as _;

use crate::Workspace;

/// The changelog, relative to the workspace root.
pub const CHANGELOG: &str = "CHANGELOG.md";

/// Arguments of `cargo xtask changelog`.
#[derive(Debug, Clone, clap::Args)]
pub struct Args {
    /// The version whose notes to print: the tag (`v0.1.0`) or the bare version (`0.1.0`).
    #[arg(value_name = "VERSION")]
    pub version: String,
    /// Accept a section still headed `Unreleased` (to preview its notes before the release).
    #[arg(long)]
    pub allow_unreleased: bool,
}

/// Why a version's notes could not be cut.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CutError {
    /// The argument is not a version (`MAJOR.MINOR.PATCH`, optionally `-PRERELEASE`, optionally
    /// after a `v`).
    NotAVersion(String),
    /// No `## [VERSION]` heading.
    NoSection(String),
    /// More than one `## [VERSION]` heading.
    TwoSections(String),
    /// The section has no text.
    Empty(String),
    /// The heading has no release date (`Unreleased`, or anything but ` - YYYY-MM-DD`).
    NoDate {
        /// The version.
        version: String,
        /// The heading as written.
        heading: String,
    },
}

impl fmt::Display for CutError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CutError::NotAVersion(v) => write!(
                f,
                "`{v}` is not a version: expected MAJOR.MINOR.PATCH (optionally -PRERELEASE), \
                 with or without a leading `v`"
            ),
            CutError::NoSection(v) => write!(f, "{CHANGELOG} has no section `## [{v}]`"),
            CutError::TwoSections(v) => {
                write!(f, "{CHANGELOG} has more than one section `## [{v}]`")
            }
            CutError::Empty(v) => write!(f, "the section `## [{v}]` of {CHANGELOG} is empty"),
            CutError::NoDate { version, heading } => write!(
                f,
                "the section of {version} has no release date (`{heading}`): head it \
                 `## [{version}] - YYYY-MM-DD` before tagging, or pass --allow-unreleased to preview"
            ),
        }
    }
}

impl std::error::Error for CutError {}

/// Prints the notes of `args.version` from the workspace's `CHANGELOG.md`.
pub fn run(ws: &Workspace, args: &Args) -> anyhow::Result<ExitCode> {
    let path = ws.path(CHANGELOG);
    let text =
        std::fs::read_to_string(&path).with_context(|| format!("reading {}", path.display()))?;
    let notes = cut(&text, &args.version, args.allow_unreleased)?;
    println!("{notes}");
    Ok(ExitCode::SUCCESS)
}

/// The body of the section of `version` (a tag such as `v0.1.0` or a bare version), without its
/// heading and without leading or trailing blank lines.
pub fn cut(text: &str, version: &str, allow_unreleased: bool) -> Result<String, CutError> {
    let version = bare_version(version)?;
    let lines: Vec<&str> = text.lines().collect();
    let starts: Vec<usize> = lines
        .iter()
        .enumerate()
        .filter(|(_, line)| heading_version(line) == Some(version))
        .map(|(i, _)| i)
        .collect();
    let start = match starts.as_slice() {
        [] => return Err(CutError::NoSection(version.to_owned())),
        [one] => *one,
        _ => return Err(CutError::TwoSections(version.to_owned())),
    };
    let heading = lines[start];
    if !allow_unreleased && !dated(heading, version) {
        return Err(CutError::NoDate {
            version: version.to_owned(),
            heading: heading.to_owned(),
        });
    }
    let body: Vec<&str> = lines[start + 1..]
        .iter()
        .take_while(|line| !line.starts_with("## ") && !is_link_reference(line))
        .copied()
        .collect();
    let first = body.iter().position(|l| !l.trim().is_empty());
    let last = body.iter().rposition(|l| !l.trim().is_empty());
    match (first, last) {
        (Some(first), Some(last)) => Ok(body[first..=last].join("\n")),
        _ => Err(CutError::Empty(version.to_owned())),
    }
}

/// `version` without a leading `v`, if it is `MAJOR.MINOR.PATCH[-PRERELEASE]`.
fn bare_version(version: &str) -> Result<&str, CutError> {
    let bare = version.strip_prefix('v').unwrap_or(version);
    let (core, pre) = match bare.split_once('-') {
        Some((core, pre)) => (core, Some(pre)),
        None => (bare, None),
    };
    let numbers: Vec<&str> = core.split('.').collect();
    let numbers_ok = numbers.len() == 3
        && numbers.iter().all(|n| {
            !n.is_empty()
                && n.bytes().all(|b| b.is_ascii_digit())
                && (n.len() == 1 || !n.starts_with('0'))
        });
    let pre_ok = pre.is_none_or(|p| {
        p.split('.').all(|part| {
            !part.is_empty() && part.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
        })
    });
    if numbers_ok && pre_ok {
        Ok(bare)
    } else {
        Err(CutError::NotAVersion(version.to_owned()))
    }
}

/// The version of a `## [VERSION]…` heading.
fn heading_version(line: &str) -> Option<&str> {
    let rest = line.strip_prefix("## [")?;
    let (version, _) = rest.split_once(']')?;
    Some(version)
}

/// Whether the heading is `## [VERSION] - YYYY-MM-DD`.
fn dated(heading: &str, version: &str) -> bool {
    let prefix = format!("## [{version}] - ");
    let Some(date) = heading.strip_prefix(&prefix) else {
        return false;
    };
    let bytes = date.trim_end().as_bytes();
    bytes.len() == 10
        && bytes.iter().enumerate().all(|(i, b)| match i {
            4 | 7 => *b == b'-',
            _ => b.is_ascii_digit(),
        })
}

/// A Markdown link reference definition at the start of a line (`[0.1.0]: https://…`), as Keep a
/// Changelog lists them at the end of the file.
fn is_link_reference(line: &str) -> bool {
    line.starts_with('[')
        && line
            .split_once("]:")
            .is_some_and(|(label, _)| !label.contains(']'))
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLE: &str = "# Changelog\n\
        \n\
        Intro text.\n\
        \n\
        ## [Unreleased]\n\
        \n\
        - not yet\n\
        \n\
        ## [0.2.0] - 2027-01-15\n\
        \n\
        ### Added\n\
        \n\
        - second\n\
        \n\
        ## [0.1.0] - 2026-12-01\n\
        \n\
        ### Added\n\
        \n\
        - first\n\
        - first, again\n\
        \n\
        [0.2.0]: https://example.com/compare/v0.1.0...v0.2.0\n\
        [0.1.0]: https://example.com/releases/v0.1.0\n";

    #[test]
    fn a_middle_section_ends_at_the_next_heading() {
        assert_eq!(
            cut(SAMPLE, "v0.2.0", false).unwrap(),
            "### Added\n\n- second"
        );
    }

    #[test]
    fn the_last_section_ends_before_the_link_references() {
        assert_eq!(
            cut(SAMPLE, "0.1.0", false).unwrap(),
            "### Added\n\n- first\n- first, again"
        );
    }

    #[test]
    fn a_version_without_a_section_is_named() {
        let err = cut(SAMPLE, "v0.3.0", false).unwrap_err();
        assert_eq!(err, CutError::NoSection("0.3.0".into()));
        assert!(err.to_string().contains("## [0.3.0]"), "{err}");
    }

    #[test]
    fn a_prefix_of_another_version_is_not_its_section() {
        let text = "## [0.1.10] - 2026-12-01\n\n- ten\n";
        assert_eq!(
            cut(text, "0.1.1", false).unwrap_err(),
            CutError::NoSection("0.1.1".into())
        );
    }

    #[test]
    fn an_unreleased_section_is_refused_unless_allowed() {
        let text = "## [0.1.0] - Unreleased\n\n### Added\n\n- first\n";
        let err = cut(text, "v0.1.0", false).unwrap_err();
        assert!(matches!(err, CutError::NoDate { .. }), "{err:?}");
        assert!(err.to_string().contains("--allow-unreleased"), "{err}");
        assert_eq!(cut(text, "v0.1.0", true).unwrap(), "### Added\n\n- first");
    }

    #[test]
    fn a_malformed_date_is_no_date() {
        for heading in [
            "## [0.1.0] - 2026-12",
            "## [0.1.0] - 2026/12/01",
            "## [0.1.0]",
        ] {
            let text = format!("{heading}\n\n- first\n");
            assert!(
                matches!(cut(&text, "0.1.0", false), Err(CutError::NoDate { .. })),
                "{heading}"
            );
        }
    }

    #[test]
    fn an_empty_or_doubled_section_is_an_error() {
        let empty = "## [0.1.0] - 2026-12-01\n\n\n## [0.0.9] - 2026-11-01\n- old\n";
        assert_eq!(
            cut(empty, "0.1.0", false).unwrap_err(),
            CutError::Empty("0.1.0".into())
        );
        let doubled = "## [0.1.0] - 2026-12-01\n- a\n## [0.1.0] - 2026-12-02\n- b\n";
        assert_eq!(
            cut(doubled, "0.1.0", false).unwrap_err(),
            CutError::TwoSections("0.1.0".into())
        );
    }

    #[test]
    fn only_versions_are_accepted() {
        for bad in [
            "",
            "v",
            "0.1",
            "0.1.0.0",
            "01.0.0",
            "0.1.x",
            "v0.1.0-",
            "0.1.0-a..b",
            "latest",
        ] {
            assert_eq!(
                cut(SAMPLE, bad, true).unwrap_err(),
                CutError::NotAVersion(bad.into()),
                "{bad}"
            );
        }
        let pre = "## [1.0.0-rc.1] - 2027-02-01\n\n- candidate\n";
        assert_eq!(cut(pre, "v1.0.0-rc.1", false).unwrap(), "- candidate");
    }

    #[test]
    fn the_workspace_changelog_has_the_sdks_version() {
        let ws = Workspace::from_manifest_dir();
        let text = std::fs::read_to_string(ws.path(CHANGELOG)).unwrap();
        let manifest =
            std::fs::read_to_string(ws.path("crates/sa360-video-sdk/Cargo.toml")).unwrap();
        let version = manifest
            .lines()
            .find_map(|l| l.strip_prefix("version = \""))
            .and_then(|v| v.strip_suffix('"'))
            .expect("the SDK's version line");
        let notes = cut(&text, version, true).unwrap();
        assert!(notes.contains("### "), "{notes}");
        assert!(!notes.contains("\n## "), "{notes}");
    }
}

//! The figures table of `crates/bench/README.md`: written by a complete run between the markers,
//! replacing whatever an older run left, and checked against the scenarios' definitions.

use std::path::{Path, PathBuf};

use anyhow::{Context as _, Result, bail};

use super::scenarios::Scenario;

/// The line before the table.
pub const START: &str = "<!-- bench-table:start -->";
/// The line after the table.
pub const END: &str = "<!-- bench-table:end -->";

/// `crates/bench/README.md` of `workspace`.
pub fn path(workspace: &Path) -> PathBuf {
    workspace.join("crates").join("bench").join("README.md")
}

/// `text` with everything between the markers replaced by `table`.
pub fn replace_table(text: &str, table: &str) -> Result<String> {
    let (Some(start), Some(end)) = (text.find(START), text.find(END)) else {
        bail!("the README has no `{START}` … `{END}` markers");
    };
    if end < start {
        bail!("the README's `{END}` comes before `{START}`");
    }
    let before = &text[..start + START.len()];
    let after = &text[end..];
    Ok(format!("{before}\n{}\n{after}", table.trim_end()))
}

/// Writes `table` between the markers of the README at `path`.
pub fn write(path: &Path, table: &str) -> Result<()> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    let text = replace_table(&text, table)?;
    std::fs::write(path, text).with_context(|| format!("writing {}", path.display()))
}

/// The `(scenario name, fingerprint)` of every row between the markers.
pub fn recorded_rows(text: &str) -> Vec<(String, String)> {
    let inside = text
        .split_once(START)
        .and_then(|(_, rest)| rest.split_once(END))
        .map_or("", |(inside, _)| inside);
    inside
        .lines()
        .filter(|l| l.starts_with('|'))
        .filter_map(|l| {
            let last = l
                .trim_end()
                .trim_end_matches('|')
                .rsplit('|')
                .next()?
                .trim();
            let (name, hash) = last.strip_prefix('`')?.split_once("` ")?;
            Some((name.to_owned(), hash.trim().to_owned()))
        })
        .collect()
}

/// What is wrong with the README's rows against the current definitions (empty: nothing).
pub fn stale_rows(text: &str) -> Vec<String> {
    let rows = recorded_rows(text);
    let mut problems = Vec::new();
    for scenario in Scenario::ALL {
        let name = scenario.name();
        match rows.iter().find(|(n, _)| n == name) {
            None => problems.push(format!("`{name}` has no row")),
            Some((_, hash)) if *hash != scenario.fingerprint() => problems.push(format!(
                "`{name}`'s row is from another definition ({hash}, now {})",
                scenario.fingerprint()
            )),
            Some(_) => {}
        }
    }
    for (name, _) in &rows {
        if !Scenario::ALL.iter().any(|s| s.name() == name) {
            problems.push(format!("`{name}` is no scenario any more"));
        }
    }
    problems
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The README's table comes from a run of the current scenarios: change a scenario's
    /// question, sides, parameters or target, and this fails until `cargo xtask bench` ran again.
    #[test]
    fn the_readme_rows_are_from_the_current_definitions() {
        let path = path(Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../..")));
        let text = std::fs::read_to_string(&path).unwrap_or_default();
        let problems = stale_rows(&text);
        assert!(
            problems.is_empty(),
            "{}: {}; run `cargo xtask bench` and commit its table",
            path.display(),
            problems.join("; ")
        );
    }

    #[test]
    fn the_table_is_replaced_whole() {
        let text = format!("# t\n\n{START}\nold row\n{END}\n\nafter\n");
        let new = replace_table(&text, "| a | `read` 0123 |\n").unwrap();
        assert_eq!(
            new,
            format!("# t\n\n{START}\n| a | `read` 0123 |\n{END}\n\nafter\n")
        );
        assert_eq!(
            recorded_rows(&new),
            vec![("read".to_owned(), "0123".to_owned())]
        );
        assert!(replace_table("no markers", "x").is_err());
    }

    #[test]
    fn a_changed_definition_is_found() {
        let rows: String = Scenario::ALL
            .iter()
            .map(|s| format!("| x | `{}` {} |\n", s.name(), s.fingerprint()))
            .collect();
        let text = format!("{START}\n{rows}{END}\n");
        assert!(stale_rows(&text).is_empty());
        let changed = text.replacen(&Scenario::Report.fingerprint(), "0000000000000000", 1);
        assert_eq!(stale_rows(&changed).len(), 1, "{changed}");
        let missing = text.replacen("`logins`", "`gone`", 1);
        assert_eq!(stale_rows(&missing).len(), 2);
    }
}

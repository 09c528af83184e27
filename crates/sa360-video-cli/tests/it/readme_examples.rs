//! Every console example of the READMEs (`README.md`, `crates/sa360-video-cli/README.md`) runs
//! against `apictl sandbox` and prints what the README shows, with the status it shows (issue 50).
//!
//! A ```` ```console ```` block is a transcript: `$ ` lines are commands (a command whose quotes
//! are open goes on to the next lines), the lines after one are its output (stdout and stderr), a
//! line `...` stands for any lines. A command exits 0 unless the next command is `echo $?`, whose
//! output is the status. Before comparing, both sides have their varying parts replaced: ports,
//! times, dates, durations in seconds, the home directory. A block that cannot run against the
//! sandbox (a Redis server, a password prompt, dates that move) has `<!-- not run: REASON -->` on
//! the line before it; the test lists those.

use std::collections::HashMap;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use crate::common;

use common::Apictl;

/// One console block.
#[derive(Debug)]
struct Example {
    /// `FILE:LINE` of its fence.
    at: String,
    /// The reason it is not run, if tagged so.
    not_run: Option<String>,
    steps: Vec<Step>,
}

/// A command and the output the README shows for it.
#[derive(Debug)]
struct Step {
    /// `FILE:LINE` of its `$ ` line.
    at: String,
    command: String,
    output: Vec<String>,
    /// From a following `echo $?`.
    status: i32,
}

fn examples(path: &Path, name: &str) -> Vec<Example> {
    let text = std::fs::read_to_string(path).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        if lines[i].trim() != "```console" {
            i += 1;
            continue;
        }
        let not_run = i
            .checked_sub(1)
            .and_then(|p| lines[p].trim().strip_prefix("<!-- not run:"))
            .map(|r| r.trim_end_matches("-->").trim().to_owned());
        let at = format!("{name}:{}", i + 1);
        // A block inside a list item is indented as its fence is.
        let indent = lines[i].len() - lines[i].trim_start().len();
        i += 1;
        let mut steps: Vec<Step> = Vec::new();
        while i < lines.len() && lines[i].trim() != "```" {
            let line = lines[i].get(indent..).unwrap_or(lines[i].trim_start());
            i += 1;
            let step_at = format!("{name}:{i}");
            let Some(first) = line.strip_prefix("$ ") else {
                let step = steps
                    .last_mut()
                    .unwrap_or_else(|| panic!("{at}: output before a command"));
                step.output.push(line.to_owned());
                continue;
            };
            let mut command = first.to_owned();
            while open_quote(&command) && i < lines.len() {
                command.push('\n');
                command.push_str(lines[i]);
                i += 1;
            }
            if command.trim() == "echo $?" {
                let step = steps.last_mut().expect("echo $? after a command");
                let shown = lines[i].trim();
                step.status = shown
                    .parse()
                    .unwrap_or_else(|_| panic!("{at}: echo $? shows {shown:?}"));
                i += 1;
                continue;
            }
            steps.push(Step {
                at: step_at,
                command,
                output: Vec::new(),
                status: 0,
            });
        }
        out.push(Example { at, not_run, steps });
    }
    out
}

/// True when `text` has an open single or double quote (as a POSIX shell reads it).
fn open_quote(text: &str) -> bool {
    let mut quote = None;
    for c in text.chars() {
        match (quote, c) {
            (None, '\'' | '"') => quote = Some(c),
            (Some(q), c) if c == q => quote = None,
            _ => {}
        }
    }
    quote.is_some()
}

/// The text with what varies from run to run replaced.
fn normalize(text: &str, home: &str) -> String {
    let rules = [
        (r"127\.0\.0\.1:\d+", "127.0.0.1:PORT"),
        (r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z", "TIME"),
        (r"\d{4}-\d{2}-\d{2}", "DATE"),
        (r"\b\d+(\.\d+)? s\b", "N s"),
    ];
    let mut text = text.replace(home, "~");
    for (pattern, with) in rules {
        text = regex::Regex::new(pattern)
            .unwrap()
            .replace_all(&text, with)
            .into_owned();
    }
    text
}

/// Whether `actual` matches `expected`, where a line `...` stands for any lines.
fn matches(expected: &[String], actual: &[String]) -> bool {
    match expected.split_first() {
        None => actual.is_empty(),
        Some((first, rest)) if first.trim() == "..." => {
            (0..=actual.len()).any(|skip| matches(rest, &actual[skip..]))
        }
        Some((first, rest)) => actual
            .split_first()
            .is_some_and(|(a, more)| a.trim_end() == first.trim_end() && matches(rest, more)),
    }
}

/// Kills the sandbox when the test ends, pass or fail.
struct Sandbox(Child);

impl Drop for Sandbox {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts `apictl sandbox`; returns it and the settings it printed.
fn sandbox(base: &Apictl) -> (Sandbox, HashMap<String, String>) {
    let mut child = base
        .command(&["sandbox"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn the sandbox");
    let stdout = child.stdout.take().expect("stdout");
    let sandbox = Sandbox(child);
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let mut vars = HashMap::new();
    while vars.len() < 13 {
        let line = rx
            .recv_timeout(Duration::from_secs(30))
            .expect("the sandbox printed its settings");
        let (name, value) = line.split_once('=').expect("NAME=value");
        vars.insert(name.to_owned(), value.trim_matches('\'').to_owned());
    }
    (sandbox, vars)
}

#[test]
fn every_readme_console_example_prints_what_it_shows_against_the_sandbox() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut all = examples(&root.join("README.md"), "README.md");
    all.extend(examples(
        &root.join("crates/sa360-video-cli/README.md"),
        "crates/sa360-video-cli/README.md",
    ));
    let base = Apictl::new();
    let (_sandbox, vars) = sandbox(&base);
    // The examples' relative paths name the workspace's files: the sample is where they say.
    let sample = base.dir().join("crates/sa360-video-cli/data");
    std::fs::create_dir_all(&sample).unwrap();
    std::fs::copy(common::sample_csv(), sample.join("sample-conversions.csv")).unwrap();
    let bin: PathBuf = Path::new(env!("CARGO_BIN_EXE_apictl"))
        .parent()
        .unwrap()
        .into();
    let home = base.dir().join("home").display().to_string();
    let (mut ran, mut drift) = (0, Vec::new());
    for example in &all {
        if let Some(reason) = &example.not_run {
            assert!(
                !reason.is_empty(),
                "{}: not run, but says no reason",
                example.at
            );
            println!("not run: {} ({reason})", example.at);
            continue;
        }
        for step in &example.steps {
            let mut cmd = Command::new("timeout");
            cmd.args(["120", "sh", "-c"])
                .arg(format!("{} 2>&1", step.command));
            let template = base.command(&[]);
            cmd.env_clear()
                .envs(template.get_envs().filter_map(|(k, v)| Some((k, v?))))
                .envs(&vars)
                .env("PATH", format!("{}:/usr/bin:/bin", bin.display()))
                .current_dir(base.dir())
                .stdin(Stdio::null());
            let out = cmd.output().expect("run sh");
            let status = out.status.code().unwrap_or(-1);
            let actual = normalize(&String::from_utf8_lossy(&out.stdout), &home);
            let actual: Vec<String> = actual.lines().map(str::to_owned).collect();
            let expected: Vec<String> = step.output.iter().map(|l| normalize(l, &home)).collect();
            ran += 1;
            println!(
                "run: {} $ {}",
                step.at,
                step.command.lines().next().unwrap_or("")
            );
            if status != step.status || !matches(&expected, &actual) {
                drift.push(format!(
                    "{}: $ {}\n--- the README shows (status {})\n{}\n--- it printed (status {status})\n{}",
                    step.at,
                    step.command,
                    step.status,
                    expected.join("\n"),
                    actual.join("\n")
                ));
            }
        }
    }
    println!("{ran} commands run");
    assert!(ran >= 10, "only {ran} commands run");
    assert!(
        drift.is_empty(),
        "README examples drifted:\n\n{}",
        drift.join("\n\n")
    );
}

#[test]
fn the_example_reader_sees_commands_statuses_and_tags() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("r.md");
    std::fs::write(
        &path,
        "```console\n$ apictl a \"b,\n    c\"\nout\n$ echo $?\n3\n```\n<!-- not run: needs Redis -->\n```console\n$ x\n```\n",
    )
    .unwrap();
    let found = examples(&path, "r.md");
    assert_eq!(found.len(), 2);
    assert_eq!(found[0].steps[0].command, "apictl a \"b,\n    c\"");
    assert_eq!(found[0].steps[0].output, ["out"]);
    assert_eq!(found[0].steps[0].status, 3);
    assert_eq!(found[1].not_run.as_deref(), Some("needs Redis"));
    let lines = |t: &str| t.lines().map(str::to_owned).collect::<Vec<_>>();
    assert!(matches(&lines("a\n...\nd"), &lines("a\nb\nc\nd")));
    assert!(!matches(&lines("a\nd"), &lines("a\nb\nd")));
    assert_eq!(
        normalize("at 2026-11-21T06:17:50Z (in 660 s) on 127.0.0.1:4000", "/h"),
        "at TIME (in N s) on 127.0.0.1:PORT"
    );
}

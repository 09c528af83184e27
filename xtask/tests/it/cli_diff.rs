//! The `cargo xtask diff` binary's exit status on a temporary clone of this
//! repository (only its `HEAD` is used; the checkout is never touched).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use test_support::git::{clone_head, git};

fn xtask(root: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_xtask"))
        .arg("--root")
        .arg(root)
        .args(args)
        .output()
        .expect("xtask runs")
}

fn clone(into: &Path) -> PathBuf {
    clone_head(Path::new(env!("CARGO_MANIFEST_DIR")), into)
}

#[test]
fn exit_status_follows_breaking_changes() {
    let tmp = tempfile::tempdir().unwrap();
    let repo = clone(tmp.path());
    let base = git(&repo, &["rev-parse", "HEAD"]);

    let out = xtask(&repo, &["diff"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );

    // Narrow the video spec's InvitationType enum (used in a request).
    let path = repo.join("specs/video-session.yaml");
    let mut doc: serde_norway::Value =
        serde_norway::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let values = doc["components"]["schemas"]["InvitationType"]["enum"]
        .as_sequence_mut()
        .unwrap();
    let dropped = values.pop().unwrap();
    std::fs::write(&path, serde_norway::to_string(&doc).unwrap()).unwrap();

    let out = xtask(&repo, &["diff", "--base", &base, "--format", "markdown"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(
        stdout.contains(&format!(
            "`InvitationType`: enum values removed: {}",
            dropped.as_i64().unwrap()
        )),
        "{stdout}"
    );
    assert!(stdout.contains("`enum-narrowed`"), "{stdout}");

    let out = xtask(&repo, &["diff", "--base", &base, "--allow-breaking"]);
    assert_eq!(out.status.code(), Some(0));

    // Could not compare: exit status 2, never 1.
    let out = xtask(&repo, &["diff", "--base", "not-a-rev"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("is not a commit"));

    // A pair: the committed spec (REV:PATH) against the edited file.
    let out = xtask(
        &repo,
        &[
            "diff",
            "--old",
            &format!("{base}:specs/video-session.yaml"),
            "--new",
            "specs/video-session.yaml",
        ],
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(stdout.contains("enum values removed"), "{stdout}");
}

/// Writes `text` to `dir/name` and returns the path as a string.
fn write(dir: &Path, name: &str, text: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path.to_string_lossy().into_owned()
}

const PAIR_BASE: &str = r##"
openapi: 3.0.3
info: {title: t, version: "1"}
paths:
  /things:
    post:
      operationId: addThing
      requestBody:
        content: {application/json: {schema: {$ref: "#/components/schemas/Kind"}}}
      responses:
        "200": {description: ok, content: {application/json: {schema: {$ref: "#/components/schemas/Size"}}}}
components:
  schemas:
    Kind: {type: string, enum: [a, b]}
    Size: {type: number}
"##;

#[test]
fn exit_codes_for_any_pair_and_fail_on() {
    let tmp = tempfile::tempdir().unwrap();
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let base = write(tmp.path(), "base.yaml", PAIR_BASE);
    let run = |new_text: &str, extra: &[&str]| {
        let new = write(tmp.path(), "new.yaml", new_text);
        let mut args = vec!["diff", "--old", &base, "--new", &new];
        args.extend_from_slice(extra);
        let out = xtask(root, &args);
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
        )
    };
    // Identical: 0.
    assert_eq!(run(PAIR_BASE, &[]).0, Some(0));
    // Response number → integer: breaking for servers only.
    let narrowed = PAIR_BASE.replace("Size: {type: number}", "Size: {type: integer}");
    let (code, out) = run(&narrowed, &[]);
    assert_eq!(code, Some(1), "{out}");
    assert!(
        out.contains("breaking for servers") && out.contains("(type-narrowed)"),
        "{out}"
    );
    assert_eq!(run(&narrowed, &["--fail-on", "wire-clients"]).0, Some(0));
    assert_eq!(run(&narrowed, &["--fail-on", "wire-servers"]).0, Some(1));
    assert_eq!(
        run(
            &narrowed,
            &["--fail-on", "wire-clients", "--allow-breaking"]
        )
        .0,
        Some(0)
    );
    // Request enum value removed: breaking for clients.
    let enum_cut = PAIR_BASE.replace("enum: [a, b]", "enum: [a]");
    assert_eq!(run(&enum_cut, &["--fail-on", "wire-clients"]).0, Some(1));
    assert_eq!(run(&enum_cut, &["--fail-on", "wire-servers"]).0, Some(0));
    // The Rust type of `Size` changes from f64 to i64: the rust-api verdict
    // breaks too.
    let (code, out) = run(&narrowed, &["--fail-on", "rust-api"]);
    assert_eq!(code, Some(1), "{out}");
    assert!(out.contains("rust-api: breaks code using"), "{out}");
    // Nothing breaks on the wire when only an operationId is renamed, but
    // the generated method is renamed: only `--fail-on rust-api|any` fails.
    let renamed = PAIR_BASE.replace("operationId: addThing", "operationId: createThing");
    let (code, out) = run(&renamed, &[]);
    assert_eq!(code, Some(0), "{out}");
    assert!(out.contains("removed method `Client::add_thing`"), "{out}");
    assert_eq!(run(&renamed, &["--fail-on", "rust-api"]).0, Some(1));
    assert_eq!(run(&renamed, &["--fail-on", "any"]).0, Some(1));
    // A document with unreadable parts is still compared (0 refusals); the
    // parts are listed with their pointers.
    let odd = PAIR_BASE.replace(
        "    post:\n",
        "    get:\n      parameters: [{name: q, in: body}]\n      responses: {}\n    post:\n",
    );
    let (code, out) = run(&odd, &[]);
    assert_eq!(code, Some(0), "{out}");
    assert!(
        out.contains("new #/paths/~1things/get/parameters/0: parameter cannot be read"),
        "{out}"
    );
    // Not a document at all, or no such file: 2.
    assert_eq!(run("- just\n- a list\n", &[]).0, Some(2));
    let out = xtask(
        root,
        &["diff", "--old", &base, "--new", "/nonexistent/x.yaml"],
    );
    assert_eq!(out.status.code(), Some(2));
    // Bad arguments (clap): 2.
    let out = xtask(root, &["diff", "--old", &base]);
    assert_eq!(out.status.code(), Some(2));
    // The comment body: marker first, then the Markdown report.
    let (code, out) = run(&narrowed, &["--format", "markdown", "--comment"]);
    assert_eq!(code, Some(1));
    assert!(
        out.starts_with(
            "<!-- xtask-spec-review -->\n## Spec changes: 1 breaking change on the wire"
        ),
        "{out}"
    );
    assert_eq!(
        run(&narrowed, &["--comment"]).0,
        Some(2),
        "--comment needs markdown"
    );
}

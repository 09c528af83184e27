//! The `cargo xtask diff` binary's exit status on a temporary clone of this
//! repository (only its `HEAD` is used; the checkout is never touched).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args([
            "-c",
            "user.name=cli test",
            "-c",
            "user.email=cli-test@example.invalid",
        ])
        .args(["-c", "commit.gpgsign=false"])
        .args(args)
        .output()
        .expect("git runs");
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

fn xtask(root: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_xtask"))
        .arg("--root")
        .arg(root)
        .args(args)
        .output()
        .expect("xtask runs")
}

fn clone(into: &Path) -> PathBuf {
    let toplevel = git(
        Path::new(env!("CARGO_MANIFEST_DIR")),
        &["rev-parse", "--show-toplevel"],
    );
    let repo = into.join("repo");
    git(
        into,
        &["clone", "--quiet", "--no-hardlinks", &toplevel, "repo"],
    );
    git(&repo, &["checkout", "--quiet", "-B", "main"]);
    repo
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
    let mut doc: serde_yaml::Value =
        serde_yaml::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let values = doc["components"]["schemas"]["InvitationType"]["enum"]
        .as_sequence_mut()
        .unwrap();
    let dropped = values.pop().unwrap();
    std::fs::write(&path, serde_yaml::to_string(&doc).unwrap()).unwrap();

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

    let out = xtask(&repo, &["diff", "--base", "not-a-rev"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("is not a commit"));
}

//! Git in a test: commands that must succeed, and a throw-away clone of this repository's `HEAD`
//! (the real checkout is never touched).

use std::path::{Path, PathBuf};
use std::process::Command;

/// Runs `git -C dir args...` with a fixed test identity and no signing; returns its trimmed
/// standard output. Panics, with git's standard error, when git fails.
pub fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args([
            "-c",
            "user.name=workspace test",
            "-c",
            "user.email=workspace-test@example.invalid",
            "-c",
            "commit.gpgsign=false",
        ])
        .args(args)
        .output()
        .expect("git runs");
    assert!(
        out.status.success(),
        "git {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

/// Clones the repository that contains `inside` into `into/repo` (only its `HEAD` is used) and
/// names its `HEAD` branch `main` whatever the source's is (a branch, or detached in CI).
pub fn clone_head(inside: &Path, into: &Path) -> PathBuf {
    let toplevel = git(inside, &["rev-parse", "--show-toplevel"]);
    git(
        into,
        &["clone", "--quiet", "--no-hardlinks", &toplevel, "repo"],
    );
    let repo = into.join("repo");
    git(&repo, &["checkout", "--quiet", "-B", "main"]);
    repo
}

//! Runs the `apictl` binary with a clean environment, against fakes started
//! in the test process.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

use sa360_video_fakes::FakeServices;

/// What a run of the binary produced.
#[derive(Debug)]
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Run {
    /// Panics with both streams unless the exit status is `code`.
    #[track_caller]
    pub fn expect(&self, code: i32) -> &Self {
        assert_eq!(
            self.code, code,
            "exit status {} (expected {code})\n--- stdout\n{}\n--- stderr\n{}",
            self.code, self.stdout, self.stderr
        );
        self
    }
}

/// The binary with an empty environment except for a private HOME, state
/// directory and temp directory, plus whatever the test adds.
#[derive(Debug)]
pub struct Apictl {
    dir: tempfile::TempDir,
    env: Vec<(String, String)>,
}

impl Apictl {
    pub fn new() -> Self {
        let dir = tempfile::tempdir().expect("temp dir");
        let home = dir.path().join("home");
        std::fs::create_dir_all(&home).expect("home");
        let env = vec![
            ("HOME".to_owned(), home.display().to_string()),
            (
                "APICTL_STATE_DIR".to_owned(),
                dir.path().join("state").display().to_string(),
            ),
            ("COLUMNS".to_owned(), "100".to_owned()),
        ];
        Self { dir, env }
    }

    /// With the connection settings of `services` in the environment, as
    /// `apictl sandbox` prints them.
    pub fn with_fakes(services: &FakeServices) -> Self {
        let mut me = Self::new();
        for (name, value) in services.env_vars() {
            me = me.env(name, value);
        }
        me
    }

    pub fn env(mut self, name: &str, value: impl Into<String>) -> Self {
        self.env.retain(|(n, _)| n != name);
        self.env.push((name.to_owned(), value.into()));
        self
    }

    /// The same private directory and environment without `VIDEO_PASSWORD`.
    pub fn clone_without_password(&self) -> ApictlView<'_> {
        ApictlView { inner: self }
    }

    pub fn without(mut self, name: &str) -> Self {
        self.env.retain(|(n, _)| n != name);
        self
    }

    /// The test's private directory.
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// The per-user lockout file the binary (and any application of the
    /// same user) uses by default: `$HOME/.local/state/sa360-video-sdk/...` with the
    /// private HOME and no `XDG_STATE_HOME`.
    pub fn lockout_path(&self) -> PathBuf {
        self.dir
            .path()
            .join("home/.local/state/sa360-video-sdk/video-session-lockout.json")
    }

    /// The state directory the binary uses.
    pub fn state_dir(&self) -> PathBuf {
        self.dir.path().join("state")
    }

    /// The command, not yet run.
    pub fn command(&self, args: &[&str]) -> Command {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_apictl"));
        cmd.env_clear()
            .envs(self.env.iter().map(|(k, v)| (k, v)))
            .env("TMPDIR", self.dir.path())
            .current_dir(self.dir.path())
            .args(args);
        cmd
    }

    /// Runs synchronously (for tests without fakes).
    pub fn run_sync(&self, args: &[&str]) -> Run {
        Run::of(self.command(args).output().expect("run apictl"))
    }

    /// Runs on a blocking thread, so fakes on this runtime keep serving.
    pub async fn run(&self, args: &[&str]) -> Run {
        self.run_with(args, &[]).await
    }

    /// Runs with extra environment variables.
    pub async fn run_with(&self, args: &[&str], extra: &[(&str, &str)]) -> Run {
        let mut cmd = self.command(args);
        for (k, v) in extra {
            cmd.env(k, v);
        }
        run_blocking(cmd).await
    }
}

/// A borrowed `Apictl` that runs without `VIDEO_PASSWORD`.
pub struct ApictlView<'a> {
    inner: &'a Apictl,
}

impl ApictlView<'_> {
    pub async fn run(&self, args: &[&str]) -> Run {
        let mut cmd = self.inner.command(args);
        cmd.env_remove("VIDEO_PASSWORD");
        run_blocking(cmd).await
    }
}

impl Run {
    /// What a finished `apictl` left: its exit code (-1 when a signal ended it) and its output.
    fn of(output: std::process::Output) -> Run {
        Run {
            code: output.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        }
    }
}

/// Runs `cmd` to its end on a blocking thread, so fakes on this runtime keep serving.
async fn run_blocking(mut cmd: Command) -> Run {
    let output = tokio::task::spawn_blocking(move || cmd.output())
        .await
        .expect("join")
        .expect("run apictl");
    Run::of(output)
}

/// True when the upload journal at `path` records a finished upload (its
/// last line is `finished at=…`).
pub fn finished(path: &Path) -> bool {
    std::fs::read_to_string(path).is_ok_and(|text| {
        text.lines()
            .last()
            .is_some_and(|l| l.starts_with("finished at="))
    })
}

/// True when there is a journal at `path` of an upload that did not finish.
pub fn unfinished(path: &Path) -> bool {
    path.exists() && !finished(path)
}

/// The sample conversions shipped with the CLI.
pub fn sample_csv() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("data/sample-conversions.csv")
}

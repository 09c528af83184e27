//! `apictl` against a hostile server (`test_support::HostileServer`, the one
//! the SDK's hostile test uses): every `apictl ads` command, `apictl video
//! login` and `apictl video invite` face a 10 GiB body (announced, and endless), a body of
//! one byte per second, an HTML 200 and an empty 200. Each run ends with exit
//! 1 or 2, a message that says what happened and a hint that names a flag, in
//! bounded time (killed otherwise), with the child's own peak memory within
//! 64 MiB of a baseline run, and without leaving a file behind. Limits out of
//! range are refused before sending. The commands of one answer run at once, each with a state
//! and working directory of its own (99 s one after the other, 19 s this way).
//!
//! A test binary of its own, not a module of `tests/it`: the child's peak comes from `wait4`'s
//! `ru_maxrss`, and on Linux a spawned child starts with its parent's high-water mark (it shares the
//! parent's memory until `exec`), so tests running beside it in one process would raise every
//! figure it measures.

mod common;

use std::time::Duration;

use common::Apictl;
use test_support::{Answer, HostileServer, run_measured};

fn apictl(url: &str) -> Apictl {
    Apictl::new()
        .env("SEARCH_ADS_URL", url)
        .env("SEARCH_ADS_TOKEN", "t")
        .env("SEARCH_ADS_AGENCY_ID", "1")
        .env("SEARCH_ADS_ADVERTISER_ID", "2")
}

fn hostile(answer: Answer) -> String {
    HostileServer::start(answer).url()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_answer_over_max_body_names_the_flag() {
    let apictl = apictl(&hostile(Answer::AnnouncedHuge));
    let run = apictl
        .run(&["ads", "saved-columns", "--max-body", "4096"])
        .await;
    run.expect(1);
    assert!(
        run.stderr
            .contains("the answer is larger than the limit of 4096 bytes"),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains("announced 10737418240 bytes"),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains("hint: raise --max-body"),
        "{}",
        run.stderr
    );
    assert!(!run.stderr.contains("HttpOptions"), "{}", run.stderr);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_trickle_ends_at_the_stall_timeout_and_names_the_flag() {
    let apictl = apictl(&hostile(Answer::Trickle));
    let run = apictl
        .run(&["ads", "saved-columns", "--stall-timeout", "2"])
        .await;
    run.expect(1);
    assert!(run.stderr.contains("the answer stalled"), "{}", run.stderr);
    assert!(run.stderr.contains("in 2 s"), "{}", run.stderr);
    assert!(
        run.stderr
            .contains("hint: try again later, or raise --stall-timeout"),
        "{}",
        run.stderr
    );
}

#[tokio::test]
async fn limits_out_of_range_are_refused_before_sending() {
    // Nothing listens here: a request would fail differently.
    let apictl = apictl("http://127.0.0.1:9");
    for (flag, value, hint) in [
        ("--timeout", "0", "from 1 to 86400"),
        ("--deadline", "0", "from 1 to 86400"),
        ("--stall-timeout", "100000", "from 1 to 86400"),
        ("--max-body", "10", "at least 1024 bytes"),
        ("--max-download", "0", "at least 1024 bytes"),
    ] {
        let run = apictl.run(&["ads", "saved-columns", flag, value]).await;
        run.expect(4);
        assert!(run.stderr.contains(flag), "{flag}: {}", run.stderr);
        assert!(run.stderr.contains(hint), "{flag}: {}", run.stderr);
    }
}

/// The stall timeout of every run, in seconds.
const STALL_SECS: u64 = 2;

/// The overall deadline of every `apictl ads` run, in seconds.
const DEADLINE_SECS: u64 = 30;

/// A run that takes longer than this is killed and fails the test.
const TIME_LIMIT: Duration = Duration::from_secs(60);

/// Every command, as arguments after `apictl`, with the limits on.
fn commands(dir: &std::path::Path) -> Vec<(&'static str, Vec<String>)> {
    let upload = dir.join("upload.csv");
    std::fs::write(
        &upload,
        "conversionId,conversionTimestamp,segmentationType,segmentationId,agencyId,advertiserId,engineAccountId\n\
         c-1,2024-06-01T09:15:00Z,FLOODLIGHT,551234,1,2,3\n",
    )
    .expect("an input file");
    let out = |name: &str| dir.join(name).display().to_string();
    // Inside the Reporting API's 60-day window, so the request is sent.
    let today = chrono::Utc::now().date_naive().to_string();
    let limits = [
        "--max-body",
        "65536",
        "--max-download",
        "1048576",
        "--stall-timeout",
        "2",
        "--deadline",
        "30", // DEADLINE_SECS
    ];
    let ads = |args: &[&str]| -> Vec<String> {
        ["ads"]
            .iter()
            .chain(args)
            .chain(limits.iter())
            .map(|s| (*s).to_owned())
            .collect()
    };
    vec![
        (
            "conversions list (v2)",
            ads(&[
                "conversions",
                "list",
                "--api",
                "v2",
                "--from",
                "2024-06-01",
                "--to",
                "2024-06-01",
                "-o",
                &out("list-v2.jsonl"),
            ]),
        ),
        (
            "conversions list (reporting)",
            ads(&[
                "conversions",
                "list",
                "--api",
                "reporting",
                "--from",
                &today,
                "--to",
                &today,
                "-o",
                &out("list-reporting.jsonl"),
            ]),
        ),
        ("customers", ads(&["customers"])),
        (
            "conversions upload",
            ads(&[
                "conversions",
                "upload",
                &upload.display().to_string(),
                "--rejected",
                &out("upload.rejected.csv"),
            ]),
        ),
        (
            "availability",
            ads(&[
                "availability",
                "--segmentation-id",
                "551234",
                "--until",
                "2024-06-02T00:00:00Z",
            ]),
        ),
        (
            "id-mapping",
            ads(&["id-mapping", "-o", &out("mapping.csv")]),
        ),
        ("saved-columns", ads(&["saved-columns"])),
        (
            "video login",
            [
                "video",
                "login",
                "--max-body",
                "65536",
                "--stall-timeout",
                "2",
            ]
            .map(str::to_owned)
            .to_vec(),
        ),
        (
            "video invite",
            [
                "video",
                "invite",
                "--session",
                "s1",
                "--email",
                "guest@example.com",
                "--max-body",
                "65536",
                "--stall-timeout",
                "2",
            ]
            .map(str::to_owned)
            .to_vec(),
        ),
    ]
}

/// What the run's stderr must say for `answer`.
fn check(command: &str, answer: Answer, stderr: &str) {
    let has = |text: &str| {
        assert!(
            stderr.contains(text),
            "{command} {answer:?}: no {text:?} in\n{stderr}"
        );
    };
    match answer {
        Answer::AnnouncedHuge | Answer::Endless => {
            has("larger than the limit of");
            if command == "id-mapping" {
                has("1048576 bytes");
                has("hint: raise --max-download");
            } else {
                has("65536 bytes");
                has("hint: raise --max-body");
            }
        }
        Answer::Trickle => {
            has("stalled");
            has(&format!("in {STALL_SECS} s"));
            has("--stall-timeout");
        }
        Answer::Html if command == "id-mapping" => {
            has("\"text/html\", not a CSV file");
            has("hint:");
        }
        Answer::Empty if command == "id-mapping" => {
            has("the ID-mapping answer is empty");
            has("hint:");
        }
        Answer::Html | Answer::Empty => {
            has("hint:");
        }
    }
    // The error and its hint speak of flags; the retry log lines above them
    // quote the library's own text.
    for line in stderr
        .lines()
        .filter(|l| l.starts_with("error:") || l.starts_with("hint:"))
    {
        assert!(!line.contains("HttpOptions"), "{command}: {line}");
    }
}

/// One run of the test: a command with an `apictl` of its own (state directory and `HOME`) and
/// a working directory of its own, so the runs of one answer can go at once.
struct Case {
    name: &'static str,
    args: Vec<String>,
    apictl: Apictl,
    work: tempfile::TempDir,
    /// The files in `work` before the run (the upload's input).
    before: Vec<std::ffi::OsString>,
}

/// Every command of [`commands`], each as a [`Case`] against `server`.
fn cases(server: &HostileServer) -> Vec<Case> {
    let count = commands(tempfile::tempdir().expect("a directory").path()).len();
    (0..count)
        .map(|i| {
            let work = tempfile::tempdir().expect("a directory");
            let (name, args) = commands(work.path()).swap_remove(i);
            let apictl = apictl(&server.url())
                .env("SEARCH_ADS_REPORTING_URL", server.url())
                .env("SEARCH_ADS_CUSTOMER_ID", "1234567890")
                .env("SEARCH_ADS_ENGINE_ACCOUNT_ID", "3")
                .env("VIDEO_SESSION_URL", server.url())
                .env("VIDEO_SECRET_KEY", "sk")
                .env("VIDEO_USER", "alice")
                .env("VIDEO_PASSWORD", "pw");
            if name == "video invite" {
                // A session saved by an earlier login to this server.
                let session = serde_json::json!({
                    "format": "apictl.video.session/1",
                    "base_url": server.url(),
                    "user_token": "ut-hostile",
                    "user_id": "3f2504e0-4f89-11d3-9a0c-0305e82c3301",
                    "domain_id": 1,
                    "login_id": 2,
                });
                write_private(
                    &apictl.state_dir().join("video-session.json"),
                    session.to_string().as_bytes(),
                );
            }
            let before = files(work.path());
            Case {
                name,
                args,
                apictl,
                work,
                before,
            }
        })
        .collect()
}

/// The names of the files in `dir`.
fn files(dir: &std::path::Path) -> Vec<std::ffi::OsString> {
    std::fs::read_dir(dir)
        .expect("readable")
        .map(|e| e.expect("an entry").file_name())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_command_ends_hostile_answers_clearly_in_bounded_memory_and_time() {
    let server = HostileServer::start(Answer::Html);

    // The baseline: the same binary, one small answer (an empty 200).
    server.set(Answer::Empty);
    let base = apictl(&server.url());
    let command = base.command(&["ads", "saved-columns"]);
    let baseline = tokio::task::spawn_blocking(move || run_measured(command, TIME_LIMIT))
        .await
        .expect("join");
    let baseline_kib = baseline.peak_rss_kib;
    let mut table = vec![];
    for answer in Answer::ALL {
        server.set(answer);
        // Every command at once against this answer; each child's peak is its own (`wait4`).
        let cases = cases(&server);
        let runs: Vec<_> = cases
            .iter()
            .map(|case| {
                let args: Vec<&str> = case.args.iter().map(String::as_str).collect();
                let command = case.apictl.command(&args);
                tokio::task::spawn_blocking(move || run_measured(command, TIME_LIMIT))
            })
            .collect();
        for (case, run) in cases.iter().zip(runs) {
            let run = run.await.expect("join");
            let name = case.name;
            assert!(
                !run.killed,
                "{name} {answer:?}: still running after {TIME_LIMIT:?}"
            );
            assert!(
                matches!(run.code, Some(1 | 2)),
                "{name} {answer:?}: exit {:?}\n{}\n{}",
                run.code,
                run.stdout,
                run.stderr
            );
            check(name, answer, &run.stderr);
            if answer == Answer::Trickle {
                assert!(
                    run.elapsed < Duration::from_secs(DEADLINE_SECS + 10),
                    "{name}: a trickle ran {:?} with --stall-timeout {STALL_SECS} and --deadline {DEADLINE_SECS}",
                    run.elapsed
                );
            }
            let grown_mib = run.peak_rss_kib.saturating_sub(baseline_kib) / 1024;
            assert!(
                grown_mib <= 64,
                "{name} {answer:?}: peak {} KiB, {grown_mib} MiB over the baseline",
                run.peak_rss_kib
            );
            let mut after = files(case.work.path());
            after.retain(|f| !case.before.contains(f));
            if name == "conversions upload" {
                // The row got no definite answer: the upload keeps its journal for --resume
                // (the one file it may leave), says so in the CLI's words, and writes no
                // report row (the report holds rejected rows only).
                assert!(
                    after.iter().any(|f| f == "upload.csv.journal"),
                    "{name} {answer:?}: no journal for --resume; new files {after:?}"
                );
                // Nothing on stderr (messages, hints, the SDK's retry warnings) names a
                // library setting the CLI user cannot reach.
                assert!(
                    run.stderr.contains("--resume") && !run.stderr.contains("HttpOptions"),
                    "{name} {answer:?}: {}",
                    run.stderr
                );
                after.retain(|f| f != "upload.csv.journal");
            }
            assert!(after.is_empty(), "{name} {answer:?}: left behind {after:?}");
            table.push(format!(
                "{name:>28} {answer:>13?}: exit {:?}, {:>6} KiB peak, {:>5.1} s",
                run.code.unwrap_or(-1),
                run.peak_rss_kib,
                run.elapsed.as_secs_f64()
            ));
        }
    }
    eprintln!("baseline {baseline_kib} KiB\n{}", table.join("\n"));
}

/// Writes a state file as `apictl` keeps one: a 0700 directory, a 0600 file.
fn write_private(path: &std::path::Path, bytes: &[u8]) {
    let dir = path.parent().expect("a file in a directory");
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(dir).expect("the state directory");
    let mut file = tempfile::NamedTempFile::new_in(dir).expect("a temporary file");
    std::io::Write::write_all(&mut file, bytes).expect("written");
    file.persist(path).expect("a saved session");
}

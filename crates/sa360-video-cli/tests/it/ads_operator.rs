//! `apictl ads conversions upload` as an operator meets it (issue 50): many
//! rejected rows print a bounded number of lines (the report holds them all),
//! reasons say the line a row repeats and the column that differs, a file in
//! a read-only directory uploads with `--journal`, whose lock is its own.

use std::path::Path;
use std::process::Command;

use crate::common;

use common::{Apictl, Run, sample_csv};
use sa360_video_fakes::FakeServices;

const HEAD: &str = "conversionId,conversionTimestamp,segmentationType,segmentationId,agencyId,advertiserId,revenueMicros\n";

fn row(id: &str, segmentation: &str, revenue: u64) -> String {
    format!(
        "{id},1717200000000,FLOODLIGHT,{segmentation},20700000000000125,21700000012345,{revenue}\n"
    )
}

/// Most stdout lines any upload may print, whatever the number of rejected rows.
const MAX_LINES: usize = 60;

fn report_rows(path: &Path) -> usize {
    std::fs::read_to_string(path).unwrap().lines().count() - 1
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn thousands_of_rejected_rows_print_a_bounded_summary_and_the_report_holds_them_all() {
    let services = FakeServices::start_default().await.expect("fakes");
    let apictl = Apictl::with_fakes(&services);

    // 3 000 rows the server rejects (an unknown Floodlight activity): none is
    // stored, so the status is 6, not "partial".
    let server = apictl.dir().join("server.csv");
    let mut text = HEAD.to_owned();
    for i in 0..3000 {
        text.push_str(&row(&format!("s-{i}"), "999999", 1));
    }
    std::fs::write(&server, text).unwrap();
    let run = apictl
        .run(&["ads", "conversions", "upload", server.to_str().unwrap()])
        .await;
    run.expect(6);
    let report = apictl.dir().join("server.csv.rejected.csv");
    assert!(run.stdout.lines().count() <= MAX_LINES, "{}", run.stdout);
    assert!(
        run.stdout.contains(&format!(
            "…and 2980 more rejected rows in {}",
            report.display()
        )),
        "{}",
        run.stdout
    );
    assert!(run.stdout.contains("3000 rows: 0 stored, 3000 rejected"));
    assert_eq!(report_rows(&report), 3000);

    // 50 000 rows that repeat the first one: rejected before sending, each
    // naming line 2 and the column that differs.
    let repeats = apictl.dir().join("repeats.csv");
    let mut text = HEAD.to_owned();
    text.push_str(&row("r-1", "551234", 1));
    for i in 0..50_000u64 {
        text.push_str(&row("r-1", "551234", 1 + i % 2));
    }
    std::fs::write(&repeats, text).unwrap();
    let run = apictl
        .run(&["ads", "conversions", "upload", repeats.to_str().unwrap()])
        .await;
    run.expect(3);
    assert!(run.stdout.lines().count() <= MAX_LINES, "{}", run.stdout);
    assert!(
        run.stdout.contains("50001 rows: 1 stored, 50000 rejected"),
        "{}",
        run.stdout
    );
    assert!(run.stdout.contains("…and 49980 more rejected rows in "));
    let report = apictl.dir().join("repeats.csv.rejected.csv");
    assert_eq!(report_rows(&report), 50_000);
    let text = std::fs::read_to_string(&report).unwrap();
    let line = |n: u64| {
        text.lines()
            .find(|l| l.starts_with(&format!("{n},")))
            .unwrap_or_else(|| panic!("line {n}"))
            .to_owned()
    };
    // Line 3 is the same conversion; line 4 has another revenueMicros.
    assert!(
        line(3).contains("repeats line 2: the same conversion"),
        "{}",
        line(3)
    );
    let other = line(4);
    assert!(
        other.contains("repeats line 2's") && other.contains("another revenueMicros"),
        "{other}"
    );
    assert!(other.contains("--update"), "{other}");
    assert!(!text.contains("fingerprint") && !text.contains("SA-22"));
}

/// Runs `apictl args` with `dir` read-only for it. Not as root: the
/// directory's mode (0555). As root, whom modes do not stop: in a mount
/// namespace of its own (`unshare -m`), with `dir` bind-mounted read-only.
/// `None` (with the reason printed) when neither can be set up.
fn run_read_only(apictl: &Apictl, dir: &Path, args: &[&str]) -> Option<Run> {
    let root = unsafe { libc::geteuid() } == 0;
    let mut cmd = if root {
        let mut cmd = Command::new("unshare");
        cmd.args(["--mount", "--propagation", "private", "sh", "-c"])
            .arg(r#"d=$1; shift; mount --bind "$d" "$d" && mount -o remount,ro,bind "$d" "$d" && if touch "$d/.probe" 2>/dev/null; then echo "still writable" >&2; exit 97; fi && exec "$@""#)
            .arg("sh")
            .arg(dir)
            .arg(env!("CARGO_BIN_EXE_apictl"))
            .args(args);
        let from = apictl.command(&[]);
        cmd.env_clear()
            .envs(from.get_envs().filter_map(|(k, v)| Some((k, v?))))
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .current_dir(apictl.dir());
        cmd
    } else {
        let mut perms = std::fs::metadata(dir).unwrap().permissions();
        std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o555);
        std::fs::set_permissions(dir, perms).unwrap();
        apictl.command(args)
    };
    let out = cmd.output().expect("run");
    let run = Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    };
    if root && (run.code == 97 || run.stderr.contains("unshare:") || run.stderr.contains("mount:"))
    {
        println!(
            "SKIPPED: running as root, and a read-only bind mount could not be set up: {}",
            run.stderr.trim()
        );
        return None;
    }
    Some(run)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_file_in_a_read_only_directory_uploads_with_journal_and_its_lock_is_the_journals() {
    let services = FakeServices::start_default().await.expect("fakes");
    let apictl = Apictl::with_fakes(&services);
    let ro = apictl.dir().join("ro");
    std::fs::create_dir(&ro).unwrap();
    let csv = ro.join("ro.csv");
    std::fs::copy(sample_csv(), &csv).unwrap();
    let file = csv.to_str().unwrap();
    let work = apictl.dir().join("work");
    std::fs::create_dir(&work).unwrap();
    let journal = work.join("ro.journal");
    let j = journal.to_str().unwrap();

    // Without --journal: refused before sending, naming --journal.
    let Some(run) = run_read_only(&apictl, &ro, &["ads", "conversions", "upload", file]) else {
        return;
    };
    run.expect(4);
    assert!(run.stderr.contains("--journal"), "{}", run.stderr);
    assert_eq!(services.search_ads.ledger().counts().insert_requests, 0);

    // Another upload holds the journal's lock (its own file, beside the
    // journal): refused, nothing sent.
    let lock = std::fs::File::create(work.join("ro.journal.lock")).unwrap();
    fs4::FileExt::try_lock(&lock).unwrap();
    let args = ["ads", "conversions", "upload", file, "--journal", j];
    let run = run_read_only(&apictl, &ro, &args).unwrap();
    run.expect(4);
    assert!(
        run.stderr.contains("held by another upload"),
        "{}",
        run.stderr
    );
    assert_eq!(services.search_ads.ledger().counts().insert_requests, 0);
    drop(lock);

    // With --journal: it uploads; the journal and the report are in work/.
    let run = run_read_only(&apictl, &ro, &args).unwrap();
    run.expect(3);
    assert!(
        run.stdout.contains("11 rows: 7 stored, 4 rejected"),
        "{}",
        run.stdout
    );
    assert!(common::finished(&journal));
    assert_eq!(report_rows(&work.join("ro.csv.rejected.csv")), 4);
    let mut left: Vec<_> = std::fs::read_dir(&ro)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    left.sort();
    assert_eq!(left, ["ro.csv"], "nothing written beside the input");

    // Finished: again (and with --resume) nothing is sent, status 0.
    let requests = services.search_ads.ledger().counts().insert_requests;
    for extra in [None, Some("--resume")] {
        let mut again = args.to_vec();
        again.extend(extra);
        let run = run_read_only(&apictl, &ro, &again).unwrap();
        run.expect(0);
        assert_eq!(run.stdout.lines().count(), 1, "{}", run.stdout);
        assert!(run.stdout.contains("already uploaded"), "{}", run.stdout);
    }
    assert_eq!(
        services.search_ads.ledger().counts().insert_requests,
        requests
    );
}

//! `apictl sandbox` in the foreground, and every command against it.

use crate::common;

use std::collections::HashMap;
use std::io::{BufRead, BufReader};
use std::process::{Child, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use common::Apictl;

/// Kills the sandbox when the test ends, pass or fail.
struct Sandbox(Child);

impl Drop for Sandbox {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn every_command_works_against_the_sandbox() {
    let base = Apictl::new();
    let mut child = base
        .command(&["sandbox"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn the sandbox");
    let stdout = child.stdout.take().expect("stdout");
    let stderr = child.stderr.take().expect("stderr");
    let _sandbox = Sandbox(child);

    // The first lines are NAME='value' assignments.
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    std::thread::spawn(move || for _ in BufReader::new(stderr).lines() {});
    let mut vars = HashMap::new();
    while vars.len() < 13 {
        let line = rx
            .recv_timeout(Duration::from_secs(30))
            .expect("the sandbox printed its settings");
        let (name, value) = line.split_once('=').expect("NAME=value");
        assert!(
            name.chars().all(|c| c.is_ascii_uppercase() || c == '_'),
            "{line}"
        );
        vars.insert(name.to_owned(), value.trim_matches('\'').to_owned());
    }
    for name in [
        "SEARCH_ADS_URL",
        "SEARCH_ADS_TOKEN",
        "VIDEO_SESSION_URL",
        "VIDEO_SECRET_KEY",
        "VIDEO_USER",
        "VIDEO_PASSWORD",
        "VIDEO_SESSION_ID",
        "SEARCH_ADS_AGENCY_ID",
        "SEARCH_ADS_ADVERTISER_ID",
        "SEARCH_ADS_REPORTING_URL",
    ] {
        assert!(vars.contains_key(name), "{name} missing: {vars:?}");
    }

    let mut apictl = Apictl::new();
    for (name, value) in &vars {
        apictl = apictl.env(name, value.clone());
    }
    let dir = apictl.dir().to_owned();
    let csv = dir.join("sample.csv");
    std::fs::copy(common::sample_csv(), &csv).unwrap();
    let path = |p: &std::path::Path| p.display().to_string();

    apictl.run_sync(&["video", "login"]).expect(0);
    apictl
        .run_sync(&[
            "video",
            "invite",
            "--sms",
            "+12015550123",
            "--country",
            "US",
            "--mic",
            "on",
        ])
        .expect(0);
    apictl
        .run_sync(&[
            "video",
            "invite",
            "--whatsapp",
            "+12015550123",
            "--country",
            "US",
        ])
        .expect(0);
    apictl
        .run_sync(&[
            "video",
            "invite",
            "--email",
            "guest@example.com",
            "--message",
            "Hello",
            "--camera",
            "back",
        ])
        .expect(0);
    let list = apictl.run_sync(&[
        "ads",
        "conversions",
        "list",
        "--api",
        "v2",
        "--from",
        "2024-01-01",
        "--to",
        "2024-01-31",
        "--format",
        "csv",
        "-o",
        &path(&dir.join("jan.csv")),
    ]);
    list.expect(0);
    assert!(
        list.stdout.contains("wrote 3100 conversions"),
        "{}",
        list.stdout
    );
    // The sandbox's data runs through today: the Reporting API (the default with the customer id
    // the sandbox prints) serves any range of the last 60 days, the same rows as v2.
    let today = chrono::DateTime::<chrono::Utc>::from(std::time::SystemTime::now()).date_naive();
    let back = |n: u64| (today - chrono::Days::new(n)).to_string();
    let list = |api: Option<&str>, from: &str, to: &str| {
        let mut args = vec!["ads", "conversions", "list", "--from", from, "--to", to];
        if let Some(api) = api {
            args.extend(["--api", api]);
        }
        let run = apictl.run_sync(&args);
        run.expect(0);
        run.stdout
            .lines()
            .map(|l| serde_json::from_str::<serde_json::Value>(l).expect("a JSON line"))
            .collect::<Vec<_>>()
    };
    // The whole window, its first day, today alone, and a range inside.
    for (from, to) in [
        (back(59), back(0)),
        (back(59), back(59)),
        (back(0), back(0)),
        (back(10), back(1)),
    ] {
        let v2 = list(Some("v2"), &from, &to);
        let reporting = list(None, &from, &to);
        assert_eq!(
            reporting,
            list(Some("reporting"), &from, &to),
            "reporting is the default with a customer id"
        );
        assert!(!v2.is_empty(), "{from}..{to}: the sandbox has data");
        assert_eq!(reporting.len(), v2.len(), "{from}..{to}");
        for (i, (old, new)) in v2.iter().zip(&reporting).enumerate() {
            for field in [
                "conversionId",
                "conversionTimestamp",
                "dsConversionId",
                "state",
                "revenueMicros",
                "clickId",
                "floodlightOrderId",
                "adId",
                "criterionId",
            ] {
                assert_eq!(old[field], new[field], "{from}..{to} row {i} {field}");
            }
        }
    }
    apictl
        .run_sync(&["ads", "conversions", "upload", &path(&csv), "--dry-run"])
        .expect(3);
    apictl
        .run_sync(&["ads", "conversions", "upload", &path(&csv)])
        .expect(3);
    assert!(dir.join("sample.csv.rejected.csv").exists());
    apictl
        .run_sync(&["ads", "availability", "--segmentation-name", "Purchase"])
        .expect(0);
    apictl
        .run_sync(&["ads", "id-mapping", "-o", &path(&dir.join("ids.csv"))])
        .expect(0);
    assert!(std::fs::metadata(dir.join("ids.csv")).unwrap().len() > 100_000);
    let columns = apictl.run_sync(&["ads", "saved-columns"]);
    columns.expect(0);
    assert_eq!(columns.stdout.lines().count(), 3, "{}", columns.stdout);
}

/// Issue 36: two sandboxes on one machine wrote their credentials to one fixed path and the first
/// to stop deleted it, so the other's users got a 401. Each now has a path of its own, printed,
/// and removed only when that sandbox stops.
#[cfg(unix)]
#[test]
fn two_sandboxes_run_side_by_side() {
    let base = Apictl::new();
    let start = || start_sandbox(&base);
    let (mut first, first_vars) = start();
    let (_second, second_vars) = start();
    let first_file = std::path::PathBuf::from(&first_vars["GOOGLE_APPLICATION_CREDENTIALS"]);
    let second_file = std::path::PathBuf::from(&second_vars["GOOGLE_APPLICATION_CREDENTIALS"]);
    assert_ne!(first_file, second_file, "each sandbox has its own file");

    // The first stops as Ctrl-C stops it; its file goes, the second's stays and works.
    let pid = first.0.id().to_string();
    let sent = std::process::Command::new("kill")
        .args(["-INT", &pid])
        .status()
        .expect("kill runs");
    assert!(sent.success());
    first.0.wait().expect("the first sandbox stops");
    assert!(
        !first_file.exists(),
        "the first sandbox removed its own file"
    );
    assert!(
        second_file.exists(),
        "the second sandbox's file is untouched"
    );

    let mut apictl = Apictl::new();
    for (name, value) in &second_vars {
        if name != "SEARCH_ADS_TOKEN" {
            apictl = apictl.env(name, value.clone());
        }
    }
    let status = apictl.run_sync(&["auth", "status"]);
    status.expect(0);
    assert!(
        status.stdout.contains(&second_file.display().to_string()),
        "{}",
        status.stdout
    );
    apictl.run_sync(&["ads", "saved-columns"]).expect(0);
}

/// Starts `apictl sandbox` with `base`'s environment and reads the settings it prints.
fn start_sandbox(base: &Apictl) -> (Sandbox, HashMap<String, String>) {
    let mut child = base
        .command(&["sandbox"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn the sandbox");
    let stdout = child.stdout.take().expect("stdout");
    let stderr = child.stderr.take().expect("stderr");
    std::thread::spawn(move || for _ in BufReader::new(stderr).lines() {});
    let mut lines = BufReader::new(stdout).lines();
    let mut vars = HashMap::new();
    while !vars.contains_key("SEARCH_ADS_REVOKE_URL") {
        let line = lines
            .next()
            .expect("the sandbox printed its settings")
            .expect("text");
        let (name, value) = line.split_once('=').expect("NAME=value");
        vars.insert(name.to_owned(), value.trim_matches('\'').to_owned());
    }
    (Sandbox(child), vars)
}

/// Issue 50: every sandbox seeded the same demo account, so the per-user lockout file counted
/// one sandbox's failed logins against the next: a brand-new sandbox refused its first login.
/// Each sandbox now has accounts of its own (DECISIONS VS-20).
#[test]
fn a_new_sandbox_logs_in_after_another_sandboxs_account_was_blocked() {
    // One user (one HOME, so one per-user lockout file) for both sandboxes.
    let user = Apictl::new();
    let login = |vars: &HashMap<String, String>, password: &str| {
        let mut cmd = user.command(&["video", "login"]);
        cmd.envs(vars).env("VIDEO_PASSWORD", password);
        let out = cmd.output().expect("run apictl");
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        (out.status.code(), stderr)
    };
    let (first, first_vars) = start_sandbox(&user);
    // Wrong passwords until apictl refuses to send another login (the guard's limit).
    let mut refused = None;
    for _ in 0..10 {
        match login(&first_vars, "not the password") {
            (Some(5), _) => {}
            (Some(4), stderr) => {
                refused = Some(stderr);
                break;
            }
            other => panic!("unexpected outcome {other:?}"),
        }
    }
    let refused = refused.expect("apictl refused a login within 10 attempts");
    assert!(refused.contains("not sent"), "{refused}");
    drop(first);

    let (_second, second_vars) = start_sandbox(&user);
    assert_eq!(first_vars["VIDEO_USER"], second_vars["VIDEO_USER"]);
    assert_ne!(
        first_vars["VIDEO_SECRET_KEY"], second_vars["VIDEO_SECRET_KEY"],
        "each sandbox has a domain of its own"
    );
    let (code, stderr) = login(&second_vars, &second_vars["VIDEO_PASSWORD"]);
    assert_eq!(
        code,
        Some(0),
        "the new sandbox's first login is sent: {stderr}"
    );
}

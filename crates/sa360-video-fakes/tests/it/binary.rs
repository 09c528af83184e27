//! The `sa360-video-fakes` binary: prints eval-able connection lines first, then serves both fakes.

use crate::common;

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use common::{client, json};
use serde_json::json;

const NAMES: [&str; 13] = [
    "SEARCH_ADS_URL",
    "VIDEO_SESSION_URL",
    "SEARCH_ADS_TOKEN",
    "VIDEO_SECRET_KEY",
    "VIDEO_USER",
    "VIDEO_PASSWORD",
    "VIDEO_SESSION_ID",
    "SEARCH_ADS_TOKEN_URL",
    "SEARCH_ADS_AGENCY_ID",
    "SEARCH_ADS_ADVERTISER_ID",
    "SEARCH_ADS_ENGINE_ACCOUNT_ID",
    "SEARCH_ADS_CUSTOMER_ID",
    "SEARCH_ADS_REPORTING_URL",
];

/// Kills the child when the test ends, however it ends.
struct Running(Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn start(args: &[&str]) -> (Running, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_sa360-video-fakes"))
        .args(args)
        .env("RUST_LOG", "warn")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("binary starts");
    let stdout = child.stdout.take().expect("stdout");
    let running = Running(child);
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut script = String::new();
        for line in BufReader::new(stdout).lines().take(NAMES.len()) {
            let Ok(line) = line else { break };
            script.push_str(&line);
            script.push('\n');
        }
        let _ = tx.send(script);
    });
    let script = rx
        .recv_timeout(Duration::from_secs(30))
        .expect("the lines arrive");
    (running, script)
}

/// Evaluates `script` in `sh` and prints each variable on its own line.
fn eval_in_sh(script: &str) -> Vec<String> {
    let printer: String = NAMES
        .iter()
        .map(|n| format!("printf '%s\\n' \"${n}\";"))
        .collect();
    let output = Command::new("sh")
        .arg("-c")
        .arg(format!("eval \"$1\"; {printer}"))
        .arg("sh")
        .arg(script)
        .output()
        .expect("sh runs");
    assert!(output.status.success());
    String::from_utf8(output.stdout)
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect()
}

#[tokio::test]
async fn prints_eval_able_lines_and_serves_both_fakes() {
    let (_child, script) = start(&["--seed", "7", "--conversions-per-account", "300"]);
    let lines: Vec<&str> = script.lines().collect();
    assert_eq!(lines.len(), NAMES.len(), "{script}");
    for (line, name) in lines.iter().zip(NAMES) {
        assert!(line.starts_with(&format!("{name}=")), "{line}");
    }
    let values = eval_in_sh(&script);
    let var = |name: &str| values[NAMES.iter().position(|n| *n == name).unwrap()].clone();
    assert!(var("SEARCH_ADS_URL").starts_with("http://127.0.0.1:"));
    assert!(var("SEARCH_ADS_URL").ends_with("/doubleclicksearch/v2"));
    assert!(
        var("VIDEO_PASSWORD").contains('!'),
        "quoted through sh intact"
    );

    let page = format!(
        "{}/agency/{}/advertiser/{}/engine/{}/conversion?startDate=20240101&endDate=20241231&startRow=0&rowCount=1000",
        var("SEARCH_ADS_URL"),
        var("SEARCH_ADS_AGENCY_ID"),
        var("SEARCH_ADS_ADVERTISER_ID"),
        var("SEARCH_ADS_ENGINE_ACCOUNT_ID")
    );
    let (status, body) = json(client().get(&page).bearer_auth(var("SEARCH_ADS_TOKEN"))).await;
    assert_eq!(status, 200);
    assert_eq!(body["conversion"].as_array().unwrap().len(), 300);

    // The Reporting API answers on the origin, with the same token.
    assert_eq!(
        format!("{}/doubleclicksearch/v2", var("SEARCH_ADS_REPORTING_URL")),
        var("SEARCH_ADS_URL")
    );
    let (status, body) = json(
        client()
            .get(format!(
                "{}/v0/customers:listAccessibleCustomers",
                var("SEARCH_ADS_REPORTING_URL")
            ))
            .bearer_auth(var("SEARCH_ADS_TOKEN")),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    let customer = format!("customers/{}", var("SEARCH_ADS_CUSTOMER_ID"));
    assert!(
        body["resourceNames"]
            .as_array()
            .unwrap()
            .contains(&json!(customer)),
        "{body}"
    );

    let (status, body) = json(
        client()
            .post(format!("{}/api/login", var("VIDEO_SESSION_URL")))
            .json(&json!({"SecretKey": var("VIDEO_SECRET_KEY"), "UserName": var("VIDEO_USER"), "Password": var("VIDEO_PASSWORD")})),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    let token = body["UserToken"].as_str().unwrap().to_owned();
    let (status, _) = json(
        client()
            .post(format!(
                "{}/api/session/{}/invitation",
                var("VIDEO_SESSION_URL"),
                var("VIDEO_SESSION_ID")
            ))
            .header("UserToken", token)
            .json(&json!({"InvitationType": 3, "EmailAddress": "guest@example.com"})),
    )
    .await;
    assert_eq!(status, 200);
}

#[tokio::test]
async fn fault_flags_reach_the_chosen_fake() {
    let (_child, script) = start(&["--p-503", "1", "--fault-target", "search-ads"]);
    let values = eval_in_sh(&script);
    let response = client()
        .post(format!("{}/conversion", values[0]))
        .bearer_auth(&values[2])
        .json(&json!({"conversion": []}))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 503);
    let (status, _) = json(
        client()
            .post(format!("{}/api/login", values[1]))
            .json(&json!({"SecretKey": "x", "UserName": "y", "Password": "z"})),
    )
    .await;
    assert_eq!(status, 401, "the video fake has no faults");
}

#[test]
fn bad_flags_fail_fast() {
    let output = Command::new(env!("CARGO_BIN_EXE_sa360-video-fakes"))
        .args(["--p-429", "2"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    assert!(!output.status.success());
    assert!(output.stdout.is_empty());
    let help = Command::new(env!("CARGO_BIN_EXE_sa360-video-fakes"))
        .arg("--help")
        .output()
        .unwrap();
    assert!(help.status.success());
    let text = String::from_utf8_lossy(&help.stdout);
    for flag in [
        "--search-ads-port",
        "--video-port",
        "--seed",
        "--id-mapping-bytes",
        "--p-drop-mid-body",
    ] {
        assert!(text.contains(flag), "{flag}");
    }
}

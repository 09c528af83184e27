//! The conventions operators expect of a CLI (issue 37): one exit status per
//! kind of outcome (each tested here), a closed stdout ending quietly,
//! `--json` and `--quiet` everywhere, `-v` showing each request, shell
//! completions, the manual page and `apictl help`.

use std::io::{BufRead as _, BufReader};
use std::process::Stdio;

use crate::common;

use common::{Apictl, Run, sample_csv};
use sa360_video_fakes::{DomainUser, FakeServices};

// ---- exit statuses (crates/sa360-video-cli/src/exit.rs) ----

#[test]
fn usage_errors_exit_2() {
    for args in [
        &["video", "invite", "--sms", "+12015550123"][..],
        &["no-such-command"],
        &["ads", "conversions", "list", "--from", "2024-01-01"],
        &["completions", "tcsh"],
    ] {
        let run = Apictl::new().run_sync(args);
        run.expect(2);
        assert!(
            run.stderr.starts_with("error: "),
            "{args:?}: {}",
            run.stderr
        );
    }
    // `apictl man` of a command that does not exist is a usage error too.
    let run = Apictl::new().run_sync(&["man", "video", "nope"]);
    run.expect(2);
    assert!(run.stderr.contains("login, invite"), "{}", run.stderr);
}

/// `ads fields` that finds nothing, or names no resource, is an input that failed its check.
#[test]
fn a_field_search_that_finds_nothing_exits_4() {
    for args in [
        &["ads", "fields", "zz_no_such_field_qq"][..],
        &["ads", "fields", "--from", "no_such_resource"],
        &["ads", "fields", "zz_no_such_field_qq", "--from", "campaign"],
    ] {
        let run = Apictl::new().run_sync(args);
        run.expect(4);
        assert!(
            run.stderr.starts_with("error: "),
            "{args:?}: {}",
            run.stderr
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_local_refusal_exits_4_naming_the_flag() {
    let services = FakeServices::start_default().await.expect("fakes");
    let apictl = Apictl::with_fakes(&services);
    apictl.run(&["video", "login"]).await.expect(0);
    // `ZZ` is two letters but no country (VS-9a): refused before sending.
    let run = apictl
        .run(&[
            "video",
            "invite",
            "--sms",
            "+12015550123",
            "--country",
            "ZZ",
        ])
        .await;
    run.expect(4);
    assert!(
        run.stderr
            .contains("error: --country: must be an ISO 3166-1 country code"),
        "{}",
        run.stderr
    );
    assert!(!run.stderr.contains("IsoCode"), "{}", run.stderr);
    // A malformed number names the flags, not the wire field `MobileNo`.
    let run = apictl
        .run(&["video", "invite", "--sms", "12", "--country", "US"])
        .await;
    run.expect(4);
    assert!(run.stderr.contains("--sms or --whatsapp"), "{}", run.stderr);
    assert!(!run.stderr.contains("MobileNo"), "{}", run.stderr);
    // A bad date.
    let run = apictl
        .run(&[
            "ads",
            "conversions",
            "list",
            "--from",
            "soon",
            "--to",
            "2024-01-02",
        ])
        .await;
    run.expect(4);
    assert!(run.stderr.contains("--from \"soon\""), "{}", run.stderr);
    // A file with a header and no row: nothing to send, refused.
    let empty = apictl.dir().join("empty.csv");
    std::fs::write(
        &empty,
        "conversionId,conversionTimestamp,segmentationType,segmentationId,agencyId,advertiserId,engineAccountId,type,revenueMicros,currencyCode\n",
    )
    .expect("csv");
    let run = apictl
        .run(&["ads", "conversions", "upload", empty.to_str().unwrap()])
        .await;
    run.expect(4);
    assert!(run.stderr.contains("has no rows"), "{}", run.stderr);
    // A misspelt field: the query is refused before it is sent (issue 50: it exited 1).
    let run = apictl
        .run(&[
            "ads",
            "report",
            "--query",
            "SELECT campaign.id, metrics.clikcs FROM campaign",
        ])
        .await;
    run.expect(4);
    assert!(run.stderr.contains("metrics.clicks"), "{}", run.stderr);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rows_refused_before_sending_name_their_column() {
    let services = FakeServices::start_default().await.expect("fakes");
    let apictl = Apictl::with_fakes(&services);
    let csv = apictl.dir().join("rows.csv");
    std::fs::write(
        &csv,
        "conversionId,conversionTimestamp,segmentationType,segmentationId,agencyId,advertiserId,engineAccountId,type,revenueMicros,currencyCode\n\
         ,2024-06-01T13:05:12Z,FLOODLIGHT,999999,20700000000000125,21700000012345,700000000042205,TRANSACTION,1000000,USD\n\
         order-2,2024-06-01T13:05:12Z,,,20700000000000125,21700000012345,700000000042205,TRANSACTION,1000000,USD\n",
    )
    .expect("csv");
    let run = apictl
        .run(&[
            "ads",
            "conversions",
            "upload",
            csv.to_str().unwrap(),
            "--dry-run",
        ])
        .await;
    let report =
        std::fs::read_to_string(apictl.dir().join("rows.csv.rejected.csv")).expect("report");
    for text in [&run.stdout, &report] {
        assert!(text.contains("fill the column conversionId"), "{text}");
        assert!(text.contains("fill the column segmentationType"), "{text}");
        assert!(!text.contains("Conversion::"), "{text}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_lockout_guard_refusing_a_login_exits_4() {
    let services = FakeServices::start_default().await.expect("fakes");
    let apictl = Apictl::with_fakes(&services).env("VIDEO_PASSWORD", "wrong-password");
    // Wrong passwords are authentication failures (5) until the guard stops sending (4).
    let mut codes = Vec::new();
    for _ in 0..6 {
        codes.push(apictl.run(&["video", "login"]).await.code);
    }
    assert_eq!(codes, [5, 5, 5, 5, 5, 4], "{codes:?}");
    let demo = services.video.demo();
    let key = DomainUser::new(demo.domain_id, demo.user_name.clone());
    assert!(!services.video.ledger().is_blocked(&key));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn authentication_needed_exits_5() {
    let services = FakeServices::start_default().await.expect("fakes");
    let apictl = Apictl::with_fakes(&services);
    // No saved session: log in first.
    let run = apictl
        .run(&["video", "invite", "--email", "guest@example.com"])
        .await;
    run.expect(5);
    assert!(run.stderr.contains("apictl video login"), "{}", run.stderr);
    // A token the service refuses (401).
    let run = apictl
        .run_with(
            &["ads", "saved-columns"],
            &[("SEARCH_ADS_TOKEN", "not-a-token")],
        )
        .await;
    run.expect(5);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_service_error_exits_1() {
    let services = FakeServices::start_default().await.expect("fakes");
    let apictl = Apictl::with_fakes(&services);
    // An advertiser the credentials may not access: 403 from the service.
    let run = apictl
        .run(&["ads", "saved-columns", "--advertiser-id", "1"])
        .await;
    run.expect(1);
    assert!(run.stderr.contains("HTTP 403"), "{}", run.stderr);
    // The service's message ends a sentence; the SDK's text goes on without a second period.
    assert!(
        run.stderr.contains("advertiser 1. The account"),
        "{}",
        run.stderr
    );
    assert!(
        !run.stderr.replace("...", "").contains(".."),
        "{}",
        run.stderr
    );
    // Nothing listening.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").expect("port");
    let url = format!(
        "http://{}/doubleclicksearch/v2",
        closed.local_addr().expect("addr")
    );
    drop(closed);
    let run = apictl
        .run_with(&["ads", "saved-columns"], &[("SEARCH_ADS_URL", &url)])
        .await;
    run.expect(1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_partial_upload_exits_3() {
    let services = FakeServices::start_default().await.expect("fakes");
    let apictl = Apictl::with_fakes(&services);
    let csv = apictl.dir().join("sample.csv");
    std::fs::copy(sample_csv(), &csv).expect("copy");
    let run = apictl
        .run(&["ads", "conversions", "upload", csv.to_str().unwrap()])
        .await;
    run.expect(3);
    assert!(
        run.stdout.contains("7 stored, 4 rejected"),
        "{}",
        run.stdout
    );
}

/// Ctrl-C while a request waits for its answer: status 130 and a message.
#[test]
fn ctrl_c_exits_130_with_a_message() {
    // A server that accepts the connection and never answers.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("port");
    let url = format!(
        "http://{}/doubleclicksearch/v2",
        listener.local_addr().expect("addr")
    );
    let apictl = Apictl::new()
        .env("SEARCH_ADS_URL", url)
        .env("SEARCH_ADS_TOKEN", "t")
        .env("SEARCH_ADS_AGENCY_ID", "1")
        .env("SEARCH_ADS_ADVERTISER_ID", "2");
    let child = apictl
        .command(&["ads", "saved-columns"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    // Waits at most 60 s for apictl's connection (a test that fails, never one that hangs).
    listener.set_nonblocking(true).expect("nonblocking");
    let started = std::time::Instant::now();
    let _held = loop {
        match listener.accept() {
            Ok((stream, _)) => break stream,
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                assert!(started.elapsed().as_secs() < 60, "apictl never connected");
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            Err(e) => panic!("accept: {e}"),
        }
    };
    let kill = std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .expect("kill");
    assert!(kill.success());
    let output = child.wait_with_output().expect("apictl ends");
    let run = Run {
        code: output.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    };
    run.expect(130);
    assert!(
        run.stderr.contains("error: interrupted (Ctrl-C)"),
        "{}",
        run.stderr
    );
}

// ---- output ----

/// `apictl tour | head -1`: the reader goes away after one line; apictl ends
/// with status 0 and no panic.
#[test]
fn a_closed_stdout_ends_quietly() {
    for args in [
        &["tour"][..],
        &["completions", "bash"],
        &["man"],
        &["--json", "tour"],
    ] {
        let apictl = Apictl::new();
        let mut child = apictl
            .command(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn");
        let mut first = String::new();
        BufReader::new(child.stdout.take().expect("stdout"))
            .read_line(&mut first)
            .expect("a line");
        assert!(!first.is_empty(), "{args:?}");
        // The reader is dropped here: stdout is closed.
        let output = child.wait_with_output().expect("ends");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(0), "{args:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
        assert!(!stderr.contains("error"), "{args:?}: {stderr}");
    }
}

#[test]
fn json_tour_is_one_document() {
    let run = Apictl::new().run_sync(&["--json", "tour"]);
    run.expect(0);
    let doc: serde_json::Value = serde_json::from_str(&run.stdout).expect("one JSON document");
    assert_eq!(doc["ok"], true);
    let steps = doc["steps"].as_array().expect("steps");
    assert_eq!(steps.len(), 9);
    assert!(
        steps
            .iter()
            .all(|s| s["ok"] == true && s["title"].is_string())
    );
}

#[test]
fn quiet_prints_no_confirmations() {
    let run = Apictl::new().run_sync(&["-q", "tour"]);
    run.expect(0);
    assert_eq!(run.stdout, "");
    let both = Apictl::new().run_sync(&["-q", "-v", "tour"]);
    both.expect(2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn quiet_keeps_results_and_drops_confirmations() {
    let services = FakeServices::start_default().await.expect("fakes");
    let apictl = Apictl::with_fakes(&services);
    let run = apictl.run(&["--quiet", "video", "login"]).await;
    run.expect(0);
    assert_eq!(run.stdout, "");
    let run = apictl.run(&["--quiet", "ads", "saved-columns"]).await;
    run.expect(0);
    assert!(!run.stdout.is_empty(), "the result still prints");
}

/// `-v` logs each request with its method, origin, path and status, for the
/// search ads service as for the video service, never the token or the password.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn verbose_shows_each_request() {
    let services = FakeServices::start_default().await.expect("fakes");
    let apictl = Apictl::with_fakes(&services);
    let token = services.search_ads.dev_token().to_owned();
    let password = services.video.demo().password.clone();
    let ads = apictl.run(&["-v", "ads", "saved-columns"]).await;
    ads.expect(0);
    let origin = services
        .search_ads
        .base_url()
        .trim_end_matches("/doubleclicksearch/v2")
        .to_owned();
    assert!(ads.stderr.contains("method=GET"), "{}", ads.stderr);
    assert!(
        ads.stderr.contains(&format!("origin={origin}")),
        "{}",
        ads.stderr
    );
    assert!(
        ads.stderr.contains("path=/doubleclicksearch/v2/agency/"),
        "{}",
        ads.stderr
    );
    assert!(ads.stderr.contains("status=200"), "{}", ads.stderr);
    let video = apictl.run(&["-v", "video", "login"]).await;
    video.expect(0);
    assert!(video.stderr.contains("method=POST"), "{}", video.stderr);
    assert!(video.stderr.contains("status=200"), "{}", video.stderr);
    for run in [&ads, &video] {
        assert!(!run.stderr.contains(&token));
        assert!(!run.stderr.contains(&password));
    }
    // Without -v, no request lines.
    let quiet = apictl.run(&["ads", "saved-columns"]).await;
    assert!(!quiet.stderr.contains("method="), "{}", quiet.stderr);
}

// ---- flags over the environment ----

/// The sandbox's environment names an engine account and a customer; a
/// `--customer-id` typed with `--api v2` reads the customer, not the
/// environment's engine account, and two typed accounts are a conflict.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_typed_customer_id_wins_over_the_environment() {
    let services = FakeServices::start_default().await.expect("fakes");
    let apictl = Apictl::with_fakes(&services);
    let customer = services
        .env_vars()
        .into_iter()
        .find(|(name, _)| *name == "SEARCH_ADS_CUSTOMER_ID")
        .expect("the fakes name a customer")
        .1;
    let list = |extra: &'static [&'static str]| {
        let mut args = vec![
            "-v",
            "ads",
            "conversions",
            "list",
            "--api",
            "v2",
            "--from",
            "2024-01-01",
            "--to",
            "2024-01-01",
        ];
        args.extend_from_slice(extra);
        args
    };
    let from_env = apictl.run(&list(&[])).await;
    from_env.expect(0);
    assert!(from_env.stderr.contains("/engine/"), "{}", from_env.stderr);
    let typed = apictl
        .run(&[list(&[]), vec!["--customer-id", customer.as_str()]].concat())
        .await;
    typed.expect(0);
    assert!(typed.stderr.contains("/customer/"), "{}", typed.stderr);
    assert!(!typed.stderr.contains("/engine/"), "{}", typed.stderr);
    let both = apictl
        .run(
            &[
                list(&["--engine-account-id", "700000000042205"]),
                vec!["--customer-id", customer.as_str()],
            ]
            .concat(),
        )
        .await;
    both.expect(4);
    assert!(
        both.stderr.contains("--customer-id") && both.stderr.contains("--engine-account-id"),
        "{}",
        both.stderr
    );
}

// ---- completions, manual page, help ----

/// The bash script, sourced in bash, completes the subcommands.
#[test]
fn bash_completion_completes_subcommands() {
    let apictl = Apictl::new();
    let run = apictl.run_sync(&["completions", "bash"]);
    run.expect(0);
    let script = apictl.dir().join("apictl.bash");
    std::fs::write(&script, &run.stdout).expect("script");
    let probe = format!(
        r#"source '{}'
spec=$(complete -p apictl) || exit 3
fn=$(printf '%s\n' "$spec" | sed -n 's/.*-F \([^ ]*\).*/\1/p')
[ -n "$fn" ] || exit 4
COMP_WORDS=(apictl ""); COMP_CWORD=1; COMP_LINE="apictl "; COMP_POINT=${{#COMP_LINE}}
"$fn" apictl "" apictl
printf '%s\n' "${{COMPREPLY[@]}}"
echo ---
COMP_WORDS=(apictl video ""); COMP_CWORD=2; COMP_LINE="apictl video "; COMP_POINT=${{#COMP_LINE}}
COMPREPLY=()
"$fn" apictl "" video
printf '%s\n' "${{COMPREPLY[@]}}"
"#,
        script.display()
    );
    let out = std::process::Command::new("bash")
        .args(["--noprofile", "--norc", "-c", &probe])
        .output()
        .expect("bash");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let (top, video) = stdout.split_once("---\n").expect("two parts");
    let top: Vec<&str> = top.lines().collect();
    for name in [
        "ads",
        "video",
        "auth",
        "tour",
        "sandbox",
        "completions",
        "man",
        "help",
    ] {
        assert!(top.contains(&name), "{name} not offered: {top:?}");
    }
    let video: Vec<&str> = video.lines().collect();
    for name in ["login", "invite", "lockout-status", "lockout-init"] {
        assert!(video.contains(&name), "{name} not offered: {video:?}");
    }
}

#[test]
fn every_shell_has_a_script() {
    for (shell, marker) in [
        ("bash", "complete -F"),
        ("zsh", "#compdef apictl"),
        ("fish", "complete -c apictl"),
        ("powershell", "Register-ArgumentCompleter"),
        ("elvish", "edit:completion"),
    ] {
        let run = Apictl::new().run_sync(&["completions", shell]);
        run.expect(0);
        assert!(
            run.stdout.contains(marker),
            "{shell}: {}",
            &run.stdout[..200.min(run.stdout.len())]
        );
    }
}

#[test]
fn the_manual_page_comes_from_the_same_definitions() {
    let run = Apictl::new().run_sync(&["man"]);
    run.expect(0);
    assert!(run.stdout.contains(".TH APICTL 1"), "{}", run.stdout);
    // Every top-level command is in it.
    for name in ["tour", "sandbox", "video", "ads", "auth", "completions"] {
        assert!(run.stdout.contains(name), "{name}");
    }
    let upload = Apictl::new().run_sync(&["man", "ads", "conversions", "upload"]);
    upload.expect(0);
    assert!(
        upload
            .stdout
            .contains(".TH APICTL-ADS-CONVERSIONS-UPLOAD 1"),
        "{}",
        upload.stdout
    );
    assert!(upload.stdout.contains("\\-\\-resume"), "{}", upload.stdout);
}

#[test]
fn help_subcommand_prints_the_commands_help() {
    let help = Apictl::new().run_sync(&["help", "video", "invite"]);
    help.expect(0);
    let flag = Apictl::new().run_sync(&["video", "invite", "--help"]);
    assert_eq!(help.stdout, flag.stdout);
    let top = Apictl::new().run_sync(&["--help"]);
    top.expect(0);
    assert!(top.stdout.contains("Exit status:"), "{}", top.stdout);
    assert!(top.stdout.contains("130  interrupted"), "{}", top.stdout);
}

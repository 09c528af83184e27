//! `apictl video` against the video fake: login, the lockout across separate
//! runs, invitations, and secrets that never reach the output.

use crate::common;

use common::Apictl;
use sa360_video_fakes::{DomainUser, FakeServices};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn login_keeps_a_private_session_and_invite_uses_it() {
    let services = FakeServices::start_default().await.expect("fakes");
    let apictl = Apictl::with_fakes(&services);

    let run = apictl
        .run(&["video", "invite", "--email", "guest@example.com"])
        .await;
    run.expect(5);
    assert!(
        run.stderr.contains("error: not logged in"),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains("hint: run `apictl video login`"),
        "{}",
        run.stderr
    );

    let run = apictl.run(&["video", "login"]).await;
    run.expect(0);
    assert!(
        run.stdout.starts_with("logged in as demo.user"),
        "{}",
        run.stdout
    );
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        for path in [
            apictl.state_dir().join("video-session.json"),
            apictl.lockout_path(),
        ] {
            if path.exists() {
                let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
                assert_eq!(mode, 0o600, "{}", path.display());
            }
        }
        let mode = std::fs::metadata(apictl.state_dir())
            .unwrap()
            .permissions()
            .mode()
            & 0o777;
        assert_eq!(mode, 0o700);
    }

    let run = apictl
        .run(&[
            "video",
            "invite",
            "--sms",
            "+1 201 555 0123",
            "--country",
            "us",
            "--message",
            "Your consultation is ready",
            "--mic",
            "on",
            "--camera",
            "front",
            "--observer",
            "--platform",
            "ask-user",
        ])
        .await;
    run.expect(0);
    assert!(
        run.stdout.contains("query string ?m=1&c=2&o=1&s=4"),
        "{}",
        run.stdout
    );
    let sent = services.video.outbox().last().expect("an invitation");
    assert_eq!(sent.invitation_type, 1);
    assert_eq!(sent.recipient.as_deref(), Some("+12015550123"));
    assert_eq!(sent.query_string.as_deref(), Some("?m=1&c=2&o=1&s=4"));
    assert_eq!(sent.message, "Your consultation is ready");

    let run = apictl
        .run(&[
            "--json",
            "video",
            "invite",
            "--whatsapp",
            "+919800000001",
            "--country",
            "IN",
        ])
        .await;
    run.expect(0);
    let json: serde_json::Value = serde_json::from_str(&run.stdout).expect("JSON");
    assert_eq!(json["invitationType"], 2);
    assert_eq!(json["channel"], "WhatsApp");
    assert_eq!(services.video.outbox().len(), 2);

    // A bad value is refused before any call, naming the flag.
    let run = apictl
        .run(&["video", "invite", "--email", "not-an-address"])
        .await;
    run.expect(4);
    assert!(run.stderr.contains("hint: fix --email"), "{}", run.stderr);
    assert_eq!(services.video.outbox().len(), 2);

    // Numbers are checked against the country's numbering plan before anything is sent
    // (issue 50): a UK number is not a US one, a US number has an area code, and the
    // service's `UK` is checked as ISO's GB and sent in E.164 with the code as given.
    for (number, country, says) in [
        ("+44 7700 900123", "US", "not of US"),
        (
            "+44 7400 123456",
            "US",
            "is a number of GB (+44), not of US",
        ),
        ("555-0199", "US", "is not a valid number of US"),
    ] {
        let run = apictl
            .run(&["video", "invite", "--sms", number, "--country", country])
            .await;
        run.expect(4);
        assert!(run.stderr.contains(says), "{number}: {}", run.stderr);
        assert!(
            run.stderr
                .contains("a US mobile number looks like +1 201-555-0123"),
            "{}",
            run.stderr
        );
        assert!(run.stderr.contains("--sms or --whatsapp"), "{}", run.stderr);
    }
    assert_eq!(services.video.outbox().len(), 2, "nothing was sent");
    let run = apictl
        .run(&[
            "video",
            "invite",
            "--sms",
            "07400 123456",
            "--country",
            "UK",
        ])
        .await;
    run.expect(0);
    let sent = services.video.outbox().last().expect("an invitation");
    assert_eq!(sent.recipient.as_deref(), Some("+447400123456"));
    assert!(run.stdout.contains("+447400123456 (UK)"), "{}", run.stdout);

    // The saved token is never sent to another service.
    let run = apictl
        .run(&[
            "video",
            "invite",
            "--email",
            "a@example.com",
            "--url",
            "http://127.0.0.1:9",
        ])
        .await;
    run.expect(4);
    assert!(run.stderr.contains("belongs to"), "{}", run.stderr);

    // A token the service no longer accepts is forgotten.
    services.video.revoke_user_tokens();
    let run = apictl
        .run(&["video", "invite", "--email", "a@example.com"])
        .await;
    run.expect(5);
    assert!(run.stderr.contains("log in again"), "{}", run.stderr);
    assert!(!apictl.state_dir().join("video-session.json").exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lockout_count_survives_separate_runs_and_refuses_the_sixth_attempt() {
    let services = FakeServices::start_default().await.expect("fakes");
    let apictl = Apictl::with_fakes(&services).env("VIDEO_PASSWORD", "wrong-password");
    let demo = services.video.demo().clone();
    let key = DomainUser::new(demo.domain_id, demo.user_name.clone());

    for attempt in 1..=5 {
        let run = apictl.run(&["video", "login"]).await;
        run.expect(5);
        assert!(
            run.stderr.contains("wrong user name or password"),
            "attempt {attempt}: {}",
            run.stderr
        );
        assert!(run.stderr.contains("\nhint: "), "{}", run.stderr);
    }
    let attempts_before = services.video.ledger().counts().login_attempts;

    // The sixth run is refused by apictl; nothing reaches the service, even
    // with the right password (the count says a failure would block).
    for password in ["wrong-password", demo.password.as_str()] {
        let run = apictl
            .run_with(&["video", "login"], &[("VIDEO_PASSWORD", password)])
            .await;
        run.expect(4);
        assert!(
            run.stderr.starts_with("error: login not sent"),
            "{}",
            run.stderr
        );
        assert!(
            run.stderr.contains("safe to try again at"),
            "{}",
            run.stderr
        );
        assert_eq!(run.stderr.lines().count(), 2, "{}", run.stderr);
    }
    assert_eq!(
        services.video.ledger().counts().login_attempts,
        attempts_before
    );
    let stats = services.video.ledger().account(&key).expect("stats");
    assert_eq!(stats.failures_total, 5);
    assert_eq!(stats.blocks_started, 0);
    assert!(!services.video.ledger().is_blocked(&key));

    // --json prints nothing on stdout for an error; the error stays on stderr.
    let json = apictl.run(&["--json", "video", "login"]).await;
    json.expect(4);
    assert!(json.stdout.is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_password_and_no_terminal_fails_with_a_hint() {
    let services = FakeServices::start_default().await.expect("fakes");
    let apictl = Apictl::with_fakes(&services).without("VIDEO_PASSWORD");
    let run = apictl.run(&["video", "login"]).await;
    run.expect(5);
    assert!(run.stderr.contains("error: no password"), "{}", run.stderr);
    assert!(
        run.stderr.contains("hint: set VIDEO_PASSWORD"),
        "{}",
        run.stderr
    );
    assert_eq!(services.video.ledger().counts().login_attempts, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn secrets_never_appear_in_verbose_logs_or_output() {
    let services = FakeServices::start_default().await.expect("fakes");
    let apictl = Apictl::with_fakes(&services);
    let demo = services.video.demo().clone();
    let dev_token = services.search_ads.dev_token().to_owned();
    let csv = common::sample_csv();
    let runs = [
        apictl.run(&["-vv", "video", "login"]).await,
        apictl.run(&["-vv", "--json", "video", "login"]).await,
        apictl
            .run(&[
                "-vv",
                "video",
                "invite",
                "--email",
                "guest@example.com",
                "--mic",
                "off",
            ])
            .await,
        apictl.run(&["-vvv", "ads", "saved-columns"]).await,
        apictl
            .run(&[
                "-vv",
                "ads",
                "conversions",
                "upload",
                csv.to_str().unwrap(),
                "--rejected",
                "r.csv",
            ])
            .await,
        apictl
            .run_with(
                &["-vv", "video", "login"],
                &[("VIDEO_PASSWORD", "wrong-and-secret")],
            )
            .await,
    ];
    let session = std::fs::read_to_string(apictl.state_dir().join("video-session.json"))
        .expect("session file");
    let session: serde_json::Value = serde_json::from_str(&session).expect("JSON");
    let user_token = session["user_token"].as_str().expect("token").to_owned();
    assert!(user_token.len() > 8);
    let secrets = [
        demo.password.as_str(),
        demo.secret_key.as_str(),
        user_token.as_str(),
        dev_token.as_str(),
        "wrong-and-secret",
    ];
    let mut logged = 0;
    for run in &runs {
        logged += run
            .stderr
            .lines()
            .filter(|l| l.contains("DEBUG") || l.contains("INFO"))
            .count();
        for secret in secrets {
            assert!(
                !run.stdout.contains(secret),
                "secret in stdout:\n{}",
                run.stdout
            );
            assert!(
                !run.stderr.contains(secret),
                "secret in stderr:\n{}",
                run.stderr
            );
        }
    }
    assert!(logged > 10, "expected verbose logs, got {logged} lines");
}

#[test]
fn tour_with_vv_logs_no_secret() {
    // The tour's fakes use the default seed, so their secrets are known here.
    let config = sa360_video_fakes::VideoSessionConfig::default();
    let run = Apictl::new().run_sync(&["-vv", "tour"]);
    run.expect(0);
    assert!(run.stderr.contains("DEBUG"), "no logs:\n{}", run.stderr);
    let mut secrets: Vec<&str> = vec!["fake-sa360-dev-token"];
    secrets.extend(config.users.iter().map(|u| u.password.as_str()));
    secrets.extend(config.domains.iter().map(|d| d.secret_key.as_str()));
    for secret in secrets {
        assert!(!run.stdout.contains(secret), "{secret} in stdout");
        assert!(!run.stderr.contains(secret), "{secret} in stderr");
    }
}

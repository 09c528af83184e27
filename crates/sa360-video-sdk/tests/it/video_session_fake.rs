//! The video session SDK against the in-process fake: lockout scenarios
//! (the fake's ledger shows the SDK's own attempts never block an account),
//! invitations landing in the outbox, and the typed errors.

use crate::video_session_support::{self, account, wrong};

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use sa360_video_fakes::video_session::Channel;
use sa360_video_fakes::{FakeClock, Faults, VideoSessionFake};
use sa360_video_sdk::http::BaseUrl;
use sa360_video_sdk::video_session::{
    CallExperience, Camera, Clock, Credentials, EmailAddress, Error, FileStore, Invitation, JoinAs,
    MemoryStore, Message, Microphone, MobileNumber, PlatformSupport, RefusalReason, SessionId,
    UndocumentedInvitation, UndocumentedType, VideoSessionClient,
};
use secrecy::ExposeSecret;

/// The SDK's clock reading the fake's driven clock, so both stay in step.
#[derive(Debug, Clone)]
struct FakeTime(FakeClock);

impl Clock for FakeTime {
    fn now(&self) -> SystemTime {
        self.0.system_now()
    }
}

async fn start() -> VideoSessionFake {
    VideoSessionFake::start_default().await.unwrap()
}

fn client(fake: &VideoSessionFake) -> VideoSessionClient {
    VideoSessionClient::builder(BaseUrl::parse(fake.base_url()).unwrap())
        .clock(Arc::new(FakeTime(fake.clock().clone())))
        // Each test its own count (every test's fake has the same demo
        // account), and nothing written to the developer's state directory.
        .lockout_store(Arc::new(MemoryStore::new()))
        .build()
        .unwrap()
}

fn right(fake: &VideoSessionFake) -> Credentials {
    let d = fake.demo();
    Credentials::new(
        d.secret_key.clone(),
        d.user_name.clone(),
        d.password.clone(),
    )
    .unwrap()
}

/// The fake's view: counted failures now, blocks ever started.
fn ledger(fake: &VideoSessionFake) -> (u32, u64) {
    let stats = fake.ledger().account(&account(fake)).unwrap_or_default();
    (stats.consecutive_failures, stats.blocks_started)
}

#[tokio::test]
async fn sequential_failures_stop_before_the_block_and_resume_after_the_window() {
    let fake = start().await;
    let client = client(&fake);
    for remaining in (0..5).rev() {
        match client.login(&wrong(&fake)).send().await {
            Err(Error::InvalidCredentials {
                failures_in_window,
                remaining_attempts,
                ..
            }) => {
                assert_eq!(remaining_attempts, remaining);
                assert_eq!(failures_in_window, 5 - remaining);
            }
            other => panic!("expected InvalidCredentials, got {other:?}"),
        }
    }
    assert_eq!(ledger(&fake), (5, 0));
    let attempts = fake.ledger().counts().login_attempts;

    // A sixth attempt could block the account: refused without a call, even
    // with the right password (the guard cannot know it is right).
    for creds in [wrong(&fake), right(&fake)] {
        let err = client.login(&creds).send().await.unwrap_err();
        let Error::LockoutRefused {
            reason,
            retry_after,
            ..
        } = &err
        else {
            panic!("expected LockoutRefused, got {err:?}")
        };
        assert_eq!(
            *reason,
            RefusalReason::BudgetExhausted {
                failures_in_window: 5,
                window: Duration::from_secs(600),
            }
        );
        // The window plus the 60 s safety margin.
        assert!(retry_after > &Duration::from_secs(650), "{err}");
        assert!(err.to_string().contains("safe to try again at"), "{err}");
    }
    assert_eq!(
        fake.ledger().counts().login_attempts,
        attempts,
        "a refused login was sent"
    );

    // Once the failures leave the 10-minute window and the margin, logins go out again.
    fake.clock().advance(Duration::from_secs(661));
    let session = client.login(&right(&fake)).send().await.unwrap();
    assert_eq!(session.user().domain_id, fake.demo().domain_id);
    assert_eq!(ledger(&fake), (0, 0));
    let status = client
        .lockout_guard()
        .status(&right(&fake).account_key())
        .await
        .unwrap();
    assert_eq!(
        (status.failures_in_window, status.remaining_attempts),
        (0, 5)
    );
    assert!(!fake.ledger().is_blocked(&account(&fake)));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fifty_concurrent_wrong_attempts_send_only_the_budget() {
    let fake = start().await;
    let client = Arc::new(client(&fake));
    let creds = Arc::new(wrong(&fake));
    let tasks: Vec<_> = (0..50)
        .map(|_| {
            let client = Arc::clone(&client);
            let creds = Arc::clone(&creds);
            tokio::spawn(async move { client.login(&creds).send().await })
        })
        .collect();
    let (mut invalid, mut refused) = (0, 0);
    for task in tasks {
        match task.await.unwrap() {
            Err(Error::InvalidCredentials { .. }) => invalid += 1,
            Err(Error::LockoutRefused { .. }) => refused += 1,
            other => panic!("unexpected {other:?}"),
        }
    }
    assert_eq!((invalid, refused), (5, 45));
    assert_eq!(fake.ledger().counts().login_attempts, 5);
    assert_eq!(ledger(&fake), (5, 0));
    assert!(!fake.ledger().is_blocked(&account(&fake)));
}

#[tokio::test]
async fn file_store_keeps_the_count_across_a_restart() {
    let fake = start().await;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("video-lockout.json");
    let with_file = || {
        VideoSessionClient::builder(BaseUrl::parse(fake.base_url()).unwrap())
            .clock(Arc::new(FakeTime(fake.clock().clone())))
            .lockout_store(Arc::new(FileStore::new(&path)))
            .build()
            .unwrap()
    };
    {
        let first = with_file();
        for _ in 0..3 {
            assert!(matches!(
                first.login(&wrong(&fake)).send().await,
                Err(Error::InvalidCredentials { .. })
            ));
        }
    } // the "process" ends

    let text = std::fs::read_to_string(&path).unwrap();
    let d = fake.demo();
    for secret in [&d.secret_key, &d.password, &d.user_name] {
        assert!(
            !text.contains(secret.as_str()),
            "the store file holds a secret"
        );
    }

    let second = with_file();
    let status = second
        .lockout_guard()
        .status(&wrong(&fake).account_key())
        .await
        .unwrap();
    assert_eq!(
        (status.failures_in_window, status.remaining_attempts),
        (3, 2)
    );
    for _ in 0..2 {
        assert!(matches!(
            second.login(&wrong(&fake)).send().await,
            Err(Error::InvalidCredentials { .. })
        ));
    }
    assert!(matches!(
        second.login(&right(&fake)).send().await,
        Err(Error::LockoutRefused { .. })
    ));
    assert_eq!(ledger(&fake), (5, 0));
    assert_eq!(fake.ledger().counts().login_attempts, 5);

    fake.clock().advance(Duration::from_secs(661));
    let third = with_file();
    third.login(&right(&fake)).send().await.unwrap();
    let status = third
        .lockout_guard()
        .status(&right(&fake).account_key())
        .await
        .unwrap();
    assert_eq!(status.failures_in_window, 0);
}

/// Another client (not the SDK) blocks the account; the SDK learns it from
/// the 423, sends nothing more until `Retry-After` has passed on the driven
/// clock, then logs in.
#[tokio::test]
async fn known_block_is_respected_until_it_expires() {
    let fake = start().await;
    let d = fake.demo().clone();
    // Built first: it installs the TLS crypto provider the plain client needs.
    let client = client(&fake);
    let other = reqwest::Client::new();
    for _ in 0..6 {
        other
            .post(format!("{}/api/login", fake.base_url()))
            .json(&serde_json::json!({"SecretKey": d.secret_key, "UserName": d.user_name, "Password": "guess"}))
            .send()
            .await
            .unwrap();
    }
    assert!(fake.ledger().is_blocked(&account(&fake)));

    let before = fake.clock().system_now();
    let err = client.login(&right(&fake)).send().await.unwrap_err();
    let Error::AccountBlocked { until } = err else {
        panic!("expected AccountBlocked, got {err:?}")
    };
    let wait = until.duration_since(before).unwrap();
    assert!(
        wait >= Duration::from_secs(599) && wait <= Duration::from_secs(602),
        "{wait:?}"
    );

    let sent = fake.ledger().counts().login_attempts;
    fake.clock().advance(Duration::from_secs(300));
    let err = client.login(&right(&fake)).send().await.unwrap_err();
    // The reported end plus the 60 s margin (the fake's clock runs in real
    // time between the two readings, hence the tolerance).
    let expected = until + Duration::from_secs(60);
    assert!(
        matches!(err, Error::LockoutRefused { reason: RefusalReason::KnownBlock, retry_at, .. }
            if retry_at >= expected - Duration::from_millis(50) && retry_at <= expected + Duration::from_millis(50)),
        "{err:?}"
    );
    assert_eq!(
        fake.ledger().counts().login_attempts,
        sent,
        "sent during a known block"
    );

    fake.clock().advance(Duration::from_secs(361));
    client.login(&right(&fake)).send().await.unwrap();
    // The only block is the other client's.
    assert_eq!(ledger(&fake), (0, 1));
}

#[tokio::test]
async fn secret_key_and_domain_errors_are_typed_and_do_not_count() {
    let fake = start().await;
    let client = client(&fake);
    let d = fake.demo().clone();
    let bad_key = Credentials::new("sk-nope", d.user_name.clone(), d.password.clone()).unwrap();
    for _ in 0..8 {
        assert!(matches!(
            client.login(&bad_key).send().await,
            Err(Error::InvalidSecretKey)
        ));
    }
    let status = client
        .lockout_guard()
        .status(&bad_key.account_key())
        .await
        .unwrap();
    assert_eq!(status.failures_in_window, 0);
    let inactive = Credentials::new(
        d.inactive_secret_key.clone().unwrap(),
        d.inactive_user_name.clone().unwrap(),
        d.inactive_password.clone().unwrap(),
    )
    .unwrap();
    let err = client.login(&inactive).send().await.unwrap_err();
    assert!(matches!(err, Error::DomainInactive), "{err:?}");
    assert!(err.to_string().contains("administrator"));
    assert_eq!(
        client
            .lockout_guard()
            .status(&inactive.account_key())
            .await
            .unwrap()
            .failures_in_window,
        0
    );
}

#[tokio::test]
async fn unknown_outcomes_count_as_failures() {
    let fake = start().await;
    let client = client(&fake);
    fake.set_faults(Faults::seeded(1).with_drop_before_response(1.0))
        .unwrap();
    let err = client.login(&right(&fake)).send().await.unwrap_err();
    assert!(matches!(err, Error::Transport(_)), "{err:?}");
    fake.set_faults(Faults::seeded(2).with_internal_error(1.0))
        .unwrap();
    let err = client.login(&right(&fake)).send().await.unwrap_err();
    assert!(
        matches!(err, Error::Rejected { status: 500, .. }),
        "{err:?}"
    );
    let status = client
        .lockout_guard()
        .status(&right(&fake).account_key())
        .await
        .unwrap();
    assert_eq!(status.failures_in_window, 2);
    fake.clear_faults();
    client.login(&right(&fake)).send().await.unwrap();
    // The success clears the 500 (answered before it was sent), not the
    // dropped request: the service may still process that one after it.
    assert_eq!(
        client
            .lockout_guard()
            .status(&right(&fake).account_key())
            .await
            .unwrap()
            .failures_in_window,
        1
    );
}

#[tokio::test]
async fn invitations_land_in_the_outbox() {
    let fake = start().await;
    let client = client(&fake);
    let session = client.login(&right(&fake)).send().await.unwrap();
    let sid = SessionId::new(fake.demo().session_id.clone()).unwrap();
    let mobile = MobileNumber::new("us".parse().unwrap(), "+1 201 555 0123").unwrap();
    let email = EmailAddress::new("guest@example.com").unwrap();
    let full = CallExperience::new()
        .microphone(Microphone::On)
        .camera(Camera::Back)
        .join_as(JoinAs::Guest)
        .platform_support(PlatformSupport::AskUser);

    let receipt = client
        .send_invitation(
            &session,
            sid.clone(),
            Invitation::Sms {
                to: mobile.clone(),
                message: Some(Message::new("Bitte beitreten – jetzt").unwrap()),
            },
        )
        .experience(full)
        .send()
        .await
        .unwrap();
    assert_eq!(receipt.invitation_type, Some(1));
    client
        .send_invitation(
            &session,
            sid.clone(),
            Invitation::WhatsApp { to: mobile.clone() },
        )
        .experience(CallExperience::new().silent_observer())
        .send()
        .await
        .unwrap();
    client
        .send_invitation(
            &session,
            sid.clone(),
            Invitation::Email {
                to: email.clone(),
                message: None,
            },
        )
        .send()
        .await
        .unwrap();
    client
        .send_invitation(
            &session,
            sid.clone(),
            Invitation::Undocumented(
                UndocumentedInvitation::new(UndocumentedType::Five).email(email.clone()),
            ),
        )
        .send()
        .await
        .unwrap();

    let outbox = fake.outbox().entries();
    assert_eq!(outbox.len(), 4);
    let sms = &outbox[0];
    assert_eq!(sms.channel, Channel::Sms);
    assert_eq!(sms.recipient.as_deref(), Some("+12015550123"));
    assert_eq!(sms.iso_code.as_deref(), Some("US"));
    assert_eq!(sms.message, "Bitte beitreten – jetzt");
    assert_eq!(sms.query_string.as_deref(), Some("?m=1&c=1&o=0&s=4"));
    assert!(
        sms.link.ends_with(&format!("/join/{sid}?m=1&c=1&o=0&s=4")),
        "{}",
        sms.link
    );
    assert_eq!(sms.sent_by, fake.demo().user_name);
    assert_eq!(outbox[1].channel, Channel::WhatsApp);
    assert_eq!(outbox[1].message, fake.config().whatsapp_text);
    assert_eq!(outbox[1].query_string.as_deref(), Some("?o=1"));
    assert_eq!(outbox[2].channel, Channel::Email);
    assert_eq!(outbox[2].recipient.as_deref(), Some("guest@example.com"));
    assert_eq!(outbox[2].query_string, None);
    assert_eq!(outbox[3].channel, Channel::Undocumented(5));

    // Type 6 is above the declared maximum: the service refuses it, naming the field.
    let err = client
        .send_invitation(
            &session,
            sid.clone(),
            Invitation::Undocumented(UndocumentedInvitation::new(UndocumentedType::Six)),
        )
        .send()
        .await
        .unwrap_err();
    assert!(
        matches!(&err, Error::Rejected { status: 400, field: Some(f), .. } if f == "InvitationType"),
        "{err:?}"
    );

    let err = client
        .send_invitation(
            &session,
            SessionId::new("sess-missing").unwrap(),
            Invitation::WhatsApp { to: mobile.clone() },
        )
        .send()
        .await
        .unwrap_err();
    assert!(
        matches!(&err, Error::SessionNotFound { session_id } if session_id == "sess-missing"),
        "{err:?}"
    );

    fake.revoke_user_tokens();
    let err = client
        .send_invitation(&session, sid.clone(), Invitation::WhatsApp { to: mobile })
        .send()
        .await
        .unwrap_err();
    assert!(matches!(err, Error::Unauthorized), "{err:?}");
    assert!(err.to_string().contains("log in again"));
    assert_eq!(fake.outbox().len(), 4);
}

/// A full flow against the fake with TRACE logging captured: no secret in any
/// log line or formatted error.
#[tokio::test(flavor = "current_thread")]
async fn no_secret_in_logs_or_errors_against_the_fake() {
    let logs = video_session_support::TraceCapture::start();
    let fake = start().await;
    let client = client(&fake);
    let mut formatted = String::new();
    for _ in 0..6 {
        let e = client.login(&wrong(&fake)).send().await.unwrap_err();
        formatted.push_str(&format!("{e}\n{e:?}\n"));
    }
    fake.clock().advance(Duration::from_secs(661));
    let session = client.login(&right(&fake)).send().await.unwrap();
    formatted.push_str(&format!("{session:?}\n"));
    let sid = SessionId::new(fake.demo().session_id.clone()).unwrap();
    let invitation = Invitation::Email {
        to: "guest@example.com".parse().unwrap(),
        message: None,
    };
    client
        .send_invitation(&session, sid.clone(), invitation.clone())
        .send()
        .await
        .unwrap();
    fake.revoke_user_tokens();
    let e = client
        .send_invitation(&session, sid.clone(), invitation.clone())
        .send()
        .await
        .unwrap_err();
    formatted.push_str(&format!("{e}\n{e:?}\n"));

    let d = fake.demo();
    let token = session.user_token().expose_secret().to_owned();
    let refresh = session.refresh_token().unwrap().expose_secret().to_owned();
    let logged = logs.text();
    assert!(logged.contains("invitation sent"), "{logged}");
    for secret in [&d.secret_key, &d.password, &token, &refresh] {
        assert!(
            !logged.contains(secret.as_str()),
            "a secret is in the logs:\n{logged}"
        );
        assert!(
            !formatted.contains(secret.as_str()),
            "a secret is in an error:\n{formatted}"
        );
    }
}

/// Reproduction 4 (in one process): clients built per request over
/// `MemoryStore::shared` share one count, so 20 such clients send only the
/// budget. (The only test of this binary on the shared store; the default
/// store, a per-user file, is tested in `video_session_default_store.rs`.)
#[tokio::test]
async fn clients_built_per_request_share_one_count() {
    let fake = start().await;
    let (mut invalid, mut refused) = (0, 0);
    for _ in 0..20 {
        let client = VideoSessionClient::builder(BaseUrl::parse(fake.base_url()).unwrap())
            .clock(Arc::new(FakeTime(fake.clock().clone())))
            .lockout_store(MemoryStore::shared())
            .build()
            .unwrap();
        match client.login(&wrong(&fake)).send().await {
            Err(Error::InvalidCredentials { .. }) => invalid += 1,
            Err(Error::LockoutRefused { .. }) => refused += 1,
            other => panic!("unexpected {other:?}"),
        }
    }
    assert_eq!((invalid, refused), (5, 15));
    assert_eq!(ledger(&fake), (5, 0));
}

/// A store that fails after the reservation: the service's own answer is
/// returned (not a store error), and a reported block is still honoured.
#[tokio::test]
async fn a_store_failing_after_the_send_keeps_the_service_answer() {
    let fake = start().await;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("state").join("lockout.json");
    let client = VideoSessionClient::builder(BaseUrl::parse(fake.base_url()).unwrap())
        .clock(Arc::new(FakeTime(fake.clock().clone())))
        .lockout_store(Arc::new(FileStore::new(&path)))
        .build()
        .unwrap();
    // Block the account with another client first.
    let d = fake.demo().clone();
    let other = reqwest::Client::new();
    for _ in 0..6 {
        other
            .post(format!("{}/api/login", fake.base_url()))
            .json(&serde_json::json!({"SecretKey": d.secret_key, "UserName": d.user_name, "Password": "guess"}))
            .send()
            .await
            .unwrap();
    }
    // The reservation is written, then the file becomes unreadable garbage
    // while the request is in flight: simulated by corrupting it from a
    // second task as soon as the file exists.
    let corrupt_path = path.clone();
    let corrupter = tokio::spawn(async move {
        loop {
            if corrupt_path.exists() {
                // Replaced whole, as the store writes it: a 0600 temporary file renamed over it.
                let dir = corrupt_path.parent().unwrap();
                let mut garbage = tempfile::NamedTempFile::new_in(dir).unwrap();
                std::io::Write::write_all(&mut garbage, b"garbage\n").unwrap();
                garbage.persist(&corrupt_path).unwrap();
                break;
            }
            tokio::task::yield_now().await;
        }
    });
    let err = client.login(&right(&fake)).send().await.unwrap_err();
    corrupter.await.unwrap();
    assert!(matches!(err, Error::AccountBlocked { .. }), "{err:?}");
    let sent = fake.ledger().counts().login_attempts;
    let again = client.login(&right(&fake)).send().await.unwrap_err();
    assert!(
        matches!(
            again,
            Error::LockoutRefused {
                reason: RefusalReason::KnownBlock,
                ..
            }
        ),
        "{again:?}"
    );
    assert_eq!(fake.ledger().counts().login_attempts, sent);
}

/// A clone shares its original's lockout count: wrong logins alternating
/// between a client and its clone stop at the same budget as one client's
/// (a clone with a budget of its own would send the login that blocks).
#[tokio::test]
async fn a_clone_shares_the_lockout_count() {
    let fake = start().await;
    let first = client(&fake);
    let second = first.clone();
    assert!(Arc::ptr_eq(first.lockout_guard(), second.lockout_guard()));
    let mut sent = 0;
    for i in 0..8 {
        let c = if i % 2 == 0 { &first } else { &second };
        match c.login(&wrong(&fake)).send().await {
            Err(Error::InvalidCredentials { .. }) => sent += 1,
            Err(Error::LockoutRefused { .. }) => {}
            other => panic!("login {i}: {other:?}"),
        }
    }
    assert_eq!(sent, 5, "the guard let {sent} wrong logins through");
    assert_eq!(ledger(&fake), (5, 0), "the fake counted or blocked");
}

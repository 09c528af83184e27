//! Behaviour of the video session fake: login, lockout on the driven clock, invitations, outbox.

use crate::common;

use std::time::Duration;

use common::{client, invitation_request, json, saved_columns_url};
use sa360_video_fakes::video_session::Channel;
use sa360_video_fakes::{DomainUser, VideoSessionFake};
use serde_json::{Value, json};

async fn login(fake: &VideoSessionFake, secret: &str, user: &str, password: &str) -> (u16, Value) {
    json(
        client()
            .post(format!("{}/api/login", fake.base_url()))
            .json(&json!({"SecretKey": secret, "UserName": user, "Password": password})),
    )
    .await
}

async fn demo_login(fake: &VideoSessionFake, password: &str) -> (u16, Value) {
    let demo = fake.demo().clone();
    login(fake, &demo.secret_key, &demo.user_name, password).await
}

#[tokio::test]
async fn login_returns_every_field() {
    let fake = VideoSessionFake::start_default().await.unwrap();
    let demo = fake.demo().clone();
    let (status, body) = demo_login(&fake, &demo.password).await;
    assert_eq!(status, 200, "{body}");
    let user_id = body["UserId"].as_str().unwrap();
    assert_eq!(uuid::Uuid::parse_str(user_id).unwrap().get_version_num(), 4);
    for field in [
        "FirstName",
        "LastName",
        "ProfileImage",
        "CountryCode",
        "PhoneNo",
        "JobRole",
        "DomainName",
        "UserName",
        "NotificationEmail",
        "RoleCode",
        "UserToken",
        "RefreshToken",
    ] {
        assert!(
            body[field].as_str().is_some_and(|s| !s.is_empty()),
            "{field}"
        );
    }
    assert_eq!(body["DomainId"], demo.domain_id);
    assert_eq!(body["UserName"], demo.user_name.as_str());
    assert!(body["LoginId"].is_i64());
    assert_eq!(body.as_object().unwrap().len(), 15);
    let (_, again) = demo_login(&fake, &demo.password).await;
    assert_ne!(again["UserToken"], body["UserToken"]);
    assert_eq!(
        again["LoginId"].as_i64().unwrap(),
        body["LoginId"].as_i64().unwrap() + 1
    );
    let stats = fake
        .ledger()
        .account(&DomainUser::new(demo.domain_id, demo.user_name.clone()))
        .unwrap();
    assert_eq!(stats.successful_logins, 2);
    assert_eq!(fake.ledger().counts().logins_succeeded, 2);
}

#[tokio::test]
async fn login_errors_follow_vs2() {
    let fake = VideoSessionFake::start_default().await.unwrap();
    let demo = fake.demo().clone();
    let (status, body) = login(&fake, "sk-wrong", &demo.user_name, &demo.password).await;
    assert_eq!(
        (status, body["Code"].as_str()),
        (401, Some("InvalidSecretKey"))
    );
    let inactive = demo.inactive_secret_key.clone().unwrap();
    let (status, body) = login(
        &fake,
        &inactive,
        demo.inactive_user_name.as_deref().unwrap(),
        demo.inactive_password.as_deref().unwrap(),
    )
    .await;
    assert_eq!(
        (status, body["Code"].as_str()),
        (403, Some("DomainInactive"))
    );
    let (status, body) = login(&fake, &demo.secret_key, "nobody", "x").await;
    assert_eq!(
        (status, body["Code"].as_str()),
        (401, Some("InvalidCredentials"))
    );
    let (status, body) = demo_login(&fake, "wrong").await;
    assert_eq!(
        (status, body["Code"].as_str()),
        (401, Some("InvalidCredentials"))
    );
    assert!(body["Field"].is_null() && body["RetryAfterSeconds"].is_null());
    // Closed request schema and required fields.
    let url = format!("{}/api/login", fake.base_url());
    for (request, field) in [
        (json!({"SecretKey": "a", "UserName": "b"}), Some("Password")),
        (
            json!({"SecretKey": "a", "UserName": "b", "Password": "c", "Remember": true}),
            Some("Remember"),
        ),
        (
            json!({"SecretKey": 1, "UserName": "b", "Password": "c"}),
            Some("SecretKey"),
        ),
        (json!(["not", "an", "object"]), None),
    ] {
        let (status, body) = json(client().post(&url).json(&request)).await;
        assert_eq!(status, 400, "{request}");
        assert_eq!(body["Code"], "ValidationFailed");
        assert_eq!(body["Field"].as_str(), field, "{request}");
    }
    // Wrong secret keys, inactive domains and unknown users count for nobody (VS-3).
    let accounts = fake.ledger().accounts();
    assert_eq!(accounts.len(), 1, "{accounts:?}");
    assert_eq!(accounts[0].1.failures_total, 1);
}

#[tokio::test]
async fn sixth_wrong_password_blocks_for_ten_minutes_of_driven_clock() {
    let fake = VideoSessionFake::start_default().await.unwrap();
    let demo = fake.demo().clone();
    let key = DomainUser::new(demo.domain_id, demo.user_name.clone());
    for attempt in 1..=5 {
        let (status, body) = demo_login(&fake, "wrong").await;
        assert_eq!(
            (status, body["Code"].as_str()),
            (401, Some("InvalidCredentials")),
            "{attempt}"
        );
    }
    assert_eq!(fake.ledger().account(&key).unwrap().consecutive_failures, 5);
    let response = client()
        .post(format!("{}/api/login", fake.base_url()))
        .json(
            &json!({"SecretKey": demo.secret_key, "UserName": demo.user_name, "Password": "wrong"}),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 423);
    assert_eq!(response.headers()["retry-after"], "600");
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["Code"], "AccountBlocked");
    assert_eq!(body["RetryAfterSeconds"], 600);
    // The right password is refused during the block, without extending it.
    fake.clock().advance(Duration::from_secs(300));
    let (status, body) = demo_login(&fake, &demo.password).await;
    assert_eq!(status, 423);
    assert_eq!(body["RetryAfterSeconds"], 300);
    fake.clock().advance(Duration::from_secs(299));
    let (status, body) = demo_login(&fake, &demo.password).await;
    assert_eq!((status, body["RetryAfterSeconds"].as_i64()), (423, Some(1)));
    let stats = fake.ledger().account(&key).unwrap();
    assert_eq!(stats.failures_total, 6);
    assert_eq!(stats.blocks_started, 1);
    assert_eq!(stats.rejected_while_blocked, 2);
    assert!(stats.blocked_for.is_some());
    assert!(fake.ledger().is_blocked(&key));
    // Once the driven clock passes 10 minutes the block ends and the count starts over.
    fake.clock().advance(Duration::from_secs(2));
    assert!(!fake.ledger().is_blocked(&key));
    let (status, _) = demo_login(&fake, &demo.password).await;
    assert_eq!(status, 200);
    let stats = fake.ledger().account(&key).unwrap();
    assert_eq!(stats.successful_logins, 1);
    assert_eq!(stats.consecutive_failures, 0);
    // Another user of the same domain was never affected.
    let second = &fake.config().users[1];
    let (status, _) = login(&fake, &demo.secret_key, &second.user_name, &second.password).await;
    assert_eq!(status, 200);
}

#[tokio::test]
async fn failures_slide_out_of_the_window_and_success_clears_them() {
    let fake = VideoSessionFake::start_default().await.unwrap();
    let demo = fake.demo().clone();
    let key = DomainUser::new(demo.domain_id, demo.user_name.clone());
    for _ in 0..3 {
        demo_login(&fake, "wrong").await;
    }
    fake.clock().advance(Duration::from_secs(301));
    for _ in 0..2 {
        demo_login(&fake, "wrong").await;
    }
    // The first three are more than 10 minutes old after this: 2 + 4 = 6 only inside 10 minutes
    // would block, so the 6th total failure must not.
    fake.clock().advance(Duration::from_secs(300));
    assert_eq!(fake.ledger().account(&key).unwrap().consecutive_failures, 2);
    for attempt in 0..3 {
        let (status, _) = demo_login(&fake, "wrong").await;
        assert_eq!(status, 401, "attempt {attempt}");
    }
    assert_eq!(fake.ledger().account(&key).unwrap().consecutive_failures, 5);
    // A success clears the count: five more failures are needed again.
    let (status, _) = demo_login(&fake, &demo.password).await;
    assert_eq!(status, 200);
    for _ in 0..5 {
        let (status, _) = demo_login(&fake, "wrong").await;
        assert_eq!(status, 401);
    }
    let (status, _) = demo_login(&fake, "wrong").await;
    assert_eq!(status, 423);
    let stats = fake.ledger().account(&key).unwrap();
    assert_eq!((stats.failures_total, stats.blocks_started), (14, 1));
}

async fn token(fake: &VideoSessionFake) -> String {
    let (status, body) = demo_login(fake, &fake.demo().password.clone()).await;
    assert_eq!(status, 200);
    body["UserToken"].as_str().unwrap().to_owned()
}

async fn invite(
    fake: &VideoSessionFake,
    token: Option<&str>,
    session: &str,
    body: Value,
) -> (u16, Value) {
    json(invitation_request(fake, session, token, &body)).await
}

#[tokio::test]
async fn invitations_land_in_the_outbox() {
    let fake = VideoSessionFake::start_default().await.unwrap();
    let token = token(&fake).await;
    let session = fake.demo().session_id.clone();
    let (status, body) = invite(
        &fake,
        Some(&token),
        &session,
        json!({"InvitationType": 1, "MobileNo": "+15551234567", "IsoCode": "US", "Message": "Join us", "QueryStringParameter": "?m=1&c=2"}),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        body,
        json!({"InvitationType": 1, "IsoCode": "US", "MobileNo": "+15551234567", "EmailAddress": null, "Message": "Join us", "QueryStringParameter": "?m=1&c=2"})
    );
    let (status, body) = invite(
        &fake,
        Some(&token),
        &session,
        json!({"InvitationType": 2, "MobileNo": "919876543210", "IsoCode": "IN", "Message": "my own text that is ignored anyway, even when it is much longer than one hundred characters in total"}),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    let fixed = fake.config().whatsapp_text.clone();
    assert_eq!(body["Message"], fixed.as_str());
    let (status, _) = invite(
        &fake,
        Some(&token),
        &session,
        json!({"InvitationType": 3, "EmailAddress": "guest@example.com", "Message": null}),
    )
    .await;
    assert_eq!(status, 200);
    let (status, _) = invite(&fake, Some(&token), &session, json!({"InvitationType": 4})).await;
    assert_eq!(status, 200);

    let entries = fake.outbox().entries();
    assert_eq!(entries.len(), 4);
    let sms = &entries[0];
    assert_eq!(sms.channel, Channel::Sms);
    assert_eq!(sms.recipient.as_deref(), Some("+15551234567"));
    assert_eq!(sms.message, "Join us");
    assert_eq!(
        sms.link,
        format!("{}/join/{session}?m=1&c=2", fake.base_url())
    );
    assert_eq!(sms.sent_by, fake.demo().user_name);
    let whatsapp = &entries[1];
    assert_eq!(whatsapp.channel, Channel::WhatsApp);
    assert_eq!(whatsapp.message, fixed);
    assert_eq!(whatsapp.link, format!("{}/join/{session}", fake.base_url()));
    let email = &entries[2];
    assert_eq!(email.channel, Channel::Email);
    assert_eq!(email.recipient.as_deref(), Some("guest@example.com"));
    assert_eq!(email.message, fake.config().default_message);
    assert_eq!(entries[3].channel, Channel::Undocumented(4));
    assert_eq!(fake.ledger().counts().invitations_sent, 4);
    assert_eq!(fake.outbox().take().len(), 4);
    assert!(fake.outbox().is_empty());
}

#[tokio::test]
async fn invitation_validation_rejects_with_the_field() {
    let fake = VideoSessionFake::start_default().await.unwrap();
    let token = token(&fake).await;
    let session = fake.demo().session_id.clone();
    let long_message = "x".repeat(101);
    let long_email = format!("{}@example.com", "a".repeat(244));
    let cases = [
        (json!({}), "InvitationType"),
        (json!({"InvitationType": 6}), "InvitationType"),
        (json!({"InvitationType": 0}), "InvitationType"),
        (json!({"InvitationType": "1"}), "InvitationType"),
        (json!({"InvitationType": 1, "IsoCode": "US"}), "MobileNo"),
        (
            json!({"InvitationType": 1, "MobileNo": "5551234567"}),
            "IsoCode",
        ),
        (
            json!({"InvitationType": 2, "MobileNo": "5551234567"}),
            "IsoCode",
        ),
        (
            json!({"InvitationType": 1, "MobileNo": "5551234567", "IsoCode": "US", "EmailAddress": "a@b.co"}),
            "EmailAddress",
        ),
        (json!({"InvitationType": 3}), "EmailAddress"),
        (
            json!({"InvitationType": 3, "EmailAddress": "a@b.co", "MobileNo": "5551234567"}),
            "MobileNo",
        ),
        (
            json!({"InvitationType": 3, "EmailAddress": "a@b.co", "IsoCode": "US"}),
            "IsoCode",
        ),
        (
            json!({"InvitationType": 1, "MobileNo": "555-1234", "IsoCode": "US"}),
            "MobileNo",
        ),
        (
            json!({"InvitationType": 1, "MobileNo": "12345", "IsoCode": "US"}),
            "MobileNo",
        ),
        (
            json!({"InvitationType": 1, "MobileNo": "5551234567", "IsoCode": "us"}),
            "IsoCode",
        ),
        (
            json!({"InvitationType": 1, "MobileNo": "5551234567", "IsoCode": "USA"}),
            "IsoCode",
        ),
        (
            json!({"InvitationType": 3, "EmailAddress": "not-an-address"}),
            "EmailAddress",
        ),
        (
            json!({"InvitationType": 3, "EmailAddress": long_email}),
            "EmailAddress",
        ),
        (
            json!({"InvitationType": 3, "EmailAddress": "a@b.co", "Message": long_message}),
            "Message",
        ),
        (
            json!({"InvitationType": 3, "EmailAddress": "a@b.co", "QueryStringParameter": "?m=1&m=0"}),
            "QueryStringParameter",
        ),
        (
            json!({"InvitationType": 3, "EmailAddress": "a@b.co", "QueryStringParameter": "?c=3"}),
            "QueryStringParameter",
        ),
        (
            json!({"InvitationType": 3, "EmailAddress": "a@b.co", "QueryStringParameter": "m=1"}),
            "QueryStringParameter",
        ),
        (
            json!({"InvitationType": 3, "EmailAddress": "a@b.co", "Extra": 1}),
            "Extra",
        ),
        (
            json!({"InvitationType": 3, "EmailAddress": 7}),
            "EmailAddress",
        ),
    ];
    for (request, field) in cases {
        let (status, body) = invite(&fake, Some(&token), &session, request.clone()).await;
        assert_eq!(status, 400, "{request}: {body}");
        assert_eq!(body["Code"], "ValidationFailed", "{request}");
        assert_eq!(body["Field"], field, "{request}");
        assert!(body["Message"].as_str().is_some_and(|m| !m.is_empty()));
    }
    // 100 characters (not bytes) are fine; an empty query string is no parameter.
    let (status, body) = invite(
        &fake,
        Some(&token),
        &session,
        json!({"InvitationType": 3, "EmailAddress": "a@b.co", "Message": "é".repeat(100), "QueryStringParameter": ""}),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["QueryStringParameter"], Value::Null);
    assert_eq!(fake.outbox().len(), 1);
}

#[tokio::test]
async fn invitation_needs_a_token_and_a_session() {
    let fake = VideoSessionFake::start_default().await.unwrap();
    let session = fake.demo().session_id.clone();
    let body = json!({"InvitationType": 3, "EmailAddress": "guest@example.com"});
    let (status, answer) = invite(&fake, None, &session, body.clone()).await;
    assert_eq!(
        (status, answer["Code"].as_str()),
        (401, Some("Unauthorized"))
    );
    let (status, answer) = invite(&fake, Some("ut_forged"), &session, body.clone()).await;
    assert_eq!(
        (status, answer["Code"].as_str()),
        (401, Some("Unauthorized"))
    );
    let token = token(&fake).await;
    let (status, answer) = invite(&fake, Some(&token), "sess-unknown", body.clone()).await;
    assert_eq!(
        (status, answer["Code"].as_str()),
        (404, Some("SessionNotFound"))
    );
    fake.add_session("sess-added");
    let (status, _) = invite(&fake, Some(&token), "sess-added", body.clone()).await;
    assert_eq!(status, 200);
    fake.revoke_user_tokens();
    let (status, _) = invite(&fake, Some(&token), &session, body).await;
    assert_eq!(status, 401);
    assert_eq!(fake.ledger().counts().unauthorized, 3);
    assert_eq!(fake.outbox().len(), 1);
}

#[tokio::test]
async fn seeds_change_the_demo_data_deterministically() {
    let a = VideoSessionFake::builder().seed(7).start().await.unwrap();
    let b = VideoSessionFake::builder().seed(7).start().await.unwrap();
    let c = VideoSessionFake::builder().seed(8).start().await.unwrap();
    assert_eq!(a.demo(), b.demo());
    assert_ne!(a.demo().secret_key, c.demo().secret_key);
    assert_ne!(a.demo().password, c.demo().password);
}

#[tokio::test]
async fn fake_services_start_both_with_one_clock() {
    let services = sa360_video_fakes::FakeServices::start_default()
        .await
        .unwrap();
    let script = services.env_script();
    assert!(script.starts_with("SEARCH_ADS_URL=http://127.0.0.1:"));
    assert!(script.contains(&format!(
        "VIDEO_SESSION_ID={}\n",
        services.video.demo().session_id
    )));
    let video = &services.video;
    for _ in 0..6 {
        demo_login(video, "wrong").await;
    }
    let (status, _) = demo_login(video, &video.demo().password.clone()).await;
    assert_eq!(status, 423);
    let token = services.search_ads.issue_token();
    // Advancing the shared clock ends the block and expires the search ads token alike.
    services.clock().advance(Duration::from_secs(3601));
    let (status, _) = demo_login(video, &video.demo().password.clone()).await;
    assert_eq!(status, 200);
    let url = saved_columns_url(&services.search_ads);
    let (status, _) = json(client().get(url).bearer_auth(token)).await;
    assert_eq!(status, 401);
    services.shutdown().await;
}

/// The `host:port` of a fake's base URL.
fn authority(base_url: &str) -> String {
    base_url
        .trim_start_matches("http://")
        .split('/')
        .next()
        .unwrap_or_default()
        .to_owned()
}

/// The fakes' shutdown grace period (`server::GRACE`).
const GRACE: Duration = Duration::from_secs(2);

// Time is paused: tokio's clock moves only when every task waits for a timer, after the I/O that is
// ready has been handled. So the durations measured here are the fakes' own timers (the grace
// period), never the speed of the machine, and the test cannot fail on a slow or loaded machine.
#[tokio::test(start_paused = true)]
async fn fake_services_stop_together_and_at_once_when_idle() {
    use tokio::io::AsyncWriteExt as _;
    use tokio::time::Instant;

    // Idle keep-alive connections close at once: no grace period is spent.
    let services = sa360_video_fakes::FakeServices::start_default()
        .await
        .unwrap();
    let (status, _) = demo_login(&services.video, "wrong").await;
    assert_eq!(status, 401);
    let idle = tokio::net::TcpStream::connect(authority(services.search_ads.base_url()))
        .await
        .unwrap();
    let started = Instant::now();
    services.shutdown().await;
    assert!(
        started.elapsed() < GRACE,
        "idle shutdown waited for the grace period: {:?}",
        started.elapsed()
    );
    drop(idle);

    // A request that never completes holds each fake for its grace period, spent by both fakes at
    // the same time: one grace period in all, not two.
    let services = sa360_video_fakes::FakeServices::start_default()
        .await
        .unwrap();
    let mut stalled = Vec::new();
    for base in [services.search_ads.base_url(), services.video.base_url()] {
        let mut stream = tokio::net::TcpStream::connect(authority(base))
            .await
            .unwrap();
        stream
            .write_all(b"POST /api/login HTTP/1.1\r\nHost: fake\r\n")
            .await
            .unwrap();
        stalled.push(stream);
    }
    // Lets both servers accept and start reading (virtual time: this does not wait for real).
    tokio::time::sleep(Duration::from_millis(50)).await;
    let started = Instant::now();
    services.shutdown().await;
    let took = started.elapsed();
    assert!(
        took >= GRACE && took < 2 * GRACE,
        "stalled shutdown took {took:?}"
    );
}

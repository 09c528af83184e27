//! Redirects: a cross-origin redirect is never followed, so neither the
//! `UserToken` header nor the login body reaches the other origin; a
//! same-origin redirect is followed.

use crate::video_session_support;

use sa360_video_sdk::http::BaseUrl;
use sa360_video_sdk::video_session::{
    Credentials, EmailAddress, Error, Invitation, MemoryStore, SessionId, VideoSessionClient,
};
use serde_json::json;
use video_session_support::{Canned, Captured, RecordingServer};

const USER_TOKEN: &str = "ut-redirect-secret-token";

fn login_ok() -> Canned {
    Canned::json(
        200,
        json!({"UserId": "3f2504e0-4f89-11d3-9a0c-0305e82c3301", "DomainId": 1, "LoginId": 2, "UserToken": USER_TOKEN}),
    )
}

fn invitation() -> Invitation {
    Invitation::Email {
        to: EmailAddress::new("guest@example.com").unwrap(),
        message: None,
    }
}

fn client(server: &RecordingServer) -> VideoSessionClient {
    VideoSessionClient::builder(BaseUrl::parse(&server.base_url()).unwrap())
        .lockout_store(std::sync::Arc::new(MemoryStore::new()))
        .build()
        .unwrap()
}

#[tokio::test]
async fn cross_origin_redirect_of_an_invitation_does_not_carry_the_token() {
    let elsewhere = RecordingServer::start(|_| Canned::json(200, json!({})))
        .await
        .unwrap();
    let target = format!("{}/api/session/s1/invitation", elsewhere.base_url());
    let service = RecordingServer::start(move |r: &Captured| {
        if r.uri.path() == "/api/login" {
            login_ok()
        } else {
            Canned::redirect(307, &target)
        }
    })
    .await
    .unwrap();
    let client = client(&service);
    let session = client
        .login(&Credentials::new("sk", "alice", "pw").unwrap())
        .send()
        .await
        .unwrap();
    let err = client
        .send_invitation(&session, SessionId::new("s1").unwrap(), invitation())
        .send()
        .await
        .unwrap_err();
    let Error::Redirected { status, location } = &err else {
        panic!("expected Redirected, got {err:?}")
    };
    assert_eq!(*status, 307);
    assert_eq!(location, &elsewhere.base_url());
    assert!(err.to_string().contains("check the base URL"), "{err}");
    assert!(
        elsewhere.requests().is_empty(),
        "the other origin was contacted"
    );
    // The service itself got the token (it is the right origin).
    assert_eq!(service.requests()[1].header("usertoken"), Some(USER_TOKEN));
}

#[tokio::test]
async fn cross_origin_redirect_of_a_login_does_not_resend_the_body_and_counts() {
    let elsewhere = RecordingServer::start(|_| login_ok()).await.unwrap();
    let target = format!("{}/api/login", elsewhere.base_url());
    let service = RecordingServer::start(move |_: &Captured| Canned::redirect(308, &target))
        .await
        .unwrap();
    let client = client(&service);
    let creds = Credentials::new("sk-redirect", "alice", "pw-redirect").unwrap();
    let err = client.login(&creds).send().await.unwrap_err();
    assert!(
        matches!(err, Error::Redirected { status: 308, .. }),
        "{err:?}"
    );
    assert!(
        elsewhere.requests().is_empty(),
        "the login body went to the other origin"
    );
    // The outcome is unknown, so the attempt stays counted.
    let status = client
        .lockout_guard()
        .status(&creds.account_key())
        .await
        .unwrap();
    assert_eq!(status.failures_in_window, 1);
}

#[tokio::test]
async fn same_origin_redirect_is_followed() {
    let service = RecordingServer::start(|r: &Captured| match r.uri.path() {
        "/api/login" => login_ok(),
        "/api/session/old/invitation" => Canned::redirect(307, "/api/session/new/invitation"),
        _ => Canned::json(200, json!({"InvitationType": 3})),
    })
    .await
    .unwrap();
    let client = client(&service);
    let session = client
        .login(&Credentials::new("sk", "alice", "pw").unwrap())
        .send()
        .await
        .unwrap();
    let receipt = client
        .send_invitation(&session, SessionId::new("old").unwrap(), invitation())
        .send()
        .await
        .unwrap();
    assert_eq!(receipt.invitation_type, Some(3));
    let requests = service.requests();
    assert_eq!(requests.len(), 3);
    assert_eq!(requests[2].uri.path(), "/api/session/new/invitation");
    assert_eq!(requests[2].header("usertoken"), Some(USER_TOKEN));
}

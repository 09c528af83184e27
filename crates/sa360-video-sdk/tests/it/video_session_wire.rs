//! Snapshots of the exact requests the video session SDK sends: method,
//! path, headers (sorted; secret values redacted, the port-bearing `host`
//! dropped) and JSON body (secret fields redacted). Before redacting, each test
//! checks that the secrets on the wire are the right ones.

use crate::video_session_support;

use sa360_video_sdk::http::{BaseUrl, HttpOptions};
use sa360_video_sdk::video_session::{
    CallExperience, Camera, Credentials, EmailAddress, Invitation, Message, Microphone,
    MobileNumber, PlatformSupport, Session, SessionId, UndocumentedInvitation, UndocumentedType,
    VideoSessionClient,
};
use serde_json::{Value, json};
use video_session_support::{Canned, Captured, RecordingServer};

const SECRET_KEY: &str = "sk-wire-0123456789";
const PASSWORD: &str = "pw-wire-correct-horse";
const USER_TOKEN: &str = "ut-wire-token-abcdef";
const REFRESH_TOKEN: &str = "rt-wire-token-123456";

fn answer(request: &Captured) -> Canned {
    if request.uri.path() == "/api/login" {
        Canned::json(
            200,
            json!({
                "UserId": "3f2504e0-4f89-11d3-9a0c-0305e82c3301",
                "DomainId": 7,
                "LoginId": 42,
                "FirstName": "Alice",
                "UserName": "alice",
                "UserToken": USER_TOKEN,
                "RefreshToken": REFRESH_TOKEN
            }),
        )
    } else {
        // The service repeats the invitation's fields.
        let echoed: Value = serde_json::from_slice(&request.body).unwrap_or(Value::Null);
        Canned::json(200, echoed)
    }
}

async fn setup() -> (RecordingServer, VideoSessionClient) {
    let server = RecordingServer::start(answer).await.unwrap();
    let base = BaseUrl::parse(&server.base_url()).unwrap();
    let client = VideoSessionClient::builder(base)
        .http_options(HttpOptions::default().user_agent("sa360-video-sdk-tests"))
        .lockout_store(std::sync::Arc::new(
            sa360_video_sdk::video_session::MemoryStore::new(),
        ))
        .build()
        .unwrap();
    (server, client)
}

fn credentials() -> Credentials {
    Credentials::new(SECRET_KEY, "alice", PASSWORD).unwrap()
}

#[tokio::test]
async fn login_request() {
    let (server, client) = setup().await;
    let session = client.login(&credentials()).send().await.unwrap();
    assert_eq!(session.user().login_id, 42);
    assert_eq!(session.user().first_name.as_deref(), Some("Alice"));
    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    let body: Value = serde_json::from_slice(&requests[0].body).unwrap();
    assert_eq!(body["SecretKey"], SECRET_KEY);
    assert_eq!(body["Password"], PASSWORD);
    assert!(requests[0].header("usertoken").is_none());
    insta::assert_snapshot!(
        "login",
        requests[0].render(&["usertoken"], &["SecretKey", "Password"])
    );
}

async fn invitation_snapshot(
    name: &str,
    invitation: Invitation,
    experience: CallExperience,
) -> sa360_video_sdk::video_session::InvitationReceipt {
    let (server, client) = setup().await;
    let session: Session = client.login(&credentials()).send().await.unwrap();
    let receipt = client
        .send_invitation(
            &session,
            SessionId::new("sess-2024/01").unwrap(),
            invitation.clone(),
        )
        .experience(experience)
        .send()
        .await
        .unwrap();
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    let sent = &requests[1];
    assert_eq!(sent.header("usertoken"), Some(USER_TOKEN));
    assert_eq!(
        receipt.invitation_type,
        Some(i32::try_from(invitation.invitation_type()).unwrap())
    );
    insta::assert_snapshot!(name, sent.render(&["usertoken"], &[]));
    receipt
}

#[tokio::test]
async fn sms_invitation_request() {
    let receipt = invitation_snapshot(
        "invitation_sms",
        Invitation::Sms {
            to: MobileNumber::new("in".parse().unwrap(), "+91 98000-00001").unwrap(),
            message: Some(Message::new("Ihr Termin beginnt – bitte beitreten").unwrap()),
        },
        CallExperience::new()
            .microphone(Microphone::On)
            .camera(Camera::Front)
            .platform_support(PlatformSupport::BrowserFirst),
    )
    .await;
    assert_eq!(receipt.mobile_no.as_deref(), Some("+919800000001"));
    assert_eq!(
        receipt.query_string_parameter.as_deref(),
        Some("?m=1&c=2&s=1")
    );
}

#[tokio::test]
async fn whatsapp_invitation_request() {
    invitation_snapshot(
        "invitation_whatsapp",
        Invitation::WhatsApp {
            to: MobileNumber::new("US".parse().unwrap(), "12015550123").unwrap(),
        },
        CallExperience::new().silent_observer(),
    )
    .await;
}

#[tokio::test]
async fn email_invitation_request() {
    let receipt = invitation_snapshot(
        "invitation_email",
        Invitation::Email {
            to: EmailAddress::new("guest@example.com").unwrap(),
            message: Some(Message::new("Your session starts now").unwrap()),
        },
        CallExperience::new(),
    )
    .await;
    assert_eq!(receipt.email_address.as_deref(), Some("guest@example.com"));
    assert_eq!(receipt.query_string_parameter, None);
}

#[tokio::test]
async fn undocumented_invitation_request() {
    invitation_snapshot(
        "invitation_undocumented",
        Invitation::Undocumented(
            UndocumentedInvitation::new(UndocumentedType::Four)
                .email(EmailAddress::new("guest@example.com").unwrap())
                .message(Message::new("type 4, sent deliberately").unwrap()),
        ),
        CallExperience::new().camera(Camera::Off),
    )
    .await;
}

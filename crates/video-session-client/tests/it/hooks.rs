//! The hand-written hooks run for generated operations: the `UserToken`
//! header reaches the server, each request is traced without headers, and
//! redirects to another origin are not followed.

use std::time::Duration;

use test_support::{TraceCapture, assert_request_logged};
use video_session_client::types::{InvitationRequest, InvitationType};
use video_session_client::{Client, ClientContext, Error, http_client_builder};

const INVITATION: &str = r#"{"InvitationType":3,"EmailAddress":"guest@example.com"}"#;

fn client(base: &str) -> Client {
    Client::new_with_client(
        base,
        http_client_builder().build().unwrap(),
        ClientContext::new(),
    )
}

/// Any generated operation that takes the `UserToken` header.
async fn call_operation(client: &Client, user_token: &str) -> Result<(), Error<()>> {
    client
        .send_session_invitation()
        .session_id("session-1")
        .user_token(user_token)
        .body(
            InvitationRequest::builder()
                .invitation_type(InvitationType::try_from(3).unwrap())
                .email_address(Some("guest@example.com".parse().unwrap())),
        )
        .send()
        .await
        .map(|_| ())
        .map_err(Error::into_untyped)
}

#[tokio::test]
async fn user_token_header_is_sent() {
    let (addr, head) = test_support::one_shot_http(200, INVITATION).await.unwrap();
    call_operation(&client(&format!("http://{addr}")), "user-secret-1")
        .await
        .unwrap();
    let head = head.await.unwrap().to_lowercase();
    assert!(head.contains("usertoken: user-secret-1\r\n"), "{head}");
}

#[tokio::test]
async fn redirects_to_another_origin_are_not_followed() {
    let other = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let location: &'static str = Box::leak(
        format!(
            "location: http://127.0.0.1:{}/stolen\r\n",
            other.local_addr().unwrap().port()
        )
        .into_boxed_str(),
    );
    let (addr, _head) = test_support::one_shot_http_with_headers(307, location, "")
        .await
        .unwrap();
    let error = call_operation(&client(&format!("http://{addr}")), "user-secret-2")
        .await
        .unwrap_err();
    assert_eq!(error.status().map(|s| s.as_u16()), Some(307), "{error}");
    let contacted = tokio::time::timeout(Duration::from_millis(200), other.accept()).await;
    assert!(contacted.is_err(), "the redirect target was contacted");
}

#[tokio::test]
async fn each_request_is_traced_without_headers() {
    let capture = TraceCapture::start();

    let (addr, _head) = test_support::one_shot_http(200, INVITATION).await.unwrap();
    call_operation(&client(&format!("http://{addr}")), "user-secret-3")
        .await
        .unwrap();

    assert_request_logged(
        &capture.text(),
        "video_session",
        "send_session_invitation",
        "POST",
        "user-secret",
    );
}

#[test]
fn operation_futures_are_send() {
    fn assert_send<T: Send>(_: &T) {}
    let client = Client::new("http://127.0.0.1:9", ClientContext::new());
    let future = call_operation(&client, "t");
    assert_send(&future);
}

#[tokio::test]
async fn user_token_is_marked_sensitive_before_sending() {
    use progenitor_client::{ClientHooks, OperationInfo};

    let client = Client::new("http://127.0.0.1:9", ClientContext::new());
    let mut request = reqwest::Request::new(
        reqwest::Method::POST,
        "http://127.0.0.1:9/api/session/s/invitation"
            .parse()
            .unwrap(),
    );
    request.headers_mut().insert(
        "UserToken",
        reqwest::header::HeaderValue::from_static("user-secret-4"),
    );
    let info = OperationInfo {
        operation_id: "send_session_invitation",
    };
    ClientHooks::<ClientContext>::pre::<()>(&client, &mut request, &info)
        .await
        .unwrap();
    assert!(request.headers()["usertoken"].is_sensitive());
    assert!(!format!("{request:?}").contains("user-secret"));
}

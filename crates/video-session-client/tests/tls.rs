//! HTTPS works with the plain generated constructor: rustls + ring is
//! installed by `ClientContext::new()`, so requests fail for network reasons,
//! never for a missing TLS backend or crypto provider.

mod support;

use video_session_client::{Client, ClientContext, ClientInfo, http_client_builder};

fn assert_not_a_tls_setup_error(text: &str) {
    let lower = text.to_lowercase();
    for bad in [
        "no tls",
        "cryptoprovider",
        "crypto provider",
        "scheme is not",
        "not supported",
    ] {
        assert!(!lower.contains(bad), "unexpected TLS setup error: {text}");
    }
}

#[tokio::test]
async fn closed_https_port_is_a_connect_error() {
    let closed = test_support::ClosedPort::reserve().unwrap();
    let port = closed.port();
    let client = Client::new(&format!("https://127.0.0.1:{port}"), ClientContext::new());
    let error = client
        .client()
        .get(client.baseurl())
        .send()
        .await
        .expect_err("nothing listens there");
    let text = support::chain(&error);
    assert!(error.is_connect(), "{text}");
    assert_not_a_tls_setup_error(&text);
}

#[tokio::test]
async fn non_tls_server_fails_the_tls_handshake() {
    let addr = support::garbage_server(b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n").await;
    let http = http_client_builder().build().unwrap();
    let client = Client::new_with_client(
        &format!("https://localhost:{}", addr.port()),
        http,
        ClientContext::new(),
    );
    let error = client
        .client()
        .get(client.baseurl())
        .send()
        .await
        .expect_err("garbage is not TLS");
    let text = support::chain(&error);
    assert_not_a_tls_setup_error(&text);
    let lower = text.to_lowercase();
    assert!(
        lower.contains("corrupt message")
            || lower.contains("invalidcontenttype")
            || lower.contains("tls"),
        "expected a TLS handshake error, got: {text}"
    );
}

//! What every client crate's HTTPS tests check (feature `http-client`): that a request over
//! HTTPS fails for network reasons, never because no TLS backend or crypto provider is set up.

use crate::error::error_chain;
use crate::loopback::garbage_server;

/// Panics when `text` reads like a TLS setup error (no backend, no crypto provider, scheme not
/// supported) instead of a network one.
pub fn assert_not_a_tls_setup_error(text: &str) {
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

/// A GET of `url` (an `https://` URL of a port where nothing listens, see
/// [`ClosedPort`](crate::ClosedPort)) with `http` is a connect error, not a TLS setup error.
pub async fn assert_closed_https_port_is_a_connect_error(http: &reqwest::Client, url: &str) {
    let error = http
        .get(url)
        .send()
        .await
        .expect_err("nothing listens there");
    let text = error_chain(&error);
    assert!(error.is_connect(), "{text}");
    assert_not_a_tls_setup_error(&text);
}

/// A GET over HTTPS of a server that answers with plain HTTP fails the TLS handshake: `client`
/// makes the HTTP client and the base URL for `https://localhost:PORT`.
pub async fn assert_non_tls_server_fails_the_handshake(
    client: impl FnOnce(&str) -> (reqwest::Client, String),
) {
    let addr = garbage_server(b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n")
        .await
        .expect("a loopback port");
    let (http, url) = client(&format!("https://localhost:{}", addr.port()));
    let error = http.get(url).send().await.expect_err("garbage is not TLS");
    let text = error_chain(&error);
    assert_not_a_tls_setup_error(&text);
    let lower = text.to_lowercase();
    assert!(
        lower.contains("corrupt message")
            || lower.contains("invalidcontenttype")
            || lower.contains("tls"),
        "expected a TLS handshake error, got: {text}"
    );
}

/// The two HTTPS tests of a generated client crate (`$client`: its crate name): a closed HTTPS
/// port is a connect error, and a server that is not TLS fails the handshake; both with the
/// generated `Client` and a `ClientContext::new()`, which must install the crypto provider.
#[macro_export]
macro_rules! client_https_tests {
    ($client:ident) => {
        #[tokio::test]
        async fn closed_https_port_is_a_connect_error() {
            use $client::ClientInfo as _;
            let closed = $crate::ClosedPort::reserve().unwrap();
            let port = closed.port();
            let client = $client::Client::new(
                &format!("https://127.0.0.1:{port}"),
                $client::ClientContext::new(),
            );
            $crate::tls::assert_closed_https_port_is_a_connect_error(
                client.client(),
                client.baseurl(),
            )
            .await;
        }

        #[tokio::test]
        async fn non_tls_server_fails_the_tls_handshake() {
            use $client::ClientInfo as _;
            $crate::tls::assert_non_tls_server_fails_the_handshake(|base| {
                let http = $client::http_client_builder().build().unwrap();
                let client =
                    $client::Client::new_with_client(base, http, $client::ClientContext::new());
                (client.client().clone(), client.baseurl().to_string())
            })
            .await;
        }
    };
}

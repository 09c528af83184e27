//! Tiny loopback servers for the client tests (no HTTP framework needed).

#![allow(dead_code)]

use std::net::SocketAddr;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;
use tokio::sync::oneshot;

/// A TCP server on 127.0.0.1 that answers every connection with `garbage`
/// (not TLS) and closes it. Runs until the runtime stops.
pub async fn garbage_server(garbage: &'static [u8]) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            let mut buf = [0u8; 1024];
            let _ = socket.read(&mut buf).await;
            let _ = socket.write_all(garbage).await;
            let _ = socket.shutdown().await;
        }
    });
    addr
}

/// An HTTP/1.1 server that answers one request with `status`, content type
/// `application/json` and `body`, and hands back the raw request head
/// (request line and headers, lower-cased names as sent by hyper).
pub async fn one_shot_http(
    status: u16,
    body: &'static str,
) -> (SocketAddr, oneshot::Receiver<String>) {
    one_shot_http_with_headers(status, "", body).await
}

/// Like [`one_shot_http`], with extra response header lines (each ending in
/// `\r\n`).
pub async fn one_shot_http_with_headers(
    status: u16,
    extra_headers: &'static str,
    body: &'static str,
) -> (SocketAddr, oneshot::Receiver<String>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (tx, rx) = oneshot::channel();
    tokio::spawn(async move {
        let Ok((mut socket, _)) = listener.accept().await else {
            return;
        };
        let mut head = Vec::new();
        let mut buf = [0u8; 4096];
        while !head.windows(4).any(|w| w == b"\r\n\r\n") {
            match socket.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => head.extend_from_slice(&buf[..n]),
            }
        }
        let response = format!(
            "HTTP/1.1 {status} X\r\ncontent-type: application/json\r\n{extra_headers}content-length: {}\r\nconnection: close\r\n\r\n{body}",
            body.len()
        );
        let _ = socket.write_all(response.as_bytes()).await;
        let _ = socket.shutdown().await;
        let _ = tx.send(String::from_utf8_lossy(&head).into_owned());
    });
    (addr, rx)
}

/// The error and its whole source chain, joined with ": ".
pub fn chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(s) = source {
        text.push_str(": ");
        text.push_str(&s.to_string());
        source = s.source();
    }
    text
}

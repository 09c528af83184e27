//! Tiny loopback servers for client tests (no HTTP framework): one that answers with bytes that
//! are not TLS, and one that answers one HTTP/1.1 request and hands back the request's head.

use std::io;
use std::net::SocketAddr;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;
use tokio::sync::oneshot;

/// Largest request head [`one_shot_http`] keeps (a test's request is far smaller).
const MAX_HEAD: usize = 64 * 1024;

/// A TCP server on 127.0.0.1 that answers every connection with `garbage`
/// (not TLS) and closes it. Runs until the runtime stops.
///
/// # Errors
/// When no port can be bound.
pub async fn garbage_server(garbage: &'static [u8]) -> io::Result<SocketAddr> {
    let listener = TcpListener::bind("127.0.0.1:0").await?;
    let addr = listener.local_addr()?;
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            let mut buf = [0u8; 1024];
            let _ = socket.read(&mut buf).await;
            let _ = socket.write_all(garbage).await;
            let _ = socket.shutdown().await;
        }
    });
    Ok(addr)
}

/// An HTTP/1.1 server that answers one request with `status`, content type
/// `application/json` and `body`, and hands back the raw request head
/// (request line and headers, as the client sent them).
///
/// # Errors
/// When no port can be bound.
pub async fn one_shot_http(
    status: u16,
    body: &'static str,
) -> io::Result<(SocketAddr, oneshot::Receiver<String>)> {
    one_shot_http_with_headers(status, "", body).await
}

/// Like [`one_shot_http`], with extra response header lines (each ending in
/// `\r\n`).
///
/// # Errors
/// When no port can be bound.
pub async fn one_shot_http_with_headers(
    status: u16,
    extra_headers: &'static str,
    body: &'static str,
) -> io::Result<(SocketAddr, oneshot::Receiver<String>)> {
    let listener = TcpListener::bind("127.0.0.1:0").await?;
    let addr = listener.local_addr()?;
    let (tx, rx) = oneshot::channel();
    tokio::spawn(async move {
        let Ok((mut socket, _)) = listener.accept().await else {
            return;
        };
        let mut head = Vec::new();
        let mut buf = [0u8; 4096];
        while !head.windows(4).any(|w| w == b"\r\n\r\n") && head.len() < MAX_HEAD {
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
    Ok((addr, rx))
}

#[cfg(test)]
mod tests {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio::net::TcpStream;

    use super::{garbage_server, one_shot_http_with_headers};

    #[tokio::test]
    async fn one_shot_http_answers_once_and_hands_back_the_head() {
        let (addr, head) = one_shot_http_with_headers(201, "x-extra: 1\r\n", "{}")
            .await
            .unwrap();
        let mut stream = TcpStream::connect(addr).await.unwrap();
        stream
            .write_all(b"GET /p HTTP/1.1\r\nhost: h\r\n\r\n")
            .await
            .unwrap();
        let mut answer = String::new();
        stream.read_to_string(&mut answer).await.unwrap();
        assert!(answer.starts_with("HTTP/1.1 201 X\r\n"), "{answer}");
        assert!(answer.contains("x-extra: 1\r\n"), "{answer}");
        assert!(
            answer.ends_with("content-length: 2\r\nconnection: close\r\n\r\n{}"),
            "{answer}"
        );
        assert_eq!(head.await.unwrap(), "GET /p HTTP/1.1\r\nhost: h\r\n\r\n");
    }

    #[tokio::test]
    async fn garbage_server_answers_every_connection_with_its_bytes() {
        let addr = garbage_server(b"not tls").await.unwrap();
        for _ in 0..2 {
            let mut stream = TcpStream::connect(addr).await.unwrap();
            stream.write_all(b"hello").await.unwrap();
            let mut answer = Vec::new();
            stream.read_to_end(&mut answer).await.unwrap();
            assert_eq!(answer, b"not tls");
        }
    }
}

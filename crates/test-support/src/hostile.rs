//! A hostile HTTP server: every request gets the same bad answer, chosen by
//! the test ([`Answer`]) and changeable while it runs.
//!
//! Plain threads on a loopback `TcpListener`, no async runtime: the server
//! works the same from a tokio test, a plain test, or a test that runs the
//! `apictl` binary. A huge body is generated while it is written, never held.
//! Connection threads end when the client goes away (a write fails).
//!
//! The answer's `Content-Type` follows the request: a path that contains
//! `idmapping` gets `text/csv` and the ID-mapping file's header row first, so
//! a download passes its type and header checks and meets the body's size or
//! pace; every other path gets `application/json`.
//!
//! ```
//! use std::io::{Read, Write};
//! use test_support::{Answer, HostileServer};
//!
//! let server = HostileServer::start(Answer::Empty);
//! let mut stream = std::net::TcpStream::connect(server.addr())?;
//! stream.write_all(b"GET /x HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n")?;
//! let mut answer = String::new();
//! stream.read_to_string(&mut answer)?;
//! assert!(answer.starts_with("HTTP/1.1 200 OK"));
//! assert!(answer.contains("content-length: 0"));
//! assert_eq!(server.requests(), 1);
//! # Ok::<(), std::io::Error>(())
//! ```

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicU8, AtomicUsize, Ordering};
use std::time::Duration;

/// 10 GiB: the size of the huge answers.
pub const TEN_GIB: u64 = 10 * 1024 * 1024 * 1024;

/// The first line of the ID-mapping file, sent first on `idmapping` paths.
pub const ID_MAPPING_HEADER: &[u8] = b"Entity Type,Legacy IDs,New IDs\n";

const CHUNK: usize = 64 * 1024;

/// What the server answers to every request, always with status 200.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Answer {
    /// `Content-Length: 10 GiB`, then filler for as long as anyone reads.
    AnnouncedHuge,
    /// Chunked filler without end (10 GiB and more), no length announced.
    Endless,
    /// One byte per second, chunked, without end.
    Trickle,
    /// A `text/html` page.
    Html,
    /// An empty body (`Content-Length: 0`).
    Empty,
}

impl Answer {
    /// Every answer, in a fixed order.
    pub const ALL: [Answer; 5] = [
        Answer::AnnouncedHuge,
        Answer::Endless,
        Answer::Trickle,
        Answer::Html,
        Answer::Empty,
    ];

    fn from_u8(v: u8) -> Self {
        Self::ALL
            .into_iter()
            .find(|a| *a as u8 == v)
            .unwrap_or(Answer::Empty)
    }
}

/// The running server; it stops accepting when the test process ends.
#[derive(Debug, Clone)]
pub struct HostileServer {
    addr: SocketAddr,
    answer: Arc<AtomicU8>,
    requests: Arc<AtomicUsize>,
    connections: Arc<AtomicUsize>,
}

impl HostileServer {
    /// Starts a server on a free loopback port, answering `answer`.
    ///
    /// # Panics
    ///
    /// When no loopback port can be bound (a broken test machine).
    pub fn start(answer: Answer) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").expect("a loopback port");
        let addr = listener.local_addr().expect("an address");
        let server = Self {
            addr,
            answer: Arc::new(AtomicU8::new(answer as u8)),
            requests: Arc::new(AtomicUsize::new(0)),
            connections: Arc::new(AtomicUsize::new(0)),
        };
        let shared = server.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                shared.connections.fetch_add(1, Ordering::SeqCst);
                let shared = shared.clone();
                std::thread::spawn(move || shared.serve(stream));
            }
        });
        server
    }

    /// Answers `answer` from now on (to new requests).
    pub fn set(&self, answer: Answer) {
        self.answer.store(answer as u8, Ordering::SeqCst);
    }

    /// `http://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The server's address.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Connections accepted so far: 0 means it received no byte at all.
    pub fn connections(&self) -> usize {
        self.connections.load(Ordering::SeqCst)
    }

    /// Requests received so far.
    pub fn requests(&self) -> usize {
        self.requests.load(Ordering::SeqCst)
    }

    /// Serves the requests of one connection until it closes or an endless
    /// answer is cut off.
    fn serve(&self, stream: TcpStream) {
        let Ok(read_half) = stream.try_clone() else {
            return;
        };
        let mut reader = BufReader::new(read_half);
        let mut out = stream;
        while let Some((path, close)) = read_request(&mut reader) {
            self.requests.fetch_add(1, Ordering::SeqCst);
            let answer = Answer::from_u8(self.answer.load(Ordering::SeqCst));
            if write_answer(&mut out, answer, path.contains("idmapping")).is_err() || close {
                return;
            }
        }
    }
}

/// Reads one request (head and `Content-Length` body); its path and whether
/// it asked to close the connection, or `None` when the connection closed.
fn read_request(reader: &mut impl BufRead) -> Option<(String, bool)> {
    let mut line = String::new();
    reader.read_line(&mut line).ok().filter(|n| *n > 0)?;
    let path = line.split_whitespace().nth(1).unwrap_or("/").to_owned();
    let mut length = 0usize;
    let mut close = false;
    loop {
        line.clear();
        reader.read_line(&mut line).ok().filter(|n| *n > 0)?;
        if line == "\r\n" || line == "\n" {
            break;
        }
        if let Some((name, value)) = line.split_once(':')
            && name.trim().eq_ignore_ascii_case("content-length")
        {
            length = value.trim().parse().unwrap_or(0);
        }
        if let Some((name, value)) = line.split_once(':')
            && name.trim().eq_ignore_ascii_case("connection")
        {
            close = value.trim().eq_ignore_ascii_case("close");
        }
    }
    std::io::copy(&mut reader.take(length as u64), &mut std::io::sink()).ok()?;
    Some((path, close))
}

fn write_answer(out: &mut TcpStream, answer: Answer, csv: bool) -> std::io::Result<()> {
    let content_type = if csv { "text/csv" } else { "application/json" };
    let lead: &[u8] = if csv { ID_MAPPING_HEADER } else { b"" };
    let filler = vec![if csv { b'0' } else { b' ' }; CHUNK];
    match answer {
        Answer::AnnouncedHuge => {
            write!(
                out,
                "HTTP/1.1 200 OK\r\ncontent-type: {content_type}\r\ncontent-length: {TEN_GIB}\r\n\r\n"
            )?;
            out.write_all(lead)?;
            loop {
                out.write_all(&filler)?;
            }
        }
        Answer::Endless | Answer::Trickle => {
            write!(
                out,
                "HTTP/1.1 200 OK\r\ncontent-type: {content_type}\r\ntransfer-encoding: chunked\r\n\r\n"
            )?;
            if !lead.is_empty() {
                write_chunk(out, lead)?;
            }
            let trickle = matches!(answer, Answer::Trickle);
            loop {
                if trickle {
                    write_chunk(out, &filler[..1])?;
                    std::thread::sleep(Duration::from_secs(1));
                } else {
                    write_chunk(out, &filler)?;
                }
            }
        }
        Answer::Html => {
            let page = b"<html><body>Service maintenance</body></html>";
            write!(
                out,
                "HTTP/1.1 200 OK\r\ncontent-type: text/html\r\ncontent-length: {}\r\n\r\n",
                page.len()
            )?;
            out.write_all(page)?;
            out.flush()
        }
        Answer::Empty => {
            write!(
                out,
                "HTTP/1.1 200 OK\r\ncontent-type: {content_type}\r\ncontent-length: 0\r\n\r\n"
            )?;
            out.flush()
        }
    }
}

fn write_chunk(out: &mut TcpStream, bytes: &[u8]) -> std::io::Result<()> {
    write!(out, "{:x}\r\n", bytes.len())?;
    out.write_all(bytes)?;
    out.write_all(b"\r\n")?;
    out.flush()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn head_of(server: &HostileServer, path: &str) -> String {
        let mut stream = TcpStream::connect(server.addr()).unwrap();
        write!(stream, "GET {path} HTTP/1.1\r\nhost: x\r\n\r\n").unwrap();
        let mut buf = vec![0u8; 4096];
        let mut got = Vec::new();
        while !got.windows(4).any(|w| w == b"\r\n\r\n") {
            let n = stream.read(&mut buf).unwrap();
            assert!(n > 0, "closed early");
            got.extend_from_slice(&buf[..n]);
        }
        String::from_utf8_lossy(&got).into_owned()
    }

    #[test]
    fn each_answer_has_its_head() {
        let server = HostileServer::start(Answer::AnnouncedHuge);
        let head = head_of(&server, "/x");
        assert!(head.contains("content-length: 10737418240"), "{head}");
        assert!(head.contains("application/json"), "{head}");
        server.set(Answer::Endless);
        let head = head_of(&server, "/a/idmapping");
        assert!(head.contains("transfer-encoding: chunked"), "{head}");
        assert!(head.contains("text/csv"), "{head}");
        server.set(Answer::Html);
        assert!(head_of(&server, "/x").contains("text/html"));
        assert_eq!(server.requests(), 3);
    }
}

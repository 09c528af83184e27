//! Shared helpers for the video session integration tests: a local server that
//! records the exact requests it receives, the binary-wide trace capture, and the fake's demo
//! account with a wrong password.

#![allow(dead_code)]

use std::collections::BTreeMap;
use std::io;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use axum::Router;
use axum::body::{Body, Bytes};
use axum::http::{HeaderMap, HeaderName, HeaderValue, Method, StatusCode, Uri};
use axum::response::Response;
use sa360_video_fakes::{DomainUser, VideoSessionFake};
use sa360_video_sdk::video_session::Credentials;

/// One request as it arrived.
#[derive(Debug, Clone)]
pub struct Captured {
    pub method: Method,
    pub uri: Uri,
    pub headers: HeaderMap,
    pub body: Bytes,
}

impl Captured {
    /// Header value as text.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }

    /// The request as stable text: method and path, headers sorted by name (host
    /// dropped: it holds the port; values of `redact_headers` replaced), a blank
    /// line, the JSON body pretty-printed with the `redact_fields` values replaced.
    pub fn render(&self, redact_headers: &[&str], redact_fields: &[&str]) -> String {
        let mut out = format!("{} {}\n", self.method, self.uri);
        let mut headers: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for (name, value) in &self.headers {
            if name == "host" {
                continue;
            }
            let shown = if redact_headers.contains(&name.as_str()) {
                "[REDACTED]".to_owned()
            } else {
                value.to_str().unwrap_or("<non-ascii>").to_owned()
            };
            headers.entry(name.to_string()).or_default().push(shown);
        }
        for (name, values) in headers {
            for value in values {
                out.push_str(&format!("{name}: {value}\n"));
            }
        }
        out.push('\n');
        if !self.body.is_empty() {
            let mut json: serde_json::Value =
                serde_json::from_slice(&self.body).expect("JSON request body");
            if let Some(map) = json.as_object_mut() {
                for field in redact_fields {
                    if let Some(v) = map.get_mut(*field) {
                        *v = serde_json::Value::String("[REDACTED]".into());
                    }
                }
            }
            out.push_str(&serde_json::to_string_pretty(&json).expect("render JSON"));
            out.push('\n');
        }
        out
    }
}

/// A canned answer.
#[derive(Debug, Clone)]
pub struct Canned {
    /// Wait this long before answering (for timeouts).
    pub delay: Option<std::time::Duration>,
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: String,
}

impl Canned {
    pub fn json(status: u16, body: serde_json::Value) -> Self {
        Self {
            delay: None,
            status,
            headers: vec![("content-type".into(), "application/json".into())],
            body: body.to_string(),
        }
    }

    pub fn with_header(mut self, name: &str, value: &str) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }

    pub fn delayed(mut self, delay: std::time::Duration) -> Self {
        self.delay = Some(delay);
        self
    }

    pub fn redirect(status: u16, location: &str) -> Self {
        Self {
            delay: None,
            status,
            headers: vec![("location".into(), location.into())],
            body: String::new(),
        }
    }
}

/// A server on 127.0.0.1 that records every request and answers with `answer`.
pub struct RecordingServer {
    pub addr: SocketAddr,
    requests: Arc<Mutex<Vec<Captured>>>,
    task: tokio::task::JoinHandle<()>,
}

impl RecordingServer {
    pub async fn start(
        answer: impl Fn(&Captured) -> Canned + Send + Sync + 'static,
    ) -> io::Result<Self> {
        let requests: Arc<Mutex<Vec<Captured>>> = Arc::default();
        let answer = Arc::new(answer);
        let recorded = Arc::clone(&requests);
        let app = Router::new().fallback(
            move |method: Method, uri: Uri, headers: HeaderMap, body: Bytes| {
                let recorded = Arc::clone(&recorded);
                let answer = Arc::clone(&answer);
                async move {
                    let captured = Captured {
                        method,
                        uri,
                        headers,
                        body,
                    };
                    let canned = answer(&captured);
                    recorded.lock().unwrap().push(captured);
                    if let Some(delay) = canned.delay {
                        tokio::time::sleep(delay).await;
                    }
                    let mut response = Response::new(Body::from(canned.body));
                    *response.status_mut() = StatusCode::from_u16(canned.status).unwrap();
                    for (name, value) in canned.headers {
                        response.headers_mut().insert(
                            HeaderName::from_bytes(name.as_bytes()).unwrap(),
                            HeaderValue::from_str(&value).unwrap(),
                        );
                    }
                    response
                }
            },
        );
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        let addr = listener.local_addr()?;
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Ok(Self {
            addr,
            requests,
            task,
        })
    }

    pub fn base_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    pub fn requests(&self) -> Vec<Captured> {
        self.requests.lock().unwrap().clone()
    }
}

impl Drop for RecordingServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

// Every binary that includes this module can capture traces deterministically
// (see `test_support::trace` for why a per-test `set_default` is not enough).

#[allow(unused_imports)] // not every binary that includes this module captures
pub use test_support::TraceCapture;

/// The demo user of `fake` with a wrong password.
pub fn wrong(fake: &VideoSessionFake) -> Credentials {
    let d = fake.demo();
    Credentials::new(
        d.secret_key.clone(),
        d.user_name.clone(),
        "not-the-password",
    )
    .unwrap()
}

/// The demo account of `fake` (its domain and user name).
pub fn account(fake: &VideoSessionFake) -> DomainUser {
    DomainUser::new(fake.demo().domain_id, fake.demo().user_name.clone())
}

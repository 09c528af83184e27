//! Small axum servers the search ads tests start on loopback: [`serve`] runs
//! one, and the wire tests (`search_ads_wire`, `search_ads_reporting_wire`)
//! log what it received ([`Log`], one JSON value a request) to compare with a
//! snapshot.

use std::sync::{Arc, Mutex};

use axum::Router;
use axum::body::Bytes;
use axum::extract::Request;
use axum::http::HeaderMap;
use axum::http::request::Parts;
use serde_json::Value;

/// The requests a server received, in order, as the handler described them.
#[derive(Clone, Default)]
pub struct Log(pub Arc<Mutex<Vec<Value>>>);

impl Log {
    /// The requests logged so far; the log is empty afterwards.
    pub fn take(&self) -> Vec<Value> {
        std::mem::take(&mut *self.0.lock().expect("not poisoned"))
    }
}

/// The value of header `name` as a JSON string, or `null` when it is absent or not text.
pub fn header_text(headers: &HeaderMap, name: &str) -> Value {
    headers
        .get(name)
        .and_then(|v| v.to_str().ok())
        .map_or(Value::Null, |v| Value::String(v.to_owned()))
}

/// A request's head and its body (up to 1 MiB; empty when it could not be read).
pub async fn read_request(request: Request) -> (Parts, Bytes) {
    let (parts, body) = request.into_parts();
    let body = axum::body::to_bytes(body, 1 << 20)
        .await
        .unwrap_or_default();
    (parts, body)
}

/// Serves `app` on a free loopback port for the rest of the test; its origin
/// (`http://127.0.0.1:PORT`).
pub async fn serve(app: Router) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("a free port");
    let origin = format!("http://{}", listener.local_addr().expect("an address"));
    tokio::spawn(async move { axum::serve(listener, app).await });
    origin
}

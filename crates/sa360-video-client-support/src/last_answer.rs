//! The status and media type of the last answer a request got, for a caller that must say what
//! happened when the generated client could not decode a body: progenitor's
//! `Error::InvalidResponsePayload` carries neither, so a proxy's `503 Service Unavailable` page
//! would otherwise read as "does not match the API documentation" with no status.
//!
//! ```
//! # async fn run() {
//! let (output, answer) = sa360_video_client_support::last_answer::scope(async { 42 }).await;
//! assert_eq!((output, answer), (42, None)); // no request was sent inside the scope
//! # }
//! ```

use std::cell::Cell;
use std::future::Future;

tokio::task_local! {
    static LAST: Cell<Option<Answer>>;
}

/// What the last answer inside a [`scope`] was.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Answer {
    /// Its HTTP status.
    pub status: u16,
    /// Whether its `Content-Type` is JSON (`application/json` or `+json`).
    pub json: bool,
}

/// Runs `future` (one or more requests through [`trace_exec`](crate::trace_exec)) and returns its
/// output with the last answer's status and media type (`None` when no answer arrived).
pub async fn scope<F: Future>(future: F) -> (F::Output, Option<Answer>) {
    LAST.scope(Cell::new(None), async move {
        let output = future.await;
        (output, LAST.with(Cell::get))
    })
    .await
}

/// Records an answer for the enclosing [`scope`], if any.
pub(crate) fn record(response: &reqwest::Response) {
    let json = response
        .headers()
        .get(reqwest::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .map(|m| {
            let m = m.trim().to_ascii_lowercase();
            m == "application/json" || m.ends_with("+json")
        })
        .unwrap_or(false);
    let answer = Answer {
        status: response.status().as_u16(),
        json,
    };
    let _ = LAST.try_with(|last| last.set(Some(answer)));
}

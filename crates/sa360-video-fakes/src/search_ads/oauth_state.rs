//! The state of the fake's Google sign-in (`oauth.rs`): pending authorization codes, issued and
//! revoked refresh tokens, request counters and the `x-goog-user-project` values seen. It imports
//! no handler, so [`AppInner`](super::state::AppInner) can hold it without a module cycle.

use std::collections::{HashMap, HashSet};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use axum::http::HeaderMap;

use crate::util::hex_token;

/// The quota-project header of Google's APIs (observed, not enforced: whether a quota project is
/// required depends on the API and the credentials,
/// <https://cloud.google.com/docs/authentication/adc-troubleshooting/user-creds>).
pub(crate) const USER_PROJECT_HEADER: &str = "x-goog-user-project";

/// One issued authorization code, waiting for its exchange.
pub(super) struct PendingCode {
    pub(super) client_id: String,
    pub(super) redirect_uri: String,
    /// `code_challenge` and its method (`S256` or `plain`), when the request carried one.
    pub(super) challenge: Option<(String, String)>,
    pub(super) offline: bool,
    pub(super) scope: String,
    pub(super) issued: Instant,
}

/// What the sign-in endpoints remember between requests.
#[derive(Default)]
pub(super) struct Books {
    /// Authorization codes not exchanged yet.
    pub(super) codes: HashMap<String, PendingCode>,
    /// Refresh tokens issued by the `authorization_code` grant, with their client.
    pub(super) refresh_tokens: HashMap<String, String>,
    /// Revoked refresh tokens (the configured one included, once revoked).
    pub(super) revoked: HashSet<String>,
    /// The refresh token each access token came from (revoking it revokes them too).
    pub(super) access_parent: HashMap<String, String>,
}

/// The fake's OAuth state.
pub(crate) struct OAuthState {
    books: Mutex<Books>,
    rng: Mutex<fastrand::Rng>,
    token_requests: AtomicU64,
    pub(super) revoke_requests: AtomicU64,
    pub(super) metadata_requests: AtomicU64,
    /// Token-endpoint and metadata requests that carried `x-goog-user-project`.
    user_project_on_token_requests: AtomicU64,
    /// The `x-goog-user-project` values of the API calls, in order (the first
    /// [`MAX_USER_PROJECTS_KEPT`]).
    user_projects: Mutex<Vec<Option<String>>>,
}

/// How many API calls' `x-goog-user-project` values the fake keeps (a test reads a few).
const MAX_USER_PROJECTS_KEPT: usize = 10_000;

/// Requests the fake's OAuth endpoints received (for tests: "50 concurrent calls, 1 token
/// request").
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct OAuthCounts {
    /// `POST /token` requests, whatever their grant or outcome.
    pub token_requests: u64,
    /// `POST /revoke` requests.
    pub revoke_requests: u64,
    /// Metadata server token requests.
    pub metadata_requests: u64,
    /// Token-endpoint and metadata requests that carried an `x-goog-user-project` header (Google's
    /// libraries send it on API calls only: <https://cloud.google.com/docs/quotas/set-quota-project>).
    pub user_project_on_token_requests: u64,
}

impl OAuthState {
    pub(crate) fn new(seed: u64) -> Self {
        Self {
            books: Mutex::new(Books::default()),
            rng: Mutex::new(fastrand::Rng::with_seed(seed ^ 0x0A07_0000)),
            token_requests: AtomicU64::new(0),
            revoke_requests: AtomicU64::new(0),
            metadata_requests: AtomicU64::new(0),
            user_project_on_token_requests: AtomicU64::new(0),
            user_projects: Mutex::new(Vec::new()),
        }
    }

    pub(super) fn books(&self) -> std::sync::MutexGuard<'_, Books> {
        self.books.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub(super) fn random(&self, bytes: usize) -> String {
        hex_token(
            &mut self.rng.lock().unwrap_or_else(|p| p.into_inner()),
            bytes,
        )
    }

    pub(crate) fn counts(&self) -> OAuthCounts {
        OAuthCounts {
            token_requests: self.token_requests.load(Ordering::Relaxed),
            revoke_requests: self.revoke_requests.load(Ordering::Relaxed),
            metadata_requests: self.metadata_requests.load(Ordering::Relaxed),
            user_project_on_token_requests: self
                .user_project_on_token_requests
                .load(Ordering::Relaxed),
        }
    }

    /// Notes a token or metadata request's headers (it should carry no `x-goog-user-project`).
    pub(crate) fn note_token_request_headers(&self, headers: &HeaderMap) {
        if headers.contains_key(USER_PROJECT_HEADER) {
            self.user_project_on_token_requests
                .fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Notes the `x-goog-user-project` of an API call (`None` when absent).
    pub(crate) fn note_api_user_project(&self, headers: &HeaderMap) {
        let value = headers
            .get(USER_PROJECT_HEADER)
            .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned());
        let mut seen = self.user_projects.lock().unwrap_or_else(|p| p.into_inner());
        if seen.len() < MAX_USER_PROJECTS_KEPT {
            seen.push(value);
        }
    }

    /// The `x-goog-user-project` values of the API calls so far.
    pub(crate) fn user_projects(&self) -> Vec<Option<String>> {
        self.user_projects
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// Counts one `POST /token` request (called by the token endpoint).
    pub(crate) fn count_token_request(&self) {
        self.token_requests.fetch_add(1, Ordering::Relaxed);
    }

    /// Marks a refresh token revoked, as `POST /revoke` would (tests, `apictl` demos).
    pub(crate) fn revoke_refresh_token(&self, token: &str) {
        self.books().revoked.insert(token.to_owned());
    }

    /// Remembers which refresh token an access token came from.
    pub(crate) fn record_access_parent(&self, access: &str, refresh: &str) {
        self.books()
            .access_parent
            .insert(access.to_owned(), refresh.to_owned());
    }
}

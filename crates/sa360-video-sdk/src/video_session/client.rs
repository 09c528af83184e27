//! The client, its builder, and how the service's error answers and transport
//! failures become [`Error`]s. The operations are in `login.rs` and
//! `send_invitation.rs`.

use sa360_video_client_support::last_answer::Answer as LastAnswer;
use std::sync::Arc;
use std::time::Duration;

use video_session_client::types;

use super::clock::{Clock, SystemClock};
use super::error::{Error, ValidationError, redact_echoes};
use super::lockout::{FileStore, LockoutGuard, LockoutPolicy, LockoutStore};
use super::login_request::login_url;
use crate::http::{BaseUrl, Bounds, HttpOptions, TimeoutMode, build_client};

pub(super) type ApiError = video_session_client::Error<types::ApiError>;

/// The operations, as the spec names them (`operationId`), for errors.
pub(super) const OP_LOGIN: &str = "login";
pub(super) const OP_INVITATION: &str = "sendSessionInvitation";

/// The longest block the guard believes a `Retry-After` for (the service document's blocks
/// last 10 minutes); a later attempt during a longer block is answered 423
/// again, which never counts as a failure (VS-4).
pub(super) const MAX_BLOCK_WAIT: Duration = Duration::from_secs(86_400);

/// Client of the video session service.
///
/// - The base URL is a validated [`BaseUrl`] (`https://`, or `http://` only on
///   loopback); the HTTP client has the [`HttpOptions`] timeouts and user agent
///   and never follows a redirect to another origin, so neither the `UserToken`
///   header nor a login body can leave the service's origin.
/// - [`login`](Self::login) goes through a [`LockoutGuard`] and is never retried.
/// - [`send_invitation`](Self::send_invitation) sends the session's `UserToken`
///   (marked sensitive) and returns the typed answer.
///
/// Cloning is cheap (like [`SearchAdsClient`](crate::search_ads::SearchAdsClient)), and a
/// clone shares the original's HTTP connections and its [`LockoutGuard`]: the
/// same count, never a budget of its own. `Debug` shows the base URL, the
/// timeouts and the guard, never a secret (the client holds none: the
/// `UserToken` travels with each call).
#[derive(Debug, Clone)]
pub struct VideoSessionClient {
    pub(super) base: BaseUrl,
    pub(super) api: video_session_client::Client,
    /// The login endpoint, parsed once (see `login_request/`).
    pub(super) login_url: reqwest::Url,
    pub(super) guard: Arc<LockoutGuard>,
    /// The connect timeout and the request timeout, named in errors.
    pub(super) timeouts: Timeouts,
}

/// The timeouts a client was built with, for its error messages.
#[derive(Debug, Clone, Copy)]
pub(super) struct Timeouts {
    connect: Duration,
    request: Duration,
}

/// Builds a [`VideoSessionClient`]; see [`VideoSessionClient::builder`].
#[derive(Debug)]
pub struct VideoSessionClientBuilder {
    base_url: String,
    options: HttpOptions,
    guard: Option<Arc<LockoutGuard>>,
    store: Option<Arc<dyn LockoutStore>>,
    clock: Option<Arc<dyn Clock>>,
    policy: LockoutPolicy,
}

impl VideoSessionClientBuilder {
    /// Timeouts and user agent (default [`HttpOptions::default`]).
    pub fn http_options(mut self, options: HttpOptions) -> Self {
        self.options = options;
        self
    }

    /// Where the lockout guard keeps its counts.
    ///
    /// Default: [`FileStore::per_user`], one file per user and host (in the
    /// platform's per-user state directory, see
    /// [`FileStore::default_location`]), so a restarted program, other
    /// programs of the user and `apictl` all share one count per account. Set
    /// it to a `RedisStore` (feature `redis`) for replicas on several hosts,
    /// to a [`FileStore::new`] elsewhere when the user has no usable state
    /// directory, or to a [`MemoryStore`](super::MemoryStore) only when
    /// forgetting every count at each restart is acceptable (it is the one
    /// store that does not keep the promise across restarts). Ignored when
    /// [`lockout_guard`](Self::lockout_guard) is set.
    pub fn lockout_store(mut self, store: Arc<dyn LockoutStore>) -> Self {
        self.store = Some(store);
        self
    }

    /// The guard's clock (default [`SystemClock`](super::SystemClock)). Ignored
    /// when [`lockout_guard`](Self::lockout_guard) is set.
    pub fn clock(mut self, clock: Arc<dyn Clock>) -> Self {
        self.clock = Some(clock);
        self
    }

    /// The service's lockout rule and safety margin (default
    /// [`LockoutPolicy::SEED`]; validated by [`build`](Self::build)). Ignored
    /// when [`lockout_guard`](Self::lockout_guard) is set.
    pub fn lockout_policy(mut self, policy: LockoutPolicy) -> Self {
        self.policy = policy;
        self
    }

    /// Shares an existing guard (for several clients of one service). Its
    /// attempt timeout must be at least this client's HTTP timeout.
    pub fn lockout_guard(mut self, guard: Arc<LockoutGuard>) -> Self {
        self.guard = Some(guard);
        self
    }

    /// Builds the client. Fails with [`Error::Validation`] naming the setting
    /// for a refused base URL (`base_url`: `https://` is required except on
    /// loopback), an invalid [`LockoutPolicy`], a shared guard whose attempt
    /// timeout is shorter than the HTTP timeout (`attempt_timeout`), or, when
    /// no store was set, a default store that cannot be used (`lockout_store`:
    /// no per-user state directory, or one that cannot be created or written);
    /// it never falls back to a store in memory.
    pub fn build(self) -> Result<VideoSessionClient, Error> {
        let base = BaseUrl::parse(&self.base_url)?;
        let http = build_client(&base, &self.options, TimeoutMode::Total)?;
        let api = video_session_client::Client::new_with_client(
            base.as_str(),
            http,
            video_session_client::ClientContext::new()
                .with_body_limits(self.options.body_limits(TimeoutMode::Total)),
        );
        let guard = match self.guard {
            Some(guard) => {
                if guard.attempt_timeout() < self.options.timeout {
                    return Err(Error::Validation(ValidationError::new(
                        "attempt_timeout",
                        format!(
                            "of the shared lockout guard must be at least this client's HTTP timeout: the guard assumes attempts end within {} ms, the HTTP timeout is {} ms; build the guard with LockoutGuardBuilder::attempt_timeout of at least the HTTP timeout",
                            guard.attempt_timeout().as_millis(),
                            self.options.timeout.as_millis()
                        ),
                    )));
                }
                guard
            }
            None => {
                let store = match self.store {
                    Some(store) => store,
                    None => Arc::new(FileStore::per_user().map_err(default_store_error)?),
                };
                let clock = self
                    .clock
                    .unwrap_or_else(|| Arc::new(SystemClock) as Arc<dyn Clock>);
                Arc::new(
                    LockoutGuard::builder(store, clock)
                        .policy(self.policy)
                        .attempt_timeout(self.options.timeout)
                        .build()?,
                )
            }
        };
        let login_url = login_url(&api).map_err(|e| {
            Error::Validation(ValidationError::new(
                "base_url",
                format!("must leave room for the login endpoint under it: {e}"),
            ))
        })?;
        Ok(VideoSessionClient {
            base,
            api,
            login_url,
            guard,
            timeouts: Timeouts {
                connect: self.options.connect_timeout,
                request: self.options.timeout,
            },
        })
    }
}

impl VideoSessionClient {
    /// A builder for a client of the service at `base_url` (a `&str`,
    /// `String` or [`BaseUrl`]; checked by
    /// [`build`](VideoSessionClientBuilder::build)).
    pub fn builder(base_url: impl AsRef<str>) -> VideoSessionClientBuilder {
        VideoSessionClientBuilder {
            base_url: base_url.as_ref().to_owned(),
            options: HttpOptions::default(),
            guard: None,
            store: None,
            clock: None,
            policy: LockoutPolicy::SEED,
        }
    }

    /// A client of the service at `base_url` with default options and the
    /// default lockout store ([`FileStore::per_user`]: the count survives
    /// restarts and is shared by the user's programs on this host). Fails like
    /// [`build`](VideoSessionClientBuilder::build).
    pub fn new(base_url: impl AsRef<str>) -> Result<Self, Error> {
        Self::builder(base_url).build()
    }

    /// The base URL.
    pub fn base_url(&self) -> &BaseUrl {
        &self.base
    }

    /// The lockout guard (for [`LockoutGuard::status`]); the one set with
    /// [`VideoSessionClientBuilder::lockout_guard`], or the one the builder made.
    pub fn lockout_guard(&self) -> &Arc<LockoutGuard> {
        &self.guard
    }
}

/// The default store cannot be used: name the setting that replaces it.
fn default_store_error(e: super::error::StoreError) -> Error {
    Error::Validation(ValidationError::new(
        "lockout_store",
        format!(
            "is not set and the default store cannot be used ({e}); set VideoSessionClientBuilder::lockout_store to a FileStore::new(path) in a directory this user can write, a RedisStore (feature `redis`), or a MemoryStore (which forgets every count when the process ends, so a restarted program can block the account)"
        ),
    ))
}

pub(super) fn rejected(status: u16, body: types::ApiError, secrets: &[&str]) -> Error {
    Error::Rejected {
        status,
        code: redact_echoes(&body.code, secrets),
        message: redact_echoes(&body.message, secrets),
        field: body.field.map(|f| redact_echoes(&f, secrets)),
    }
}

/// Maps the errors that are not an error body. Never copies a body or a serde
/// message (which may quote the body) into the error.
pub(super) fn transport_error(
    error: ApiError,
    secrets: &[&str],
    operation: &'static str,
    timeouts: Timeouts,
    answer: Option<LastAnswer>,
) -> Error {
    use video_session_client::Error as E;
    let what = if operation == OP_LOGIN {
        "login"
    } else {
        "invitation"
    };
    match error {
        E::CommunicationError(e) | E::ResponseBodyError(e) | E::InvalidUpgrade(e) => {
            let error = crate::http::from_reqwest(
                operation,
                e,
                Bounds {
                    connect_timeout: Some(timeouts.connect),
                    timeout: Some(timeouts.request),
                    timeout_setting: "timeout",
                    body_setting: "max_body_bytes",
                },
            );
            // reqwest's text names the URL and what failed on the wire; the secrets travel in
            // the body and a sensitive header, which it never formats: nothing to redact.
            Error::Transport(error)
        }
        E::UnexpectedResponse(response) => {
            let status = response.status();
            if status.is_redirection() {
                let location = response
                    .headers()
                    .get(reqwest::header::LOCATION)
                    .and_then(|v| v.to_str().ok())
                    .and_then(|l| response.url().join(l).ok())
                    .map(|u| u.origin().ascii_serialization())
                    .unwrap_or_else(|| "(none)".to_owned());
                Error::Redirected {
                    status: status.as_u16(),
                    location,
                }
            } else {
                Error::UnexpectedResponse {
                    status: Some(status.as_u16()),
                    detail: format!(
                        "the {what} answer has an HTTP status the API documentation does not list"
                    ),
                }
            }
        }
        // An answer that is not the API's JSON at all (a proxy's or load balancer's page): its
        // status and media type say what happened, not the JSON parser.
        E::InvalidResponsePayload(_, e) => {
            match answer.filter(|a| !a.json || !(200..300).contains(&a.status)) {
                Some(a) => Error::UnexpectedResponse {
                    status: Some(a.status),
                    detail: format!(
                        "the {what} answer is HTTP {} with a body that is not the API's JSON{}",
                        a.status,
                        if a.json {
                            ""
                        } else {
                            " (not application/json)"
                        }
                    ),
                },
                None => Error::UnexpectedResponse {
                    status: None,
                    detail: format!(
                        "the {what} answer does not match the API documentation ({:?} error at line {}, column {})",
                        e.classify(),
                        e.line(),
                        e.column()
                    ),
                },
            }
        }
        // The HTTP library refused a header or body value of the request, which may be a
        // secret (the user token): its text is not copied.
        E::InvalidRequest(_) | E::Custom(_) => Error::UnexpectedResponse {
            status: None,
            detail: format!(
                "the {what} request could not be built: the HTTP library refused a header or body value"
            ),
        },
        E::ErrorResponse(answer) => {
            let status = answer.status().as_u16();
            rejected(status, answer.into_inner(), secrets)
        }
    }
}

/// `Retry-After` as delay-seconds (the HTTP-date form is not used by the service).
pub(super) fn retry_after_header(headers: &reqwest::header::HeaderMap) -> Option<Duration> {
    headers
        .get(reqwest::header::RETRY_AFTER)?
        .to_str()
        .ok()?
        .trim()
        .parse::<u64>()
        .ok()
        .map(Duration::from_secs)
}

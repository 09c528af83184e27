//! The client: login through the lockout guard, and invitations.

use client_support::last_answer::Answer as LastAnswer;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use secrecy::ExposeSecret;
use video_session_client::types;

use super::call_experience::CallExperience;
use super::clock::{Clock, plus};
use super::credentials::Credentials;
use super::error::{Error, ValidationError, scrub};
use super::invitation::{Invitation, SessionId, WireInvitation};
use super::lockout::{LockoutGuard, LockoutPolicy, LockoutStore, MemoryStore, Outcome};
use super::session::{Session, UserDetails};
use crate::http::{BaseUrl, Bounds, HttpOptions, TimeoutMode, build_client};

type ApiError = video_session_client::Error<types::ApiError>;

/// The operations, as the spec names them (`operationId`), for errors.
const OP_LOGIN: &str = "login";
const OP_INVITATION: &str = "sendSessionInvitation";

/// The longest block the guard believes a `Retry-After` for (the seed's blocks
/// last 10 minutes); a later attempt during a longer block is answered 423
/// again, which never counts as a failure (VS-4).
const MAX_BLOCK_WAIT: Duration = Duration::from_secs(86_400);

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
    base: BaseUrl,
    api: video_session_client::Client,
    guard: Arc<LockoutGuard>,
    /// The connect timeout and the request timeout, named in errors.
    timeouts: Timeouts,
}

/// The timeouts a client was built with, for its error messages.
#[derive(Debug, Clone, Copy)]
struct Timeouts {
    connect: std::time::Duration,
    request: std::time::Duration,
}

/// Builds a [`VideoSessionClient`]; see [`VideoSessionClient::builder`].
#[derive(Debug)]
pub struct VideoSessionClientBuilder {
    base: BaseUrl,
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

    /// Where the lockout guard keeps its counts (default: the process-wide
    /// [`MemoryStore::shared`], so every client of the process shares one
    /// count). Use a [`FileStore`](super::FileStore) so a CLI or a restarted
    /// process keeps them, or a `RedisStore` (feature `redis`) for replicas.
    /// Ignored when [`lockout_guard`](Self::lockout_guard) is set.
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

    /// Builds the client. Fails with [`Error::Validation`] naming the field
    /// for an invalid [`LockoutPolicy`] or a shared guard whose attempt timeout
    /// is shorter than the HTTP timeout.
    pub fn build(self) -> Result<VideoSessionClient, Error> {
        let http = build_client(&self.base, &self.options, TimeoutMode::Total)?;
        let api = video_session_client::Client::new_with_client(
            self.base.as_str(),
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
                            "the shared lockout guard assumes attempts end within {} ms, but this client's HTTP timeout is {} ms; build the guard with LockoutGuard::with_attempt_timeout of at least the HTTP timeout",
                            guard.attempt_timeout().as_millis(),
                            self.options.timeout.as_millis()
                        ),
                    )));
                }
                guard
            }
            None => {
                let store = self
                    .store
                    .unwrap_or_else(|| MemoryStore::shared() as Arc<dyn LockoutStore>);
                let clock = self
                    .clock
                    .unwrap_or_else(|| Arc::new(super::SystemClock) as Arc<dyn Clock>);
                Arc::new(
                    LockoutGuard::new(store, clock)
                        .with_policy(self.policy)?
                        .with_attempt_timeout(self.options.timeout)?,
                )
            }
        };
        Ok(VideoSessionClient {
            base: self.base,
            api,
            guard,
            timeouts: Timeouts {
                connect: self.options.connect_timeout,
                request: self.options.timeout,
            },
        })
    }
}

/// The service's answer to an invitation: it repeats the invitation's fields
/// (VS-1: any may be missing).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct InvitationReceipt {
    /// `InvitationType` (1 SMS, 2 WhatsApp, 3 e-mail, 4 to 6 undocumented).
    pub invitation_type: Option<i32>,
    /// `IsoCode`.
    pub iso_code: Option<String>,
    /// `MobileNo`.
    pub mobile_no: Option<String>,
    /// `EmailAddress`.
    pub email_address: Option<String>,
    /// `Message`.
    pub message: Option<String>,
    /// `QueryStringParameter` as the service repeated it (parse it with
    /// `str::parse::<CallExperience>` if needed).
    pub query_string_parameter: Option<String>,
}

impl VideoSessionClient {
    /// A builder for a client of the service at `base`.
    pub fn builder(base: BaseUrl) -> VideoSessionClientBuilder {
        VideoSessionClientBuilder {
            base,
            options: HttpOptions::default(),
            guard: None,
            store: None,
            clock: None,
            policy: LockoutPolicy::SEED,
        }
    }

    /// A client with default options and an in-memory lockout store.
    pub fn new(base: BaseUrl) -> Result<Self, Error> {
        Self::builder(base).build()
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

    /// The lockout guard: the former name of [`lockout_guard`](Self::lockout_guard).
    #[deprecated(note = "renamed to lockout_guard (like the builder's setter)")]
    pub fn lockout(&self) -> &Arc<LockoutGuard> {
        &self.guard
    }

    /// Logs in, at most once: never retried.
    ///
    /// Before anything is sent, the [`LockoutGuard`] reserves the attempt
    /// (waiting while another login of the same account is in flight in this
    /// process) and refuses with [`Error::LockoutRefused`] when a failure could
    /// block the account, or while a block or a 429 pause is known or presumed;
    /// a store that fails refuses with [`Error::Store`]. The outcome is then
    /// recorded: a success removes the failures it proves cleared; wrong
    /// credentials ([`Error::InvalidCredentials`]) and other error answers
    /// count from their arrival; an attempt without an answer (timeout,
    /// dropped connection) or a cancelled call counts from its start for the
    /// attempt timeout + window + margin; [`Error::InvalidSecretKey`],
    /// [`Error::DomainInactive`], validation errors and 429 do not count (429
    /// pauses logins until its `Retry-After`); [`Error::AccountBlocked`] (423)
    /// records the block until `Retry-After`. When recording the outcome fails,
    /// the service's own answer is still returned (and a block is still
    /// honoured by this process).
    pub async fn login(&self, credentials: &Credentials) -> Result<Session, Error> {
        let attempt = self.guard.begin(credentials.account_key()).await?;
        let account = attempt.key().short();
        tracing::info!(%account, "sending login");
        let body = types::LoginRequest {
            secret_key: credentials.secret_key().expose_secret().to_owned(),
            user_name: credentials.user_name().to_owned(),
            password: credentials.password().expose_secret().to_owned(),
        };
        // The last answer's status and media type, for a body the generated client cannot decode.
        let (result, answer) =
            client_support::last_answer::scope(self.api.login().body(body).send()).await;
        let secrets = [
            credentials.secret_key().expose_secret(),
            credentials.password().expose_secret(),
        ];
        match result {
            Ok(answer) => {
                if let Err(e) = attempt.resolve(Outcome::Succeeded).await {
                    // The count stays (which only errs on the safe side).
                    tracing::warn!(%account, error = %e, "could not clear the login failure count");
                }
                tracing::info!(%account, "logged in");
                session_from(answer.into_inner())
            }
            Err(error) => {
                let now = self.guard.clock().now();
                let (outcome, error) = self.classify_login_error(error, now, &secrets, answer);
                let policy = *self.guard.policy();
                let counted = attempt.counted_at_reservation();
                let (failures_in_window, remaining_attempts) = match attempt.resolve(outcome).await
                {
                    Ok(status) => (status.failures_in_window, status.remaining_attempts),
                    // Logged by the guard; the count in the store is at
                    // least what it was at the reservation.
                    Err(_) => (counted, policy.max_failures.saturating_sub(counted)),
                };
                let error = match error {
                    Error::InvalidCredentials { window, .. } => Error::InvalidCredentials {
                        failures_in_window,
                        remaining_attempts,
                        window,
                    },
                    other => other,
                };
                tracing::info!(%account, ?outcome, error = %error, "login failed");
                Err(error)
            }
        }
    }

    fn classify_login_error(
        &self,
        error: ApiError,
        now: SystemTime,
        secrets: &[&str],
        answer: Option<LastAnswer>,
    ) -> (Outcome, Error) {
        match error {
            video_session_client::Error::ErrorResponse(answer) => {
                let status = answer.status().as_u16();
                let retry_after = retry_after_header(answer.headers());
                let body = answer.into_inner();
                let body_retry = body
                    .retry_after_seconds
                    .and_then(|s| u64::try_from(s).ok())
                    .map(Duration::from_secs);
                match (status, body.code.as_str()) {
                    (423, _) | (_, "AccountBlocked") => {
                        let wait = retry_after
                            .or(body_retry)
                            .unwrap_or(self.guard.policy().block)
                            .min(MAX_BLOCK_WAIT);
                        let until = plus(now, wait);
                        (Outcome::Blocked(wait), Error::AccountBlocked { until })
                    }
                    (429, _) => {
                        let wait = retry_after
                            .or(body_retry)
                            .unwrap_or_default()
                            .min(MAX_BLOCK_WAIT);
                        (Outcome::RateLimited(wait), rejected(status, body, secrets))
                    }
                    (_, "InvalidSecretKey") => (Outcome::NotCounted, Error::InvalidSecretKey),
                    (_, "DomainInactive") => (Outcome::NotCounted, Error::DomainInactive),
                    (_, "InvalidCredentials") => (
                        Outcome::Failed,
                        Error::InvalidCredentials {
                            failures_in_window: 0,
                            remaining_attempts: 0,
                            window: self.guard.policy().window,
                        },
                    ),
                    (400, "ValidationFailed") => {
                        (Outcome::NotCounted, rejected(status, body, secrets))
                    }
                    // Any other answer may have been counted, at the latest now.
                    _ => (Outcome::Failed, rejected(status, body, secrets)),
                }
            }
            other => {
                use video_session_client::Error as E;
                let outcome = match &other {
                    // Never sent.
                    E::InvalidRequest(_) => Outcome::NotCounted,
                    E::CommunicationError(e) if e.is_connect() || e.is_builder() => {
                        Outcome::NotCounted
                    }
                    // No answer: the service may process it later.
                    E::CommunicationError(_) | E::Custom(_) => Outcome::Unknown,
                    // An answer arrived (a status at least): counted by now if at all.
                    _ => Outcome::Failed,
                };
                (
                    outcome,
                    transport_error(other, secrets, OP_LOGIN, self.timeouts, answer),
                )
            }
        }
    }

    /// Sends an invitation for `session_id`, with the session's `UserToken`.
    ///
    /// `experience` becomes the `QueryStringParameter`; an empty
    /// [`CallExperience`] sends none. Everything was validated when the values
    /// were built, so nothing here can fail before the call. Not retried.
    ///
    /// Errors to act on: [`Error::Unauthorized`] (log in again),
    /// [`Error::SessionNotFound`], [`Error::Rejected`] (with the field at fault).
    pub async fn send_invitation(
        &self,
        session: &Session,
        session_id: &SessionId,
        invitation: &Invitation,
        experience: &CallExperience,
    ) -> Result<InvitationReceipt, Error> {
        let body = to_generated(invitation.to_wire(experience))?;
        tracing::info!(
            session_id = %session_id,
            channel = invitation.channel(),
            invitation_type = invitation.invitation_type(),
            "sending invitation"
        );
        let token = session.user_token().expose_secret();
        let (result, answer) = client_support::last_answer::scope(
            self.api
                .send_session_invitation()
                .session_id(session_id.as_str())
                .user_token(token)
                .body(body)
                .send(),
        )
        .await;
        match result {
            Ok(answer) => {
                let r = answer.into_inner();
                tracing::info!(session_id = %session_id, "invitation sent");
                Ok(InvitationReceipt {
                    invitation_type: r.invitation_type.map(i32::from),
                    iso_code: r.iso_code.map(String::from),
                    mobile_no: r.mobile_no.map(String::from),
                    email_address: r.email_address.map(String::from),
                    message: r.message.map(String::from),
                    query_string_parameter: r.query_string_parameter.map(String::from),
                })
            }
            Err(video_session_client::Error::ErrorResponse(answer)) => {
                let status = answer.status().as_u16();
                let body = answer.into_inner();
                let error = match (status, body.code.as_str()) {
                    (401, _) | (_, "Unauthorized") => Error::Unauthorized,
                    (404, _) | (_, "SessionNotFound") => Error::SessionNotFound {
                        session_id: session_id.as_str().to_owned(),
                    },
                    _ => rejected(status, body, &[token]),
                };
                tracing::info!(session_id = %session_id, error = %error, "invitation failed");
                Err(error)
            }
            Err(other) => {
                let error = transport_error(other, &[token], OP_INVITATION, self.timeouts, answer);
                tracing::info!(session_id = %session_id, error = %error, "invitation failed");
                Err(error)
            }
        }
    }
}

fn session_from(r: types::LoginResponse) -> Result<Session, Error> {
    let Some(token) = r.user_token else {
        return Err(Error::UnexpectedResponse {
            status: Some(200),
            detail: "the login succeeded but the answer has no UserToken".to_owned(),
        });
    };
    let mut user = UserDetails::new(r.user_id, r.domain_id, r.login_id);
    user.first_name = r.first_name;
    user.last_name = r.last_name;
    user.profile_image = r.profile_image;
    user.country_code = r.country_code;
    user.phone_no = r.phone_no;
    user.job_role = r.job_role;
    user.domain_name = r.domain_name;
    user.user_name = r.user_name;
    user.notification_email = r.notification_email;
    user.role_code = r.role_code;
    Ok(Session::new(
        user,
        token.into(),
        r.refresh_token.map(Into::into),
    ))
}

fn rejected(status: u16, body: types::ApiError, secrets: &[&str]) -> Error {
    Error::Rejected {
        status,
        code: scrub(&body.code, secrets),
        message: scrub(&body.message, secrets),
        field: body.field.map(|f| scrub(&f, secrets)),
    }
}

/// Maps the errors that are not an error body. Never copies a body or a serde
/// message (which may quote the body) into the error.
fn transport_error(
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
            let mut error = crate::http::from_reqwest(
                operation,
                e,
                Bounds {
                    connect_timeout: Some(timeouts.connect),
                    timeout: Some(timeouts.request),
                    timeout_setting: "timeout",
                    body_setting: "max_body_bytes",
                },
            );
            error.message = scrub(&error.message, secrets);
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
        E::InvalidRequest(m) | E::Custom(m) => Error::UnexpectedResponse {
            status: None,
            detail: format!(
                "the {what} request could not be built: {}",
                scrub(&m, secrets)
            ),
        },
        E::ErrorResponse(answer) => {
            let status = answer.status().as_u16();
            rejected(status, answer.into_inner(), secrets)
        }
    }
}

/// `Retry-After` as delay-seconds (the HTTP-date form is not used by the service).
fn retry_after_header(headers: &reqwest::header::HeaderMap) -> Option<Duration> {
    headers
        .get(reqwest::header::RETRY_AFTER)?
        .to_str()
        .ok()?
        .trim()
        .parse::<u64>()
        .ok()
        .map(Duration::from_secs)
}

/// The generated request type; the values were validated already, so a
/// failure here means the facade and the spec disagree.
fn to_generated(w: WireInvitation) -> Result<types::InvitationRequest, Error> {
    let field = |name: &'static str| {
        move |e: types::error::ConversionError| {
            Error::Validation(super::ValidationError::new(name, e.to_string()))
        }
    };
    let invitation_type = i32::try_from(w.invitation_type)
        .ok()
        .and_then(|t| types::InvitationType::try_from(t).ok())
        .ok_or_else(|| {
            Error::Validation(super::ValidationError::new(
                "InvitationType",
                "must be 1 to 6",
            ))
        })?;
    Ok(types::InvitationRequest {
        invitation_type,
        iso_code: w.iso_code.map(types::IsoCode),
        mobile_no: w.mobile_no.map(types::MobileNo),
        email_address: w
            .email_address
            .map(types::EmailAddress::try_from)
            .transpose()
            .map_err(field("EmailAddress"))?,
        message: w
            .message
            .map(types::InvitationMessage::try_from)
            .transpose()
            .map_err(field("Message"))?,
        query_string_parameter: w.query_string_parameter.map(types::QueryStringParameter),
    })
}

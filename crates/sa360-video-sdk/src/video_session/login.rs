//! Login: one attempt through the lockout guard, never retried.

use std::time::{Duration, SystemTime};

use sa360_video_client_support::last_answer::Answer as LastAnswer;
use secrecy::ExposeSecret;
use video_session_client::types;

use super::client::{
    ApiError, MAX_BLOCK_WAIT, OP_LOGIN, VideoSessionClient, rejected, retry_after_header,
    transport_error,
};
use super::clock::plus;
use super::credentials::Credentials;
use super::error::Error;
use super::lockout::Outcome;
use super::login_request::{self, LoginBody};
use super::session::{Session, UserDetails};

impl VideoSessionClient {
    /// Logs in with `credentials`, at most once: never retried. Send it with
    /// [`LoginRequest::send`].
    ///
    /// The credentials are borrowed, not copied: they hold secrets that are
    /// never duplicated in memory.
    ///
    /// Before anything is sent, the [`LockoutGuard`](super::LockoutGuard) reserves the attempt
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
    /// honoured by this process); wrong credentials then carry the store's
    /// error (`unrecorded`, saying that the login was sent and what the guard
    /// assumes) instead of a count, and the guard logs it as a warning.
    pub fn login<'a>(&'a self, credentials: &'a Credentials) -> LoginRequest<'a> {
        LoginRequest {
            client: self,
            credentials,
        }
    }
}

/// A login, built by [`VideoSessionClient::login`]; [`send`](Self::send) it.
#[derive(Debug)]
#[must_use = "a login request does nothing until .send() is awaited"]
pub struct LoginRequest<'a> {
    client: &'a VideoSessionClient,
    credentials: &'a Credentials,
}

impl LoginRequest<'_> {
    /// Sends the login (see [`VideoSessionClient::login`] for what the lockout
    /// guard does before and after) and returns the session.
    pub async fn send(self) -> Result<Session, Error> {
        let LoginRequest {
            client,
            credentials,
        } = self;
        let attempt = client.guard.begin(credentials.account_key()).await?;
        // The short key is formatted only inside enabled events: building it eagerly allocated a
        // String at every login, even with tracing off.
        let key = *attempt.key();
        tracing::info!(account = %key.short(), "sending login");
        let body = LoginBody {
            password: credentials.password().expose_secret(),
            secret_key: credentials.secret_key().expose_secret(),
            user_name: credentials.user_name(),
        };
        // The body borrows the credentials; the request is the generated builder's, its URL parsed
        // once per client (login_request/). The scope gives the last answer's status and media
        // type, for a body the generated decoder cannot read. The call's future is kilobytes: it
        // is pinned where it lies and the scope gets a pointer (moving it into the scope copied it
        // at every login; boxing it cost a kilobytes-sized allocation and a copy into cold
        // memory). Its output is boxed: the generated `Result` is hundreds of bytes and was copied
        // at each step out of the scope.
        let (api, url) = (&client.api, &client.login_url);
        let call = async move { Box::new(login_request::send(api, url, &body).await) };
        tokio::pin!(call);
        let (result, answer) = sa360_video_client_support::last_answer::scope(call).await;
        let secrets = [
            credentials.secret_key().expose_secret(),
            credentials.password().expose_secret(),
        ];
        match *result {
            Ok(answer) => {
                // On a store error the count stays (which only errs on the safe side); the guard
                // logs what it assumes.
                let _ = attempt.resolve(Outcome::Succeeded).await;
                tracing::info!(account = %key.short(), "logged in");
                session_from(answer.into_inner())
            }
            Err(error) => {
                let now = client.guard.clock().now();
                let (outcome, error) = classify_login_error(client, error, now, &secrets, answer);
                let counted = attempt.counted_at_reservation();
                let (failures_in_window, remaining_attempts, unrecorded) =
                    match attempt.resolve(outcome).await {
                        Ok(status) => (status.failures_in_window, status.remaining_attempts, None),
                        // Logged by the guard. The count after this answer is unknown: the one at
                        // the reservation is a lower bound, and no login is sent while the store
                        // fails, so none remains; the message says so instead of a count.
                        Err(e) => (counted, 0, Some(Box::new(e))),
                    };
                let error = match error {
                    Error::InvalidCredentials { window, .. } => Error::InvalidCredentials {
                        failures_in_window,
                        remaining_attempts,
                        window,
                        unrecorded,
                    },
                    other => other,
                };
                tracing::info!(account = %key.short(), ?outcome, error = %error, "login failed");
                Err(error)
            }
        }
    }
}

/// What a failed login means for the lockout count, and the error to return.
fn classify_login_error(
    client: &VideoSessionClient,
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
                        .unwrap_or(client.guard.policy().block)
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
                        window: client.guard.policy().window,
                        unrecorded: None,
                    },
                ),
                (400, "ValidationFailed") => (Outcome::NotCounted, rejected(status, body, secrets)),
                // Any other answer may have been counted, at the latest now.
                _ => (Outcome::Failed, rejected(status, body, secrets)),
            }
        }
        other => {
            use video_session_client::Error as E;
            let outcome = match &other {
                // Never sent.
                E::InvalidRequest(_) => Outcome::NotCounted,
                E::CommunicationError(e) if e.is_connect() || e.is_builder() => Outcome::NotCounted,
                // No answer: the service may process it later.
                E::CommunicationError(_) | E::Custom(_) => Outcome::Unknown,
                // An answer arrived (a status at least): counted by now if at all.
                _ => Outcome::Failed,
            };
            (
                outcome,
                transport_error(other, secrets, OP_LOGIN, client.timeouts, answer),
            )
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

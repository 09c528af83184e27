//! The one error type of the video session SDK.

use std::fmt;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use super::clock::format_utc;
use crate::http::{BaseUrlError, TransportError};

/// A value refused before any network call.
///
/// `field` is the wire name of the field at fault (`"EmailAddress"`,
/// `"MobileNo"`, `"QueryStringParameter"`, ...), the same name the service
/// uses in a `ValidationFailed` answer. The reason never repeats a secret.
/// It reads as the search ads client's:
/// ``invalid input: `MobileNo` must have 6 to 15 digits, not 5 (nothing was sent)``.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid input: `{field}` {reason} (nothing was sent)")]
pub struct ValidationError {
    /// The wire name of the field at fault.
    pub field: &'static str,
    /// What is wrong and what is expected.
    pub reason: String,
}

impl ValidationError {
    /// A validation error for `field`.
    pub fn new(field: &'static str, reason: impl Into<String>) -> Self {
        Self {
            field,
            reason: reason.into(),
        }
    }
}

impl Error {
    /// [`Error::Validation`] for `field`: what every constructor of the video
    /// session values returns, so `?` needs one error type for the service.
    pub(crate) fn invalid(field: &'static str, reason: impl Into<String>) -> Self {
        Error::Validation(ValidationError::new(field, reason))
    }

    /// The [`ValidationError`] of a value refused before any network call, if this is one.
    pub fn as_validation(&self) -> Option<&ValidationError> {
        match self {
            Error::Validation(v) => Some(v),
            _ => None,
        }
    }
}

/// Why a login is refused before it is sent: what a [`LockoutStore`](crate::video_session::LockoutStore)
/// reports in [`AccountView::refusal`](crate::video_session::AccountView::refusal), and what
/// [`Error::LockoutRefused`] and [`LockoutStatus`](crate::video_session::LockoutStatus) carry. The one
/// refusal type of the SDK.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum RefusalReason {
    /// So many attempts are counted in the window that one more failure would
    /// block the account.
    BudgetExhausted {
        /// Failed (or unanswered) attempts counted.
        failures_in_window: u32,
        /// The policy's window, for the message.
        window: Duration,
    },
    /// The service said the account is blocked (423), and the block has not ended.
    KnownBlock,
    /// More attempts are counted in the window than the service allows (for
    /// example after logins whose outcome is unknown), so the account may be
    /// blocked; the guard waits as if it were.
    PresumedBlock {
        /// Failed or unanswered attempts counted.
        failures_in_window: u32,
        /// The policy's window, for the message.
        window: Duration,
    },
    /// The service asked to slow down (429 with `Retry-After`).
    RateLimited,
    /// The lockout store cannot show that it remembers every attempt of the
    /// window (a Redis server that restarted, was flushed, evicted the store's
    /// keys, or was never declared new): attempts it may have forgotten could
    /// still count at the service, so the guard assumes the worst until they
    /// cannot (VS-18).
    StoreForgot {
        /// What the store saw.
        cause: StoreLoss,
    },
}

/// Why a lockout store cannot show that it remembers every attempt of the
/// window ([`RefusalReason::StoreForgot`]). Only [`NoRecord`](Self::NoRecord)
/// and [`ServerStarted`](Self::ServerStarted) may be a store that was never set
/// up; every other cause is a loss, and declaring the store new then would let
/// forgotten attempts block the account (`RedisStore::initialize` refuses it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum StoreLoss {
    /// No record and no sign of a loss: most likely a store never declared new.
    NoRecord,
    /// The server restarted (or another server took over without its history)
    /// since the record was written: writes after its last snapshot or fsync
    /// are lost.
    Restarted,
    /// The server ran `FLUSHALL` or `FLUSHDB` since it started.
    Flushed,
    /// The server evicted keys under an `allkeys-*` `maxmemory-policy`.
    Evicted,
    /// The server started less than a lockout window ago, without the record
    /// (a restart without persistence).
    ServerStarted,
    /// The store's key holds data of another version or program.
    OtherFormat,
}

impl fmt::Display for StoreLoss {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            StoreLoss::NoRecord => "it has no record of these accounts and no sign of a loss, so it was most likely never declared new",
            StoreLoss::Restarted => "the Redis server restarted, or another server took over without its history, since the store last wrote (writes after the last snapshot or fsync are lost)",
            StoreLoss::Flushed => "the Redis server ran FLUSHALL or FLUSHDB since it started",
            StoreLoss::Evicted => "the Redis server evicted keys (its maxmemory-policy is allkeys-*: set noeviction or a volatile-* policy, which never evicts the store's keys)",
            StoreLoss::ServerStarted => "the Redis server started less than a lockout window ago without the store's record: a new deployment, or a restart without persistence",
            StoreLoss::OtherFormat => "its keys were written by another version of this SDK or another program",
        })
    }
}

impl fmt::Display for RefusalReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RefusalReason::BudgetExhausted {
                failures_in_window,
                window,
            } => write!(
                f,
                "{} in the last {}; one more failure would block the account",
                counted(*failures_in_window, "failed attempt", "failed attempts"),
                describe_duration(*window)
            ),
            RefusalReason::KnownBlock => f.write_str("the service reported the account blocked"),
            RefusalReason::PresumedBlock {
                failures_in_window,
                window,
            } => write!(
                f,
                "{} in the last {}; the account may be blocked",
                counted(
                    *failures_in_window,
                    "failed or unanswered attempt",
                    "failed or unanswered attempts"
                ),
                describe_duration(*window)
            ),
            RefusalReason::RateLimited => {
                f.write_str("the service asked to slow down (HTTP 429 with Retry-After)")
            }
            RefusalReason::StoreForgot { cause } => {
                write!(
                    f,
                    "the lockout store cannot show that it remembers every recent attempt: {cause}; attempts it may have forgotten could still count at the service"
                )?;
                if matches!(cause, StoreLoss::NoRecord | StoreLoss::ServerStarted) {
                    f.write_str(" (a Redis deployment that never held lockout counts is declared new once with RedisStore::initialize; one that did must not be: wait)")?;
                } else {
                    f.write_str(" (this is a loss of data: do not declare the store new)")?;
                }
                Ok(())
            }
        }
    }
}

/// `10 minutes`, `1 minute`, `90 seconds`, `2 hours`, `1500 ms`: the largest
/// unit that divides the duration exactly.
pub(crate) fn describe_duration(d: Duration) -> String {
    let ms = d.as_millis();
    if !ms.is_multiple_of(1000) {
        return format!("{ms} ms");
    }
    let secs = ms / 1000;
    if secs.is_multiple_of(3600) && secs > 0 {
        counted(secs / 3600, "hour", "hours")
    } else if secs.is_multiple_of(60) && secs > 0 {
        counted(secs / 60, "minute", "minutes")
    } else {
        counted(secs, "second", "seconds")
    }
}

/// `1 failed attempt`, `3 failed attempts`.
fn counted(n: impl Into<u128>, one: &str, many: &str) -> String {
    let n = n.into();
    if n == 1 {
        format!("1 {one}")
    } else {
        format!("{n} {many}")
    }
}

fn invalid_credentials_message(
    failures_in_window: u32,
    remaining_attempts: u32,
    window: Duration,
    unrecorded: Option<&StoreError>,
) -> String {
    if let Some(store) = unrecorded {
        return format!(
            "login failed: wrong user name or password; the failure count is unknown: {store}"
        );
    }
    let failures = counted(failures_in_window, "failed attempt", "failed attempts");
    let next = match remaining_attempts {
        0 => "further logins are paused to avoid locking the account".to_owned(),
        1 => "1 more is allowed before logins are paused to avoid locking the account".to_owned(),
        n => format!("{n} more are allowed before logins are paused to avoid locking the account"),
    };
    format!(
        "login failed: wrong user name or password ({failures} in the last {}; {next})",
        describe_duration(window)
    )
}

/// Where a lockout store failed. Logins are refused while the store cannot be
/// read or written, because an unknown count could let a login block the account.
///
/// [`step`](Self::step) says where the login stood: before it was sent (it was
/// not), or after (it was, and its answer could not be recorded); the message
/// says so, so a store's own text never has to guess.
#[derive(Debug, Clone, thiserror::Error)]
#[error("lockout store {location}: {message}{}", step.suffix())]
pub struct StoreError {
    /// The store, e.g. the file path.
    pub location: String,
    /// What failed and what to do (the store's own words, about the store only).
    pub message: String,
    /// The I/O error behind it, if any (shared, so the error is `Clone`).
    #[source]
    pub source: Option<Arc<std::io::Error>>,
    /// The login step the store failed in (set by the guard).
    pub step: StoreStep,
}

impl StoreError {
    /// A store error without an I/O cause.
    pub fn new(location: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            location: location.into(),
            message: message.into(),
            source: None,
            step: StoreStep::Unspecified,
        }
    }

    /// A store error caused by an I/O error.
    pub fn io(location: impl Into<String>, message: impl Into<String>, e: std::io::Error) -> Self {
        Self {
            location: location.into(),
            message: message.into(),
            source: Some(Arc::new(e)),
            step: StoreStep::Unspecified,
        }
    }

    /// The same error, saying which login step it happened in.
    pub fn at(mut self, step: StoreStep) -> Self {
        self.step = step;
        self
    }
}

/// The step of a login in which a lockout store failed: whether the login was
/// sent, and what the guard assumes since.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum StoreStep {
    /// Not during a login (reading a status, opening the store), or not said.
    #[default]
    Unspecified,
    /// Reserving the attempt, before the login: the login was not sent.
    Reserve,
    /// Recording the answer of a login that WAS sent: the store could not
    /// record it.
    Record {
        /// The service's answer that could not be recorded ("wrong user name
        /// or password", "logged in", "no answer", ...).
        answer: &'static str,
        /// What the guard assumes instead, and until when.
        assumed: String,
    },
}

impl StoreStep {
    /// What the step adds to the store's message.
    fn suffix(&self) -> String {
        match self {
            StoreStep::Unspecified => String::new(),
            StoreStep::Reserve => "; the login was not sent".to_owned(),
            StoreStep::Record { answer, assumed } => format!(
                "; the login WAS sent, and its answer ({answer}) could not be recorded: {assumed}"
            ),
        }
    }
}

/// Everything that can go wrong in [`VideoSessionClient`](super::VideoSessionClient).
///
/// Every variant's message says what to do next, and none carries a secret:
/// credentials, tokens and response bodies are never copied into an error, and
/// texts that come from the service are scrubbed of the secrets sent with the
/// request.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A value was refused before any network call.
    #[error(transparent)]
    Validation(#[from] ValidationError),

    /// The lockout guard did not send the login, so the account cannot be blocked
    /// by it. Nothing was sent; try again at `retry_at`.
    #[error(
        "login not sent: {reason}; safe to try again at {} (in {} s)",
        format_utc(*retry_at),
        retry_after.as_secs() + u64::from(retry_after.subsec_nanos() > 0)
    )]
    LockoutRefused {
        /// Why the login was not sent.
        reason: RefusalReason,
        /// When a login may be sent again.
        retry_at: SystemTime,
        /// `retry_at` minus the time of the refusal.
        retry_after: Duration,
    },

    /// The service rejected the user name or password (401 `InvalidCredentials`).
    ///
    /// When the lockout store could not record this answer (`unrecorded`), the
    /// count after it is unknown: `failures_in_window` is the count when the
    /// attempt was reserved (a lower bound), `remaining_attempts` is 0 (no
    /// login is sent while the store fails), and the message says so instead of
    /// a count.
    #[error("{}", invalid_credentials_message(*failures_in_window, *remaining_attempts, *window, unrecorded.as_deref()))]
    InvalidCredentials {
        /// Failed attempts counted in the window, this one included.
        failures_in_window: u32,
        /// Attempts the guard still lets through before refusing.
        remaining_attempts: u32,
        /// The policy's window, for the message.
        window: Duration,
        /// Why the store could not record this failure, if it could not.
        unrecorded: Option<Box<StoreError>>,
    },

    /// The service reported the account blocked (423 `AccountBlocked`). No login
    /// is sent for this account until `until`.
    #[error(
        "account blocked by the service after too many failed logins; do not try again before {}",
        format_utc(*until)
    )]
    AccountBlocked {
        /// When the block ends (from `Retry-After`).
        until: SystemTime,
    },

    /// The domain secret key was not accepted (401 `InvalidSecretKey`). This does
    /// not count toward the lockout.
    #[error("login failed: the domain secret key was not accepted; check the secret key")]
    InvalidSecretKey,

    /// The domain of the secret key is inactive (403 `DomainInactive`).
    #[error("login failed: the domain is inactive; ask the domain's administrator to activate it")]
    DomainInactive,

    /// The `UserToken` was missing, unknown or expired (401 `Unauthorized`).
    #[error("the user token was rejected; log in again")]
    Unauthorized,

    /// No session has this ID (404 `SessionNotFound`).
    #[error("session {session_id:?} not found; check the session ID")]
    SessionNotFound {
        /// The session ID sent.
        session_id: String,
    },

    /// Any other error answer of the service.
    #[error("the service rejected the request: HTTP {status} {code}: {message}{}",
        field.as_ref().map(|f| format!(" (field {f})")).unwrap_or_default())]
    Rejected {
        /// HTTP status.
        status: u16,
        /// The body's `Code` (`ValidationFailed`, `InternalError`, ...).
        code: String,
        /// The body's `Message`, with any secret sent in the request removed.
        message: String,
        /// The body's `Field`, for `ValidationFailed`.
        field: Option<String>,
    },

    /// The service answered with a redirect, which is not followed (a
    /// cross-origin redirect would carry the token or the login body elsewhere).
    #[error(
        "the service answered HTTP {status} redirecting to {location}; not followed: check the base URL"
    )]
    Redirected {
        /// HTTP status (3xx).
        status: u16,
        /// The origin (scheme, host, port) of the `Location` header, or `"(none)"`.
        location: String,
    },

    /// An answer that does not match the spec.
    #[error("unexpected answer from the service{}: {detail}",
        status.map(|s| format!(" (HTTP {s})")).unwrap_or_default())]
    UnexpectedResponse {
        /// HTTP status, when an answer arrived.
        status: Option<u16>,
        /// What was unexpected (never the body itself).
        detail: String,
    },

    /// The request failed on the wire: the connection could not be opened,
    /// a timeout passed, or the answer's body was too large or stalled. The
    /// [`TransportError`] says which, and names the
    /// [`HttpOptions`](crate::http::HttpOptions) setting that bounds it.
    #[error(transparent)]
    Transport(#[from] TransportError),

    /// The lockout store failed; no login is sent while it does. A login
    /// returns it only when the reservation failed (the login was not sent):
    /// after a login was sent, the service's own answer is returned instead
    /// (wrong credentials carry the store's error in `unrecorded`) and the
    /// failure is logged with what the guard assumes.
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// A refused base URL is a [`Error::Validation`] of the setting `base_url`.
impl From<BaseUrlError> for Error {
    fn from(e: BaseUrlError) -> Self {
        Error::Validation(ValidationError::new("base_url", e.to_string()))
    }
}

/// Redacts the secrets a request carried where the *service's* text echoes them: each
/// occurrence of a secret that stands as a value of its own (not preceded or followed by a
/// letter, digit or `_`) becomes `[REDACTED]`.
///
/// Only for text the service wrote (its error body): the SDK's own messages never format a
/// secret (secrets are typed and print `[REDACTED]`), so they are never searched. An echo is the
/// value the request sent, whole; a secret that merely occurs inside another word (the password
/// `p` in `tcp`) is not an echo and is left alone, so unrelated text is neither mangled nor made
/// to reveal the secret's shape.
pub(crate) fn redact_echoes(text: &str, secrets: &[&str]) -> String {
    let word = |c: char| c.is_alphanumeric() || c == '_';
    let mut out = text.to_owned();
    for secret in secrets.iter().filter(|s| !s.is_empty()) {
        let mut result = String::with_capacity(out.len());
        let mut rest = out.as_str();
        while let Some(at) = rest.find(secret) {
            let before = rest[..at].chars().next_back();
            let after = rest[at + secret.len()..].chars().next();
            let whole = !before.is_some_and(word) && !after.is_some_and(word);
            result.push_str(&rest[..at]);
            if whole {
                result.push_str("[REDACTED]");
                rest = &rest[at + secret.len()..];
            } else {
                // Not an echo: keep this character and look further.
                let step = rest[at..].chars().next().map_or(1, char::len_utf8);
                result.push_str(&rest[at..at + step]);
                rest = &rest[at + step..];
            }
        }
        result.push_str(rest);
        out = result;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::UNIX_EPOCH;

    #[test]
    fn lockout_message_says_when_it_is_safe() {
        let e = Error::LockoutRefused {
            reason: RefusalReason::BudgetExhausted {
                failures_in_window: 5,
                window: Duration::from_secs(600),
            },
            retry_at: UNIX_EPOCH + Duration::from_secs(600),
            retry_after: Duration::from_millis(59_500),
        };
        assert_eq!(
            e.to_string(),
            "login not sent: 5 failed attempts in the last 10 minutes; one more failure would block the account; safe to try again at 1970-01-01T00:10:00Z (in 60 s)"
        );
    }

    #[test]
    fn invalid_credentials_read_as_a_sentence_with_plurals() {
        let message = |failures_in_window, remaining_attempts| {
            Error::InvalidCredentials {
                failures_in_window,
                remaining_attempts,
                window: Duration::from_secs(600),
                unrecorded: None,
            }
            .to_string()
        };
        assert_eq!(
            message(1, 4),
            "login failed: wrong user name or password (1 failed attempt in the last 10 minutes; 4 more are allowed before logins are paused to avoid locking the account)"
        );
        assert_eq!(
            message(4, 1),
            "login failed: wrong user name or password (4 failed attempts in the last 10 minutes; 1 more is allowed before logins are paused to avoid locking the account)"
        );
        assert_eq!(
            message(5, 0),
            "login failed: wrong user name or password (5 failed attempts in the last 10 minutes; further logins are paused to avoid locking the account)"
        );
        let presumed = RefusalReason::PresumedBlock {
            failures_in_window: 1,
            window: Duration::from_secs(600),
        };
        assert_eq!(
            presumed.to_string(),
            "1 failed or unanswered attempt in the last 10 minutes; the account may be blocked"
        );
        // The window is the policy's, not a fixed "10 minutes".
        let e = Error::InvalidCredentials {
            failures_in_window: 2,
            remaining_attempts: 1,
            window: Duration::from_secs(90),
            unrecorded: None,
        };
        assert!(e.to_string().contains("in the last 90 seconds"), "{e}");
        let r = RefusalReason::BudgetExhausted {
            failures_in_window: 3,
            window: Duration::from_secs(7200),
        };
        assert!(r.to_string().contains("in the last 2 hours"), "{r}");
        assert_eq!(describe_duration(Duration::from_secs(60)), "1 minute");
        assert_eq!(describe_duration(Duration::from_millis(1500)), "1500 ms");
    }

    #[test]
    fn a_failure_the_store_could_not_record_says_the_login_was_sent_and_shows_no_count() {
        let store = StoreError::new("redis://127.0.0.1:6379/0", "connection refused").at(
            StoreStep::Record {
                answer: "wrong user name or password",
                assumed: "counted as an attempt without an answer".to_owned(),
            },
        );
        let e = Error::InvalidCredentials {
            failures_in_window: 1,
            remaining_attempts: 0,
            window: Duration::from_secs(600),
            unrecorded: Some(Box::new(store)),
        };
        assert_eq!(
            e.to_string(),
            "login failed: wrong user name or password; the failure count is unknown: lockout store redis://127.0.0.1:6379/0: connection refused; the login WAS sent, and its answer (wrong user name or password) could not be recorded: counted as an attempt without an answer"
        );
        let before = StoreError::new("/x/lockout.json", "cannot lock").at(StoreStep::Reserve);
        assert_eq!(
            before.to_string(),
            "lockout store /x/lockout.json: cannot lock; the login was not sent"
        );
    }

    #[test]
    fn errors_are_clone_send_sync_static() {
        fn check<T: Clone + Send + Sync + 'static + std::error::Error>() {}
        check::<Error>();
        check::<StoreError>();
        check::<ValidationError>();
    }

    #[test]
    fn a_refused_base_url_is_a_validation_error_of_the_setting() {
        let e: Error = crate::http::BaseUrl::parse("http://example.com")
            .unwrap_err()
            .into();
        assert!(
            matches!(&e, Error::Validation(v) if v.field == "base_url"),
            "{e:?}"
        );
    }

    #[test]
    fn echoed_secrets_are_redacted_as_whole_values_only() {
        assert_eq!(
            redact_echoes("key abc and pw p@ss, abc again", &["abc", "p@ss", ""]),
            "key [REDACTED] and pw [REDACTED], [REDACTED] again"
        );
        // The password `p` inside other words is no echo: the text stays whole and says
        // nothing about the password.
        assert_eq!(
            redact_echoes("tcp connect error: p", &["p"]),
            "tcp connect error: [REDACTED]"
        );
        assert_eq!(
            redact_echoes("tcp connect error", &["p"]),
            "tcp connect error"
        );
        assert_eq!(redact_echoes("abcdef abc_x", &["abc"]), "abcdef abc_x");
        assert_eq!(
            redact_echoes("\"pw-1\" (pw-1)", &["pw-1"]),
            "\"[REDACTED]\" ([REDACTED])"
        );
        assert_eq!(redact_echoes("ééx é", &["é"]), "ééx [REDACTED]");
    }
}

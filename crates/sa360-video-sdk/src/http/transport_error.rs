//! The one transport error both services share: what happened on the wire
//! (connect, timeout, size, stall), without the HTTP library's types.

use std::error::Error as StdError;
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

/// A request that failed on the wire: the connection, a timeout, or a body
/// over one of the [`HttpOptions`](super::HttpOptions) bounds.
///
/// Both services' errors carry it (`search_ads::Error::Transport`,
/// `video_session::Error::Transport`). It is `Clone`, `Send` and `Sync`; the
/// underlying error is kept as a shared `std::error::Error` (reachable through
/// [`source`](std::error::Error::source)), so the HTTP library the SDK uses
/// is not part of its API. The message never holds a URL's query, a body or a
/// secret.
///
/// ```
/// use std::time::Duration;
/// use sa360_video_sdk::http::{TransportError, TransportErrorKind};
///
/// let e = TransportError::new(
///     "login",
///     TransportErrorKind::TimedOut {
///         connect: false,
///         after: Some(Duration::from_secs(30)),
///         setting: "timeout",
///     },
///     "",
/// );
/// assert_eq!(e.setting(), Some("timeout"));
/// assert!(e.may_have_reached_server());
/// assert_eq!(
///     e.to_string(),
///     "login: the request timed out after 30 s. Try again later, or raise HttpOptions::timeout"
/// );
/// ```
#[derive(Clone)]
#[non_exhaustive]
pub struct TransportError {
    /// What happened.
    pub kind: TransportErrorKind,
    /// The operation: the API method (`conversion.insert`, `login`, ...).
    pub operation: &'static str,
    /// The transport's own message (the chain of causes, without the URL);
    /// may be empty.
    pub message: String,
    source: Option<Arc<dyn StdError + Send + Sync>>,
}

/// What went wrong on the wire. `#[non_exhaustive]`: a `match` needs a
/// wildcard arm.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum TransportErrorKind {
    /// The connection could not be opened (refused, name resolution, TLS
    /// handshake): the request was not sent.
    Connect,
    /// A timeout passed.
    TimedOut {
        /// True when the connection could not be opened in time (the request
        /// was not sent).
        connect: bool,
        /// The timeout that passed, when known.
        after: Option<Duration>,
        /// The [`HttpOptions`](super::HttpOptions) field that sets it
        /// (`connect_timeout`, `timeout` or `read_timeout`).
        setting: &'static str,
    },
    /// The answer's body was larger than the limit; reading it stopped there.
    TooLarge {
        /// The limit, in bytes.
        limit: u64,
        /// The `Content-Length` the server announced, when it was over the limit.
        announced: Option<u64>,
        /// The [`HttpOptions`](super::HttpOptions) field that sets the limit
        /// (`max_body_bytes` or `max_download_bytes`).
        setting: &'static str,
    },
    /// The answer's body stopped making progress: less than 1 KiB arrived
    /// within [`HttpOptions::read_timeout`](super::HttpOptions::read_timeout).
    Stalled {
        /// The stall timeout.
        after: Duration,
        /// Bytes received before it stalled.
        received: u64,
    },
    /// The HTTP client could not be built (the TLS backend could not be set up).
    ClientBuild,
    /// The connection failed after the request may have been sent (reset,
    /// closed, a body cut short).
    Other,
}

impl TransportError {
    /// A transport error of `kind` in `operation`, with the transport's
    /// `message` (may be empty). For tests of code that handles these errors;
    /// the SDK builds its own from the HTTP library's errors.
    pub fn new(
        operation: &'static str,
        kind: TransportErrorKind,
        message: impl Into<String>,
    ) -> Self {
        Self {
            kind,
            operation,
            message: message.into(),
            source: None,
        }
    }

    /// The same error, keeping `source` as its cause.
    pub(crate) fn caused_by(mut self, source: impl StdError + Send + Sync + 'static) -> Self {
        self.source = Some(Arc::new(source));
        self
    }

    /// The [`HttpOptions`](super::HttpOptions) field that bounds what failed
    /// (`connect_timeout`, `timeout`, `read_timeout`, `max_body_bytes`,
    /// `max_download_bytes`), when a setting does.
    pub fn setting(&self) -> Option<&'static str> {
        match self.kind {
            TransportErrorKind::TimedOut { setting, .. }
            | TransportErrorKind::TooLarge { setting, .. } => Some(setting),
            TransportErrorKind::Stalled { .. } => Some("read_timeout"),
            _ => None,
        }
    }

    /// True when the request may have reached the server: everything except
    /// a connection that could not be opened (or not in time) and a client
    /// that could not be built.
    pub fn may_have_reached_server(&self) -> bool {
        !matches!(
            self.kind,
            TransportErrorKind::Connect
                | TransportErrorKind::ClientBuild
                | TransportErrorKind::TimedOut { connect: true, .. }
        )
    }

    /// True when trying again may succeed (every kind but
    /// [`TooLarge`](TransportErrorKind::TooLarge) and
    /// [`ClientBuild`](TransportErrorKind::ClientBuild)).
    pub fn is_transient(&self) -> bool {
        !matches!(
            self.kind,
            TransportErrorKind::TooLarge { .. } | TransportErrorKind::ClientBuild
        )
    }

    /// What happened, without the operation and the hint:
    /// `"the request timed out after 30 s"`. For tools that word the hint
    /// themselves (naming their own flags instead of the `HttpOptions` field).
    pub fn what_happened(&self) -> String {
        let message = if self.message.is_empty() {
            String::new()
        } else {
            format!(" ({})", self.message)
        };
        match self.kind {
            TransportErrorKind::Connect => format!("could not connect{message}"),
            TransportErrorKind::TimedOut { connect, after, .. } => format!(
                "{} timed out{}",
                if connect { "connecting" } else { "the request" },
                after
                    .map(|a| format!(" after {} s", a.as_secs_f64()))
                    .unwrap_or_default()
            ),
            TransportErrorKind::TooLarge {
                limit, announced, ..
            } => format!(
                "the answer is larger than the limit of {limit} bytes{}; nothing more was read",
                announced
                    .map(|a| format!(" (it announced {a} bytes)"))
                    .unwrap_or_default()
            ),
            TransportErrorKind::Stalled { after, received } => format!(
                "the answer stalled: less than 1 KiB arrived in {} s (after {received} bytes)",
                after.as_secs_f64()
            ),
            TransportErrorKind::ClientBuild => {
                format!("the HTTP client could not be built{message}")
            }
            TransportErrorKind::Other => format!("the connection failed{message}"),
        }
    }

    /// What to do about it, naming the `HttpOptions` field where one applies.
    fn hint(&self) -> String {
        match self.kind {
            TransportErrorKind::Connect | TransportErrorKind::Other => {
                "Check the network and the base URL, or try again later".to_owned()
            }
            TransportErrorKind::TimedOut { setting, .. } => {
                format!("Try again later, or raise HttpOptions::{setting}")
            }
            TransportErrorKind::TooLarge { setting, .. } => {
                format!("Raise HttpOptions::{setting} if the answer is expected to be that large")
            }
            TransportErrorKind::Stalled { .. } => {
                "Try again later, or raise HttpOptions::read_timeout".to_owned()
            }
            TransportErrorKind::ClientBuild => {
                "The TLS backend (rustls with ring) could not be set up; report it".to_owned()
            }
        }
    }
}

impl fmt::Display for TransportError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: {}. {}",
            self.operation,
            self.what_happened(),
            self.hint()
        )
    }
}

impl fmt::Debug for TransportError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TransportError")
            .field("kind", &self.kind)
            .field("operation", &self.operation)
            .field("message", &self.message)
            .field("source", &self.source.as_ref().map(|s| s.to_string()))
            .finish()
    }
}

impl StdError for TransportError {
    fn source(&self) -> Option<&(dyn StdError + 'static)> {
        self.source
            .as_deref()
            .map(|s| s as &(dyn StdError + 'static))
    }
}

/// The bounds a client was built with, to say which one a failure passed.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Bounds {
    /// [`HttpOptions::connect_timeout`](super::HttpOptions::connect_timeout), when known.
    pub connect_timeout: Option<Duration>,
    /// The timeout of one attempt, when known.
    pub timeout: Option<Duration>,
    /// The `HttpOptions` field of that timeout (`timeout`, or `read_timeout`
    /// for downloads).
    pub timeout_setting: &'static str,
    /// The `HttpOptions` field of the body limit (`max_body_bytes` or
    /// `max_download_bytes`).
    pub body_setting: &'static str,
}

/// The transport error for a failed request of `operation`. The URL (which
/// may carry a query) is left out of the message.
pub(crate) fn from_reqwest(
    operation: &'static str,
    error: reqwest::Error,
    bounds: Bounds,
) -> TransportError {
    if let Some(limited) = body_limit_error(operation, &error, bounds.body_setting) {
        return limited.caused_by(error.without_url());
    }
    let connect = error.is_connect();
    let kind = if error.is_timeout() {
        TransportErrorKind::TimedOut {
            connect,
            after: if connect {
                bounds.connect_timeout
            } else {
                bounds.timeout
            },
            setting: if connect {
                "connect_timeout"
            } else {
                bounds.timeout_setting
            },
        }
    } else if error.is_builder() {
        TransportErrorKind::ClientBuild
    } else if connect {
        TransportErrorKind::Connect
    } else {
        TransportErrorKind::Other
    };
    let error = error.without_url();
    let message = match kind {
        TransportErrorKind::TimedOut { .. } => String::new(),
        _ => chain(&error),
    };
    TransportError::new(operation, kind, message).caused_by(error)
}

/// The transport error for a body that broke one of the `HttpOptions`
/// limits, when `error`'s source chain holds one (`None` otherwise).
pub(crate) fn body_limit_error(
    operation: &'static str,
    error: &(dyn StdError + 'static),
    body_setting: &'static str,
) -> Option<TransportError> {
    let kind = match sa360_video_client_support::BodyLimitError::find(error)? {
        sa360_video_client_support::BodyLimitError::TooLarge { limit, announced } => {
            TransportErrorKind::TooLarge {
                limit: *limit,
                announced: *announced,
                setting: body_setting,
            }
        }
        sa360_video_client_support::BodyLimitError::Stalled { after, received } => {
            TransportErrorKind::Stalled {
                after: *after,
                received: *received,
            }
        }
        // A kind added to sa360-video-client-support later: reported as a transport failure.
        _ => return None,
    };
    Some(TransportError::new(operation, kind, ""))
}

/// `error: cause: cause`, the whole chain on one line.
fn chain(error: &(dyn StdError + 'static)) -> String {
    let mut message = error.to_string();
    let mut source = error.source();
    while let Some(s) = source {
        let text = s.to_string();
        if !message.contains(&text) {
            message.push_str(": ");
            message.push_str(&text);
        }
        source = s.source();
    }
    message
}

#[cfg(test)]
mod tests {
    use super::*;

    fn assert_traits<T: Clone + Send + Sync + 'static + StdError>() {}

    #[test]
    fn is_clone_send_sync_static() {
        assert_traits::<TransportError>();
    }

    #[test]
    fn messages_name_the_setting() {
        let e = TransportError::new(
            "conversion.get",
            TransportErrorKind::TooLarge {
                limit: 10,
                announced: Some(20),
                setting: "max_body_bytes",
            },
            "",
        );
        assert_eq!(
            e.to_string(),
            "conversion.get: the answer is larger than the limit of 10 bytes (it announced 20 \
             bytes); nothing more was read. Raise HttpOptions::max_body_bytes if the answer is \
             expected to be that large"
        );
        assert!(!e.is_transient());
        let stalled = TransportError::new(
            "login",
            TransportErrorKind::Stalled {
                after: Duration::from_millis(1500),
                received: 3,
            },
            "",
        );
        assert_eq!(stalled.setting(), Some("read_timeout"));
        assert!(
            stalled
                .to_string()
                .ends_with("raise HttpOptions::read_timeout")
        );
        let connect = TransportError::new("login", TransportErrorKind::Connect, "refused");
        assert!(!connect.may_have_reached_server());
        assert_eq!(
            connect.to_string(),
            "login: could not connect (refused). Check the network and the base URL, or try again later"
        );
        let connect_timeout = TransportError::new(
            "login",
            TransportErrorKind::TimedOut {
                connect: true,
                after: Some(Duration::from_secs(10)),
                setting: "connect_timeout",
            },
            "",
        );
        assert!(!connect_timeout.may_have_reached_server());
        assert!(
            connect_timeout
                .to_string()
                .contains("connecting timed out after 10 s")
        );
    }
}

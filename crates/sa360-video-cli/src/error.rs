//! The CLI's error: one readable line and a hint, mapped to an exit status.

use std::fmt;
use std::process::ExitCode;

use sa360_video_sdk::http::{TransportError, TransportErrorKind};
use sa360_video_sdk::search_ads;
use sa360_video_sdk::video_session;

use crate::exit::{EXIT_AUTH, EXIT_OK, EXIT_REFUSED};
pub use crate::exit::{EXIT_ERROR, EXIT_INTERRUPTED, EXIT_REJECTED};

/// An error as the user sees it: `error: <message>` and `hint: <hint>`.
#[derive(Debug)]
pub struct AppError {
    /// One line: what went wrong.
    pub message: String,
    /// One line: what to do about it.
    pub hint: Option<String>,
    /// The exit status (`crate::exit`'s table).
    pub exit: u8,
    /// Stdout was closed by its reader: the command ends quietly, status 0.
    closed_stdout: bool,
}

/// Result of the CLI's functions.
pub type AppResult<T> = Result<T, AppError>;

impl AppError {
    /// An error with a message and no hint.
    pub fn new(message: impl Into<String>) -> Self {
        Self {
            message: one_line(&message.into()),
            hint: None,
            exit: EXIT_ERROR,
            closed_stdout: false,
        }
    }

    /// An input or setting refused before anything was sent (exit status 4).
    pub fn refused(message: impl Into<String>) -> Self {
        Self::new(message).exit(EXIT_REFUSED)
    }

    /// Credentials or a session are needed, or were refused (exit status 5).
    pub fn auth(message: impl Into<String>) -> Self {
        Self::new(message).exit(EXIT_AUTH)
    }

    /// The reader of stdout went away (`apictl tour | head -1`): nothing is
    /// printed and the command exits 0.
    pub fn closed_stdout() -> Self {
        Self {
            closed_stdout: true,
            ..Self::new("stdout was closed").exit(EXIT_OK)
        }
    }

    /// Whether this is [`AppError::closed_stdout`].
    pub fn is_closed_stdout(&self) -> bool {
        self.closed_stdout
    }

    /// Sets the exit status (`crate::exit`'s table).
    #[must_use]
    pub fn exit(mut self, code: u8) -> Self {
        self.exit = code;
        self
    }

    /// Adds (or replaces) the hint.
    #[must_use]
    pub fn hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(one_line(&hint.into()));
        self
    }

    /// Prefixes the message with some context (`"reading x.csv: "`).
    #[must_use]
    pub fn context(mut self, context: impl fmt::Display) -> Self {
        self.message = format!("{context}: {}", self.message);
        self
    }

    /// The exit code.
    pub fn exit_code(&self) -> ExitCode {
        ExitCode::from(self.exit)
    }

    /// Prints `error:` and `hint:` lines to stderr (nothing for a closed
    /// stdout; a closed stderr is ignored).
    pub fn print(&self) {
        use std::io::Write as _;
        if self.closed_stdout {
            return;
        }
        let mut err = std::io::stderr().lock();
        let _ = writeln!(err, "error: {}", self.message);
        if let Some(hint) = &self.hint {
            let _ = writeln!(err, "hint: {hint}");
        }
    }
}

impl fmt::Display for AppError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

/// Collapses line breaks so every message stays one line, and escapes any
/// other control character (a server's text may carry escape sequences that
/// would act on the terminal).
fn one_line(text: &str) -> String {
    let line = if text.contains(['\n', '\r']) {
        text.split(['\n', '\r'])
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .collect::<Vec<_>>()
            .join(" ")
    } else {
        text.to_owned()
    };
    sa360_video_client_support::printable(&line).into_owned()
}

impl From<video_session::Error> for AppError {
    fn from(e: video_session::Error) -> Self {
        use video_session::Error as E;
        // The facade's text names `HttpOptions` fields; say it with the flags
        // apictl has instead (the same as `apictl ads`).
        if let E::Transport(t) = &e {
            return transport(
                format!("video session {}", t.operation),
                t,
                "the video session URL (--url, VIDEO_SESSION_URL or the config file)",
            );
        }
        let hint = match &e {
            E::Validation(v) => format!("fix {} and run the command again", flag_of(v.field)),
            E::LockoutRefused { .. } => {
                "nothing was sent, so the account is not blocked; make sure of the password before trying again at that time"
                    .to_owned()
            }
            E::InvalidCredentials {
                unrecorded: Some(_),
                ..
            } => "check the user name (--user, VIDEO_USER) and the password (VIDEO_PASSWORD); the login was sent but the lockout store could not record its answer, so apictl sends no login for this account until the store named above works again (the default per-user file, or the Redis server of --lockout-store)".to_owned(),
            E::InvalidCredentials {
                remaining_attempts: 0,
                window,
                ..
            } => format!("check the user name (--user, VIDEO_USER) and the password (VIDEO_PASSWORD); apictl will not send another login for this account until the oldest failure is {} old", span(*window)),
            E::InvalidCredentials {
                remaining_attempts: 1,
                window,
                ..
            } => format!("check the user name (--user, VIDEO_USER) and the password (VIDEO_PASSWORD); after 1 more failure within {} apictl stops sending logins for this account", span(*window)),
            E::InvalidCredentials {
                remaining_attempts, window, ..
            } => format!(
                "check the user name (--user, VIDEO_USER) and the password (VIDEO_PASSWORD); after {remaining_attempts} more failures within {} apictl stops sending logins for this account", span(*window)
            ),
            E::AccountBlocked { .. } => {
                "wait until the time above; apictl will not send a login for this account before then"
                    .to_owned()
            }
            E::InvalidSecretKey => {
                "check the domain secret key (--secret-key, VIDEO_SECRET_KEY or the config file)"
                    .to_owned()
            }
            E::DomainInactive => "ask the domain's administrator to activate it".to_owned(),
            E::Unauthorized => "run `apictl video login` again".to_owned(),
            E::SessionNotFound { .. } => {
                "check the session ID (--session, VIDEO_SESSION_ID or the config file)".to_owned()
            }
            E::Rejected { field: Some(f), .. } => format!("fix {f} and try again"),
            E::Rejected { .. } => "see the message; run with -v for the request log".to_owned(),
            E::Redirected { .. } => {
                "check the video session URL (--url, VIDEO_SESSION_URL or the config file) and that the service is up; `apictl sandbox` runs a local one"
                    .to_owned()
            }
            E::UnexpectedResponse { .. } => {
                "the service does not answer as documented; run with -v and report it".to_owned()
            }
            E::Store(_) => "nothing was sent; check the lockout store named above: the per-user lockout file and its directory must be yours only, or the Redis server of --lockout-store (APICTL_LOCKOUT_STORE) must be reachable".to_owned(),
            _ => "run with -v for details".to_owned(),
        };
        let exit = match &e {
            E::Validation(_) | E::LockoutRefused { .. } | E::Store(_) => EXIT_REFUSED,
            E::InvalidCredentials { .. } | E::InvalidSecretKey | E::Unauthorized => EXIT_AUTH,
            _ => EXIT_ERROR,
        };
        let message = match &e {
            // The facade names the wire field; say the flag the operator typed.
            E::Validation(v) => format!("{}: {}", flag_of(v.field), v.reason),
            _ => crate::wording::for_operator(&e.to_string()),
        };
        AppError::new(message).hint(hint).exit(exit)
    }
}

/// `10 minutes`, `90 s`: a lockout window for hints.
fn span(window: std::time::Duration) -> String {
    let secs = window.as_secs();
    if secs.is_multiple_of(60) && secs > 0 {
        format!("{} minutes", secs / 60)
    } else {
        format!("{secs} s")
    }
}

/// The flag or setting behind a video wire field, for hints.
fn flag_of(field: &str) -> String {
    match field {
        "EmailAddress" => "--email".to_owned(),
        "MobileNo" => "the mobile number (--sms or --whatsapp)".to_owned(),
        "IsoCode" => "--country".to_owned(),
        "Message" => "--message".to_owned(),
        "SessionId" => "the session ID (--session, VIDEO_SESSION_ID)".to_owned(),
        "UserName" => "the user name (--user, VIDEO_USER)".to_owned(),
        "Password" => "the password (VIDEO_PASSWORD or the prompt)".to_owned(),
        "SecretKey" => "the secret key (--secret-key, VIDEO_SECRET_KEY)".to_owned(),
        "QueryStringParameter" => {
            "the call experience (--mic, --camera, --observer, --platform)".to_owned()
        }
        other => other.to_owned(),
    }
}

impl From<search_ads::Error> for AppError {
    fn from(e: search_ads::Error) -> Self {
        use search_ads::Error as E;
        // The facade's own text for these names `HttpOptions` fields; say it
        // with the flags apictl has instead.
        match &e {
            E::Transport(t) => {
                return transport(
                    t.operation.to_owned(),
                    t,
                    "the search ads URL (--url, SEARCH_ADS_URL or the config file)",
                );
            }
            E::DeadlineExceeded {
                operation,
                deadline,
                attempts,
                last,
                ..
            } => {
                let last = last
                    .as_ref()
                    .map(|e| {
                        format!(
                            "; the last one failed: {}",
                            AppError::from((**e).clone()).message
                        )
                    })
                    .unwrap_or_default();
                return AppError::new(format!(
                    "{operation}: no answer within the deadline of {} s ({attempts} attempt(s) \
                     started){last}",
                    deadline.as_secs_f64()
                ))
                .hint("try again later, or raise --deadline (seconds)");
            }
            _ => {}
        }
        let hint = match &e {
            E::Validation { field, .. } if field == "batch_size" => format!(
                "use --batch-size 1 to {} (default {})",
                search_ads::MAX_BATCH_SIZE,
                search_ads::DEFAULT_BATCH_SIZE
            ),
            E::Validation { field, .. } if field == "startDate" => {
                "the Reporting API keeps the last 60 days: move --from, or use --api v2 for older conversions while Google still answers it"
                    .to_owned()
            }
            E::Reporting { failure, .. }
                if failure.has_code("USER_PERMISSION_DENIED")
                    || failure.has_code("INVALID_LOGIN_CUSTOMER_ID_SERVING_CUSTOMER_ID_COMBINATION") =>
            {
                "a client account behind a manager needs --login-customer-id (or SEARCH_ADS_LOGIN_CUSTOMER_ID) set to the manager's id; `apictl ads customers` lists the accounts you reach directly"
                    .to_owned()
            }
            E::Reporting { status: 401, .. } => REFUSED_TOKEN_HINT.to_owned(),
            E::Reporting { .. } => "see the message; run with -v for the request log".to_owned(),
            E::Validation { field, .. } if field == "concurrency" => format!(
                "use --concurrency 1 to {} (default 4)",
                search_ads::MAX_CONCURRENCY
            ),
            E::Validation { .. } => "fix the input as the message says".to_owned(),
            E::Api { status: 401, .. } => REFUSED_TOKEN_HINT.to_owned(),
            E::Auth { credential, .. }
            | E::InvalidGrant { credential, .. }
            | E::TokenUnavailable { credential, .. } => credential_hint(&e, *credential).to_owned(),
            E::Api { status: 403 | 404, .. } => {
                "check --agency-id, --advertiser-id, --engine-account-id or --customer-id (or SEARCH_ADS_AGENCY_ID, ...) and the account's permissions"
                    .to_owned()
            }
            E::Api { status: 429, .. } => "wait a little and run the command again".to_owned(),
            E::Api { .. } => "see the message; run with -v for the request log".to_owned(),
            E::UnexpectedResponse { .. } => {
                "the service does not answer as documented; run with -v and report it".to_owned()
            }
            E::Csv { .. } | E::TruncatedDownload { .. } => "download the file again".to_owned(),
            E::Io { .. } => "check that the directory exists and is writable".to_owned(),
            E::JournalBusy { .. } => {
                "wait for the other upload to end; if it leaves rows without an outcome, run the same command with --resume"
                    .to_owned()
            }
            E::JournalGone { .. } => {
                "nothing is left to resume; run without --resume only to upload the whole file again (stored rows then come back as 0x0000011A)"
                    .to_owned()
            }
            E::JournalDamaged { .. } => {
                "pass --restart to upload the file from the start (rows already stored then come back as 0x0000011A)"
                    .to_owned()
            }
            E::Config { .. } => {
                "check the search ads URL (--url, SEARCH_ADS_URL or the config file): https://, or http:// on 127.0.0.1"
                    .to_owned()
            }
            _ => "run with -v for details".to_owned(),
        };
        let exit = match &e {
            E::Validation { .. }
            | E::Config { .. }
            | E::JournalBusy { .. }
            | E::JournalGone { .. }
            | E::JournalDamaged { .. } => EXIT_REFUSED,
            E::Api { status: 401, .. }
            | E::Reporting { status: 401, .. }
            | E::Auth { .. }
            | E::InvalidGrant { .. } => EXIT_AUTH,
            E::TokenUnavailable {
                credential: search_ads::CredentialKind::MetadataServer,
                ..
            } => EXIT_AUTH,
            _ => EXIT_ERROR,
        };
        AppError::new(crate::wording::for_operator(&e.to_string()))
            .hint(hint)
            .exit(exit)
    }
}

/// A transport failure of either service, its hint naming apictl's flag for
/// the `HttpOptions` setting that bounds it. `url` says where the service's
/// URL is set.
fn transport(operation: String, t: &TransportError, url: &str) -> AppError {
    let message = format!("{operation}: {}", t.what_happened());
    let hint = match t.setting() {
        Some("max_body_bytes") => {
            "raise --max-body (bytes) if the answer is expected to be that large".to_owned()
        }
        Some("max_download_bytes") => {
            "raise --max-download (bytes) if the file is expected to be that large".to_owned()
        }
        Some("read_timeout") => "try again later, or raise --stall-timeout (seconds)".to_owned(),
        Some(_) => format!("check {url} and try again later, or raise --timeout (seconds)"),
        None if t.kind == TransportErrorKind::ClientBuild => {
            "the TLS backend could not be set up; run with -v and report it".to_owned()
        }
        None => {
            format!("check {url} and that the service is up; `apictl sandbox` runs a local one")
        }
    };
    AppError::new(message).hint(hint)
}

impl From<sa360_video_sdk::http::BaseUrlError> for AppError {
    fn from(e: sa360_video_sdk::http::BaseUrlError) -> Self {
        AppError::new(e.to_string())
            .hint("give an https:// URL (http:// only for 127.0.0.1 or localhost)")
    }
}

/// Maps an I/O error on `path` to an error with a hint.
pub fn io_error(what: &str, path: &std::path::Path, e: &std::io::Error) -> AppError {
    let hint = match e.kind() {
        std::io::ErrorKind::NotFound => "check the path",
        std::io::ErrorKind::PermissionDenied => "check the file's permissions",
        _ => "check the path and the disk",
    };
    AppError::new(format!("{what} {}: {e}", path.display())).hint(hint)
}

/// The hint of a 401 from the API: the token was refused.
const REFUSED_TOKEN_HINT: &str = "check the credentials: `apictl auth status` shows which are used; sign in again with `apictl auth login`, or pass a new --token / SEARCH_ADS_TOKEN";

/// The hint of a credential that could not give a token, by its kind (issue 25).
fn credential_hint(e: &search_ads::Error, credential: search_ads::CredentialKind) -> &'static str {
    use search_ads::CredentialKind as K;
    use search_ads::Error as E;
    match (e, credential) {
        (E::InvalidGrant { .. }, K::AuthorizedUser) => {
            "sign in again with `apictl auth login` (or `gcloud auth application-default login`); refresh tokens of an OAuth client in \"Testing\" status expire after 7 days"
        }
        (E::Auth { .. }, K::AuthorizedUser) => {
            "check the OAuth client id and secret of the credentials `apictl auth status` names, or sign in again with `apictl auth login`"
        }
        (E::TokenUnavailable { .. }, K::MetadataServer) => {
            "no credentials were found, so the metadata server (Google Cloud only) was asked: sign in with `apictl auth login`, or set SEARCH_ADS_TOKEN, SEARCH_ADS_KEY_FILE or GOOGLE_APPLICATION_CREDENTIALS"
        }
        (E::TokenUnavailable { .. }, _) => {
            "the token endpoint had trouble; nothing was sent to the API, run the command again later"
        }
        (_, K::ServiceAccount) => {
            "check the service-account key file (--key-file / SEARCH_ADS_KEY_FILE, or GOOGLE_APPLICATION_CREDENTIALS) and that the key is enabled in the Google Cloud console"
        }
        (_, K::FixedToken) => {
            "pass a new --token / SEARCH_ADS_TOKEN (tokens expire within the hour), or sign in with `apictl auth login`"
        }
        (_, K::MetadataServer) => {
            "sign in with `apictl auth login`, or set SEARCH_ADS_TOKEN, SEARCH_ADS_KEY_FILE or GOOGLE_APPLICATION_CREDENTIALS"
        }
        _ => {
            "check the credentials: `apictl auth status` shows which are used and where they come from"
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_stay_on_one_line() {
        let e = AppError::new("a\nb\r\n c").hint("x\ny");
        assert_eq!(e.message, "a b c");
        assert_eq!(e.hint.as_deref(), Some("x y"));
    }
}

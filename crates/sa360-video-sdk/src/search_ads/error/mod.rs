//! The SDK's one error type: its messages, hints and classification
//! (transient, may have reached the server). The detail lists of Google's messages are read
//! in `details.rs`; the envelope that carries them in `wire/envelope.rs`.

pub(crate) mod details;
mod reporting;
mod text;

use std::fmt;
use std::time::Duration;

use super::auth::credential_kind::CredentialKind;
use crate::http::{BaseUrlError, TransportError};

use text::clause;

pub use details::{ConversionIssue, IssueCode};
pub use reporting::{ReportingError, ReportingFailure};

/// Anything that can go wrong in the search ads SDK.
///
/// Every message says what happened and what to do about it. Errors are
/// `Clone` (sources are shared) so a batch report can hold the same error for
/// every conversion of a failed batch.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The input was refused before any request was sent.
    #[error("{}", validation_message(field, *index, reason))]
    Validation {
        /// The field at fault, in the API's spelling (`conversionId`,
        /// `rowCount`, `batch_size`, ...).
        field: String,
        /// For batch input, the 0-based index of the conversion at fault.
        index: Option<usize>,
        /// What is wrong and how to fix it.
        reason: String,
    },

    /// The API answered with an error (Google's JSON error envelope, SA-8).
    #[error("{}", api_message(operation, *status, reason.as_deref(), message, details, *details_complete))]
    Api {
        /// The API method, e.g. `conversion.insert`.
        operation: &'static str,
        /// The HTTP status.
        status: u16,
        /// The first machine-readable reason (`requestValidation`, `authError`, ...).
        reason: Option<String>,
        /// The server's message.
        message: String,
        /// Per-conversion (or batch-wide) details parsed from the message (SA-9).
        details: Vec<ConversionIssue>,
        /// False when the list of details arrived cut short or could not be
        /// read whole (Google truncates long messages): conversions it does
        /// not name may have been stored or rejected. Only the details that
        /// arrived whole are in `details`.
        details_complete: bool,
        /// The server's `Retry-After`, when it sent one.
        retry_after: Option<Duration>,
    },

    /// The Search Ads 360 Reporting API answered with an error: a `google.rpc.Status` whose
    /// `SearchAds360Failure` detail is typed in `failure` (SR-6).
    #[error("{}", reporting::reporting_message(operation, *status, failure))]
    Reporting {
        /// The API method, e.g. `customers.searchAds360.search`.
        operation: &'static str,
        /// The HTTP status.
        status: u16,
        /// The typed failure.
        failure: ReportingFailure,
    },

    /// No access token could be obtained: the credentials are wrong or
    /// unusable. Nothing was sent to the API. The message names the
    /// credential and its hint a step that fixes it.
    #[error("could not get an access token from {credential}: {}. {}", clause(message), auth_hint(*credential))]
    Auth {
        /// The kind of credential that failed.
        credential: CredentialKind,
        /// What the token source reported (never the token or a secret).
        message: String,
    },

    /// Application Default Credentials found nothing to sign in with:
    /// `GOOGLE_APPLICATION_CREDENTIALS` is not set, gcloud's file does not
    /// exist, and the metadata server was not used (`reason` says why: the
    /// machine is not on Google Cloud, `NO_GCE_CHECK` is set, or no metadata
    /// server answered the probe). Nothing was sent anywhere.
    #[error(
        "no credentials found: GOOGLE_APPLICATION_CREDENTIALS is not set, there is no gcloud \
         file{} and {reason}; set GOOGLE_APPLICATION_CREDENTIALS to a credentials file or run \
         `gcloud auth application-default login`",
        gcloud_file.as_ref().map(|p| format!(" ({})", p.display())).unwrap_or_default()
    )]
    NoCredentials {
        /// Where gcloud's file would be (`None`: neither `CLOUDSDK_CONFIG`
        /// nor `HOME` is set).
        gcloud_file: Option<std::path::PathBuf>,
        /// Why the metadata server was not used.
        reason: String,
    },

    /// The token endpoint refused the refresh token or the assertion for
    /// good (`invalid_grant`): a refresh token that expired or was revoked,
    /// a deleted service-account key. Nothing was sent to the API. Not
    /// transient: new credentials are needed (the message says how).
    #[error("{credential} no longer work: {}. {}", clause(message), invalid_grant_hint(*credential))]
    InvalidGrant {
        /// The kind of credential refused.
        credential: CredentialKind,
        /// The token endpoint's answer (never a secret).
        message: String,
    },

    /// The token endpoint could not give a token for now: it could not be
    /// reached, did not answer in time, sent an answer over the body limits,
    /// or answered 408, 429 or 5xx. Nothing was sent to the API. Transient:
    /// the call is retried under the client's
    /// [`RetryPolicy`](super::RetryPolicy).
    #[error(
        "could not get an access token from {credential} for now: {}{}. Nothing was sent \
         to the API; try again later{}",
        clause(message),
        status.map(|s| format!(" (HTTP {s})")).unwrap_or_default(),
        if matches!(credential, CredentialKind::MetadataServer) {
            format!(". {}", auth_hint(*credential))
        } else {
            String::new()
        }
    )]
    TokenUnavailable {
        /// The kind of credential whose token endpoint failed.
        credential: CredentialKind,
        /// The token endpoint's HTTP status, when it answered.
        status: Option<u16>,
        /// What happened (never the token, the assertion or the key).
        message: String,
        /// The token endpoint's `Retry-After`, when it sent one.
        retry_after: Option<Duration>,
    },

    /// The call did not finish within its overall deadline (all attempts and
    /// the waits between them).
    #[error(
        "{operation}: no answer within the deadline of {} s ({} started){}. Try again later, or \
         raise HttpOptions::deadline",
        deadline.as_secs_f64(),
        counted(attempts, "attempt", "attempts"),
        last.as_ref().map(|e| format!("; the last one failed: {e}")).unwrap_or_default()
    )]
    DeadlineExceeded {
        /// The API method.
        operation: &'static str,
        /// The deadline ([`HttpOptions::deadline`](crate::http::HttpOptions::deadline)).
        deadline: Duration,
        /// Attempts started before it passed.
        attempts: u32,
        /// True when an attempt was still running when the deadline passed
        /// (it may have reached the server).
        in_flight: bool,
        /// The error of the last finished attempt, if one finished.
        last: Option<Box<Error>>,
    },

    /// The request failed on the wire: the connection could not be opened, a
    /// timeout passed, or the answer's body was too large or stalled. The
    /// [`TransportError`] says which and names the
    /// [`HttpOptions`](crate::http::HttpOptions) setting that bounds it.
    #[error(transparent)]
    Transport(#[from] TransportError),

    /// The server's answer did not have the documented shape.
    #[error(
        "{operation}: unexpected answer{}: {}. The server does not behave as documented; \
         retry, and report it if it persists",
        status.map(|s| format!(" (HTTP {s})")).unwrap_or_default(),
        clause(detail)
    )]
    UnexpectedResponse {
        /// The API method.
        operation: &'static str,
        /// The HTTP status, when known.
        status: Option<u16>,
        /// What was unexpected.
        detail: String,
    },

    /// A line of the ID-mapping file could not be read.
    #[error(
        "ID-mapping file, line {line}: {}. The file does not have the documented columns \
         (Entity Type,Legacy IDs,New IDs); save it with save_id_mapping to inspect it",
        clause(message)
    )]
    Csv {
        /// The 1-based line number (the header is line 1).
        line: u64,
        /// What is wrong with the line.
        message: String,
    },

    /// The ID-mapping download ended before the whole file arrived.
    #[error(
        "the ID-mapping download ended early after {}{}: the file is incomplete. \
         Download it again",
        counted(bytes, "byte", "bytes"),
        expected.map(|e| format!(" of {e}")).unwrap_or_default()
    )]
    TruncatedDownload {
        /// Bytes received.
        bytes: u64,
        /// Bytes announced by `Content-Length`, when it was sent.
        expected: Option<u64>,
    },

    /// A local file could not be written.
    #[error(
        "could not write {path}: {}. Check the directory exists and is writable",
        clause(message)
    )]
    Io {
        /// The file.
        path: String,
        /// The operating system's message.
        message: String,
    },

    /// A write journal is being written by another write (another process,
    /// or another stream of this one): a journal has one owner at a time.
    /// Nothing was sent.
    #[error(
        "{path} is held by another upload (a write journal has one writer at a time); nothing \
         was sent. Wait for it to end, then run the same input again to resume what it left"
    )]
    JournalBusy {
        /// The journal.
        path: String,
    },

    /// A resume found no journal: the write that owned it finished and
    /// removed it (every row then has its outcome), or it was deleted.
    /// Nothing was sent.
    #[error(
        "{path} is gone: the upload that held it finished (and removed it), or it was deleted; \
         nothing was sent"
    )]
    JournalGone {
        /// The journal.
        path: String,
    },

    /// A write journal cannot be trusted: it is not one, or its records
    /// contradict each other or overflow. Nothing was sent.
    #[error(
        "{path} is damaged or not a write journal: {}{reason}; remove it to start over (rows \
         already stored then come back as 0x0000011A)",
        line.map(|l| format!("line {l}: ")).unwrap_or_default()
    )]
    JournalDamaged {
        /// The journal.
        path: String,
        /// The 1-based line at fault, when one is.
        line: Option<u64>,
        /// What is wrong.
        reason: String,
    },

    /// A report query was refused before it was sent: the error the Reporting API would give
    /// for it (its `queryError` code) and the field at fault, checked against the field
    /// catalogue shipped with the crate ([`fields`](crate::search_ads::reporting::fields)).
    #[error("{}", query_message(code, field, reason, suggestion.as_deref(), *typo))]
    Query {
        /// The Reporting API's `queryError` code (`UNRECOGNIZED_FIELD`,
        /// `PROHIBITED_FIELD_IN_WHERE_CLAUSE`, ...).
        code: &'static str,
        /// The field (or resource, or text) at fault, as written in the query.
        field: String,
        /// What is wrong with it.
        reason: String,
        /// The nearest valid name, when the name is unknown and one is near.
        suggestion: Option<String>,
        /// Whether the name is unknown to the catalogue and taken for a typo of `suggestion`
        /// (SR-32): [`UnknownFields::Send`](crate::search_ads::reporting::UnknownFields::Send)
        /// would send it as it is.
        typo: bool,
    },

    /// A row of a report does not fit the caller's row type: the answer is as documented, the
    /// type does not match the query's `SELECT` (a member missing, or of another type). Not
    /// transient; fix the type (an `Option` member for a field the service may leave out) or the
    /// query.
    #[error(
        "the row type {row_type} does not fit the rows of the query (SELECT {columns}): {}. \
         Change the type to match the selected fields (a field the service may leave out as \
         an Option with #[serde(default)]) or select what the type reads",
        clause(detail)
    )]
    RowType {
        /// The caller's type (`std::any::type_name`).
        row_type: &'static str,
        /// The query's selected fields, comma-separated.
        columns: String,
        /// What serde found (the member and the row's position).
        detail: String,
    },

    /// The client could not be built.
    #[error("invalid search ads client configuration: {message}")]
    Config {
        /// What is wrong.
        message: String,
    },
}

/// What to do when `credential` cannot give a token.
fn auth_hint(credential: CredentialKind) -> &'static str {
    use CredentialKind as K;
    match credential {
        K::FixedToken => {
            "A fixed token expires within the hour: pass a new one, or sign in with refresh-token \
             credentials (AuthorizedUser or DefaultCredentials), which renew their token"
        }
        K::AuthorizedUser => {
            "Check client_id, client_secret and refresh_token of the authorized_user credentials \
             (the OAuth client must be of type \"Desktop app\" in the Google Cloud console); sign \
             in again with `gcloud auth application-default login`, or with `apictl auth login` \
             and set GOOGLE_APPLICATION_CREDENTIALS to the file it writes (`apictl auth status` \
             shows it)"
        }
        K::ServiceAccount => {
            "Check the service-account key file (client_email, private_key, token_uri) and that \
             the key is still enabled in the Google Cloud console (IAM > Service accounts > Keys)"
        }
        K::MetadataServer => {
            "The metadata server answers only on Google Cloud (GCE_METADATA_HOST overrides its \
             address); elsewhere set GOOGLE_APPLICATION_CREDENTIALS to a credentials file (the \
             one `apictl auth login` writes, shown by `apictl auth status`), or sign in with \
             `gcloud auth application-default login`"
        }
        _ => "Check the credentials of the token source",
    }
}

/// How to get credentials that work again after `invalid_grant`.
fn invalid_grant_hint(credential: CredentialKind) -> &'static str {
    use CredentialKind as K;
    match credential {
        K::AuthorizedUser => {
            "The refresh token has expired or was revoked (refresh tokens of an OAuth client in \
             \"Testing\" publishing status expire after 7 days; publish the app to keep them): \
             sign in again with `gcloud auth application-default login \
             --scopes=https://www.googleapis.com/auth/doubleclicksearch`, or with `apictl auth \
             login` and set GOOGLE_APPLICATION_CREDENTIALS to the file it writes (`apictl auth \
             status` shows it)"
        }
        K::ServiceAccount => {
            "The key may have been deleted or disabled, or this machine's clock is off by minutes: \
             check the clock, or create a new key in the Google Cloud console (IAM > Service \
             accounts > Keys)"
        }
        other => auth_hint(other),
    }
}

/// A refused base URL is an [`Error::Validation`] of the setting `base_url`.
impl From<BaseUrlError> for Error {
    fn from(e: BaseUrlError) -> Self {
        Error::invalid_base_url("base_url", &e)
    }
}

fn query_message(
    code: &str,
    field: &str,
    reason: &str,
    suggestion: Option<&str>,
    typo: bool,
) -> String {
    let hint = match suggestion {
        Some(name) => format!("; did you mean `{name}`?"),
        None => String::new(),
    };
    let anyway = match typo {
        true => {
            "; if it is a field newer than the catalogue, \
             `SearchOptions::unknown_fields(UnknownFields::Send)` sends it as it is"
        }
        false => "",
    };
    format!("query refused: {code}: `{field}` {reason}{hint} (nothing was sent{anyway})")
}

fn validation_message(field: &str, index: Option<usize>, reason: &str) -> String {
    match index {
        Some(i) => {
            format!("invalid input, conversion at index {i}: `{field}` {reason} (nothing was sent)")
        }
        None => format!("invalid input: `{field}` {reason} (nothing was sent)"),
    }
}

fn api_message(
    operation: &str,
    status: u16,
    reason: Option<&str>,
    message: &str,
    details: &[ConversionIssue],
    details_complete: bool,
) -> String {
    let reason = reason.map(|r| format!(" ({r})")).unwrap_or_default();
    let hint = match status {
        400 if !details_complete => {
            "The list of details was cut short: fix the conversions it names; the others may or \
             may not have been stored, so insert them again (a stored one comes back as 0x0000011A)"
        }
        400 if !details.is_empty() => {
            "Fix the conversions named in the details; the others in the batch were stored"
        }
        400 => "Fix the request as the message says",
        401 => "The access token was refused: check the credentials and the token source",
        403 => {
            "The account may not access this agency or advertiser, or a quota is exhausted: \
             check permissions and quotas in the Google Cloud console"
        }
        404 => "Check the agency, advertiser, engine account or customer id",
        429 => "Rate limited: lower the concurrency or try again later",
        500..=599 => "The service had a problem: try again later",
        _ => "See the message",
    };
    // A batch answer can list hundreds of details; show a few.
    let shown: String = if details.is_empty() {
        text::shortened(message, 300)
    } else {
        let first: Vec<String> = details.iter().take(3).map(|d| d.to_string()).collect();
        let more = details.len().saturating_sub(3);
        let more = if more > 0 {
            format!(" and {more} more")
        } else {
            String::new()
        };
        format!(
            "{}: {}{more}",
            counted(details.len(), "detail", "details"),
            first.join("; ")
        )
    };
    format!(
        "{operation} failed with HTTP {status}{reason}: {}. {hint}",
        clause(&shown)
    )
}

/// `1 detail`, `3 details`.
pub(crate) fn counted(n: impl fmt::Display, one: &str, many: &str) -> String {
    let n = n.to_string();
    if n == "1" {
        format!("1 {one}")
    } else {
        format!("{n} {many}")
    }
}

impl Error {
    /// The validation error of a base-URL setting (`base_url`, `reporting_base_url`).
    pub(crate) fn invalid_base_url(setting: &str, error: &BaseUrlError) -> Self {
        Error::invalid(setting, format!("is refused: {error}"))
    }

    /// `Ok` when `value` is in `1..=max`, else a validation error naming `field`, the value and
    /// the range (every count or size setting of the SDK).
    pub(crate) fn check_range<T>(field: &str, value: T, max: T) -> Result<(), Self>
    where
        T: PartialOrd + From<u8> + std::fmt::Display,
    {
        if value >= T::from(1) && value <= max {
            Ok(())
        } else {
            Err(Error::invalid(
                field,
                format!("is {value}, outside 1..={max}"),
            ))
        }
    }

    /// An [`Error::Auth`] of `credential`.
    pub(crate) fn auth(credential: CredentialKind, message: impl Into<String>) -> Self {
        Error::Auth {
            credential,
            message: message.into(),
        }
    }

    /// The error with `prefix` (the file or setting to fix) before the message of an
    /// [`Error::Auth`] or [`Error::InvalidGrant`]; any other error as it is.
    pub(crate) fn prefixed(self, prefix: &str) -> Self {
        match self {
            Error::Auth {
                credential,
                message,
            } => Error::auth(credential, format!("{prefix}{message}")),
            Error::InvalidGrant {
                credential,
                message,
            } => Error::InvalidGrant {
                credential,
                message: format!("{prefix}{message}"),
            },
            other => other,
        }
    }

    /// A validation error of `field` as a whole (no input index).
    pub(crate) fn invalid(field: impl Into<String>, reason: impl Into<String>) -> Self {
        Error::validation(field, None, reason)
    }

    /// A validation error (used by the SDK and handy for callers' own checks).
    pub(crate) fn validation(
        field: impl Into<String>,
        index: Option<usize>,
        reason: impl Into<String>,
    ) -> Self {
        Error::Validation {
            field: field.into(),
            index,
            reason: reason.into(),
        }
    }

    pub(crate) fn unexpected(
        operation: &'static str,
        status: Option<u16>,
        detail: impl Into<String>,
    ) -> Self {
        Error::UnexpectedResponse {
            operation,
            status,
            detail: detail.into(),
        }
    }

    /// True when trying again may succeed: HTTP 429, 5xx, 403 rate-limit
    /// reasons, timeouts, connection failures and malformed answers.
    pub fn is_transient(&self) -> bool {
        match self {
            Error::Api { status, reason, .. } => {
                *status == 429
                    || *status == 408
                    || (500..=599).contains(status)
                    || (*status == 403
                        && matches!(
                            reason.as_deref(),
                            Some("rateLimitExceeded" | "userRateLimitExceeded")
                        ))
            }
            Error::Reporting {
                status, failure, ..
            } => failure.is_transient(*status),
            Error::Transport(transport) => transport.is_transient(),
            Error::TokenUnavailable { .. } => true,
            // A body that is not the documented JSON (an HTML 502 page from a
            // proxy, a cut-off answer) is most often a front-end hiccup.
            Error::UnexpectedResponse { .. } => true,
            _ => false,
        }
    }

    /// The delay the server asked for with `Retry-After`, if any.
    pub fn retry_after(&self) -> Option<Duration> {
        match self {
            Error::Api { retry_after, .. } | Error::TokenUnavailable { retry_after, .. } => {
                *retry_after
            }
            Error::Reporting { failure, .. } => failure.retry_delay(),
            _ => None,
        }
    }

    /// True when the service may have processed the request, so that a write
    /// may have taken effect even though no definite answer arrived: the
    /// connection failed or timed out after the request was sent, a 5xx or
    /// 408, an answer that could not be read, or a 400 that names conversions
    /// or whose list of details was cut short (the others of its batch were
    /// processed).
    ///
    /// False for errors raised before sending (validation, auth, connection
    /// refused) and for answers that turn the request away before processing
    /// it: 429, a rate-limit 403, 401, other 403s, 404 and a 400 without
    /// per-conversion details.
    pub fn may_have_reached_server(&self) -> bool {
        match self {
            Error::Validation { .. }
            | Error::Query { .. }
            | Error::RowType { .. }
            | Error::Auth { .. }
            | Error::NoCredentials { .. }
            | Error::InvalidGrant { .. }
            | Error::TokenUnavailable { .. }
            | Error::Config { .. }
            | Error::Csv { .. }
            | Error::TruncatedDownload { .. }
            | Error::Io { .. }
            | Error::JournalBusy { .. }
            | Error::JournalGone { .. }
            | Error::JournalDamaged { .. } => false,
            Error::Transport(transport) => transport.may_have_reached_server(),
            Error::DeadlineExceeded {
                in_flight, last, ..
            } => *in_flight || last.as_ref().is_some_and(|e| e.may_have_reached_server()),
            Error::Reporting { status, .. } => *status == 408 || *status >= 500,
            Error::Api {
                status,
                details,
                details_complete,
                ..
            } => {
                *status == 408
                    || *status >= 500
                    || (*status == 400 && (!details.is_empty() || !details_complete))
            }
            Error::UnexpectedResponse { status, .. } => {
                !matches!(status, Some(401 | 403 | 404 | 429))
            }
        }
    }

    /// The HTTP status of an [`Error::Api`].
    pub fn status(&self) -> Option<u16> {
        match self {
            Error::Api { status, .. } | Error::Reporting { status, .. } => Some(*status),
            Error::UnexpectedResponse { status, .. } => *status,
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::details::parse_detail;
    use super::*;

    #[test]
    fn transient_classification() {
        let api = |status, reason: Option<&str>| {
            crate::search_ads::test_support::api_error("x", status, reason)
        };
        assert!(api(429, None).is_transient());
        assert!(api(500, None).is_transient());
        assert!(api(503, Some("backendError")).is_transient());
        assert!(api(403, Some("userRateLimitExceeded")).is_transient());
        assert!(!api(403, Some("insufficientPermissions")).is_transient());
        assert!(!api(401, Some("authError")).is_transient());
        assert!(!api(404, None).is_transient());
        let timeout = |connect| {
            Error::Transport(TransportError::new(
                "x",
                crate::http::TransportErrorKind::TimedOut {
                    connect,
                    after: None,
                    setting: "timeout",
                },
                "",
            ))
        };
        assert!(timeout(false).is_transient());
        assert!(!timeout(true).may_have_reached_server());
        assert!(timeout(false).may_have_reached_server());
        assert!(!Error::auth(CredentialKind::Other, "m").may_have_reached_server());
        // Answers that turn a request away before processing it.
        for turned_away in [
            api(429, None),
            api(403, Some("rateLimitExceeded")),
            api(403, Some("userRateLimitExceeded")),
            api(403, Some("insufficientPermissions")),
            api(401, Some("authError")),
            api(404, None),
            api(400, Some("requestValidation")),
        ] {
            assert!(!turned_away.may_have_reached_server(), "{turned_away:?}");
        }
        for processed in [api(500, None), api(503, None), api(408, None)] {
            assert!(processed.may_have_reached_server(), "{processed:?}");
        }
        let mut named = api(400, None);
        if let Error::Api { details, .. } = &mut named {
            details.push(parse_detail("0x0000011A: dup for conversion index=0"));
        }
        assert!(named.may_have_reached_server());
        // A list cut before its first whole detail was processed all the same.
        let mut cut = api(400, None);
        if let Error::Api {
            details_complete, ..
        } = &mut cut
        {
            *details_complete = false;
        }
        assert!(cut.may_have_reached_server());
        assert!(Error::unexpected("x", Some(200), "cut").may_have_reached_server());
        assert!(!Error::unexpected("x", Some(429), "html").may_have_reached_server());
    }

    #[test]
    fn a_message_that_ends_a_sentence_gets_no_second_period() {
        let text = api_message(
            "conversion.get",
            404,
            None,
            "Engine account 700000000042205 not found for advertiser 21700000012345.",
            &[],
            true,
        );
        assert!(!text.contains(".."), "{text}");
        assert!(text.contains("21700000012345. Check"), "{text}");
        let e = Error::Io {
            path: "x".into(),
            message: "disk full.".into(),
        };
        assert!(!e.to_string().contains(".."), "{e}");
    }

    #[test]
    fn messages_name_the_field_and_index() {
        let e = Error::validation("conversionTimestamp", Some(4), "is required for insert");
        assert_eq!(
            e.to_string(),
            "invalid input, conversion at index 4: `conversionTimestamp` is required for insert (nothing was sent)"
        );
    }
}

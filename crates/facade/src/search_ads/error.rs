//! The facade's one error type and the parsing of Google's error envelope.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

/// Anything that can go wrong in the search ads facade.
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
    #[error("{}", crate::search_ads::reporting::reporting_message(operation, *status, failure))]
    Reporting {
        /// The API method, e.g. `customers.searchAds360.search`.
        operation: &'static str,
        /// The HTTP status.
        status: u16,
        /// The typed failure.
        failure: crate::search_ads::reporting::ReportingFailure,
    },

    /// No access token could be obtained. Nothing was sent.
    #[error(
        "could not get an access token: {message}. Check the credentials (service-account key file: \
         client_email, private_key, token_uri) and that the account may use the doubleclicksearch scope"
    )]
    Auth {
        /// What the token source reported (never the token or the key).
        message: String,
    },

    /// The token endpoint could not give a token for now: it could not be
    /// reached, did not answer in time, or answered 408, 429 or 5xx. Nothing
    /// was sent to the API. Transient: the call is retried under the client's
    /// [`RetryPolicy`](super::RetryPolicy).
    #[error(
        "could not get an access token for now: {message}{}. Nothing was sent to the API; try \
         again later",
        status.map(|s| format!(" (HTTP {s})")).unwrap_or_default()
    )]
    TokenUnavailable {
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

    /// The request or response failed on the network.
    #[error(
        "{operation}: {} ({message}). Check the network and the base URL, or try again later",
        if *connect { "could not connect to the search ads API" } else { "the connection failed" }
    )]
    Transport {
        /// The API method.
        operation: &'static str,
        /// True when the connection could not be opened (the request was not sent).
        connect: bool,
        /// The transport's message.
        message: String,
        /// The underlying error.
        #[source]
        source: Option<Arc<dyn std::error::Error + Send + Sync>>,
    },

    /// The request took longer than the configured timeout.
    #[error(
        "{operation}: {} timed out{}. Try again later, or raise HttpOptions::{}",
        if *connect { "connecting" } else { "the request" },
        after.map(|a| format!(" after {} s", a.as_secs_f64())).unwrap_or_default(),
        if *connect { "connect_timeout" } else { "timeout" }
    )]
    Timeout {
        /// The API method.
        operation: &'static str,
        /// True when the connection could not be opened in time.
        connect: bool,
        /// The timeout that passed (`HttpOptions::connect_timeout` or
        /// `HttpOptions::timeout`), when known.
        after: Option<Duration>,
    },

    /// The answer's body was larger than the configured limit; reading it
    /// stopped there.
    #[error(
        "{operation}: the answer is larger than the limit of {limit} bytes{}; nothing more was \
         read. Raise HttpOptions::{setting} if the answer is expected to be that large",
        announced.map(|a| format!(" (it announced {a} bytes)")).unwrap_or_default()
    )]
    TooLarge {
        /// The API method.
        operation: &'static str,
        /// The limit, in bytes.
        limit: u64,
        /// The `Content-Length` the server announced, when it was over the limit.
        announced: Option<u64>,
        /// The `HttpOptions` field that sets the limit.
        setting: &'static str,
    },

    /// The answer's body stopped making progress.
    #[error(
        "{operation}: the answer stalled: less than 1 KiB arrived in {} s (after {received} \
         bytes). Try again later, or raise HttpOptions::read_timeout",
        after.as_secs_f64()
    )]
    Stalled {
        /// The API method.
        operation: &'static str,
        /// The stall timeout.
        after: Duration,
        /// Bytes received before it stalled.
        received: u64,
    },

    /// The server's answer did not have the documented shape.
    #[error(
        "{operation}: unexpected answer{}: {detail}. The server does not behave as documented; \
         retry, and report it if it persists",
        status.map(|s| format!(" (HTTP {s})")).unwrap_or_default()
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
        "ID-mapping file, line {line}: {message}. The file does not have the documented columns \
         (Entity Type,Legacy IDs,New IDs); save it with save_id_mapping to inspect it"
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
    #[error("could not write {path}: {message}. Check the directory exists and is writable")]
    Io {
        /// The file.
        path: String,
        /// The operating system's message.
        message: String,
    },

    /// The client could not be built.
    #[error("invalid search ads client configuration: {message}")]
    Config {
        /// What is wrong.
        message: String,
    },
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
        truncate(message, 300)
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
    format!("{operation} failed with HTTP {status}{reason}: {shown}. {hint}")
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

fn truncate(text: &str, max_chars: usize) -> String {
    if text.chars().count() <= max_chars {
        text.to_owned()
    } else {
        let cut: String = text.chars().take(max_chars).collect();
        format!("{cut}…")
    }
}

impl Error {
    /// A validation error (used by the facade and handy for callers' own checks).
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
            Error::Transport { .. }
            | Error::Timeout { .. }
            | Error::Stalled { .. }
            | Error::TokenUnavailable { .. } => true,
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
            | Error::Auth { .. }
            | Error::TokenUnavailable { .. }
            | Error::Config { .. }
            | Error::Csv { .. }
            | Error::TruncatedDownload { .. }
            | Error::Io { .. } => false,
            Error::Transport { connect, .. } | Error::Timeout { connect, .. } => !connect,
            Error::TooLarge { .. } | Error::Stalled { .. } => true,
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

/// A conversion upload error code (`0x0000011A`, ...), as listed in SA-9.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct IssueCode(pub u32);

impl IssueCode {
    /// `0x00000100`: a field is missing or invalid (the fake's code; Google documents none).
    pub const FIELD_INVALID: Self = Self(0x100);
    /// `0x00000101`: click id not found.
    pub const CLICK_ID_NOT_FOUND: Self = Self(0x101);
    /// `0x0000010E`: Floodlight activity not found.
    pub const FLOODLIGHT_ACTIVITY_NOT_FOUND: Self = Self(0x10E);
    /// `0x00000115`: custom dimension not found.
    pub const CUSTOM_DIMENSION_NOT_FOUND: Self = Self(0x115);
    /// `0x00000116`: custom metric not found.
    pub const CUSTOM_METRIC_NOT_FOUND: Self = Self(0x116);
    /// `0x0000011A`: the conversion id was already used (the server stored it before).
    pub const DUPLICATE_CONVERSION_ID: Self = Self(0x11A);
    /// `0x0000011B`: conversion id not found (update).
    pub const CONVERSION_ID_NOT_FOUND: Self = Self(0x11B);
    /// `0x0000011D`: no permission for the advertiser.
    pub const NO_PERMISSION: Self = Self(0x11D);
    /// `0x0000011F`: the conversion id is repeated within the request.
    pub const REPEATED_IN_REQUEST: Self = Self(0x11F);

    /// A short description of a documented code.
    pub fn description(self) -> Option<&'static str> {
        Some(match self {
            Self::FIELD_INVALID => "a field is missing or invalid",
            Self::CLICK_ID_NOT_FOUND => "click id not found",
            Self::FLOODLIGHT_ACTIVITY_NOT_FOUND => "Floodlight activity not found",
            Self::CUSTOM_DIMENSION_NOT_FOUND => "custom dimension not found",
            Self::CUSTOM_METRIC_NOT_FOUND => "custom metric not found",
            Self::DUPLICATE_CONVERSION_ID => "conversion id already used",
            Self::CONVERSION_ID_NOT_FOUND => "conversion id not found",
            Self::NO_PERMISSION => "no permission for the advertiser",
            Self::REPEATED_IN_REQUEST => "conversion id repeated within the request",
            _ => return None,
        })
    }
}

impl fmt::Display for IssueCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "0x{:08X}", self.0)
    }
}

/// One detail of a rejected batch: `0x<code>: <text> for conversion index=<n>`
/// (SA-9), or a batch-wide text such as `Empty batch encountered.`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConversionIssue {
    /// The 0-based index of the conversion. In an [`Error::Api`] it is the
    /// index in the request; in a [`WriteReport`](super::WriteReport) outcome
    /// it is the index in the caller's input. `None` for a batch-wide problem.
    pub index: Option<usize>,
    /// The code, when the detail has one.
    pub code: Option<IssueCode>,
    /// The text, without the code and the index suffix.
    pub message: String,
}

impl ConversionIssue {
    /// True for `0x0000011A` (conversion id already used).
    pub fn is_duplicate(&self) -> bool {
        self.code == Some(IssueCode::DUPLICATE_CONVERSION_ID)
    }
}

impl fmt::Display for ConversionIssue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(code) = self.code {
            write!(f, "{code}: ")?;
        }
        f.write_str(&self.message)?;
        if let Some(i) = self.index {
            write!(f, " (conversion index {i})")?;
        }
        Ok(())
    }
}

const DETAILS_MARKER: &str = "Details: [";
const INDEX_MARKER: &str = " index=";
const FOR_MARKER: &str = " for ";

/// Splits `<text> for <item> index=<n>` (`item` is `conversion`, or
/// `availability` for updateAvailability) into the text and the index. The
/// index must end the detail: a detail with anything behind its index is not
/// one this parser can vouch for.
fn split_index(rest: &str) -> Option<(&str, Option<usize>)> {
    let pos = rest.rfind(INDEX_MARKER)?;
    let head = &rest[..pos];
    let for_pos = head.rfind(FOR_MARKER)?;
    let item = &head[for_pos + FOR_MARKER.len()..];
    if item.is_empty() || !item.chars().all(|c| c.is_ascii_alphabetic()) {
        return None;
    }
    let digits = &rest[pos + INDEX_MARKER.len()..];
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let index = digits.parse::<usize>().ok()?;
    Some((&head[..for_pos], Some(index)))
}

/// Parses one detail: `0x0000011A: text for conversion index=3`, or a text
/// without code or index.
pub(crate) fn parse_detail(detail: &str) -> ConversionIssue {
    let detail = detail.trim();
    let (code, rest) = match split_code(detail) {
        Some((code, rest)) => (Some(code), rest),
        None => (None, detail),
    };
    let (message, index) = split_index(rest).unwrap_or((rest, None));
    ConversionIssue {
        index,
        code,
        message: message.trim().to_owned(),
    }
}

/// `0x` + 8 hex digits + `:` at the start of `text`.
fn split_code(text: &str) -> Option<(IssueCode, &str)> {
    let hex = text
        .strip_prefix("0x")
        .or_else(|| text.strip_prefix("0X"))?;
    let digits = hex.get(..8)?;
    if !digits.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    let rest = hex.get(8..)?.strip_prefix(':')?;
    let code = u32::from_str_radix(digits, 16).ok()?;
    Some((IssueCode(code), rest.trim_start()))
}

/// Positions in `list` where a coded detail starts (`0x########:` at the start
/// or after `", "`).
fn detail_starts(list: &str) -> Vec<usize> {
    let mut starts = Vec::new();
    for (pos, _) in list.match_indices("0x") {
        let at_boundary = pos == 0 || list[..pos].ends_with(", ");
        if at_boundary && split_code(&list[pos..]).is_some() {
            starts.push(pos);
        }
    }
    starts
}

/// The details of a 400 answer and whether they arrived whole.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Details {
    /// The details that arrived whole, in the server's order.
    pub issues: Vec<ConversionIssue>,
    /// False when the list was cut short (no closing `]`) or held a detail
    /// that could not be read: conversions it does not name are unknown.
    pub complete: bool,
}

/// Parses the details of `The request was not valid. Details: [d, d, ...]`.
///
/// Details are split at each `, 0x########:` boundary, so a detail text that
/// itself contains commas stays whole. A list without coded details is one
/// batch-wide detail (`[Empty batch encountered.]`).
///
/// Google truncates long messages. In a list without its closing `]` the last
/// detail is kept only when the separator behind its index proves the index
/// whole (`… index=1, 0x0000`); a detail cut inside its text or its index is
/// dropped, and the list is marked incomplete.
pub(crate) fn parse_details_message(message: &str) -> Details {
    let Some(start) = message.find(DETAILS_MARKER) else {
        return Details {
            issues: Vec::new(),
            complete: true,
        };
    };
    let body = &message[start + DETAILS_MARKER.len()..];
    let (list, closed) = match body.rfind(']') {
        Some(end) if body[end + 1..].trim().is_empty() => (&body[..end], true),
        _ => (body, false),
    };
    let starts = detail_starts(list);
    let mut issues = Vec::with_capacity(starts.len() + 1);
    let mut complete = closed;
    if starts.is_empty() {
        let text = list.trim();
        // Without its `]`, even a batch-wide text may be cut: nothing is known.
        if closed && !text.is_empty() {
            issues.push(parse_detail(text));
        }
        return Details { issues, complete };
    }
    // Text before the first coded detail is a batch-wide detail of its own.
    let lead = list[..starts[0]].trim().trim_end_matches(',').trim();
    if !lead.is_empty() {
        issues.push(parse_detail(lead));
    }
    for (n, &s) in starts.iter().enumerate() {
        let last = n + 1 == starts.len();
        let end = starts.get(n + 1).map_or(list.len(), |&next| next);
        let mut piece = list[s..end].trim_end();
        if last && !closed {
            // `…index=3, 0x0000`: the cut fell after the separator behind
            // an index, so the detail before it is whole; anything else may
            // be cut short.
            let whole = piece
                .rmatch_indices(',')
                .map(|(pos, _)| &piece[..pos])
                .find(|head| parse_detail(head).index.is_some());
            match whole {
                Some(head) => piece = head,
                None => continue,
            }
        }
        issues.push(parse_detail(piece.trim_end_matches(',')));
    }
    // A coded detail without a readable index beside indexed ones cannot be
    // placed: the list is not understood whole.
    if issues.iter().any(|i| i.index.is_some()) {
        let before = issues.len();
        issues.retain(|i| i.index.is_some() || i.code.is_none());
        complete &= issues.len() == before;
    }
    Details { issues, complete }
}

/// The parts of Google's error envelope the facade uses (SA-8).
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct Envelope {
    pub message: Option<String>,
    pub status: Option<String>,
    /// `(reason, message)` of each item of `errors[]`.
    pub items: Vec<(Option<String>, Option<String>)>,
}

impl Envelope {
    /// Builds the facade error for an error answer with `status`.
    pub(crate) fn into_error(
        self,
        operation: &'static str,
        status: u16,
        retry_after: Option<Duration>,
    ) -> Error {
        let reason = self
            .items
            .iter()
            .find_map(|(reason, _)| reason.clone())
            .or(self.status.clone());
        let message = self
            .message
            .clone()
            .or_else(|| self.items.iter().find_map(|(_, m)| m.clone()))
            .unwrap_or_else(|| format!("HTTP {status} without a message"));
        // SA-9: errors[] carries one item per detail with the detail as its
        // message; use those when they are coded details, else parse the
        // top-level message's `Details: [...]` list. Either way the list is
        // whole only when the message's list is (Google cuts long messages)
        // and the two agree.
        let from_message = parse_details_message(&message);
        let mut from_items: Vec<ConversionIssue> = self
            .items
            .iter()
            .filter_map(|(_, m)| m.as_deref())
            .filter(|m| split_code(m.trim()).is_some())
            .map(parse_detail)
            .collect();
        let (details, details_complete) = if from_items.is_empty() {
            (from_message.issues, from_message.complete)
        } else {
            let listed = message.contains(DETAILS_MARKER);
            let agree = !listed || from_message.issues.len() == from_items.len();
            let before = from_items.len();
            if before > 1 {
                from_items.retain(|i| i.index.is_some());
            }
            let readable = from_items.len() == before;
            (from_items, from_message.complete && agree && readable)
        };
        Error::Api {
            operation,
            status,
            reason,
            message,
            details,
            details_complete,
            retry_after,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn envelope(body: &[u8]) -> Option<Envelope> {
        let wire: search_ads_client::types::GoogleErrorResponse =
            serde_json::from_slice(body).ok()?;
        Some(Envelope::from_wire(&wire.error))
    }

    #[test]
    fn a_coded_detail_parses() {
        let d = parse_detail(
            "0x00000116: Custom metric 'Banking Account Opens' is not found for conversion index=0",
        );
        assert_eq!(d.code, Some(IssueCode::CUSTOM_METRIC_NOT_FOUND));
        assert_eq!(d.index, Some(0));
        assert_eq!(
            d.message,
            "Custom metric 'Banking Account Opens' is not found"
        );
        assert_eq!(
            d.to_string(),
            "0x00000116: Custom metric 'Banking Account Opens' is not found (conversion index 0)"
        );
    }

    #[test]
    fn a_details_list_with_commas_in_texts_splits_at_codes() {
        let msg = "The request was not valid. Details: [0x0000011A: Advertiser conversion ID 'a, b' is already used by conversion 77 for conversion index=3, 0x00000101: Click ID not found for conversion index=12]";
        let parsed = parse_details_message(msg);
        assert!(parsed.complete);
        let d = parsed.issues;
        assert_eq!(d.len(), 2);
        assert_eq!(d[0].index, Some(3));
        assert!(d[0].is_duplicate());
        assert_eq!(
            d[0].message,
            "Advertiser conversion ID 'a, b' is already used by conversion 77"
        );
        assert_eq!(d[1].code, Some(IssueCode::CLICK_ID_NOT_FOUND));
        assert_eq!(d[1].index, Some(12));
        let a = parse_detail(
            "0x00000100: field is missing or invalid: agencyId for availability index=2",
        );
        assert_eq!(a.index, Some(2));
        assert_eq!(a.message, "field is missing or invalid: agencyId");
        let odd = parse_detail("0x00000100: text for two words index=2");
        assert_eq!(odd.index, None);
    }

    #[test]
    fn a_batch_wide_detail_has_no_index() {
        let d =
            parse_details_message("The request was not valid. Details: [Empty batch encountered.]");
        assert_eq!(
            d,
            Details {
                issues: vec![ConversionIssue {
                    index: None,
                    code: None,
                    message: "Empty batch encountered.".into()
                }],
                complete: true
            }
        );
        assert!(
            parse_details_message("Invalid Credentials")
                .issues
                .is_empty()
        );
    }

    #[test]
    fn a_truncated_details_list_keeps_the_complete_details() {
        const HEAD: &str = "The request was not valid. Details: [";
        let metric = "0x00000116: Custom metric 'x' is not found for conversion index=0";
        // Cut inside the next detail's code: the first detail is whole.
        let d = parse_details_message(&format!("{HEAD}{metric}, 0x0000"));
        assert!(!d.complete);
        assert_eq!(d.issues.len(), 1);
        assert_eq!(d.issues[0].index, Some(0));
        assert_eq!(d.issues[0].message, "Custom metric 'x' is not found");
        // Cut inside a detail's text: the fragment is dropped, not taken for
        // a batch-wide detail.
        let d = parse_details_message(&format!(
            "{HEAD}{metric}, 0x00000101: Click ID 'a, b' not fo"
        ));
        assert!(!d.complete);
        assert_eq!(d.issues.len(), 1);
        assert_eq!(d.issues[0].index, Some(0));
        // Cut inside an index: `index=1` may have been `index=12`.
        let d = parse_details_message(&format!(
            "{HEAD}{metric}, 0x00000101: Click ID not found for conversion index=1"
        ));
        assert!(!d.complete);
        assert_eq!(d.issues.len(), 1);
        // Cut right behind a separator: both are whole.
        let d = parse_details_message(&format!(
            "{HEAD}{metric}, 0x00000101: Click ID 'a, b' not found for conversion index=12,"
        ));
        assert!(!d.complete);
        assert_eq!(d.issues.len(), 2);
        assert_eq!(d.issues[1].index, Some(12));
        // Cut before any detail ended: nothing is known, not even batch-wide.
        let d = parse_details_message(&format!("{HEAD}Empty batch enc"));
        assert_eq!(
            d,
            Details {
                issues: vec![],
                complete: false
            }
        );
        // Anything behind an index makes the detail unreadable.
        let d = parse_details_message(&format!(
            "{HEAD}{metric}, 0x00000101: Click ID not found for conversion index=1x]"
        ));
        assert!(!d.complete);
        assert_eq!(d.issues.len(), 1);
    }

    #[test]
    fn cut_messages_and_disagreeing_items_make_the_details_incomplete() {
        let cut = br#"{"error":{"code":400,"message":"The request was not valid. Details: [0x0000011A: dup for conversion index=1, 0x000","errors":[{"reason":"requestValidation","message":"0x0000011A: dup for conversion index=1"}]}}"#;
        let err = envelope(cut)
            .unwrap()
            .into_error("conversion.insert", 400, None);
        let Error::Api {
            details,
            details_complete,
            ..
        } = &err
        else {
            panic!("{err:?}")
        };
        assert_eq!(details.len(), 1);
        assert!(!details_complete);
        let text = err.to_string();
        assert!(text.contains("cut short"), "{text}");
        assert!(
            !text.contains("the others in the batch were stored"),
            "{text}"
        );

        // Two details in the message, one item: they disagree.
        let disagree = br#"{"error":{"code":400,"message":"The request was not valid. Details: [0x0000011A: dup for conversion index=1, 0x0000011A: dup for conversion index=2]","errors":[{"reason":"requestValidation","message":"0x0000011A: dup for conversion index=1"}]}}"#;
        let err = envelope(disagree)
            .unwrap()
            .into_error("conversion.insert", 400, None);
        assert!(matches!(
            err,
            Error::Api {
                details_complete: false,
                ..
            }
        ));
    }

    #[test]
    fn the_envelope_prefers_coded_items() {
        let body = br#"{"error":{"code":400,"message":"The request was not valid. Details: [0x0000011A: dup for conversion index=1]","errors":[{"domain":"global","reason":"requestValidation","message":"0x0000011A: dup for conversion index=1"}]}}"#;
        let err = envelope(body)
            .unwrap()
            .into_error("conversion.insert", 400, None);
        match &err {
            Error::Api {
                status,
                reason,
                details,
                ..
            } => {
                assert_eq!(*status, 400);
                assert_eq!(reason.as_deref(), Some("requestValidation"));
                assert_eq!(details.len(), 1);
                assert_eq!(details[0].index, Some(1));
            }
            other => panic!("{other:?}"),
        }
        assert!(!err.is_transient());
        let text = err.to_string();
        assert!(
            text.contains("conversion.insert failed with HTTP 400 (requestValidation)"),
            "{text}"
        );
        assert!(text.contains("0x0000011A"), "{text}");
        assert!(
            text.contains("HTTP 400 (requestValidation): 1 detail: "),
            "{text}"
        );
    }

    #[test]
    fn the_envelope_tolerates_missing_members() {
        let e = envelope(br#"{"error":{}}"#).unwrap();
        let err = e.into_error("savedColumns.list", 503, Some(Duration::from_secs(2)));
        assert!(err.is_transient());
        assert_eq!(err.retry_after(), Some(Duration::from_secs(2)));
        assert!(err.to_string().contains("HTTP 503"));
        assert!(envelope(b"<html>").is_none());
        assert!(envelope(br#"{"kind":"x"}"#).is_none());
    }

    #[test]
    fn transient_classification() {
        let api = |status, reason: Option<&str>| Error::Api {
            operation: "x",
            status,
            reason: reason.map(str::to_owned),
            message: String::new(),
            details: vec![],
            details_complete: true,
            retry_after: None,
        };
        assert!(api(429, None).is_transient());
        assert!(api(500, None).is_transient());
        assert!(api(503, Some("backendError")).is_transient());
        assert!(api(403, Some("userRateLimitExceeded")).is_transient());
        assert!(!api(403, Some("insufficientPermissions")).is_transient());
        assert!(!api(401, Some("authError")).is_transient());
        assert!(!api(404, None).is_transient());
        assert!(
            Error::Timeout {
                operation: "x",
                connect: false,
                after: None
            }
            .is_transient()
        );
        assert!(
            !Error::Timeout {
                operation: "x",
                connect: true,
                after: None
            }
            .may_have_reached_server()
        );
        assert!(
            Error::Timeout {
                operation: "x",
                connect: false,
                after: None
            }
            .may_have_reached_server()
        );
        assert!(
            !Error::Auth {
                message: "m".into()
            }
            .may_have_reached_server()
        );
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
    fn messages_name_the_field_and_index() {
        let e = Error::validation("conversionTimestamp", Some(4), "is required for insert");
        assert_eq!(
            e.to_string(),
            "invalid input, conversion at index 4: `conversionTimestamp` is required for insert (nothing was sent)"
        );
    }

    #[test]
    fn issue_codes_print_as_eight_upper_hex_digits() {
        assert_eq!(IssueCode::DUPLICATE_CONVERSION_ID.to_string(), "0x0000011A");
        assert_eq!(IssueCode(0xABC).description(), None);
    }
}

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
    #[error("{}", api_message(operation, *status, reason.as_deref(), message, details))]
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
        "{operation}: {} timed out. Try again later, or raise the timeout in HttpOptions",
        if *connect { "connecting" } else { "the request" }
    )]
    Timeout {
        /// The API method.
        operation: &'static str,
        /// True when the connection could not be opened in time.
        connect: bool,
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
) -> String {
    let reason = reason.map(|r| format!(" ({r})")).unwrap_or_default();
    let hint = match status {
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
            Error::Transport { .. } | Error::Timeout { .. } => true,
            // A body that is not the documented JSON (an HTML 502 page from a
            // proxy, a cut-off answer) is most often a front-end hiccup.
            Error::UnexpectedResponse { .. } => true,
            _ => false,
        }
    }

    /// The delay the server asked for with `Retry-After`, if any.
    pub fn retry_after(&self) -> Option<Duration> {
        match self {
            Error::Api { retry_after, .. } => *retry_after,
            Error::Reporting { failure, .. } => failure.retry_delay(),
            _ => None,
        }
    }

    /// True when the request may have reached the server, so that a write may
    /// have taken effect even though no answer arrived. False for errors raised
    /// before sending (validation, auth, connection refused).
    pub fn may_have_reached_server(&self) -> bool {
        match self {
            Error::Validation { .. } | Error::Auth { .. } | Error::Config { .. } => false,
            Error::Transport { connect, .. } | Error::Timeout { connect, .. } => !connect,
            _ => true,
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
/// `availability` for updateAvailability) into the text and the index.
fn split_index(rest: &str) -> Option<(&str, Option<usize>)> {
    let pos = rest.rfind(INDEX_MARKER)?;
    let head = &rest[..pos];
    let for_pos = head.rfind(FOR_MARKER)?;
    let item = &head[for_pos + FOR_MARKER.len()..];
    if item.is_empty() || !item.chars().all(|c| c.is_ascii_alphabetic()) {
        return None;
    }
    // Leading digits only: a truncated list may leave a fragment of the next
    // detail behind the index.
    let after = &rest[pos + INDEX_MARKER.len()..];
    let end = after
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(after.len());
    let index = after[..end].parse::<usize>().ok()?;
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

/// Parses the details of `The request was not valid. Details: [d, d, ...]`.
///
/// Details are split at each `, 0x########:` boundary, so a detail text that
/// itself contains commas stays whole. A list without coded details is one
/// batch-wide detail (`[Empty batch encountered.]`).
pub(crate) fn parse_details_message(message: &str) -> Vec<ConversionIssue> {
    let Some(start) = message.find(DETAILS_MARKER) else {
        return Vec::new();
    };
    let body = &message[start + DETAILS_MARKER.len()..];
    let list = match body.rfind(']') {
        Some(end) => &body[..end],
        // Google truncates long messages; keep what is there.
        None => body,
    };
    let starts = detail_starts(list);
    if starts.is_empty() {
        let text = list.trim();
        return if text.is_empty() {
            Vec::new()
        } else {
            vec![parse_detail(text)]
        };
    }
    let mut issues = Vec::with_capacity(starts.len() + 1);
    // Text before the first coded detail is a batch-wide detail of its own.
    let lead = list[..starts[0]].trim().trim_end_matches(',').trim();
    if !lead.is_empty() {
        issues.push(parse_detail(lead));
    }
    for (n, &s) in starts.iter().enumerate() {
        let end = starts.get(n + 1).map_or(list.len(), |&next| next);
        let piece = list[s..end].trim().trim_end_matches(',');
        issues.push(parse_detail(piece));
    }
    issues
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
        // top-level message's `Details: [...]` list.
        let from_items: Vec<ConversionIssue> = self
            .items
            .iter()
            .filter_map(|(_, m)| m.as_deref())
            .filter(|m| split_code(m.trim()).is_some())
            .map(parse_detail)
            .collect();
        let details = if from_items.is_empty() {
            parse_details_message(&message)
        } else {
            from_items
        };
        Error::Api {
            operation,
            status,
            reason,
            message,
            details,
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
        let d = parse_details_message(msg);
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
            vec![ConversionIssue {
                index: None,
                code: None,
                message: "Empty batch encountered.".into()
            }]
        );
        assert!(parse_details_message("Invalid Credentials").is_empty());
    }

    #[test]
    fn a_truncated_details_list_keeps_the_complete_details() {
        let d = parse_details_message(
            "The request was not valid. Details: [0x00000116: Custom metric 'x' is not found for conversion index=0, 0x0000",
        );
        assert_eq!(d.len(), 1);
        assert_eq!(d[0].index, Some(0));
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
                connect: false
            }
            .is_transient()
        );
        assert!(
            !Error::Timeout {
                operation: "x",
                connect: true
            }
            .may_have_reached_server()
        );
        assert!(
            Error::Timeout {
                operation: "x",
                connect: false
            }
            .may_have_reached_server()
        );
        assert!(
            !Error::Auth {
                message: "m".into()
            }
            .may_have_reached_server()
        );
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

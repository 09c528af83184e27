//! The Reporting API's error: a `google.rpc.Status` whose detail is a `SearchAds360Failure`
//! (SR-6), typed.

use std::fmt;
use std::time::Duration;

use sa360_reporting_client::types;

/// The error codes of one failure's errors that mean "try again".
const TRANSIENT_CODES: &[&str] = &[
    "RESOURCE_EXHAUSTED",
    "RESOURCE_TEMPORARILY_EXHAUSTED",
    "TRANSIENT_ERROR",
    "INTERNAL_ERROR",
    "DEADLINE_EXCEEDED",
];

/// A `SearchAds360Failure`: what the Reporting API refused, with one [`ReportingError`] per
/// problem.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ReportingFailure {
    /// The RPC status name (`INVALID_ARGUMENT`, `PERMISSION_DENIED`, `RESOURCE_EXHAUSTED`, ...).
    pub rpc_status: Option<String>,
    /// The top-level message.
    pub message: String,
    /// The errors of the `SearchAds360Failure` detail.
    pub errors: Vec<ReportingError>,
    /// The request id to quote to support.
    pub request_id: Option<String>,
}

/// One `SearchAds360Error`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReportingError {
    /// The `ErrorCode` member that is set, e.g. `queryError`, `quotaError`, `requestError`.
    pub kind: String,
    /// Its value, e.g. `UNRECOGNIZED_FIELD`, `RESOURCE_EXHAUSTED`, `EXPIRED_PAGE_TOKEN`.
    pub code: String,
    /// The human-readable message.
    pub message: String,
    /// The value that caused it, as text, when the service names one.
    pub trigger: Option<String>,
    /// `quotaErrorDetails.retryDelay`, parsed.
    pub retry_delay: Option<Duration>,
}

impl ReportingFailure {
    /// Whether any error has `code` (e.g. `EXPIRED_PAGE_TOKEN`).
    pub fn has_code(&self, code: &str) -> bool {
        self.errors.iter().any(|e| e.code == code)
    }

    /// The longest retry delay any quota error asked for.
    pub fn retry_delay(&self) -> Option<Duration> {
        self.errors.iter().filter_map(|e| e.retry_delay).max()
    }

    /// Whether trying the same request again may succeed.
    pub fn is_transient(&self, status: u16) -> bool {
        status == 429
            || (500..=599).contains(&status)
            || self
                .errors
                .iter()
                .any(|e| TRANSIENT_CODES.contains(&e.code.as_str()))
    }

    /// Reads the generated error body.
    pub(crate) fn from_wire(body: &types::ErrorResponse) -> Self {
        let status = &body.error;
        let mut errors = Vec::new();
        let mut request_id = None;
        for detail in &status.details {
            request_id = request_id.or_else(|| detail.request_id.clone());
            for e in &detail.errors {
                let (kind, code) = e
                    .error_code
                    .as_ref()
                    .and_then(error_code)
                    .unwrap_or_else(|| ("unknown".to_owned(), "UNKNOWN".to_owned()));
                let trigger = e.trigger.as_ref().and_then(|v| {
                    v.string_value
                        .clone()
                        .or_else(|| v.int64_value.map(|n| n.to_string()))
                        .or_else(|| v.double_value.map(|n| n.to_string()))
                        .or_else(|| v.boolean_value.map(|b| b.to_string()))
                });
                let retry_delay = e
                    .details
                    .as_ref()
                    .and_then(|d| d.quota_error_details.as_ref())
                    .and_then(|q| q.retry_delay.as_deref())
                    .and_then(parse_google_duration);
                errors.push(ReportingError {
                    kind,
                    code,
                    message: e.message.clone().unwrap_or_default(),
                    trigger,
                    retry_delay,
                });
            }
        }
        Self {
            rpc_status: status.status.clone(),
            message: status.message.clone().unwrap_or_default(),
            errors,
            request_id,
        }
    }

    /// What to do about it, naming a setting that exists.
    fn hint(&self, status: u16) -> &'static str {
        if self.has_code("USER_PERMISSION_DENIED")
            || self.has_code("INVALID_LOGIN_CUSTOMER_ID_SERVING_CUSTOMER_ID_COMBINATION")
            || self.has_code("INVALID_LOGIN_CUSTOMER_ID")
        {
            return "Reach a client account through its manager: set \
                    SearchAdsClientBuilder::login_customer_id to the manager's customer id";
        }
        if self.errors.iter().any(|e| e.kind == "queryError") {
            return "The service refused the query: fix it as the message says (for a report \
                    sa360-video-sdk built, report it with the request id)";
        }
        if self.has_code("EXPIRED_PAGE_TOKEN") || self.has_code("INVALID_PAGE_TOKEN") {
            return "Run the report again";
        }
        match status {
            401 => "The access token was refused: check the credentials and the token source",
            429 => {
                "The quota is exhausted: wait for the retry delay, or raise RetryPolicy::max_retry_after"
            }
            500..=599 => "The service had a problem: try again later",
            _ => "See the message",
        }
    }
}

fn error_code(code: &types::ErrorCode) -> Option<(String, String)> {
    let members: [(&str, &Option<String>); 14] = [
        ("authenticationError", &code.authentication_error),
        ("authorizationError", &code.authorization_error),
        (
            "conversionCustomVariableError",
            &code.conversion_custom_variable_error,
        ),
        ("customColumnError", &code.custom_column_error),
        ("dateError", &code.date_error),
        ("dateRangeError", &code.date_range_error),
        ("distinctError", &code.distinct_error),
        ("headerError", &code.header_error),
        ("internalError", &code.internal_error),
        ("invalidParameterError", &code.invalid_parameter_error),
        ("queryError", &code.query_error),
        ("quotaError", &code.quota_error),
        ("requestError", &code.request_error),
        ("sizeLimitError", &code.size_limit_error),
    ];
    members
        .into_iter()
        .find_map(|(kind, value)| value.clone().map(|v| (kind.to_owned(), v)))
}

/// Parses a `google-duration` (`"30s"`, `"1.5s"`, `"0.000001s"`).
pub(crate) fn parse_google_duration(text: &str) -> Option<Duration> {
    let secs = text.trim().strip_suffix('s')?;
    let (whole, frac) = secs.split_once('.').unwrap_or((secs, ""));
    if whole.is_empty() || !whole.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    if frac.len() > 9 || !frac.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let whole: u64 = whole.parse().ok()?;
    let nanos: u32 = if frac.is_empty() {
        0
    } else {
        format!("{frac:0<9}").parse().ok()?
    };
    Some(Duration::new(whole, nanos))
}

/// The text of [`Error::Reporting`](crate::search_ads::Error::Reporting).
pub(crate) fn reporting_message(
    operation: &str,
    status: u16,
    failure: &ReportingFailure,
) -> String {
    let rpc = failure
        .rpc_status
        .as_deref()
        .map(|s| format!(" ({s})"))
        .unwrap_or_default();
    let errors: Vec<String> = failure
        .errors
        .iter()
        .take(3)
        .map(ToString::to_string)
        .collect();
    let shown = if errors.is_empty() {
        super::text::shortened(&failure.message, 300)
    } else {
        errors.join("; ")
    };
    let request = failure
        .request_id
        .as_deref()
        .map(|r| format!(" [request id {r}]"))
        .unwrap_or_default();
    format!(
        "{operation} failed with HTTP {status}{rpc}: {}{request}. {}",
        super::text::clause(&shown),
        failure.hint(status)
    )
}

impl fmt::Display for ReportingError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.kind, self.code)?;
        if !self.message.is_empty() {
            write!(f, ": {}", super::text::shortened(&self.message, 200))?;
        }
        if let Some(t) = &self.trigger {
            write!(f, " (trigger {:?})", super::text::shortened(t, 80))?;
        }
        if let Some(d) = self.retry_delay {
            write!(f, " (retry in {d:?})")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn google_durations_parse() {
        assert_eq!(parse_google_duration("30s"), Some(Duration::from_secs(30)));
        assert_eq!(
            parse_google_duration("1.5s"),
            Some(Duration::from_millis(1500))
        );
        assert_eq!(
            parse_google_duration("0.000000001s"),
            Some(Duration::from_nanos(1))
        );
        for bad in ["", "s", "1", "-1s", "1.s5", "1.0000000001s", "x s"] {
            assert_eq!(parse_google_duration(bad), None, "{bad}");
        }
    }
}

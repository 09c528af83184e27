//! Retries of transient failures: exponential backoff with full jitter,
//! `Retry-After` honoured, one tracing span per attempt. The loop that uses
//! them is [`Calls::run`](super::call::Calls::run).

use std::future::Future;
use std::time::{Duration, Instant, SystemTime};

use tracing::Instrument;

use super::error::Error;
use crate::setters::field_setters;

/// When and how often a failed request is tried again.
///
/// Only transient failures are retried ([`Error::is_transient`]): HTTP 429,
/// 5xx, rate-limit 403s, timeouts and connection failures. Before attempt
/// `n + 1` the client waits a random time between zero and
/// `min(max_delay, base_delay * 2^(n-1))` ("full jitter"), or exactly the
/// server's `Retry-After` when it sent one. A `Retry-After` longer than
/// `max_retry_after` ends the retries (the error says how long to wait).
///
/// ```
/// use std::time::Duration;
/// use sa360_video_sdk::search_ads::RetryPolicy;
/// let policy = RetryPolicy::default();
/// assert_eq!(policy.max_attempts, 4);
/// let patient = RetryPolicy::default()
///     .max_attempts(8)
///     .max_delay(Duration::from_secs(30));
/// assert_eq!(patient.base_delay, policy.base_delay);
/// let never = RetryPolicy::no_retries();
/// assert_eq!(never.max_attempts, 1);
/// ```
///
/// `#[non_exhaustive]`: build it from [`RetryPolicy::default`] or
/// [`RetryPolicy::no_retries`] and the setters named after the fields; a struct literal
/// does not compile outside this crate.
///
/// ```compile_fail,E0639
/// use sa360_video_sdk::search_ads::RetryPolicy;
/// let patient = RetryPolicy { max_attempts: 8, ..RetryPolicy::default() };
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct RetryPolicy {
    /// Attempts in all, the first included (at least 1). Default 4.
    pub max_attempts: u32,
    /// The backoff base. Default 500 ms.
    pub base_delay: Duration,
    /// The longest backoff between two attempts. Default 20 s.
    pub max_delay: Duration,
    /// The longest `Retry-After` the client waits for. Default 60 s.
    pub max_retry_after: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        Self {
            max_attempts: 4,
            base_delay: Duration::from_millis(500),
            max_delay: Duration::from_secs(20),
            max_retry_after: Duration::from_secs(60),
        }
    }
}

field_setters!(RetryPolicy {
    value {
        max_attempts => max_attempts: u32,
        base_delay => base_delay: Duration,
        max_delay => max_delay: Duration,
        max_retry_after => max_retry_after: Duration,
    }
});

impl RetryPolicy {
    /// One attempt, no retries.
    pub fn no_retries() -> Self {
        Self {
            max_attempts: 1,
            ..Self::default()
        }
    }

    /// The wait before the next attempt after `attempts` attempts ended with
    /// `error`; `None` when no further attempt should be made.
    pub fn next_delay(&self, attempts: u32, error: &Error) -> Option<Duration> {
        if attempts >= self.max_attempts.max(1) || !error.is_transient() {
            return None;
        }
        if let Some(wait) = error.retry_after() {
            return (wait <= self.max_retry_after).then_some(wait);
        }
        Some(self.backoff(attempts))
    }

    /// Full-jitter backoff after `attempts` failed attempts.
    fn backoff(&self, attempts: u32) -> Duration {
        let exp = attempts.saturating_sub(1).min(31);
        let ceiling = self
            .base_delay
            .checked_mul(1u32 << exp)
            .unwrap_or(self.max_delay)
            .min(self.max_delay);
        let ceiling_micros = u64::try_from(ceiling.as_micros()).unwrap_or(u64::MAX);
        Duration::from_micros(fastrand::u64(0..=ceiling_micros))
    }

    pub(crate) fn validate(&self) -> Result<(), Error> {
        if self.max_attempts == 0 {
            return Err(Error::invalid(
                "max_attempts",
                "must be at least 1 (1 means no retries)",
            ));
        }
        Ok(())
    }
}

/// Reads a `Retry-After` header: delay-seconds or an HTTP date.
pub(crate) fn parse_retry_after(value: &str) -> Option<Duration> {
    let value = value.trim();
    if let Ok(secs) = value.parse::<u64>() {
        return Some(Duration::from_secs(secs));
    }
    let when = chrono::DateTime::parse_from_rfc2822(value).ok()?;
    let when = SystemTime::UNIX_EPOCH.checked_add(Duration::from_millis(
        u64::try_from(when.timestamp_millis()).ok()?,
    ))?;
    Some(
        when.duration_since(SystemTime::now())
            .unwrap_or(Duration::ZERO),
    )
}

/// Runs one attempt inside its span (`search_ads.request`; the wire layer
/// records `status` as an answer arrives) and records its duration and
/// outcome. Only the operation, numbers and outcome are recorded, never headers.
pub(crate) async fn traced_attempt<T, Fut>(
    operation: &'static str,
    attempt: u32,
    fut: Fut,
) -> Result<T, Error>
where
    Fut: Future<Output = Result<T, Error>>,
{
    let span = tracing::info_span!(
        "search_ads.request",
        operation,
        attempt,
        status = tracing::field::Empty,
        duration_ms = tracing::field::Empty,
        outcome = tracing::field::Empty,
    );
    let started = Instant::now();
    let result = fut.instrument(span.clone()).await;
    let millis = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
    span.record("duration_ms", millis);
    let outcome = match &result {
        Ok(_) => "ok",
        Err(e) if e.is_transient() => "transient error",
        Err(_) => "error",
    };
    if let Some(status) = result.as_ref().err().and_then(Error::status) {
        span.record("status", status);
    }
    span.record("outcome", outcome);
    span.in_scope(|| tracing::debug!(duration_ms = millis, "request finished"));
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    fn api(status: u16, retry_after: Option<Duration>) -> Error {
        Error::Api {
            operation: "x",
            status,
            reason: None,
            message: String::new(),
            details: vec![],
            details_complete: true,
            retry_after,
        }
    }

    #[test]
    fn backoff_is_capped_full_jitter() {
        let p = RetryPolicy {
            max_attempts: 50,
            base_delay: Duration::from_millis(100),
            max_delay: Duration::from_secs(1),
            max_retry_after: Duration::from_secs(5),
        };
        for attempt in 1..40 {
            let ceiling = Duration::from_millis(100)
                .saturating_mul(1 << (attempt - 1).min(20))
                .min(Duration::from_secs(1));
            for _ in 0..20 {
                let d = p.next_delay(attempt, &api(503, None)).unwrap();
                assert!(d <= ceiling, "{attempt}: {d:?} > {ceiling:?}");
            }
        }
    }

    #[test]
    fn retry_after_is_honoured_up_to_the_limit() {
        let p = RetryPolicy::default();
        assert_eq!(
            p.next_delay(1, &api(429, Some(Duration::from_secs(3)))),
            Some(Duration::from_secs(3))
        );
        assert_eq!(
            p.next_delay(1, &api(429, Some(Duration::from_secs(3600)))),
            None
        );
    }

    #[test]
    fn only_transient_errors_are_retried_and_attempts_are_bounded() {
        let p = RetryPolicy::default();
        assert!(p.next_delay(1, &api(400, None)).is_none());
        assert!(p.next_delay(3, &api(500, None)).is_some());
        assert!(p.next_delay(4, &api(500, None)).is_none());
        assert!(
            RetryPolicy::no_retries()
                .next_delay(1, &api(500, None))
                .is_none()
        );
    }

    #[test]
    fn retry_after_headers_parse() {
        assert_eq!(parse_retry_after("7"), Some(Duration::from_secs(7)));
        assert_eq!(
            parse_retry_after("Sun, 06 Nov 1994 08:49:37 GMT"),
            Some(Duration::ZERO)
        );
        assert_eq!(parse_retry_after("soon"), None);
    }
}

//! Bounds on an answer's body, enforced while it is read: a size limit and a
//! stall timeout.
//!
//! The generated clients read every JSON answer whole (`response.json()`), so a
//! server that sends an endless or a trickling body would exhaust memory or hold
//! the call forever. [`limit_body`] wraps the body before anyone reads it:
//!
//! - more than [`BodyLimits::max_bytes`] (announced by `Content-Length` or
//!   counted while reading) fails with [`BodyLimitError::TooLarge`] without
//!   reading further;
//! - fewer than [`BodyLimits::min_progress_bytes`] arriving within
//!   [`BodyLimits::stall_timeout`] fails with [`BodyLimitError::Stalled`]. A
//!   trickle of one byte per second never trips a per-read timeout; it does
//!   trip this one.
//!
//! The error reaches the caller as the source of the `reqwest::Error` that
//! reading the body returns; [`BodyLimitError::find`] digs it out.

use std::error::Error as StdError;
use std::fmt;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use http_body::{Body, Frame, SizeHint};
use reqwest::ResponseBuilderExt as _;
use tokio::time::{Instant, Sleep};

type BoxError = Box<dyn StdError + Send + Sync>;

/// Limits on one answer's body.
///
/// ```
/// use std::time::Duration;
/// use sa360_video_client_support::BodyLimits;
///
/// let limits = BodyLimits::default().with_max_bytes(1 << 20);
/// assert_eq!(limits.max_bytes, 1 << 20);
/// assert_eq!(limits.stall_timeout, Duration::from_secs(30));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct BodyLimits {
    /// Most bytes of one body. Default [`BodyLimits::DEFAULT_MAX_BYTES`] (32 MiB).
    pub max_bytes: u64,
    /// Longest time allowed for [`BodyLimits::min_progress_bytes`] to arrive
    /// (measured from the headers, then from the last time that much arrived).
    /// Default [`timeouts::STALL`](crate::timeouts::STALL) (30 s).
    pub stall_timeout: Duration,
    /// Bytes that count as progress. Default 1024; the end of the body always counts.
    pub min_progress_bytes: u64,
}

impl BodyLimits {
    /// The default [`BodyLimits::max_bytes`]: 32 MiB, far above the largest
    /// documented JSON answer (a page of 10 000 report rows).
    pub const DEFAULT_MAX_BYTES: u64 = 32 * 1024 * 1024;

    /// Sets [`BodyLimits::max_bytes`].
    #[must_use]
    pub fn with_max_bytes(mut self, max_bytes: u64) -> Self {
        self.max_bytes = max_bytes;
        self
    }

    /// Sets [`BodyLimits::stall_timeout`].
    #[must_use]
    pub fn with_stall_timeout(mut self, stall_timeout: Duration) -> Self {
        self.stall_timeout = stall_timeout;
        self
    }

    /// Sets [`BodyLimits::min_progress_bytes`] (at least 1).
    #[must_use]
    pub fn with_min_progress_bytes(mut self, bytes: u64) -> Self {
        self.min_progress_bytes = bytes.max(1);
        self
    }
}

impl Default for BodyLimits {
    fn default() -> Self {
        Self {
            max_bytes: Self::DEFAULT_MAX_BYTES,
            stall_timeout: crate::timeouts::STALL,
            min_progress_bytes: 1024,
        }
    }
}

/// Why reading a body stopped.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum BodyLimitError {
    /// The body is (or announced to be) larger than the limit.
    TooLarge {
        /// The limit, in bytes.
        limit: u64,
        /// The `Content-Length` the server announced, when it did and it was over the limit.
        announced: Option<u64>,
    },
    /// The body did not progress within the stall timeout.
    Stalled {
        /// The stall timeout.
        after: Duration,
        /// Bytes received before it stalled.
        received: u64,
    },
}

impl BodyLimitError {
    /// The body-limit error somewhere in `error`'s source chain, if any.
    pub fn find<'a>(error: &'a (dyn StdError + 'static)) -> Option<&'a BodyLimitError> {
        let mut current = Some(error);
        while let Some(e) = current {
            if let Some(found) = e.downcast_ref::<BodyLimitError>() {
                return Some(found);
            }
            current = e.source();
        }
        None
    }
}

impl fmt::Display for BodyLimitError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BodyLimitError::TooLarge {
                limit,
                announced: Some(announced),
            } => write!(
                f,
                "the answer announced {announced} bytes, more than the limit of {limit} bytes"
            ),
            BodyLimitError::TooLarge { limit, .. } => {
                write!(f, "the answer is larger than the limit of {limit} bytes")
            }
            BodyLimitError::Stalled { after, received } => write!(
                f,
                "the answer stalled: less than the minimum progress in {} s (after {received} bytes)",
                after.as_secs_f64()
            ),
        }
    }
}

impl StdError for BodyLimitError {}

/// Wraps `response`'s body so that reading it enforces `limits`. Status,
/// headers and URL are kept.
pub fn limit_body(response: reqwest::Response, limits: BodyLimits) -> reqwest::Response {
    let url = response.url().clone();
    let announced = response.content_length();
    let http: http::Response<reqwest::Body> = response.into();
    let (mut parts, body) = http.into_parts();
    let mut limited = LimitedBody::new(body, limits);
    if let Some(len) = announced.filter(|&len| len > limits.max_bytes) {
        limited.failure = Some(BodyLimitError::TooLarge {
            limit: limits.max_bytes,
            announced: Some(len),
        });
    }
    // Status, headers and extensions stay as they were; the URL, which
    // reqwest keeps in a private extension, is put back through its builder.
    if let Ok(carrier) = http::Response::builder().url(url).body(()) {
        parts.extensions.extend(carrier.into_parts().0.extensions);
    }
    reqwest::Response::from(http::Response::from_parts(
        parts,
        reqwest::Body::wrap(limited),
    ))
}

/// A body that enforces [`BodyLimits`] while it is read.
struct LimitedBody<B> {
    inner: B,
    limits: BodyLimits,
    received: u64,
    since_progress: u64,
    deadline: Pin<Box<Sleep>>,
    /// A failure to report at the next poll (an announced size over the limit).
    failure: Option<BodyLimitError>,
    done: bool,
}

impl<B> LimitedBody<B> {
    fn new(inner: B, limits: BodyLimits) -> Self {
        Self {
            inner,
            limits,
            received: 0,
            since_progress: 0,
            deadline: Box::pin(tokio::time::sleep(limits.stall_timeout)),
            failure: None,
            done: false,
        }
    }

    fn fail(&mut self, error: BodyLimitError) -> Poll<Option<Result<Frame<Bytes>, BoxError>>> {
        self.done = true;
        Poll::Ready(Some(Err(Box::new(error))))
    }

    fn stalled(&self) -> BodyLimitError {
        BodyLimitError::Stalled {
            after: self.limits.stall_timeout,
            received: self.received,
        }
    }
}

impl<B> Body for LimitedBody<B>
where
    B: Body<Data = Bytes> + Unpin,
    B::Error: Into<BoxError>,
{
    type Data = Bytes;
    type Error = BoxError;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, BoxError>>> {
        let this = &mut *self;
        if this.done {
            return Poll::Ready(None);
        }
        if let Some(failure) = this.failure.take() {
            return this.fail(failure);
        }
        match Pin::new(&mut this.inner).poll_frame(cx) {
            Poll::Ready(Some(Ok(frame))) => {
                if let Some(data) = frame.data_ref() {
                    let len = data.len() as u64;
                    this.received = this.received.saturating_add(len);
                    if this.received > this.limits.max_bytes {
                        let limit = this.limits.max_bytes;
                        return this.fail(BodyLimitError::TooLarge {
                            limit,
                            announced: None,
                        });
                    }
                    this.since_progress = this.since_progress.saturating_add(len);
                    if this.since_progress >= this.limits.min_progress_bytes {
                        this.since_progress = 0;
                        let next = Instant::now() + this.limits.stall_timeout;
                        this.deadline.as_mut().reset(next);
                    } else if this.deadline.is_elapsed() {
                        let stalled = this.stalled();
                        return this.fail(stalled);
                    }
                }
                Poll::Ready(Some(Ok(frame)))
            }
            Poll::Ready(Some(Err(error))) => {
                this.done = true;
                Poll::Ready(Some(Err(error.into())))
            }
            Poll::Ready(None) => {
                this.done = true;
                Poll::Ready(None)
            }
            Poll::Pending => {
                if this.deadline.as_mut().poll(cx).is_ready() {
                    let stalled = this.stalled();
                    return this.fail(stalled);
                }
                Poll::Pending
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        self.done || (self.failure.is_none() && self.inner.is_end_stream())
    }

    fn size_hint(&self) -> SizeHint {
        if self.failure.is_some() {
            return SizeHint::default();
        }
        self.inner.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn response(body: reqwest::Body, length: Option<u64>) -> reqwest::Response {
        let mut builder = http::Response::builder()
            .status(200)
            .url(reqwest::Url::parse("http://127.0.0.1/x").expect("a URL"));
        if let Some(len) = length {
            builder = builder.header(reqwest::header::CONTENT_LENGTH, len);
        }
        reqwest::Response::from(builder.body(body).expect("a response"))
    }

    /// A body that sends each chunk after its delay.
    fn chunks(parts: Vec<(Duration, &'static [u8])>) -> reqwest::Body {
        use futures::StreamExt as _;
        reqwest::Body::wrap_stream(
            futures::stream::iter(parts).then(|(delay, chunk)| async move {
                tokio::time::sleep(delay).await;
                Ok::<_, std::io::Error>(Bytes::from_static(chunk))
            }),
        )
    }

    #[tokio::test]
    async fn a_body_over_the_limit_fails_while_it_is_read() {
        let endless = chunks(vec![(Duration::ZERO, &[b'x'; 1000]); 50]);
        let limits = BodyLimits::default().with_max_bytes(10_000);
        let error = limit_body(response(endless, None), limits)
            .bytes()
            .await
            .expect_err("over the limit");
        assert_eq!(
            BodyLimitError::find(&error),
            Some(&BodyLimitError::TooLarge {
                limit: 10_000,
                announced: None
            })
        );
        // Within the limit, the body arrives whole.
        let small = chunks(vec![(Duration::ZERO, b"{}"); 3]);
        let bytes = limit_body(response(small, None), limits).bytes().await;
        assert_eq!(bytes.expect("whole").as_ref(), b"{}{}{}");
    }

    #[tokio::test]
    async fn an_announced_length_over_the_limit_fails_before_reading() {
        let body = reqwest::Body::from("0123456789");
        let limits = BodyLimits::default().with_max_bytes(5);
        let limited = limit_body(response(body, Some(10)), limits);
        assert_eq!(limited.status(), 200);
        assert_eq!(limited.url().path(), "/x");
        let error = limited.bytes().await.expect_err("announced too much");
        assert_eq!(
            BodyLimitError::find(&error),
            Some(&BodyLimitError::TooLarge {
                limit: 5,
                announced: Some(10)
            })
        );
    }

    #[tokio::test(start_paused = true)]
    async fn a_trickle_stalls() {
        // One byte per second: every read succeeds, progress never comes.
        let trickle = chunks(vec![(Duration::from_secs(1), b"x"); 100]);
        let limits = BodyLimits::default()
            .with_stall_timeout(Duration::from_secs(10))
            .with_min_progress_bytes(64);
        let start = Instant::now();
        let error = limit_body(response(trickle, None), limits)
            .bytes()
            .await
            .expect_err("stalled");
        let elapsed = start.elapsed();
        assert!(
            matches!(
                BodyLimitError::find(&error),
                Some(BodyLimitError::Stalled { received, .. }) if *received < 12
            ),
            "{error:?}"
        );
        assert!(
            elapsed >= Duration::from_secs(10) && elapsed < Duration::from_secs(12),
            "{elapsed:?}"
        );
        // The same bytes in chunks of the minimum progress are fine.
        let steady = chunks(vec![(Duration::from_secs(9), &[b'x'; 64]); 5]);
        let bytes = limit_body(response(steady, None), limits).bytes().await;
        assert_eq!(bytes.expect("steady").len(), 320);
    }
}

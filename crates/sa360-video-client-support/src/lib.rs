//! The runtime shared by the generated client crates (and the SDK).
//!
//! One place for the transport rules every HTTP client of this workspace follows:
//!
//! - [`install_crypto_provider`]: reqwest is built with `rustls-no-provider` (ring
//!   builds much faster than aws-lc-rs), so rustls' `ring` provider must be the
//!   process default before any `reqwest::Client` is built — otherwise
//!   `ClientBuilder::build()` panics with "No rustls crypto provider is configured".
//!   Cargo unifies that feature into every reqwest of the program, the
//!   application's own clients included, so the provider is installed when the
//!   program loads (before `main`), not when our first client is built: an
//!   application that builds its own `reqwest::Client` first needs no TLS line.
//! - [`http_client_builder`]: a `reqwest::ClientBuilder` that can do HTTPS and
//!   follows redirects only within one origin, so a credential header that reqwest
//!   does not strip (such as `UserToken`) or a re-sent login body never reaches
//!   another host.
//! - [`trace_exec`]: sends a request inside a `tracing` span that records the
//!   operation, method, path, status and duration, and never headers, query
//!   strings or bodies, and bounds the answer's body with [`BodyLimits`].
//! - [`limit_body`]: bounds an answer's body while it is read (size and stall,
//!   see [`BodyLimits`]).
//! - [`printable`]: server text with its control characters and bidirectional
//!   controls escaped, before it goes into a message a terminal may show.
//! - [`RedactedUrl`]: a URL without its user info and query values, the one way a
//!   URL is shown in a message, a log line or `Debug`.
//!
//! ```
//! let client = sa360_video_client_support::http_client_builder().build()?;
//! # drop(client);
//! # Ok::<(), reqwest::Error>(())
//! ```

#![warn(missing_docs)]

mod body_limits;
pub mod last_answer;
mod printable;
mod redacted_url;
pub mod timeouts;

pub use body_limits::{BodyLimitError, BodyLimits, limit_body};
pub use printable::{printable, sh_quote};
pub use redacted_url::RedactedUrl;

use std::fmt;
use std::sync::Once;
use std::time::Instant;

use tracing::Instrument as _;

/// `tracing` target of the per-request spans and events of every client.
pub const TRACING_TARGET: &str = "api_request";

/// Most redirects followed within one origin.
pub const MAX_SAME_ORIGIN_REDIRECTS: usize = 10;

static INSTALL: Once = Once::new();

// Before `main`: an application's own `reqwest::Client`, built before any of
// ours, must find a provider too (reqwest 0.13 with `rustls-no-provider` reads
// only `CryptoProvider::get_default()` and panics without one). Installing a
// provider touches nothing but rustls' own `OnceLock`, which is sound before
// `main`.
ctor::declarative::ctor! {
    #[ctor(unsafe)]
    fn install_crypto_provider_at_load() {
        install_crypto_provider();
    }
}

/// Installs rustls' `ring` provider as the process-wide default crypto provider,
/// once; a no-op if any provider is already installed.
///
/// It runs when the program loads (before `main`), so any `reqwest::Client` of
/// the process can do HTTPS; [`http_client_builder`] and the client crates'
/// `ClientContext` constructors call it again (a no-op) for programs that load
/// this code some other way. An application that wants another provider as the
/// process default cannot install it with `CryptoProvider::install_default` (it
/// returns `Err`): give its own clients a `rustls::ClientConfig` built with
/// `builder_with_provider` instead.
pub fn install_crypto_provider() {
    INSTALL.call_once(|| {
        // Err means another provider is already installed: fine.
        let _ = rustls::crypto::ring::default_provider().install_default();
    });
}

/// A `reqwest::ClientBuilder` that can do HTTPS (rustls + ring, platform
/// certificate verifier), with the connect timeout [`timeouts::CONNECT`], the
/// read (idle) timeout [`timeouts::STALL`] (no total timeout: a caller adds
/// [`timeouts::ATTEMPT`] where a call must end, since reqwest cannot remove one
/// for a streamed download), and redirects followed only within the same scheme,
/// host and port (at most [`MAX_SAME_ORIGIN_REDIRECTS`]).
///
/// Callers may override the timeouts; they must not replace the redirect policy.
pub fn http_client_builder() -> reqwest::ClientBuilder {
    install_crypto_provider();
    reqwest::ClientBuilder::new()
        .connect_timeout(timeouts::CONNECT)
        .read_timeout(timeouts::STALL)
        .redirect(same_origin_redirects())
}

/// The redirect policy: follow only within the origin of the first request.
fn same_origin_redirects() -> reqwest::redirect::Policy {
    reqwest::redirect::Policy::custom(|attempt| {
        let Some(first) = attempt.previous().first() else {
            return attempt.follow();
        };
        if first.origin() != attempt.url().origin() {
            tracing::warn!(
                target: TRACING_TARGET,
                to = %attempt.url().origin().ascii_serialization(),
                "not following a cross-origin redirect"
            );
            attempt.stop()
        } else if attempt.previous().len() > MAX_SAME_ORIGIN_REDIRECTS {
            attempt.error("too many redirects")
        } else {
            attempt.follow()
        }
    })
}

/// Executes `request` with `client` inside a DEBUG span (target
/// [`TRACING_TARGET`]) recording the service, operation, method, URL origin
/// and path (not the query), status and duration. Headers and bodies are never recorded. The
/// answer's body is bounded by `limits` ([`limit_body`]).
pub async fn trace_exec(
    client: &reqwest::Client,
    request: reqwest::Request,
    service: &'static str,
    operation_id: &'static str,
    limits: BodyLimits,
) -> reqwest::Result<reqwest::Response> {
    let span = tracing::debug_span!(
        target: TRACING_TARGET,
        "request",
        service,
        operation_id,
        method = %request.method(),
        origin = %request.url().origin().ascii_serialization(),
        path = %request.url().path(),
        status = tracing::field::Empty,
        duration_ms = tracing::field::Empty,
    );
    let start = Instant::now();
    let result = client.execute(request).instrument(span.clone()).await;
    let duration_ms = u64::try_from(start.elapsed().as_millis()).unwrap_or(u64::MAX);
    span.record("duration_ms", duration_ms);
    let _entered = span.enter();
    match &result {
        Ok(response) => {
            let status = response.status().as_u16();
            span.record("status", status);
            last_answer::record(response);
            tracing::debug!(target: TRACING_TARGET, status, duration_ms, "response received");
        }
        Err(error) => {
            tracing::debug!(
                target: TRACING_TARGET,
                duration_ms,
                error = %ErrorWithoutUrl(error),
                "request failed"
            );
        }
    }
    result.map(|response| limit_body(response, limits))
}

/// Displays a reqwest error's kind and source chain, but not its URL (which
/// carries the query string).
pub struct ErrorWithoutUrl<'a>(pub &'a reqwest::Error);

impl fmt::Display for ErrorWithoutUrl<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let e = self.0;
        let kind = if e.is_timeout() {
            "timeout"
        } else if e.is_connect() {
            "connect"
        } else if e.is_redirect() {
            "redirect"
        } else if e.is_body() {
            "body"
        } else if e.is_decode() {
            "decode"
        } else if e.is_request() {
            "request"
        } else {
            "other"
        };
        f.write_str(kind)?;
        let mut source = std::error::Error::source(e);
        while let Some(s) = source {
            write!(f, ": {s}")?;
            source = s.source();
        }
        Ok(())
    }
}

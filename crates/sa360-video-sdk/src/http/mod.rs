//! Transport rules shared by both service clients.
//!
//! Both clients build their `reqwest::Client` here, so the rules hold in one place:
//!
//! - the base URL must be `https://`, except on a loopback host (`localhost`,
//!   `127.0.0.0/8`, `::1`) where plain `http://` is allowed for fakes and tests;
//! - a redirect is followed only when it stays on the same origin (scheme, host and
//!   port). A cross-origin redirect is not followed at all, so neither a custom
//!   credential header such as `UserToken` (which reqwest does not strip) nor a
//!   re-sent login body can reach another host. The policy itself lives in
//!   [`sa360_video_client_support::http_client_builder`], which the generated clients share;
//!   the SDK starts from it;
//! - every request has a connect timeout, a total timeout and a user agent, and
//!   every call of the search ads client an overall deadline across its retries
//!   ([`HttpOptions::deadline`]);
//! - every answer's body is bounded while it is read: at most
//!   [`HttpOptions::max_body_bytes`] (JSON answers) or
//!   [`HttpOptions::max_download_bytes`] (the ID-mapping file), and it must make
//!   progress (1 KiB, or its end) within [`HttpOptions::read_timeout`]
//!   ([`sa360_video_client_support::limit_body`] enforces both).
//!
//! ```
//! use sa360_video_sdk::http::{BaseUrl, HttpOptions};
//!
//! let base = BaseUrl::parse("https://video-session.example.com")?;
//! assert_eq!(base.as_str(), "https://video-session.example.com");
//! assert!(BaseUrl::parse("http://video-session.example.com").is_err());
//! assert!(BaseUrl::parse("http://127.0.0.1:8080").is_ok());
//! let options = HttpOptions::default();
//! assert_eq!(options.timeout.as_secs(), 30);
//! # Ok::<(), sa360_video_sdk::http::BaseUrlError>(())
//! ```

use std::fmt;
use std::net::IpAddr;
use std::time::Duration;

use url::{Host, Url};

use crate::setters::field_setters;

mod transport_error;

pub(crate) use transport_error::{Bounds, body_limit_error, from_reqwest};
pub use transport_error::{TransportError, TransportErrorKind};

/// Makes rustls' `ring` provider the process default, so any `reqwest::Client` of the program can
/// be built; a no-op when a provider is already installed.
///
/// A program that links this crate needs no call: the provider is installed when it loads, before
/// `main` (ARCHITECTURE.md, "TLS"). A program that **does not** link it but shares its reqwest does:
/// Cargo builds one reqwest per package, with this crate's `rustls-no-provider` feature, for every
/// binary of the package, and `reqwest::ClientBuilder::build` then panics ("No rustls crypto provider
/// is configured") in a binary that never uses this crate. Such a binary calls this first:
///
/// ```
/// // src/bin/tool.rs of a package that depends on sa360-video-sdk, using only reqwest
/// sa360_video_sdk::http::install_crypto_provider();
/// let client = reqwest::Client::builder().build()?;
/// # drop(client);
/// # Ok::<(), reqwest::Error>(())
/// ```
pub fn install_crypto_provider() {
    sa360_video_client_support::install_crypto_provider();
}

/// Why a base URL was refused. `#[non_exhaustive]`: more checks may come.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum BaseUrlError {
    /// The text is not a URL.
    #[error("base URL {url:?} is not a valid URL: {reason}")]
    Invalid {
        /// `(not a URL)`: the text is not shown (a URL with a password may be
        /// behind the typo).
        url: String,
        /// What the URL parser said.
        reason: String,
    },
    /// Plain `http://` to a host that is not loopback.
    #[error(
        "base URL {url:?} must use https:// (plain http:// is allowed only for loopback hosts such as 127.0.0.1)"
    )]
    InsecureScheme {
        /// The URL given, as messages show URLs
        /// ([`RedactedUrl`](sa360_video_client_support::RedactedUrl)).
        url: String,
    },
    /// A scheme other than `http` or `https`, or a URL without a host.
    #[error("base URL {url:?} must be an http(s) URL with a host")]
    Unsupported {
        /// The URL given, as messages show URLs.
        url: String,
    },
    /// Credentials, a query or a fragment in the base URL.
    #[error("base URL {url:?} must not carry user info, a query or a fragment")]
    ExtraParts {
        /// The URL given, without its user info and query values.
        url: String,
    },
}

/// A validated service base URL: `https://`, or `http://` on a loopback host.
///
/// The trailing slash is removed, so `"{base}/path"` joins cleanly.
#[derive(Clone, PartialEq, Eq)]
pub struct BaseUrl {
    url: Url,
    text: String,
}

impl BaseUrl {
    /// Parses and checks a base URL.
    pub fn parse(text: &str) -> Result<Self, BaseUrlError> {
        // Every error shows the URL as messages do: no user info, no query values.
        let shown = || sa360_video_client_support::RedactedUrl(text).to_string();
        let url = Url::parse(text.trim()).map_err(|e| BaseUrlError::Invalid {
            url: shown(),
            reason: e.to_string(),
        })?;
        if !url.username().is_empty()
            || url.password().is_some()
            || url.query().is_some()
            || url.fragment().is_some()
        {
            return Err(BaseUrlError::ExtraParts { url: shown() });
        }
        match (url.scheme(), url.host()) {
            ("https", Some(_)) => {}
            ("http", Some(host)) if is_loopback(&host) => {}
            ("http", Some(_)) => return Err(BaseUrlError::InsecureScheme { url: shown() }),
            _ => return Err(BaseUrlError::Unsupported { url: shown() }),
        }
        let text = url.as_str().trim_end_matches('/').to_owned();
        Ok(Self { url, text })
    }

    /// The URL without a trailing slash.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// The parsed URL.
    pub fn url(&self) -> &Url {
        &self.url
    }

    /// True when the host is loopback (and plain HTTP is therefore allowed).
    pub fn is_loopback(&self) -> bool {
        self.url.host().is_some_and(|h| is_loopback(&h))
    }
}

impl fmt::Debug for BaseUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("BaseUrl").field(&self.text).finish()
    }
}

impl fmt::Display for BaseUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl AsRef<str> for BaseUrl {
    fn as_ref(&self) -> &str {
        &self.text
    }
}

impl std::str::FromStr for BaseUrl {
    type Err = BaseUrlError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::parse(s)
    }
}

fn is_loopback(host: &Host<&str>) -> bool {
    match host {
        Host::Domain(name) => name.eq_ignore_ascii_case("localhost"),
        Host::Ipv4(ip) => IpAddr::V4(*ip).is_loopback(),
        Host::Ipv6(ip) => IpAddr::V6(*ip).is_loopback(),
    }
}

/// Timeouts, size limits and identification for the HTTP client: the one
/// owner of every bound on a call.
///
/// The default durations come from [`sa360_video_client_support::timeouts`], which the
/// generated clients use too.
///
/// | bound | applies to | default |
/// |---|---|---|
/// | [`connect_timeout`](Self::connect_timeout) | opening a connection | 10 s |
/// | [`timeout`](Self::timeout) | one attempt, answer included | 30 s |
/// | [`read_timeout`](Self::read_timeout) | progress of an answer's body (stall) | 30 s |
/// | [`deadline`](Self::deadline) | one call: every attempt and wait | 300 s |
/// | [`max_body_bytes`](Self::max_body_bytes) | a JSON answer | 32 MiB |
/// | [`max_download_bytes`](Self::max_download_bytes) | the ID-mapping file | 64 GiB |
///
/// Start from [`HttpOptions::default`] and change what you need with the
/// setters named like the fields (the fields are public for reading and mutation):
///
/// ```
/// use std::time::Duration;
/// use sa360_video_sdk::http::HttpOptions;
///
/// let options = HttpOptions::default()
///     .timeout(Duration::from_secs(60))
///     .deadline(None)
///     .max_body_bytes(64 << 20)
///     .user_agent("my-app/1.2");
/// assert_eq!(options.timeout, Duration::from_secs(60));
/// assert_eq!(options.connect_timeout, HttpOptions::default().connect_timeout);
/// ```
///
/// The struct is `#[non_exhaustive]`: a struct literal does not compile outside
/// this crate, so a field added later is not a breaking change.
///
/// ```compile_fail,E0639
/// use std::time::Duration;
/// use sa360_video_sdk::http::HttpOptions;
///
/// let options = HttpOptions { timeout: Duration::from_secs(60), ..HttpOptions::default() };
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct HttpOptions {
    /// Time allowed to establish a connection. Default 10 s.
    pub connect_timeout: Duration,
    /// Time allowed for one request attempt, body included. Default 30 s.
    /// Streaming downloads (the ID-mapping file) use
    /// [`HttpOptions::read_timeout`] instead.
    pub timeout: Duration,
    /// Longest time a response body may take to make progress: 1 KiB (or its
    /// end) must arrive within it, so a trickle of a few bytes per second fails
    /// too. Default 30 s.
    pub read_timeout: Duration,
    /// Longest time one call may take across all its attempts and the waits
    /// between them (backoff, `Retry-After`); `None` for no bound. Default
    /// 300 s. A call that passes it ends with a `DeadlineExceeded` error that
    /// names it. For the ID-mapping download it bounds getting the answer's
    /// headers; the file itself is bounded by `read_timeout` and
    /// `max_download_bytes`. Each batch of an insert or update is bounded by
    /// its attempts (`timeout`) and the retry policy instead.
    pub deadline: Option<Duration>,
    /// Largest JSON answer read, in bytes; a larger one fails while it is read
    /// (or at once, when its `Content-Length` says so). Default 32 MiB.
    pub max_body_bytes: u64,
    /// Largest download (the ID-mapping file), in bytes. Default 64 GiB (the
    /// largest files are about 50 GB).
    pub max_download_bytes: u64,
    /// The `User-Agent` header. Default `SDK/<version>`.
    pub user_agent: String,
}

impl Default for HttpOptions {
    fn default() -> Self {
        Self {
            connect_timeout: sa360_video_client_support::timeouts::CONNECT,
            timeout: sa360_video_client_support::timeouts::ATTEMPT,
            read_timeout: sa360_video_client_support::timeouts::STALL,
            deadline: Some(sa360_video_client_support::timeouts::DEADLINE),
            max_body_bytes: sa360_video_client_support::BodyLimits::DEFAULT_MAX_BYTES,
            max_download_bytes: 64 * 1024 * 1024 * 1024,
            user_agent: concat!("sa360-video-sdk/", env!("CARGO_PKG_VERSION")).to_owned(),
        }
    }
}

field_setters!(HttpOptions {
    value {
        connect_timeout => connect_timeout: Duration,
        timeout => timeout: Duration,
        read_timeout => read_timeout: Duration,
        deadline => deadline: Option<Duration>,
        max_body_bytes => max_body_bytes: u64,
        max_download_bytes => max_download_bytes: u64,
    }
    into {
        user_agent => user_agent: String,
    }
});

/// Whether the client applies the total timeout (normal calls) or only the read
/// timeout (long downloads).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TimeoutMode {
    /// Connect timeout plus total timeout.
    Total,
    /// Connect timeout plus read timeout; no bound on the whole transfer.
    Streaming,
}

impl HttpOptions {
    /// The bounds on an answer's body for calls in `mode`.
    pub(crate) fn body_limits(&self, mode: TimeoutMode) -> sa360_video_client_support::BodyLimits {
        sa360_video_client_support::BodyLimits::default()
            .with_max_bytes(match mode {
                TimeoutMode::Total => self.max_body_bytes,
                TimeoutMode::Streaming => self.max_download_bytes,
            })
            .with_stall_timeout(self.read_timeout)
    }
}

/// Builds the `reqwest::Client` for `base` under the shared transport rules.
///
/// Starts from [`sa360_video_client_support::http_client_builder`] (HTTPS through rustls and
/// ring, same-origin-only redirects) and adds the options and `https_only` for
/// non-loopback hosts.
pub(crate) fn build_client(
    base: &BaseUrl,
    options: &HttpOptions,
    mode: TimeoutMode,
) -> Result<reqwest::Client, TransportError> {
    let builder = sa360_video_client_support::http_client_builder()
        .user_agent(options.user_agent.clone())
        .connect_timeout(options.connect_timeout)
        .https_only(!base.is_loopback());
    // One reqwest timer per mode, so a timeout error always means the one
    // bound its message names: the total timeout for normal calls (a body's
    // pace is the stall check's job), the read timeout for a download (it
    // bounds waiting for the headers, then each read).
    let builder = match mode {
        TimeoutMode::Total => builder
            .read_timeout(options.timeout)
            .timeout(options.timeout),
        TimeoutMode::Streaming => builder.read_timeout(options.read_timeout),
    };
    builder.build().map_err(|e| {
        let message = e.to_string();
        TransportError::new(
            "build the HTTP client",
            TransportErrorKind::ClientBuild,
            message,
        )
        .caused_by(e)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn https_is_required_except_on_loopback() {
        assert!(BaseUrl::parse("https://example.com/api/").is_ok());
        assert!(matches!(
            BaseUrl::parse("http://example.com"),
            Err(BaseUrlError::InsecureScheme { .. })
        ));
        for ok in [
            "http://127.0.0.1:1",
            "http://127.8.9.10",
            "http://[::1]:80",
            "http://LOCALHOST:3000",
        ] {
            assert!(BaseUrl::parse(ok).is_ok(), "{ok}");
        }
        assert!(matches!(
            BaseUrl::parse("ftp://example.com"),
            Err(BaseUrlError::Unsupported { .. })
        ));
        assert!(matches!(
            BaseUrl::parse("not a url"),
            Err(BaseUrlError::Invalid { .. })
        ));
    }

    #[test]
    fn trailing_slash_is_removed() {
        let base = BaseUrl::parse("https://example.com/doubleclicksearch/v2/").unwrap();
        assert_eq!(base.as_str(), "https://example.com/doubleclicksearch/v2");
        assert_eq!(base.to_string(), base.as_str());
    }

    #[test]
    fn credentials_query_and_fragment_are_refused_without_echoing_the_password() {
        for url in [
            "https://alice:hunter2@example.com",
            "https://example.com/?key=hunter2",
            "http://alice:hunter2@example.com/?key=hunter2",
            "https://alice:hunter2@exa mple.com",
            "ftp://alice:hunter2@example.com",
        ] {
            let err = BaseUrl::parse(url).unwrap_err();
            for shown in [err.to_string(), format!("{err:?}")] {
                assert!(
                    !shown.contains("hunter2") && !shown.contains("alice"),
                    "{shown}"
                );
            }
        }
        let err = BaseUrl::parse("https://user:hunter2@example.com").unwrap_err();
        assert!(matches!(err, BaseUrlError::ExtraParts { .. }));
        assert!(err.to_string().contains("example.com"), "{err}");
        assert!(BaseUrl::parse("https://example.com/?a=1").is_err());
        assert!(BaseUrl::parse("https://example.com/#x").is_err());
    }

    #[test]
    fn client_builds_for_https_and_loopback() {
        let options = HttpOptions::default();
        for url in ["https://example.com", "http://127.0.0.1:9"] {
            let base = BaseUrl::parse(url).unwrap();
            build_client(&base, &options, TimeoutMode::Total).unwrap();
            build_client(&base, &options, TimeoutMode::Streaming).unwrap();
        }
    }
}

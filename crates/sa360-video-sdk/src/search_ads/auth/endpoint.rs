//! The one HTTP path of every token exchange: token endpoints (refresh-token,
//! JWT-bearer and authorization-code grants, revocation) and the metadata
//! server, with the API's bounds ([`HttpOptions`]) and redirects only within
//! the endpoint's origin. [`TokenEndpoint::check`] sorts each failure once:
//! transient ([`Error::TokenUnavailable`]: not reached, no answer in time, a
//! body over the limits, HTTP 408, 429 or 5xx, a success without the token
//! JSON), [`Error::InvalidGrant`], or permanent ([`Error::Auth`]).

use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, SystemTime};

use bytes::Bytes;
use secrecy::SecretString;

use super::token::AccessToken;
use crate::http::{BaseUrl, HttpOptions, TimeoutMode, build_client};
use crate::search_ads::auth::credential_kind::CredentialKind;
use crate::search_ads::error::Error;
use crate::search_ads::retry::parse_retry_after;

/// Longest error text kept from a token endpoint's answer.
const MAX_ERROR_TEXT: usize = 200;

/// What a URL in a credentials file is for, and so the only hosts it may
/// name: the exact hosts Google's documents give for it (not
/// `*.googleapis.com`, whose `storage.googleapis.com` serves anyone's
/// bucket). Google's OAuth token endpoint is `oauth2.googleapis.com` (older
/// files name `accounts.google.com`), Security Token Service
/// `sts.googleapis.com`, IAM Credentials `iamcredentials.googleapis.com`.
#[derive(Debug, Clone, Copy)]
pub(crate) enum FileUrl {
    /// `token_uri` of an `authorized_user` or `service_account` file.
    TokenUri,
    /// `token_url` of an `external_account` file.
    StsTokenUrl,
    /// `service_account_impersonation_url`.
    ImpersonationUrl,
}

impl FileUrl {
    fn field(self) -> &'static str {
        match self {
            FileUrl::TokenUri => "token_uri",
            FileUrl::StsTokenUrl => "token_url",
            FileUrl::ImpersonationUrl => "service_account_impersonation_url",
        }
    }

    fn google_hosts(self) -> &'static [&'static str] {
        match self {
            FileUrl::TokenUri => &["oauth2.googleapis.com", "accounts.google.com"],
            FileUrl::StsTokenUrl => &["sts.googleapis.com"],
            FileUrl::ImpersonationUrl => &["iamcredentials.googleapis.com"],
        }
    }
}

/// A token endpoint (or the metadata server) and the bounded client that
/// talks to it. The client is built on first use, so setters stay infallible.
pub(crate) struct TokenEndpoint {
    /// Where the requests go (a subject token URL keeps its query).
    target: url::Url,
    /// The target without query: its scheme and host rules (https://, or
    /// http:// on loopback) decide the client's `https_only`.
    base: BaseUrl,
    /// The URL as messages, logs and `Debug` show it
    /// ([`RedactedUrl`](sa360_video_client_support::RedactedUrl)).
    shown: String,
    /// Plain `http://` allowed and never through a proxy: the metadata
    /// server, and a link-local subject token URL.
    direct: bool,
    /// A credentials file's URL on loopback: refused (before any byte is
    /// sent) until the application opens loopback
    /// ([`TokenSource::allow_loopback`](super::token::TokenSource::allow_loopback)).
    loopback_gate: Option<(FileUrl, AtomicBool)>,
    options: HttpOptions,
    credential: CredentialKind,
    client: OnceLock<Result<reqwest::Client, String>>,
}

/// A token endpoint's answer, read whole within the bounds.
pub(crate) struct Answer {
    pub(crate) status: u16,
    pub(crate) body: Bytes,
    retry_after: Option<Duration>,
}

impl TokenEndpoint {
    fn with(
        target: url::Url,
        base: BaseUrl,
        direct: bool,
        options: HttpOptions,
        credential: CredentialKind,
    ) -> Self {
        Self {
            shown: sa360_video_client_support::RedactedUrl(target.as_str()).to_string(),
            target,
            base,
            direct,
            loopback_gate: None,
            options,
            credential,
            client: OnceLock::new(),
        }
    }

    /// An endpoint the application chose: `https://` (or `http://` on loopback).
    pub(crate) fn new(
        url: &str,
        options: HttpOptions,
        credential: CredentialKind,
    ) -> Result<Self, Error> {
        let base = BaseUrl::parse(url)
            .map_err(|e| Error::auth(credential, format!("the token endpoint is refused: {e}")))?;
        Ok(Self::with(
            base.url().clone(),
            base,
            false,
            options,
            credential,
        ))
    }

    /// The URL a credentials file names as its `what`: only on the Google
    /// hosts of [`FileUrl`], unless `any_host` (the application's named
    /// opt-out); a loopback URL waits behind the loopback gate.
    pub(crate) fn named_in_file(
        url: &str,
        what: FileUrl,
        any_host: bool,
        options: HttpOptions,
        credential: CredentialKind,
    ) -> Result<Self, Error> {
        let mut endpoint = Self::new(url, options, credential).map_err(|e| {
            Error::auth(
                credential,
                format!("the file's {}: {}", what.field(), error_message(&e)),
            )
        })?;
        let host = endpoint.target.host_str().unwrap_or_default();
        let google = endpoint.target.scheme() == "https"
            && endpoint.target.port().is_none()
            && what.google_hosts().contains(&host);
        if endpoint.base.is_loopback() && !any_host {
            endpoint.loopback_gate = Some((what, AtomicBool::new(false)));
        } else if !google && !any_host {
            return Err(Error::auth(
                credential,
                format!(
                    "the file's {} {} is refused: a credentials file may send secrets only to \
                     Google's {} there, and a file from someone else can name any host \
                     (accept other hosts only for files you trust: \
                     DefaultCredentialsBuilder::allow_non_google_token_hosts)",
                    what.field(),
                    endpoint.shown,
                    what.google_hosts().join(" or "),
                ),
            ));
        }
        Ok(endpoint)
    }

    /// Opens the loopback gate (see [`named_in_file`](Self::named_in_file)).
    pub(crate) fn allow_loopback(&self) {
        if let Some((_, open)) = &self.loopback_gate {
            open.store(true, Ordering::Relaxed);
        }
    }

    /// The metadata server's token endpoint on `host` (`HOST[:PORT]`), over
    /// plain `http://` as Google's platforms serve it.
    pub(crate) fn metadata(host: &str, path: &str, options: HttpOptions) -> Result<Self, Error> {
        let refused = |why: &str| {
            Error::auth(
                CredentialKind::MetadataServer,
                format!("the metadata server host {host:?} is refused: {why}"),
            )
        };
        if host.is_empty() || host.contains(['/', '?', '#', '@']) || host.contains("://") {
            return Err(refused(
                "give HOST or HOST:PORT, without a scheme or a path",
            ));
        }
        let url = url::Url::parse(&format!("http://{host}{path}"))
            .map_err(|e| refused(&e.to_string()))?;
        // The base is unused (the client is a direct one); kept so the type
        // has one shape.
        let base =
            BaseUrl::parse(&format!("https://{host}")).map_err(|e| refused(&e.to_string()))?;
        Ok(Self::with(
            url,
            base,
            true,
            options,
            CredentialKind::MetadataServer,
        ))
    }

    /// The URL of an `external_account` file's subject token: `https://`
    /// (or `http://` on loopback) like [`new`](Self::new), and also plain
    /// `http://` on a link-local address (`169.254.0.0/16`, `fe80::/10`),
    /// where cloud platforms serve instance identity tokens (Azure's
    /// `169.254.169.254`). Unlike a token endpoint it may carry a query
    /// (GitHub's and Azure's token URLs do); never user info. It is the
    /// identity provider's, so any host: what it answers goes only to
    /// Google's STS. It is reached through the proxy of the standard
    /// variables (`HTTPS_PROXY`, `NO_PROXY`, …) like every other request,
    /// except on a link-local address (no proxy reaches one).
    pub(crate) fn subject_token_source(
        url: &str,
        options: HttpOptions,
        credential: CredentialKind,
    ) -> Result<Self, Error> {
        let shown = sa360_video_client_support::RedactedUrl(url);
        let refused = |why: String| {
            Error::auth(
                credential,
                format!("the subject token URL {shown} is refused: {why}"),
            )
        };
        let parsed = url::Url::parse(url).map_err(|e| refused(e.to_string()))?;
        let link_local = match parsed.host() {
            Some(url::Host::Ipv4(ip)) => ip.is_link_local(),
            Some(url::Host::Ipv6(ip)) => (ip.segments()[0] & 0xffc0) == 0xfe80,
            _ => false,
        };
        if !parsed.username().is_empty() || parsed.password().is_some() {
            return Err(refused("it carries user info".to_owned()));
        }
        let mut checked = parsed.clone();
        checked.set_query(None);
        checked.set_fragment(None);
        let direct = parsed.scheme() == "http" && link_local;
        if direct {
            let _ = checked.set_scheme("https");
        }
        // The scheme and host rules of every endpoint (https://, or http:// on
        // loopback), on the URL without its query.
        let base = BaseUrl::parse(checked.as_str()).map_err(|e| refused(e.to_string()))?;
        let mut target = parsed;
        target.set_fragment(None);
        Ok(Self::with(target, base, direct, options, credential))
    }

    /// The endpoint's URL, whole (for requests and the credentials' own
    /// JSON; messages use [`shown`](Self::shown)).
    pub(crate) fn url(&self) -> &str {
        self.target.as_str()
    }

    /// The URL as messages show it: without user info or query values.
    pub(crate) fn shown(&self) -> &str {
        &self.shown
    }

    /// The same endpoint with other HTTP options.
    pub(crate) fn with_options(&self, options: HttpOptions) -> Self {
        let mut copy = Self::with(
            self.target.clone(),
            self.base.clone(),
            self.direct,
            options,
            self.credential,
        );
        copy.loopback_gate = (self.loopback_gate.as_ref())
            .map(|(what, open)| (*what, AtomicBool::new(open.load(Ordering::Relaxed))));
        copy
    }

    fn client(&self) -> Result<&reqwest::Client, Error> {
        self.client
            .get_or_init(|| {
                if !self.direct {
                    build_client(&self.base, &self.options, TimeoutMode::Total)
                        .map_err(|e| e.to_string())
                } else {
                    // The metadata server: the same bounds as build_client,
                    // plain HTTP, and never through a proxy.
                    sa360_video_client_support::http_client_builder()
                        .user_agent(self.options.user_agent.clone())
                        .connect_timeout(self.options.connect_timeout)
                        .read_timeout(self.options.timeout)
                        .timeout(self.options.timeout)
                        .no_proxy()
                        .build()
                        .map_err(|e| sa360_video_client_support::ErrorWithoutUrl(&e).to_string())
                }
            })
            .as_ref()
            .map_err(|e| Error::Config {
                message: format!("the token endpoint's HTTP client could not be built: {e}"),
            })
    }

    fn unavailable(
        &self,
        status: Option<u16>,
        what: String,
        retry_after: Option<Duration>,
    ) -> Error {
        Error::TokenUnavailable {
            credential: self.credential,
            status,
            message: format!("{} {what}", self.shown),
            retry_after,
        }
    }

    /// POSTs `form` (form-encoded; it may hold secrets: it is never logged).
    pub(crate) async fn post_form(&self, form: &[(&str, &str)]) -> Result<Answer, Error> {
        let body = url::form_urlencoded::Serializer::new(String::new())
            .extend_pairs(form)
            .finish();
        let request = self
            .client()?
            .post(self.target.clone())
            .header(
                reqwest::header::CONTENT_TYPE,
                "application/x-www-form-urlencoded",
            )
            .body(body);
        self.send(request).await
    }

    /// POSTs `body` as JSON with `Authorization: Bearer <bearer>` (IAM
    /// Credentials' `generateAccessToken`; the token is marked sensitive).
    pub(crate) async fn post_json(
        &self,
        body: &serde_json::Value,
        bearer: &str,
    ) -> Result<Answer, Error> {
        let mut authorization = reqwest::header::HeaderValue::from_str(&format!("Bearer {bearer}"))
            .map_err(|_| {
                Error::auth(
                    self.credential,
                    "the source access token holds characters a header cannot carry",
                )
            })?;
        authorization.set_sensitive(true);
        let request = self
            .client()?
            .post(self.target.clone())
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .header(reqwest::header::AUTHORIZATION, authorization)
            .body(body.to_string());
        self.send(request).await
    }

    /// GETs the endpoint with `headers` (the metadata server's `Metadata-Flavor`, the headers
    /// of an `external_account` file's URL-sourced subject token), each marked sensitive.
    pub(crate) async fn get<N: AsRef<str>, V: AsRef<str>>(
        &self,
        headers: &[(N, V)],
    ) -> Result<Answer, Error> {
        let mut request = self.client()?.get(self.target.clone());
        for (name, value) in headers {
            let name = reqwest::header::HeaderName::from_bytes(name.as_ref().as_bytes());
            let value = reqwest::header::HeaderValue::from_str(value.as_ref());
            let (Ok(name), Ok(mut value)) = (name, value) else {
                return Err(Error::auth(
                    self.credential,
                    format!(
                        "a header of the subject token request to {} is not a valid HTTP header",
                        self.shown
                    ),
                ));
            };
            value.set_sensitive(true);
            request = request.header(name, value);
        }
        self.send(request).await
    }

    async fn send(&self, request: reqwest::RequestBuilder) -> Result<Answer, Error> {
        if let Some((what, open)) = &self.loopback_gate
            && !open.load(Ordering::Relaxed)
        {
            return Err(Error::auth(
                self.credential,
                format!(
                    "the file's {} {} is on loopback, which a credentials file alone never \
                     opens: only an application pointed at local fakes does (a client whose \
                     endpoints are on loopback, or TokenSource::allow_loopback)",
                    what.field(),
                    self.shown
                ),
            ));
        }
        let started = std::time::Instant::now();
        let response = match request.send().await {
            Ok(response) => response,
            // Nothing listening where the metadata server should be means
            // "not on Google Cloud": no credentials, not a hiccup to retry.
            Err(e) if e.is_connect() && self.credential == CredentialKind::MetadataServer => {
                return Err(Error::auth(
                    self.credential,
                    format!(
                        "{} {} (this does not look like Google Cloud)",
                        self.shown,
                        self.describe(&e)
                    ),
                ));
            }
            Err(e) => return Err(self.unavailable(None, self.describe(&e), None)),
        };
        let status = response.status().as_u16();
        let retry_after = response
            .headers()
            .get(reqwest::header::RETRY_AFTER)
            .and_then(|v| v.to_str().ok())
            .and_then(parse_retry_after);
        let limited = sa360_video_client_support::limit_body(
            response,
            self.options.body_limits(TimeoutMode::Total),
        );
        let body = match limited.bytes().await {
            Ok(body) => body,
            Err(e) => return Err(self.unavailable(Some(status), self.describe(&e), None)),
        };
        tracing::debug!(
            credential = self.credential.name(),
            endpoint = %self.shown,
            status,
            duration_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
            "token endpoint answered"
        );
        Ok(Answer {
            status,
            body,
            retry_after,
        })
    }

    /// A transport failure, without the URL (it is in the message already).
    fn describe(&self, error: &reqwest::Error) -> String {
        use sa360_video_client_support::{BodyLimitError, ErrorWithoutUrl};
        match BodyLimitError::find(error) {
            Some(BodyLimitError::TooLarge { limit, .. }) => format!(
                "answered more than the limit of {limit} bytes (HttpOptions::max_body_bytes); \
                 nothing more was read"
            ),
            Some(BodyLimitError::Stalled { after, received }) => format!(
                "stalled: less than 1 KiB arrived in {} s after {received} bytes \
                 (HttpOptions::read_timeout)",
                after.as_secs_f64()
            ),
            None if error.is_timeout() => format!(
                "did not answer within {} s (HttpOptions::timeout)",
                self.options.timeout.as_secs_f64()
            ),
            None if error.is_connect() => {
                format!("could not be reached ({})", ErrorWithoutUrl(error))
            }
            _ => format!("failed ({})", ErrorWithoutUrl(error)),
        }
    }

    /// Sorts a non-success answer (see the module docs); `Ok` for a 2xx.
    pub(crate) fn check(&self, answer: &Answer, what: &str) -> Result<(), Error> {
        let status = answer.status;
        if (200..300).contains(&status) {
            return Ok(());
        }
        let text = String::from_utf8_lossy(&answer.body);
        let oauth = OAuthError::parse(&text);
        if status == 408 || status == 429 || status >= 500 {
            return Err(self.unavailable(
                Some(status),
                format!("answered HTTP {status}{}", shown(&oauth, &text)),
                answer.retry_after,
            ));
        }
        let refused = format!(
            "the token endpoint {} refused {what} with HTTP {status}{}",
            self.shown,
            shown(&oauth, &text)
        );
        if oauth.as_ref().is_some_and(|e| e.error == "invalid_grant") {
            return Err(Error::InvalidGrant {
                credential: self.credential,
                message: refused,
            });
        }
        let redirect = if (300..400).contains(&status) {
            " (a redirect to another origin, which is not followed)"
        } else {
            ""
        };
        Err(Error::auth(self.credential, format!("{refused}{redirect}")))
    }

    /// The access token of a successful answer (`access_token`,
    /// `expires_in`), after [`check`](Self::check).
    pub(crate) fn token(&self, answer: &Answer, what: &str) -> Result<AccessToken, Error> {
        self.check(answer, what)?;
        let parsed: TokenAnswer = serde_json::from_slice(&answer.body).map_err(|e| {
            self.unavailable(
                Some(answer.status),
                format!(
                    "answered HTTP {} without the documented token JSON (line {}, column {})",
                    answer.status,
                    e.line(),
                    e.column()
                ),
                None,
            )
        })?;
        Ok(parsed.into_token())
    }
}

/// The token JSON of Google's token endpoints and the metadata server.
#[derive(serde::Deserialize)]
pub(crate) struct TokenAnswer {
    access_token: String,
    expires_in: Option<u64>,
    /// Only in an `authorization_code` answer with `access_type=offline`.
    refresh_token: Option<String>,
}

impl TokenAnswer {
    pub(crate) fn parse(body: &[u8]) -> Result<Self, serde_json::Error> {
        serde_json::from_slice(body)
    }

    /// The refresh token of an `authorization_code` answer, if any.
    pub(crate) fn take_refresh_token(&mut self) -> Option<SecretString> {
        self.refresh_token.take().map(SecretString::from)
    }

    pub(crate) fn into_token(self) -> AccessToken {
        AccessToken {
            secret: SecretString::from(self.access_token),
            expires_at: self
                .expires_in
                .and_then(|secs| SystemTime::now().checked_add(Duration::from_secs(secs))),
        }
    }
}

/// The message of an [`Error::Auth`] (the text of any other error), to wrap
/// it in another without repeating its hint.
pub(crate) fn error_message(e: &Error) -> String {
    match e {
        Error::Auth { message, .. } => message.clone(),
        other => other.to_string(),
    }
}

#[derive(serde::Deserialize)]
struct OAuthError {
    error: String,
    error_description: Option<String>,
}

impl OAuthError {
    fn parse(text: &str) -> Option<Self> {
        serde_json::from_str(text).ok()
    }
}

/// `: invalid_grant (Token has been expired or revoked.)` from an OAuth error
/// body, or a short excerpt of any other body, with control characters
/// escaped (`sa360_video_client_support::printable`). Token endpoints do not echo
/// secrets in their errors; the text is still cut short.
fn shown(oauth: &Option<OAuthError>, text: &str) -> String {
    let shown = match oauth {
        Some(e) => match e.error_description.as_deref().filter(|d| !d.is_empty()) {
            Some(d) => format!("{} ({d})", e.error),
            None => e.error.clone(),
        },
        None => text.trim().to_owned(),
    };
    if shown.is_empty() {
        return String::new();
    }
    let cut: String = shown.chars().take(MAX_ERROR_TEXT).collect();
    let more = if cut.len() < shown.len() { "…" } else { "" };
    // The server chose this text: escape sequences in it must not reach a
    // terminal raw.
    format!(": {}{more}", sa360_video_client_support::printable(&cut))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn endpoint() -> TokenEndpoint {
        TokenEndpoint::new(
            "http://127.0.0.1:9/token",
            HttpOptions::default(),
            CredentialKind::AuthorizedUser,
        )
        .unwrap()
    }

    fn answer(status: u16, body: &str) -> Answer {
        Answer {
            status,
            body: Bytes::from(body.to_owned()),
            retry_after: None,
        }
    }

    #[test]
    fn answers_are_sorted_into_transient_invalid_grant_and_permanent() {
        let e = endpoint();
        let grant = e
            .check(
                &answer(400, r#"{"error":"invalid_grant","error_description":"Token has been expired or revoked."}"#),
                "the refresh token",
            )
            .unwrap_err();
        assert!(matches!(grant, Error::InvalidGrant { .. }), "{grant:?}");
        assert!(
            grant
                .to_string()
                .contains("Token has been expired or revoked.")
        );
        let client = e
            .check(&answer(401, r#"{"error":"invalid_client"}"#), "x")
            .unwrap_err();
        assert!(matches!(client, Error::Auth { .. }), "{client:?}");
        for status in [408, 429, 500, 503] {
            let busy = e.check(&answer(status, "busy"), "x").unwrap_err();
            assert!(busy.is_transient(), "{status}: {busy:?}");
        }
        let html = e.token(&answer(200, "<html>"), "x").unwrap_err();
        assert!(html.is_transient(), "{html:?}");
        let token = e
            .token(
                &answer(200, r#"{"access_token":"ya29.x","expires_in":3599}"#),
                "x",
            )
            .unwrap();
        assert_eq!(token.expose_secret(), "ya29.x");
        assert!(token.expires_at().is_some());
    }

    fn in_file(url: &str, what: FileUrl, any_host: bool) -> Result<TokenEndpoint, Error> {
        TokenEndpoint::named_in_file(
            url,
            what,
            any_host,
            HttpOptions::default(),
            CredentialKind::ExternalAccount,
        )
    }

    /// Issue 48: a credentials file decided where its secrets went.
    #[test]
    fn file_urls_are_accepted_only_on_the_google_hosts_of_their_field() {
        for (what, google) in [
            (FileUrl::TokenUri, "https://oauth2.googleapis.com/token"),
            (
                FileUrl::TokenUri,
                "https://accounts.google.com/o/oauth2/token",
            ),
            (FileUrl::StsTokenUrl, "https://sts.googleapis.com/v1/token"),
            (
                FileUrl::ImpersonationUrl,
                "https://iamcredentials.googleapis.com/v1/projects/-/serviceAccounts/a@b:generateAccessToken",
            ),
        ] {
            in_file(google, what, false).unwrap();
            for hostile in [
                "https://sts.attacker.example/v1/token",
                "https://storage.googleapis.com/bucket/token",
                "https://sts.googleapis.com.attacker.example/v1/token",
                "https://iamcredentials.googleapis.com:8443/v1/token",
                "https://admin:IMP-PASSWORD-XYZ@idp.example/token?key=APIKEY-SECRET-123",
            ] {
                let e = in_file(hostile, what, false).err().unwrap();
                let text = format!("{e} {e:?}");
                assert!(text.contains(what.field()), "{text}");
                for secret in ["admin", "IMP-PASSWORD-XYZ", "APIKEY-SECRET-123"] {
                    assert!(!text.contains(secret), "{text}");
                }
                // The application's named opt-out (user info is never taken).
                assert_eq!(in_file(hostile, what, true).is_ok(), !hostile.contains('@'));
            }
        }
        // Another field's Google host is not this one's.
        assert!(
            in_file(
                "https://sts.googleapis.com/v1/token",
                FileUrl::TokenUri,
                false
            )
            .is_err()
        );
    }

    /// A file's loopback URL is refused before a connection is made, until
    /// the application opens loopback.
    #[tokio::test]
    async fn a_file_url_on_loopback_waits_for_the_application() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let url = format!("http://{}/v1/token", listener.local_addr().unwrap());
        let endpoint = in_file(&url, FileUrl::StsTokenUrl, false).unwrap();
        let e = endpoint
            .post_form(&[("subject_token", "S")])
            .await
            .err()
            .unwrap();
        assert!(e.to_string().contains("loopback"), "{e}");
        assert!(listener.accept().is_err(), "a connection was made");
        let endpoint = endpoint.with_options(HttpOptions::default());
        endpoint.allow_loopback();
        let answer =
            tokio::spawn(async move { endpoint.post_form(&[("a", "b")]).await.map(|_| ()) });
        let accepted = loop {
            match listener.accept() {
                Ok(_) => break true,
                Err(_) if !answer.is_finished() => tokio::task::yield_now().await,
                Err(_) => break false,
            }
        };
        assert!(accepted, "the opened gate lets the request go");
        answer.abort();
    }

    #[test]
    fn insecure_endpoints_are_refused() {
        let e = TokenEndpoint::new(
            "http://oauth2.example.com/token",
            HttpOptions::default(),
            CredentialKind::AuthorizedUser,
        )
        .err()
        .unwrap();
        assert!(e.to_string().contains("https://"), "{e}");
    }
}

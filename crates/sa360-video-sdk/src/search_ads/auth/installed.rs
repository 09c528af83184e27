//! The installed-app flow that gives a refresh token: Google's "OAuth 2.0 for
//! Mobile & Desktop Apps" with an authorization code, PKCE (S256) and a
//! loopback redirect, the way `gcloud auth application-default login` and
//! `apictl auth login` sign a user in.
//!
//! ```no_run
//! use std::time::Duration;
//! use sa360_video_sdk::search_ads::auth::installed::{InstalledAppFlow, LoopbackRedirect};
//!
//! # async fn run() -> Result<(), sa360_video_sdk::search_ads::Error> {
//! let flow = InstalledAppFlow::builder("123.apps.googleusercontent.com", "GOCSPX-…").build()?;
//! let redirect = LoopbackRedirect::bind().await?;
//! let authorization = flow.authorization(redirect.redirect_uri());
//! println!("open {}", authorization.url());
//! let code = redirect.wait(&authorization, Duration::from_secs(300)).await?;
//! let credentials = flow.exchange(&authorization, code).await?;
//! let json = credentials.to_json(); // secrets: write it 0600
//! std::fs::write("authorized_user.json", secrecy::ExposeSecret::expose_secret(&json)).ok();
//! # Ok(()) }
//! ```
//!
//! What it does, following Google's page
//! (<https://developers.google.com/identity/protocols/oauth2/native-app>):
//! the authorization URL carries `response_type=code`, the API's scope,
//! `access_type=offline` (a refresh token comes only with it),
//! `prompt=consent`, a random `state` and the PKCE `code_challenge`
//! (`S256` of a random 256-bit `code_verifier`); the redirect goes to
//! `http://127.0.0.1:PORT/` on a free port; the answer's `state` must be the
//! one sent; the code is exchanged once, with the verifier. The
//! out-of-band flow (`urn:ietf:wg:oauth:2.0:oob`) is not offered: Google
//! blocked it. When the browser runs on another machine, the loopback
//! redirect is completed by hand instead: the user pastes the address the
//! browser was sent to, and [`Authorization::code_from_redirect_url`] checks
//! it like a received redirect.

use std::fmt;
use std::time::Duration;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use secrecy::{ExposeSecret as _, SecretString};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

use super::authorized_user::AuthorizedUser;
use super::authorized_user::{GOOGLE_REVOKE_URI, GOOGLE_TOKEN_URI};
use super::endpoint::{TokenAnswer, TokenEndpoint};
use super::token::SCOPE;
use crate::http::{BaseUrl, HttpOptions};
use crate::search_ads::auth::credential_kind::CredentialKind;
use crate::search_ads::error::Error;

/// Google's authorization endpoint.
pub const GOOGLE_AUTH_URI: &str = "https://accounts.google.com/o/oauth2/v2/auth";

/// The largest request head the loopback listener reads.
const MAX_REDIRECT_REQUEST: usize = 16 * 1024;

/// How long one connection to the loopback listener may take to send its
/// request head (and to take the answer).
const REDIRECT_READ_DEADLINE: Duration = Duration::from_secs(5);

/// Connections the loopback listener serves at once; a new one beyond them
/// closes the oldest.
const MAX_REDIRECT_CONNECTIONS: usize = 32;

fn auth_error(message: impl Into<String>) -> Error {
    Error::auth(CredentialKind::AuthorizedUser, message.into())
}

/// `n` random bytes from the operating system, base64url without padding.
fn random_text(n: usize) -> Result<String, Error> {
    use ring::rand::SecureRandom as _;
    let mut bytes = vec![0u8; n];
    ring::rand::SystemRandom::new()
        .fill(&mut bytes)
        .map_err(|_| auth_error("the operating system gave no random bytes"))?;
    Ok(URL_SAFE_NO_PAD.encode(bytes))
}

/// An OAuth client of type "Desktop app" and Google's endpoints.
pub struct InstalledAppFlow {
    client_id: String,
    client_secret: SecretString,
    auth_uri: BaseUrl,
    token: TokenEndpoint,
    revoke_uri: String,
    options: HttpOptions,
}

/// Builds an [`InstalledAppFlow`]; checked in [`build`](Self::build).
#[must_use]
pub struct InstalledAppFlowBuilder {
    client_id: String,
    client_secret: SecretString,
    auth_uri: String,
    token_uri: String,
    revoke_uri: String,
    options: HttpOptions,
}

impl fmt::Debug for InstalledAppFlowBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use sa360_video_client_support::RedactedUrl;
        f.debug_struct("InstalledAppFlowBuilder")
            .field("client_id", &self.client_id)
            .field("client_secret", &"[REDACTED]")
            .field("auth_uri", &RedactedUrl(&self.auth_uri))
            .field("token_uri", &RedactedUrl(&self.token_uri))
            .finish_non_exhaustive()
    }
}

impl fmt::Debug for InstalledAppFlow {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("InstalledAppFlow")
            .field("client_id", &self.client_id)
            .field("client_secret", &"[REDACTED]")
            .field("auth_uri", &self.auth_uri)
            .field("token_uri", &self.token.shown())
            .finish_non_exhaustive()
    }
}

impl InstalledAppFlowBuilder {
    /// The authorization endpoint (default [`GOOGLE_AUTH_URI`]).
    pub fn auth_uri(mut self, uri: impl Into<String>) -> Self {
        self.auth_uri = uri.into();
        self
    }

    /// The token endpoint (default [`GOOGLE_TOKEN_URI`]).
    pub fn token_uri(mut self, uri: impl Into<String>) -> Self {
        self.token_uri = uri.into();
        self
    }

    /// The revoke endpoint handed to the credentials (default [`GOOGLE_REVOKE_URI`]).
    pub fn revoke_uri(mut self, uri: impl Into<String>) -> Self {
        self.revoke_uri = uri.into();
        self
    }

    /// Timeouts and body limits of the exchange (default [`HttpOptions::default`]).
    pub fn http_options(mut self, options: HttpOptions) -> Self {
        self.options = options;
        self
    }

    /// Checks the client id and secret and the endpoints.
    pub fn build(self) -> Result<InstalledAppFlow, Error> {
        if self.client_id.trim().is_empty() {
            return Err(Error::invalid("client_id", "is empty"));
        }
        if self.client_secret.expose_secret().is_empty() {
            return Err(Error::invalid("client_secret", "is empty"));
        }
        let url = |field: &'static str, text: &str| {
            BaseUrl::parse(text).map_err(|e| Error::invalid(field, e.to_string()))
        };
        let auth_uri = url("auth_uri", &self.auth_uri)?;
        url("token_uri", &self.token_uri)?;
        let token = TokenEndpoint::new(
            &self.token_uri,
            self.options.clone(),
            CredentialKind::AuthorizedUser,
        )?;
        Ok(InstalledAppFlow {
            client_id: self.client_id.trim().to_owned(),
            client_secret: self.client_secret,
            auth_uri,
            token,
            revoke_uri: self.revoke_uri,
            options: self.options,
        })
    }
}

/// One sign-in attempt: the URL to open, and the `state` and PKCE verifier
/// that only this process knows (never printed).
pub struct Authorization {
    url: String,
    redirect_uri: String,
    state: SecretString,
    verifier: SecretString,
}

impl fmt::Debug for Authorization {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Authorization")
            .field("redirect_uri", &self.redirect_uri)
            .finish_non_exhaustive()
    }
}

impl Authorization {
    /// The URL the user opens in a browser (it holds the `state` and the
    /// PKCE challenge, not the verifier).
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The loopback redirect URI it names.
    pub fn redirect_uri(&self) -> &str {
        &self.redirect_uri
    }

    /// True when the query string carries this sign-in's `state`.
    fn state_matches(&self, query: &str) -> bool {
        url::form_urlencoded::parse(query.as_bytes())
            .any(|(name, value)| name == "state" && value == self.state.expose_secret())
    }

    /// The authorization code from the address the browser was redirected
    /// to, pasted back by hand (the browser ran on another machine, so the
    /// redirect to this machine's loopback address could not arrive). The
    /// address must be this sign-in's redirect URI (same scheme, host, port
    /// and path) and carry this sign-in's `state`, like a redirect the
    /// listener receives; the code is then exchanged with this sign-in's PKCE
    /// verifier. At most 16 KiB are read.
    pub fn code_from_redirect_url(&self, pasted: &str) -> Result<SecretString, Error> {
        let pasted = pasted.trim();
        if pasted.len() > MAX_REDIRECT_REQUEST {
            return Err(auth_error(format!(
                "the pasted address is longer than {MAX_REDIRECT_REQUEST} bytes: it is not a \
                 sign-in redirect"
            )));
        }
        let url = url::Url::parse(pasted).map_err(|e| {
            auth_error(format!(
                "the pasted text is not an address ({e}): paste the whole address the browser \
                 shows after the sign-in, starting with {}",
                self.redirect_uri
            ))
        })?;
        let expected = url::Url::parse(&self.redirect_uri)
            .map_err(|e| auth_error(format!("the redirect URI is not a URL: {e}")))?;
        let same = url.scheme() == expected.scheme()
            && url.host_str() == expected.host_str()
            && url.port_or_known_default() == expected.port_or_known_default()
            && url.path() == expected.path();
        if !same {
            return Err(auth_error(format!(
                "the pasted address does not start with this sign-in's redirect URI {}: it did \
                 not come from this sign-in",
                self.redirect_uri
            )));
        }
        self.code_from_query(url.query().unwrap_or(""))
    }

    /// The authorization code from the redirect's query string, after
    /// checking its `state`; Google's `error=` is reported by name.
    pub fn code_from_query(&self, query: &str) -> Result<SecretString, Error> {
        let mut code = None;
        let mut state = None;
        let mut error = None;
        for (name, value) in url::form_urlencoded::parse(query.as_bytes()) {
            match &*name {
                "code" => code = Some(SecretString::from(value.into_owned())),
                "state" => state = Some(value.into_owned()),
                "error" => error = Some(value.into_owned()),
                _ => {}
            }
        }
        if state.as_deref() != Some(self.state.expose_secret()) {
            return Err(auth_error(
                "the sign-in redirect carried a different `state` than the one sent: it did not \
                 come from this sign-in, and was ignored",
            ));
        }
        if let Some(error) = error {
            let cut: String = error.chars().take(100).collect();
            return Err(auth_error(format!(
                "the sign-in was not completed: the authorization server answered {cut:?}"
            )));
        }
        code.ok_or_else(|| auth_error("the sign-in redirect carried no authorization code"))
    }
}

impl InstalledAppFlow {
    /// A builder for the desktop client `client_id` / `client_secret`.
    pub fn builder(
        client_id: impl Into<String>,
        client_secret: impl Into<String>,
    ) -> InstalledAppFlowBuilder {
        InstalledAppFlowBuilder {
            client_id: client_id.into(),
            client_secret: SecretString::from(client_secret.into()),
            auth_uri: GOOGLE_AUTH_URI.to_owned(),
            token_uri: GOOGLE_TOKEN_URI.to_owned(),
            revoke_uri: GOOGLE_REVOKE_URI.to_owned(),
            options: HttpOptions::default(),
        }
    }

    /// A new sign-in attempt redirecting to `redirect_uri` (fresh `state` and
    /// PKCE verifier).
    ///
    /// # Panics
    /// Never in practice: only if the operating system has no random source.
    pub fn authorization(&self, redirect_uri: &str) -> Authorization {
        let state = random_text(16).expect("the operating system's random source");
        let verifier = random_text(32).expect("the operating system's random source");
        let challenge = URL_SAFE_NO_PAD.encode(ring::digest::digest(
            &ring::digest::SHA256,
            verifier.as_bytes(),
        ));
        let mut url = self.auth_uri.url().clone();
        url.query_pairs_mut()
            .append_pair("client_id", &self.client_id)
            .append_pair("redirect_uri", redirect_uri)
            .append_pair("response_type", "code")
            .append_pair("scope", SCOPE)
            .append_pair("access_type", "offline")
            .append_pair("prompt", "consent")
            .append_pair("state", &state)
            .append_pair("code_challenge", &challenge)
            .append_pair("code_challenge_method", "S256");
        Authorization {
            url: url.into(),
            redirect_uri: redirect_uri.to_owned(),
            state: SecretString::from(state),
            verifier: SecretString::from(verifier),
        }
    }

    /// Exchanges the code (once) for the user's refresh-token credentials.
    pub async fn exchange(
        &self,
        authorization: &Authorization,
        code: SecretString,
    ) -> Result<AuthorizedUser, Error> {
        let answer = self
            .token
            .post_form(&[
                ("grant_type", "authorization_code"),
                ("code", code.expose_secret()),
                ("client_id", &self.client_id),
                ("client_secret", self.client_secret.expose_secret()),
                ("redirect_uri", &authorization.redirect_uri),
                ("code_verifier", authorization.verifier.expose_secret()),
            ])
            .await?;
        self.token.check(&answer, "the authorization code")?;
        let mut parsed = TokenAnswer::parse(&answer.body).map_err(|e| {
            auth_error(format!(
                "the token endpoint {} answered without the documented token JSON (line {}, column {})",
                self.token.shown(),
                e.line(),
                e.column()
            ))
        })?;
        let refresh = parsed.take_refresh_token().ok_or_else(|| {
            auth_error(format!(
                "the token endpoint {} gave no refresh token (the sign-in asks for \
                 access_type=offline and prompt=consent)",
                self.token.shown()
            ))
        })?;
        AuthorizedUser::builder(
            self.client_id.clone(),
            self.client_secret.expose_secret(),
            refresh.expose_secret(),
        )
        .token_uri(self.token.url())
        .http_options(self.options.clone())
        .build()
        .map(|user| user.revoke_uri(self.revoke_uri.clone()))
    }
}

/// A one-shot HTTP listener on `127.0.0.1` and a free port that receives the
/// sign-in redirect.
#[derive(Debug)]
pub struct LoopbackRedirect {
    listener: tokio::net::TcpListener,
    redirect_uri: String,
}

impl LoopbackRedirect {
    /// Binds `127.0.0.1:0`.
    pub async fn bind() -> Result<Self, Error> {
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0))
            .await
            .map_err(|e| {
                auth_error(format!(
                    "cannot listen on 127.0.0.1 for the sign-in redirect: {e}"
                ))
            })?;
        let port = listener
            .local_addr()
            .map_err(|e| auth_error(format!("cannot listen on 127.0.0.1: {e}")))?
            .port();
        Ok(Self {
            listener,
            redirect_uri: format!("http://127.0.0.1:{port}/"),
        })
    }

    /// `http://127.0.0.1:PORT/`.
    pub fn redirect_uri(&self) -> &str {
        &self.redirect_uri
    }

    /// Waits up to `timeout` for the redirect of `authorization` and returns
    /// its code.
    ///
    /// Every connection is served at once, each with its own deadline: its
    /// request head (at most 16 KiB) must arrive within 5 s, so connections
    /// that stay idle or trickle cannot hold back the real redirect; at most
    /// 32 are served together, and a new connection beyond them closes the
    /// oldest (any local process can open idle connections; the browser's
    /// comes last and sends its request at once). Requests without
    /// this sign-in's `state` (another page, a favicon, a stale tab, a
    /// forgery) are answered 400 and the wait goes on; the first with the
    /// right `state` ends it, and the connections still open are closed.
    pub async fn wait(
        &self,
        authorization: &Authorization,
        timeout: Duration,
    ) -> Result<SecretString, Error> {
        use futures::StreamExt as _;
        use futures::future::{AbortHandle, Abortable, Either, select};

        let work = async {
            let mut connections = futures::stream::FuturesUnordered::new();
            // The handles of the served connections, oldest first.
            let mut served = std::collections::VecDeque::new();
            loop {
                let event = {
                    let accept = std::pin::pin!(self.listener.accept());
                    let finished = std::pin::pin!(if connections.is_empty() {
                        Either::Left(futures::future::pending())
                    } else {
                        Either::Right(connections.next())
                    });
                    match select(accept, finished).await {
                        Either::Left((accepted, _)) => Either::Left(accepted),
                        Either::Right((done, _)) => Either::Right(done),
                    }
                };
                match event {
                    Either::Left(Ok((stream, _))) => {
                        if served.len() == MAX_REDIRECT_CONNECTIONS
                            && let Some(oldest) = served.pop_front()
                        {
                            // Ends it (a no-op when it has ended), which closes it.
                            AbortHandle::abort(&oldest);
                        }
                        let (handle, registration) = AbortHandle::new_pair();
                        served.push_back(handle);
                        connections.push(Abortable::new(
                            serve_redirect(stream, authorization),
                            registration,
                        ));
                    }
                    Either::Left(Err(_)) | Either::Right(None | Some(Ok(None) | Err(_))) => {}
                    Either::Right(Some(Ok(Some(result)))) => return result,
                }
            }
        };
        tokio::time::timeout(timeout, work).await.map_err(|_| {
            auth_error(format!(
                "no sign-in redirect arrived within {} s",
                timeout.as_secs_f64()
            ))
        })?
    }
}

/// One connection to the loopback listener: `None` when it was not this
/// sign-in's redirect (answered 400), else the redirect's outcome.
async fn serve_redirect(
    mut stream: tokio::net::TcpStream,
    authorization: &Authorization,
) -> Option<Result<SecretString, Error>> {
    let query = match tokio::time::timeout(REDIRECT_READ_DEADLINE, read_target(&mut stream)).await {
        Ok(Some(query)) => query,
        _ => {
            answer_within_deadline(&mut stream, "400 Bad Request", "Not a sign-in redirect.").await;
            return None;
        }
    };
    if !authorization.state_matches(&query) {
        answer_within_deadline(
            &mut stream,
            "400 Bad Request",
            "Not the redirect of this sign-in.",
        )
        .await;
        return None;
    }
    let result = authorization.code_from_query(&query);
    let text = if result.is_ok() {
        "Signed in. You can close this tab and go back to the terminal."
    } else {
        "The sign-in was not completed. See the terminal."
    };
    answer_within_deadline(&mut stream, "200 OK", text).await;
    Some(result)
}

/// Answers a loopback connection, giving up after the read deadline (a peer
/// that does not take the answer is dropped).
async fn answer_within_deadline(stream: &mut tokio::net::TcpStream, status: &str, text: &str) {
    let body = format!("<!doctype html><html><body><p>{text}</p></body></html>");
    let answer = format!(
        "HTTP/1.1 {status}\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    let respond = async {
        stream.write_all(answer.as_bytes()).await?;
        stream.shutdown().await
    };
    let _: Result<std::io::Result<()>, _> =
        tokio::time::timeout(REDIRECT_READ_DEADLINE, respond).await;
}

/// The query string of a `GET /…?query HTTP/1.1` request head (bounded).
async fn read_target(stream: &mut tokio::net::TcpStream) -> Option<String> {
    let mut head = Vec::new();
    let mut buf = [0u8; 2048];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") {
        let n = stream.read(&mut buf).await.ok()?;
        if n == 0 {
            break;
        }
        head.extend_from_slice(&buf[..n]);
        if head.len() > MAX_REDIRECT_REQUEST {
            return None;
        }
    }
    let line = head.split(|b| *b == b'\n').next()?;
    let line = std::str::from_utf8(line).ok()?.trim_end();
    let mut parts = line.split(' ');
    if parts.next()? != "GET" {
        return None;
    }
    let target = parts.next()?;
    Some(
        target
            .split_once('?')
            .map(|(_, q)| q)
            .unwrap_or("")
            .to_owned(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_url_carries_pkce_and_offline_access_but_not_the_verifier() {
        let flow = InstalledAppFlow::builder("cid", "secret").build().unwrap();
        let a = flow.authorization("http://127.0.0.1:5/");
        let url = url::Url::parse(a.url()).unwrap();
        let q: std::collections::HashMap<_, _> = url.query_pairs().into_owned().collect();
        assert_eq!(q["code_challenge_method"], "S256");
        assert_eq!(q["access_type"], "offline");
        assert_eq!(q["scope"], SCOPE);
        assert_eq!(q["state"], a.state.expose_secret());
        let expected = URL_SAFE_NO_PAD.encode(ring::digest::digest(
            &ring::digest::SHA256,
            a.verifier.expose_secret().as_bytes(),
        ));
        assert_eq!(q["code_challenge"], expected);
        assert!(!a.url().contains(a.verifier.expose_secret()));
        assert!(!format!("{a:?}").contains(a.state.expose_secret()));
        assert!(!format!("{flow:?}").contains("secret\""));
    }

    #[test]
    fn a_pasted_redirect_is_checked_like_a_received_one() {
        let flow = InstalledAppFlow::builder("cid", "secret").build().unwrap();
        let a = flow.authorization("http://127.0.0.1:5/");
        let state = a.state.expose_secret().to_owned();
        let good = format!("http://127.0.0.1:5/?state={state}&code=4%2Fx&scope=s");
        assert_eq!(
            a.code_from_redirect_url(&format!("  {good}\n"))
                .unwrap()
                .expose_secret(),
            "4/x"
        );
        for bad in [
            "http://127.0.0.1:5/?state=forged&code=4%2Fx".to_owned(),
            format!("http://127.0.0.1:6/?state={state}&code=x"),
            format!("http://evil.example:5/?state={state}&code=x"),
            format!("https://127.0.0.1:5/?state={state}&code=x"),
            format!("http://127.0.0.1:5/other?state={state}&code=x"),
            "4/x".to_owned(),
            format!(
                "http://127.0.0.1:5/?state={state}&code={}",
                "x".repeat(20_000)
            ),
        ] {
            assert!(a.code_from_redirect_url(&bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn the_builders_debug_shows_no_url_secret() {
        let builder = InstalledAppFlow::builder("id", "SECRET")
            .auth_uri("https://alice:HUNTER2@accounts.example/auth?key=APIKEY")
            .token_uri("https://alice:HUNTER2@oauth2.example/token?key=APIKEY");
        let shown = format!("{builder:?}");
        for secret in ["alice", "HUNTER2", "APIKEY", "SECRET"] {
            assert!(!shown.contains(secret), "{shown}");
        }
    }

    #[test]
    fn a_redirect_with_another_state_is_refused() {
        let flow = InstalledAppFlow::builder("cid", "secret").build().unwrap();
        let a = flow.authorization("http://127.0.0.1:5/");
        assert!(a.code_from_query("code=x&state=forged").is_err());
        let q = format!("code=4%2Fx&state={}", a.state.expose_secret());
        assert_eq!(a.code_from_query(&q).unwrap().expose_secret(), "4/x");
        let q = format!("error=access_denied&state={}", a.state.expose_secret());
        assert!(
            a.code_from_query(&q)
                .unwrap_err()
                .to_string()
                .contains("access_denied")
        );
    }
}

//! [`AuthorizedUser`]: a Google user's OAuth client id, client secret and
//! refresh token, exchanged for access tokens with the refresh-token grant —
//! how Google's SA360 guides sign in, and what
//! `gcloud auth application-default login` and `apictl auth login` store as
//! an `authorized_user` file.

use std::fmt;
use std::path::{Path, PathBuf};

use secrecy::{ExposeSecret as _, SecretString};

use super::cache::TokenCache;
use super::endpoint::{FileUrl, TokenEndpoint};
use super::token::AccessToken;
use crate::http::HttpOptions;
use crate::search_ads::auth::credential_kind::CredentialKind;
use crate::search_ads::error::Error;

/// Google's token endpoint, the default `token_uri`.
pub const GOOGLE_TOKEN_URI: &str = "https://oauth2.googleapis.com/token";

/// Google's revoke endpoint, the default of [`AuthorizedUser::revoke_uri`].
pub const GOOGLE_REVOKE_URI: &str = "https://oauth2.googleapis.com/revoke";

/// The largest credentials file read (real ones are under 1 KiB).
pub(crate) const MAX_CREDENTIALS_FILE: u64 = 64 * 1024;

/// Refresh-token credentials: OAuth client id + client secret + refresh
/// token, exchanged at the token endpoint (`grant_type=refresh_token`) for an
/// access token.
///
/// The token is cached and renewed 30 s before it expires; any number of
/// concurrent calls share one refresh; a token the API refuses with 401 is
/// dropped (only if it is still the cached one) and the call is retried once
/// with a fresh one. A token endpoint that cannot be reached, is slow or
/// answers 408, 429 or 5xx gives [`Error::TokenUnavailable`], retried under
/// the client's [`RetryPolicy`](crate::search_ads::RetryPolicy); a revoked or
/// expired refresh token gives [`Error::InvalidGrant`], whose message says how
/// to get a new one. Answers are bounded like the API's (see
/// [`HttpOptions`]).
///
/// From an `authorized_user` file (what `gcloud auth application-default
/// login` and `apictl auth login` write):
///
/// ```no_run
/// use sa360_video_sdk::search_ads::{AuthorizedUser, SearchAdsClient};
///
/// let credentials = AuthorizedUser::from_file("authorized_user.json")?;
/// let client = SearchAdsClient::new(credentials)?;
/// # Ok::<(), sa360_video_sdk::search_ads::Error>(())
/// ```
///
/// From the three values (the client of type "Desktop app" from the Google
/// Cloud console, and a refresh token from the installed-app flow):
///
/// ```
/// use sa360_video_sdk::search_ads::AuthorizedUser;
///
/// let credentials = AuthorizedUser::builder("123.apps.googleusercontent.com", "GOCSPX-secret", "1//refresh")
///     .build()?;
/// let shown = format!("{credentials:?}");
/// assert!(shown.contains("123.apps.googleusercontent.com"));
/// assert!(!shown.contains("GOCSPX-secret") && !shown.contains("1//refresh"));
/// # Ok::<(), sa360_video_sdk::search_ads::Error>(())
/// ```
pub struct AuthorizedUser {
    client_id: String,
    client_secret: SecretString,
    refresh_token: SecretString,
    endpoint: TokenEndpoint,
    revoke_uri: String,
    options: HttpOptions,
    quota_project_id: Option<String>,
    /// The file the credentials came from, named in token errors.
    file: Option<PathBuf>,
    cache: TokenCache,
}

/// Builds an [`AuthorizedUser`]; checked in [`build`](Self::build).
#[must_use]
pub struct AuthorizedUserBuilder {
    client_id: String,
    client_secret: SecretString,
    refresh_token: SecretString,
    token_uri: String,
    options: HttpOptions,
}

impl AuthorizedUserBuilder {
    /// The token endpoint (default [`GOOGLE_TOKEN_URI`]); `https://`, or
    /// `http://` on a loopback host (tests, the fake).
    pub fn token_uri(mut self, uri: impl Into<String>) -> Self {
        self.token_uri = uri.into();
        self
    }

    /// Timeouts and body limits of the token exchange (default
    /// [`HttpOptions::default`]).
    pub fn http_options(mut self, options: HttpOptions) -> Self {
        self.options = options;
        self
    }

    /// Checks the values: none empty, the endpoint `https://` (or loopback).
    pub fn build(self) -> Result<AuthorizedUser, Error> {
        for (field, empty) in [
            ("client_id", self.client_id.trim().is_empty()),
            (
                "client_secret",
                self.client_secret.expose_secret().is_empty(),
            ),
            (
                "refresh_token",
                self.refresh_token.expose_secret().is_empty(),
            ),
        ] {
            if empty {
                return Err(Error::invalid(
                    field,
                    "is empty: refresh-token credentials need the OAuth client id and secret \
                     and a refresh token",
                ));
            }
        }
        let endpoint = TokenEndpoint::new(
            &self.token_uri,
            self.options.clone(),
            CredentialKind::AuthorizedUser,
        )
        .map_err(|_| {
            Error::invalid(
                "token_uri",
                format!(
                    "{} must be an https:// URL (http:// only on a loopback host)",
                    sa360_video_client_support::RedactedUrl(&self.token_uri)
                ),
            )
        })?;
        Ok(AuthorizedUser {
            quota_project_id: None,
            file: None,
            client_id: self.client_id.trim().to_owned(),
            client_secret: self.client_secret,
            refresh_token: self.refresh_token,
            endpoint,
            revoke_uri: GOOGLE_REVOKE_URI.to_owned(),
            options: self.options,
            cache: TokenCache::default(),
        })
    }
}

impl AuthorizedUser {
    /// A builder from the OAuth client id and secret and a refresh token.
    pub fn builder(
        client_id: impl Into<String>,
        client_secret: impl Into<String>,
        refresh_token: impl Into<String>,
    ) -> AuthorizedUserBuilder {
        AuthorizedUserBuilder {
            client_id: client_id.into(),
            client_secret: SecretString::from(client_secret.into()),
            refresh_token: SecretString::from(refresh_token.into()),
            token_uri: GOOGLE_TOKEN_URI.to_owned(),
            options: HttpOptions::default(),
        }
    }

    /// Reads an `authorized_user` file (a regular file of at most 64 KiB,
    /// read within [`HttpOptions::timeout`]).
    pub fn from_file(path: impl AsRef<Path>) -> Result<Self, Error> {
        let path = path.as_ref();
        let text = read_credentials_file(
            path,
            CredentialKind::AuthorizedUser,
            HttpOptions::default().timeout,
        )?;
        Self::from_json(&text)
            .map(|user| user.named_file(path))
            .map_err(|e| e.prefixed(&format!("{}: ", path.display())))
    }

    /// Reads an `authorized_user` file's JSON: `client_id`, `client_secret`,
    /// `refresh_token` and, optionally, `token_uri` (Google's libraries read
    /// it too; default [`GOOGLE_TOKEN_URI`]) and `quota_project_id` (sent as
    /// `x-goog-user-project` on API calls). `GOOGLE_CLOUD_QUOTA_PROJECT` is
    /// not read here: [`DefaultCredentials`](crate::search_ads::DefaultCredentials)
    /// applies it, or call [`with_quota_project_id`](Self::with_quota_project_id).
    ///
    /// The file's `token_uri` receives the client secret and the refresh
    /// token, so it must be Google's (`oauth2.googleapis.com`, or
    /// `accounts.google.com` in older files); on loopback it is used only once
    /// the application opens loopback ([`TokenSource::allow_loopback`](super::TokenSource::allow_loopback)).
    pub fn from_json(json: &str) -> Result<Self, Error> {
        Self::parse(json, false)
    }

    /// [`from_json`](Self::from_json), accepting any `token_uri` host when
    /// `any_host` (`DefaultCredentialsBuilder::allow_non_google_token_hosts`).
    pub(crate) fn parse(json: &str, any_host: bool) -> Result<Self, Error> {
        let auth = |message: String| Error::auth(CredentialKind::AuthorizedUser, message);
        // No parser message may quote the secret back: only the position.
        let value: serde_json::Value = serde_json::from_str(json).map_err(|e| {
            auth(format!(
                "the credentials file is not JSON (line {}, column {})",
                e.line(),
                e.column()
            ))
        })?;
        match value.get("type").and_then(|v| v.as_str()) {
            Some("authorized_user") | None => {}
            Some(other) => {
                return Err(auth(format!(
                    "the credentials file is of type {other:?}, not \"authorized_user\""
                )));
            }
        }
        let field = |name: &str| {
            value
                .get(name)
                .and_then(|v| v.as_str())
                .filter(|s| !s.is_empty())
                .map(str::to_owned)
                .ok_or_else(|| {
                    auth(format!(
                        "the authorized_user file has no `{name}` (it needs client_id, \
                         client_secret and refresh_token)"
                    ))
                })
        };
        let mut user = Self::builder(
            field("client_id")?,
            field("client_secret")?,
            field("refresh_token")?,
        )
        .build()
        .and_then(|user| {
            user.with_quota_project_id(value.get("quota_project_id").and_then(|v| v.as_str()))
        })
        .map_err(|e| auth(e.to_string()))?;
        if let Some(uri) = value.get("token_uri").and_then(|v| v.as_str()) {
            user.endpoint = TokenEndpoint::named_in_file(
                uri,
                FileUrl::TokenUri,
                any_host,
                user.options.clone(),
                CredentialKind::AuthorizedUser,
            )?;
        }
        Ok(user)
    }

    /// The same credentials with other timeouts and body limits for the
    /// token exchange (the cached token is kept).
    pub fn http_options(mut self, options: HttpOptions) -> Self {
        self.endpoint = self.endpoint.with_options(options.clone());
        self.options = options;
        self
    }

    /// The same credentials, naming `path` as their file in the errors of
    /// the token exchange (with the `token_uri`), so a refused refresh says
    /// which file to fix. [`from_file`](Self::from_file) and
    /// [`DefaultCredentials`](crate::search_ads::DefaultCredentials) set it.
    pub fn named_file(mut self, path: impl Into<PathBuf>) -> Self {
        self.file = Some(path.into());
        self
    }

    /// The file the credentials came from, if known.
    pub fn file(&self) -> Option<&Path> {
        self.file.as_deref()
    }

    /// The same credentials with another revoke endpoint (default
    /// [`GOOGLE_REVOKE_URI`]).
    pub fn revoke_uri(mut self, uri: impl Into<String>) -> Self {
        self.revoke_uri = uri.into();
        self
    }

    /// The credentials as an `authorized_user` file's JSON (`type`,
    /// `client_id`, `client_secret`, `refresh_token`, `token_uri`, and `quota_project_id` when set), the format
    /// gcloud writes and [`from_json`](Self::from_json) reads. It holds
    /// secrets: write it to a file only its owner can read.
    pub fn to_json(&self) -> SecretString {
        let mut json = serde_json::json!({
            "type": "authorized_user",
            "client_id": self.client_id,
            "client_secret": self.client_secret.expose_secret(),
            "refresh_token": self.refresh_token.expose_secret(),
            "token_uri": self.endpoint.url(),
        });
        if let Some(id) = &self.quota_project_id {
            json["quota_project_id"] = serde_json::Value::from(id.as_str());
        }
        SecretString::from(json.to_string())
    }

    /// The OAuth client id (not a secret).
    pub fn client_id(&self) -> &str {
        &self.client_id
    }

    /// The token endpoint.
    pub fn token_uri(&self) -> &str {
        self.endpoint.url()
    }

    /// Revokes the refresh token at the revoke endpoint (and with it the
    /// access tokens it gave). The credentials are useless afterwards.
    pub async fn revoke(&self) -> Result<(), Error> {
        let endpoint = TokenEndpoint::new(
            &self.revoke_uri,
            self.options.clone(),
            CredentialKind::AuthorizedUser,
        )?;
        let answer = endpoint
            .post_form(&[("token", self.refresh_token.expose_secret())])
            .await?;
        endpoint.check(&answer, "the revocation of the refresh token")
    }

    async fn fetch(&self) -> Result<AccessToken, Error> {
        let answer = self
            .endpoint
            .post_form(&[
                ("grant_type", "refresh_token"),
                ("client_id", &self.client_id),
                ("client_secret", self.client_secret.expose_secret()),
                ("refresh_token", self.refresh_token.expose_secret()),
            ])
            .await?;
        let token = self
            .endpoint
            .token(&answer, "the refresh token")
            .map_err(|e| self.naming_the_file(e))?;
        tracing::debug!(client_id = %self.client_id, "obtained an access token with the refresh token");
        Ok(token)
    }

    /// `e` with the credentials file named first, when known: a 401
    /// `invalid_client` or an `invalid_grant` is fixed in that file (the
    /// message already names the `token_uri`).
    fn naming_the_file(&self, e: Error) -> Error {
        match &self.file {
            Some(file) => e.prefixed(&format!("credentials file {}: ", file.display())),
            None => e,
        }
    }
}

/// Reads a credentials file (or an `external_account`'s subject token file)
/// with the bounds of an answer: a regular file only (a FIFO, a device or a
/// directory is refused before a byte is read: it may never end), at most
/// [`MAX_CREDENTIALS_FILE`] bytes, within `deadline` (a stalled file system).
/// The error names the file.
pub(crate) fn read_credentials_file(
    path: &Path,
    credential: CredentialKind,
    deadline: std::time::Duration,
) -> Result<String, Error> {
    let error = |what: String| {
        Error::auth(
            credential,
            format!(
                "cannot read the credentials file {}: {what}",
                path.display()
            ),
        )
    };
    let owned = path.to_owned();
    within(deadline, move || read_regular_file(&owned)).map_err(error)
}

/// `read`'s result, or an error once `deadline` has passed. It runs on a
/// thread of its own, so a read that never returns costs the caller only the
/// deadline (the thread ends with the process).
fn within(
    deadline: std::time::Duration,
    read: impl FnOnce() -> Result<String, String> + Send + 'static,
) -> Result<String, String> {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::Builder::new()
        .name("credentials-file".into())
        .spawn(move || {
            let _ = tx.send(read());
        })
        .map_err(|e| e.to_string())?;
    rx.recv_timeout(deadline).unwrap_or_else(|_| {
        Err(format!(
            "it was not read within {} s (HttpOptions::timeout)",
            deadline.as_secs_f64()
        ))
    })
}

/// The text of `path` if it is a regular file of at most
/// [`MAX_CREDENTIALS_FILE`] bytes. Opened without blocking (opening a FIFO
/// without a writer blocks), then checked on the open file.
fn read_regular_file(path: &Path) -> Result<String, String> {
    use std::io::Read as _;
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::custom_flags(&mut options, libc::O_NONBLOCK);
    let file = options.open(path).map_err(|e| e.to_string())?;
    let kind = file.metadata().map_err(|e| e.to_string())?.file_type();
    if !kind.is_file() {
        #[cfg(unix)]
        let what = {
            use std::os::unix::fs::FileTypeExt as _;
            if kind.is_fifo() {
                "a FIFO (named pipe)"
            } else if kind.is_char_device() || kind.is_block_device() {
                "a device"
            } else if kind.is_socket() {
                "a socket"
            } else {
                "a directory"
            }
        };
        #[cfg(not(unix))]
        let what = "a directory";
        return Err(format!(
            "it is {what}, not a regular file (which may never end)"
        ));
    }
    let mut text = String::new();
    file.take(MAX_CREDENTIALS_FILE + 1)
        .read_to_string(&mut text)
        .map_err(|e| e.to_string())?;
    if text.len() as u64 > MAX_CREDENTIALS_FILE {
        return Err(format!(
            "it is larger than {MAX_CREDENTIALS_FILE} bytes, which no credentials file is"
        ));
    }
    Ok(text)
}

impl fmt::Debug for AuthorizedUser {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AuthorizedUser")
            .field("client_id", &self.client_id)
            .field("client_secret", &"[REDACTED]")
            .field("refresh_token", &"[REDACTED]")
            .field("token_uri", &self.endpoint.shown())
            .field("quota_project_id", &self.quota_project_id)
            .field("file", &self.file)
            .finish_non_exhaustive()
    }
}

impl fmt::Debug for AuthorizedUserBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AuthorizedUserBuilder")
            .field("client_id", &self.client_id)
            .field("client_secret", &"[REDACTED]")
            .field("refresh_token", &"[REDACTED]")
            .field(
                "token_uri",
                &sa360_video_client_support::RedactedUrl(&self.token_uri),
            )
            .finish_non_exhaustive()
    }
}

super::cache::cached_source!(AuthorizedUser, CredentialKind::AuthorizedUser, |s| s
    .endpoint
    .allow_loopback());

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_quota_project_that_cannot_be_sent_is_refused_from_a_file_and_a_setter() {
        let json = r#"{"type":"authorized_user","client_id":"c","client_secret":"s","refresh_token":"r","quota_project_id":"my project"}"#;
        let e = AuthorizedUser::from_json(json).unwrap_err();
        assert!(e.to_string().contains("quota_project_id"), "{e}");
        let user = AuthorizedUser::builder("c", "s", "r").build().unwrap();
        let e = user.with_quota_project_id(Some("a\nb")).unwrap_err();
        assert!(
            matches!(&e, Error::Validation { field, .. } if field == "quota_project_id"),
            "{e}"
        );
    }

    #[test]
    fn files_are_checked_without_echoing_secrets() {
        let e = AuthorizedUser::from_json(r#"{"type":"authorized_user","client_id":"c","client_secret":"SECRET1","refresh_token":"#)
            .unwrap_err();
        assert!(e.to_string().contains("not JSON"), "{e}");
        assert!(!e.to_string().contains("SECRET1"), "{e}");
        let e = AuthorizedUser::from_json(r#"{"type":"service_account"}"#).unwrap_err();
        assert!(e.to_string().contains("service_account"), "{e}");
        let e = AuthorizedUser::from_json(
            r#"{"type":"authorized_user","client_id":"c","client_secret":"SECRET1"}"#,
        )
        .unwrap_err();
        assert!(e.to_string().contains("refresh_token"), "{e}");
        assert!(!e.to_string().contains("SECRET1"), "{e}");
        let e = AuthorizedUser::from_json(
            r#"{"type":"authorized_user","client_id":"c","client_secret":"s","refresh_token":"r","token_uri":"http://example.com/token"}"#,
        )
        .unwrap_err();
        assert!(e.to_string().contains("token_uri"), "{e}");
        let ok = AuthorizedUser::from_json(
            r#"{"type":"authorized_user","client_id":"c","client_secret":"SECRET1","refresh_token":"SECRET2","quota_project_id":"p"}"#,
        )
        .unwrap();
        assert_eq!(ok.token_uri(), GOOGLE_TOKEN_URI);
        let shown = format!("{ok:?}");
        assert!(
            !shown.contains("SECRET1") && !shown.contains("SECRET2"),
            "{shown}"
        );
    }

    /// Issue 48: a FIFO as a credentials file hung the read for ever (a
    /// blocking open and read without a deadline); a device or a directory is
    /// no file either.
    #[cfg(unix)]
    #[test]
    fn only_regular_files_are_read_and_within_the_deadline() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("token-fifo");
        let c_path = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: a valid NUL-terminated path; mkfifo only creates the node.
        assert_eq!(unsafe { libc::mkfifo(c_path.as_ptr(), 0o600) }, 0);
        let deadline = std::time::Duration::from_secs(30);
        let started = std::time::Instant::now();
        for (path, what) in [
            (fifo.as_path(), "a FIFO"),
            (std::path::Path::new("/dev/zero"), "a device"),
            (dir.path(), "a directory"),
        ] {
            let e = read_credentials_file(path, CredentialKind::ExternalAccount, deadline)
                .unwrap_err()
                .to_string();
            assert!(
                e.contains(what) && e.contains(&path.display().to_string()),
                "{e}"
            );
        }
        assert!(started.elapsed() < deadline, "{:?}", started.elapsed());
        let big = dir.path().join("big.json");
        std::fs::write(&big, vec![b' '; MAX_CREDENTIALS_FILE as usize + 1]).unwrap();
        let e = read_credentials_file(&big, CredentialKind::Other, deadline).unwrap_err();
        assert!(e.to_string().contains("larger than"), "{e}");
        // A read that does not end (a stalled file system) costs the deadline.
        let e = within(std::time::Duration::from_millis(100), || {
            std::thread::sleep(std::time::Duration::from_secs(3));
            Ok(String::new())
        })
        .unwrap_err();
        assert!(e.contains("not read within 0.1 s"), "{e}");
    }

    #[test]
    fn the_builder_names_the_empty_field() {
        let e = AuthorizedUser::builder("c", "", "r").build().unwrap_err();
        assert!(
            matches!(&e, Error::Validation { field, .. } if field == "client_secret"),
            "{e:?}"
        );
    }
}

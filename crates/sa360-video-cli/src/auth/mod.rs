//! `apictl auth`: sign in to Search Ads 360 as Google documents, see which credentials are
//! used, and revoke them.
//!
//! - `login`: the installed-app flow (authorization code with PKCE S256, a loopback redirect on
//!   `127.0.0.1` and a free port, a checked `state`, `access_type=offline`, the scope
//!   `https://www.googleapis.com/auth/doubleclicksearch`). It opens the system browser (`$BROWSER`
//!   when set, else the platform's opener, never through a shell) or, with `--no-browser`, prints
//!   the URL and waits (up to `--wait` seconds) for the redirect to reach this machine or for the
//!   address the browser ended on to be pasted on stdin (a browser on another machine). The client id and secret
//!   come from the console's client-secrets JSON (`--client-secrets FILE`, a "Desktop app" client)
//!   or `--client-id` / `--client-secret` (`SEARCH_ADS_CLIENT_ID` / `SEARCH_ADS_CLIENT_SECRET`).
//!   The result is an `authorized_user` file, mode 0600, in the state directory, which every
//!   `apictl ads` command then uses (see [`credentials`] for the order).
//! - `status`: which credential is used, where it came from, its kind and the current token's
//!   expiry (it asks for a token); never a secret.
//! - `revoke`: revokes the refresh token at the revoke endpoint and deletes the file.

pub mod credentials;

use std::path::Path;
use std::time::{Duration, SystemTime};

use sa360_video_client_support::sh_quote;
use sa360_video_sdk::http::HttpOptions;
use sa360_video_sdk::search_ads::auth::installed::{InstalledAppFlow, LoopbackRedirect};
use sa360_video_sdk::search_ads::{
    self,
    auth::{CREDENTIALS_ENV, GOOGLE_TOKEN_URI},
};
use secrecy::ExposeSecret as _;
use serde::Deserialize;

use crate::cli::{AuthLoginArgs, AuthRevokeArgs, AuthStatusArgs};
use crate::context::{Ctx, print_json};
use crate::error::{AppError, AppResult};
use credentials::{PRECEDENCE, choose, login_file, read_login_file, revoke_uri};

/// The client-secrets JSON of a "Desktop app" OAuth client, as the Cloud console downloads it.
#[derive(Deserialize)]
struct ClientSecrets {
    installed: Option<Installed>,
    web: Option<serde_json::Value>,
}

#[derive(Deserialize)]
struct Installed {
    client_id: String,
    client_secret: String,
    auth_uri: Option<String>,
    token_uri: Option<String>,
}

/// The OAuth client: id, secret and the endpoints it names.
struct Client {
    id: String,
    secret: String,
    auth_uri: Option<String>,
    token_uri: Option<String>,
}

fn client(args: &AuthLoginArgs) -> AppResult<Client> {
    if let Some(path) = &args.client_secrets {
        let bytes = std::fs::read(path).map_err(|e| {
            AppError::new(format!("cannot read {}: {e}", path.display()))
                .hint("pass the client-secrets JSON downloaded from the Google Cloud console (APIs & Services > Credentials)")
        })?;
        let parsed: ClientSecrets = serde_json::from_slice(&bytes).map_err(|e| {
            AppError::refused(format!(
                "{} is not a client-secrets file (line {}, column {})",
                path.display(),
                e.line(),
                e.column()
            ))
            .hint("download the JSON of an OAuth client of type \"Desktop app\" from the Google Cloud console")
        })?;
        return match (parsed.installed, parsed.web) {
            (Some(i), _) => Ok(Client {
                id: i.client_id,
                secret: i.client_secret,
                auth_uri: i.auth_uri,
                token_uri: i.token_uri,
            }),
            (None, Some(_)) => Err(AppError::refused(format!(
                "{} is the client of a web application, which cannot redirect to this machine",
                path.display()
            ))
            .hint("create an OAuth client of type \"Desktop app\" in the Google Cloud console and pass its JSON")),
            (None, None) => Err(AppError::refused(format!(
                "{} has no \"installed\" client",
                path.display()
            ))
            .hint("download the JSON of an OAuth client of type \"Desktop app\" from the Google Cloud console")),
        };
    }
    match (&args.client_id, &args.client_secret) {
        (Some(id), Some(secret)) => Ok(Client {
            id: id.clone(),
            secret: secret.clone(),
            auth_uri: None,
            token_uri: None,
        }),
        _ => Err(AppError::refused("no OAuth client to sign in with").hint(
            "pass --client-secrets FILE (the \"Desktop app\" client's JSON from the Google Cloud console), or --client-id and --client-secret (SEARCH_ADS_CLIENT_ID, SEARCH_ADS_CLIENT_SECRET)",
        )),
    }
}

/// The platforms `browser_command` knows.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Platform {
    MacOs,
    Windows,
    Other,
}

impl Platform {
    fn current() -> Self {
        if cfg!(target_os = "macos") {
            Platform::MacOs
        } else if cfg!(windows) {
            Platform::Windows
        } else {
            Platform::Other
        }
    }
}

/// The program and arguments that open `url`, never through a shell: the URL is one argument
/// of its own, so `&`, `|` or quotes in it (an `auth_uri` from a client-secrets file or
/// `SEARCH_ADS_AUTH_URL`) cannot split a command line. `$BROWSER` when set, else `open` (macOS),
/// `rundll32 url.dll,FileProtocolHandler URL` (Windows: the shell's URL handler, without
/// `cmd /C start`, whose parsing splits at `&`), `xdg-open` (elsewhere).
fn browser_command(url: &str, browser: Option<&str>, platform: Platform) -> (String, Vec<String>) {
    match browser.filter(|b| !b.trim().is_empty()) {
        Some(b) => (b.to_owned(), vec![url.to_owned()]),
        None => match platform {
            Platform::MacOs => ("open".into(), vec![url.to_owned()]),
            Platform::Windows => (
                "rundll32.exe".into(),
                vec!["url.dll,FileProtocolHandler".into(), url.to_owned()],
            ),
            Platform::Other => ("xdg-open".into(), vec![url.to_owned()]),
        },
    }
}

/// Opens `url` in the system browser (see `browser_command`). Returns false when none could be
/// started.
fn open_browser(url: &str) -> bool {
    let browser = std::env::var("BROWSER").ok();
    let (program, args) = browser_command(url, browser.as_deref(), Platform::current());
    std::process::Command::new(program)
        .args(args)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .is_ok()
}

/// The longest line read from stdin for a pasted address (the listener's request limit).
const MAX_PASTED: u64 = 16 * 1024;

/// The code of whichever comes first: the redirect reaching the loopback listener, or the address
/// the browser ended on pasted on stdin (checked like a redirect: same redirect URI, same `state`).
/// Stdin is read on a thread of its own (a blocking read cannot be cancelled; the thread ends with
/// the process); an empty or closed stdin leaves the listener alone.
async fn redirect_or_paste(
    redirect: &LoopbackRedirect,
    authorization: &sa360_video_sdk::search_ads::auth::installed::Authorization,
    wait: Duration,
) -> Result<secrecy::SecretString, search_ads::Error> {
    use std::io::{BufRead as _, Read as _};
    let (tx, rx) = tokio::sync::oneshot::channel::<String>();
    let reader = std::thread::Builder::new()
        .name("pasted-redirect".into())
        .spawn(move || {
            let mut stdin = std::io::stdin().lock();
            loop {
                let mut line = String::new();
                match (&mut stdin).take(MAX_PASTED + 1).read_line(&mut line) {
                    Ok(0) | Err(_) => return,
                    Ok(_) if line.trim().is_empty() => {}
                    Ok(_) => {
                        let _ = tx.send(line);
                        return;
                    }
                }
            }
        });
    let listen = redirect.wait(authorization, wait);
    tokio::pin!(listen);
    if reader.is_err() {
        return listen.await;
    }
    tokio::select! {
        code = &mut listen => code,
        Ok(line) = rx => authorization.code_from_redirect_url(&line),
    }
}

fn login_error(e: search_ads::Error, wait: u64) -> AppError {
    let text = e.to_string();
    if text.contains("no sign-in redirect arrived") {
        // The SDK's text goes on about the credentials; nothing was refused here.
        return AppError::new(format!(
            "the sign-in did not finish: no redirect arrived within {wait} s"
        ))
        .hint(format!(
            "open the URL above in a browser on this machine (the redirect goes to 127.0.0.1) and finish the sign-in within --wait {wait} seconds"
        ));
    }
    let hint = if matches!(e, search_ads::Error::Validation { .. }) {
        "check --client-secrets, or --client-id and --client-secret".to_owned()
    } else {
        "check the OAuth client (a \"Desktop app\" client of the project that has the Search Ads 360 API enabled) and run `apictl auth login` again".to_owned()
    };
    AppError::new(text).hint(hint)
}

/// `apictl auth login`.
pub async fn run_login(ctx: &Ctx, args: &AuthLoginArgs) -> AppResult<u8> {
    let client = client(args)?;
    let token_uri = args
        .token_url
        .clone()
        .or(client.token_uri)
        .unwrap_or_else(|| GOOGLE_TOKEN_URI.to_owned());
    let mut builder = InstalledAppFlow::builder(&client.id, &client.secret)
        .token_uri(&token_uri)
        .revoke_uri(revoke_uri(args.revoke_url.as_deref(), &token_uri));
    if let Some(auth_uri) = args.auth_url.clone().or(client.auth_uri) {
        builder = builder.auth_uri(auth_uri);
    }
    let flow = builder.build().map_err(|e| login_error(e, args.wait))?;
    let path = login_file(ctx.state()?.path());
    let redirect = LoopbackRedirect::bind()
        .await
        .map_err(|e| login_error(e, args.wait))?;
    let authorization = flow.authorization(redirect.redirect_uri());
    let wait = Duration::from_secs(args.wait);
    let code = if args.no_browser {
        crate::output::tell!("Open this URL in a browser, on this machine or any other, and sign in:");
        crate::output::tell!("    {}", authorization.url());
        crate::output::tell!(
            "On another machine the browser ends on an address starting with {} that does not load: \
             copy that whole address from its address bar, paste it here and press Enter.",
            redirect.redirect_uri()
        );
        crate::output::tell!(
            "Waiting up to {} s for the sign-in (Ctrl-C cancels)...",
            args.wait
        );
        redirect_or_paste(&redirect, &authorization, wait).await
    } else {
        if open_browser(authorization.url()) {
            crate::output::tell!("Your browser should open; if it does not, open this URL on this machine:");
        } else {
            crate::output::tell!("Open this URL in a browser on this machine and sign in:");
        }
        crate::output::tell!("    {}", authorization.url());
        crate::output::tell!(
            "Waiting up to {} s for the sign-in (Ctrl-C cancels; no browser here? use --no-browser)...",
            args.wait
        );
        redirect.wait(&authorization, wait).await
    }
    .map_err(|e| login_error(e, args.wait))?;
    let user = flow
        .exchange(&authorization, code)
        .await
        .map_err(|e| login_error(e, args.wait))?;
    crate::state::write_private(&path, user.to_json().expose_secret().as_bytes())?;
    if ctx.json {
        print_json(&serde_json::json!({
            "file": path.display().to_string(),
            "kind": "authorized_user",
            "client_id": user.client_id(),
            "application_default_credentials": format!("{CREDENTIALS_ENV}={}", path.display()),
        }))?;
    } else {
        crate::output::sayln!(
            "signed in: credentials saved to {} (mode 0600); `apictl ads` commands use them (see `apictl auth status`)",
            path.display()
        )?;
        crate::output::sayln!(
            "for programs that use Application Default Credentials (sa360-video-sdk's DefaultCredentials, Google's libraries):"
        )?;
        crate::output::sayln!(
            "    export {CREDENTIALS_ENV}={}",
            sh_quote(&path.display().to_string())
        )?;
    }
    Ok(0)
}

fn http_options(args: &AuthStatusArgs) -> AppResult<HttpOptions> {
    crate::limits::common_http_options(
        args.conn.timeout,
        args.conn.stall_timeout,
        args.conn.max_body,
    )
}

/// `2026-11-26T11:04:05Z (in 59 min)`.
fn describe_expiry(at: SystemTime) -> String {
    let when = chrono::DateTime::<chrono::Utc>::from(at).format("%Y-%m-%dT%H:%M:%SZ");
    match at.duration_since(SystemTime::now()) {
        Ok(left) => format!("{when} (in {} min)", left.as_secs() / 60),
        Err(_) => format!("{when} (expired)"),
    }
}

/// `apictl auth status`.
pub async fn run_status(ctx: &Ctx, args: &AuthStatusArgs) -> AppResult<u8> {
    let path = login_file(ctx.state()?.path());
    let chosen = choose(
        &args.conn,
        &ctx.config.search_ads,
        Some(&path),
        http_options(args)?,
    )?;
    let token = chosen.source.token().await;
    let expiry = match &token {
        Ok(t) => t.expires_at().map(describe_expiry),
        Err(_) => None,
    };
    if ctx.json {
        print_json(&serde_json::json!({
            "kind": chosen.kind.name(),
            "from": chosen.from,
            "token_ok": token.is_ok(),
            "expires_at": token.as_ref().ok().and_then(|t| t.expires_at()).map(|at| {
                chrono::DateTime::<chrono::Utc>::from(at).to_rfc3339()
            }),
            "quota_project": chosen.source.quota_project_id(),
            "precedence": PRECEDENCE,
        }))?;
    } else {
        crate::output::outln!("credential: {}", chosen.kind.name())?;
        crate::output::outln!("from:       {}", chosen.from)?;
        match chosen.source.quota_project_id() {
            Some(project) => {
                crate::output::outln!("quota:      {project} (sent as x-goog-user-project)")?
            }
            None => crate::output::outln!(
                "quota:      none (set quota_project_id in the credentials file or GOOGLE_CLOUD_QUOTA_PROJECT)"
            )?,
        }
        match (&token, expiry) {
            (Ok(_), Some(expiry)) => crate::output::outln!("token:      valid until {expiry}")?,
            (Ok(_), None) => crate::output::outln!(
                "token:      expiry unknown (a fixed token; Google's expire within the hour)"
            )?,
            (Err(_), _) => crate::output::outln!("token:      none (see the error below)")?,
        }
        crate::output::outln!("order:      {PRECEDENCE}")?;
        if chosen.from.ends_with("(`apictl auth login`)") {
            crate::output::outln!(
                "programs:   export {CREDENTIALS_ENV}={} lets Application Default Credentials use the same file",
                sh_quote(&path.display().to_string())
            )?;
        }
    }
    token?;
    Ok(0)
}

/// `apictl auth revoke`.
pub async fn run_revoke(ctx: &Ctx, args: &AuthRevokeArgs) -> AppResult<u8> {
    let path = login_file(ctx.state()?.path());
    let Some(user) = read_login_file(&path)? else {
        return Err(AppError::new(format!(
            "not signed in with `apictl auth login`: there is no {}",
            path.display()
        ))
        .hint("nothing to revoke; `apictl auth status` shows the credentials in use"));
    };
    let uri = revoke_uri(args.revoke_url.as_deref(), user.token_uri());
    let user = user.revoke_uri(&uri);
    let already = match user.revoke().await {
        Ok(()) => false,
        Err(e) if e.to_string().contains("invalid_token") => true,
        Err(e) => {
            return Err(AppError::new(e.to_string()).hint(format!(
                "the refresh token may still be valid and {} was kept: run `apictl auth revoke` again, or remove access at https://myaccount.google.com/permissions",
                path.display()
            )));
        }
    };
    remove(&path)?;
    let what = if already {
        "the refresh token was already revoked or expired"
    } else {
        "revoked the refresh token"
    };
    if ctx.json {
        print_json(
            &serde_json::json!({"revoked": !already, "deleted": path.display().to_string()}),
        )?;
    } else {
        crate::output::sayln!(
            "{what} at {} and deleted {}",
            sa360_video_client_support::RedactedUrl(&uri),
            path.display()
        )?;
    }
    Ok(0)
}

fn remove(path: &Path) -> AppResult<()> {
    match std::fs::remove_file(path) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(
            AppError::new(format!("cannot delete {}: {e}", path.display()))
                .hint("delete the file yourself: it holds the (now revoked) refresh token"),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_browser_is_opened_without_a_shell_on_every_platform() {
        let url = "https://accounts.example/o/oauth2/v2/auth?a=1&b=2|x\"y\"";
        for platform in [Platform::MacOs, Platform::Windows, Platform::Other] {
            let (program, args) = browser_command(url, None, platform);
            assert!(
                !["cmd", "cmd.exe", "sh", "bash", "powershell"].contains(&program.as_str()),
                "{platform:?}: {program}"
            );
            assert_eq!(args.last().map(String::as_str), Some(url), "{platform:?}");
            assert!(!args.iter().any(|a| a == "/C" || a == "start"), "{args:?}");
        }
        let (program, args) = browser_command(url, Some("firefox"), Platform::Windows);
        assert_eq!((program.as_str(), args), ("firefox", vec![url.to_owned()]));
    }
}

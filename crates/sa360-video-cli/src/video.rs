//! `apictl video login` and `apictl video invite`.

use std::io::IsTerminal as _;
use std::path::PathBuf;
use std::sync::Arc;

use sa360_video_sdk::http::{BaseUrl, HttpOptions};
use sa360_video_sdk::video_session::{
    CallExperience, Camera, CountryCode, Credentials, EmailAddress, Error as VideoError, FileStore,
    Invitation, InvitationReceipt, JoinAs, LockoutGuard, LockoutStore, Message, Microphone,
    MobileNumber, PlatformSupport, RedisStore, Session, SessionId, SystemClock, VideoSessionClient,
};
use secrecy::SecretString;
use serde_json::json;

use crate::cli::{
    CameraArg, LockoutStoreArgs, MicArg, PlatformArg, VideoInviteArgs, VideoLockoutInitArgs,
    VideoLockoutStatusArgs, VideoLoginArgs,
};
use crate::config::pick;
use crate::context::{Ctx, print_json};
use crate::error::{AppError, AppResult};
use crate::state::StateDir;

/// The environment variable the password is read from.
pub const PASSWORD_ENV: &str = "VIDEO_PASSWORD";

fn base_url(text: &str) -> AppResult<BaseUrl> {
    BaseUrl::parse(text).map_err(|e| {
        AppError::from(e).hint(
            "give the video session URL with --url, VIDEO_SESSION_URL or [video] url in the config file: https://, or http:// on 127.0.0.1",
        )
    })
}

impl LockoutStoreArgs {
    /// These flags (or their variables), each else its key in `[video]` of the config file.
    pub fn or_file(&self, file: &crate::config::VideoSection) -> Self {
        Self {
            lockout_store: pick(&self.lockout_store, &file.lockout_store),
            lockout_ca_file: pick(&self.lockout_ca_file, &file.lockout_ca_file),
            lockout_store_password_file: pick(
                &self.lockout_store_password_file,
                &file.lockout_store_password_file,
            ),
        }
    }
}

/// The lockout store: Redis when `--lockout-store` (`APICTL_LOCKOUT_STORE`, or
/// `lockout_store` in `[video]` of the config file, through [`LockoutStoreArgs::or_file`]) is
/// given, in any form `RedisStore` accepts (standalone, TLS, Sentinel,
/// Cluster), else the SDK's default, the per-user file
/// ([`FileStore::per_user`]) every application of the user on this host
/// shares, so apictl and those applications keep one count per account. Says
/// on stderr which Redis deployment it uses.
pub async fn lockout_store(args: &LockoutStoreArgs) -> AppResult<Arc<dyn LockoutStore>> {
    let Some(url) = args
        .lockout_store
        .as_deref()
        .filter(|u| !u.trim().is_empty())
    else {
        if args.lockout_ca_file.is_some() {
            return Err(AppError::refused("--lockout-ca-file is set without --lockout-store")
                .hint("give the rediss:// URL with --lockout-store (APICTL_LOCKOUT_STORE), or leave --lockout-ca-file out"));
        }
        let store = FileStore::per_user().map_err(|e| {
            AppError::refused(e.to_string()).hint(
                "nothing was sent; the default lockout file is in the per-user state directory ($XDG_STATE_HOME, else ~/.local/state): make it a directory you can write, or pass --lockout-store redis://HOST:PORT/DB (APICTL_LOCKOUT_STORE)",
            )
        })?;
        return Ok(Arc::new(store));
    };
    Ok(Arc::new(connect_redis(args, url).await?))
}

/// Connects the Redis store `--lockout-store` names and says which deployment it is.
async fn connect_redis(args: &LockoutStoreArgs, url: &str) -> AppResult<RedisStore> {
    let mut builder = RedisStore::builder(url);
    if let Some(ca) = &args.lockout_ca_file {
        builder = builder.ca_file(ca);
    }
    if let Some(password) = redis_password(args)? {
        builder = builder.password(password);
    }
    let store = builder.connect().await.map_err(|e| {
        AppError::refused(e.to_string()).hint(
            "nothing was sent; --lockout-store (APICTL_LOCKOUT_STORE) takes redis://, rediss://, redis-sentinel://HOST:PORT,…#MASTER or redis-cluster://HOST:PORT,… (and their rediss- forms, with --lockout-ca-file for a private CA); check that the servers are up and reachable",
        )
    })?;
    tracing::info!(store = %store.location(), topology = store.topology(), "lockout store");
    crate::output::note!("lockout store: {} ({})", store.location(), store.topology());
    Ok(store)
}

/// The environment variable that may hold the Redis password.
pub const STORE_PASSWORD_ENV: &str = "APICTL_LOCKOUT_STORE_PASSWORD";

/// The Redis password given outside the URL: the first line of
/// `--lockout-store-password-file` (a regular file of at most 4 KiB), else
/// `APICTL_LOCKOUT_STORE_PASSWORD`.
fn redis_password(args: &LockoutStoreArgs) -> AppResult<Option<String>> {
    use std::io::Read as _;
    let Some(path) = &args.lockout_store_password_file else {
        return Ok(std::env::var(STORE_PASSWORD_ENV)
            .ok()
            .filter(|p| !p.is_empty()));
    };
    let refused = |why: String| {
        AppError::refused(format!(
            "--lockout-store-password-file {}: {why}",
            path.display()
        ))
        .hint("nothing was sent; give a regular file holding the Redis password on its first line")
    };
    let file = std::fs::File::open(path).map_err(|e| refused(e.to_string()))?;
    let meta = file.metadata().map_err(|e| refused(e.to_string()))?;
    if !meta.is_file() || meta.len() > 4096 {
        return Err(refused("not a regular file of at most 4 KiB".to_owned()));
    }
    let mut text = String::new();
    file.take(4096)
        .read_to_string(&mut text)
        .map_err(|_| refused("not UTF-8 text".to_owned()))?;
    match text.lines().next().filter(|l| !l.is_empty()) {
        Some(line) => Ok(Some(line.to_owned())),
        None => Err(refused("its first line is empty".to_owned())),
    }
}

/// The error of a refused login, with the exact `lockout-init` command when
/// the store may be one that was never declared new (and only then).
fn with_init_hint(e: VideoError, location: &str) -> AppError {
    use sa360_video_sdk::video_session::{RefusalReason, StoreLoss};
    let never_set_up = matches!(
        e,
        VideoError::LockoutRefused {
            reason: RefusalReason::StoreForgot {
                cause: StoreLoss::NoRecord | StoreLoss::ServerStarted
            },
            ..
        }
    );
    let error = AppError::from(e);
    if never_set_up {
        error.hint(init_command(location))
    } else {
        error
    }
}

/// What to run when a store may never have been declared new.
fn init_command(location: &str) -> String {
    let password = if location.contains(":***@") {
        format!(" (the password in {STORE_PASSWORD_ENV} or --lockout-store-password-file)")
    } else {
        String::new()
    };
    format!(
        "nothing was sent. If this Redis deployment never held lockout counts, declare it new once: apictl video lockout-init --lockout-store '{location}'{password}; if it did, do not: logins resume by themselves at the time above"
    )
}

/// `apictl video lockout-init`: declares a Redis lockout store new.
pub async fn run_lockout_init(ctx: &Ctx, args: &VideoLockoutInitArgs) -> AppResult<u8> {
    let store_args = args.store.or_file(&ctx.config.video);
    let Some(url) = store_args
        .lockout_store
        .as_deref()
        .filter(|u| !u.trim().is_empty())
    else {
        return Err(AppError::refused("lockout-init needs the Redis store")
            .hint("give it with --lockout-store (APICTL_LOCKOUT_STORE) or lockout_store in [video] of the config file; the per-user lockout file needs no initialization"));
    };
    let store = connect_redis(&store_args, url).await?;
    let declared = if args.force {
        crate::output::note!(
            "--force: attempts this store forgot may still count at the service; the next logins can block accounts"
        );
        store.force_initialize().await
    } else {
        store.initialize().await
    };
    let written = declared.map_err(|e| {
        AppError::from(VideoError::Store(e)).hint(
            "nothing was changed; logins of those accounts resume by themselves at the time the store gave. --force declares it new anyway, and can block accounts",
        )
    })?;
    if ctx.json {
        print_json(&json!({ "store": store.location(), "markersWritten": written }))?;
    } else if written == 0 {
        crate::output::sayln!(
            "{} was initialized before; nothing changed",
            store.location()
        )?;
    } else {
        crate::output::sayln!(
            "{}: declared new ({written} of 16 buckets); logins are no longer held back",
            store.location()
        )?;
    }
    Ok(0)
}

/// A client whose lockout guard keeps its count in `store`, with the limits
/// of `options`.
pub fn client(
    base: BaseUrl,
    store: Arc<dyn LockoutStore>,
    options: &HttpOptions,
) -> AppResult<VideoSessionClient> {
    Ok(VideoSessionClient::builder(base)
        .http_options(options.clone())
        .lockout_store(store)
        .build()?)
}

/// Logs in through the lockout guard and saves the session; returns it and
/// the file it went to.
pub async fn login(
    base: BaseUrl,
    credentials: &Credentials,
    state: &StateDir,
    store: Arc<dyn LockoutStore>,
    options: &HttpOptions,
) -> AppResult<(Session, PathBuf)> {
    let location = store.location();
    let client = client(base.clone(), store, options)?;
    let session = client
        .login(credentials)
        .send()
        .await
        .map_err(|e| with_init_hint(e, &location))?;
    let path = state.save_session(base.as_str(), &session)?;
    Ok((session, path))
}

/// The password: `VIDEO_PASSWORD`, else a prompt without echo on a terminal.
fn password() -> AppResult<SecretString> {
    match std::env::var(PASSWORD_ENV) {
        Ok(p) if !p.is_empty() => return Ok(SecretString::from(p)),
        Ok(_) => {}
        Err(std::env::VarError::NotPresent) => {}
        Err(std::env::VarError::NotUnicode(_)) => {
            return Err(AppError::refused(format!(
                "{PASSWORD_ENV} is not valid UTF-8"
            )));
        }
    }
    if !std::io::stdin().is_terminal() {
        return Err(AppError::auth("no password: VIDEO_PASSWORD is not set and there is no terminal to ask on")
            .hint("set VIDEO_PASSWORD in the environment, or run the command in a terminal to be asked (passwords are never taken from flags)"));
    }
    let typed = rpassword::prompt_password("Password: ")
        .map_err(|e| AppError::new(format!("cannot read the password: {e}")))?;
    Ok(SecretString::from(typed))
}

/// The secret key and user name from the flags or the environment, else `[video]` of the config
/// file.
fn account(
    secret_key: &Option<String>,
    user: &Option<String>,
    file: &crate::config::VideoSection,
) -> AppResult<(String, String)> {
    let secret_key = pick(secret_key, &file.secret_key).ok_or_else(|| {
        AppError::refused("no domain secret key")
            .hint("set VIDEO_SECRET_KEY, add secret_key to [video] in the config file, or pass --secret-key")
    })?;
    let user = pick(user, &file.user).ok_or_else(|| {
        AppError::refused("no user name")
            .hint("pass --user, set VIDEO_USER or add user to [video] in the config file")
    })?;
    Ok((secret_key, user))
}

/// `apictl video login`.
pub async fn run_login(ctx: &Ctx, args: &VideoLoginArgs) -> AppResult<u8> {
    let file = &ctx.config.video;
    let url = pick(&args.service.url, &file.url).ok_or_else(|| {
        AppError::refused("no video session URL").hint(
            "pass --url, set VIDEO_SESSION_URL or add url to [video] in the config file (`apictl sandbox` prints one for the local fake)",
        )
    })?;
    let base = base_url(&url)?;
    let (secret_key, user) = account(&args.secret_key, &args.user, file)?;
    let password = password()?;
    let credentials = Credentials::new(SecretString::from(secret_key), user, password)?;
    let state = ctx.state()?;
    let store = lockout_store(&args.store.or_file(&ctx.config.video)).await?;
    let options = crate::limits::video_http_options(&args.service.limits)?;
    let (session, path) = login(base.clone(), &credentials, &state, store, &options).await?;
    let user = session.user();
    if ctx.json {
        print_json(&json!({
            "loggedIn": true,
            "url": base.as_str(),
            "userName": user.user_name.as_deref().unwrap_or(credentials.user_name()),
            "userId": user.user_id.to_string(),
            "domainId": user.domain_id,
            "domainName": user.domain_name,
            "loginId": user.login_id,
            "sessionFile": path.display().to_string(),
        }))?;
    } else {
        crate::output::sayln!(
            "logged in as {}; session saved to {} (only you can read it)",
            describe_user(&session, credentials.user_name()),
            path.display()
        )?;
    }
    Ok(0)
}

/// `apictl video lockout-status`: what the store holds for the account.
pub async fn run_lockout_status(ctx: &Ctx, args: &VideoLockoutStatusArgs) -> AppResult<u8> {
    let file = &ctx.config.video;
    let (secret_key, user) = account(&args.secret_key, &args.user, file)?;
    // The password is not needed to name the account; a placeholder keeps
    // the one validation path of `Credentials`.
    let credentials = Credentials::new(SecretString::from(secret_key), user, "-")?;
    let key = credentials.account_key();
    let store = lockout_store(&args.store.or_file(&ctx.config.video)).await?;
    let location = store.location();
    let guard = LockoutGuard::new(store, Arc::new(SystemClock));
    use sa360_video_sdk::video_session::{RefusalReason, StoreLoss};
    let status = guard
        .status(&key)
        .await
        .map_err(|e| AppError::from(VideoError::Store(e)))?;
    let now = std::time::SystemTime::now();
    let utc = |t: std::time::SystemTime| {
        chrono::DateTime::<chrono::Utc>::from(t).to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
    };
    if ctx.json {
        print_json(&json!({
            "account": key.short(),
            "store": location,
            "failuresInWindow": status.failures_in_window,
            "remainingAttempts": status.remaining_attempts,
            "retryAt": status.retry_at.map(utc),
            "blockedUntil": status.blocked_until.map(utc),
            "reason": status.refusal.map(|r| crate::wording::for_operator(&r.to_string())),
        }))?;
    } else {
        crate::output::outln!(
            "account {} ({}) in {location}: {} failed or unanswered login(s) counted; {} more would be sent now",
            credentials.user_name(),
            key.short(),
            status.failures_in_window,
            status.remaining_attempts
        )?;
        if let (Some(at), Some(reason)) = (status.retry_at, status.refusal) {
            let secs = at.duration_since(now).unwrap_or_default().as_secs();
            crate::output::outln!(
                "logins refused: {}; safe to try again at {} (in {secs} s)",
                crate::wording::for_operator(&reason.to_string()),
                utc(at)
            )?;
            if let RefusalReason::StoreForgot {
                cause: StoreLoss::NoRecord | StoreLoss::ServerStarted,
            } = reason
            {
                crate::output::outln!("{}", init_command(&location))?;
            }
        }
    }
    Ok(0)
}

/// `demo.user (Dana Demo, Demo Clinic)`.
pub fn describe_user(session: &Session, fallback: &str) -> String {
    let user = session.user();
    let name = user.user_name.as_deref().unwrap_or(fallback);
    let full: Vec<&str> = [user.first_name.as_deref(), user.last_name.as_deref()]
        .into_iter()
        .flatten()
        .collect();
    let mut extra = Vec::new();
    if !full.is_empty() {
        extra.push(full.join(" "));
    }
    if let Some(domain) = &user.domain_name {
        extra.push(domain.clone());
    }
    if extra.is_empty() {
        name.to_owned()
    } else {
        format!("{name} ({})", extra.join(", "))
    }
}

/// The invitation and call experience the flags describe.
pub fn invitation_from(args: &VideoInviteArgs) -> AppResult<(Invitation, CallExperience)> {
    let message = args.message.as_deref().map(Message::new).transpose()?;
    let mobile = |number: &str| -> AppResult<MobileNumber> {
        let country = args.country.as_deref().ok_or_else(|| {
            AppError::refused("a mobile number needs its country")
                .hint("add --country, e.g. --country US")
        })?;
        Ok(MobileNumber::new(CountryCode::new(country)?, number)?)
    };
    let invitation = match (&args.sms, &args.whatsapp, &args.email) {
        (Some(number), None, None) => Invitation::Sms {
            to: mobile(number)?,
            message,
        },
        (None, Some(number), None) => Invitation::WhatsApp {
            to: mobile(number)?,
        },
        (None, None, Some(address)) => Invitation::Email {
            to: EmailAddress::new(address.as_str())?,
            message,
        },
        _ => {
            return Err(
                AppError::refused("give exactly one of --sms, --whatsapp or --email")
                    .hint("one invitation goes over one channel; run the command once per channel"),
            );
        }
    };
    let mut experience = CallExperience::new();
    if let Some(mic) = args.mic {
        experience = experience.microphone(match mic {
            MicArg::Off => Microphone::Off,
            MicArg::On => Microphone::On,
        });
    }
    if let Some(camera) = args.camera {
        experience = experience.camera(match camera {
            CameraArg::Off => Camera::Off,
            CameraArg::Back => Camera::Back,
            CameraArg::Front => Camera::Front,
        });
    }
    if args.observer {
        experience = experience.join_as(JoinAs::SilentObserver);
    }
    if let Some(platform) = args.platform {
        experience = experience.platform_support(match platform {
            PlatformArg::BrowserFirst => PlatformSupport::BrowserFirst,
            PlatformArg::AppOnly => PlatformSupport::AppOnly,
            PlatformArg::BrowserOnly => PlatformSupport::BrowserOnly,
            PlatformArg::AskUser => PlatformSupport::AskUser,
        });
    }
    Ok((invitation, experience))
}

/// Sends an invitation with the saved session. A token the service refuses
/// is forgotten.
pub async fn invite(
    state: &StateDir,
    url_override: Option<&str>,
    session_id: &SessionId,
    invitation: &Invitation,
    experience: &CallExperience,
    options: &HttpOptions,
) -> AppResult<InvitationReceipt> {
    let (saved_url, session) = state.load_session()?;
    let saved = base_url(&saved_url)?;
    if let Some(url) = url_override {
        let wanted = base_url(url)?;
        if wanted != saved {
            return Err(AppError::refused(format!(
                "the saved session belongs to {saved}, not {wanted}"
            ))
            .hint(format!(
                "run `apictl video login` against {wanted} first; a token is never sent to another service"
            )));
        }
    }
    let client = VideoSessionClient::builder(saved)
        .http_options(options.clone())
        .build()?;
    match client
        .send_invitation(&session, session_id.clone(), invitation.clone())
        .experience(*experience)
        .send()
        .await
    {
        Err(VideoError::Unauthorized) => {
            state.forget_session();
            Err(AppError::from(VideoError::Unauthorized)
                .hint("the saved session was removed; run `apictl video login` again"))
        }
        other => Ok(other?),
    }
}

/// `apictl video invite`.
pub async fn run_invite(ctx: &Ctx, args: &VideoInviteArgs) -> AppResult<u8> {
    let file = &ctx.config.video;
    let (invitation, experience) = invitation_from(args)?;
    let session_id = pick(&args.session, &file.session_id).ok_or_else(|| {
        AppError::refused("no session ID").hint(
            "pass --session, set VIDEO_SESSION_ID or add session_id to [video] in the config file",
        )
    })?;
    let session_id = SessionId::new(session_id)?;
    let url = pick(&args.service.url, &file.url);
    let options = crate::limits::video_http_options(&args.service.limits)?;
    let state = ctx.state()?;
    let receipt = invite(
        &state,
        url.as_deref(),
        &session_id,
        &invitation,
        &experience,
        &options,
    )
    .await?;
    if ctx.json {
        print_json(&json!({
            "sent": true,
            "channel": invitation.channel(),
            "sessionId": session_id.as_str(),
            "invitationType": receipt.invitation_type,
            "isoCode": receipt.iso_code,
            "mobileNo": receipt.mobile_no,
            "emailAddress": receipt.email_address,
            "message": receipt.message,
            "queryStringParameter": receipt.query_string_parameter,
        }))?;
    } else {
        crate::output::sayln!("{}", describe_receipt(&invitation, &session_id, &receipt))?;
    }
    Ok(0)
}

/// `invitation sent by SMS to +12015550123 (US) for session sess-1, query string ?m=1&c=2`.
pub fn describe_receipt(
    invitation: &Invitation,
    session_id: &SessionId,
    receipt: &InvitationReceipt,
) -> String {
    let to = match (
        &receipt.mobile_no,
        &receipt.iso_code,
        &receipt.email_address,
    ) {
        (Some(m), Some(c), _) => format!("{m} ({c})"),
        (Some(m), None, _) => m.clone(),
        (None, _, Some(e)) => e.clone(),
        _ => "the recipient".to_owned(),
    };
    let query = receipt
        .query_string_parameter
        .as_deref()
        .filter(|q| !q.is_empty())
        .map(|q| format!(", query string {q}"))
        .unwrap_or_else(|| ", default call experience".to_owned());
    format!(
        "invitation sent by {} to {to} for session {session_id}{query}",
        invitation.channel()
    )
}

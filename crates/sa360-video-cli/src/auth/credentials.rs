//! Which credentials `apictl ads` uses, in this order (shown by `apictl auth status`):
//!
//! 1. a bearer token: `--token` / `SEARCH_ADS_TOKEN`, else `token` in the config file;
//! 2. a service-account key file: `--key-file` / `SEARCH_ADS_KEY_FILE`, else `key_file` in the
//!    config file;
//! 3. the file `apictl auth login` wrote in the state directory
//!    (`search-ads-authorized-user.json`);
//! 4. Application Default Credentials: `GOOGLE_APPLICATION_CREDENTIALS`, gcloud's
//!    `application_default_credentials.json` (under `CLOUDSDK_CONFIG`), the metadata server
//!    (`GCE_METADATA_HOST`).
//!
//! A token and a key file given at the same level is an error (which one was meant?).
//!
//! The quota project (`x-goog-user-project` on API calls) is `GOOGLE_CLOUD_QUOTA_PROJECT` when
//! set, else the credentials file's `quota_project_id`, as in Google's libraries; a fixed token
//! has none.
//!
//! A credentials file may name token, STS and impersonation URLs only on Google's hosts (the
//! SDK's rule); on loopback when apictl itself points at loopback (`--url` or
//! `--reporting-url`: the fakes); on any host only with [`ANY_TOKEN_HOST_ENV`]`=1`.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use sa360_video_sdk::http::{BaseUrl, HttpOptions};
use sa360_video_sdk::search_ads::{
    AuthorizedUser, CredentialKind, DefaultCredentials, ServiceAccount, StaticToken, TokenSource,
    auth::{GOOGLE_REVOKE_URI, GOOGLE_TOKEN_URI, QUOTA_PROJECT_ENV},
};

use crate::cli::AdsConnArgs;
use crate::config::SearchAdsSection;
use crate::error::{AppError, AppResult};
use sa360_video_private_file as private_file;

/// The name of the `apictl auth login` file in the state directory.
pub const LOGIN_FILE: &str = "search-ads-authorized-user.json";

/// The largest credentials file read.
const MAX_FILE: u64 = 64 * 1024;

/// The variable that lets an Application Default Credentials file name token URLs on any host,
/// not only Google's (`DefaultCredentialsBuilder::allow_non_google_token_hosts`, with its risk).
pub const ANY_TOKEN_HOST_ENV: &str = "APICTL_ALLOW_NON_GOOGLE_TOKEN_HOSTS";

/// The order, as `apictl auth status` prints it.
pub const PRECEDENCE: &str = "--token / SEARCH_ADS_TOKEN > --key-file / SEARCH_ADS_KEY_FILE > \
config file token / key_file > `apictl auth login` > Application Default Credentials \
(GOOGLE_APPLICATION_CREDENTIALS, gcloud's file, the metadata server)";

/// What to do when no credentials are found anywhere.
const NO_CREDENTIALS_HINT: &str = "sign in with `apictl auth login`, or set SEARCH_ADS_TOKEN, \
SEARCH_ADS_KEY_FILE or GOOGLE_APPLICATION_CREDENTIALS";

/// The credentials chosen, and where they came from.
pub struct Chosen {
    /// The token source.
    pub source: Arc<dyn TokenSource>,
    /// Its kind.
    pub kind: CredentialKind,
    /// Where it came from (never a secret).
    pub from: String,
}

/// Picks the credentials (see the module docs).
pub fn choose(
    args: &AdsConnArgs,
    file: &SearchAdsSection,
    login_file: Option<&Path>,
    http: HttpOptions,
) -> AppResult<Chosen> {
    let chosen = pick(args, file, login_file, http)?;
    // Pointed at local fakes, apictl lets the credentials' URLs be on loopback too, as the
    // SDK's client does for its own endpoints (`auth status` builds no client).
    let local = [
        args.url.as_ref().or(file.url.as_ref()),
        args.reporting_url.as_ref().or(file.reporting_url.as_ref()),
    ];
    if local
        .into_iter()
        .flatten()
        .any(|url| BaseUrl::parse(url).is_ok_and(|url| url.is_loopback()))
    {
        chosen.source.allow_loopback();
    }
    Ok(chosen)
}

fn pick(
    args: &AdsConnArgs,
    file: &SearchAdsSection,
    login_file: Option<&Path>,
    http: HttpOptions,
) -> AppResult<Chosen> {
    let both = || {
        AppError::refused("both a token and a service-account key file are set").hint(
            "keep one: unset SEARCH_ADS_TOKEN / drop --token, or unset SEARCH_ADS_KEY_FILE / drop --key-file",
        )
    };
    let token = |token: &str, from: &str| Chosen {
        source: Arc::new(StaticToken::new(token)),
        kind: CredentialKind::FixedToken,
        from: from.to_owned(),
    };
    let quota_env = std::env::var(QUOTA_PROJECT_ENV)
        .ok()
        .filter(|v| !v.is_empty());
    let key = |path: &Path, from: &str| -> AppResult<Chosen> {
        let mut key = ServiceAccount::from_file(path)?.http_options(http.clone());
        if quota_env.is_some() {
            key = key.with_quota_project_id(quota_env.as_deref())?;
        }
        Ok(Chosen {
            source: Arc::new(key),
            kind: CredentialKind::ServiceAccount,
            from: format!("{} ({from})", path.display()),
        })
    };
    match (&args.token, &args.key_file) {
        (Some(_), Some(_)) => return Err(both()),
        (Some(t), None) => return Ok(token(t, "--token or SEARCH_ADS_TOKEN")),
        (None, Some(path)) => return key(path, "--key-file or SEARCH_ADS_KEY_FILE"),
        (None, None) => {}
    }
    match (&file.token, &file.key_file) {
        (Some(_), Some(_)) => return Err(both()),
        (Some(t), None) => return Ok(token(t, "token in the config file")),
        (None, Some(path)) => return key(path, "key_file in the config file"),
        (None, None) => {}
    }
    if let Some(path) = login_file
        && let Some(mut user) = read_login_file(path)?
    {
        if quota_env.is_some() {
            user = user.with_quota_project_id(quota_env.as_deref())?;
        }
        return Ok(Chosen {
            source: Arc::new(user.http_options(http)),
            kind: CredentialKind::AuthorizedUser,
            from: format!("{} (`apictl auth login`)", path.display()),
        });
    }
    let mut adc = DefaultCredentials::builder().http_options(http);
    if std::env::var_os(ANY_TOKEN_HOST_ENV).is_some_and(|v| v == "1") {
        adc = adc.allow_non_google_token_hosts();
    }
    let adc = adc.build().map_err(|e| match e {
        // One sentence: what is missing here, and the one hint (issue 50).
        sa360_video_sdk::search_ads::Error::NoCredentials { reason, .. } => {
            AppError::auth(format!(
                "no credentials: none set for apictl and none found by Application Default \
             Credentials ({reason})"
            ))
            .hint(NO_CREDENTIALS_HINT)
        }
        other => other.into(),
    })?;
    Ok(Chosen {
        kind: adc.kind(),
        from: format!("{} (Application Default Credentials)", adc.origin()),
        source: Arc::new(adc),
    })
}

/// The `apictl auth login` file's credentials, if the file exists (only its owner may read it).
pub fn read_login_file(path: &Path) -> AppResult<Option<AuthorizedUser>> {
    let bytes = private_file::read(path, MAX_FILE).map_err(|e| {
        AppError::new(e.to_string()).hint(
            "the file holds your refresh token: only you may read it (chmod 600), or delete it and run `apictl auth login`",
        )
    })?;
    let Some(bytes) = bytes else {
        return Ok(None);
    };
    let text = String::from_utf8_lossy(&bytes);
    let user = AuthorizedUser::from_json(&text).map_err(|e| {
        AppError::new(format!("{}: {e}", path.display()))
            .hint("run `apictl auth login` to replace it")
    })?;
    Ok(Some(user.named_file(path)))
}

/// The revoke endpoint for credentials whose token endpoint is `token_uri`: `explicit`, else
/// Google's for Google's token endpoint, else `token_uri` with its last path segment replaced by
/// `revoke` (`http://127.0.0.1:PORT/token` → `…/revoke`, the fake's).
pub fn revoke_uri(explicit: Option<&str>, token_uri: &str) -> String {
    if let Some(uri) = explicit {
        return uri.to_owned();
    }
    if token_uri == GOOGLE_TOKEN_URI {
        return GOOGLE_REVOKE_URI.to_owned();
    }
    match token_uri.rsplit_once('/') {
        Some((base, _)) => format!("{base}/revoke"),
        None => GOOGLE_REVOKE_URI.to_owned(),
    }
}

/// The login file in `state_dir`.
pub fn login_file(state_dir: &Path) -> PathBuf {
    state_dir.join(LOGIN_FILE)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_revoke_endpoint_follows_the_token_endpoint() {
        assert_eq!(revoke_uri(None, GOOGLE_TOKEN_URI), GOOGLE_REVOKE_URI);
        assert_eq!(
            revoke_uri(None, "http://127.0.0.1:5/token"),
            "http://127.0.0.1:5/revoke"
        );
        assert_eq!(
            revoke_uri(Some("https://x/r"), GOOGLE_TOKEN_URI),
            "https://x/r"
        );
    }
}

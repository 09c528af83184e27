//! The config file and the directories apictl uses.
//!
//! Every setting is looked up in this order: the command-line flag, the
//! environment variable, the config file. The config file is TOML, by default
//! `$XDG_CONFIG_HOME/apictl/config.toml` (or `~/.config/apictl/config.toml`),
//! or the file given with `--config` / `APICTL_CONFIG`:
//!
//! ```toml
//! [search_ads]
//! url = "https://doubleclicksearch.googleapis.com/doubleclicksearch/v2"
//! key_file = "sa360-key.json"          # or: token = "ya29..."
//! agency_id = 20700000000000125
//! advertiser_id = 21700000012345
//! engine_account_id = 700000000042205
//! # customer_id = "2000012350"
//!
//! [video]
//! url = "https://video.example.com"
//! secret_key = "sk-..."
//! user = "demo.user"
//! session_id = "sess-..."
//! lockout_store = "redis-sentinel://10.0.0.5:26379,10.0.0.6:26379#lockout"
//! lockout_store_password_file = "redis-password"   # or APICTL_LOCKOUT_STORE_PASSWORD
//! ```
//!
//! The password is never read from the config file.

use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::error::{AppError, AppResult, io_error};

/// The config file's contents.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConfigFile {
    /// `[search_ads]`.
    #[serde(default)]
    pub search_ads: SearchAdsSection,
    /// `[video]`.
    #[serde(default)]
    pub video: VideoSection,
    /// Where it was read from (not a key of the file).
    #[serde(skip)]
    pub path: Option<PathBuf>,
}

/// `[search_ads]` of the config file.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SearchAdsSection {
    /// Base URL, up to and including `/doubleclicksearch/v2`.
    pub url: Option<String>,
    /// A bearer token.
    pub token: Option<String>,
    /// A service-account JSON key file (relative to the config file).
    pub key_file: Option<PathBuf>,
    /// Default agency.
    pub agency_id: Option<IdValue>,
    /// Default advertiser.
    pub advertiser_id: Option<IdValue>,
    /// Default engine account.
    pub engine_account_id: Option<IdValue>,
    /// Default customer (new Search Ads 360 experience).
    pub customer_id: Option<IdValue>,
    /// Base URL of the Search Ads 360 Reporting API.
    pub reporting_url: Option<String>,
    /// The manager account's id, sent as `login-customer-id` by Reporting API calls.
    pub login_customer_id: Option<IdValue>,
}

/// `[video]` of the config file.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct VideoSection {
    /// Base URL of the video session service.
    pub url: Option<String>,
    /// The domain's secret key.
    pub secret_key: Option<String>,
    /// The user name.
    pub user: Option<String>,
    /// The default session of `video invite`.
    pub session_id: Option<String>,
    /// The Redis lockout store (`--lockout-store`); the per-user lockout file when unset.
    pub lockout_store: Option<String>,
    /// The CA of the Redis servers' certificates (relative to the config file).
    pub lockout_ca_file: Option<PathBuf>,
    /// A file holding the Redis password (relative to the config file).
    pub lockout_store_password_file: Option<PathBuf>,
}

/// An id written as a TOML integer or string.
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub enum IdValue {
    /// `agency_id = 123`.
    Int(i64),
    /// `agency_id = "123"`.
    Text(String),
}

impl std::fmt::Display for IdValue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            IdValue::Int(i) => write!(f, "{i}"),
            IdValue::Text(t) => f.write_str(t),
        }
    }
}

impl ConfigFile {
    /// Reads the config file: `explicit` must exist; the default one may not.
    pub fn load(explicit: Option<&Path>) -> AppResult<Self> {
        let (path, required) = match explicit {
            Some(p) => (p.to_path_buf(), true),
            None => match default_config_path() {
                Some(p) => (p, false),
                None => return Ok(Self::default()),
            },
        };
        let text = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound && !required => {
                return Ok(Self::default());
            }
            Err(e) => return Err(io_error("cannot read the config file", &path, &e)),
        };
        let mut config = Self::parse(&text).map_err(|e| e.context(path.display()))?;
        let url_password = config
            .video
            .lockout_store
            .as_deref()
            .is_some_and(|u| u.contains('@'));
        if config.search_ads.token.is_some() || config.video.secret_key.is_some() || url_password {
            warn_if_readable_by_others(&path);
        }
        if let Some(dir) = path.parent() {
            for file in [
                &mut config.search_ads.key_file,
                &mut config.video.lockout_ca_file,
                &mut config.video.lockout_store_password_file,
            ] {
                if let Some(relative) = file.as_ref().filter(|f| f.is_relative()) {
                    *file = Some(dir.join(relative));
                }
            }
        }
        config.path = Some(path);
        Ok(config)
    }

    /// Parses the TOML text.
    pub fn parse(text: &str) -> AppResult<Self> {
        toml::from_str::<Self>(text).map_err(|e| {
            let message = e.message().to_owned();
            let hint = if message.contains("unknown field `password`") {
                "the password is never read from the config file: set VIDEO_PASSWORD or type it at the prompt"
            } else {
                KNOWN_KEYS
            };
            AppError::refused(format!("invalid config file: {message}")).hint(hint)
        })
    }
}

/// The hint of an invalid config file: every key it may hold.
const KNOWN_KEYS: &str = "known keys: [search_ads] url, token, key_file, agency_id, advertiser_id, engine_account_id, customer_id, reporting_url, login_customer_id; [video] url, secret_key, user, session_id, lockout_store, lockout_ca_file, lockout_store_password_file";

/// `$XDG_CONFIG_HOME/apictl/config.toml`, or `~/.config/apictl/config.toml`.
pub fn default_config_path() -> Option<PathBuf> {
    xdg_dir("XDG_CONFIG_HOME", ".config").map(|d| d.join("apictl").join("config.toml"))
}

/// The state directory: `explicit`, else `$XDG_STATE_HOME/apictl`, else
/// `~/.local/state/apictl`.
pub fn state_dir(explicit: Option<&Path>) -> AppResult<PathBuf> {
    if let Some(dir) = explicit {
        return Ok(dir.to_path_buf());
    }
    xdg_dir("XDG_STATE_HOME", ".local/state")
        .map(|d| d.join("apictl"))
        .ok_or_else(|| {
            AppError::refused("no state directory: neither XDG_STATE_HOME nor HOME is set")
                .hint("pass --state-dir DIR or set APICTL_STATE_DIR")
        })
}

fn xdg_dir(var: &str, under_home: &str) -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os(var).filter(|d| !d.is_empty()) {
        let dir = PathBuf::from(dir);
        // The XDG spec says relative paths are invalid and must be ignored.
        if dir.is_absolute() {
            return Some(dir);
        }
    }
    std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(|home| PathBuf::from(home).join(under_home))
}

#[cfg(unix)]
fn warn_if_readable_by_others(path: &Path) {
    use std::os::unix::fs::PermissionsExt;
    if let Ok(meta) = std::fs::metadata(path)
        && meta.permissions().mode() & 0o077 != 0
    {
        crate::output::tell!(
            "warning: {} holds a secret but other users may read it; run: chmod 600 {}",
            path.display(),
            path.display()
        );
    }
}

#[cfg(not(unix))]
fn warn_if_readable_by_others(_path: &Path) {}

/// Picks the first present value: flag or environment (clap already merged
/// those), then the config file.
pub fn pick<T: Clone>(cli: &Option<T>, file: &Option<T>) -> Option<T> {
    cli.clone().or_else(|| file.clone())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_both_sections_and_ids_as_int_or_text() {
        let c = ConfigFile::parse(
            "[search_ads]\nurl = \"http://127.0.0.1:1/doubleclicksearch/v2\"\nagency_id = 12\nadvertiser_id = \"34\"\n[video]\nuser = \"u\"\n",
        )
        .unwrap();
        assert_eq!(c.search_ads.agency_id.unwrap().to_string(), "12");
        assert_eq!(c.search_ads.advertiser_id.unwrap().to_string(), "34");
        assert_eq!(c.video.user.as_deref(), Some("u"));
    }

    #[test]
    fn a_password_is_refused_with_a_hint() {
        let e = ConfigFile::parse("[video]\npassword = \"x\"\n").unwrap_err();
        assert!(e.message.contains("password"), "{}", e.message);
        assert!(e.hint.unwrap().contains("VIDEO_PASSWORD"));
        assert!(!e.message.contains("\"x\""));
    }

    #[test]
    fn unknown_keys_are_refused() {
        assert!(ConfigFile::parse("[video]\nurll = \"x\"\n").is_err());
    }

    /// The hint names every key of both sections, and only keys that exist:
    /// toml's own message lists the keys a section has.
    #[test]
    fn the_hint_names_every_key() {
        for section in ["search_ads", "video"] {
            let e = ConfigFile::parse(&format!("[{section}]\nno_such_key = 1\n")).unwrap_err();
            let listed = e
                .message
                .split("expected one of")
                .nth(1)
                .expect("toml lists the keys");
            let keys: Vec<&str> = listed.split('`').skip(1).step_by(2).collect();
            assert!(!keys.is_empty(), "{}", e.message);
            for key in keys {
                assert!(KNOWN_KEYS.contains(key), "{key} missing from the hint");
            }
            assert_eq!(e.hint.as_deref(), Some(KNOWN_KEYS));
        }
        let named: usize = KNOWN_KEYS.matches(", ").count() + 2;
        assert_eq!(named, 9 + 7, "{KNOWN_KEYS}");
    }
}

//! `apictl config list`: each setting apictl would use, its value and where it came from
//! (a flag, an environment variable, the config file, a default), as `gcloud config list`
//! and `aws configure list` show theirs. Secrets (tokens, keys, passwords) show only
//! whether they are set; a URL shows without its user info and query values.

use clap::CommandFactory as _;
use sa360_video_client_support::{RedactedUrl, printable};
use sa360_video_sdk::search_ads::{DEFAULT_BASE_URL, reporting::DEFAULT_REPORTING_BASE_URL};
use sa360_video_sdk::video_session::FileStore;
use serde_json::json;

use crate::cli::Cli;
use crate::config::{default_config_path, state_dir};
use crate::context::{Ctx, Source, print_json};
use crate::error::AppResult;

/// How a value may be shown.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Shown {
    /// As it is.
    Plain,
    /// A URL: without user info and query values.
    Url,
    /// Only whether it is set.
    Secret,
}

/// One row: the setting's name (its config file key, `section.key`), its value, where it
/// came from, and the variable that sets it.
struct Row {
    name: &'static str,
    value: Option<String>,
    source: &'static str,
    variable: Option<String>,
    shown: Shown,
}

/// The environment variable of the flag `id` of the command at `path` (one definition:
/// `crate::cli`).
fn variable(path: &[&str], id: &str) -> Option<String> {
    let mut command = Cli::command();
    for name in path {
        command = command.find_subcommand(name)?.clone();
    }
    command
        .get_arguments()
        .find(|a| a.get_id() == id)
        .and_then(|a| a.get_env())
        .map(|e| e.to_string_lossy().into_owned())
}

fn from_env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.is_empty())
}

/// A setting read from the environment, else the config file, else `default`.
fn row(
    name: &'static str,
    variable: Option<String>,
    file: Option<String>,
    default: Option<String>,
    shown: Shown,
) -> Row {
    let env = variable.as_deref().and_then(from_env);
    let (value, source) = match (env, file, default) {
        (Some(v), _, _) => (Some(v), "environment"),
        (None, Some(v), _) => (Some(v), "config file"),
        (None, None, Some(v)) => (Some(v), "default"),
        (None, None, None) => (None, "unset"),
    };
    Row {
        name,
        value,
        source,
        variable,
        shown,
    }
}

/// Every setting, in the order of the config file's keys.
fn rows(ctx: &Ctx, config: Option<&std::path::Path>, state: Option<&std::path::Path>) -> Vec<Row> {
    let ads = |id| variable(&["ads"], id);
    let login = |id| variable(&["video", "login"], id);
    let s = &ctx.config.search_ads;
    let v = &ctx.config.video;
    let text = |v: &Option<crate::config::IdValue>| v.as_ref().map(ToString::to_string);
    let path = |p: &Option<std::path::PathBuf>| p.as_ref().map(|p| p.display().to_string());
    let global = |name, id, value: Option<String>| {
        let source = match ctx.source(id) {
            Source::Flag => "flag",
            Source::Env => "environment",
            Source::File => "default",
        };
        Row {
            name,
            source: if value.is_some() { source } else { "unset" },
            value,
            variable: variable(&[], id),
            shown: Shown::Plain,
        }
    };
    let lockout_default = FileStore::default_location()
        .ok()
        .map(|p| format!("the per-user lockout file {}", p.display()));
    use Shown::{Plain, Secret, Url};
    #[rustfmt::skip] // one setting a line
    let mut rows = vec![
        global(
            "config",
            "config",
            config
                .map(|p| p.display().to_string())
                .or_else(|| default_config_path().map(|p| p.display().to_string())),
        ),
        global(
            "state_dir",
            "state_dir",
            state_dir(state).ok().map(|p| p.display().to_string()),
        ),
        row("search_ads.url", ads("url"), s.url.clone(), Some(DEFAULT_BASE_URL.to_owned()), Url),
        row("search_ads.token", ads("token"), s.token.clone(), None, Secret),
        row("search_ads.key_file", ads("key_file"), path(&s.key_file), None, Plain),
        row("search_ads.agency_id", ads("agency_id"), text(&s.agency_id), None, Plain),
        row("search_ads.advertiser_id", ads("advertiser_id"), text(&s.advertiser_id), None, Plain),
        row("search_ads.engine_account_id", ads("engine_account_id"), text(&s.engine_account_id), None, Plain),
        row("search_ads.customer_id", ads("customer_id"), text(&s.customer_id), None, Plain),
        row("search_ads.reporting_url", ads("reporting_url"), s.reporting_url.clone(), Some(DEFAULT_REPORTING_BASE_URL.to_owned()), Url),
        row("search_ads.login_customer_id", ads("login_customer_id"), text(&s.login_customer_id), None, Plain),
        row("video.url", login("url"), v.url.clone(), None, Url),
        row("video.secret_key", login("secret_key"), v.secret_key.clone(), None, Secret),
        row("video.user", login("user"), v.user.clone(), None, Plain),
        row("video.session_id", variable(&["video", "invite"], "session_id"), v.session_id.clone(), None, Plain),
        row("video.password", Some(crate::video::PASSWORD_ENV.to_owned()), None, None, Secret),
        row("video.lockout_store", login("lockout_store"), v.lockout_store.clone(), lockout_default, Url),
        row("video.lockout_ca_file", login("lockout_ca_file"), path(&v.lockout_ca_file), None, Plain),
        row("video.lockout_store_password_file", login("lockout_store_password_file"), path(&v.lockout_store_password_file), None, Plain),
        row("video.lockout_store_password", Some(crate::video::STORE_PASSWORD_ENV.to_owned()), None, None, Secret),
    ];
    // The default lockout store is a description, not a URL.
    for r in &mut rows {
        if r.name == "video.lockout_store" && r.source == "default" {
            r.shown = Shown::Plain;
        }
    }
    rows
}

/// What may be shown of `row`'s value.
fn shown(row: &Row) -> String {
    match (&row.value, row.shown) {
        (None, _) => "-".to_owned(),
        (Some(_), Shown::Secret) => "(set, not shown)".to_owned(),
        (Some(url), Shown::Url) => match RedactedUrl(url).to_string() {
            // A URL of several hosts (Sentinel, Cluster) does not parse as one: its scheme only.
            shown if shown == "(not a URL)" => match url.split_once("://") {
                Some((scheme, _)) => format!("{}://… (set, hosts not shown)", printable(scheme)),
                None => shown,
            },
            shown => shown,
        },
        (Some(value), Shown::Plain) => printable(value).into_owned(),
    }
}

/// `apictl config list`.
pub fn run(
    ctx: &Ctx,
    config: Option<&std::path::Path>,
    state: Option<&std::path::Path>,
) -> AppResult<u8> {
    let rows = rows(ctx, config, state);
    let file_note = match &ctx.config.path {
        Some(path) => format!("config file: {}", path.display()),
        None => "config file: none (no file at the default place)".to_owned(),
    };
    if ctx.json {
        let list: Vec<serde_json::Value> = rows
            .iter()
            .map(|r| {
                json!({
                    "setting": r.name,
                    "value": r.value.as_ref().map(|_| shown(r)),
                    "source": r.source,
                    "variable": r.variable,
                    "secret": r.shown == Shown::Secret,
                })
            })
            .collect();
        return print_json(&json!({
            "configFile": ctx.config.path.as_ref().map(|p| p.display().to_string()),
            "settings": list,
        }))
        .map(|()| 0);
    }
    let cells: Vec<[String; 3]> = rows
        .iter()
        .map(|r| {
            let source = match (&r.variable, r.source) {
                (Some(var), "environment") => format!("environment ({var})"),
                (_, source) => source.to_owned(),
            };
            [r.name.to_owned(), shown(r), source]
        })
        .collect();
    let width = |i: usize| {
        cells
            .iter()
            .map(|c| c[i].chars().count())
            .max()
            .unwrap_or(0)
            .max(7)
    };
    let (name_w, value_w) = (width(0), width(1));
    crate::output::outln!("{file_note}")?;
    crate::output::outln!("{:name_w$}  {:value_w$}  SOURCE", "SETTING", "VALUE")?;
    for [name, value, source] in &cells {
        crate::output::outln!("{name:name_w$}  {value:value_w$}  {source}")?;
    }
    Ok(0)
}

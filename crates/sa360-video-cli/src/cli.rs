//! The command line: every command, flag and environment variable.

use std::path::PathBuf;

use clap::{ArgGroup, Args, Parser, Subcommand, ValueEnum};

const ABOUT: &str = "Command-line tool for the search ads and video session services.";

#[cfg(feature = "fakes")]
const LONG_ABOUT: &str = "Command-line tool for the search ads and video session services.

New here? `apictl tour` shows everything working against local fakes, without any account.
`apictl sandbox` runs the same fakes in the foreground for trying the other commands.";

/// Built without the cargo feature `fakes` (`cargo install sa360-video-cli --no-default-features`):
/// no `tour`, no `sandbox`.
#[cfg(not(feature = "fakes"))]
const LONG_ABOUT: &str = "Command-line tool for the search ads and video session services.

This build has no `tour` and no `sandbox` (built without the cargo feature `fakes`).";

/// Where settings and state come from (the end of `--help`, the FILES section of `apictl man`).
pub(crate) const AFTER_HELP: &str =
    "Settings come from, in this order: flags, environment variables, the config file
($XDG_CONFIG_HOME/apictl/config.toml or ~/.config/apictl/config.toml, or --config).
State (the video session token and the credentials of `apictl auth login`, mode
0600) lives in $XDG_STATE_HOME/apictl or ~/.local/state/apictl, or --state-dir.
The video login lockout count is the one every application of the user shares:
$XDG_STATE_HOME/sa360-video-sdk/video-session-lockout.json (else ~/.local/state/...), or
Redis with --lockout-store.

Shell completions: `apictl completions bash|zsh|fish|powershell|elvish`; manual page: `apictl man`.";

/// `apictl`: the command line.
#[derive(Debug, Parser)]
#[command(
    name = "apictl",
    version,
    about = ABOUT,
    long_about = LONG_ABOUT,
    after_help = AFTER_HELP,
    after_long_help = format!("{AFTER_HELP}\n\n{}", crate::exit::EXIT_TABLE),
    propagate_version = true
)]
pub struct Cli {
    /// Options every command takes.
    #[command(flatten)]
    pub global: GlobalArgs,
    /// The command.
    #[command(subcommand)]
    pub command: Command,
}

/// Options every command takes.
#[derive(Debug, Args)]
#[command(next_help_heading = "Global options")]
pub struct GlobalArgs {
    /// Config file (TOML) [default: $XDG_CONFIG_HOME/apictl/config.toml]
    #[arg(long, global = true, env = "APICTL_CONFIG", hide_env_values = true)]
    #[arg(value_name = "PATH")]
    pub config: Option<PathBuf>,

    /// Directory of the session token and saved credentials [default: $XDG_STATE_HOME/apictl]
    #[arg(long, global = true, env = "APICTL_STATE_DIR")]
    #[arg(hide_env_values = true, value_name = "DIR")]
    pub state_dir: Option<PathBuf>,

    /// Print machine-readable JSON on stdout instead of text
    #[arg(long, global = true)]
    pub json: bool,

    /// Log each request (method, URL, status) and more to stderr (-v, -vv, -vvv); secrets are never logged
    #[arg(short, long, global = true, action = clap::ArgAction::Count)]
    pub verbose: u8,

    /// Print no confirmations, notes or progress bars; results and errors still print
    #[arg(short, long, global = true, conflicts_with = "verbose")]
    pub quiet: bool,
}

/// The top-level commands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Walk through every feature against local fakes (no account needed)
    #[cfg(feature = "fakes")]
    #[command(
        long_about = "Walk through every feature against local fakes (no account needed).\n\nStarts both fakes in this process and runs, with short explanations: login, the lockout\nguard refusing a risky attempt, invitations over SMS, WhatsApp and e-mail, streaming\nconversions, uploading a sample CSV with a file of its rejected rows, availability, saved columns\nand the ID-mapping download. Nothing outside a temporary directory is touched.\n\nExits 0 when every step worked, 1 naming the step that failed."
    )]
    Tour,

    /// Run both fakes in the foreground and print their connection settings
    #[cfg(feature = "fakes")]
    #[command(
        long_about = "Run both fakes in the foreground and print their connection settings.\n\nThe first lines on stdout are NAME='value' assignments for sh. Load them in another\nshell to point apictl (or an application) at the fakes:\n\n    apictl sandbox > sandbox.env &\n    set -a; . ./sandbox.env; set +a\n\nServes until Ctrl-C."
    )]
    Sandbox(SandboxArgs),

    /// Video session service: log in, send invitations
    #[command(subcommand)]
    Video(Box<VideoCommand>),

    /// Search Ads 360 (API v2 and the Reporting API): conversions, availability, ID mapping, customers
    Ads(Box<AdsArgs>),

    /// Sign in to Search Ads 360 with a Google account, show or revoke the credentials
    #[command(subcommand)]
    Auth(Box<AuthCommand>),

    /// Print the shell completion script for bash, zsh, fish, PowerShell or elvish
    #[command(
        long_about = "Print the shell completion script for bash, zsh, fish, PowerShell or elvish.\n\nFor example:\n\n    bash:        apictl completions bash > ~/.local/share/bash-completion/completions/apictl\n    zsh:         apictl completions zsh > \"${fpath[1]}/_apictl\"\n    fish:        apictl completions fish > ~/.config/fish/completions/apictl.fish\n    PowerShell:  apictl completions powershell | Out-String | Invoke-Expression"
    )]
    Completions(CompletionsArgs),

    /// Show the settings apictl uses and where each comes from
    #[command(subcommand)]
    Config(ConfigCommand),

    /// Print the manual page (roff) of apictl or of one of its commands, or write them all
    #[command(
        long_about = "Print the manual page (roff) of apictl or of one of its commands, or write them all.\n\nFor example:\n\n    apictl man | man -l -\n    apictl man ads conversions upload | man -l -\n    apictl man --all ~/.local/share/man     # then: man apictl-ads"
    )]
    Man(ManArgs),
}

/// `apictl config ...`.
#[derive(Debug, Subcommand)]
pub enum ConfigCommand {
    /// List every setting with its value and where it came from; secrets show only as set
    #[command(
        long_about = "List every setting with its value and where it came from.\n\nFor each setting (named as its key in the config file): the value apictl would use and its\nsource: a flag (--config, --state-dir), an environment variable (named), the config file,\na default, or unset. Tokens, keys and passwords show only whether they are set; URLs\nshow without their user info and query values. A flag typed on another command wins over\nwhat this shows."
    )]
    List,
}

/// `apictl completions`.
#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell
    #[arg(value_enum, value_name = "SHELL")]
    pub shell: clap_complete::Shell,
}

/// `apictl man`.
#[derive(Debug, Args)]
pub struct ManArgs {
    /// The command whose page to print, e.g. `ads conversions upload` [default: apictl's own]
    #[arg(value_name = "COMMAND", conflicts_with = "all")]
    pub command: Vec<String>,

    /// Write every page (apictl.1 and one per command, such as apictl-ads.1) into DIR/man1, so
    /// that `man -M DIR apictl-ads` finds them
    #[arg(long, value_name = "DIR")]
    pub all: Option<PathBuf>,
}

/// `apictl auth ...`.
#[derive(Debug, Subcommand)]
pub enum AuthCommand {
    /// Sign in with a Google account (installed-app flow) and keep the credentials for `apictl ads`
    #[command(
        long_about = "Sign in with a Google account and keep the credentials for `apictl ads`.\n\nRuns Google's installed-app flow: opens the system browser ($BROWSER, else the platform's\nopener) on Google's consent page, or with --no-browser prints the URL; the sign-in\nredirects to a listener on 127.0.0.1 (a free port), so the browser must run on this machine.\nPKCE (S256) and a checked state protect the exchange; access_type=offline gives a refresh\ntoken for the scope https://www.googleapis.com/auth/doubleclicksearch.\n\nThe OAuth client is a \"Desktop app\" client from the Google Cloud console: its JSON\n(--client-secrets FILE), or --client-id and --client-secret. The result is an authorized_user\nfile (the format of `gcloud auth application-default login`), mode 0600, in the state\ndirectory; `apictl ads` uses it unless a token or a key file is set (`apictl auth status`).\n\nRefresh tokens of a client in \"Testing\" publishing status expire after 7 days."
    )]
    Login(AuthLoginArgs),

    /// Show which credentials `apictl ads` uses, where they come from and the token's expiry
    #[command(
        long_about = "Show which credentials `apictl ads` uses, where they come from and the token's expiry.\n\nThe order: --token / SEARCH_ADS_TOKEN, --key-file / SEARCH_ADS_KEY_FILE, the config file's\ntoken or key_file, the file of `apictl auth login`, then Application Default Credentials\n(GOOGLE_APPLICATION_CREDENTIALS, gcloud's application_default_credentials.json under\nCLOUDSDK_CONFIG or ~/.config/gcloud, the metadata server at GCE_METADATA_HOST or\nmetadata.google.internal). Gets a token to show its expiry; never prints a secret."
    )]
    Status(Box<AuthStatusArgs>),

    /// Revoke the refresh token of `apictl auth login` and delete its file
    Revoke(AuthRevokeArgs),
}

/// `apictl auth login`.
#[derive(Debug, Args)]
pub struct AuthLoginArgs {
    /// The OAuth client's JSON from the Google Cloud console (a "Desktop app" client)
    #[arg(long, env = "SEARCH_ADS_CLIENT_SECRETS", value_name = "FILE")]
    pub client_secrets: Option<PathBuf>,

    /// OAuth client id, instead of --client-secrets
    #[arg(long, env = "SEARCH_ADS_CLIENT_ID", hide_env_values = true)]
    #[arg(value_name = "ID")]
    pub client_id: Option<String>,

    /// OAuth client secret, instead of --client-secrets (prefer the environment)
    #[arg(long, env = "SEARCH_ADS_CLIENT_SECRET", hide_env_values = true)]
    #[arg(value_name = "SECRET")]
    pub client_secret: Option<String>,

    /// Print the sign-in URL instead of opening a browser, and also accept the address the
    /// browser ends on pasted back here (for a browser on another machine, e.g. over SSH)
    #[arg(long)]
    pub no_browser: bool,

    /// Seconds to wait for the sign-in to finish
    #[arg(long, default_value_t = 300, value_name = "SECS")]
    pub wait: u64,

    /// Authorization endpoint [default: the client's, else Google's]
    #[arg(long, env = "SEARCH_ADS_AUTH_URL", hide_env_values = true)]
    #[arg(value_name = "URL")]
    pub auth_url: Option<String>,

    /// Token endpoint [default: the client's, else Google's]
    #[arg(long, env = "SEARCH_ADS_TOKEN_URL", hide_env_values = true)]
    #[arg(value_name = "URL")]
    pub token_url: Option<String>,

    /// Revoke endpoint kept for `apictl auth revoke` [default: Google's, or beside the token endpoint]
    #[arg(long, env = "SEARCH_ADS_REVOKE_URL", hide_env_values = true)]
    #[arg(value_name = "URL")]
    pub revoke_url: Option<String>,
}

/// `apictl auth status`.
#[derive(Debug, Args)]
pub struct AuthStatusArgs {
    /// Connection.
    #[command(flatten)]
    pub conn: AdsConnArgs,
}

/// `apictl auth revoke`.
#[derive(Debug, Args)]
pub struct AuthRevokeArgs {
    /// Revoke endpoint [default: Google's, or beside the token endpoint of the file]
    #[arg(long, env = "SEARCH_ADS_REVOKE_URL", hide_env_values = true)]
    #[arg(value_name = "URL")]
    pub revoke_url: Option<String>,
}

/// `apictl sandbox`.
#[cfg(feature = "fakes")]
#[derive(Debug, Args)]
pub struct SandboxArgs {
    /// Port of the search ads fake on 127.0.0.1 (0 picks a free one)
    #[arg(long, default_value_t = 0, value_name = "PORT")]
    pub search_ads_port: u16,

    /// Port of the video session fake on 127.0.0.1 (0 picks a free one)
    #[arg(long, default_value_t = 0, value_name = "PORT")]
    pub video_port: u16,

    /// Seed of the generated data and demo credentials (each sandbox's secret keys get random bits of their own)
    #[arg(long, default_value_t = 42)]
    pub seed: u64,
}

/// `apictl video ...`.
#[derive(Debug, Subcommand)]
pub enum VideoCommand {
    /// Log in and keep the session token for `video invite`
    #[command(
        long_about = "Log in and keep the session token for `video invite`.\n\nThe password comes from VIDEO_PASSWORD or, on a terminal, from a prompt that does not\necho; never from a flag. The token is kept in a file only you can read (0600) in the\nstate directory and is never printed.\n\nThe service blocks an account for 10 minutes after more than 5 failed logins in 10\nminutes. apictl counts failed logins per account, across runs, in the per-user lockout\nfile that every application of the user shares\n($XDG_STATE_HOME/sa360-video-sdk/video-session-lockout.json), or in Redis with --lockout-store\n(shared by every machine using it), and refuses to send a login whose failure could\nstart a block, saying when it is safe to try again."
    )]
    Login(VideoLoginArgs),

    /// Send a session invitation by SMS, WhatsApp or e-mail
    #[command(
        long_about = "Send a session invitation by SMS, WhatsApp or e-mail.\n\nUses the session of `apictl video login`. Exactly one of --sms, --whatsapp or --email.\nThe call-experience flags become the invitation's query string (for example\n?m=1&c=2&o=1&s=4); flags left out take the service's defaults."
    )]
    Invite(VideoInviteArgs),

    /// Show the lockout count of an account, sending nothing
    #[command(
        name = "lockout-status",
        long_about = "Show the lockout count of an account, sending nothing.\n\nReads the lockout store (the per-user lockout file, or --lockout-store) and prints how\nmany failed or unanswered logins of the account are counted, how many more apictl would\nsend, and when it will send again if it refuses now. Needs the secret key and the user\nname (they name the account), never the password."
    )]
    LockoutStatus(VideoLockoutStatusArgs),

    /// Declare a Redis lockout store new (once, when it has never held counts)
    #[command(
        name = "lockout-init",
        long_about = "Declare a Redis lockout store new (once, when it has never held counts).\n\nA Redis store keeps a record that says since when it remembers every login attempt. When\nit cannot show that it does (no record, a restart that may have lost writes, a flush, an\neviction), logins are refused for one lockout window (11.5 minutes by default): attempts\nit forgot may still count at the service. A store that never held counts has no record\neither; this command writes it. It refuses (exit 4) a store that holds counts or noticed a\nloss: its logins resume by themselves once the attempts it forgot can no longer count.\nNever run it at every start of an application."
    )]
    LockoutInit(VideoLockoutInitArgs),
}

/// Where the login lockout count is kept (each flag, else its variable, else `[video]` in the
/// config file: `LockoutStoreArgs::or_file`).
#[derive(Debug, Clone, Args)]
#[command(next_help_heading = "Lockout store")]
pub struct LockoutStoreArgs {
    /// Share the login lockout count through Redis instead of the per-user lockout file:
    /// redis://HOST:PORT/DB, rediss:// (TLS), redis-sentinel://HOST:PORT,…#MASTER or
    /// redis-cluster://HOST:PORT,… (and rediss-sentinel://, rediss-cluster://)
    #[arg(long = "lockout-store", env = "APICTL_LOCKOUT_STORE")]
    #[arg(hide_env_values = true, value_name = "URL")]
    pub lockout_store: Option<String>,

    /// A PEM file of the CA that signs the Redis servers' TLS certificates (rediss… URLs)
    #[arg(long = "lockout-ca-file", env = "APICTL_LOCKOUT_CA_FILE")]
    #[arg(value_name = "FILE")]
    pub lockout_ca_file: Option<std::path::PathBuf>,

    /// A file holding the Redis password (its first line), instead of a password in the URL;
    /// or set APICTL_LOCKOUT_STORE_PASSWORD
    #[arg(long = "lockout-store-password-file")]
    #[arg(env = "APICTL_LOCKOUT_STORE_PASSWORD_FILE", value_name = "FILE")]
    pub lockout_store_password_file: Option<std::path::PathBuf>,
}

/// `apictl video lockout-init`.
#[derive(Debug, Args)]
pub struct VideoLockoutInitArgs {
    /// Store.
    #[command(flatten)]
    pub store: LockoutStoreArgs,

    /// Declare it new even if it holds counts or noticed a loss of data. DANGER: attempts the
    /// store forgot may still count at the service, and the next logins can block accounts;
    /// only for a deployment no login used in the last lockout window (11.5 minutes)
    #[arg(long)]
    pub force: bool,
}

/// `apictl video lockout-status`.
#[derive(Debug, Args)]
pub struct VideoLockoutStatusArgs {
    /// The domain's secret key (prefer the environment or the config file)
    #[arg(long, env = "VIDEO_SECRET_KEY", hide_env_values = true)]
    #[arg(value_name = "KEY")]
    pub secret_key: Option<String>,

    /// The user name
    #[arg(long, env = "VIDEO_USER", hide_env_values = true, value_name = "NAME")]
    pub user: Option<String>,

    /// Store.
    #[command(flatten)]
    pub store: LockoutStoreArgs,
}

/// Where the video session service is.
#[derive(Debug, Args)]
#[command(next_help_heading = "Connection")]
pub struct VideoServiceArgs {
    /// Base URL of the video session service
    #[arg(long = "url", env = "VIDEO_SESSION_URL", hide_env_values = true)]
    #[arg(value_name = "URL")]
    pub url: Option<String>,

    /// Limits.
    #[command(flatten)]
    pub limits: VideoLimitArgs,
}

/// Transport limits of the video commands (transport, issue 12): the same
/// flag names as `apictl ads`.
#[derive(Debug, Args, Default)]
pub struct VideoLimitArgs {
    /// Seconds one request may take, answer included [default: 30]
    #[arg(long, value_name = "SECS", help_heading = "Limits")]
    pub timeout: Option<u64>,

    /// Seconds an answer may take to deliver 1 KiB (or its end) [default: 30]
    #[arg(long, value_name = "SECS", help_heading = "Limits")]
    pub stall_timeout: Option<u64>,

    /// Largest answer read, in bytes [default: 33554432]
    #[arg(long, value_name = "BYTES", help_heading = "Limits")]
    pub max_body: Option<u64>,
}

/// `apictl video login`.
#[derive(Debug, Args)]
pub struct VideoLoginArgs {
    /// Service.
    #[command(flatten)]
    pub service: VideoServiceArgs,

    /// The domain's secret key (prefer the environment or the config file)
    #[arg(long, env = "VIDEO_SECRET_KEY", hide_env_values = true)]
    #[arg(value_name = "KEY")]
    pub secret_key: Option<String>,

    /// The user name
    #[arg(long, env = "VIDEO_USER", hide_env_values = true, value_name = "NAME")]
    pub user: Option<String>,

    /// Store.
    #[command(flatten)]
    pub store: LockoutStoreArgs,
}

/// Microphone at connect.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum MicArg {
    /// m=0
    Off,
    /// m=1
    On,
}

/// Camera at connect.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum CameraArg {
    /// c=0
    Off,
    /// c=1
    Back,
    /// c=2
    Front,
}

/// Default platform support.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum PlatformArg {
    /// s=1
    BrowserFirst,
    /// s=2
    AppOnly,
    /// s=3
    BrowserOnly,
    /// s=4
    AskUser,
}

/// `apictl video invite`.
#[derive(Debug, Args)]
#[command(group(ArgGroup::new("channel").required(true).args(["sms", "whatsapp", "email"])))]
pub struct VideoInviteArgs {
    /// The session to invite to
    #[arg(long, env = "VIDEO_SESSION_ID", hide_env_values = true)]
    #[arg(value_name = "ID")]
    pub session: Option<String>,

    /// Send by SMS to this mobile number (6 to 15 digits, optionally after +)
    #[arg(long, value_name = "NUMBER")]
    pub sms: Option<String>,

    /// Send by WhatsApp to this mobile number (the text is fixed by the service)
    #[arg(long, value_name = "NUMBER")]
    pub whatsapp: Option<String>,

    /// Send by e-mail to this address
    #[arg(long, value_name = "ADDRESS")]
    pub email: Option<String>,

    /// Country of the mobile number, two letters (US, UK, IN, ...); SMS and WhatsApp only
    #[arg(long, value_name = "CC", conflicts_with = "email")]
    #[arg(required_unless_present = "email")]
    pub country: Option<String>,

    /// Text of the invitation, at most 100 characters (SMS and e-mail only)
    #[arg(long, value_name = "TEXT", conflicts_with = "whatsapp")]
    pub message: Option<String>,

    /// Microphone when the guest connects (m)
    #[arg(long, value_enum, value_name = "STATE")]
    pub mic: Option<MicArg>,

    /// Camera when the guest connects (c)
    #[arg(long, value_enum, value_name = "CAMERA")]
    pub camera: Option<CameraArg>,

    /// Join as a silent observer instead of a guest (o=1)
    #[arg(long)]
    pub observer: bool,

    /// Default platform support (s)
    #[arg(long, value_enum, value_name = "OPTION")]
    pub platform: Option<PlatformArg>,

    /// Service (default: the one of the saved session).
    #[command(flatten)]
    pub service: VideoServiceArgs,
}

/// `apictl ads ...`: connection and account options, then the command.
#[derive(Debug, Args)]
pub struct AdsArgs {
    /// Connection and account.
    #[command(flatten)]
    pub conn: AdsConnArgs,
    /// The command.
    #[command(subcommand)]
    pub command: AdsCommand,
}

/// Where the search ads API is, how to authenticate, and which account.
#[derive(Debug, Args)]
#[command(next_help_heading = "Connection and account")]
pub struct AdsConnArgs {
    /// Base URL of the API, up to /doubleclicksearch/v2 [default: Google's]
    #[arg(long = "url", global = true, env = "SEARCH_ADS_URL")]
    #[arg(hide_env_values = true, value_name = "URL")]
    pub url: Option<String>,

    /// OAuth bearer token (prefer the environment or the config file)
    #[arg(long, global = true, env = "SEARCH_ADS_TOKEN")]
    #[arg(hide_env_values = true, value_name = "TOKEN")]
    pub token: Option<String>,

    /// Service-account JSON key file, instead of a token
    #[arg(long, global = true, env = "SEARCH_ADS_KEY_FILE")]
    #[arg(hide_env_values = true, value_name = "PATH")]
    pub key_file: Option<PathBuf>,

    /// Agency id
    #[arg(long, global = true, env = "SEARCH_ADS_AGENCY_ID")]
    #[arg(hide_env_values = true, value_name = "ID")]
    pub agency_id: Option<String>,

    /// Advertiser id
    #[arg(long, global = true, env = "SEARCH_ADS_ADVERTISER_ID")]
    #[arg(hide_env_values = true, value_name = "ID")]
    pub advertiser_id: Option<String>,

    /// Engine account id
    #[arg(long, global = true, env = "SEARCH_ADS_ENGINE_ACCOUNT_ID")]
    #[arg(hide_env_values = true, value_name = "ID")]
    pub engine_account_id: Option<String>,

    /// Customer id of the new Search Ads 360 experience
    #[arg(long, global = true, env = "SEARCH_ADS_CUSTOMER_ID")]
    #[arg(hide_env_values = true, value_name = "ID")]
    pub customer_id: Option<String>,

    /// Base URL of the Search Ads 360 Reporting API [default: Google's]
    #[arg(long = "reporting-url", global = true)]
    #[arg(env = "SEARCH_ADS_REPORTING_URL", hide_env_values = true)]
    #[arg(value_name = "URL")]
    pub reporting_url: Option<String>,

    /// Manager account id sent as login-customer-id to the Reporting API (digits, plain or dashed as in Google's UI)
    #[arg(long, global = true, env = "SEARCH_ADS_LOGIN_CUSTOMER_ID")]
    #[arg(hide_env_values = true, value_name = "ID")]
    pub login_customer_id: Option<String>,

    /// Seconds one request may take, answer included [default: 30]
    #[arg(long, global = true, value_name = "SECS", help_heading = "Limits")]
    pub timeout: Option<u64>,

    /// Seconds one command's call may take across its retries and waits [default: 300]
    #[arg(long, global = true, value_name = "SECS", help_heading = "Limits")]
    pub deadline: Option<u64>,

    /// Seconds an answer may take to deliver 1 KiB (or its end) [default: 30]
    #[arg(long, global = true, value_name = "SECS", help_heading = "Limits")]
    pub stall_timeout: Option<u64>,

    /// Largest JSON answer read, in bytes [default: 33554432]
    #[arg(long, global = true, value_name = "BYTES", help_heading = "Limits")]
    pub max_body: Option<u64>,

    /// Largest ID-mapping download, in bytes [default: 68719476736]
    #[arg(long, global = true, value_name = "BYTES", help_heading = "Limits")]
    pub max_download: Option<u64>,
}

/// `apictl ads <command>`.
#[derive(Debug, Subcommand)]
pub enum AdsCommand {
    /// Read and write conversions
    #[command(subcommand)]
    Conversions(ConversionsCommand),

    /// Mark Floodlight activities as uploaded up to a time
    #[command(
        long_about = "Mark Floodlight activities as uploaded up to a time (conversion.updateAvailability).\n\nOne availability per --segmentation-id or --segmentation-name, all for the agency and\nadvertiser of --agency-id and --advertiser-id."
    )]
    Availability(AvailabilityArgs),

    /// Download the legacy-to-new ID-mapping CSV of an advertiser
    #[command(name = "id-mapping")]
    IdMapping(IdMappingArgs),

    /// List the saved columns of an advertiser
    #[command(name = "saved-columns")]
    SavedColumns,

    /// List the customers the credentials reach directly (Reporting API)
    Customers,

    /// Run a report of any resource (Reporting API query language) as CSV, JSON lines or a table
    #[command(
        long_about = "Run a report of any resource through the Search Ads 360 Reporting API and write its rows\nas CSV, JSON lines or a table, one column per selected field, named as selected\n(campaign.id, metrics.clicks, custom_columns.id[7]).\n\nThe query (--query, or --query-file) is checked before it is sent: an unknown field, a field\nnot selectable, filterable or sortable where it is used, or one the FROM resource cannot\nselect is refused with the Reporting API's error code and the nearest valid name.\n`apictl ads fields PATTERN` lists the fields.\n\nExample:\n  apictl ads report --customer-id 1234567890 --format table --query \\\n    \"SELECT campaign.id, campaign.name, segments.date, metrics.clicks FROM campaign\n     WHERE segments.date DURING LAST_30_DAYS\""
    )]
    Report(ReportQueryArgs),

    /// List the Reporting API's fields (the catalogue shipped with apictl)
    Fields(FieldsArgs),
}

/// `apictl ads conversions ...`.
#[derive(Debug, Subcommand)]
pub enum ConversionsCommand {
    /// Stream the conversions of a date range as JSON lines or CSV
    #[command(
        long_about = "Stream the conversions of a date range as JSON lines or CSV.\n\n--api reporting (the default when a customer id is given: --customer-id,\nSEARCH_ADS_CUSTOMER_ID or the config file) reads a report on the `conversion` resource of\nthe Search Ads 360 Reporting API for --customer-id: the last 60 days only, campaign and\nad-group ids are the new Search Ads 360 ids (apictl ads id-mapping lists them), a client\naccount behind a manager needs --login-customer-id, and fields the Reporting API does not\nhave are left out.\n\n--api v2 (the default otherwise) reads the engine account (--agency-id, --advertiser-id,\n--engine-account-id), or, when those are not all set, --customer-id, through\nconversion.get / getByCustomerId, which Google deprecated (removal scheduled for Q3 2025).\n\nRows use the Conversion JSON field names. What --api v2 writes, `apictl ads conversions upload`\nreads back (insert, or --update). What --api reporting writes cannot be inserted again: the\nReporting API's conversion resource has no Floodlight activity (segmentationType,\nsegmentationId), conversion type, agency or advertiser, which an insert needs, and its campaign\nand ad-group ids are the new Search Ads 360 ids; upload refuses those rows before sending\n(\"segmentationType is required for insert\"). List with --api v2 to get re-uploadable rows."
    )]
    List(ListArgs),

    /// Insert (or update) conversions from a CSV or JSON-lines file
    #[command(
        long_about = "Insert (or update) conversions from a CSV or JSON-lines file.\n\nCSV: a header of Conversion JSON field names (conversionId, conversionTimestamp,\nsegmentationType, segmentationId, agencyId, advertiserId, engineAccountId, type,\nrevenueMicros, currencyCode, ...). JSON lines: one Conversion JSON object per line.\nTimestamps are epoch milliseconds or RFC 3339; customDimension and customMetric cells\nof a CSV hold JSON arrays. The file is read one row at a time (UTF-8; a row may have\nup to 1 MiB).\n\nRows that cannot be read (invalid UTF-8, an unclosed quote, malformed JSON), lack a\nrequired field, hold control characters or over-long ids, or repeat an (advertiser,\nconversionId, conversionTimestamp) are rejected locally with their line and never sent.\nThe rest go out in batches. Rejected rows are written with their line, conversionId,\ncode and reason to the rejected-rows file (--rejected) as their batches finish.\n\nJournal: while it runs, the upload appends to FILE.journal which rows may be on their\nway (`send FIRST-LAST`, fsynced before the batch's first request) and which have a\ndefinite outcome (`done FIRST-LAST stored=N rejected=N mark=BYTES resend=RANGES`, rows\nnumbered from 1, written after the rejected-rows lines it vouches for are fsynced), bound to\nthe file by its size and SHA-256 (--journal PATH keeps it elsewhere). After an interruption\n(or rows without an answer), --resume sends only the rows without a definite outcome, in\nresubmission mode: a row an earlier run stored comes back as already stored, a success.\nOnce every row has its outcome the journal ends with `finished at=SECS` and is kept: an\nupload of the same file (with or without --resume) then sends nothing and says when it\nfinished; --restart uploads it again. An unfinished journal is refused without --resume\nor --restart. One upload of a file runs at a time: another is refused before it sends\nanything. The first 20 rejected rows are printed; the rejected-rows file has them all.\n\nExit status: 0 every row stored (or already stored), or the file was uploaded already;\n3 some rows rejected (the others stored); 6 every row rejected (nothing stored); 4 refused\nbefore sending (the file, a setting, or another upload of the file running); 1 error\n(including rows without a definite answer: run again with --resume); 130 interrupted (run\nagain with --resume)."
    )]
    Upload(UploadArgs),
}

/// Output format of `conversions list`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ListFormat {
    /// One JSON object per line
    Jsonl,
    /// A header line and one row per conversion
    Csv,
}

/// `apictl ads conversions list`.
#[derive(Debug, Args)]
pub struct ListArgs {
    /// First day, YYYY-MM-DD
    #[arg(long, value_name = "DATE")]
    pub from: String,

    /// Last day, YYYY-MM-DD (included)
    #[arg(long, value_name = "DATE")]
    pub to: String,

    /// Only this campaign
    #[arg(long, value_name = "ID")]
    pub campaign_id: Option<String>,

    /// Only this ad group
    #[arg(long, value_name = "ID")]
    pub ad_group_id: Option<String>,

    /// Only this ad
    #[arg(long, value_name = "ID")]
    pub ad_id: Option<String>,

    /// Only this criterion (keyword)
    #[arg(long, value_name = "ID")]
    pub criterion_id: Option<String>,

    /// Output format
    #[arg(long, value_enum, default_value_t = ListFormat::Jsonl)]
    pub format: ListFormat,

    /// Write to this file instead of stdout
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,

    /// Which API reads the conversions [default: reporting when a customer id is given, else v2]
    #[arg(long, value_enum, value_name = "API")]
    pub api: Option<ReadApi>,

    /// Conversions per request (v2: 1 to 1000, default 1000; reporting: 1 to 10000, default 10000)
    #[arg(long, value_name = "N")]
    pub page_size: Option<u32>,

    /// Requests in flight at once (v2: pages, 1 to 32; reporting: date shards, 1 to 16)
    #[arg(long, default_value_t = 4, value_name = "N")]
    pub look_ahead: usize,

    /// Days per date shard of a reporting read (each shard is one query; 1 to 30)
    #[arg(long, default_value_t = 7, value_name = "DAYS")]
    pub shard_days: u32,
}

/// The API `conversions list` reads from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ReadApi {
    /// A report on the `conversion` resource of the Search Ads 360 Reporting API
    Reporting,
    /// The legacy v2 conversion.get / getByCustomerId (deprecated by Google)
    V2,
}

/// Input format of `conversions upload`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum InputFormat {
    /// Comma-separated values with a header line
    Csv,
    /// One JSON object per line
    Jsonl,
}

/// `apictl ads conversions upload`.
#[derive(Debug, Args)]
pub struct UploadArgs {
    /// The file: CSV, or JSON lines (.jsonl, .ndjson)
    #[arg(value_name = "FILE")]
    pub file: PathBuf,

    /// Input format [default: from the file name, else from the first character]
    #[arg(long, value_enum)]
    pub format: Option<InputFormat>,

    /// Update existing conversions (by conversionId and conversionTimestamp) instead of inserting
    #[arg(long)]
    pub update: bool,

    /// Conversions per request (1 to 1000)
    #[arg(long, default_value_t = sa360_video_sdk::search_ads::DEFAULT_BATCH_SIZE, value_name = "N")]
    pub batch_size: usize,

    /// Requests in flight at once (1 to 64)
    #[arg(long, default_value_t = 4, value_name = "N")]
    pub concurrency: usize,

    /// Validate the file only; send nothing
    #[arg(long)]
    pub dry_run: bool,

    /// Where to write the rejected rows, each with its own columns plus line, code, reason; fix
    /// and upload that file again [default: FILE.rejected.csv, or .jsonl for JSON lines]
    #[arg(long, value_name = "PATH")]
    pub rejected: Option<PathBuf>,

    /// Continue an interrupted upload: send only the rows its journal has no definite outcome for
    #[arg(long, conflicts_with_all = ["restart", "dry_run"])]
    pub resume: bool,

    /// Upload the whole file again, removing its journal (of an interrupted or a finished upload)
    #[arg(long, conflicts_with = "dry_run")]
    pub restart: bool,

    /// Keep the journal here instead of FILE.journal (for a file in a read-only directory); the
    /// rejected rows then go beside it by default
    #[arg(long, value_name = "PATH", conflicts_with = "dry_run")]
    pub journal: Option<PathBuf>,
}

/// `apictl ads availability`.
#[derive(Debug, Args)]
#[command(group(ArgGroup::new("activity").required(true).multiple(true).args(["segmentation_id", "segmentation_name"])))]
pub struct AvailabilityArgs {
    /// Floodlight activity id (repeatable)
    #[arg(long, value_name = "ID")]
    pub segmentation_id: Vec<String>,

    /// Floodlight activity name (repeatable)
    #[arg(long, value_name = "NAME")]
    pub segmentation_name: Vec<String>,

    /// Everything up to this time was uploaded: RFC 3339 or epoch milliseconds [default: now]
    #[arg(long, value_name = "TIME")]
    pub until: Option<String>,
}

/// `apictl ads id-mapping`.
#[derive(Debug, Args)]
pub struct IdMappingArgs {
    /// The file to write (written as FILE.part, renamed when complete)
    #[arg(short, long, value_name = "FILE")]
    pub output: PathBuf,
}

/// How `ads report` writes rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ReportFormat {
    /// Comma-separated values with a header of the selected fields
    Csv,
    /// One JSON object per line, keyed by the selected fields
    Jsonl,
    /// Aligned columns for reading (at most 10000 rows)
    Table,
}

/// `apictl ads report`.
#[derive(Debug, Args)]
#[command(group(ArgGroup::new("source").required(true).args(["query", "query_file"])))]
pub struct ReportQueryArgs {
    /// The query, in the Reporting API's query language (SELECT … FROM … WHERE …)
    #[arg(long, value_name = "QUERY")]
    pub query: Option<String>,

    /// Read the query from this file (`-` for stdin)
    #[arg(long, value_name = "FILE")]
    pub query_file: Option<PathBuf>,

    /// Output format [default: csv; jsonl with --json]
    #[arg(long, value_enum)]
    pub format: Option<ReportFormat>,

    /// Write to this file instead of stdout
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,

    /// Rows per request, 1 to 10000 [default: 10000]
    #[arg(long, value_name = "N")]
    pub page_size: Option<u32>,

    /// Pages fetched ahead of the output, 1 to 16
    #[arg(long, default_value_t = 2, value_name = "N")]
    pub look_ahead: usize,

    /// Send names apictl's field catalogue does not have as they are, even one near a known name
    /// (a field Google added after this release); by default such a name is refused as a typo,
    /// and any other unknown name sent with a warning
    #[arg(long)]
    pub send_unknown_fields: bool,

    /// Add the summary row (the selected metrics over all rows) as the last row; the report is
    /// then read with one searchStream request and held whole (at most 1000000 rows)
    #[arg(long, conflicts_with_all = ["count", "validate_only"])]
    pub summary: bool,

    /// Print only how many rows the report has (one request for one row)
    #[arg(long, conflicts_with = "validate_only")]
    pub count: bool,

    /// Ask the service to check the query without running it
    #[arg(long)]
    pub validate_only: bool,
}

/// `apictl ads fields`.
#[derive(Debug, Args)]
pub struct FieldsArgs {
    /// Only fields whose name contains this text (case-insensitive), e.g. `campaign.` or `clicks`
    #[arg(value_name = "PATTERN")]
    pub pattern: Option<String>,

    /// Only fields `FROM RESOURCE` may select, e.g. `campaign` or `keyword_view`
    #[arg(long, value_name = "RESOURCE")]
    pub from: Option<String>,
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory as _;

    /// No option that an environment variable can set is required by clap,
    /// so no usage line shows one as required (the command checks it after
    /// the config file was read, naming the flag, the variable and the key).
    #[test]
    fn env_settable_options_are_never_required() {
        fn walk(command: &clap::Command, path: &str) {
            for arg in command.get_arguments() {
                if arg.get_env().is_some() {
                    assert!(
                        !arg.is_required_set(),
                        "{path} --{:?} is settable from the environment but required",
                        arg.get_long()
                    );
                }
            }
            for sub in command.get_subcommands() {
                walk(sub, &format!("{path} {}", sub.get_name()));
            }
        }
        let mut cli = super::Cli::command();
        cli.build();
        walk(&cli, "apictl");
    }
}

//! `apictl sandbox`: both fakes in the foreground.

use std::io::Write as _;

use sa360_video_client_support::sh_quote;
use sa360_video_fakes::{FakeServices, SearchAdsFake, VideoSessionConfig, VideoSessionFake};

use crate::cli::{GlobalArgs, SandboxArgs};
use crate::error::{AppError, AppResult};

/// The sandbox's `authorized_user` file, in a directory of this sandbox's own (under the state
/// directory) while it runs, so sandboxes side by side never share or delete each other's.
const CREDENTIALS_FILE: &str = "sandbox-authorized-user.json";

/// Seeded conversions per day of the sandbox (the fake's default start, 2024-01-01).
const CONVERSIONS_PER_DAY: u64 = 100;

/// Enough seeded conversions per account to run from 2024-01-01 through today, so the
/// Reporting API's 60-day window has data and older ranges still read through v2.
pub fn conversions_until_today() -> u64 {
    let today = chrono::DateTime::<chrono::Utc>::from(std::time::SystemTime::now()).date_naive();
    let start = chrono::NaiveDate::from_ymd_opt(2024, 1, 1).unwrap_or(today);
    let days = u64::try_from((today - start).num_days() + 1)
        .unwrap_or(1)
        .max(1);
    days * CONVERSIONS_PER_DAY
}

/// The video fake's demo data of `seed`, with secret keys of this sandbox's own: the lockout
/// count is kept per account (secret key and user name, DECISIONS VS-20), so a new sandbox's
/// demo account never inherits the failed logins of another sandbox, running or gone.
fn own_accounts(seed: u64, port: u16) -> AppResult<VideoSessionConfig> {
    let mut own = [0u8; 8];
    ring::rand::SecureRandom::fill(&ring::rand::SystemRandom::new(), &mut own)
        .map_err(|_| AppError::new("the system's random number generator failed"))?;
    let own = u64::from_be_bytes(own);
    let mut config = VideoSessionConfig::seeded(seed);
    for domain in &mut config.domains {
        domain.secret_key = format!("{}-{own:016x}", domain.secret_key);
    }
    config.port = port;
    Ok(config)
}

/// Serves both fakes until Ctrl-C. The connection settings go to stdout first
/// (`NAME='value'` lines, as the `sa360-video-fakes` binary prints them, then the
/// sign-in settings: `GOOGLE_APPLICATION_CREDENTIALS` naming an
/// `authorized_user` file for the fake, `SEARCH_ADS_CLIENT_ID`,
/// `SEARCH_ADS_CLIENT_SECRET`, `SEARCH_ADS_AUTH_URL`, `SEARCH_ADS_REVOKE_URL`);
/// the hint goes to stderr.
pub async fn run(global: &GlobalArgs, args: &SandboxArgs) -> AppResult<u8> {
    let state = crate::config::state_dir(global.state_dir.as_deref())?;
    let services = FakeServices::builder()
        .search_ads(
            SearchAdsFake::builder()
                .seed(args.seed)
                .port(args.search_ads_port)
                .conversions_per_account(conversions_until_today())
                .conversions_per_day(CONVERSIONS_PER_DAY),
        )
        .video(VideoSessionFake::builder().config(own_accounts(args.seed, args.video_port)?))
        .start()
        .await
        .map_err(|e| {
            AppError::new(format!("could not start the fakes: {e}")).hint(
                "choose other ports with --search-ads-port and --video-port, or 0 for free ones",
            )
        })?;
    // One directory per sandbox (mode 0700, removed when it stops): parallel CI jobs or two
    // terminals each get their own credentials file.
    sa360_video_private_file::ensure_dir(&state).map_err(|e| {
        AppError::new(e.to_string())
            .hint("choose a state directory only you can use with --state-dir or APICTL_STATE_DIR")
    })?;
    let instance = tempfile::Builder::new()
        .prefix("sandbox-")
        .tempdir_in(&state)
        .map_err(|e| {
            AppError::new(format!(
                "cannot create the sandbox's directory in {}: {e}",
                state.display()
            ))
            .hint("choose a writable state directory with --state-dir or APICTL_STATE_DIR")
        })?;
    let credentials = instance.path().join(CREDENTIALS_FILE);
    crate::state::write_private(
        &credentials,
        services.search_ads.authorized_user_json().as_bytes(),
    )?;
    let user = services.search_ads.authorized_user();
    let mut settings = services.env_vars();
    settings.extend([
        (
            "GOOGLE_APPLICATION_CREDENTIALS",
            credentials.display().to_string(),
        ),
        ("SEARCH_ADS_CLIENT_ID", user.client_id.clone()),
        ("SEARCH_ADS_CLIENT_SECRET", user.client_secret.clone()),
        ("SEARCH_ADS_AUTH_URL", services.search_ads.authorize_url()),
        ("SEARCH_ADS_REVOKE_URL", services.search_ads.revoke_url()),
    ]);
    if global.json {
        // The same settings as one JSON object of NAME: value.
        let object: serde_json::Map<String, serde_json::Value> = settings
            .into_iter()
            .map(|(name, value)| (name.to_owned(), serde_json::Value::String(value)))
            .collect();
        crate::context::print_json(&serde_json::Value::Object(object))?;
    } else {
        let script: String = settings
            .iter()
            .map(|(name, value)| format!("{name}={}\n", sh_quote(value)))
            .collect();
        let mut out = std::io::stdout().lock();
        out.write_all(script.as_bytes())
            .and_then(|()| out.flush())
            .map_err(|e| crate::output::stdout_error(&e))?;
    }
    crate::output::note!(
        "apictl sandbox: search ads fake at {}, video session fake at {}",
        services.search_ads.base_url(),
        services.video.base_url()
    );
    crate::output::note!(
        "apictl sandbox: this sandbox's credentials file is {} (removed when it stops)",
        credentials.display()
    );
    crate::output::note!("Load the settings above in another shell, for example:");
    crate::output::note!(
        "    apictl sandbox > sandbox.env &   then   set -a; . ./sandbox.env; set +a"
    );
    crate::output::note!("and try:");
    crate::output::note!("    apictl video login");
    crate::output::note!(
        "    apictl video invite --sms +12015550123 --country US --mic on --camera front"
    );
    crate::output::note!(
        "    apictl ads conversions list --api v2 --from 2024-01-01 --to 2024-01-31 --format csv"
    );
    crate::output::note!(
        "    apictl ads conversions list --from <a date in the last 60 days> --to <today>"
    );
    crate::output::note!("    apictl ads customers");
    crate::output::note!("    apictl ads saved-columns");
    crate::output::note!(
        "Sign in with a Google account as on the real service (unset SEARCH_ADS_TOKEN first):"
    );
    crate::output::note!("    apictl auth login --no-browser    then    apictl auth status");
    crate::output::note!("Ctrl-C stops the fakes.");
    tokio::signal::ctrl_c()
        .await
        .map_err(|e| AppError::new(format!("cannot wait for Ctrl-C: {e}")))?;
    services.shutdown().await;
    // Only this sandbox's own directory goes.
    drop(instance);
    crate::output::note!("apictl sandbox: stopped");
    Ok(0)
}

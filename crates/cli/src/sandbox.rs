//! `apictl sandbox`: both fakes in the foreground.

use std::io::Write as _;

use fake_services::{FakeServices, SearchAdsFake, VideoSessionFake};

use crate::cli::SandboxArgs;
use crate::error::{AppError, AppResult};

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

/// Serves both fakes until Ctrl-C. The connection settings go to stdout first
/// (`NAME='value'` lines, as the `fake-services` binary prints them); the hint
/// goes to stderr.
pub async fn run(args: &SandboxArgs) -> AppResult<u8> {
    let services = FakeServices::builder()
        .search_ads(
            SearchAdsFake::builder()
                .seed(args.seed)
                .port(args.search_ads_port)
                .conversions_per_account(conversions_until_today())
                .conversions_per_day(CONVERSIONS_PER_DAY),
        )
        .video(
            VideoSessionFake::builder()
                .seed(args.seed)
                .port(args.video_port),
        )
        .start()
        .await
        .map_err(|e| {
            AppError::new(format!("could not start the fakes: {e}")).hint(
                "choose other ports with --search-ads-port and --video-port, or 0 for free ones",
            )
        })?;
    {
        let mut out = std::io::stdout().lock();
        out.write_all(services.env_script().as_bytes())
            .and_then(|()| out.flush())
            .map_err(|e| AppError::new(format!("cannot write to stdout: {e}")))?;
    }
    eprintln!(
        "apictl sandbox: search ads fake at {}, video session fake at {}",
        services.search_ads.base_url(),
        services.video.base_url()
    );
    eprintln!("Load the settings above in another shell, for example:");
    eprintln!("    apictl sandbox > sandbox.env &   then   set -a; . ./sandbox.env; set +a");
    eprintln!("and try:");
    eprintln!("    apictl video login");
    eprintln!("    apictl video invite --sms +15550100199 --country US --mic on --camera front");
    eprintln!(
        "    apictl ads conversions list --api v2 --from 2024-01-01 --to 2024-01-31 --format csv"
    );
    eprintln!("    apictl ads conversions list --from <a date in the last 60 days> --to <today>");
    eprintln!("    apictl ads customers");
    eprintln!("    apictl ads saved-columns");
    eprintln!("Ctrl-C stops the fakes.");
    tokio::signal::ctrl_c()
        .await
        .map_err(|e| AppError::new(format!("cannot wait for Ctrl-C: {e}")))?;
    services.shutdown().await;
    eprintln!("apictl sandbox: stopped");
    Ok(0)
}

//! `sa360-video-fakes`: serves the search ads and video session fakes on loopback.
//!
//! The first lines on stdout are `NAME=value` assignments quoted for `sh`, so a shell can
//! `eval "$(sa360-video-fakes ... | head -n 12)"`-style pick them up; logs go to stderr. Stops on Ctrl-C.

use std::io::Write as _;
use std::time::Duration;

use anyhow::Context as _;
use clap::{Parser, ValueEnum};
use sa360_video_fakes::search_ads::IdMappingSize;
use sa360_video_fakes::{
    DetailsCut, FakeServices, Faults, SearchAdsFake, Truncation, VideoSessionFake,
};

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum FaultTarget {
    /// Both fakes.
    Both,
    /// Only the search ads fake.
    SearchAds,
    /// Only the video session fake.
    Video,
}

/// Local fakes of the search ads and video session services.
#[derive(Debug, Parser)]
#[command(name = "sa360-video-fakes", version, about)]
struct Args {
    /// Port of the search ads fake on 127.0.0.1 (0 picks a free one).
    #[arg(long, default_value_t = 0, env = "FAKE_SEARCH_ADS_PORT")]
    search_ads_port: u16,
    /// Port of the video session fake on 127.0.0.1 (0 picks a free one).
    #[arg(long, default_value_t = 0, env = "FAKE_VIDEO_PORT")]
    video_port: u16,
    /// Seed of all generated data (conversions, ID mappings, demo credentials, tokens).
    #[arg(long, default_value_t = 42)]
    seed: u64,
    /// Seeded conversions per engine account (generated on demand; millions are fine).
    #[arg(long, default_value_t = 10_000)]
    conversions_per_account: u64,
    /// Seeded conversions per day, from --start-date on.
    #[arg(long, default_value_t = 100)]
    conversions_per_day: u64,
    /// Day of the first seeded conversion, yyyy-mm-dd.
    #[arg(long, default_value = "2024-01-01")]
    start_date: chrono::NaiveDate,
    /// Data rows of each advertiser's ID-mapping file.
    #[arg(long, conflicts_with = "id_mapping_bytes")]
    id_mapping_rows: Option<u64>,
    /// Size of each advertiser's ID-mapping file in bytes (whole rows, at most this many bytes).
    #[arg(long)]
    id_mapping_bytes: Option<u64>,
    /// Synthetic campaigns (one ad group each, seeded metrics, no conversions) added to each
    /// account's seeded ones in the Reporting API's customer, campaign and ad group reports, for
    /// load tests; at most 10000.
    #[arg(long, default_value_t = 0, env = "FAKE_REPORT_CAMPAIGNS")]
    report_campaigns: u64,
    /// Bench mode: insert checks and answers every conversion but keeps none (no memory per
    /// row; reads, updates and the ledger do not see them; a repeat is refused only within one
    /// request or of a seeded conversion).
    #[arg(long)]
    forget_conversions: bool,
    /// The always-valid search ads bearer token.
    #[arg(long, default_value = "fake-sa360-dev-token")]
    dev_token: String,
    /// Lifetime of access tokens from the token endpoint, in seconds.
    #[arg(long, default_value_t = 3600)]
    token_lifetime_secs: u64,
    /// Seed of the fault generator.
    #[arg(long, default_value_t = 0)]
    fault_seed: u64,
    /// Which fakes the fault flags apply to.
    #[arg(long, value_enum, default_value_t = FaultTarget::Both)]
    fault_target: FaultTarget,
    /// Latency added to every answer, in milliseconds.
    #[arg(long, default_value_t = 0)]
    latency_ms: u64,
    /// Random extra latency up to this many milliseconds.
    #[arg(long, default_value_t = 0)]
    latency_jitter_ms: u64,
    /// Share of answers replaced by 429 with Retry-After (0..1).
    #[arg(long, default_value_t = 0.0)]
    p_429: f64,
    /// Share of answers replaced by 403 userRateLimitExceeded (0..1; search ads only).
    #[arg(long, default_value_t = 0.0)]
    p_403_rate_limit: f64,
    /// Share of answers replaced by 500 (0..1).
    #[arg(long, default_value_t = 0.0)]
    p_500: f64,
    /// Share of answers replaced by 503 with Retry-After (0..1).
    #[arg(long, default_value_t = 0.0)]
    p_503: f64,
    /// Share of connections dropped before the answer (0..1).
    #[arg(long, default_value_t = 0.0)]
    p_drop_before: f64,
    /// Share of answers aborted in the middle of the body (0..1).
    #[arg(long, default_value_t = 0.0)]
    p_drop_mid_body: f64,
    /// Share of ID-mapping downloads truncated mid-row (0..1).
    #[arg(long, default_value_t = 0.0)]
    p_truncated_csv: f64,
    /// How truncated downloads end.
    #[arg(long, value_enum, default_value_t = Truncation::Abort)]
    truncation: Truncation,
    /// Share of conversion-batch 400 answers whose list of details is cut short (0..1).
    #[arg(long, default_value_t = 0.0)]
    p_truncated_details: f64,
    /// Where truncated lists of details are cut.
    #[arg(long, value_enum, default_value_t = DetailsCut::InsideCode)]
    details_cut: DetailsCut,
    /// Retry-After of injected 429 and 503 answers, in seconds.
    #[arg(long, default_value_t = 1)]
    retry_after_secs: u64,
}

impl Args {
    fn faults(&self) -> Faults {
        Faults {
            seed: self.fault_seed,
            latency: Duration::from_millis(self.latency_ms),
            latency_jitter: Duration::from_millis(self.latency_jitter_ms),
            rate_limited: self.p_429,
            rate_limited_403: self.p_403_rate_limit,
            internal_error: self.p_500,
            unavailable: self.p_503,
            drop_before_response: self.p_drop_before,
            drop_mid_body: self.p_drop_mid_body,
            truncated_csv: self.p_truncated_csv,
            truncation: self.truncation,
            truncated_details: self.p_truncated_details,
            details_cut: self.details_cut,
            retry_after: Duration::from_secs(self.retry_after_secs),
        }
    }
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info")),
        )
        .init();
    let args = Args::parse();
    let faults = args.faults();
    faults.validate().map_err(anyhow::Error::msg)?;
    let none = Faults::seeded(args.fault_seed);
    let (ads_faults, video_faults) = match args.fault_target {
        FaultTarget::Both => (faults.clone(), faults),
        FaultTarget::SearchAds => (faults, none),
        FaultTarget::Video => (none, faults),
    };
    let id_mapping = match (args.id_mapping_rows, args.id_mapping_bytes) {
        (_, Some(bytes)) => IdMappingSize::Bytes(bytes),
        (Some(rows), None) => IdMappingSize::Rows(rows),
        (None, None) => IdMappingSize::Rows(10_000),
    };
    let services = FakeServices::builder()
        .search_ads(
            SearchAdsFake::builder()
                .seed(args.seed)
                .port(args.search_ads_port)
                .conversions_per_account(args.conversions_per_account)
                .conversions_per_day(args.conversions_per_day)
                .start_date(args.start_date)
                .id_mapping_size(id_mapping)
                .report_campaigns(args.report_campaigns)
                .forget_conversions(args.forget_conversions)
                .dev_token(args.dev_token.clone())
                .token_lifetime(Duration::from_secs(args.token_lifetime_secs))
                .faults(ads_faults),
        )
        .video(
            VideoSessionFake::builder()
                .seed(args.seed)
                .port(args.video_port)
                .faults(video_faults),
        )
        .start()
        .await
        .context("starting the fakes")?;
    {
        let mut stdout = std::io::stdout().lock();
        stdout.write_all(services.env_script().as_bytes())?;
        stdout.flush()?;
    }
    tracing::info!(
        search_ads = services.search_ads.base_url(),
        video = services.video.base_url(),
        "fakes running; Ctrl-C stops them"
    );
    tokio::signal::ctrl_c()
        .await
        .context("waiting for Ctrl-C")?;
    tracing::info!("shutting down");
    services.shutdown().await;
    Ok(())
}

//! One timed run of one variant of one scenario: what `bench-runner sample`
//! does in its own process, and what the tests call in-process.

use std::fmt;

use anyhow::{Result, bail};
use serde::{Deserialize, Serialize};

use sa360_video_sdk::search_ads::reporting::SearchOptions;
use sa360_video_sdk::search_ads::{ListOptions, WriteOptions, reporting::ReportOptions};

use crate::logins;
use crate::reporting;
use crate::scenarios::{self, Measurement, SearchAdsTarget, VideoTarget};
use crate::search;

/// Conversions per request of the sequential upload loop with added latency: the most one
/// request may carry ([`sa360_video_sdk::search_ads::MAX_BATCH_SIZE`], SA-10), as a competent user's loop
/// sends them.
pub const UPLOAD_LOOP_BATCH: usize = sa360_video_sdk::search_ads::MAX_BATCH_SIZE;

/// A scenario whose client side runs in the runner (everything but
/// `generate`, which the suite times itself).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum ClientScenario {
    /// Read conversions from a fake without added latency, one page in flight on both sides.
    Read,
    /// Read conversions from a fake with 20 ms per answer; SDK: `ListOptions::default()`,
    /// baseline: a sequential loop at the largest page size.
    ReadLatency,
    /// Upload conversions to a fresh fake with 20 ms per answer; SDK:
    /// `insert(..).send()` with `WriteOptions::default()`, baseline: a sequential loop of
    /// [`UPLOAD_LOOP_BATCH`] conversions per request.
    Upload,
    /// Upload conversions to a fresh fake without added latency, one batch of the default size in
    /// flight on both sides.
    UploadOverhead,
    /// Upload many conversions (1 000 000 in the full suite) to a fresh fake without added
    /// latency: baseline, the collected path (the whole input as a `Vec`, one report at the end);
    /// SDK, `insert(iterator).stream()` (conversions generated as they are sent, each batch's
    /// outcomes dropped once counted). Peak RSS is the point.
    UploadStream,
    /// A streamed upload kept in a journal (10 000 000 conversions in the full suite) against
    /// the same at a tenth of the rows (the baseline): per-row rate and peak RSS as the rows grow.
    UploadStreamJournal,
    /// Download the ID-mapping file.
    IdMapping,
    /// Log in again and again.
    Logins,
    /// Log in again and again through the SDK; baseline: a `MemoryStore`,
    /// SDK: a `RedisStore` (on `BENCH_REDIS_URL`).
    LoginsRedis,
    /// `logins-redis` against a fake with 20 ms per answer (a service that is not on loopback):
    /// what a store's round trips cost beside a login's.
    LoginsRedisLatency,
    /// Read a conversion report (Reporting API) from a fake without added latency: both read the
    /// same 7-day queries and pages of 10 000 one after the other (SDK: one shard in flight).
    Report,
    /// Read a conversion report from a fake with 20 ms per answer; SDK: `ReportOptions::default()`,
    /// baseline: a sequential loop of 30-day queries at the largest page size.
    ReportLatency,
    /// Read a report of any resource (`search`, rows into a caller's struct) from a fake without
    /// added latency; baseline: the generated type's loop over the same pages.
    Search,
    /// The same with 20 ms per answer, the SDK at `SearchOptions::default()`.
    SearchLatency,
    /// The same with 20 ms per answer, the SDK reading each query whole with `send`: one
    /// `searchStream` request.
    SearchStreamLatency,
}

impl ClientScenario {
    /// Its name on the command line and in JSON.
    pub fn name(self) -> &'static str {
        match self {
            ClientScenario::Read => "read",
            ClientScenario::ReadLatency => "read-latency",
            ClientScenario::Upload => "upload",
            ClientScenario::UploadOverhead => "upload-overhead",
            ClientScenario::UploadStream => "upload-stream",
            ClientScenario::UploadStreamJournal => "upload-stream-journal",
            ClientScenario::IdMapping => "id-mapping",
            ClientScenario::Logins => "logins",
            ClientScenario::LoginsRedis => "logins-redis",
            ClientScenario::LoginsRedisLatency => "logins-redis-latency",
            ClientScenario::Report => "report",
            ClientScenario::ReportLatency => "report-latency",
            ClientScenario::Search => "search",
            ClientScenario::SearchLatency => "search-latency",
            ClientScenario::SearchStreamLatency => "search-stream-latency",
        }
    }
}

impl fmt::Display for ClientScenario {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.name())
    }
}

/// Which side of the comparison.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum Variant {
    /// The plain or generated-client way.
    Baseline,
    /// The SDK.
    Sdk,
    /// Both sides in this one process, in alternating blocks (the scenarios `suite/scenarios.rs` runs
    /// paired: `logins`); see [`run_paired`].
    Paired,
}

impl Variant {
    /// Its name on the command line and in JSON.
    pub fn name(self) -> &'static str {
        match self {
            Variant::Baseline => "baseline",
            Variant::Sdk => "sdk",
            Variant::Paired => "paired",
        }
    }
}

impl fmt::Display for Variant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.name())
    }
}

/// One run to make.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SampleSpec {
    /// The scenario.
    pub scenario: ClientScenario,
    /// The variant.
    pub variant: Variant,
    /// Conversions to upload or logins to make (reads read everything the
    /// fake has; the ID mapping downloads the whole file).
    pub count: u64,
    /// Makes uploaded conversion ids unique per run.
    pub tag: String,
    /// Pages in flight of an SDK read, or shards in flight of an SDK report, instead of the
    /// scenario's; for experiments.
    pub look_ahead: Option<usize>,
    /// Items per block of a [`Variant::Paired`] sample (the scenario's; at least 1).
    pub block: Option<u64>,
}

/// Where the runs go.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Targets {
    /// The search ads fake.
    pub search_ads: SearchAdsTarget,
    /// The video fake.
    pub video: VideoTarget,
}

/// Runs one sample in this process. The upload's input is built before the
/// clock starts.
pub async fn run(spec: &SampleSpec, targets: &Targets) -> Result<Measurement> {
    let sa = &targets.search_ads;
    let page = scenarios::PAGE_SIZE;
    let count = usize::try_from(spec.count)?;
    match (spec.scenario, spec.variant) {
        (ClientScenario::Read, Variant::Baseline) => scenarios::read_baseline(sa, page).await,
        (ClientScenario::Read, Variant::Sdk) => {
            scenarios::read_sdk(sa, page, spec.look_ahead.unwrap_or(1)).await
        }
        (ClientScenario::ReadLatency, Variant::Baseline) => {
            scenarios::read_baseline(sa, sa360_video_sdk::search_ads::MAX_PAGE_SIZE).await
        }
        (ClientScenario::ReadLatency, Variant::Sdk) => {
            let defaults = ListOptions::default();
            let look_ahead = spec.look_ahead.unwrap_or(defaults.paging.look_ahead);
            scenarios::read_sdk(sa, defaults.paging.page_size, look_ahead).await
        }
        (ClientScenario::Upload, Variant::Baseline) => {
            let input = scenarios::upload_input_wire(sa, &spec.tag, count);
            scenarios::upload_baseline(sa, &input, UPLOAD_LOOP_BATCH).await
        }
        (ClientScenario::Upload, Variant::Sdk) => {
            let input = scenarios::upload_input_sdk(sa, &spec.tag, count)?;
            scenarios::upload_sdk(sa, &spec.tag, &input, WriteOptions::default(), false).await
        }
        (ClientScenario::UploadOverhead, Variant::Baseline) => {
            let input = scenarios::upload_input_wire(sa, &spec.tag, count);
            scenarios::upload_baseline(sa, &input, scenarios::BATCH_SIZE).await
        }
        (ClientScenario::UploadOverhead, Variant::Sdk) => {
            let input = scenarios::upload_input_sdk(sa, &spec.tag, count)?;
            let options = WriteOptions::default()
                .batch_size(scenarios::BATCH_SIZE)
                .concurrency(1);
            scenarios::upload_sdk(sa, &spec.tag, &input, options, true).await
        }
        (ClientScenario::UploadStream, Variant::Baseline) => {
            let input = scenarios::upload_input_sdk(sa, &spec.tag, count)?;
            scenarios::upload_sdk(sa, &spec.tag, &input, scenarios::stream_options(), false).await
        }
        (ClientScenario::UploadStream, Variant::Sdk) => {
            scenarios::upload_stream(sa, &spec.tag, count, scenarios::stream_options(), false).await
        }
        (ClientScenario::UploadStreamJournal, Variant::Baseline | Variant::Sdk) => {
            scenarios::upload_stream(sa, &spec.tag, count, scenarios::stream_options(), true).await
        }
        (ClientScenario::IdMapping, Variant::Baseline) => scenarios::id_mapping_baseline(sa).await,
        (ClientScenario::IdMapping, Variant::Sdk) => scenarios::id_mapping_sdk(sa).await,
        (ClientScenario::Logins, Variant::Baseline) => {
            logins::logins_baseline(&targets.video, spec.count).await
        }
        (ClientScenario::LoginsRedis | ClientScenario::LoginsRedisLatency, Variant::Baseline) => {
            logins::logins_memory_store(&targets.video, spec.count).await
        }
        (ClientScenario::LoginsRedis | ClientScenario::LoginsRedisLatency, Variant::Sdk) => {
            logins::logins_redis_store(&targets.video, spec.count).await
        }
        (ClientScenario::Logins, Variant::Sdk) => {
            logins::logins_sdk(&targets.video, spec.count).await
        }
        (scenario, Variant::Paired) => {
            bail!("{scenario} paired: a paired sample prints both sides (sample::run_paired)")
        }
        (ClientScenario::Report, Variant::Baseline) => {
            reporting::report_baseline(
                sa,
                reporting::REPORT_PAGE_SIZE,
                reporting::REPORT_SHARD_DAYS,
            )
            .await
        }
        (ClientScenario::Report, Variant::Sdk) => {
            // The same queries and pages one after the other: one shard in flight.
            reporting::report_sdk(
                sa,
                reporting::REPORT_PAGE_SIZE,
                reporting::REPORT_SHARD_DAYS,
                spec.look_ahead.unwrap_or(1),
            )
            .await
        }
        (ClientScenario::ReportLatency, Variant::Baseline) => {
            reporting::report_baseline(
                sa,
                reporting::REPORT_PAGE_SIZE,
                reporting::REPORT_CHUNK_DAYS,
            )
            .await
        }
        (
            ClientScenario::Search
            | ClientScenario::SearchLatency
            | ClientScenario::SearchStreamLatency,
            Variant::Baseline,
        ) => search::search_baseline(sa).await,
        (ClientScenario::SearchStreamLatency, Variant::Sdk) => search::search_stream_sdk(sa).await,
        (ClientScenario::Search | ClientScenario::SearchLatency, Variant::Sdk) => {
            let defaults = SearchOptions::default();
            let look_ahead = spec.look_ahead.unwrap_or(defaults.paging.look_ahead);
            search::search_sdk(sa, defaults.look_ahead(look_ahead)).await
        }
        (ClientScenario::ReportLatency, Variant::Sdk) => {
            let defaults = ReportOptions::default();
            reporting::report_sdk(
                sa,
                defaults.paging.page_size,
                defaults.shard_days,
                spec.look_ahead.unwrap_or(defaults.paging.look_ahead),
            )
            .await
        }
    }
}

/// Both sides of a sample run in one process (a [`Variant::Paired`] sample).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PairedMeasurement {
    /// The baseline's blocks, summed.
    pub baseline: Measurement,
    /// The SDK's blocks, summed.
    pub sdk: Measurement,
}

/// Runs both sides of `spec.scenario` in this process, in alternating blocks; only `logins` has
/// a paired form (see [`crate::logins`] for why).
pub async fn run_paired(spec: &SampleSpec, targets: &Targets) -> Result<PairedMeasurement> {
    match spec.scenario {
        ClientScenario::Logins => {
            let block = spec.block.unwrap_or(logins::LOGIN_BLOCK);
            let (baseline, sdk) = logins::logins_paired(&targets.video, spec.count, block).await?;
            Ok(PairedMeasurement { baseline, sdk })
        }
        other => bail!("{other} has no paired form (only logins)"),
    }
}

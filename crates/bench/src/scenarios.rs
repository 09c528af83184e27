//! The client side of each scenario, once per variant: the work that is timed.
//!
//! Every function builds its HTTP client first (not timed), then times the
//! work from the first request to the last byte consumed. Both variants of a
//! scenario use an HTTP/1.1 keep-alive `reqwest::Client` from
//! [`sa360_video_client_support::http_client_builder`], the builder the SDK itself
//! starts from, and consume every item (rows are passed to
//! [`std::hint::black_box`] and counted).
//!
//! | scenario | baseline | SDK |
//! |---|---|---|
//! | [`read_baseline`] / [`read_sdk`] | `GET` page after page, `serde_json::from_slice` into the generated `ConversionList` | `SearchAdsClient::list_conversions` stream (typed `Conversion`s) |
//! | [`upload_baseline`] / [`upload_sdk`] | `POST` batch after batch of generated wire types, answer parsed into `ConversionList` | `SearchAdsClient::insert(..).options(..).send()` (validation, batching, bounded concurrency, report) |
//! | [`id_mapping_baseline`] / [`id_mapping_sdk`] | raw body chunks, counted and dropped | `SearchAdsClient::id_mapping` typed row stream |
//!
//! The login scenarios are in [`crate::logins`].

use std::hint::black_box;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context as _, Result, bail, ensure};
use chrono::{DateTime, NaiveDate};
use futures::TryStreamExt as _;
use serde::{Deserialize, Serialize};

use sa360_v2_client::types as sa;
use sa360_video_sdk::search_ads::{
    AdvertiserId, AgencyId, Conversion, ConversionType, DateRange, EngineAccount, EngineAccountId,
    ListOptions, Micros, ProgressFn, SearchAdsClient, SegmentationId, StaticToken, WriteJournal,
    WriteOptions,
};

/// Conversions per read request in both variants (the API's maximum, SA-12).
pub const PAGE_SIZE: u32 = 1000;

/// Conversions per insert request in both variants: the SDK's default
/// ([`sa360_video_sdk::search_ads::DEFAULT_BATCH_SIZE`]).
pub const BATCH_SIZE: usize = sa360_video_sdk::search_ads::DEFAULT_BATCH_SIZE;

/// First day of the date range every read asks for.
pub const READ_START: (i32, u32, u32) = (2024, 1, 1);

/// Last day of the date range every read asks for (the fakes seed from
/// 2024-01-01 on; 200 000 conversions at 1 000 a day end in July 2024).
pub const READ_END: (i32, u32, u32) = (2030, 12, 31);

/// The Floodlight activity every uploaded conversion names (the fake's first).
pub const FLOODLIGHT_ACTIVITY: i64 = 551_234;

/// Total timeout of one request (both variants).
const REQUEST_TIMEOUT: Duration = Duration::from_secs(60);

/// Where the search ads API is and how to call it: the fake's `SEARCH_ADS_*`
/// lines.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SearchAdsTarget {
    /// `SEARCH_ADS_URL`, up to and including `/doubleclicksearch/v2`.
    pub base_url: String,
    /// `SEARCH_ADS_TOKEN`, a bearer token the fake always accepts.
    pub token: String,
    /// `SEARCH_ADS_AGENCY_ID`.
    pub agency_id: i64,
    /// `SEARCH_ADS_ADVERTISER_ID`.
    pub advertiser_id: i64,
    /// `SEARCH_ADS_ENGINE_ACCOUNT_ID`.
    pub engine_account_id: i64,
    /// `SEARCH_ADS_REPORTING_URL`, the Reporting API's server (without `/v0`).
    pub reporting_url: String,
    /// `SEARCH_ADS_CUSTOMER_ID`, the account's customer id in the Reporting API.
    pub customer_id: String,
}

/// Where the video session service is and the demo account to log in with:
/// the fake's `VIDEO_*` lines.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct VideoTarget {
    /// `VIDEO_SESSION_URL`.
    pub base_url: String,
    /// `VIDEO_SECRET_KEY`.
    pub secret_key: String,
    /// `VIDEO_USER`.
    pub user_name: String,
    /// `VIDEO_PASSWORD`.
    pub password: String,
    /// `BENCH_REDIS_URL`: the Redis server of the `logins-redis` scenario.
    pub redis_url: Option<String>,
}

/// What one timed run did.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Measurement {
    /// Items processed: conversions read or stored, logins, or bytes
    /// downloaded (ID mapping).
    pub units: u64,
    /// Rows parsed, where that differs from `units` (ID mapping: rows, while
    /// `units` are bytes).
    pub rows: u64,
    /// Wall-clock seconds from the first request to the last item consumed.
    pub seconds: f64,
    /// Peak resident set size of the process that ran it (`VmHWM`), in KiB,
    /// when measured.
    pub peak_rss_kib: Option<u64>,
}

impl Measurement {
    pub(crate) fn new(units: u64, rows: u64, elapsed: Duration) -> Self {
        Self {
            units,
            rows,
            seconds: elapsed.as_secs_f64(),
            peak_rss_kib: None,
        }
    }

    /// Units per second (0 for an empty run).
    pub fn rate(&self) -> f64 {
        if self.seconds > 0.0 {
            self.units as f64 / self.seconds
        } else {
            0.0
        }
    }
}

/// The peak resident set size of this process (`VmHWM` in
/// `/proc/self/status`), in KiB; `None` where there is no procfs.
pub fn peak_rss_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    status.lines().find_map(|line| {
        let rest = line.strip_prefix("VmHWM:")?;
        rest.trim().trim_end_matches("kB").trim().parse().ok()
    })
}

/// The plain HTTP client of the baselines: the same builder, timeouts and
/// connection reuse as the SDK's.
pub fn plain_client(total_timeout: bool) -> Result<reqwest::Client> {
    let builder = sa360_video_client_support::http_client_builder()
        .connect_timeout(Duration::from_secs(10))
        .read_timeout(Duration::from_secs(30));
    let builder = if total_timeout {
        builder.timeout(REQUEST_TIMEOUT)
    } else {
        builder
    };
    builder.build().context("building the plain HTTP client")
}

pub(crate) fn sdk_client(target: &SearchAdsTarget) -> Result<SearchAdsClient> {
    let http = sa360_video_sdk::http::HttpOptions::default().timeout(REQUEST_TIMEOUT);
    SearchAdsClient::builder(StaticToken::new(target.token.clone()))
        .base_url(&target.base_url)
        .reporting_base_url(&target.reporting_url)
        .http_options(http)
        .build()
        .context("building the SDK client")
}

fn day((y, m, d): (i32, u32, u32)) -> Result<NaiveDate> {
    NaiveDate::from_ymd_opt(y, m, d).with_context(|| format!("no such day {y}-{m}-{d}"))
}

fn yyyymmdd((y, m, d): (i32, u32, u32)) -> String {
    format!("{y:04}{m:02}{d:02}")
}

// ------------------------------------------------------------------ reads

/// Baseline read: one `GET` after the other with `startRow`/`rowCount`, each
/// answer read whole and parsed with `serde_json::from_slice` into the
/// generated `sa360_v2_client::types::ConversionList`, until a short page.
pub async fn read_baseline(target: &SearchAdsTarget, page_size: u32) -> Result<Measurement> {
    let http = plain_client(true)?;
    let url = format!(
        "{}/agency/{}/advertiser/{}/engine/{}/conversion",
        target.base_url, target.agency_id, target.advertiser_id, target.engine_account_id
    );
    let auth = format!("Bearer {}", target.token);
    let (start_date, end_date) = (yyyymmdd(READ_START), yyyymmdd(READ_END));
    let row_count = page_size.to_string();
    let started = Instant::now();
    let mut rows: u64 = 0;
    loop {
        let start_row = rows.to_string();
        let response = http
            .get(&url)
            .header(reqwest::header::AUTHORIZATION, &auth)
            .query(&[
                ("startDate", start_date.as_str()),
                ("endDate", end_date.as_str()),
                ("startRow", start_row.as_str()),
                ("rowCount", row_count.as_str()),
            ])
            .send()
            .await
            .context("conversion.get")?;
        let status = response.status();
        let body = response.bytes().await.context("conversion.get body")?;
        if !status.is_success() {
            bail!(
                "conversion.get answered {status}: {}",
                String::from_utf8_lossy(&body)
            );
        }
        let page: sa::ConversionList =
            serde_json::from_slice(&body).context("conversion.get JSON")?;
        let n = page.conversion.len() as u64;
        for conversion in page.conversion {
            black_box(conversion);
        }
        rows += n;
        if n < u64::from(page_size) {
            break;
        }
    }
    Ok(Measurement::new(rows, rows, started.elapsed()))
}

/// SDK read: [`SearchAdsClient::list_conversions`] with `page_size` and
/// `look_ahead`, every typed [`Conversion`] consumed.
pub async fn read_sdk(
    target: &SearchAdsTarget,
    page_size: u32,
    look_ahead: usize,
) -> Result<Measurement> {
    let client = sdk_client(target)?;
    let account = EngineAccount::new(
        AgencyId::new(target.agency_id),
        AdvertiserId::new(target.advertiser_id),
        EngineAccountId::new(target.engine_account_id),
    );
    let dates = DateRange::new(day(READ_START)?, day(READ_END)?)?;
    let options = ListOptions::default()
        .page_size(page_size)
        .look_ahead(look_ahead);
    let started = Instant::now();
    #[allow(deprecated)] // conversion.get is deprecated upstream; it is what we measure
    let mut stream = client
        .list_conversions(account, dates)
        .options(options)
        .stream();
    let mut rows: u64 = 0;
    while let Some(conversion) = stream.try_next().await? {
        black_box(conversion);
        rows += 1;
    }
    Ok(Measurement::new(rows, rows, started.elapsed()))
}

// ------------------------------------------------------------------ uploads

fn upload_timestamp_ms(i: usize) -> i64 {
    1_717_200_000_000 + i64::try_from(i).unwrap_or(i64::MAX / 2)
}

fn upload_id(tag: &str, i: usize) -> String {
    format!("bench-{tag}-{i:07}")
}

/// `count` conversions for the SDK, with ids unique per `tag`: agency,
/// advertiser, Floodlight activity, `TRANSACTION`, revenue and currency.
pub fn upload_input_sdk(
    target: &SearchAdsTarget,
    tag: &str,
    count: usize,
) -> Result<Vec<Conversion>> {
    (0..count)
        .map(|i| upload_conversion(target, tag, i))
        .collect()
}

/// Conversion `i` of an upload tagged `tag` (the SDK's type).
fn upload_conversion(target: &SearchAdsTarget, tag: &str, i: usize) -> Result<Conversion> {
    let when = DateTime::from_timestamp_millis(upload_timestamp_ms(i))
        .context("upload timestamp out of range")?;
    Ok(Conversion {
        agency_id: Some(AgencyId::new(target.agency_id)),
        advertiser_id: Some(AdvertiserId::new(target.advertiser_id)),
        segmentation_id: Some(SegmentationId::new(FLOODLIGHT_ACTIVITY)),
        conversion_type: Some(ConversionType::Transaction),
        revenue_micros: Some(Micros::new(19_990_000)),
        currency_code: Some("USD".to_owned()),
        ..Conversion::new(upload_id(tag, i), when)
    })
}

/// The batching of `upload-stream`: the largest batches (SA-10), 4 in flight.
pub fn stream_options() -> WriteOptions {
    WriteOptions::default()
        .batch_size(sa360_video_sdk::search_ads::MAX_BATCH_SIZE)
        .concurrency(4)
}

/// A fresh [`WriteJournal`] in a temporary directory (gone when the directory is dropped).
fn fresh_journal(tag: &str, count: usize) -> Result<(tempfile::TempDir, WriteJournal)> {
    let dir = tempfile::tempdir().context("a directory for the journal")?;
    let journal = WriteJournal::new(
        dir.path().join("upload.journal"),
        format!("bench {tag} {count}"),
    );
    Ok((dir, journal))
}

/// SDK streamed upload: `insert(iterator).options(..).stream()`, the conversions generated as
/// the stream asks for them and each batch's outcomes counted and dropped; every conversion must
/// come back stored. With `journal`, kept in a fresh [`WriteJournal`] (created before the clock
/// starts), so each row also goes through the duplicate check a resume of the journal replays.
pub async fn upload_stream(
    target: &SearchAdsTarget,
    tag: &str,
    count: usize,
    options: WriteOptions,
    journal: bool,
) -> Result<Measurement> {
    let client = sdk_client(target)?;
    // Timestamps grow with the index: when the last one is valid, all are (so the generator
    // below never drops a conversion; the count check at the end would catch it anyway).
    upload_conversion(target, tag, count.saturating_sub(1))?;
    let (_dir, journal) = journal
        .then(|| fresh_journal(tag, count))
        .transpose()?
        .unzip();
    let started = Instant::now();
    let rows = (0..count).filter_map(|i| upload_conversion(target, tag, i).ok());
    let mut insert = client.insert(rows).options(options);
    if let Some(journal) = journal {
        insert = insert.journal(journal);
    }
    let mut stream = insert.stream()?;
    let mut stored: u64 = 0;
    while let Some(batch) = futures::StreamExt::next(&mut stream).await {
        for (index, outcome) in batch.indexed() {
            ensure!(
                outcome.is_stored(),
                "conversion {index} was not stored: {outcome:?}"
            );
            stored += 1;
        }
    }
    let elapsed = started.elapsed();
    ensure!(
        stored == count as u64,
        "{stored} of {count} conversions came back"
    );
    Ok(Measurement::new(stored, stored, elapsed))
}

/// SDK upload of a slice: [`SearchAdsClient::insert`] with `options`, kept in a fresh
/// [`WriteJournal`] with `journal`; every conversion must come back stored.
pub async fn upload_sdk(
    target: &SearchAdsTarget,
    tag: &str,
    conversions: &[Conversion],
    options: WriteOptions,
    journal: bool,
) -> Result<Measurement> {
    let client = sdk_client(target)?;
    let (_dir, journal) = journal
        .then(|| fresh_journal(tag, conversions.len()))
        .transpose()?
        .unzip();
    let started = Instant::now();
    let mut insert = client.insert(conversions).options(options);
    if let Some(journal) = journal {
        insert = insert.journal(journal);
    }
    let report = insert.send().await?;
    let elapsed = started.elapsed();
    ensure!(
        report.all_stored(),
        "the upload was not all stored: {report}"
    );
    let stored = report.stored() as u64;
    Ok(Measurement::new(stored, stored, elapsed))
}

/// The same conversions as [`upload_input_sdk`] in the generated wire
/// type, for the baseline.
pub fn upload_input_wire(target: &SearchAdsTarget, tag: &str, count: usize) -> Vec<sa::Conversion> {
    (0..count)
        .map(|i| sa::Conversion {
            agency_id: Some(target.agency_id.into()),
            advertiser_id: Some(target.advertiser_id.into()),
            segmentation_id: Some(FLOODLIGHT_ACTIVITY.into()),
            segmentation_type: Some("FLOODLIGHT".to_owned()),
            type_: Some("TRANSACTION".to_owned()),
            revenue_micros: Some("19990000".to_owned()),
            currency_code: Some("USD".to_owned()),
            conversion_id: Some(upload_id(tag, i)),
            conversion_timestamp: Some(upload_timestamp_ms(i).to_string()),
            ..sa::Conversion::default()
        })
        .collect()
}

/// The insert body, borrowing its batch.
#[derive(Serialize)]
struct InsertBody<'a> {
    conversion: &'a [sa::Conversion],
}

/// Baseline upload: one `POST /conversion` after the other with
/// `batch_size` conversions each (`serde_json::to_vec` of the generated wire
/// types); each answer must be 200 and is parsed into `ConversionList`.
pub async fn upload_baseline(
    target: &SearchAdsTarget,
    conversions: &[sa::Conversion],
    batch_size: usize,
) -> Result<Measurement> {
    ensure!(batch_size > 0, "batch size must be positive");
    let http = plain_client(true)?;
    let url = format!("{}/conversion", target.base_url);
    let auth = format!("Bearer {}", target.token);
    let started = Instant::now();
    let mut stored: u64 = 0;
    for batch in conversions.chunks(batch_size) {
        let body = serde_json::to_vec(&InsertBody { conversion: batch })?;
        let response = http
            .post(&url)
            .header(reqwest::header::AUTHORIZATION, &auth)
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .body(body)
            .send()
            .await
            .context("conversion.insert")?;
        let status = response.status();
        let answer = response.bytes().await.context("conversion.insert body")?;
        if !status.is_success() {
            bail!(
                "conversion.insert answered {status}: {}",
                String::from_utf8_lossy(&answer)
            );
        }
        let echo: sa::ConversionList =
            serde_json::from_slice(&answer).context("conversion.insert JSON")?;
        stored += echo.conversion.len() as u64;
    }
    Ok(Measurement::new(stored, stored, started.elapsed()))
}

// ------------------------------------------------------------------ ID mapping

/// Baseline ID mapping: `GET .../idmapping?alt=media`, every body chunk
/// counted and dropped; the byte count must match `Content-Length`.
pub async fn id_mapping_baseline(target: &SearchAdsTarget) -> Result<Measurement> {
    let http = plain_client(false)?;
    let url = format!(
        "{}/agency/{}/advertiser/{}/idmapping",
        target.base_url, target.agency_id, target.advertiser_id
    );
    let auth = format!("Bearer {}", target.token);
    let started = Instant::now();
    let mut response = http
        .get(&url)
        .header(reqwest::header::AUTHORIZATION, &auth)
        .query(&[("alt", "media")])
        .send()
        .await
        .context("reports.getIdMappingFile")?;
    let status = response.status();
    if !status.is_success() {
        let body = response.text().await.unwrap_or_default();
        bail!("reports.getIdMappingFile answered {status}: {body}");
    }
    let expected = response.content_length();
    let mut bytes: u64 = 0;
    while let Some(chunk) = response.chunk().await.context("ID-mapping body")? {
        bytes += chunk.len() as u64;
        black_box(chunk);
    }
    let elapsed = started.elapsed();
    if let Some(expected) = expected {
        ensure!(
            bytes == expected,
            "got {bytes} bytes of the announced {expected}"
        );
    }
    Ok(Measurement::new(bytes, 0, elapsed))
}

/// SDK ID mapping: [`SearchAdsClient::id_mapping`], every typed row consumed;
/// the bytes are those its progress callback reported last.
pub async fn id_mapping_sdk(target: &SearchAdsTarget) -> Result<Measurement> {
    let client = sdk_client(target)?;
    let received = Arc::new(AtomicU64::new(0));
    let progress: ProgressFn = {
        let received = received.clone();
        Arc::new(move |bytes, _total| received.store(bytes, Ordering::Relaxed))
    };
    let started = Instant::now();
    let mut stream = client
        .id_mapping(
            AgencyId::new(target.agency_id),
            AdvertiserId::new(target.advertiser_id),
        )
        .progress_shared(progress)
        .stream();
    let mut rows: u64 = 0;
    while let Some(row) = stream.try_next().await? {
        black_box(row);
        rows += 1;
    }
    let elapsed = started.elapsed();
    Ok(Measurement::new(
        received.load(Ordering::Relaxed),
        rows,
        elapsed,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rss_is_read_from_procfs() {
        if std::path::Path::new("/proc/self/status").exists() {
            let kib = peak_rss_kib().unwrap();
            assert!(kib > 100, "{kib}");
        }
    }

    #[test]
    fn both_upload_inputs_carry_the_same_conversions() {
        let target = SearchAdsTarget {
            base_url: "http://127.0.0.1:1".into(),
            token: "t".into(),
            agency_id: 1,
            advertiser_id: 2,
            engine_account_id: 3,
            reporting_url: "http://127.0.0.1:1".into(),
            customer_id: "4".into(),
        };
        let sdk = upload_input_sdk(&target, "x", 3).unwrap();
        let wire = upload_input_wire(&target, "x", 3);
        for (f, w) in sdk.iter().zip(&wire) {
            assert_eq!(f.conversion_id, w.conversion_id);
            assert_eq!(
                f.conversion_timestamp
                    .map(|t| t.timestamp_millis().to_string()),
                w.conversion_timestamp
            );
            assert_eq!(
                f.revenue_micros.map(|m| m.get().to_string()),
                w.revenue_micros
            );
        }
        assert_eq!(wire[2].conversion_id.as_deref(), Some("bench-x-0000002"));
    }
}

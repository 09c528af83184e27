//! Uploads conversions exactly once, resumably: one setting, a
//! [`WriteJournal`](sa360_video_sdk::search_ads::WriteJournal), and an interrupted upload continues
//! where it stopped, with every row stored once and given the verdict an uninterrupted upload
//! gives it.
//!
//! Run it against the local fakes (see `conversion_report.rs` for `apictl sandbox`):
//!
//! ```sh
//! cargo run -p sa360-video-sdk --example upload -- --interrupt-after 3   # stops after 3 batches
//! cargo run -p sa360-video-sdk --example upload -- --resume              # sends only what is left
//! ```
//!
//! `--interrupt-after N` drops the upload after N batches, as a crash or `kill -9` would.
//! `--resume` runs the same input again with the same journal: rows it settled are not sent,
//! rows that were in flight come back *already stored* when the lost attempt stored them.
//! Without `--resume`, an existing journal is refused.
//!
//! The input is `--rows N` (default 10 000) generated conversions, two of them bad on purpose:
//! one repeats an earlier row (refused before sending) and one names an unknown Floodlight
//! activity (rejected by the service). The journal's `input` text names the input (its start
//! time and row count), so a resume regenerates the same rows.
//!
//! Settings (environment): `GOOGLE_APPLICATION_CREDENTIALS`, `SEARCH_ADS_AGENCY_ID`,
//! `SEARCH_ADS_ADVERTISER_ID`, and `SEARCH_ADS_URL` (leave it unset against Google). Exit status:
//! 0 when every row has a definite outcome, 1 otherwise or on an error; 0 also for
//! `--interrupt-after`.

use std::path::PathBuf;

use anyhow::{Context, bail};
use chrono::{DateTime, Utc};
use futures::StreamExt;
use sa360_video_sdk::search_ads::{
    AdvertiserId, AgencyId, Conversion, DefaultCredentials, Outcome, SearchAdsClient,
    SegmentationId, WriteJournal,
};

/// The Floodlight activity the rows are recorded against (one the sandbox knows).
const ACTIVITY: i64 = 551_234;
/// An activity the sandbox does not know: the service rejects that row.
const UNKNOWN_ACTIVITY: i64 = 999_999;

/// Row `i` (0-based) of the input started at `run`: row 8 repeats row 7, row 9 is rejected.
fn row(run: i64, i: usize, agency: AgencyId, advertiser: AdvertiserId) -> Conversion {
    let n = if i == 8 { 7 } else { i };
    let activity = if i == 9 { UNKNOWN_ACTIVITY } else { ACTIVITY };
    let when = DateTime::<Utc>::from_timestamp_millis(run - n as i64 * 1_000).unwrap_or_default();
    Conversion {
        agency_id: Some(agency),
        advertiser_id: Some(advertiser),
        segmentation_id: Some(SegmentationId::new(activity)),
        ..Conversion::new(format!("example-{run}-{n}"), when)
    }
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let (mut rows, mut journal_path, mut interrupt_after, mut resume) = (
        10_000usize,
        std::env::temp_dir().join("sa360-video-sdk-example-upload.journal"),
        None,
        false,
    );
    let mut it = std::env::args().skip(1);
    while let Some(arg) = it.next() {
        let mut value = |flag: &str| it.next().with_context(|| format!("{flag} needs a value"));
        match arg.as_str() {
            "--rows" => rows = value("--rows")?.parse().context("--rows")?,
            "--journal" => journal_path = PathBuf::from(value("--journal")?),
            "--interrupt-after" => interrupt_after = Some(value("--interrupt-after")?.parse()?),
            "--resume" => resume = true,
            other => bail!(
                "unknown argument {other:?}; use --rows N, --journal PATH, --interrupt-after N, --resume"
            ),
        }
    }
    anyhow::ensure!(rows >= 10, "--rows must be at least 10");
    let env = |name| std::env::var(name).map_err(|_| anyhow::anyhow!("{name} is not set"));
    let client = SearchAdsClient::builder(DefaultCredentials::new()?)
        .endpoints_from_env() // the fakes' URLs, when set (`apictl sandbox`)
        .build()?;
    let agency: AgencyId = env("SEARCH_ADS_AGENCY_ID")?.parse()?;
    let advertiser: AdvertiserId = env("SEARCH_ADS_ADVERTISER_ID")?.parse()?;

    // The input's name: a resume reads it back from the journal to make the same rows.
    let (input, earlier) = match (resume, WriteJournal::read(&journal_path)?) {
        (true, Some(state)) => (state.input().to_owned(), Some(state)),
        (true, None) => bail!("no journal at {} to resume", journal_path.display()),
        (false, Some(_)) => bail!(
            "{} exists: resume with --resume, or delete it",
            journal_path.display()
        ),
        (false, None) => {
            let run = DateTime::<Utc>::from(std::time::SystemTime::now()).timestamp_millis();
            (format!("example-upload run={run} rows={rows}"), None)
        }
    };
    let field = |name: &str| {
        input
            .split(' ')
            .find_map(|f| f.strip_prefix(name))
            .context("the journal's input")
    };
    let (run, rows): (i64, usize) = (field("run=")?.parse()?, field("rows=")?.parse()?);
    let conversions = (0..rows).map(|i| row(run, i, agency, advertiser));

    let journal = WriteJournal::new(&journal_path, input.clone());
    let mut batches = client.insert(conversions).journal(journal).stream()?;
    let (mut stored, mut rejected, mut unanswered, mut handled) = (0u64, 0u64, 0u64, 0);
    while let Some(batch) = batches.next().await {
        for (i, outcome) in batch.indexed() {
            match outcome {
                Outcome::Settled => {} // an earlier run's, counted in its journal
                o if o.is_stored() => stored += 1,
                o @ Outcome::Failed { .. } => {
                    unanswered += 1;
                    println!(
                        "  row {:>5}  no definite answer (run again with --resume): {o:?}",
                        i + 1
                    );
                }
                Outcome::Rejected(issue) => {
                    rejected += 1;
                    println!("  row {:>5}  rejected by the service: {issue}", i + 1);
                }
                other => {
                    rejected += 1;
                    println!("  row {:>5}  not stored: {other:?}", i + 1);
                }
            }
        }
        handled += 1;
        if interrupt_after == Some(handled) {
            // Dropping the stream cancels the batches in flight, as a crash would.
            drop(batches);
            println!("interrupted after {handled} batches as asked; run again with --resume");
            return Ok(());
        }
    }
    batches.finish()?;
    if unanswered > 0 {
        bail!("{unanswered} rows have no definite outcome: run again with --resume");
    }
    let (stored, rejected) = match &earlier {
        Some(e) => (stored + e.stored(), rejected + e.rejected()),
        None => (stored, rejected),
    };
    println!("{rows} rows: {stored} stored, {rejected} rejected");
    Ok(())
}

//! Uploads conversions with one outcome per row, keeps a journal of the rows that have a
//! definite outcome, and resumes an interrupted upload in resubmission mode, so that no
//! conversion is stored twice and none is lost.
//!
//! Run it against the local fakes (see `conversion_report.rs` for `apictl sandbox`):
//!
//! ```sh
//! cargo run -p facade --example upload -- --interrupt-after 3   # stops after 3 batches
//! cargo run -p facade --example upload -- --resume              # sends only what is left
//! ```
//!
//! `--interrupt-after N` drops the upload after N batches, as a crash or `kill -9` would: the
//! batches in flight at that moment may or may not have reached the service. `--resume` reads
//! the journal and sends every row without a definite outcome again with
//! [`resubmission`](facade::search_ads::WriteRequest::resubmission) on: a row that the
//! interrupted run stored after all comes back as *already stored*, a success. Without
//! `--resume`, an existing journal is refused.
//!
//! The input is `--rows N` (default 10 000, ten batches at the default batch size) generated conversions, two of them bad on purpose: one
//! repeats an earlier row (refused before sending) and one names an unknown Floodlight activity
//! (rejected by the service). Every rejected row is printed with its row number and reason.
//!
//! Settings (environment): `GOOGLE_APPLICATION_CREDENTIALS`, `SEARCH_ADS_AGENCY_ID`,
//! `SEARCH_ADS_ADVERTISER_ID`, and `SEARCH_ADS_URL` (leave it unset against Google). Exit status:
//! 0 when every row has a definite outcome (stored, already stored or rejected), 1 otherwise or
//! on an error; 0 also for `--interrupt-after`, which prints how many rows are left.

use std::collections::BTreeMap;
use std::fs::{self, File, OpenOptions};
use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;

use anyhow::{Context, bail};
use chrono::{DateTime, Utc};
use facade::search_ads::{
    AdvertiserId, AgencyId, Conversion, DefaultCredentials, Outcome, SearchAdsClient,
    SegmentationId,
};
use futures::StreamExt;

/// The Floodlight activity the rows are recorded against (one the sandbox knows).
const ACTIVITY: i64 = 551_234;
/// An activity the sandbox does not know: the service rejects that row.
const UNKNOWN_ACTIVITY: i64 = 999_999;

struct Args {
    rows: usize,
    journal: PathBuf,
    interrupt_after: Option<usize>,
    resume: bool,
}

fn args() -> anyhow::Result<Args> {
    let mut args = Args {
        rows: 10_000,
        journal: std::env::temp_dir().join("facade-example-upload.journal"),
        interrupt_after: None,
        resume: false,
    };
    let mut it = std::env::args().skip(1);
    while let Some(arg) = it.next() {
        let mut value = |flag: &str| it.next().with_context(|| format!("{flag} needs a value"));
        match arg.as_str() {
            "--rows" => args.rows = value("--rows")?.parse().context("--rows")?,
            "--journal" => args.journal = value("--journal")?.into(),
            "--interrupt-after" => {
                args.interrupt_after = Some(value("--interrupt-after")?.parse()?);
            }
            "--resume" => args.resume = true,
            other => bail!(
                "unknown argument {other:?}; use --rows N, --journal PATH, --interrupt-after N, --resume"
            ),
        }
    }
    anyhow::ensure!(args.rows >= 10, "--rows must be at least 10");
    Ok(args)
}

/// The journal: a header naming the input, then one line per row with a definite outcome
/// (`ROW stored` or `ROW rejected`, rows numbered from 0).
/// A row is written only after its outcome is known, so a crash can lose lines (those rows are
/// sent again, in resubmission mode) but never claim an outcome that did not happen.
struct Journal {
    file: File,
}

impl Journal {
    /// Starts a new journal for an input (`run` names the input: its ids and times derive from it).
    fn create(path: &PathBuf, run: i64, rows: usize) -> anyhow::Result<Self> {
        let mut file = OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(path)
            .with_context(|| {
                format!(
                    "{} exists: resume with --resume, or delete it",
                    path.display()
                )
            })?;
        writeln!(file, "upload-example 1 run={run} rows={rows}")?;
        file.sync_all()?;
        Ok(Self { file })
    }

    /// Opens an existing journal: the input it names and the rows already settled (true: stored).
    fn resume(path: &PathBuf) -> anyhow::Result<(Self, i64, usize, BTreeMap<usize, bool>)> {
        let text = BufReader::new(
            File::open(path).with_context(|| format!("no journal at {}", path.display()))?,
        );
        let mut lines = text.lines();
        let header = lines.next().context("the journal is empty")??;
        let field = |name: &str| {
            header
                .split_whitespace()
                .find_map(|f| f.strip_prefix(name))
                .with_context(|| format!("the journal's header has no {name}"))
        };
        let (run, rows) = (field("run=")?.parse()?, field("rows=")?.parse()?);
        let mut settled = BTreeMap::new();
        for line in lines {
            let line = line?;
            let (row, outcome) = match line.split_once(' ') {
                Some((row, "stored")) => (row, true),
                Some((row, "rejected")) => (row, false),
                _ => bail!("the journal line {line:?} is not `ROW stored|rejected`"),
            };
            settled.insert(
                row.parse::<usize>().context("a journal line's row")?,
                outcome,
            );
        }
        let file = OpenOptions::new().append(true).open(path)?;
        Ok((Self { file }, run, rows, settled))
    }

    fn settle(&mut self, rows: &[(usize, bool)]) -> anyhow::Result<()> {
        for (row, stored) in rows {
            let outcome = if *stored { "stored" } else { "rejected" };
            writeln!(self.file, "{row} {outcome}")?;
        }
        self.file.sync_data()?;
        Ok(())
    }
}

/// The generated input: row `i` (0-based) of run `run`. Rows 7 and 8 are the bad ones.
fn input(run: i64, rows: usize, agency: AgencyId, advertiser: AdvertiserId) -> Vec<Conversion> {
    (0..rows)
        .map(|i| {
            let n = if i == 8 { 7 } else { i }; // row 8 repeats row 7
            let activity = if i == 9 { UNKNOWN_ACTIVITY } else { ACTIVITY };
            let when =
                DateTime::<Utc>::from_timestamp_millis(run - n as i64 * 1_000).unwrap_or_default();
            Conversion {
                agency_id: Some(agency),
                advertiser_id: Some(advertiser),
                segmentation_id: Some(SegmentationId::new(activity)),
                ..Conversion::new(format!("example-{run}-{n}"), when)
            }
        })
        .collect()
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args = args()?;
    let env = |name| std::env::var(name).map_err(|_| anyhow::anyhow!("{name} is not set"));
    // Sign in as Google's libraries do: Application Default Credentials.
    let mut builder = SearchAdsClient::builder(DefaultCredentials::new()?);
    if let Ok(url) = env("SEARCH_ADS_URL") {
        builder = builder.base_url(url);
    }
    let client = builder.build()?;
    let agency: AgencyId = env("SEARCH_ADS_AGENCY_ID")?.parse()?;
    let advertiser: AdvertiserId = env("SEARCH_ADS_ADVERTISER_ID")?.parse()?;

    let (mut journal, run, rows, settled) = if args.resume {
        Journal::resume(&args.journal)?
    } else {
        // One input per run: its conversion ids and times derive from the start time.
        let run = DateTime::<Utc>::from(std::time::SystemTime::now()).timestamp_millis();
        (
            Journal::create(&args.journal, run, args.rows)?,
            run,
            args.rows,
            BTreeMap::new(),
        )
    };
    let all = input(run, rows, agency, advertiser);
    // What to send: the rows without a definite outcome, and where each one sits in the input.
    let pending: Vec<usize> = (0..rows).filter(|i| !settled.contains_key(i)).collect();
    let batch: Vec<Conversion> = pending.iter().map(|&i| all[i].clone()).collect();
    println!(
        "{} {} of {rows} rows ({} settled before)",
        if args.resume {
            "resuming:"
        } else {
            "uploading"
        },
        pending.len(),
        settled.len()
    );

    // Batches of 1000 (the default), 4 in flight; outcomes come back per batch, in input order.
    let mut stream = client.insert(&batch).resubmission(args.resume).stream()?;
    let (mut stored, mut already, mut rejected, mut unsettled, mut batches) = (0, 0, 0, 0, 0);
    let mut settled_now = Vec::new();
    while let Some(done) = stream.next().await {
        let mut definite = Vec::new();
        for (k, outcome) in done.indexed() {
            let row = pending[k];
            match outcome {
                Outcome::Stored | Outcome::StoredEarlier => stored += 1,
                Outcome::AlreadyStored => already += 1,
                Outcome::Invalid(error) => {
                    rejected += 1;
                    println!("  row {:>5}  refused before sending: {error}", row + 1);
                }
                Outcome::Rejected(issue) => {
                    rejected += 1;
                    println!("  row {:>5}  rejected by the service: {issue}", row + 1);
                }
                other if other.is_definite() => {
                    rejected += 1;
                    println!("  row {:>5}  not stored: {other:?}", row + 1);
                }
                other => {
                    unsettled += 1;
                    println!(
                        "  row {:>5}  no definite answer (send it again): {other:?}",
                        row + 1
                    );
                    continue;
                }
            }
            definite.push((row, outcome.is_stored()));
        }
        journal.settle(&definite)?;
        settled_now.extend(definite);
        batches += 1;
        if args.interrupt_after == Some(batches) {
            // Dropping the stream cancels the batches in flight, as a crash would.
            drop(stream);
            let left = rows - settled.len() - (stored + already + rejected);
            println!(
                "interrupted after {batches} batches as asked: {left} rows without a definite \
                 outcome; run again with --resume"
            );
            return Ok(());
        }
    }

    println!(
        "{} rows sent: {stored} stored now, {already} already stored, {rejected} rejected, \
         {unsettled} without a definite answer",
        pending.len()
    );
    if unsettled > 0 {
        bail!("{unsettled} rows have no definite outcome: run again with --resume");
    }
    // Every row has its outcome: the whole input, this run and the ones before it.
    let all_settled = settled.into_iter().chain(settled_now);
    let stored_total = all_settled.filter(|(_, stored)| *stored).count();
    println!(
        "{rows} rows: {stored_total} stored, {} rejected",
        rows - stored_total
    );
    fs::remove_file(&args.journal)?;
    Ok(())
}

//! The upload engine: rows read one at a time from the file, sent through the
//! SDK's write stream, their outcomes reported and journaled as the
//! batches finish, in input order.
//!
//! Memory stays bounded whatever the file's length: the reader holds one row,
//! the SDK holds at most `(2 × concurrency + 1) × batch size` conversions
//! (its read-ahead), and this engine holds one small entry (row number, line,
//! conversion id) per conversion the SDK has read and not yet answered.
//! Rows that cannot be read are handed to the SDK as an empty conversion
//! (which it refuses locally, never sends) so they keep their place in the one
//! ordered stream; their own reason replaces the SDK's in the report.
//!
//! Every service rule (what a conversion needs, the duplicate key, batching,
//! retries, what an answer means) is the SDK's. What the engine adds is the
//! file: line numbers, the report, the journal and `--resume`.

use std::collections::VecDeque;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};

use futures::StreamExt as _;
use indicatif::ProgressBar;
use sa360_video_sdk::search_ads::{
    Conversion, Error as SaError, InputCheck, JournalState, Outcome, SearchAdsClient, WriteJournal,
    WriteOptions, WriteProgress,
};

use super::input::Input;
use super::journal::{self, Binding};
use super::rejected::{Layout, RejectedRow, RejectedWriter};
use super::repeats::{Repeat, Repeats};
use crate::cli::InputFormat;
use crate::error::{AppError, AppResult, io_error};
use crate::records::{Raw, WriteMode};

/// Most rejections kept in the summary (for `--json`); the rejected-rows file has
/// them all.
pub const SUMMARY_REJECTIONS: usize = 1000;

/// Batches in a row that got no definite answer at all before the upload
/// stops reading the file (the service is down or refuses the credentials);
/// the rest is for `--resume`.
pub const FAILED_BATCHES_BEFORE_STOP: usize = 4;

/// The totals of an upload while it runs (earlier runs included on a
/// resume), for a message when it is interrupted.
#[derive(Debug, Default)]
pub struct LiveCounts {
    /// Rows stored or already stored.
    pub stored: std::sync::atomic::AtomicU64,
    /// Rows rejected.
    pub rejected: std::sync::atomic::AtomicU64,
}

/// What to do with the journal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JournalMode {
    /// No journal (dry runs, the tour).
    Off,
    /// A new journal; an existing one is refused (it belongs to an
    /// interrupted upload).
    Fresh,
    /// A new journal; an existing one is removed first (`--restart`).
    Restart,
    /// Continue the upload the existing journal records.
    Resume,
}

/// One upload of a file.
#[derive(Debug, Clone)]
pub struct UploadPlan {
    /// The input file.
    pub file: PathBuf,
    /// Its format, when not from the name or the first character.
    pub format: Option<InputFormat>,
    /// Insert or update.
    pub mode: WriteMode,
    /// Batching.
    pub options: WriteOptions,
    /// The rejected-rows file; `None`: `FILE.rejected.csv` (or `.jsonl`) beside
    /// the journal.
    pub report: Option<PathBuf>,
    /// The journal.
    pub journal: JournalMode,
    /// Where the journal is; `None`: `FILE.journal` beside the file.
    pub journal_path: Option<PathBuf>,
    /// Updated after each batch, when given.
    pub live: Option<Arc<LiveCounts>>,
}

impl UploadPlan {
    /// The journal's path: `--journal`, else `FILE.journal`.
    pub fn journal_path(&self) -> PathBuf {
        self.journal_path
            .clone()
            .unwrap_or_else(|| journal::default_journal_path(&self.file))
    }

    /// The report's path: `--rejected`, else the file's name with
    /// `.rejected.csv` (or `.jsonl`) in the journal's directory.
    fn report_path(&self, format: InputFormat) -> PathBuf {
        if let Some(report) = &self.report {
            return report.clone();
        }
        let beside = match (&self.journal_path, self.file.file_name()) {
            (Some(journal), Some(name)) => journal.with_file_name(name),
            _ => self.file.clone(),
        };
        super::rejected::default_rejected_path(&beside, format)
    }
}

/// What an upload did, over the whole file (earlier runs included on a resume).
#[derive(Debug, Default)]
pub struct UploadSummary {
    /// Rows in the file (the rows read, when the upload stopped early).
    pub rows: u64,
    /// Rows that can be sent (or, on a dry run, that would be).
    pub sent: u64,
    /// Rows stored, already stored included.
    pub stored: u64,
    /// Rows the server answered already stored (resubmission mode).
    pub already_stored: u64,
    /// Rows rejected, locally or by the server.
    pub rejected: u64,
    /// Rows without a definite answer, not-sent rows included.
    pub failed: u64,
    /// Rows settled by earlier runs, skipped by this resume.
    pub skipped: u64,
    /// True when the upload stopped before the end of the file.
    pub stopped: bool,
    /// The first error of a failed row, in the CLI's words.
    pub first_failure: Option<String>,
    /// The CLI's hint for the first failure (it names the flag to change, e.g. `--max-body`).
    pub first_failure_hint: Option<String>,
    /// The first [`SUMMARY_REJECTIONS`] rejected or failed rows of this run.
    pub report: Vec<RejectedRow>,
    /// The rejected-rows file, when a row was written to it.
    pub report_path: Option<PathBuf>,
    /// The journal, when it is kept: for `--resume`, or finished.
    pub journal: Option<PathBuf>,
    /// The journal records that every row has its outcome: a rerun sends nothing.
    pub finished: bool,
    /// The upload had finished at this time, in an earlier run: this one
    /// read and sent nothing (the counts are that upload's).
    pub finished_earlier: Option<std::time::SystemTime>,
}

/// A row the SDK has read and not yet answered.
#[derive(Debug)]
struct Entry {
    /// Line where it starts.
    line: u64,
    conversion_id: String,
    /// Why the row could not be read: it went to the SDK as an empty
    /// conversion and must come back `Invalid`.
    unreadable: Option<String>,
    /// The row as written, for the report.
    raw: Raw,
    /// The earlier row with its key, when remembered.
    repeat: Option<Repeat>,
}

#[derive(Debug, Default)]
struct FeedState {
    waiting: VecDeque<Entry>,
    rows: u64,
    error: Option<AppError>,
    repeats: Repeats,
}

/// The rows as the SDK's input: every row of the file, in order (on a
/// resume the SDK skips the settled ones itself, after counting them for
/// the duplicate check); queues an [`Entry`] per conversion handed out.
struct Feed<R> {
    input: Input<R>,
    state: Arc<Mutex<FeedState>>,
    done: bool,
    /// Its position: the bytes read.
    bar: ProgressBar,
}

impl<R: std::io::BufRead> Iterator for Feed<R> {
    type Item = Conversion;

    fn next(&mut self) -> Option<Conversion> {
        if self.done {
            return None;
        }
        let row = match self.input.next_row() {
            Ok(Some(row)) => row,
            Ok(None) => {
                self.done = true;
                return None;
            }
            Err(e) => {
                lock(&self.state).error = Some(e);
                self.done = true;
                return None;
            }
        };
        self.bar.set_position(self.input.bytes_read());
        let mut state = lock(&self.state);
        state.rows += 1;
        let (conversion, unreadable, repeat) = match row.parsed {
            Ok(c) => {
                let repeat = state.repeats.note(row.line, &c);
                (c, None, repeat)
            }
            Err(reason) => (Conversion::default(), Some(reason), None),
        };
        state.waiting.push_back(Entry {
            line: row.line,
            conversion_id: row.conversion_id.unwrap_or_default(),
            unreadable,
            raw: row.raw,
            repeat,
        });
        Some(conversion)
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The reason of a local refusal, for the report; `repeat` is the earlier
/// row with the same key, when remembered.
fn invalid_reason(e: &SaError, repeat: Option<&Repeat>) -> String {
    match e {
        // A repeat, in words: the line it repeats and what differs.
        SaError::Validation { field, reason, .. }
            if field == "conversionId" && reason.contains("repeats an earlier") =>
        {
            super::repeats::reason(repeat)
        }
        // The SDK's reason names Rust items; the report names the column.
        SaError::Validation { field, reason, .. } => {
            crate::wording::for_operator(&format!("{field} {reason}"))
        }
        other => crate::wording::for_operator(&other.to_string()),
    }
}

/// Runs an upload. `client` is `None` for a dry run (which checks each row
/// and sends nothing); `on_row` sees each rejected or failed row as its batch
/// finishes (to print it).
pub async fn upload_file(
    client: Option<&SearchAdsClient>,
    plan: &UploadPlan,
    bar: &ProgressBar,
    on_row: &mut dyn FnMut(&RejectedRow),
) -> AppResult<UploadSummary> {
    plan.options.validate()?;
    // One upload of a file at a time, before its journal is read or removed.
    let _owner = match plan.journal {
        JournalMode::Off => None,
        _ => journal::hold_input(&plan.file)?,
    };
    let input = Input::open(&plan.file, plan.format)?;
    let journal_path = plan.journal_path();
    // The report is the one this run names. The journal's note only says
    // which report its marks measure: it never names a file to open.
    let report_path = plan.report_path(input.format());
    let binding = || Binding::of_file(&plan.file, input.format(), plan.mode);
    let existing = match plan.journal {
        JournalMode::Off => None,
        JournalMode::Restart => {
            match std::fs::remove_file(&journal_path) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(io_error("--restart: cannot remove", &journal_path, &e)),
            }
            None
        }
        JournalMode::Fresh | JournalMode::Resume => WriteJournal::read(&journal_path)?,
    };
    let resumed: Option<JournalState> = match existing {
        None if plan.journal == JournalMode::Resume => {
            return Err(AppError::refused(format!(
                "--resume: there is no journal {} to resume from: no upload of the file was interrupted",
                journal_path.display()
            ))
            .hint("run the upload without --resume (pass the same --journal if the interrupted upload had one)"));
        }
        None => None,
        Some(state) => {
            let same = state.input() == binding()?.line();
            match (state.finished(), same, plan.journal) {
                (Some(at), true, _) => {
                    return Ok(finished_earlier(&state, at, journal_path, &report_path));
                }
                (Some(_), false, JournalMode::Fresh) => {
                    // Another version of the file (or the other operation):
                    // the finished upload's record is done with.
                    crate::output::tell!(
                        "{} records a finished upload of another version of {} (or of the other operation); uploading this one",
                        journal_path.display(),
                        plan.file.display()
                    );
                    std::fs::remove_file(&journal_path)
                        .map_err(|e| io_error("cannot remove", &journal_path, &e))?;
                    None
                }
                (_, false, JournalMode::Resume) => {
                    return Err(journal::changed(
                        state.input(),
                        &binding()?,
                        &plan.file,
                        &journal_path,
                    ));
                }
                (_, _, JournalMode::Resume) => Some(state),
                _ => {
                    return Err(AppError::refused(format!(
                        "{} exists: an earlier upload of {} was interrupted or left rows without an answer",
                        journal_path.display(),
                        plan.file.display()
                    ))
                    .hint("pass --resume to send only the rows without a definite outcome, or --restart to upload the whole file again"));
                }
            }
        }
    };
    if let Some(r) = resumed.as_ref().filter(|r| r.mark() > 0)
        && r.note() != absolute(&report_path).to_str()
    {
        return Err(AppError::refused(format!(
            "--resume: the interrupted upload wrote its rejected rows to {}, not {}",
            r.note().unwrap_or("a rejected-rows file it does not name"),
            report_path.display()
        ))
        .hint("pass --rejected with the interrupted upload's rejected-rows file to continue it, or --restart to upload the whole file again"));
    }
    let layout = Layout::of(&input);
    let mut report = match &resumed {
        Some(r) => RejectedWriter::resume(&report_path, r.mark(), layout)?,
        None => RejectedWriter::fresh(&report_path, layout)?,
    };
    let journal = match plan.journal {
        JournalMode::Off => None,
        _ if client.is_none() => None,
        mode => {
            let binding = binding()?;
            let note = absolute(&report_path);
            let note = note
                .to_str()
                .filter(|t| !t.contains(['\n', '\r']))
                .ok_or_else(|| {
                    AppError::new(format!(
                        "the rejected-rows file {} cannot be written in the journal",
                        report_path.display()
                    ))
                    .hint("give --rejected a UTF-8 path without line breaks")
                })?;
            // Absolute, so a resume from another directory can compare it.
            let journal = WriteJournal::new(&journal_path, binding.line())
                .note(note)
                .keep_finished();
            Some(match mode {
                JournalMode::Resume => journal.resume_only(),
                _ => journal,
            })
        }
    };
    let mut summary = UploadSummary::default();
    if let Some(r) = &resumed {
        summary.stored = r.stored();
        summary.rejected = r.rejected();
    }
    let result = match client {
        None => dry_run(input, plan.mode, &mut report, &mut summary, (bar, on_row)),
        Some(client) => {
            let mut run = Run {
                mode: plan.mode,
                report: &mut report,
                summary: &mut summary,
                on_row,
            };
            run.send(client, plan, input, journal, bar).await
        }
    };
    if report.exists() {
        summary.report_path = Some(report.path().to_owned());
    }
    // On an error the journal stays, for --resume.
    result?;
    if summary.rows == 0 {
        return Err(
            AppError::refused(format!("{} has no rows", plan.file.display()))
                .hint("give a file with at least one conversion"),
        );
    }
    // Kept: finished, or for --resume.
    if plan.journal != JournalMode::Off && journal_path.exists() {
        summary.journal = Some(journal_path);
    }
    Ok(summary)
}

/// The summary of an upload that finished in an earlier run at `at`: its
/// counts, its report when it wrote one (named as this run names it when it
/// is the same); nothing is read or sent.
fn finished_earlier(
    state: &JournalState,
    at: std::time::SystemTime,
    journal: PathBuf,
    report: &std::path::Path,
) -> UploadSummary {
    let named = |note: &str| {
        if absolute(report).to_str() == Some(note) {
            report.to_owned()
        } else {
            PathBuf::from(note)
        }
    };
    UploadSummary {
        rows: state.settled(),
        sent: state.settled(),
        stored: state.stored(),
        rejected: state.rejected(),
        report_path: state.note().filter(|_| state.mark() > 0).map(named),
        journal: Some(journal),
        finished: true,
        finished_earlier: Some(at),
        ..UploadSummary::default()
    }
}

/// `path` made absolute against the current directory (as given when that fails).
fn absolute(path: &std::path::Path) -> PathBuf {
    std::path::absolute(path).unwrap_or_else(|_| path.to_owned())
}

/// Checks each row as the SDK would before sending; sends nothing.
fn dry_run<R: std::io::BufRead>(
    mut input: Input<R>,
    mode: WriteMode,
    report: &mut RejectedWriter,
    summary: &mut UploadSummary,
    (bar, on_row): (&ProgressBar, &mut dyn FnMut(&RejectedRow)),
) -> AppResult<()> {
    let mut check = match mode {
        WriteMode::Insert => InputCheck::insert(),
        WriteMode::Update => InputCheck::update(),
    };
    let mut repeats = Repeats::default();
    while let Some(row) = input.next_row()? {
        bar.set_position(input.bytes_read());
        summary.rows += 1;
        let reason = match &row.parsed {
            Err(reason) => Some(reason.clone()),
            Ok(c) => {
                let repeat = repeats.note(row.line, c);
                check
                    .check(c)
                    .err()
                    .map(|e| invalid_reason(&e, repeat.as_ref()))
            }
        };
        match reason {
            None => summary.sent += 1,
            Some(reason) => {
                summary.rejected += 1;
                let r = RejectedRow {
                    line: row.line,
                    conversion_id: row.conversion_id.unwrap_or_default(),
                    code: "local".to_owned(),
                    reason,
                    raw: row.raw,
                };
                keep(summary, &r);
                on_row(&r);
                report.push(&r)?;
            }
        }
    }
    report.commit()?;
    Ok(())
}

fn keep(summary: &mut UploadSummary, row: &RejectedRow) {
    if summary.report.len() < SUMMARY_REJECTIONS {
        summary.report.push(row.clone());
    }
}

struct Run<'a> {
    mode: WriteMode,
    report: &'a mut RejectedWriter,
    summary: &'a mut UploadSummary,
    on_row: &'a mut dyn FnMut(&RejectedRow),
}

impl Run<'_> {
    async fn send<R: std::io::BufRead + Send + 'static>(
        &mut self,
        client: &SearchAdsClient,
        plan: &UploadPlan,
        input: Input<R>,
        journal: Option<WriteJournal>,
        bar: &ProgressBar,
    ) -> AppResult<()> {
        let state = Arc::new(Mutex::new(FeedState::default()));
        let feed = Feed {
            input,
            state: state.clone(),
            done: false,
            bar: bar.clone(),
        };
        let progress = {
            let (bar, what) = (bar.clone(), bar.message());
            move |p: WriteProgress| bar.set_message(format!("{what}: {} rows", p.conversions_done))
        };
        let request = match plan.mode {
            WriteMode::Insert => client.insert(feed),
            WriteMode::Update => client.update(feed),
        };
        let mut request = request.options(plan.options).progress(progress);
        if let Some(journal) = journal {
            request = request.journal(journal);
        }
        let mut batches = request.stream()?;
        let mut failed_in_a_row = 0;
        while let Some(batch) = batches.next().await {
            let (mut stored, mut rejected) = (0u64, 0u64);
            let (mut fresh, mut last) = (0u64, false);
            for outcome in batch.outcomes() {
                let entry = lock(&state).waiting.pop_front().ok_or_else(|| {
                    AppError::new("internal error: the SDK answered a conversion it was not given")
                })?;
                last = true;
                fresh += u64::from(!matches!(outcome, Outcome::Settled));
                let before = (self.summary.stored, self.summary.rejected);
                self.settle(entry, outcome)?;
                stored += self.summary.stored - before.0;
                rejected += self.summary.rejected - before.1;
            }
            if !last || fresh == 0 {
                // Every row had its outcome from an earlier run: nothing to record.
                continue;
            }
            if stored + rejected == 0 {
                failed_in_a_row += 1;
            } else {
                failed_in_a_row = 0;
            }
            // The report first, then the journal that vouches for it.
            let report_len = self.report.commit()?;
            batches.set_mark(report_len);
            batches.commit()?;
            if let Some(live) = &plan.live {
                use std::sync::atomic::Ordering::Relaxed;
                live.stored.store(self.summary.stored, Relaxed);
                live.rejected.store(self.summary.rejected, Relaxed);
            }
            if failed_in_a_row >= FAILED_BATCHES_BEFORE_STOP {
                self.summary.stopped = true;
                break;
            }
        }
        let read_error = lock(&state).error.is_some();
        if read_error {
            // The file could not be read to its end: the journal stays for --resume.
            batches.keep_journal();
        }
        if self.summary.stopped {
            // Dropped here: a stopped upload sends nothing more, and the
            // journal stays for --resume.
            drop(batches);
        } else {
            // Ends the journal with its `finished` record when every row has its outcome.
            self.summary.finished = batches.finish()? && !read_error;
        }
        let mut state = lock(&state);
        self.summary.rows = state.rows;
        if self.summary.stopped {
            // Read and handed to the SDK, never answered: not sent.
            self.summary.failed += state.waiting.len() as u64;
            self.summary.sent += state.waiting.len() as u64;
        }
        if let Some(e) = state.error.take() {
            return Err(e.context("the upload stopped").hint(
                "the rows before it have their outcome in the journal; fix the file's problem and pass --resume",
            ));
        }
        Ok(())
    }

    /// Records one row's outcome: counts, report, resend list.
    fn settle(&mut self, entry: Entry, outcome: &Outcome) -> AppResult<()> {
        let s = &mut *self.summary;
        let (code, reason) = match (&entry.unreadable, outcome) {
            (_, Outcome::Settled) => {
                s.skipped += 1;
                return Ok(());
            }
            (Some(reason), Outcome::Invalid(_)) => ("local".to_owned(), reason.clone()),
            (Some(_), other) => {
                return Err(AppError::new(format!(
                    "internal error: an unreadable row (line {}) was not refused by the SDK: {other:?}",
                    entry.line
                )));
            }
            (None, Outcome::Stored | Outcome::StoredEarlier) => {
                s.sent += 1;
                s.stored += 1;
                return Ok(());
            }
            (None, Outcome::AlreadyStored) => {
                s.sent += 1;
                s.stored += 1;
                s.already_stored += 1;
                return Ok(());
            }
            (None, Outcome::Invalid(e)) => {
                ("local".to_owned(), invalid_reason(e, entry.repeat.as_ref()))
            }
            (None, Outcome::Rejected(issue)) => {
                s.sent += 1;
                let code = issue
                    .code
                    .map_or_else(|| "server".to_owned(), |c| c.to_string());
                let mut reason = issue.message.clone();
                if code == "0x0000011A" && self.mode == WriteMode::Insert {
                    reason.push_str(
                        " (a conversion with this conversionId and conversionTimestamp is stored already: to change it, upload the row with --update)",
                    );
                }
                (code, reason)
            }
            (None, failed) => {
                // Failed (or an outcome this version does not know): no
                // definite answer, sent again by --resume.
                s.sent += 1;
                s.failed += 1;
                let reason = match failed {
                    Outcome::Failed {
                        error,
                        may_have_been_stored,
                        ..
                    } => {
                        // The CLI's own words: flags, not HttpOptions fields.
                        let shown = crate::error::AppError::from(error.clone());
                        if s.first_failure.is_none() {
                            s.first_failure = Some(shown.message.clone());
                            s.first_failure_hint = shown.hint.clone();
                        }
                        let note = if *may_have_been_stored {
                            " (it may have been stored; --resume sends it again safely)"
                        } else {
                            " (not stored; --resume sends it again)"
                        };
                        format!("{}{note}", shown.message)
                    }
                    other => format!("no definite outcome: {other:?}"),
                };
                let row = RejectedRow {
                    line: entry.line,
                    conversion_id: entry.conversion_id,
                    code: "failed".to_owned(),
                    reason,
                    raw: entry.raw,
                };
                keep(s, &row);
                (self.on_row)(&row);
                return Ok(());
            }
        };
        s.rejected += 1;
        let row = RejectedRow {
            line: entry.line,
            conversion_id: entry.conversion_id,
            code,
            reason,
            raw: entry.raw,
        };
        keep(s, &row);
        (self.on_row)(&row);
        self.report.push(&row)
    }
}

//! [`WriteJournal`]: exactly-once, resumable writes with one setting
//! ([`WriteRequest::journal`](super::WriteRequest::journal)).
//!
//! # Format
//!
//! UTF-8 text, one record per line, only ever appended to (rows numbered 1,
//! 2, … in input order):
//!
//! ```text
//! facade write journal 1
//! input 127000000 9f86d081… csv insert
//! note /path/to/the/report.csv
//! send 1-100
//! send 101-200
//! done 1-100 stored=97 rejected=3 mark=412 resend=- fp=5c1e0f3a9b7d2e11
//! send 201-230
//! done 101-200 stored=0 rejected=0 mark=412 resend=101-200 fp=0d9c…
//! ```
//!
//! - `input`: what the application says the input is (a file's size and
//!   hash, an export's id); a journal is only resumed for the same text.
//! - `note`: the application's own line (the last one counts), e.g. where its
//!   report goes.
//! - `send FIRST-LAST`: appended and fsynced before the first request of any
//!   batch within those rows. Written as a batch opens (while the batches
//!   before it are in flight and it is being read, so the disk's wait hides
//!   behind the network's), it names the rows the batch may cover: its first
//!   row and `batch_size` rows; a batch inside a durable record needs none.
//!   When a batch closes early (before a repeated id) or at the input's end,
//!   it thus names rows of the next batch, or past the end, never sent. A row outside every `send` line was never sent, so a
//!   `0x0000011A` for it on a rerun is a conflict, not "already stored"
//!   (SA-23). (With an application's own
//!   [`before_send`](super::WriteRequest::before_send) hook, each batch gets
//!   its own record with its exact rows, as it closes.)
//! - `done FIRST-LAST`: every row of the range has its outcome except those
//!   after `resend=` (ranges; `-` for none), which a rerun sends again.
//!   `stored=`/`rejected=` count the rows it settled; `mark=` is the
//!   application's position once it handled them (see
//!   [`WriteStream::set_mark`](super::WriteStream::set_mark)); `fp=` is the
//!   fingerprint of rows 1 to LAST (see below). Appended once the
//!   application asked for the next batch or called
//!   [`WriteStream::commit`](super::WriteStream::commit), so it never claims an
//!   outcome the application has not handled.
//! - `finished at=SECS` (only with [`WriteJournal::keep_finished`]): the input
//!   ended and every row has its outcome, at SECS seconds since 1970 (UTC);
//!   fsynced. A `send` or `done` record after it (a rerun with more rows)
//!   makes the journal unfinished again.
//!
//! # Durability
//!
//! Every record is written (`write`) at the moment named above, so a kill
//! of the process at any instant leaves every record before it in the file.
//! Against a power loss, what must be on the disk is fsynced: the header, a
//! `send` record before its batch's request leaves, a `done` record holding
//! a row the server rejected (a resend could hear "already stored" for it),
//! and the journal when a stream ends and keeps it. Any other `done` record
//! becomes durable with the next `fdatasync` (the next `send` record's); one
//! lost to a power loss only makes a rerun send its batch again, whose rows
//! then come back as they did (stored rows "already stored", a success
//! since their `send` record is durable; local refusals from the same check).
//! One `fdatasync` covers every record appended before it, so records of
//! batches that start together share one.
//!
//! A last line without its line break (a kill while writing it) is ignored and
//! cut off. The journal is created whole under a fresh name
//! (`PATH.new`, made with `create_new`, never through a symlink) and renamed.
//!
//! # The same input
//!
//! Two checks (SA-23): the `input` line must equal the rerun's, before
//! anything is read; and each `done` line's `fp=` is an XXH3 fingerprint of
//! the identity of every row up to it (owner, ids, timestamp, segmentation,
//! revenue, quantity, count, state), checked as the rerun reads that row. A
//! rerun whose rows differ stops sending at the first checkpoint that does
//! not match: that batch and every later one get
//! [`Outcome::Failed`](super::Outcome::Failed) with an
//! [`Error::Validation`] on `journal`, never sent.

use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, Write};
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, PoisonError};

use super::super::conversion::Conversion;
use super::super::error::Error;
use super::report::{Outcome, WriteBatch};
use super::resume::Resume;

const MAGIC: &str = "facade write journal 1";
/// The longest `input` or `note` text.
pub const MAX_JOURNAL_TEXT: usize = 4096;

/// A journal for a write: one setting that makes an upload resumable and
/// exactly-once. Give it to
/// [`WriteRequest::journal`](super::WriteRequest::journal).
///
/// When the file does not exist, the write starts one. When it exists (an
/// earlier run of the same input was interrupted, or left rows without an
/// answer), the write resumes it: the input must be the whole input again,
/// in the same order; rows it settled are not sent (each gets
/// [`Outcome::Settled`](super::Outcome::Settled)) but still count for the
/// duplicate check, and a `0x0000011A` is "already stored" only for a row
/// an earlier run may have sent. Every row thus gets the verdict one
/// uninterrupted run gives it, and none is stored twice. The journal is
/// removed when the input ended and every row has its outcome; it is kept
/// when rows got no definite answer, or the stream was dropped.
///
/// A journal has one writer at a time: a stream holds an exclusive OS lock
/// (`flock`, `LockFileEx`, through `fs4`) on `PATH.lock` from the moment it
/// opens the journal until it (and any `send` record still being written)
/// lets go, and removes that file then; a second write of the same journal
/// waits up to 2 s for that, then is refused with [`Error::JournalBusy`],
/// before it reads or sends anything.
/// The kernel releases the lock of a killed process. The journal is opened
/// for appending only, and never through a symlink.
///
/// A kill at any moment leaves a journal a rerun can use: records are
/// appended as they happen, and fsynced where a power loss could otherwise
/// change a verdict (a batch's `send` record before its request leaves, a
/// record of rows the server rejected, the journal a stream keeps at its
/// end); a torn last line is ignored.
///
/// ```no_run
/// use futures::StreamExt;
/// use sa360_video_sdk::search_ads::{Conversion, SearchAdsClient, WriteJournal};
/// # async fn run(client: SearchAdsClient, rows: Vec<Conversion>) -> Result<(), sa360_video_sdk::search_ads::Error> {
/// let journal = WriteJournal::new("upload.journal", "orders-2025-03-01");
/// let mut batches = client.insert(&rows).journal(journal).stream()?;
/// while let Some(batch) = batches.next().await {
///     for (index, outcome) in batch.indexed() {
///         if !outcome.is_stored() {
///             eprintln!("row {index}: {outcome:?}");
///         }
///     }
/// }
/// # Ok(()) }
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WriteJournal {
    path: PathBuf,
    input: String,
    note: Option<String>,
    resume_only: bool,
    keep_finished: bool,
}

impl WriteJournal {
    /// The journal at `path` for the input `input` names (one line of at
    /// most [`MAX_JOURNAL_TEXT`] bytes: a file's size and hash, an export
    /// id). A journal at `path` written for another `input` is refused.
    pub fn new(path: impl Into<PathBuf>, input: impl Into<String>) -> Self {
        Self {
            path: path.into(),
            input: input.into(),
            note: None,
            resume_only: false,
            keep_finished: false,
        }
    }

    /// Keeps the journal when the write finishes (the input ended and every
    /// row has its outcome), ending it with a `finished` record, instead of
    /// removing it: the write is remembered ([`JournalState::finished`]), and
    /// a rerun of the same input settles every row from it and sends nothing.
    pub fn keep_finished(mut self) -> Self {
        self.keep_finished = true;
        self
    }

    /// Only resumes: when there is no journal at `path` as the stream opens
    /// (the write that owned it finished and removed it, or it was deleted),
    /// the stream is refused with [`Error::JournalGone`] instead of starting
    /// a new one, which would take rows an earlier run stored for conflicts.
    pub fn resume_only(mut self) -> Self {
        self.resume_only = true;
        self
    }

    /// The application's own line (at most [`MAX_JOURNAL_TEXT`] bytes, no
    /// line break), kept in the journal and read back by
    /// [`JournalState::note`]; written when the journal is created, or
    /// appended on a rerun when it differs from the recorded one.
    pub fn note(mut self, note: impl Into<String>) -> Self {
        self.note = Some(note.into());
        self
    }

    /// Where the journal is.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// What the journal at `path` says, without changing it; `None` when
    /// there is none.
    pub fn read(path: impl AsRef<Path>) -> Result<Option<JournalState>, Error> {
        let path = path.as_ref();
        let file = match open_existing(path, false)? {
            Some(f) => f,
            None => return Ok(None),
        };
        parse(path, &file).map(Some)
    }

    fn check(&self) -> Result<(), Error> {
        check_text("journal input", &self.input)?;
        if let Some(note) = &self.note {
            check_text("journal note", note)?;
        }
        Ok(())
    }
}

fn check_text(field: &str, text: &str) -> Result<(), Error> {
    if text.len() > MAX_JOURNAL_TEXT || text.contains(['\n', '\r']) {
        return Err(Error::invalid(
            field,
            format!("must be one line of at most {MAX_JOURNAL_TEXT} bytes"),
        ));
    }
    Ok(())
}

/// What an existing journal says (from [`WriteJournal::read`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct JournalState {
    input: String,
    note: Option<String>,
    mark: u64,
    stored: u64,
    rejected: u64,
    /// 0-based, sorted, disjoint.
    settled: Vec<Range<usize>>,
    /// 0-based, as recorded.
    sent: Vec<Range<usize>>,
    /// (rows through, fingerprint), ascending.
    checkpoints: Vec<(u64, u64)>,
    /// Bytes of complete lines.
    complete_len: u64,
    /// The `finished` record's time, when it is the last `send`/`done`/`finished` record.
    finished: Option<std::time::SystemTime>,
}

impl JournalState {
    /// The `input` text it was written for.
    pub fn input(&self) -> &str {
        &self.input
    }

    /// The last note, if any.
    pub fn note(&self) -> Option<&str> {
        self.note.as_deref()
    }

    /// The application's mark of the last `done` record (0 when none).
    pub fn mark(&self) -> u64 {
        self.mark
    }

    /// Rows settled as stored (or already stored), over every earlier run.
    pub fn stored(&self) -> u64 {
        self.stored
    }

    /// Rows settled as rejected (locally or by the server), over every
    /// earlier run.
    pub fn rejected(&self) -> u64 {
        self.rejected
    }

    /// When the write finished, if it did and the journal was kept
    /// ([`WriteJournal::keep_finished`]): every row then has its outcome.
    pub fn finished(&self) -> Option<std::time::SystemTime> {
        self.finished
    }

    /// Rows with their outcome.
    pub fn settled(&self) -> u64 {
        self.settled.iter().map(|r| r.len() as u64).sum()
    }

    /// The [`Resume`] these records make.
    pub(crate) fn resume(&self) -> Resume {
        let mut resume = Resume::new();
        for r in &self.settled {
            resume = resume.settled(r.clone());
        }
        for r in &self.sent {
            resume = resume.sent(r.clone());
        }
        resume
    }

    pub(crate) fn checkpoints(&self) -> &[(u64, u64)] {
        &self.checkpoints
    }
}

fn io(path: &Path, e: &std::io::Error) -> Error {
    Error::Io {
        path: path.display().to_string(),
        message: e.to_string(),
    }
}

fn damaged(path: &Path, line: Option<u64>, why: impl std::fmt::Display) -> Error {
    Error::JournalDamaged {
        path: path.display().to_string(),
        line,
        reason: why.to_string(),
    }
}

/// Opens an existing journal (to append to, when `write`), refusing a
/// symlink; `None` when there is none.
fn open_existing(path: &Path, write: bool) -> Result<Option<File>, Error> {
    match std::fs::symlink_metadata(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(io(path, &e)),
        Ok(meta) if !meta.file_type().is_file() => {
            return Err(damaged(
                path,
                None,
                "it is not a regular file (a symlink is not followed)",
            ));
        }
        Ok(_) => {}
    }
    let mut options = OpenOptions::new();
    options.read(true).append(write);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        // O_NOFOLLOW: a symlink planted after the check is refused too.
        options.custom_flags(libc::O_NOFOLLOW);
    }
    options.open(path).map(Some).map_err(|e| io(path, &e))
}

fn range(text: &str) -> Option<Range<usize>> {
    let (a, b) = text.split_once('-')?;
    let (a, b): (usize, usize) = (a.parse().ok()?, b.parse().ok()?);
    (a >= 1 && a <= b).then(|| a - 1..b)
}

fn parse(path: &Path, file: &File) -> Result<JournalState, Error> {
    let mut reader = BufReader::new(file);
    let mut state = JournalState::default();
    let mut lines = 0u64;
    let mut line = String::new();
    let mut settled: Vec<Range<usize>> = Vec::new();
    // (rows through, fingerprint, line) of each `done` record.
    let mut prints: Vec<(u64, u64, u64)> = Vec::new();
    loop {
        line.clear();
        let n = reader
            .read_line(&mut line)
            .map_err(|e| damaged(path, Some(lines + 1), format!("it cannot be read: {e}")))?;
        if n == 0 || !line.ends_with('\n') {
            break; // the end, or a line torn by a kill: ignored
        }
        lines += 1;
        let text = &line[..line.len() - 1];
        let at = |why: &str| damaged(path, Some(lines), why);
        let bad = || at("it is not a journal record");
        match lines {
            1 if text == MAGIC => {}
            1 => return Err(at(&format!("it is not {MAGIC:?}"))),
            2 => state.input = text.strip_prefix("input ").ok_or_else(bad)?.to_owned(),
            _ => {
                if let Some(note) = text.strip_prefix("note ") {
                    state.note = Some(note.to_owned());
                } else if let Some(secs) = text.strip_prefix("finished at=") {
                    let secs: u64 = secs.parse().map_err(|_| bad())?;
                    let at =
                        std::time::UNIX_EPOCH.checked_add(std::time::Duration::from_secs(secs));
                    state.finished = Some(at.ok_or_else(bad)?);
                } else if let Some(rows) = text.strip_prefix("send ") {
                    state.finished = None;
                    state.sent.push(range(rows).ok_or_else(bad)?);
                } else {
                    state.finished = None;
                    let done = Done::parse(text).ok_or_else(bad)?;
                    // A record counts only rows it settles; counts beyond
                    // them (or past u64) are a damaged file, never a wrap.
                    let resent: usize = done.resend.iter().map(ExactSizeIterator::len).sum();
                    let fresh = (done.rows.len() - resent) as u64;
                    if done
                        .stored
                        .checked_add(done.rejected)
                        .is_none_or(|n| n > fresh)
                    {
                        return Err(at(&format!(
                            "it counts {} stored and {} rejected rows, but settles {fresh}",
                            done.stored, done.rejected
                        )));
                    }
                    let total = |sum: u64, n: u64| sum.checked_add(n);
                    state.stored = total(state.stored, done.stored)
                        .ok_or_else(|| at("the stored rows overflow"))?;
                    state.rejected = total(state.rejected, done.rejected)
                        .ok_or_else(|| at("the rejected rows overflow"))?;
                    state.mark = done.mark;
                    prints.push((done.rows.end as u64, done.fingerprint, lines));
                    let mut next = done.rows.start;
                    for r in &done.resend {
                        if r.start > next {
                            settled.push(next..r.start);
                        }
                        next = r.end;
                    }
                    if next < done.rows.end {
                        settled.push(next..done.rows.end);
                    }
                }
            }
        }
        state.complete_len += n as u64;
    }
    if lines < 2 {
        return Err(damaged(path, None, "it has no input line"));
    }
    settled.sort_by_key(|r| r.start);
    for r in settled {
        match state.settled.last_mut() {
            Some(last) if r.start <= last.end => last.end = last.end.max(r.end),
            _ => state.settled.push(r),
        }
    }
    // Two records of the same rows with different fingerprints contradict
    // each other.
    prints.sort_unstable();
    if let Some(w) = prints
        .windows(2)
        .find(|w| w[0].0 == w[1].0 && w[0].1 != w[1].1)
    {
        let (first, later) = (w[0].2.min(w[1].2), w[0].2.max(w[1].2));
        let why = format!(
            "its fingerprint of rows 1 to {} is not line {first}'s",
            w[0].0
        );
        return Err(damaged(path, Some(later), why));
    }
    state.checkpoints = prints.into_iter().map(|(t, fp, _)| (t, fp)).collect();
    state.checkpoints.dedup_by_key(|c| c.0);
    Ok(state)
}

/// One `done` record (0-based ranges).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Done {
    pub(crate) rows: Range<usize>,
    pub(crate) stored: u64,
    pub(crate) rejected: u64,
    pub(crate) mark: u64,
    pub(crate) resend: Vec<Range<usize>>,
    pub(crate) fingerprint: u64,
    /// The server rejected a row of it: a rejection can depend on what the
    /// service held at the time (a `0x0000011A` conflict with another
    /// upload), and a rerun that sent the row again could hear "already
    /// stored" and count it a success, so the record is fsynced at once.
    /// Every other outcome comes back the same from a resend (stored rows as
    /// "already stored", a success since their `send` record is durable;
    /// local refusals from the same check over the same input; failed rows
    /// are sent again anyway). Not part of the line.
    pub(crate) must_sync: bool,
}

impl Done {
    /// The record of a batch this run answered; `None` when an earlier run
    /// settled every row of it (nothing new to record).
    pub(crate) fn of(batch: &WriteBatch) -> Option<Self> {
        let fingerprint = batch.fingerprint?;
        let mut done = Self {
            rows: batch.range.clone(),
            stored: 0,
            rejected: 0,
            mark: 0,
            resend: Vec::new(),
            fingerprint,
            must_sync: false,
        };
        let mut fresh = false;
        for (i, outcome) in batch.indexed() {
            match outcome {
                Outcome::Settled => continue,
                o if o.is_stored() => done.stored += 1,
                Outcome::Failed { .. } => match done.resend.last_mut() {
                    Some(last) if last.end == i => last.end = i + 1,
                    _ => done.resend.push(i..i + 1),
                },
                Outcome::Rejected(_) => {
                    done.rejected += 1;
                    done.must_sync = true;
                }
                _ => done.rejected += 1,
            }
            fresh = true;
        }
        fresh.then_some(done)
    }

    fn line(&self) -> String {
        let text = |r: &Range<usize>| format!("{}-{}", r.start + 1, r.end);
        let resend = if self.resend.is_empty() {
            "-".to_owned()
        } else {
            self.resend.iter().map(text).collect::<Vec<_>>().join(",")
        };
        format!(
            "done {} stored={} rejected={} mark={} resend={resend} fp={:016x}\n",
            text(&self.rows),
            self.stored,
            self.rejected,
            self.mark,
            self.fingerprint
        )
    }

    fn parse(text: &str) -> Option<Self> {
        let mut parts = text.split(' ');
        if parts.next()? != "done" {
            return None;
        }
        let rows = range(parts.next()?)?;
        let mut value = |key: &str| parts.next()?.strip_prefix(key).map(str::to_owned);
        let stored = value("stored=")?.parse().ok()?;
        let rejected = value("rejected=")?.parse().ok()?;
        let mark = value("mark=")?.parse().ok()?;
        let resend_text = value("resend=")?;
        let fingerprint = u64::from_str_radix(&value("fp=")?, 16).ok()?;
        if parts.next().is_some() {
            return None;
        }
        let resend = if resend_text == "-" {
            Vec::new()
        } else {
            resend_text
                .split(',')
                .map(range)
                .collect::<Option<Vec<_>>>()?
        };
        let inside = resend
            .iter()
            .all(|r| r.start >= rows.start && r.end <= rows.end)
            && resend.windows(2).all(|w| w[0].end <= w[1].start);
        inside.then_some(Self {
            rows,
            stored,
            rejected,
            mark,
            resend,
            fingerprint,
            must_sync: false,
        })
    }
}

/// An open journal, its `done` checkpoints, and whether a batch's `send`
/// record may be written as the batch opens (no application hook expects
/// exact batch ranges), for a [`WriteStream`](super::WriteStream).
pub(crate) type JournalParts = (std::sync::Arc<JournalFile>, Vec<(u64, u64)>, bool);

/// The open journal of a running write: records are appended under one
/// lock (each a single write of one line), and made durable by
/// [`sync`](Self::sync) without holding it, so one `fdatasync` covers
/// every record appended before it started (group commit) and an append
/// never waits for the disk.
#[derive(Debug)]
pub(crate) struct JournalFile {
    path: PathBuf,
    file: File,
    /// Held for as long as the journal is open: it has one writer.
    _owner: Owner,
    /// Bytes appended: the file's length once every append returned.
    appended: Mutex<u64>,
    /// Bytes known durable (`fdatasync`ed), ≤ `appended`.
    synced: AtomicU64,
    /// Held while an `fdatasync` runs, so a later one can see whether the
    /// running one covered its records.
    syncing: Mutex<()>,
    /// Ended with a `finished` record rather than removed
    /// ([`WriteJournal::keep_finished`]).
    keep_finished: bool,
    /// The length at which the journal read finished as it was opened: a
    /// rerun that appended nothing leaves its `finished` record as it is.
    finished_len: Option<u64>,
    /// Tests: milliseconds each `fdatasync` takes beyond the disk's own (a
    /// slow disk, so that a request leaving too early is seen).
    #[cfg(test)]
    slow_sync_ms: AtomicU64,
}

impl JournalFile {
    /// Opens `journal`: resumes the existing file (checks its input, cuts a
    /// torn line, appends a changed note) or creates it. Either way the file
    /// is durable as it is when this returns.
    pub(crate) fn open(journal: &WriteJournal) -> Result<(Self, Option<JournalState>), Error> {
        journal.check()?;
        let path = &journal.path;
        let owner = Owner::take(path)?;
        if let Some(file) = open_existing(path, true)? {
            let state = parse(path, &file)?;
            if state.input != journal.input {
                return Err(Error::invalid(
                    "journal",
                    format!(
                        "{} was written for another input ({:?}, not {:?}); give the same input to resume, or remove the journal to start over",
                        path.display(),
                        state.input,
                        journal.input
                    ),
                ));
            }
            file.set_len(state.complete_len).map_err(|e| io(path, &e))?;
            let mut open = Self::at(journal, file, owner, state.complete_len);
            if let Some(note) = &journal.note
                && state.note.as_deref() != Some(note.as_str())
            {
                open.append(&format!("note {note}\n"))?;
            }
            open.finished_len = state.finished.map(|_| open.appended());
            // What the rerun relies on (records an earlier run appended but
            // did not fsync, the cut) is made durable before it sends anything.
            open.sync(open.appended())?;
            return Ok((open, Some(state)));
        }
        if journal.resume_only {
            return Err(Error::JournalGone {
                path: path.display().to_string(),
            });
        }
        let mut head = format!("{MAGIC}\ninput {}\n", journal.input);
        if let Some(note) = &journal.note {
            head.push_str(&format!("note {note}\n"));
        }
        let mut fresh = path.as_os_str().to_owned();
        fresh.push(".new");
        let fresh = PathBuf::from(fresh);
        // Written whole beside it and renamed: a kill never leaves a journal
        // without its header; created new, never through a planted symlink.
        let write = || -> std::io::Result<()> {
            let mut file = sa360_video_private_file::create_new(&fresh)?;
            file.write_all(head.as_bytes())?;
            file.sync_all()?;
            std::fs::rename(&fresh, path)
        };
        write().map_err(|e| io(path, &e))?;
        let gone = || io(path, &std::io::ErrorKind::NotFound.into());
        let file = open_existing(path, true)?.ok_or_else(gone)?;
        let open = Self::at(journal, file, owner, head.len() as u64);
        open.synced.store(head.len() as u64, Ordering::SeqCst);
        Ok((open, None))
    }

    fn at(journal: &WriteJournal, file: File, owner: Owner, len: u64) -> Self {
        Self {
            path: journal.path.clone(),
            file,
            _owner: owner,
            appended: Mutex::new(len),
            synced: AtomicU64::new(0),
            syncing: Mutex::new(()),
            keep_finished: journal.keep_finished,
            finished_len: None,
            #[cfg(test)]
            slow_sync_ms: AtomicU64::new(0),
        }
    }

    /// Appends `line` (one record, with its line break) without waiting for
    /// the disk: it survives a kill of the process at once (it is in the
    /// kernel's cache), a power loss once [`sync`](Self::sync)ed. Returns the
    /// file's length with it, to give to `sync`.
    fn append(&self, line: &str) -> Result<u64, Error> {
        let mut appended = self.appended.lock().unwrap_or_else(PoisonError::into_inner);
        (&self.file)
            .write_all(line.as_bytes())
            .map_err(|e| io(&self.path, &e))?;
        *appended += line.len() as u64;
        Ok(*appended)
    }

    /// The file's length once every append so far returned.
    fn appended(&self) -> u64 {
        *self.appended.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Makes the first `upto` bytes durable (`fdatasync`), unless an earlier
    /// call already did: one call covers every record appended before it.
    pub(crate) fn sync(&self, upto: u64) -> Result<(), Error> {
        let _turn = self.syncing.lock().unwrap_or_else(PoisonError::into_inner);
        if self.synced.load(Ordering::SeqCst) >= upto {
            return Ok(());
        }
        let covered = self.appended();
        #[cfg(test)]
        std::thread::sleep(std::time::Duration::from_millis(
            self.slow_sync_ms.load(Ordering::SeqCst),
        ));
        self.file.sync_data().map_err(|e| io(&self.path, &e))?;
        self.synced.fetch_max(covered, Ordering::SeqCst);
        Ok(())
    }

    /// Makes every record appended so far durable.
    pub(crate) fn sync_all(&self) -> Result<(), Error> {
        self.sync(self.appended())
    }

    /// Tests: every `fdatasync` from now on takes `ms` milliseconds longer.
    #[cfg(test)]
    pub(crate) fn slow_sync(&self, ms: u64) {
        self.slow_sync_ms.store(ms, Ordering::SeqCst);
    }

    /// Bytes known durable: what a power loss now would leave of the file.
    #[cfg(test)]
    pub(crate) fn synced_len(&self) -> u64 {
        self.synced.load(Ordering::SeqCst)
    }

    /// Rows `rows` (0-based) may be sent from now on: appends their `send`
    /// record and returns once it is durable. No request of the batch may
    /// leave before this returns `Ok`.
    pub(crate) fn send(&self, rows: Range<usize>) -> Result<(), Error> {
        let upto = self.append(&format!(
            "send {}-{}\n",
            rows.start + 1,
            rows.end.max(rows.start + 1)
        ))?;
        self.sync(upto)
    }

    /// A batch's outcomes, handled by the application. Appended; made
    /// durable at once only when losing it could change a verdict (see
    /// [`Done::must_sync`]), else by the next `send` record's `fdatasync` or
    /// the close.
    pub(crate) fn done(&self, done: &Done) -> Result<(), Error> {
        let upto = self.append(&done.line())?;
        if done.must_sync {
            self.sync(upto)?;
        }
        Ok(())
    }

    /// Every row has its outcome: removes the journal, or with
    /// [`WriteJournal::keep_finished`] appends its `finished` record (unless
    /// it ended with one and nothing was appended since) and fsyncs it.
    pub(crate) fn finish(&self) -> Result<(), Error> {
        if !self.keep_finished {
            return std::fs::remove_file(&self.path).map_err(|e| io(&self.path, &e));
        }
        if self.finished_len != Some(self.appended()) {
            let secs = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_secs());
            self.append(&format!("finished at={secs}\n"))?;
        }
        self.sync_all()
    }
}

/// How long opening a journal waits for a write that is letting go of it (a
/// stream just dropped whose last `send` record is still being fsynced on a
/// blocking thread) before it refuses.
const LET_GO: std::time::Duration = std::time::Duration::from_secs(2);

/// The one owner of a journal: an exclusive OS lock on `PATH.lock`, held
/// while this lives; the file is removed as it is let go (still locked).
#[derive(Debug)]
struct Owner {
    path: PathBuf,
    _file: File,
}

impl Owner {
    /// Takes the lock of the journal at `journal`, or refuses with
    /// [`Error::JournalBusy`] when another write still holds it after
    /// [`LET_GO`].
    fn take(journal: &Path) -> Result<Self, Error> {
        let mut name = journal.as_os_str().to_owned();
        name.push(".lock");
        let path = PathBuf::from(name);
        let deadline = std::time::Instant::now() + LET_GO;
        loop {
            let mut options = OpenOptions::new();
            options.read(true).write(true).create(true).truncate(false);
            #[cfg(unix)]
            {
                use std::os::unix::fs::OpenOptionsExt;
                options.mode(0o600).custom_flags(libc::O_NOFOLLOW);
            }
            let file = options.open(&path).map_err(|e| io(&path, &e))?;
            match fs4::FileExt::try_lock(&file) {
                Ok(()) => {}
                Err(fs4::TryLockError::WouldBlock) if std::time::Instant::now() < deadline => {
                    std::thread::sleep(std::time::Duration::from_millis(10));
                    continue;
                }
                Err(fs4::TryLockError::WouldBlock) => {
                    return Err(Error::JournalBusy {
                        path: journal.display().to_string(),
                    });
                }
                Err(fs4::TryLockError::Error(e)) => return Err(io(&path, &e)),
            }
            // The owner before may have removed the file it locked as it let
            // go: only a lock on the file now at `path` counts.
            if same_file(&file, &path) {
                return Ok(Self { path, _file: file });
            }
        }
    }
}

impl Drop for Owner {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

/// True when `file` is the file at `path` (not followed if a symlink).
fn same_file(file: &File, path: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        match (file.metadata(), std::fs::symlink_metadata(path)) {
            (Ok(a), Ok(b)) => (a.dev(), a.ino()) == (b.dev(), b.ino()),
            _ => false,
        }
    }
    #[cfg(not(unix))]
    {
        // Windows: a removal pending while the locked file is open keeps
        // others from opening it, so a lock taken is on the file at `path`.
        let _ = (file, path);
        true
    }
}

/// The running fingerprint of the rows read (XXH3-64 over each row's
/// identity, chained), stable across versions and processes.
#[derive(Debug, Clone, Default)]
pub(crate) struct RowPrint {
    value: u64,
}

impl RowPrint {
    pub(crate) fn push(&mut self, c: &Conversion) {
        use xxhash_rust::xxh3::Xxh3;
        let mut h = Xxh3::with_seed(self.value);
        let text = |h: &mut Xxh3, s: Option<&str>| {
            let s = s.unwrap_or("\u{1}");
            h.update(&(s.len() as u64).to_le_bytes());
            h.update(s.as_bytes());
        };
        let num = |h: &mut Xxh3, n: Option<i64>| h.update(&n.unwrap_or(i64::MIN).to_le_bytes());
        text(&mut h, c.conversion_id.as_deref().map(str::trim));
        num(&mut h, c.conversion_timestamp.map(|t| t.timestamp_millis()));
        num(&mut h, c.agency_id.map(|a| a.get()));
        num(&mut h, c.advertiser_id.map(|a| a.get()));
        text(&mut h, c.customer_id.as_ref().map(|x| x.as_str()));
        text(&mut h, c.click_id.as_deref());
        num(&mut h, c.segmentation_id.map(|s| s.get()));
        num(&mut h, c.revenue_micros.map(|m| m.get()));
        num(&mut h, c.quantity_millis);
        num(&mut h, c.count_millis);
        text(&mut h, c.state.as_ref().map(|s| s.as_str()));
        self.value = h.digest();
    }

    pub(crate) fn value(&self) -> u64 {
        self.value
    }
}

#[cfg(test)]
mod tests;

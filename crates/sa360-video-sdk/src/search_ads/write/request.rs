//! [`WriteRequest`]: the builder that [`SearchAdsClient::insert`] and
//! [`SearchAdsClient::update`] return, ending in [`send`](WriteRequest::send) or
//! [`stream`](WriteRequest::stream).

use std::sync::Arc;

use futures::stream::BoxStream;
use futures::{FutureExt, Stream, StreamExt};

use super::super::call;
use super::super::client::SearchAdsClient;
use super::super::conversion::Conversion;
use super::super::error::Error;
use super::batching::Batch;
use super::journal::{JournalFile, JournalParts, WriteJournal};
use super::kind::WriteKind;
use super::options::{WriteOptions, WriteProgress, WriteProgressFn};
use super::report::WriteReport;
use super::resume::Resume;
use super::run::{BeforeSendFn, SendFn, Shared};
use super::send::send_body;
use super::stream::WriteStream;

/// One insert or update, configured and not sent yet. Made by
/// [`SearchAdsClient::insert`], [`SearchAdsClient::insert_stream`],
/// [`SearchAdsClient::update`] and [`SearchAdsClient::update_stream`]; nothing is read
/// from the input or sent before [`send`](Self::send) or
/// [`stream`](Self::stream).
///
/// ```no_run
/// use sa360_video_sdk::search_ads::{Conversion, SearchAdsClient, WriteOptions};
/// # async fn run(client: SearchAdsClient, conversions: Vec<Conversion>) -> Result<(), sa360_video_sdk::search_ads::Error> {
/// let report = client
///     .insert(&conversions)
///     .options(WriteOptions::default().batch_size(200).concurrency(8))
///     .progress(|p| eprintln!("{} conversions done", p.conversions_done))
///     .send()
///     .await?;
/// println!("{report}");
/// # Ok(()) }
/// ```
#[must_use = "a write request does nothing until .send() or .stream()"]
pub struct WriteRequest<'a> {
    client: SearchAdsClient,
    kind: WriteKind,
    input: BoxStream<'a, Conversion>,
    total: Option<usize>,
    options: WriteOptions,
    progress: Option<WriteProgressFn>,
    resubmission: bool,
    resume: Option<Resume>,
    before_send: Option<BeforeSendFn>,
    journal: Option<WriteJournal>,
}

impl std::fmt::Debug for WriteRequest<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WriteRequest")
            .field("operation", &self.kind.operation())
            .field("total", &self.total)
            .field("options", &self.options)
            .field("progress", &self.progress.is_some())
            .field("resubmission", &self.resubmission)
            .field("resume", &self.resume.is_some())
            .field("before_send", &self.before_send.is_some())
            .field("journal", &self.journal.as_ref().map(WriteJournal::path))
            .finish()
    }
}

impl<'a> WriteRequest<'a> {
    pub(crate) fn new(
        client: &SearchAdsClient,
        kind: WriteKind,
        input: BoxStream<'a, Conversion>,
        total: Option<usize>,
    ) -> Self {
        Self {
            client: client.clone(),
            kind,
            input,
            total,
            options: client.write_options(),
            progress: None,
            resubmission: false,
            resume: None,
            before_send: None,
            journal: None,
        }
    }

    /// The batching of this call (default: the client's
    /// [`write_options`](SearchAdsClient::write_options)). Checked by
    /// [`send`](Self::send) and [`stream`](Self::stream) before anything is
    /// read or sent.
    pub fn options(mut self, options: WriteOptions) -> Self {
        self.options = options;
        self
    }

    /// Calls `progress` after each batch finished (see [`WriteProgress`]).
    pub fn progress(mut self, progress: impl Fn(WriteProgress) + Send + Sync + 'static) -> Self {
        self.progress = Some(Arc::new(progress));
        self
    }

    /// Like [`progress`](Self::progress), with a shared callback.
    pub fn progress_shared(mut self, progress: WriteProgressFn) -> Self {
        self.progress = Some(progress);
        self
    }

    /// Resubmission mode (default off). Turn it on when the input may have
    /// been sent before, in part or whole: a rerun after an interrupted or
    /// partly failed upload. An insert's `0x0000011A` (the (owner, conversion
    /// id, timestamp) is already stored) is then
    /// [`Outcome::AlreadyStored`](super::Outcome::AlreadyStored), a success,
    /// instead of a rejection. Off, a `0x0000011A` that no attempt of this
    /// call can explain is [`Outcome::Rejected`](super::Outcome::Rejected):
    /// in a first run it means another upload used the id, which the caller
    /// should hear of. Updates are not affected (an update answers no
    /// duplicates).
    pub fn resubmission(mut self, resubmission: bool) -> Self {
        self.resubmission = resubmission;
        self
    }

    /// A rerun of an input an earlier run did in part (see [`Resume`]): the
    /// input is the whole input again, in the same order; the conversions
    /// `resume` calls settled are not sent (each gets
    /// [`Outcome::Settled`](super::Outcome::Settled)) but still count for the
    /// duplicate check, and a `0x0000011A` is "already stored" only for a
    /// conversion `resume` says an earlier run may have sent. Every
    /// conversion thus gets the verdict one uninterrupted run gives it.
    /// Finer than [`resubmission`](Self::resubmission), which calls every
    /// `0x0000011A` "already stored".
    pub fn resume(mut self, resume: Resume) -> Self {
        self.resume = Some(resume);
        self
    }

    /// Exactly-once, resumable: keeps `journal` (see [`WriteJournal`]). A
    /// first run creates it; a rerun of the same input after an interruption
    /// finds it and sends only what has no outcome yet, giving every
    /// conversion the verdict one uninterrupted run gives it. Removed when
    /// the input ended and every conversion has its outcome. Opened (or
    /// created) by [`send`](Self::send) or [`stream`](Self::stream) before
    /// anything is read; not with [`resume`](Self::resume), which it replaces.
    pub fn journal(mut self, journal: WriteJournal) -> Self {
        self.journal = Some(journal);
        self
    }

    /// Calls `hook` with the input range of each batch (the indices it
    /// covers, sent or not) before the batch's first request, in input
    /// order, and waits for it: a journal records there which conversions
    /// may be on their way to the server (what [`Resume::sent`] needs after
    /// an interruption). An `Err` stops the call: that batch and every later
    /// one are not sent, their conversions get
    /// [`Outcome::Failed`](super::Outcome::Failed) with the error and
    /// `may_have_been_stored: false`. Batches that send nothing (every
    /// conversion refused or settled) are not shown to it.
    ///
    /// Within a Tokio runtime the hook runs on a blocking thread
    /// (`spawn_blocking`), for the next batch while earlier ones are in
    /// flight, so a hook that waits for a disk does not hold up the
    /// requests: it may thus see a batch the stream then never sends (the
    /// stream was dropped, or an error that fails every batch stopped it
    /// first), which is why it says "may be on their way". Outside a Tokio
    /// runtime it runs on the polling thread as the batch starts.
    pub fn before_send(
        mut self,
        hook: impl Fn(std::ops::Range<usize>) -> Result<(), Error> + Send + Sync + 'static,
    ) -> Self {
        self.before_send = Some(Arc::new(hook));
        self
    }

    /// Sends every batch and collects the outcomes: one [`Outcome`] per
    /// input conversion, in input order; failures of single batches are in
    /// the report, not an `Err`, and so are conversions refused locally
    /// ([`Outcome::Invalid`](super::Outcome::Invalid)).
    ///
    /// `Err` only for invalid [`options`](Self::options) (before anything is
    /// read) or an empty input (nothing sent). The report holds one outcome
    /// per input conversion; to keep memory bounded for an input of any
    /// length, use [`stream`](Self::stream).
    ///
    /// [`Outcome`]: super::Outcome
    pub async fn send(self) -> Result<WriteReport, Error> {
        let kind = self.kind;
        let report: WriteReport = self.stream()?.collect().await;
        if report.is_empty() {
            return Err(Error::invalid(
                "conversions",
                format!("is empty: give at least one conversion to {}", kind.verb()),
            ));
        }
        tracing::info!(operation = kind.operation(), %report, "write finished");
        Ok(report)
    }

    /// Starts the call as a stream of [`WriteBatch`](super::WriteBatch)es,
    /// yielded in input order as they finish, with bounded memory and
    /// concurrency (see [`WriteStream`]). An empty input yields nothing.
    /// `Err` only for invalid [`options`](Self::options), before anything is
    /// read.
    ///
    /// ```no_run
    /// use futures::StreamExt;
    /// use sa360_video_sdk::search_ads::{Conversion, Outcome, SearchAdsClient};
    /// # async fn run(client: SearchAdsClient, rows: impl Iterator<Item = Conversion> + Send) -> Result<(), sa360_video_sdk::search_ads::Error> {
    /// let mut batches = client.insert(rows).resubmission(true).stream()?;
    /// while let Some(batch) = batches.next().await {
    ///     for (index, outcome) in batch.indexed() {
    ///         if !outcome.is_stored() {
    ///             eprintln!("row {index}: {outcome:?}");
    ///         }
    ///     }
    /// }
    /// # Ok(()) }
    /// ```
    pub fn stream(self) -> Result<WriteStream<'a>, Error> {
        self.options.validate()?;
        let mut resume = self.resume;
        let mut before_send = self.before_send;
        let journal = match &self.journal {
            None => None,
            Some(_) if resume.is_some() => {
                return Err(Error::invalid(
                    "journal",
                    "cannot be combined with resume(): the journal says what earlier runs did",
                ));
            }
            Some(journal) => {
                let (earlier, hook, parts) = open_journal(journal, before_send)?;
                resume = earlier;
                before_send = Some(hook);
                Some(parts)
            }
        };
        let shared = Shared::new(
            self.kind,
            self.resubmission,
            self.client.inner.retry.clone(),
            http_sender(&self.client, self.kind),
            before_send,
        );
        Ok(WriteStream::new(
            self.input,
            self.total,
            self.options,
            self.progress,
            shared,
            resume.map(Resume::cursor),
            journal,
        ))
    }
}

/// Opens (or creates) `journal`: what earlier runs did, the `before_send`
/// hook that records sends (then calls `then`), and the open file.
pub(crate) fn open_journal(
    journal: &WriteJournal,
    then: Option<BeforeSendFn>,
) -> Result<(Option<Resume>, BeforeSendFn, JournalParts), Error> {
    let (file, state) = JournalFile::open(journal)?;
    let file = Arc::new(file);
    let checkpoints = state.as_ref().map(|s| s.checkpoints().to_vec());
    let resume = state.as_ref().map(|s| s.resume());
    let ahead = then.is_none();
    let hook = journal_hook(file.clone(), then);
    Ok((resume, hook, (file, checkpoints.unwrap_or_default(), ahead)))
}

/// The hook that appends a journal's `send` record and waits until it is
/// durable (fsynced) before a batch is sent, then calls the application's
/// own hook.
fn journal_hook(file: Arc<JournalFile>, then: Option<BeforeSendFn>) -> BeforeSendFn {
    Arc::new(move |rows: std::ops::Range<usize>| {
        file.send(rows.clone())?;
        match &then {
            Some(hook) => hook(rows),
            None => Ok(()),
        }
    })
}

/// The exact length of an iterator, when its `size_hint` says it.
pub(crate) fn exact_len<I: Iterator>(iter: &I) -> Option<usize> {
    match iter.size_hint() {
        (lower, Some(upper)) if lower == upper => Some(lower),
        _ => None,
    }
}

/// The input as a stream of owned conversions.
pub(crate) fn from_iter<'a, I>(conversions: I) -> (BoxStream<'a, Conversion>, Option<usize>)
where
    I: IntoIterator,
    I::Item: Into<Conversion> + 'a,
    I::IntoIter: Send + 'a,
{
    let iter = conversions.into_iter();
    let total = exact_len(&iter);
    (futures::stream::iter(iter.map(Into::into)).boxed(), total)
}

/// A stream input as a stream of owned conversions.
pub(crate) fn from_stream<'a, S>(conversions: S) -> BoxStream<'a, Conversion>
where
    S: Stream + Send + 'a,
    S::Item: Into<Conversion> + 'a,
{
    conversions.map(Into::into).boxed()
}

/// Sends a batch as one `conversion.insert` or `conversion.update` request
/// (see [`send`](super::send)); after a 401, once more with a fresh token.
fn http_sender(client: &SearchAdsClient, kind: WriteKind) -> SendFn {
    let client = client.clone();
    Arc::new(move |batch: Arc<Batch>, _attempt| {
        let client = client.clone();
        async move {
            let operation = kind.operation();
            call::fresh_token_on_401(&client.inner.calls, operation, || {
                send_body(&client.inner.api, operation, &batch.body)
            })
            .await
        }
        .boxed()
    })
}

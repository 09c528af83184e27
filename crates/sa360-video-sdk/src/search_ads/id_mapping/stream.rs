//! The ID-mapping body to a stream of typed rows in constant memory (see the
//! module docs of [`id_mapping`](super) for the design).

use std::io::{self, Read};
use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use futures::future::BoxFuture;
use futures::stream::{BoxStream, Stream, StreamExt};
use tokio::sync::mpsc;

use super::decode::{csv_error, parse_row, short};
use super::rows::{
    CHUNKS_IN_FLIGHT, CSV_BUFFER, HEADER, IdMappingRow, ProgressFn, ROW_BATCH, ROWS_IN_FLIGHT,
    RowBatch,
};
use crate::search_ads::error::Error;
use crate::search_ads::wire::{OP_ID_MAPPING, body_limit_error};

/// What the end of a body says about its completeness: byte count, last
/// byte and whether a quoted field is still open (`"` count is odd; escaped
/// quotes `""` count twice).
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct Tail {
    pub bytes: u64,
    last: Option<u8>,
    in_quotes: bool,
}

impl Tail {
    pub(crate) fn feed(&mut self, chunk: &[u8]) {
        self.bytes += chunk.len() as u64;
        if let Some(&b) = chunk.last() {
            self.last = Some(b);
        }
        let quotes = chunk.iter().filter(|&&b| b == b'"').count();
        self.in_quotes ^= quotes % 2 == 1;
    }

    /// True when the body cannot be a whole file: it ends inside a quoted
    /// field or without a line terminator.
    pub(crate) fn is_cut(&self) -> bool {
        self.in_quotes || self.last.is_some_and(|b| b != b'\n')
    }
}

/// Pumps a body into `tx`, counting bytes and reporting progress; a broken
/// body or one shorter than `expected` ends with [`Error::TruncatedDownload`].
async fn pump<S, E>(
    mut body: S,
    expected: Option<u64>,
    progress: Option<ProgressFn>,
    tx: mpsc::Sender<Result<Bytes, Error>>,
) where
    S: Stream<Item = Result<Bytes, E>> + Unpin,
    E: std::error::Error + 'static,
{
    let mut bytes: u64 = 0;
    while let Some(chunk) = body.next().await {
        match chunk {
            Ok(chunk) => {
                bytes += chunk.len() as u64;
                if let Some(p) = &progress {
                    p(bytes, expected);
                }
                if tx.send(Ok(chunk)).await.is_err() {
                    return; // the consumer is gone
                }
            }
            Err(e) => {
                tracing::debug!(bytes, error = %e, "ID-mapping download broke off");
                let error = body_limit_error(OP_ID_MAPPING, &e)
                    .unwrap_or(Error::TruncatedDownload { bytes, expected });
                let _ = tx.send(Err(error)).await;
                return;
            }
        }
    }
    if expected.is_some_and(|e| e != bytes) {
        let _ = tx
            .send(Err(Error::TruncatedDownload { bytes, expected }))
            .await;
    }
}

/// Parsed rows on their way to the stream, sent in batches of up to
/// [`ROW_BATCH`].
struct RowSink {
    out: mpsc::Sender<RowBatch>,
    batch: RowBatch,
}

impl RowSink {
    /// Queues a row and sends the batch once it is full. False when the
    /// consumer is gone.
    fn push(&mut self, row: Result<IdMappingRow, Error>) -> bool {
        self.batch.push(row);
        self.batch.len() < ROW_BATCH || self.flush()
    }

    /// Sends the queued rows, if any. False when the consumer is gone.
    fn flush(&mut self) -> bool {
        if self.batch.is_empty() {
            return true;
        }
        let batch = std::mem::replace(&mut self.batch, Vec::with_capacity(ROW_BATCH));
        self.out.blocking_send(batch).is_ok()
    }

    /// Queues a last item and sends everything.
    fn finish(&mut self, row: Result<IdMappingRow, Error>) {
        self.batch.push(row);
        let _ = self.flush();
    }
}

/// A `Read` over the chunks of the channel, for `csv::Reader` on a blocking
/// thread. A download error is kept for the parser and surfaces as an I/O
/// error to csv. It also carries the [`RowSink`], so that the rows parsed so
/// far are sent before it waits for the next chunk.
struct ChannelReader {
    rx: mpsc::Receiver<Result<Bytes, Error>>,
    current: Bytes,
    tail: Tail,
    failed: Option<Error>,
    rows: RowSink,
}

impl Read for ChannelReader {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        while self.current.is_empty() {
            if self.failed.is_some() {
                return Err(io::Error::other("the download failed"));
            }
            let next = match self.rx.try_recv() {
                Ok(item) => Some(item),
                Err(mpsc::error::TryRecvError::Disconnected) => None,
                Err(mpsc::error::TryRecvError::Empty) => {
                    // About to wait for the network: hand over what is parsed.
                    if !self.rows.flush() {
                        return Err(io::Error::other("the consumer is gone"));
                    }
                    self.rx.blocking_recv()
                }
            };
            match next {
                Some(Ok(chunk)) => {
                    self.tail.feed(&chunk);
                    self.current = chunk;
                }
                Some(Err(e)) => {
                    self.failed = Some(e);
                    return Err(io::Error::other("the download failed"));
                }
                None => return Ok(0),
            }
        }
        let n = buf.len().min(self.current.len());
        buf[..n].copy_from_slice(&self.current.split_to(n));
        Ok(n)
    }
}

/// Parses on the current (blocking) thread, sending rows to `out`.
fn parse_blocking(input: mpsc::Receiver<Result<Bytes, Error>>, out: mpsc::Sender<RowBatch>) {
    let reader = ChannelReader {
        rx: input,
        current: Bytes::new(),
        tail: Tail::default(),
        failed: None,
        rows: RowSink {
            out,
            batch: Vec::with_capacity(ROW_BATCH),
        },
    };
    let mut csv = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .buffer_capacity(CSV_BUFFER)
        .from_reader(reader);
    let mut record = csv::StringRecord::new();
    // The latest row is held back until the next one (or a clean end) shows
    // that it was not cut off by the end of the body.
    let mut held: Option<Result<IdMappingRow, Error>> = None;
    let mut header_seen = false;
    loop {
        let read = csv.read_record(&mut record);
        let line = record.position().map_or(0, |p| p.line());
        match read {
            Ok(true) => {}
            Ok(false) => break,
            Err(e) => {
                let error = match csv.get_mut().failed.take() {
                    Some(download) => download,
                    None => csv_error(e.position().map_or(line, |p| p.line()), format!("{e}")),
                };
                csv.get_mut().rows.finish(Err(error));
                return;
            }
        }
        if !header_seen {
            header_seen = true;
            let fields: Vec<&str> = record
                .iter()
                .map(|f| f.trim_start_matches('\u{feff}').trim())
                .collect();
            if fields != HEADER {
                let error = if csv.is_done() && csv.get_ref().tail.is_cut() {
                    let tail = csv.get_ref().tail;
                    Error::TruncatedDownload {
                        bytes: tail.bytes,
                        expected: None,
                    }
                } else {
                    csv_error(
                        line,
                        format!(
                            "expected the header `{}`, found `{}`",
                            HEADER.join(","),
                            short(&fields.join(","))
                        ),
                    )
                };
                csv.get_mut().rows.finish(Err(error));
                return;
            }
            continue;
        }
        let row = parse_row(line, &record);
        if let Some(previous) = held.replace(row) {
            if previous.is_err() {
                csv.get_mut().rows.finish(previous);
                return;
            }
            if !csv.get_mut().rows.push(previous) {
                return;
            }
        }
    }
    let tail = csv.get_ref().tail;
    let rows = &mut csv.get_mut().rows;
    if !header_seen {
        rows.finish(Err(csv_error(
            1,
            "the file is empty: expected at least the header line",
        )));
        return;
    }
    if tail.is_cut() {
        rows.finish(Err(Error::TruncatedDownload {
            bytes: tail.bytes,
            expected: None,
        }));
        return;
    }
    if let Some(last) = held {
        rows.finish(last);
    }
}

/// The rows of an ID-mapping file, as they download.
///
/// Yields each row once, in file order; the first error ends the stream.
#[must_use = "streams do nothing unless polled"]
pub struct IdMappingStream {
    /// The download being opened (with the progress callback for its body), until its answer's
    /// headers arrive.
    opening: Option<(Opening, Option<ProgressFn>)>,
    rows: Option<mpsc::Receiver<RowBatch>>,
    /// The rest of the batch received last.
    buffered: std::vec::IntoIter<Result<IdMappingRow, Error>>,
    pump: Option<tokio::task::AbortHandle>,
    finished: bool,
}

/// Opening the download: the body and its `Content-Length`.
pub(crate) type Opening = BoxFuture<
    'static,
    Result<
        (
            BoxStream<'static, Result<Bytes, reqwest::Error>>,
            Option<u64>,
        ),
        Error,
    >,
>;

impl std::fmt::Debug for IdMappingStream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("IdMappingStream")
            .field("opening", &self.opening.is_some())
            .field("finished", &self.finished)
            .finish_non_exhaustive()
    }
}

impl IdMappingStream {
    /// Opens the download with `open` when first polled, then parses its body in the
    /// background. An error opening it is the stream's first and only item.
    pub(crate) fn opening(open: Opening, progress: Option<ProgressFn>) -> Self {
        Self {
            opening: Some((open, progress)),
            rows: None,
            buffered: Vec::new().into_iter(),
            pump: None,
            finished: false,
        }
    }

    fn start<S, E>(&mut self, body: S, expected: Option<u64>, progress: Option<ProgressFn>)
    where
        S: Stream<Item = Result<Bytes, E>> + Send + Unpin + 'static,
        E: std::error::Error + Send + 'static,
    {
        let (chunk_tx, chunk_rx) = mpsc::channel(CHUNKS_IN_FLIGHT);
        let (row_tx, row_rx) = mpsc::channel(ROWS_IN_FLIGHT.div_ceil(ROW_BATCH));
        self.pump = Some(tokio::spawn(pump(body, expected, progress, chunk_tx)).abort_handle());
        // Dropping the JoinHandle detaches the parser; it ends when either
        // channel closes.
        drop(tokio::task::spawn_blocking(move || {
            parse_blocking(chunk_rx, row_tx)
        }));
        self.rows = Some(row_rx);
    }
}

impl Stream for IdMappingStream {
    type Item = Result<IdMappingRow, Error>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        if let Some((open, _)) = &mut self.opening {
            let opened = match open.as_mut().poll(cx) {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(opened) => opened,
            };
            let progress = self.opening.take().and_then(|(_, progress)| progress);
            match opened {
                Ok((body, expected)) => self.start(body, expected, progress),
                Err(error) => {
                    self.finished = true;
                    return Poll::Ready(Some(Err(error)));
                }
            }
        }
        loop {
            if self.finished {
                return Poll::Ready(None);
            }
            if let Some(item) = self.buffered.next() {
                self.finished = item.is_err();
                return Poll::Ready(Some(item));
            }
            let Some(rows) = self.rows.as_mut() else {
                self.finished = true;
                continue;
            };
            match rows.poll_recv(cx) {
                Poll::Ready(Some(batch)) => self.buffered = batch.into_iter(),
                Poll::Ready(None) => self.finished = true,
                Poll::Pending => return Poll::Pending,
            }
        }
    }
}

impl Drop for IdMappingStream {
    fn drop(&mut self) {
        if let Some(pump) = &self.pump {
            pump.abort();
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use futures::TryStreamExt;

    use super::*;

    impl IdMappingStream {
        /// Parses `body` (with `Content-Length` `expected`) in the background.
        /// Must be called inside a Tokio runtime.
        pub(crate) fn spawn<S, E>(
            body: S,
            expected: Option<u64>,
            progress: Option<ProgressFn>,
        ) -> Self
        where
            S: Stream<Item = Result<Bytes, E>> + Send + Unpin + 'static,
            E: std::error::Error + Send + 'static,
        {
            let mut stream = Self {
                opening: None,
                rows: None,
                buffered: Vec::new().into_iter(),
                pump: None,
                finished: false,
            };
            stream.start(body, expected, progress);
            stream
        }
    }
    use crate::search_ads::id_mapping::test_data::{FILE, chunks, parse};
    use crate::search_ads::values::{AgencyId, CampaignId, EngineAccountId, EntityType};

    #[tokio::test]
    async fn rows_parse_whatever_the_chunking() {
        for size in [1, 2, 7, 64, 10_000] {
            let rows: Vec<IdMappingRow> = IdMappingStream::spawn(chunks(FILE, size), None, None)
                .try_collect()
                .await
                .unwrap();
            assert_eq!(rows.len(), 3, "chunk size {size}");
            assert_eq!(rows[0].entity_type, EntityType::Customer);
            assert_eq!(
                rows[0].legacy.agency_id,
                Some(AgencyId::new(20700000000000125))
            );
            assert_eq!(
                rows[0].legacy.engine_account_id,
                Some(EngineAccountId::new(700000000042205))
            );
            assert_eq!(
                rows[0].new.customer_id.as_ref().map(|c| c.as_str()),
                Some("200001235")
            );
            assert_eq!(rows[1].new.campaign_id, Some(CampaignId::new(123)));
            assert_eq!(
                rows[1].new.other.get("labelId").map(String::as_str),
                Some("9")
            );
            assert_eq!(rows[2].entity_type, EntityType::Other("BUDGET".into()));
        }
    }

    #[tokio::test]
    async fn a_clean_end_in_the_middle_of_a_row_is_a_truncation() {
        // Every cut that is not at a line end must fail, never succeed short.
        let header_end = FILE.find('\n').unwrap() + 1;
        for cut in header_end..FILE.len() {
            if FILE.as_bytes()[cut - 1] == b'\n' {
                continue;
            }
            let items = parse(&FILE[..cut], 5).await;
            let last = items.last().unwrap();
            assert!(
                matches!(last, Err(Error::TruncatedDownload { .. })),
                "cut at {cut}: {last:?}"
            );
            assert!(items[..items.len() - 1].iter().all(|r| r.is_ok()));
        }
    }

    #[tokio::test]
    async fn a_broken_body_is_a_truncation() {
        let mut pieces: Vec<Result<Bytes, io::Error>> =
            vec![Ok(Bytes::from_static(&FILE.as_bytes()[..120]))];
        pieces.push(Err(io::Error::other("connection reset")));
        let items: Vec<_> = IdMappingStream::spawn(futures::stream::iter(pieces), Some(1000), None)
            .collect()
            .await;
        match items.last().unwrap() {
            Err(Error::TruncatedDownload { bytes, expected }) => {
                assert_eq!(*bytes, 120);
                assert_eq!(*expected, Some(1000));
            }
            other => panic!("{other:?}"),
        }
    }

    #[tokio::test]
    async fn a_short_body_against_its_content_length_is_a_truncation() {
        let items: Vec<_> =
            IdMappingStream::spawn(chunks(FILE, 50), Some(FILE.len() as u64 + 10), None)
                .collect()
                .await;
        assert!(matches!(
            items.last().unwrap(),
            Err(Error::TruncatedDownload { .. })
        ));
    }

    #[tokio::test]
    async fn bad_files_name_the_line() {
        let items = parse("Entity,Legacy,New\n", 4).await;
        assert!(
            matches!(&items[0], Err(Error::Csv { line: 1, .. })),
            "{items:?}"
        );
        let items = parse("", 4).await;
        assert!(
            matches!(&items[0], Err(Error::Csv { line: 1, .. })),
            "{items:?}"
        );
        let text = "Entity Type,Legacy IDs,New IDs\nCAMPAIGN,{},{}\nCAMPAIGN,not json,{}\nCAMPAIGN,{},{}\n";
        let items = parse(text, 3).await;
        assert_eq!(items.len(), 2);
        match &items[1] {
            Err(Error::Csv { line, message }) => {
                assert_eq!(*line, 3);
                assert!(message.contains("Legacy IDs"), "{message}");
            }
            other => panic!("{other:?}"),
        }
        let items = parse(
            "Entity Type,Legacy IDs,New IDs\nCAMPAIGN,\"{\"\"campaignId\"\":\"\"x\"\"}\",{}\n",
            8,
        )
        .await;
        assert!(
            matches!(&items[0], Err(Error::Csv { line: 2, .. })),
            "{items:?}"
        );
        let items = parse("Entity Type,Legacy IDs,New IDs\nCAMPAIGN,{}\n", 8).await;
        assert!(
            matches!(&items[0], Err(Error::Csv { line: 2, .. })),
            "{items:?}"
        );
    }

    #[tokio::test]
    async fn a_header_only_file_has_no_rows_and_progress_is_reported() {
        let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
        let s2 = seen.clone();
        let progress: ProgressFn = Arc::new(move |b, t| s2.lock().unwrap().push((b, t)));
        let text = "\u{feff}Entity Type,Legacy IDs,New IDs\r\n";
        let rows: Vec<_> =
            IdMappingStream::spawn(chunks(text, 10), Some(text.len() as u64), Some(progress))
                .try_collect::<Vec<_>>()
                .await
                .unwrap();
        assert!(rows.is_empty());
        let seen = seen.lock().unwrap();
        assert_eq!(
            seen.last(),
            Some(&(text.len() as u64, Some(text.len() as u64)))
        );
    }
}

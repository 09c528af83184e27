//! The ID-mapping file (SA-11): a CSV `Entity Type,Legacy IDs,New IDs` whose
//! ID cells are JSON objects, streamed as typed rows in constant memory.
//!
//! # Design
//!
//! The `csv` crate's reader is synchronous (`std::io::Read`), the body is an
//! async stream of chunks. Rather than re-implementing CSV on `csv-core`, the
//! parser runs the real `csv::Reader` on a blocking task (`spawn_blocking`)
//! over a reader that pulls chunks from a bounded channel; a small async task
//! pumps the HTTP body into that channel and the parsed rows come back through
//! a second bounded channel, in batches of up to [`ROW_BATCH`] rows (one
//! channel operation and at most one wake-up of the consumer per batch rather
//! than per row; a batch is also handed over whenever the parser is about to
//! wait for the network, so rows are never held back for lack of data).
//! Memory is bounded by the channel capacities ([`CHUNKS_IN_FLIGHT`] body
//! chunks, [`ROWS_IN_FLIGHT`] rows, plus the batch being filled and the one
//! being consumed) plus csv's buffer for the longest record, whatever the
//! file's size; back-pressure flows from a slow consumer to the socket.
//! Dropping the stream stops both tasks and closes the connection.
//!
//! # Truncation
//!
//! A download that ends early is an error, never a short success:
//! - the connection breaks, or the body is shorter than its `Content-Length`
//!   → [`Error::TruncatedDownload`];
//! - the body ends cleanly but inside a quoted field, or its last line has no
//!   line terminator (the file is line-terminated, so a cut in the middle of a
//!   row shows up this way) → [`Error::TruncatedDownload`], in place of the
//!   cut row.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use bytes::Bytes;
use futures::stream::{Stream, StreamExt};
use tokio::io::AsyncWriteExt;
use tokio::sync::mpsc;

use super::OP_ID_MAPPING;
use super::error::Error;
use super::values::{
    AdGroupId, AdId, AdvertiserId, AgencyId, CampaignId, CriterionId, CustomerId, EngineAccountId,
    EntityType,
};
use super::wire::body_limit_error;

/// Body chunks buffered between the download and the parser.
pub const CHUNKS_IN_FLIGHT: usize = 4;

/// Parsed rows buffered between the parser and the consumer (in the channel;
/// plus up to one batch of 64 being filled and one being consumed).
pub const ROWS_IN_FLIGHT: usize = 256;

/// Rows handed from the parser to the stream at once.
const ROW_BATCH: usize = 64;

/// Bytes csv reads from the chunks at once (its default is 8 KiB).
const CSV_BUFFER: usize = 64 * 1024;

/// A batch of parsed rows (an error is always the last item of its batch).
type RowBatch = Vec<Result<IdMappingRow, Error>>;

/// The header line of the file.
pub const HEADER: [&str; 3] = ["Entity Type", "Legacy IDs", "New IDs"];

/// A progress callback: bytes received so far, and the total when the server
/// announced it (`Content-Length`). Called from the download task after each
/// chunk; keep it cheap.
pub type ProgressFn = Arc<dyn Fn(u64, Option<u64>) + Send + Sync>;

/// One row of the ID-mapping file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IdMappingRow {
    /// The entity type (`CUSTOMER`, `CAMPAIGN`, `AD_GROUP`, `CRITERION`, or another).
    pub entity_type: EntityType,
    /// The ids in legacy Search Ads 360.
    pub legacy: EntityIds,
    /// The ids in the new Search Ads 360.
    pub new: EntityIds,
}

/// The ids of one ID cell (a JSON object with string values, SA-11).
///
/// Known keys become typed fields (the new platform's ids use the same types
/// as the legacy ones); any other key is kept in [`other`](Self::other).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct EntityIds {
    /// `agencyId`.
    pub agency_id: Option<AgencyId>,
    /// `advertiserId`.
    pub advertiser_id: Option<AdvertiserId>,
    /// `engineAccountId`.
    pub engine_account_id: Option<EngineAccountId>,
    /// `customerId`.
    pub customer_id: Option<CustomerId>,
    /// `campaignId`.
    pub campaign_id: Option<CampaignId>,
    /// `adGroupId`.
    pub ad_group_id: Option<AdGroupId>,
    /// `adId`.
    pub ad_id: Option<AdId>,
    /// `criterionId`.
    pub criterion_id: Option<CriterionId>,
    /// Keys this version does not know, with their values as text.
    pub other: BTreeMap<String, String>,
}

fn csv_error(line: u64, message: impl Into<String>) -> Error {
    Error::Csv {
        line,
        message: message.into(),
    }
}

/// A key of an ID cell, borrowed from the cell unless it has escapes.
struct CellKey<'a>(Cow<'a, str>);

impl<'de> serde::Deserialize<'de> for CellKey<'de> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Visit;
        impl<'de> serde::de::Visitor<'de> for Visit {
            type Value = CellKey<'de>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a string")
            }
            fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Self::Value, E> {
                Ok(CellKey(Cow::Borrowed(v)))
            }
            fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
                Ok(CellKey(Cow::Owned(v.to_owned())))
            }
            fn visit_string<E>(self, v: String) -> Result<Self::Value, E> {
                Ok(CellKey(Cow::Owned(v)))
            }
        }
        d.deserialize_str(Visit)
    }
}

/// A value of an ID cell: its text (a string, or a number's JSON text), or
/// any other JSON value (an error later).
enum CellValue<'a> {
    Text(Cow<'a, str>),
    Other(serde_json::Value),
}

impl<'de> serde::Deserialize<'de> for CellValue<'de> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::value::{MapAccessDeserializer, SeqAccessDeserializer};
        struct Visit;
        impl<'de> serde::de::Visitor<'de> for Visit {
            type Value = CellValue<'de>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("any valid JSON value")
            }
            fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Self::Value, E> {
                Ok(CellValue::Text(Cow::Borrowed(v)))
            }
            fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
                Ok(CellValue::Text(Cow::Owned(v.to_owned())))
            }
            fn visit_string<E>(self, v: String) -> Result<Self::Value, E> {
                Ok(CellValue::Text(Cow::Owned(v)))
            }
            fn visit_i64<E>(self, v: i64) -> Result<Self::Value, E> {
                Ok(CellValue::Text(Cow::Owned(
                    serde_json::Number::from(v).to_string(),
                )))
            }
            fn visit_u64<E>(self, v: u64) -> Result<Self::Value, E> {
                Ok(CellValue::Text(Cow::Owned(
                    serde_json::Number::from(v).to_string(),
                )))
            }
            fn visit_f64<E>(self, v: f64) -> Result<Self::Value, E> {
                Ok(match serde_json::Number::from_f64(v) {
                    Some(n) => CellValue::Text(Cow::Owned(n.to_string())),
                    None => CellValue::Other(serde_json::Value::Null),
                })
            }
            fn visit_bool<E>(self, v: bool) -> Result<Self::Value, E> {
                Ok(CellValue::Other(serde_json::Value::Bool(v)))
            }
            fn visit_unit<E>(self) -> Result<Self::Value, E> {
                Ok(CellValue::Other(serde_json::Value::Null))
            }
            fn visit_none<E>(self) -> Result<Self::Value, E> {
                Ok(CellValue::Other(serde_json::Value::Null))
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                seq: A,
            ) -> Result<Self::Value, A::Error> {
                serde::Deserialize::deserialize(SeqAccessDeserializer::new(seq))
                    .map(CellValue::Other)
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                map: A,
            ) -> Result<Self::Value, A::Error> {
                serde::Deserialize::deserialize(MapAccessDeserializer::new(map))
                    .map(CellValue::Other)
            }
        }
        d.deserialize_any(Visit)
    }
}

/// The entries of an ID cell as a JSON object would hold them: sorted by key,
/// the last of a repeated key winning (the semantics of
/// `serde_json::Map<String, Value>`), but borrowing from the cell instead of
/// allocating a map, a key and a value per entry.
struct CellEntries<'a>(Vec<(CellKey<'a>, CellValue<'a>)>);

impl<'de> serde::Deserialize<'de> for CellEntries<'de> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Visit;
        impl<'de> serde::de::Visitor<'de> for Visit {
            type Value = CellEntries<'de>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a map")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<Self::Value, A::Error> {
                let mut entries: Vec<(CellKey<'de>, CellValue<'de>)> = Vec::with_capacity(8);
                while let Some(entry) = map.next_entry()? {
                    entries.push(entry);
                }
                // Stable: equal keys stay in document order, and the last wins.
                entries.sort_by(|a, b| a.0.0.cmp(&b.0.0));
                entries.dedup_by(|later, kept| {
                    let same = later.0.0 == kept.0.0;
                    if same {
                        std::mem::swap(later, kept);
                    }
                    same
                });
                Ok(CellEntries(entries))
            }
        }
        d.deserialize_map(Visit)
    }
}

/// Applies one entry of an ID cell to `ids`; the error names the column and
/// the key.
fn apply_entry(
    ids: &mut EntityIds,
    line: u64,
    column: &str,
    key: Cow<'_, str>,
    value: CellValue<'_>,
) -> Result<(), Error> {
    let text = match value {
        CellValue::Text(text) => text,
        CellValue::Other(other) => {
            return Err(csv_error(
                line,
                format!("{column}: `{key}` is {other}, expected a string of digits"),
            ));
        }
    };
    let number = || {
        text.trim().parse::<i64>().map_err(|_| {
            csv_error(
                line,
                format!("{column}: `{key}` is {text:?}, expected a string of digits"),
            )
        })
    };
    match key.as_ref() {
        "agencyId" => ids.agency_id = Some(number()?.into()),
        "advertiserId" => ids.advertiser_id = Some(number()?.into()),
        "engineAccountId" => ids.engine_account_id = Some(number()?.into()),
        "campaignId" => ids.campaign_id = Some(number()?.into()),
        "adGroupId" => ids.ad_group_id = Some(number()?.into()),
        "adId" => ids.ad_id = Some(number()?.into()),
        "criterionId" => ids.criterion_id = Some(number()?.into()),
        "customerId" => {
            ids.customer_id = Some(CustomerId::new(text.as_ref()).map_err(|_| {
                csv_error(
                    line,
                    format!("{column}: `customerId` {text:?} is not a customer id"),
                )
            })?);
        }
        _ => {
            ids.other.insert(key.into_owned(), text.into_owned());
        }
    }
    Ok(())
}

fn parse_ids(line: u64, column: &str, cell: &str) -> Result<EntityIds, Error> {
    let not_an_object = |e: serde_json::Error| {
        csv_error(
            line,
            format!(
                "the {column} cell is not a JSON object ({e}): {:?}",
                short(cell)
            ),
        )
    };
    let mut json = serde_json::Deserializer::from_str(cell);
    let entries =
        <CellEntries<'_> as serde::Deserialize>::deserialize(&mut json).map_err(not_an_object)?;
    json.end().map_err(not_an_object)?;
    let mut ids = EntityIds::default();
    for (CellKey(key), value) in entries.0 {
        apply_entry(&mut ids, line, column, key, value)?;
    }
    Ok(ids)
}

fn short(text: &str) -> String {
    text.chars().take(80).collect()
}

fn parse_row(line: u64, record: &csv::StringRecord) -> Result<IdMappingRow, Error> {
    if record.len() != 3 {
        return Err(csv_error(
            line,
            format!("expected 3 fields, found {}", record.len()),
        ));
    }
    Ok(IdMappingRow {
        entity_type: EntityType::from_wire(record[0].trim()),
        legacy: parse_ids(line, "Legacy IDs", &record[1])?,
        new: parse_ids(line, "New IDs", &record[2])?,
    })
}

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
    rows: mpsc::Receiver<RowBatch>,
    /// The rest of the batch received last.
    buffered: std::vec::IntoIter<Result<IdMappingRow, Error>>,
    pump: tokio::task::AbortHandle,
    finished: bool,
}

impl std::fmt::Debug for IdMappingStream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("IdMappingStream")
            .field("finished", &self.finished)
            .finish_non_exhaustive()
    }
}

impl IdMappingStream {
    /// Parses `body` (with `Content-Length` `expected`) in the background.
    /// Must be called inside a Tokio runtime.
    pub(crate) fn spawn<S, E>(body: S, expected: Option<u64>, progress: Option<ProgressFn>) -> Self
    where
        S: Stream<Item = Result<Bytes, E>> + Send + Unpin + 'static,
        E: std::error::Error + Send + 'static,
    {
        let (chunk_tx, chunk_rx) = mpsc::channel(CHUNKS_IN_FLIGHT);
        let (row_tx, row_rx) = mpsc::channel(ROWS_IN_FLIGHT.div_ceil(ROW_BATCH));
        let pump = tokio::spawn(pump(body, expected, progress, chunk_tx)).abort_handle();
        // Dropping the JoinHandle detaches the parser; it ends when either
        // channel closes.
        drop(tokio::task::spawn_blocking(move || {
            parse_blocking(chunk_rx, row_tx)
        }));
        Self {
            rows: row_rx,
            buffered: Vec::new().into_iter(),
            pump,
            finished: false,
        }
    }
}

impl Stream for IdMappingStream {
    type Item = Result<IdMappingRow, Error>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        loop {
            if self.finished {
                return Poll::Ready(None);
            }
            if let Some(item) = self.buffered.next() {
                self.finished = item.is_err();
                return Poll::Ready(Some(item));
            }
            match self.rows.poll_recv(cx) {
                Poll::Ready(Some(batch)) => self.buffered = batch.into_iter(),
                Poll::Ready(None) => self.finished = true,
                Poll::Pending => return Poll::Pending,
            }
        }
    }
}

impl Drop for IdMappingStream {
    fn drop(&mut self) {
        self.pump.abort();
    }
}

/// Media types an ID-mapping answer may carry: CSV, or a generic download.
const CSV_MEDIA_TYPES: [&str; 4] = [
    "text/csv",
    "application/csv",
    "text/plain",
    "application/octet-stream",
];

/// Refuses an ID-mapping answer whose `Content-Type` is not CSV (an HTML
/// maintenance page, a JSON error with status 200). A missing type passes; the
/// header row is checked anyway.
pub(crate) fn check_content_type(content_type: Option<&str>) -> Result<(), Error> {
    let Some(content_type) = content_type else {
        return Ok(());
    };
    let essence = content_type
        .split(';')
        .next()
        .unwrap_or_default()
        .trim()
        .to_ascii_lowercase();
    if CSV_MEDIA_TYPES.contains(&essence.as_str()) {
        return Ok(());
    }
    let shown: String = content_type.chars().take(80).collect();
    Err(Error::unexpected(
        OP_ID_MAPPING,
        Some(200),
        format!("the ID-mapping answer is {shown:?}, not a CSV file; nothing was saved"),
    ))
}

/// Longest header row accepted before its line break.
const MAX_HEADER_LINE: usize = 4096;

/// Collects the first line of a download and checks it is the documented
/// header row.
#[derive(Default)]
struct HeaderRow {
    line: Vec<u8>,
    checked: bool,
}

impl HeaderRow {
    /// Feeds a chunk; fails as soon as the first line is complete and wrong,
    /// or longer than any header row.
    fn feed(&mut self, chunk: &[u8]) -> Result<(), Error> {
        if self.checked {
            return Ok(());
        }
        let end = chunk.iter().position(|&b| b == b'\n');
        let take = end.unwrap_or(chunk.len());
        let room = (MAX_HEADER_LINE + 1).saturating_sub(self.line.len());
        self.line.extend_from_slice(&chunk[..take.min(room)]);
        if end.is_some() {
            return self.check();
        }
        if self.line.len() > MAX_HEADER_LINE {
            return Err(self.wrong());
        }
        Ok(())
    }

    /// At the end of the body: the header row must have arrived.
    fn finish(&mut self) -> Result<(), Error> {
        if self.checked {
            return Ok(());
        }
        if self.line.is_empty() {
            return Err(Error::unexpected(
                OP_ID_MAPPING,
                Some(200),
                "the ID-mapping answer is empty (not even the header row); nothing was saved",
            ));
        }
        self.check()
    }

    fn check(&mut self) -> Result<(), Error> {
        self.checked = true;
        let text = String::from_utf8_lossy(&self.line);
        let fields: Vec<&str> = text
            .trim_start_matches('\u{feff}')
            .trim_end_matches('\r')
            .split(',')
            .map(str::trim)
            .collect();
        if fields == HEADER {
            Ok(())
        } else {
            Err(self.wrong())
        }
    }

    fn wrong(&self) -> Error {
        let shown: String = String::from_utf8_lossy(&self.line)
            .chars()
            .take(60)
            .collect();
        Error::unexpected(
            OP_ID_MAPPING,
            Some(200),
            format!(
                "the ID-mapping answer does not start with the header row {:?} but with {shown:?}; \
                 nothing was saved",
                HEADER.join(",")
            ),
        )
    }
}

/// Writes `body` to `path` through `<path>.part`, renamed into place only when
/// the whole file arrived and starts with the documented header row; returns
/// the bytes written.
pub(crate) async fn save<S, E>(
    mut body: S,
    expected: Option<u64>,
    path: &Path,
    progress: Option<ProgressFn>,
) -> Result<u64, Error>
where
    S: Stream<Item = Result<Bytes, E>> + Unpin,
    E: std::error::Error + 'static,
{
    let part = part_path(path);
    let io_error = |p: &Path, e: io::Error| Error::Io {
        path: p.display().to_string(),
        message: e.to_string(),
    };
    let mut file = tokio::fs::File::create(&part)
        .await
        .map_err(|e| io_error(&part, e))?;
    let mut tail = Tail::default();
    let mut header = HeaderRow::default();
    let result: Result<(), Error> = async {
        while let Some(chunk) = body.next().await {
            let chunk = chunk.map_err(|e| {
                tracing::debug!(bytes = tail.bytes, error = %e, "ID-mapping download broke off");
                body_limit_error(OP_ID_MAPPING, &e).unwrap_or(Error::TruncatedDownload {
                    bytes: tail.bytes,
                    expected,
                })
            })?;
            header.feed(&chunk)?;
            tail.feed(&chunk);
            file.write_all(&chunk)
                .await
                .map_err(|e| io_error(&part, e))?;
            if let Some(p) = &progress {
                p(tail.bytes, expected);
            }
        }
        if expected.is_some_and(|e| e != tail.bytes) || tail.is_cut() {
            return Err(Error::TruncatedDownload {
                bytes: tail.bytes,
                expected,
            });
        }
        header.finish()?;
        file.flush().await.map_err(|e| io_error(&part, e))?;
        file.sync_all().await.map_err(|e| io_error(&part, e))?;
        Ok(())
    }
    .await;
    drop(file);
    match result {
        Ok(()) => {
            tokio::fs::rename(&part, path)
                .await
                .map_err(|e| io_error(path, e))?;
            Ok(tail.bytes)
        }
        Err(e) => {
            let _ = tokio::fs::remove_file(&part).await;
            Err(e)
        }
    }
}

fn part_path(path: &Path) -> PathBuf {
    let mut name = path
        .file_name()
        .map(|n| n.to_os_string())
        .unwrap_or_default();
    name.push(".part");
    path.with_file_name(name)
}

#[cfg(test)]
mod tests {
    use futures::TryStreamExt;

    use super::*;

    const FILE: &str = "Entity Type,Legacy IDs,New IDs\n\
CUSTOMER,\"{\"\"agencyId\"\":\"\"20700000000000125\"\",\"\"advertiserId\"\":\"\"2170000012345\"\",\"\"engineAccountId\"\":\"\"700000000042205\"\"}\",\"{\"\"customerId\"\":\"\"200001235\"\"}\"\n\
CAMPAIGN,\"{\"\"campaignId\"\":\"\"71700000001899732\"\"}\",\"{\"\"customerId\"\":\"\"200001235\"\",\"\"campaignId\"\":\"\"123\"\",\"\"labelId\"\":\"\"9\"\"}\"\n\
BUDGET,\"{}\",\"{}\"\n";

    fn chunks(
        text: &str,
        size: usize,
    ) -> impl Stream<Item = Result<Bytes, io::Error>> + Unpin + Send + use<> {
        let pieces: Vec<Result<Bytes, io::Error>> = text
            .as_bytes()
            .chunks(size)
            .map(|c| Ok(Bytes::copy_from_slice(c)))
            .collect();
        futures::stream::iter(pieces)
    }

    async fn parse(text: &str, size: usize) -> Vec<Result<IdMappingRow, Error>> {
        IdMappingStream::spawn(chunks(text, size), None, None)
            .collect()
            .await
    }

    #[test]
    fn cells_read_like_json_objects() {
        // The last of a repeated key wins, also over a bad earlier value.
        let ids = parse_ids(
            2,
            "New IDs",
            r#"{"labelId":"1","campaignId":"x","labelId":"2","campaignId":"7","labelId":"3"}"#,
        )
        .unwrap();
        assert_eq!(ids.campaign_id, Some(CampaignId::new(7)));
        assert_eq!(ids.other.get("labelId").map(String::as_str), Some("3"));
        // Numbers count as their text; escapes are decoded.
        let ids = parse_ids(2, "New IDs", r#"{"adId":12,"customerId":"2000\u0031"}"#).unwrap();
        assert_eq!(ids.ad_id, Some(AdId::new(12)));
        assert_eq!(ids.customer_id.as_ref().map(|c| c.as_str()), Some("20001"));
        // Of two bad entries the error names the first in key order.
        let Err(Error::Csv { line, message }) =
            parse_ids(3, "Legacy IDs", r#"{"campaignId":"x","adGroupId":true}"#)
        else {
            panic!("expected an error")
        };
        assert_eq!(line, 3);
        assert!(message.contains("`adGroupId` is true"), "{message}");
        // Broken JSON and non-objects are reported as such, before any key.
        for cell in [r#"{"campaignId":"x",}"#, "[1]", r#"{"a":"1"} x"#, ""] {
            let Err(Error::Csv { message, .. }) = parse_ids(3, "Legacy IDs", cell) else {
                panic!("{cell}: expected an error")
            };
            assert!(
                message.contains("is not a JSON object"),
                "{cell}: {message}"
            );
        }
    }

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

    #[tokio::test]
    async fn save_writes_whole_files_only() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("mapping.csv");
        let n = save(chunks(FILE, 9), Some(FILE.len() as u64), &path, None)
            .await
            .unwrap();
        assert_eq!(n, FILE.len() as u64);
        assert_eq!(std::fs::read_to_string(&path).unwrap(), FILE);
        let cut = dir.path().join("cut.csv");
        let e = save(chunks(&FILE[..100], 9), None, &cut, None)
            .await
            .unwrap_err();
        assert!(
            matches!(e, Error::TruncatedDownload { bytes: 100, .. }),
            "{e:?}"
        );
        assert!(!cut.exists());
        assert!(!part_path(&cut).exists());
    }
}

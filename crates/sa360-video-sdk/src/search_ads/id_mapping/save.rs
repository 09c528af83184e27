//! The ID-mapping body to a file: the answer's checks (Content-Type, header
//! row, completeness) and the write through a [`PartFile`], renamed into place
//! only once the whole file arrived.

use std::io;
use std::path::Path;

use bytes::Bytes;
use futures::stream::{Stream, StreamExt};
use tokio::io::AsyncWriteExt;

use super::rows::{HEADER, ProgressFn};
use super::stream::Tail;
use crate::fs::PartFile;
use crate::http::TransportErrorKind;
use crate::search_ads::error::Error;
use crate::search_ads::wire::{OP_ID_MAPPING, body_limit_error};

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
pub(crate) fn check_content_type(headers: &reqwest::header::HeaderMap) -> Result<(), Error> {
    let header = headers.get(reqwest::header::CONTENT_TYPE);
    let Some(content_type) = header.and_then(|v| v.to_str().ok()) else {
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

/// A download being saved: the `.part` file and what the bytes so far say
/// (count, header row, whether the end is cut).
pub(crate) struct Download {
    part: PartFile,
    /// Appends to the `.part` file (a clone of its descriptor).
    writer: tokio::fs::File,
    tail: Tail,
    header: HeaderRow,
    /// The whole file's size, when the server said it.
    expected: Option<u64>,
}

fn io_error(path: &Path, e: io::Error) -> Error {
    Error::Io {
        path: path.display().to_string(),
        message: e.to_string(),
    }
}

impl Download {
    /// Starts `path.part`.
    pub(crate) fn new(path: &Path) -> Result<Self, Error> {
        let part = PartFile::create(path).map_err(|e| io_error(path, e))?;
        let writer = part
            .file()
            .and_then(|f| f.try_clone())
            .map_err(|e| io_error(part.part_path(), e))?;
        Ok(Self {
            part,
            writer: tokio::fs::File::from_std(writer),
            tail: Tail::default(),
            header: HeaderRow::default(),
            expected: None,
        })
    }

    /// Bytes saved so far.
    pub(crate) fn written(&self) -> u64 {
        self.tail.bytes
    }

    /// The whole file's size, when the latest answer said it.
    pub(crate) fn set_expected(&mut self, expected: Option<u64>) {
        self.expected = expected;
    }

    /// Forgets what was saved: the next body is the whole file again.
    pub(crate) async fn restart(&mut self) -> Result<(), Error> {
        self.writer
            .flush()
            .await
            .map_err(|e| io_error(self.part.part_path(), e))?;
        self.part
            .truncate()
            .map_err(|e| io_error(self.part.part_path(), e))?;
        self.tail = Tail::default();
        self.header = HeaderRow::default();
        Ok(())
    }

    /// Appends `body` (the file from [`written`](Self::written) on). An
    /// error leaves what arrived before it in the `.part` file, so the
    /// download can resume ([`resumable`]).
    pub(crate) async fn receive<S, E>(
        &mut self,
        mut body: S,
        progress: Option<&ProgressFn>,
    ) -> Result<(), Error>
    where
        S: Stream<Item = Result<Bytes, E>> + Unpin,
        E: std::error::Error + 'static,
    {
        let expected = self.expected;
        while let Some(chunk) = body.next().await {
            let bytes = self.tail.bytes;
            let chunk = chunk.map_err(|e| {
                tracing::debug!(bytes, error = %e, "ID-mapping download broke off");
                body_limit_error(OP_ID_MAPPING, &e)
                    .unwrap_or(Error::TruncatedDownload { bytes, expected })
            })?;
            self.header.feed(&chunk)?;
            self.tail.feed(&chunk);
            self.writer
                .write_all(&chunk)
                .await
                .map_err(|e| io_error(self.part.part_path(), e))?;
            if let Some(p) = progress {
                p(self.tail.bytes, expected);
            }
        }
        if expected.is_some_and(|e| e != self.tail.bytes) || self.tail.is_cut() {
            return Err(Error::TruncatedDownload {
                bytes: self.tail.bytes,
                expected,
            });
        }
        self.header.finish()
    }

    /// The whole file arrived: syncs it and renames it into place; returns
    /// its size.
    pub(crate) async fn finish(mut self) -> Result<u64, Error> {
        self.writer
            .flush()
            .await
            .map_err(|e| io_error(self.part.part_path(), e))?;
        let target = self.part.target().to_path_buf();
        self.part.commit().map_err(|e| io_error(&target, e))?;
        Ok(self.tail.bytes)
    }
}

/// True when a failed download may go on where it stopped (or start over):
/// the body broke off, stalled, or the connection failed or timed out. An
/// answer that is not the file (wrong type or header row, too large) is
/// final.
pub(crate) fn resumable(error: &Error) -> bool {
    matches!(error, Error::TruncatedDownload { .. })
        || matches!(
            error,
            Error::Transport(t) if !matches!(
                t.kind,
                TransportErrorKind::TooLarge { .. } | TransportErrorKind::ClientBuild
            )
        )
}

/// How a download may resume: the validator and whether the server takes
/// byte ranges (`Accept-Ranges: bytes`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Resume {
    /// The answer's strong `ETag`, sent back as `If-Range`.
    pub etag: Option<String>,
    /// The server announced `Accept-Ranges: bytes`.
    pub ranges: bool,
}

impl Resume {
    /// Reads an answer's headers.
    pub(crate) fn from_headers(headers: &reqwest::header::HeaderMap) -> Self {
        let text = |name| headers.get(name).and_then(|v| v.to_str().ok());
        Self {
            // A weak validator cannot be used with If-Range (RFC 9110 13.1.5).
            etag: text(reqwest::header::ETAG)
                .filter(|t| !t.starts_with("W/"))
                .map(str::to_owned),
            ranges: text(reqwest::header::ACCEPT_RANGES)
                .is_some_and(|v| v.split(',').any(|u| u.trim().eq_ignore_ascii_case("bytes"))),
        }
    }

    /// The `If-Range` validator, when a ranged request may be sent.
    pub(crate) fn validator(&self) -> Option<&str> {
        self.etag.as_deref().filter(|_| self.ranges)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::search_ads::id_mapping::test_data::{FILE, chunks};

    /// Writes `body` to `path` through `<path>.part`, renamed into place only when
    /// the whole file arrived and starts with the documented header row; returns
    /// the bytes written. No resume: see `SearchAdsClient::save_id_mapping` for that.
    pub(crate) async fn save<S, E>(
        body: S,
        expected: Option<u64>,
        path: &Path,
        progress: Option<ProgressFn>,
    ) -> Result<u64, Error>
    where
        S: Stream<Item = Result<Bytes, E>> + Unpin,
        E: std::error::Error + 'static,
    {
        let mut download = Download::new(path)?;
        download.set_expected(expected);
        download.receive(body, progress.as_ref()).await?;
        download.finish().await
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
        assert!(!dir.path().join("cut.csv.part").exists());
    }
}

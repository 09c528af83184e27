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
//!   cut row.//!
//! # Layout
//!
//! - [`decode`]: one CSV record to a typed [`IdMappingRow`] (the JSON-object
//!   cells);
//! - [`stream`]: the body to a stream of rows in constant memory;
//! - [`save`]: the body to a file, through a [`PartFile`](crate::fs::PartFile),
//!   with the answer's checks;
//! - [`download`]: opening the download, and resuming it with `Range` +
//!   `If-Range` after a break.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use super::client::SearchAdsClient;
use super::error::Error;
use super::values::{
    AdGroupId, AdId, AdvertiserId, AgencyId, CampaignId, CriterionId, CustomerId, EngineAccountId,
    EntityType,
};

mod decode;
mod download;
mod save;
mod stream;

pub use stream::IdMappingStream;

/// The operation's name in errors and traces.
pub(crate) const OP_ID_MAPPING: &str = "reports.getIdMappingFile";

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

/// The ID-mapping download, as a stream of rows or saved to a file.
impl SearchAdsClient {
    /// Starts the ID-mapping download (retried until the answer's headers
    /// arrive) and returns its rows as a stream, parsed in constant memory.
    /// `progress` is called with the bytes received so far and the total when
    /// known. A download that ends early ends the stream with
    /// [`Error::TruncatedDownload`]. Poll the stream steadily: back-pressure
    /// reaches the connection, and a consumer that stalls longer than
    /// [`HttpOptions::read_timeout`](crate::http::HttpOptions::read_timeout) ends the download that way too.
    pub async fn id_mapping(
        &self,
        agency_id: AgencyId,
        advertiser_id: AdvertiserId,
        progress: Option<ProgressFn>,
    ) -> Result<IdMappingStream, Error> {
        let opened = self.open_id_mapping(agency_id, advertiser_id).await?;
        Ok(IdMappingStream::spawn(
            opened.body,
            opened.expected,
            progress,
        ))
    }

    /// Downloads the ID-mapping file to `path` (through `<path>.part`, renamed
    /// only once the whole file arrived, see [`PartFile`](crate::fs::PartFile))
    /// and returns its size in bytes.
    ///
    /// A download that breaks off, stalls or loses its connection resumes
    /// where it stopped (`Range` with `If-Range` set to the answer's `ETag`)
    /// when the server announced `Accept-Ranges: bytes` and a strong `ETag`;
    /// otherwise, or when the file changed meanwhile (the server answers the
    /// whole file), it starts over. At most
    /// [`RetryPolicy::max_attempts`](super::RetryPolicy::max_attempts) − 1 resumes; a failure removes the
    /// `.part` file.
    pub async fn save_id_mapping(
        &self,
        agency_id: AgencyId,
        advertiser_id: AdvertiserId,
        path: impl AsRef<Path>,
        progress: Option<ProgressFn>,
    ) -> Result<u64, Error> {
        self.download_id_mapping(agency_id, advertiser_id, path.as_ref(), progress)
            .await
    }
}

#[cfg(test)]
pub(crate) mod test_data {
    use bytes::Bytes;
    use futures::stream::Stream;
    use std::io;

    use super::IdMappingRow;
    use super::stream::IdMappingStream;
    use crate::search_ads::error::Error;
    use futures::StreamExt as _;

    pub const FILE: &str = "Entity Type,Legacy IDs,New IDs\n\
CUSTOMER,\"{\"\"agencyId\"\":\"\"20700000000000125\"\",\"\"advertiserId\"\":\"\"2170000012345\"\",\"\"engineAccountId\"\":\"\"700000000042205\"\"}\",\"{\"\"customerId\"\":\"\"200001235\"\"}\"\n\
CAMPAIGN,\"{\"\"campaignId\"\":\"\"71700000001899732\"\"}\",\"{\"\"customerId\"\":\"\"200001235\"\",\"\"campaignId\"\":\"\"123\"\",\"\"labelId\"\":\"\"9\"\"}\"\n\
BUDGET,\"{}\",\"{}\"\n";

    pub fn chunks(
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

    pub async fn parse(text: &str, size: usize) -> Vec<Result<IdMappingRow, Error>> {
        IdMappingStream::spawn(chunks(text, size), None, None)
            .collect()
            .await
    }
}

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
//! - [`request`]: the method that starts a download and its [`IdMappingRequest`];
//! - [`rows`]: the typed rows and the buffer sizes;
//! - [`decode`]: one CSV record to a typed [`IdMappingRow`] (the JSON-object
//!   cells);
//! - [`stream`]: the body to a stream of rows in constant memory;
//! - [`save`]: the body to a file, through a [`PartFile`](crate::fs::PartFile),
//!   with the answer's checks;
//! - [`download`]: opening the download, and resuming it with `Range` +
//!   `If-Range` after a break.

mod decode;
mod download;
mod request;
mod rows;
mod save;
mod stream;

pub use request::IdMappingRequest;
pub use rows::{EntityIds, HEADER, IdMappingRow, ProgressFn};
pub use stream::IdMappingStream;

#[cfg(test)]
pub(crate) mod test_data {
    use bytes::Bytes;
    use futures::stream::Stream;
    use std::io;

    use super::stream::IdMappingStream;
    use crate::search_ads::error::Error;
    use crate::search_ads::id_mapping::rows::IdMappingRow;
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

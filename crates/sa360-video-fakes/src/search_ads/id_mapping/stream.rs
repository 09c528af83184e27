//! Streaming a plan's rows (or a byte range of the file), generated chunk by chunk.

use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use futures::Stream;

use super::plan::{HEADER, IdMappingPlan};

/// Bytes generated per body chunk.
const CHUNK: usize = 256 * 1024;

/// Streams a plan's rows (or a byte range of the file) in large chunks, generating them as it
/// goes.
pub(crate) struct CsvStream {
    plan: IdMappingPlan,
    next_row: u64,
    header_sent: bool,
    /// Bytes still to drop from the front of the generated output (a range starting inside a row).
    skip: u64,
    /// Bytes still to send.
    remaining: u64,
}

impl CsvStream {
    pub(crate) fn new(plan: IdMappingPlan) -> Self {
        let total = plan.total_len();
        Self::range(plan, 0, total)
    }

    /// The bytes `start..end` of the file (`end` at most its length).
    pub(crate) fn range(plan: IdMappingPlan, start: u64, end: u64) -> Self {
        let (next_row, header_sent, row_start) = if start < HEADER.len() as u64 {
            (0, false, 0)
        } else {
            let row = plan.rows_fitting(start).min(plan.rows);
            (row, true, plan.offset_of_row(row))
        };
        Self {
            next_row,
            header_sent,
            skip: start - row_start,
            remaining: end.saturating_sub(start),
            plan,
        }
    }
}

impl Stream for CsvStream {
    type Item = Result<Bytes, std::io::Error>;

    fn poll_next(mut self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = &mut *self;
        loop {
            if this.remaining == 0 || (this.header_sent && this.next_row >= this.plan.rows) {
                return Poll::Ready(None);
            }
            let mut out = Vec::with_capacity(CHUNK + 1024);
            if !this.header_sent {
                out.extend_from_slice(HEADER);
                this.header_sent = true;
            }
            while out.len() < CHUNK && this.next_row < this.plan.rows {
                this.plan.write_row(this.next_row, &mut out);
                this.next_row += 1;
            }
            let mut chunk = Bytes::from(out);
            let skip = usize::try_from(this.skip)
                .unwrap_or(usize::MAX)
                .min(chunk.len());
            this.skip -= skip as u64;
            let _ = chunk.split_to(skip);
            let keep = usize::try_from(this.remaining)
                .unwrap_or(usize::MAX)
                .min(chunk.len());
            chunk.truncate(keep);
            this.remaining -= keep as u64;
            if !chunk.is_empty() {
                return Poll::Ready(Some(Ok(chunk)));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::plan::test_plan as plan;
    use super::*;
    use crate::search_ads::config::IdMappingSize;

    fn collect(stream: CsvStream) -> Vec<u8> {
        // The stream never waits: every poll is ready.
        futures::FutureExt::now_or_never(futures::StreamExt::collect::<Vec<_>>(stream))
            .unwrap()
            .into_iter()
            .flat_map(|chunk| chunk.unwrap().to_vec())
            .collect()
    }

    #[test]
    fn every_byte_range_is_the_slice_of_the_whole_file() {
        let p = plan(IdMappingSize::Rows(3_000));
        let whole = collect(CsvStream::new(p.clone()));
        assert_eq!(whole.len() as u64, p.total_len());
        let total = whole.len() as u64;
        for (start, end) in [
            (0, 1),
            (0, 31),
            (5, 40),
            (31, 32),
            (100, 5_000),
            (p.offset_of_row(7), p.offset_of_row(9)),
            (p.offset_of_row(7) + 3, total),
            (300_000, total),
            (total - 1, total),
        ] {
            let part = collect(CsvStream::range(p.clone(), start, end));
            assert_eq!(part, &whole[start as usize..end as usize], "{start}..{end}");
        }
    }
}

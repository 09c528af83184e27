//! The batches of a `searchStream` answer as they arrive (SR-33): the body is a JSON array of
//! response objects; [`batches`] yields each one's bytes once its closing brace is read, for serde.
//! Only the array's structure is scanned (strings, escapes, depth) and only the batch being read is
//! held: one past the limit, an answer cut short or not an array of objects is an error.

use std::collections::VecDeque;

use bytes::{Bytes, BytesMut};
use futures::{Stream, StreamExt};

/// Why a `searchStream` body could not be split into batches.
#[derive(Debug, thiserror::Error)]
pub(crate) enum BatchError<E> {
    #[error(transparent)]
    Body(E),
    #[error("a batch of the searchStream answer is longer than {limit} bytes")]
    TooLarge { limit: usize },
    #[error("the searchStream answer is not a JSON array of objects: {what} at byte {at}")]
    Malformed { what: &'static str, at: u64 },
    #[error("the searchStream answer ended before its closing `]` (byte {at})")]
    Truncated { at: u64 },
}

/// Where the scanner is between and inside the array's members.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum At {
    /// Before `[`.
    Start,
    /// After `[`: a batch or `]`.
    First,
    /// After `,`: a batch.
    Next,
    /// Inside a batch, at a nesting depth (1: the batch's own braces): outside a string,
    Object(u32),
    /// inside one,
    String(u32),
    /// or after a `\` in one.
    Escape(u32),
    /// After a batch: `,` or `]`.
    After,
    /// After `]`: only whitespace.
    End,
}

/// The state of one answer's scan.
struct Splitter {
    at: At,
    batch: BytesMut, // the bytes of the batch being read
    limit: usize,
    offset: u64, // bytes read so far, for the error's position
}

impl Splitter {
    /// Scans `chunk`, pushing each batch it completes onto `out`.
    fn feed<E>(&mut self, chunk: &[u8], out: &mut VecDeque<Bytes>) -> Result<(), BatchError<E>> {
        let mut start = 0; // where the current batch's bytes begin in `chunk`
        for (i, &b) in chunk.iter().enumerate() {
            let malformed = |what| BatchError::Malformed {
                what,
                at: self.offset + i as u64,
            };
            self.at = match (self.at, b) {
                (At::Escape(d), _) => At::String(d),
                (At::String(d), b'\\') => At::Escape(d),
                (At::String(d), b'"') => At::Object(d),
                (at @ At::String(_), _) => at,
                (At::Object(d), b'"') => At::String(d),
                (At::Object(1), b'}') => {
                    self.take(&chunk[start..=i])?;
                    out.push_back(self.batch.split().freeze());
                    At::After
                }
                (At::Object(1), b']') => return Err(malformed("`]` closing a batch")),
                (At::Object(d), b'{' | b'[') => At::Object(d + 1),
                (At::Object(d), b'}' | b']') => At::Object(d - 1),
                (at @ At::Object(_), _) => at,
                (at, b' ' | b'\t' | b'\n' | b'\r') => at,
                (At::Start, b'[') => At::First,
                (At::First | At::Next, b'{') => {
                    start = i;
                    At::Object(1)
                }
                (At::First | At::After, b']') => At::End,
                (At::After, b',') => At::Next,
                (At::Start, _) => return Err(malformed("not an array")),
                (At::First | At::Next, _) => {
                    return Err(malformed("a member that is not an object"));
                }
                (At::After, _) => return Err(malformed("neither `,` nor `]` after a batch")),
                (At::End, _) => return Err(malformed("text after the array")),
            };
        }
        if matches!(self.at, At::Object(_) | At::String(_) | At::Escape(_)) {
            self.take(&chunk[start..])?;
        }
        self.offset += chunk.len() as u64;
        Ok(())
    }

    /// Adds `bytes` to the batch being read, within the limit.
    fn take<E>(&mut self, bytes: &[u8]) -> Result<(), BatchError<E>> {
        if self.batch.len() + bytes.len() > self.limit {
            return Err(BatchError::TooLarge { limit: self.limit });
        }
        self.batch.extend_from_slice(bytes);
        Ok(())
    }
}

/// The batches of the `searchStream` answer `body`, each a complete JSON object of at most
/// `limit` bytes, in order; ends after the array's `]`, or with the first error.
pub(crate) fn batches<S, E>(
    body: S,
    limit: usize,
) -> impl Stream<Item = Result<Bytes, BatchError<E>>>
where
    S: Stream<Item = Result<Bytes, E>> + Unpin,
{
    let splitter = Splitter {
        at: At::Start,
        batch: BytesMut::new(),
        limit,
        offset: 0,
    };
    let state = Some((body, splitter, VecDeque::new(), None));
    futures::stream::unfold(state, |state| async move {
        let (mut body, mut splitter, mut ready, mut failed) = state?;
        loop {
            // The batches a chunk completed come before the error found later in it.
            if let Some(batch) = ready.pop_front() {
                return Some((Ok(batch), Some((body, splitter, ready, failed))));
            }
            if let Some(e) = failed {
                return Some((Err(e), None));
            }
            failed = match body.next().await {
                Some(Ok(chunk)) => splitter.feed(&chunk, &mut ready).err(),
                Some(Err(e)) => Some(BatchError::Body(e)),
                None if splitter.at == At::End => return None,
                None => Some(BatchError::Truncated {
                    at: splitter.offset,
                }),
            };
        }
    })
}

#[cfg(test)]
mod tests;

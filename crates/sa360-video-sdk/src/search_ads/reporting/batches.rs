//! The batches of a `searchStream` answer, as they arrive (SR-33): the body is a JSON array of
//! response objects, and [`batches`] yields each top-level object's bytes as soon as its closing
//! brace is read, for the caller to decode with serde. Only the array's structure is scanned
//! (strings and their escapes, the nesting depth); nothing is parsed twice and nothing beyond the
//! batch being read is held: a batch longer than the limit is an error as soon as it grows past
//! it, an answer cut short or not an array of objects is an error naming where.

use std::collections::VecDeque;

use bytes::{Bytes, BytesMut};
use futures::{Stream, StreamExt};

/// Why a `searchStream` body could not be split into batches.
#[derive(Debug, thiserror::Error)]
pub(crate) enum BatchError<E> {
    /// Reading the body failed.
    #[error(transparent)]
    Body(E),
    /// A batch grew past the limit (the answer is refused, not buffered).
    #[error("a batch of the searchStream answer is longer than {limit} bytes")]
    TooLarge { limit: usize },
    /// The body is not a JSON array of objects.
    #[error("the searchStream answer is not a JSON array of objects: {what} at byte {at}")]
    Malformed { what: &'static str, at: u64 },
    /// The body ended before the array's closing `]`.
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
    /// Inside a batch.
    Batch {
        depth: u32,
        string: bool,
        escape: bool,
    },
    /// After a batch: `,` or `]`.
    After,
    /// After `]`: only whitespace.
    End,
}

/// The state of one answer's scan.
struct Splitter {
    at: At,
    /// The bytes of the batch being read.
    batch: BytesMut,
    limit: usize,
    /// Bytes read so far (for the error's position).
    offset: u64,
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
                (
                    At::Batch {
                        depth,
                        string: true,
                        escape,
                    },
                    _,
                ) => At::Batch {
                    depth,
                    string: escape || b != b'"',
                    escape: !escape && b == b'\\',
                },
                (At::Batch { depth, .. }, b'"') => At::Batch {
                    depth,
                    string: true,
                    escape: false,
                },
                (At::Batch { depth: 1, .. }, b'}') => {
                    self.take(&chunk[start..=i])?;
                    out.push_back(self.batch.split().freeze());
                    At::After
                }
                (At::Batch { depth: 1, .. }, b']') => return Err(malformed("`]` closing a batch")),
                (At::Batch { depth, .. }, b'{' | b'[') => At::Batch {
                    depth: depth + 1,
                    string: false,
                    escape: false,
                },
                (At::Batch { depth, .. }, b'}' | b']') => At::Batch {
                    depth: depth - 1,
                    string: false,
                    escape: false,
                },
                (at @ At::Batch { .. }, _) => at,
                (at, b' ' | b'\t' | b'\n' | b'\r') => at,
                (At::Start, b'[') => At::First,
                (At::First | At::Next, b'{') => {
                    start = i;
                    At::Batch {
                        depth: 1,
                        string: false,
                        escape: false,
                    }
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
        if matches!(self.at, At::Batch { .. }) {
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

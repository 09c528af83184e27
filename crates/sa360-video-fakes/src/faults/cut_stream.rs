//! A body cut short: some bytes of the real body, then an abort or a clean end.

use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use axum::body::Bytes;
use futures::Stream;
use tokio::time::Sleep;

enum CutState {
    Passing,
    Pausing(Pin<Box<Sleep>>),
    Done,
}

/// A body stream that passes `limit` bytes of `inner`, then either aborts (after a short pause so
/// the bytes already sent are flushed to the socket) or ends cleanly.
pub(crate) struct CutStream<S> {
    inner: S,
    remaining: u64,
    abort: bool,
    state: CutState,
}

impl<S> CutStream<S> {
    pub(crate) fn new(inner: S, limit: u64, abort: bool) -> Self {
        Self {
            inner,
            remaining: limit,
            abort,
            state: CutState::Passing,
        }
    }

    fn finish(&mut self) -> Poll<Option<Result<Bytes, std::io::Error>>> {
        if self.abort {
            self.state = CutState::Pausing(Box::pin(tokio::time::sleep(Duration::from_millis(30))));
            // Wake immediately so the pause timer gets registered by the next poll.
            Poll::Pending
        } else {
            self.state = CutState::Done;
            Poll::Ready(None)
        }
    }
}

impl<S, E> Stream for CutStream<S>
where
    S: Stream<Item = Result<Bytes, E>> + Unpin,
    E: std::fmt::Display,
{
    type Item = Result<Bytes, std::io::Error>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = &mut *self;
        loop {
            match &mut this.state {
                CutState::Done => return Poll::Ready(None),
                CutState::Pausing(sleep) => {
                    if sleep.as_mut().poll(cx).is_pending() {
                        return Poll::Pending;
                    }
                    this.state = CutState::Done;
                    return Poll::Ready(Some(Err(std::io::Error::new(
                        std::io::ErrorKind::ConnectionAborted,
                        "connection aborted by an injected fault",
                    ))));
                }
                CutState::Passing => {
                    if this.remaining == 0 {
                        let poll = this.finish();
                        if poll.is_pending() {
                            // Loop once more to poll (and so register) the pause timer.
                            continue;
                        }
                        return poll;
                    }
                    match Pin::new(&mut this.inner).poll_next(cx) {
                        Poll::Pending => return Poll::Pending,
                        Poll::Ready(None) => {
                            this.state = CutState::Done;
                            return Poll::Ready(None);
                        }
                        Poll::Ready(Some(Err(e))) => {
                            this.state = CutState::Done;
                            return Poll::Ready(Some(Err(std::io::Error::other(e.to_string()))));
                        }
                        Poll::Ready(Some(Ok(mut chunk))) => {
                            let len = chunk.len() as u64;
                            if len >= this.remaining {
                                let keep = usize::try_from(this.remaining).unwrap_or(usize::MAX);
                                chunk.truncate(keep);
                                this.remaining = 0;
                            } else {
                                this.remaining -= len;
                            }
                            if !chunk.is_empty() {
                                return Poll::Ready(Some(Ok(chunk)));
                            }
                        }
                    }
                }
            }
        }
    }
}

//! The request for a query's next page, sent ahead: a task of its own, started before the page
//! before it is decoded, so the service prepares the next page meanwhile. Both readers of pages
//! use it: the conversion report's shards ([`stream`](super::stream)) and the pages of a query of
//! any resource ([`search_pages`](super::search_pages)).
//!
//! **Started, not only spawned.** A task spawned from a Tokio worker waits in that worker's own
//! next-task slot, which the other workers never take from, until the spawning task yields. The
//! reader goes straight on to decode the page it has (milliseconds of CPU for 10 000 rows), so
//! [`Ahead::send`] yields once after spawning: the request leaves before the decode starts, on a
//! multi-threaded runtime and on a current-thread one alike.

use std::future::Future;

use tokio::sync::OwnedSemaphorePermit;
use tokio::task::JoinHandle;

use super::super::error::Error;
use super::rpc::OP_SEARCH;

/// A task aborted when its handle is dropped.
struct AbortOnDrop<T>(JoinHandle<T>);

impl<T> Drop for AbortOnDrop<T> {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// The next page's request, on its way, with the permit its rows hold until the reader takes
/// them. Dropping it aborts the request, so a reader that fails or is dropped leaves none behind.
pub(crate) struct Ahead<F> {
    permit: OwnedSemaphorePermit,
    answer: AbortOnDrop<Result<F, Error>>,
}

impl<F: Send + 'static> Ahead<F> {
    /// Spawns `request` and lets it start (see the module's note) before returning.
    pub(crate) async fn send(
        permit: OwnedSemaphorePermit,
        request: impl Future<Output = Result<F, Error>> + Send + 'static,
    ) -> Self {
        let answer = AbortOnDrop(tokio::spawn(request));
        tokio::task::yield_now().await;
        Self { permit, answer }
    }

    /// The answer, with the permit it holds.
    pub(crate) async fn answer(mut self) -> (OwnedSemaphorePermit, Result<F, Error>) {
        let answer = match (&mut self.answer.0).await {
            Ok(answer) => answer,
            Err(e) => Err(Error::unexpected(
                OP_SEARCH,
                None,
                format!("a page request's task stopped before its answer: {e}"),
            )),
        };
        (self.permit, answer)
    }
}

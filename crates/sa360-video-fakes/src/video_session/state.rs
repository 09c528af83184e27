//! The state every handler of the video fake shares.

use std::ops::Deref;
use std::sync::Arc;

use super::config::VideoSessionConfig;
use super::ledger::Shared;

/// Shared state of the handlers.
#[derive(Clone)]
pub(crate) struct VideoState(pub(super) Arc<VideoInner>);

pub(crate) struct VideoInner {
    pub config: VideoSessionConfig,
    pub shared: Arc<Shared>,
    pub base_url: String,
}

impl Deref for VideoState {
    type Target = VideoInner;

    fn deref(&self) -> &VideoInner {
        &self.0
    }
}

impl std::fmt::Debug for VideoState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("VideoState")
            .field("base_url", &self.base_url)
            .finish_non_exhaustive()
    }
}

//! The Reporting side's state: the page tokens handed out and the random generators of request
//! ids and injected faults. It imports no handler, so [`AppInner`](crate::search_ads::state::AppInner)
//! holds it without a module cycle.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Instant;

use super::entities::cursor::EntityCursor;
use super::row::RowKey;

/// What a page token stands for.
#[derive(Clone, Debug)]
pub(crate) struct PageToken {
    pub(super) customer: String,
    pub(super) query: String,
    pub(super) cursor: RowKey,
    /// Where the next page of a report of `customer`, `campaign` or `ad_group` in its natural
    /// order starts (SR-22 g); `None` for other reports and for a first page.
    pub(super) entity: Option<EntityCursor>,
    pub(super) emitted: u64,
    pub(super) expires: Instant,
    pub(super) total_requested: bool,
}

/// Mutable state of the reporting side.
pub(crate) struct ReportingState {
    /// The page tokens handed out and not expired or used up.
    pub(super) tokens: Mutex<HashMap<String, PageToken>>,
    /// Request ids of errors and page tokens.
    pub(super) rng: Mutex<fastrand::Rng>,
    /// The draws of the injected faults.
    pub(super) faults_rng: Mutex<fastrand::Rng>,
}

impl ReportingState {
    pub(crate) fn new(seed: u64, fault_seed: u64) -> Self {
        Self {
            tokens: Mutex::new(HashMap::new()),
            rng: Mutex::new(fastrand::Rng::with_seed(seed ^ 0x0050_A6E0)),
            faults_rng: Mutex::new(fastrand::Rng::with_seed(fault_seed)),
        }
    }

    pub(super) fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
        m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

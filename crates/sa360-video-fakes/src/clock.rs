//! A clock that follows real time but can be pushed forward by tests.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant, SystemTime};

/// A clock shared by a fake and its tests.
///
/// It runs with real time and adds an offset that only [`FakeClock::advance`] changes, so a test can
/// jump over a 10-minute account block or an access token's lifetime without sleeping. Clones share
/// the same offset.
#[derive(Clone, Debug, Default)]
pub struct FakeClock {
    offset: Arc<Mutex<Duration>>,
}

impl FakeClock {
    /// A clock with no offset: it reads real time until advanced.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Moves the clock forward by `by`. Time never goes backwards.
    pub fn advance(&self, by: Duration) {
        let mut offset = self.offset.lock().unwrap_or_else(PoisonError::into_inner);
        *offset = offset.saturating_add(by);
    }

    /// The total amount the clock has been advanced.
    #[must_use]
    pub fn offset(&self) -> Duration {
        *self.offset.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The current monotonic instant (real now plus the offset).
    #[must_use]
    pub fn now(&self) -> Instant {
        let now = Instant::now();
        now.checked_add(self.offset()).unwrap_or(now)
    }

    /// The current wall-clock time (real now plus the offset).
    #[must_use]
    pub fn system_now(&self) -> SystemTime {
        let now = SystemTime::now();
        now.checked_add(self.offset()).unwrap_or(now)
    }

    /// The current wall-clock time in whole seconds since the Unix epoch.
    #[must_use]
    pub fn unix_seconds(&self) -> u64 {
        self.system_now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn advance_moves_now_and_is_shared_by_clones() {
        let clock = FakeClock::new();
        let other = clock.clone();
        let before = clock.now();
        other.advance(Duration::from_secs(600));
        assert!(clock.now() >= before + Duration::from_secs(600));
        assert_eq!(clock.offset(), Duration::from_secs(600));
    }
}

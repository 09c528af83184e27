//! A clock that follows real time but can be pushed forward by tests.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant, SystemTime};

/// A clock shared by a fake and its tests.
///
/// It runs with real time and adds an offset that only [`FakeClock::advance`] changes, so a test can
/// jump over a 10-minute account block or an access token's lifetime without sleeping. Clones share
/// the same offset. [`FakeClock::fast`] makes one that also runs faster than real time, so a test
/// can watch the service's 10-minute rules play out in seconds.
#[derive(Clone, Debug)]
pub struct FakeClock {
    offset: Arc<Mutex<Duration>>,
    origin: Instant,
    rate: u32,
}

impl Default for FakeClock {
    fn default() -> Self {
        Self::fast(1)
    }
}

impl FakeClock {
    /// A clock with no offset: it reads real time until advanced.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// A clock that runs `rate` times faster than real time from now on (at least 1): with 300,
    /// the service's 10-minute lockout window passes in 2 real seconds. A client's lockout policy
    /// then uses the spans divided by the same rate.
    #[must_use]
    pub fn fast(rate: u32) -> Self {
        Self {
            offset: Arc::default(),
            origin: Instant::now(),
            rate: rate.max(1),
        }
    }

    /// Moves the clock forward by `by`. Time never goes backwards.
    pub fn advance(&self, by: Duration) {
        let mut offset = self.offset.lock().unwrap_or_else(PoisonError::into_inner);
        *offset = offset.saturating_add(by);
    }

    /// How far the clock is ahead of real time: what it was advanced, plus what it gained by
    /// running fast.
    #[must_use]
    pub fn offset(&self) -> Duration {
        let advanced = *self.offset.lock().unwrap_or_else(PoisonError::into_inner);
        advanced.saturating_add(self.origin.elapsed().saturating_mul(self.rate - 1))
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

    #[test]
    fn a_fast_clock_gains_time() {
        let clock = FakeClock::fast(1000);
        std::thread::sleep(Duration::from_millis(20));
        assert!(
            clock.offset() >= Duration::from_secs(19),
            "{:?}",
            clock.offset()
        );
    }
}

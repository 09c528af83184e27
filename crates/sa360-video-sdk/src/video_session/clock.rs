//! Time sources for the lockout guard, and the UTC formatting used in messages.

use std::fmt;
use std::sync::OnceLock;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// Where the lockout guard reads the current time.
///
/// Wall-clock time ([`SystemTime`]) because failure times are persisted by the
/// [`FileStore`](super::FileStore) and compared across processes, and because
/// messages say when trying again is safe. Within one process the time must
/// never jump: [`SystemClock`] reads the wall clock once and then advances
/// with the monotonic clock.
pub trait Clock: Send + Sync + fmt::Debug {
    /// The current time.
    fn now(&self) -> SystemTime;
}

/// The wall clock as read when the process first asked for the time, advanced
/// by the monotonic clock ([`Instant`]) since then.
///
/// A wall-clock jump while the process runs (NTP stepping it, an
/// administrator setting it) does not move this clock, so it can neither drop
/// counted failures early nor refuse for the length of the jump. Processes
/// started after a jump see the new wall time; a store clamps entries dated
/// further in the future than any step could write (what is assumed of
/// clocks: the [`video_session`](crate::video_session#running-several-replicas)
/// module's "Running several replicas").
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct SystemClock;

/// The process's anchor: the wall time and the monotonic instant read together.
fn anchor() -> (SystemTime, Instant) {
    static ANCHOR: OnceLock<(SystemTime, Instant)> = OnceLock::new();
    *ANCHOR.get_or_init(|| (SystemTime::now(), Instant::now()))
}

impl Clock for SystemClock {
    fn now(&self) -> SystemTime {
        let (wall, at) = anchor();
        plus(wall, at.elapsed())
    }
}

/// A clock that only moves when told to, for tests (feature `test-util`).
///
/// Clones share one time, so a test keeps a clone and advances it while the
/// guard holds another.
///
/// ```
/// use std::time::{Duration, UNIX_EPOCH};
/// use sa360_video_sdk::video_session::{Clock, ManualClock};
///
/// let clock = ManualClock::new(UNIX_EPOCH + Duration::from_secs(1_000));
/// let shared = clock.clone();
/// clock.advance(Duration::from_secs(60));
/// assert_eq!(shared.now(), UNIX_EPOCH + Duration::from_secs(1_060));
/// ```
#[cfg(any(test, feature = "test-util"))]
#[cfg_attr(docsrs, doc(cfg(feature = "test-util")))]
#[derive(Debug, Clone)]
pub struct ManualClock {
    now: std::sync::Arc<std::sync::Mutex<SystemTime>>,
}

#[cfg(any(test, feature = "test-util"))]
impl ManualClock {
    /// A clock standing at `start`.
    pub fn new(start: SystemTime) -> Self {
        Self {
            now: std::sync::Arc::new(std::sync::Mutex::new(start)),
        }
    }

    /// Moves the clock forward by `by`.
    pub fn advance(&self, by: Duration) {
        let mut now = self.now.lock().unwrap_or_else(|p| p.into_inner());
        *now = plus(*now, by);
    }

    /// Sets the clock to `to` (backwards too).
    pub fn set(&self, to: SystemTime) {
        *self.now.lock().unwrap_or_else(|p| p.into_inner()) = to;
    }
}

#[cfg(any(test, feature = "test-util"))]
impl Clock for ManualClock {
    fn now(&self) -> SystemTime {
        *self.now.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// `t + d`, saturating far in the future instead of panicking on overflow.
pub(crate) fn plus(t: SystemTime, d: Duration) -> SystemTime {
    const CENTURY: Duration = Duration::from_secs(100 * 365 * 86_400);
    t.checked_add(d)
        .or_else(|| t.checked_add(CENTURY))
        .unwrap_or(t)
}

/// `t` as RFC 3339 UTC with whole seconds, rounded up (`2025-01-31T12:00:05Z`).
///
/// Rounded up because every time shown is "not before": a caller that waits
/// until the printed second is safe.
pub(crate) fn format_utc(t: SystemTime) -> String {
    let secs: i64 = match t.duration_since(UNIX_EPOCH) {
        Ok(d) => i64::try_from(d.as_secs())
            .unwrap_or(i64::MAX - 1)
            .saturating_add(i64::from(d.subsec_nanos() > 0)),
        Err(e) => -i64::try_from(e.duration().as_secs()).unwrap_or(i64::MAX),
    };
    chrono::DateTime::from_timestamp(secs, 0).map_or_else(
        || format!("{secs} s from 1970-01-01T00:00:00Z"),
        |t| t.format("%Y-%m-%dT%H:%M:%SZ").to_string(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_utc_and_rounds_up() {
        assert_eq!(format_utc(UNIX_EPOCH), "1970-01-01T00:00:00Z");
        let t = UNIX_EPOCH + Duration::from_secs(1_738_324_805);
        assert_eq!(format_utc(t), "2025-01-31T12:00:05Z");
        assert_eq!(
            format_utc(t + Duration::from_millis(1)),
            "2025-01-31T12:00:06Z"
        );
        let leap = UNIX_EPOCH + Duration::from_secs(951_782_400); // 2000-02-29
        assert_eq!(format_utc(leap), "2000-02-29T00:00:00Z");
    }

    #[test]
    fn system_clock_follows_the_monotonic_clock_from_its_anchor() {
        let (wall, at) = anchor();
        let a = SystemClock.now();
        let b = SystemClock.now();
        assert!(b >= a);
        let elapsed = at.elapsed();
        let c = SystemClock.now();
        // `c` was read after `elapsed`: never behind the anchor plus it, and
        // in step with the monotonic clock rather than the wall clock.
        assert!(c >= wall + elapsed);
        assert!(c <= wall + at.elapsed());
    }

    #[test]
    fn manual_clock_is_shared_between_clones() {
        let a = ManualClock::new(UNIX_EPOCH);
        let b = a.clone();
        a.advance(Duration::from_secs(5));
        assert_eq!(b.now(), UNIX_EPOCH + Duration::from_secs(5));
        b.set(UNIX_EPOCH);
        assert_eq!(a.now(), UNIX_EPOCH);
    }
}

//! The service's lockout rule, the guard's safety margin, and the spans a
//! store counts attempts for.

use std::time::Duration;

use crate::video_session::error::Error;

/// The longest window, block, margin or attempt timeout accepted (one day):
/// longer values are almost certainly a unit mistake, and bounding them keeps
/// every time computation far from overflow.
pub const MAX_SPAN: Duration = Duration::from_secs(86_400);

/// The service's lockout rule and the guard's safety margin. The default is
/// the service document's rule (more than 5 failures in 10 minutes block the account for
/// 10 minutes) with a 60 s margin.
///
/// Change the rule only when the service's rule changes; a looser rule than
/// the service's lets the SDK block accounts. [`validate`](Self::validate)
/// runs when a guard or client is built.
///
/// ```
/// use std::time::Duration;
/// use sa360_video_sdk::video_session::LockoutPolicy;
///
/// let policy = LockoutPolicy::SEED.margin(Duration::from_secs(120));
/// policy.validate()?;
/// let zero = LockoutPolicy::SEED.max_failures(0);
/// let e = zero.validate().unwrap_err();
/// assert_eq!(e.as_validation().map(|v| v.field), Some("max_failures"));
/// # Ok::<(), sa360_video_sdk::video_session::Error>(())
/// ```
///
/// `#[non_exhaustive]`: build it from [`LockoutPolicy::SEED`] (or
/// [`LockoutPolicy::default`], the same) and the setters named like the fields; a
/// struct literal does not compile outside this crate.
///
/// ```compile_fail,E0639
/// use std::time::Duration;
/// use sa360_video_sdk::video_session::LockoutPolicy;
/// let policy = LockoutPolicy { margin: Duration::from_secs(120), ..LockoutPolicy::SEED };
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct LockoutPolicy {
    /// Failures the service tolerates inside the window (the next one blocks).
    /// At least 1.
    pub max_failures: u32,
    /// How long the service counts a failure. Not zero.
    pub window: Duration,
    /// How long a block lasts. Not zero.
    pub block: Duration,
    /// Added to every time the guard derives from the service's rule (see
    /// `specs/DECISIONS.md`, "Lockout safety margin"): it covers a service that
    /// processes a request later than the attempt timeout allows for, and
    /// clocks that run at slightly different rates. Not zero.
    pub margin: Duration,
}

impl LockoutPolicy {
    /// The rule of the service's document (called the seed here, hence the name;
    /// `specs/SOURCES.md`): 5 failures tolerated in 10 minutes, blocks of 10
    /// minutes; a 60 s margin.
    pub const SEED: Self = Self {
        max_failures: 5,
        window: Duration::from_secs(600),
        block: Duration::from_secs(600),
        margin: Duration::from_secs(60),
    };

    /// Checks the policy: `max_failures` at least 1; `window`, `block` and
    /// `margin` at least 1 ms and at most [`MAX_SPAN`]. The error names the field.
    pub fn validate(&self) -> Result<(), Error> {
        if self.max_failures == 0 {
            return Err(Error::invalid(
                "max_failures",
                "must be at least 1 (the service tolerates that many failures before it blocks)",
            ));
        }
        for (field, value) in [
            ("window", self.window),
            ("block", self.block),
            ("margin", self.margin),
        ] {
            check_span(field, value)?;
        }
        Ok(())
    }

    /// The spans a store counts with, for attempts that may last up to
    /// `attempt_timeout` (the HTTP client's total timeout). Call
    /// [`validate`](Self::validate) first; values are clamped to
    /// [`MAX_SPAN`] regardless.
    pub fn limits(&self, attempt_timeout: Duration) -> Limits {
        let cap = |d: Duration| d.min(MAX_SPAN);
        let (window, block, margin) = (cap(self.window), cap(self.block), cap(self.margin));
        let timeout = cap(attempt_timeout);
        Limits {
            max_failures: self.max_failures,
            window,
            unknown_for: timeout + window + margin,
            failure_for: window + margin,
            block_beyond_window: block.saturating_sub(window),
            margin,
            longest_block: MAX_SPAN + margin,
        }
    }
}

crate::setters::field_setters!(LockoutPolicy {
    value {
        max_failures => max_failures: u32,
        window => window: Duration,
        block => block: Duration,
        margin => margin: Duration,
    }
});

impl Default for LockoutPolicy {
    fn default() -> Self {
        Self::SEED
    }
}

/// Checks a duration setting: at least 1 ms, at most [`MAX_SPAN`].
pub(crate) fn check_span(field: &'static str, value: Duration) -> Result<(), Error> {
    if value < Duration::from_millis(1) {
        return Err(Error::invalid(field, "must be at least 1 ms"));
    }
    if value > MAX_SPAN {
        return Err(Error::invalid(
            field,
            format!("must be at most {} s (one day)", MAX_SPAN.as_secs()),
        ));
    }
    Ok(())
}

/// What a store needs to decide: the policy turned into spans, for one
/// attempt timeout. Every span already includes the safety margin.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Failures tolerated in the window.
    pub max_failures: u32,
    /// The policy's window (named by a [`RefusalReason`](crate::video_session::RefusalReason)).
    pub window: Duration,
    /// How long an attempt whose outcome is unknown counts, from its start:
    /// attempt timeout + window + margin. A reservation counts this long until
    /// its outcome is known.
    pub unknown_for: Duration,
    /// How long a failure counts from the moment its answer arrived (the
    /// service counted it at or before then): window + margin.
    pub failure_for: Duration,
    /// How much longer than the window a presumed block lasts (block − window,
    /// or zero).
    pub block_beyond_window: Duration,
    /// The safety margin, added to a reported block's end.
    pub margin: Duration,
    /// The longest a stored block or pause is believed; a later end is clamped.
    pub longest_block: Duration,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seed_is_valid_and_its_limits_carry_the_margin() {
        LockoutPolicy::SEED.validate().unwrap();
        let l = LockoutPolicy::SEED.limits(Duration::from_secs(30));
        assert_eq!(l.max_failures, 5);
        assert_eq!(l.unknown_for, Duration::from_secs(30 + 600 + 60));
        assert_eq!(l.failure_for, Duration::from_secs(660));
        assert_eq!(l.block_beyond_window, Duration::ZERO);
        assert_eq!(l.margin, Duration::from_secs(60));
        assert_eq!(l.longest_block, MAX_SPAN + Duration::from_secs(60));
        let long_block = LockoutPolicy {
            block: Duration::from_secs(900),
            ..LockoutPolicy::SEED
        };
        assert_eq!(
            long_block.limits(Duration::ZERO).block_beyond_window,
            Duration::from_secs(300)
        );
    }

    #[test]
    fn every_bad_field_is_named() {
        let s = LockoutPolicy::SEED;
        let cases = [
            (
                LockoutPolicy {
                    max_failures: 0,
                    ..s
                },
                "max_failures",
            ),
            (
                LockoutPolicy {
                    window: Duration::ZERO,
                    ..s
                },
                "window",
            ),
            (
                LockoutPolicy {
                    block: Duration::from_micros(999),
                    ..s
                },
                "block",
            ),
            (
                LockoutPolicy {
                    margin: Duration::ZERO,
                    ..s
                },
                "margin",
            ),
            (
                LockoutPolicy {
                    window: MAX_SPAN + Duration::from_millis(1),
                    ..s
                },
                "window",
            ),
        ];
        for (policy, field) in cases {
            assert_eq!(
                policy
                    .validate()
                    .unwrap_err()
                    .as_validation()
                    .unwrap()
                    .field,
                field,
                "{policy:?}"
            );
        }
        LockoutPolicy {
            max_failures: 1,
            window: Duration::from_millis(1),
            block: MAX_SPAN,
            margin: Duration::from_millis(1),
        }
        .validate()
        .unwrap();
    }

    #[test]
    fn limits_are_capped() {
        let huge = LockoutPolicy {
            window: Duration::MAX,
            block: Duration::MAX,
            margin: Duration::MAX,
            max_failures: 1,
        };
        let l = huge.limits(Duration::MAX);
        assert_eq!(l.unknown_for, MAX_SPAN * 3);
    }
}

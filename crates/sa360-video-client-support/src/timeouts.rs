//! The default timeouts of every HTTP client in the workspace, in one place.
//!
//! The generated clients' [`http_client_builder`](crate::http_client_builder),
//! [`BodyLimits::default`](crate::BodyLimits) and the SDK's `HttpOptions`
//! all start from these values; change them here only.
//!
//! ```
//! use std::time::Duration;
//! assert_eq!(sa360_video_client_support::timeouts::CONNECT, Duration::from_secs(10));
//! assert!(sa360_video_client_support::timeouts::ATTEMPT < sa360_video_client_support::timeouts::DEADLINE);
//! ```

use std::time::Duration;

/// Longest time to establish a connection (TCP and TLS).
pub const CONNECT: Duration = Duration::from_secs(10);

/// Longest time one request attempt may take, its whole answer included
/// (streamed downloads are bounded by [`STALL`] instead).
pub const ATTEMPT: Duration = Duration::from_secs(30);

/// Longest time an answer may go without making progress (1 KiB, or its
/// end); also the read (idle) timeout of the connection.
pub const STALL: Duration = Duration::from_secs(30);

/// Longest time one call may take across all its attempts and the waits
/// between them (the SDK's overall deadline).
pub const DEADLINE: Duration = Duration::from_secs(300);

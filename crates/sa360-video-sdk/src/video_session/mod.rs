//! Video session service: login that never locks an account by itself, and
//! session invitations that cannot name two channels.
//!
//! Built on the generated `video-session-client`; this module enforces what the
//! service's document (the short service description this project started from, restated in
//! `specs/SOURCES.md`) says only in prose (see `specs/DECISIONS.md`, VS-1 to VS-12).
//!
//! - [`VideoSessionClient`]: a validated [`BaseUrl`](crate::http::BaseUrl)
//!   (`https://` except on loopback), timeouts and user agent from
//!   [`HttpOptions`](crate::http::HttpOptions), and an HTTP client that never
//!   follows a redirect to another origin, so neither the `UserToken` header nor
//!   a login body can leave the service's origin.
//! - [`Credentials`] and [`Session`] keep the secret key, password and tokens as
//!   [`secrecy::SecretString`]s: never in `Debug`, errors or logs; zeroized on drop.
//! - [`LockoutGuard`]: more than 5 failed logins in 10 minutes block an account
//!   for 10 minutes. The guard counts failures per account ([`AccountKey`]) and
//!   refuses, without a network call, any login whose failure would be the 6th,
//!   and any login during a known or presumed block, with
//!   [`Error::LockoutRefused`] saying when trying again is safe. Logins of one
//!   account are serialized; an attempt with an unknown outcome counts as a
//!   failure until the service must have forgotten it; nothing is ever retried.
//!   The store is pluggable: the default is a [`FileStore`] in the per-user
//!   state directory ([`FileStore::per_user`]: a restarted program, the user's
//!   other programs and `apictl` keep one count); `RedisStore` (feature
//!   `redis`) for replicas; [`MemoryStore`] only when named (it forgets every
//!   count when the process ends).
//!   The [`Clock`] is injectable (`ManualClock`, feature `test-util`, for tests).
//! - [`Invitation`]: one variant per channel (SMS, WhatsApp, e-mail), with
//!   validated fields ([`MobileNumber`] with its [`CountryCode`],
//!   [`EmailAddress`], [`Message`]); validation errors name the wire field and
//!   happen before any call.
//! - [`CallExperience`]: the typed `QueryStringParameter` (`?m=1&c=2&o=0&s=1`).
//! - One [`Error`] whose variants a caller matches on; every message says what
//!   to do next.
//!
//! # Running several replicas
//!
//! The service blocks an account after more than 5 failed logins in 10 minutes, counting
//! across everyone who logs in to it. The promise that no login is sent whose failure could
//! block the account holds for the clients that share one lockout count, so every process and
//! host that logs in to the same accounts must use the same store:
//!
//! | deployment | store | what is shared | across restarts |
//! |---|---|---|---|
//! | the programs of one user on one host (any number of clients and processes, restarts, `apictl`) | default: [`FileStore::per_user`], at [`FileStore::default_location`] | one file per user and host, under an OS lock (`flock`) | kept |
//! | several users, or containers with their own home, on one host | [`FileStore::new`] with one path they all can use | the file | kept |
//! | replicas on several hosts | `RedisStore::connect(URL)` (feature `redis`): `redis://`, `rediss://` (TLS), `redis-sentinel://…#MASTER`, `redis-cluster://…` | the Redis deployment | kept while Redis keeps its data |
//! | one process that runs once (tests) | [`MemoryStore`], named explicitly | the process | **forgotten**: a restart within 10 minutes can block the account |
//!
//! When the default place cannot be used (no home directory, a read-only file system in a
//! container), [`build`](VideoSessionClientBuilder::build) fails with [`Error::Validation`] naming
//! `lockout_store`: set a store there; the client never falls back to memory
//! (`specs/DECISIONS.md` VS-16).
//!
//! How `RedisStore` keys its counts, fails closed when Redis is down, and notices and outlasts
//! lost data (which deployment guarantees what): its docs (VS-17 to VS-19).
//!
//! **Clocks.** With Redis, every count uses the Redis server's `TIME`: client hosts' clocks do
//! not matter. A [`FileStore`] uses the host's wall clock, read once per process and then
//! advanced by the monotonic clock ([`SystemClock`]), so a jump while a process runs changes
//! nothing; entries dated in the future (a clock set back between two runs) are clamped to at
//! most what a step could have written. Assumed, not checked: the wall clock does not jump
//! forward between two runs by more than the margin (it would shorten the count by the jump),
//! and the service processes a login at most the attempt timeout + the margin (60 s) after the
//! client started it. Every time the SDK shows (`retry_at`) includes that margin
//! (`specs/DECISIONS.md` VS-13 to VS-15).
//!
//! # Undocumented invitation types 4, 5 and 6
//!
//! The service's document enumerates `InvitationType` 1 to 6 but explains only 1 to 3 and
//! declares a maximum of 5 (VS-5): a caller who knows what 4 to 6 do sends one deliberately as
//! [`Invitation::Undocumented`] ([`UndocumentedInvitation`], [`UndocumentedType`] say more).
//!
//! # Example: log in and invite
//!
//! ```
//! use std::sync::Arc;
//!
//! use sa360_video_sdk::video_session::{
//!     CallExperience, Camera, Credentials, Error, FileStore, Invitation, Message, Microphone,
//!     MobileNumber, SessionId, VideoSessionClient,
//! };
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! # // The project's in-process fake stands in for the service.
//! # let fake = sa360_video_fakes::VideoSessionFake::start_default().await?;
//! # let base_url = fake.base_url().to_owned();
//! # let demo = fake.demo().clone();
//! # let (secret_key, user_name, password) = (demo.secret_key, demo.user_name, demo.password);
//! # let session_id = demo.session_id;
//! # // The doc test keeps its count in a temporary file; a program leaves the store out.
//! # let state = tempfile::tempdir()?;
//! # let store = Arc::new(FileStore::new(state.path().join("video-session-lockout.json")));
//! // The lockout count lives in the default store, a file per user and host, so it survives
//! // restarts of this program and is shared with the user's other programs.
//! let client = VideoSessionClient::builder(&base_url)
//! #   .lockout_store(store)
//!     .build()?;
//!
//! let credentials = Credentials::new(secret_key, user_name, password)?;
//! let session = match client.login(&credentials).send().await {
//!     Ok(session) => session,
//!     Err(refused @ Error::LockoutRefused { .. }) => {
//!         // Nothing was sent; the message says when trying again is safe.
//!         eprintln!("{refused}");
//!         return Ok(());
//!     }
//!     Err(other) => return Err(other.into()),
//! };
//!
//! let invitation = Invitation::Sms {
//!     to: MobileNumber::new("US".parse()?, "+1 201 555 0123")?,
//!     message: Some(Message::new("Your video consultation is ready")?),
//! };
//! let experience = CallExperience::new()
//!     .microphone(Microphone::On)
//!     .camera(Camera::Front);
//! let receipt = client
//!     .send_invitation(&session, SessionId::new(session_id)?, invitation)
//!     .experience(experience)
//!     .send()
//!     .await?;
//! assert_eq!(receipt.invitation_type, Some(1));
//! assert_eq!(receipt.query_string_parameter.as_deref(), Some("?m=1&c=2"));
//! # Ok(())
//! # }
//! ```

mod call_experience;
mod client;
mod clock;
mod country_list;
mod credentials;
mod error;
mod invitation;
mod lockout;
mod login;
mod login_request;
#[cfg(feature = "phone-numbers")]
mod numbering_plan;
mod send_invitation;
mod session;

pub use call_experience::{
    CallExperience, CallExperienceParseError, Camera, JoinAs, Microphone, PlatformSupport,
};
pub use client::{VideoSessionClient, VideoSessionClientBuilder};
#[cfg(any(test, feature = "test-util"))]
pub use clock::ManualClock;
pub use clock::{Clock, SystemClock};
pub use credentials::{AccountKey, Credentials};
pub use error::{Error, RefusalReason, StoreError, StoreLoss, StoreStep, ValidationError};
pub use invitation::{
    CountryCode, EMAIL_MAX_CHARS, EmailAddress, Invitation, MESSAGE_MAX_CHARS, Message,
    MobileNumber, SessionId, UndocumentedInvitation, UndocumentedType,
};
pub use lockout::{
    AccountState, AccountView, AttemptEntry, AttemptId, DEFAULT_ATTEMPT_TIMEOUT, FileStore, Hold,
    Limits, LockoutGuard, LockoutGuardBuilder, LockoutPolicy, LockoutStatus, LockoutStore,
    MAX_SPAN, MemoryStore, Resolution, StoreFuture,
};
#[cfg(feature = "redis")]
pub use lockout::{
    DEFAULT_KEY_PREFIX, DEFAULT_REDIS_TIMEOUT, DEFAULT_REPLICA_ACK_TIMEOUT, RedisStore,
    RedisStoreBuilder, ReplicaAcks,
};
pub use login::LoginRequest;
pub use send_invitation::{InvitationReceipt, SendInvitationRequest};
pub use session::{Session, UserDetails};

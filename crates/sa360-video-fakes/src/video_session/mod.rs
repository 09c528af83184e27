//! The video session fake.
//!
//! Routes, relative to [`VideoSessionFake::base_url`] (the spec's `{baseUrl}`): `POST /api/login`
//! and `POST /api/session/{SessionId}/invitation`. Errors are `ApiError` bodies (VS-2).

mod config;
mod invitation;
mod ledger;
mod login;
mod state;

use std::collections::{HashMap, HashSet};
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use axum::Router;
use axum::http::StatusCode;
use axum::middleware::from_fn_with_state;
use axum::response::Response;
use axum::routing::post;

pub use self::config::{DemoCredentials, Domain, User, VideoSessionConfig};
pub use self::ledger::{
    AccountStats, BLOCK_DURATION, Channel, DomainUser, FAILURE_WINDOW, MAX_FAILURES, Outbox,
    OutboxEntry, VideoCounts, VideoLedger,
};

use self::ledger::{Shared, State};
use self::state::{VideoInner, VideoState};
use crate::clock::FakeClock;
use crate::error::FakeError;
use crate::errors::api_error;
use crate::faults::{ErrorStyle, FaultInjector, FaultLayer, Faults, apply_faults};
use crate::server::{ServerHandle, bind, serve};
use crate::util::setters;

/// Builds and starts a [`VideoSessionFake`].
#[derive(Clone, Debug, Default)]
#[must_use]
pub struct VideoSessionFakeBuilder {
    config: VideoSessionConfig,
    clock: Option<FakeClock>,
}

impl VideoSessionFakeBuilder {
    /// Replaces the whole configuration.
    pub fn config(mut self, config: VideoSessionConfig) -> Self {
        self.config = config;
        self
    }

    /// Regenerates the demo data from `seed` (replacing domains, users and sessions), keeping the
    /// other settings.
    pub fn seed(mut self, seed: u64) -> Self {
        let seeded = VideoSessionConfig::seeded(seed);
        self.config.seed = seed;
        self.config.domains = seeded.domains;
        self.config.users = seeded.users;
        self.config.sessions = seeded.sessions;
        self
    }

    /// Adds a domain.
    pub fn domain(mut self, domain: Domain) -> Self {
        self.config.domains.push(domain);
        self
    }

    /// Adds a user.
    pub fn user(mut self, user: User) -> Self {
        self.config.users.push(user);
        self
    }

    /// Adds an open session.
    pub fn session(mut self, session_id: impl Into<String>) -> Self {
        self.config.sessions.push(session_id.into());
        self
    }

    setters! {
        /// Initial faults.
        faults(Faults) => config.faults;
        /// Port on 127.0.0.1 (0, the default, picks a free one).
        port(u16) => config.port;
    }

    /// Uses (and shares) this clock for the lockout.
    pub fn clock(mut self, clock: FakeClock) -> Self {
        self.clock = Some(clock);
        self
    }

    /// Binds 127.0.0.1 and starts serving.
    ///
    /// # Errors
    /// [`FakeError::Config`] for an unusable configuration (it needs an active domain with a user
    /// and a session for the demo credentials), [`FakeError::Io`] when binding fails.
    pub async fn start(self) -> Result<VideoSessionFake, FakeError> {
        let config = self.config;
        config.validate().map_err(FakeError::Config)?;
        let demo = DemoCredentials::from_config(&config).ok_or_else(|| {
            FakeError::Config(
                "the video fake needs an active domain with a user, and a session".to_owned(),
            )
        })?;
        let listener = bind(config.port).await?;
        let addr = listener.local_addr()?;
        let base_url = format!("http://{addr}");
        let injector = Arc::new(FaultInjector::new(config.faults.clone()));
        let shared = Arc::new(Shared {
            state: Mutex::new(State {
                accounts: HashMap::new(),
                tokens: HashMap::new(),
                sessions: config.sessions.iter().cloned().collect::<HashSet<_>>(),
                outbox: Vec::new(),
                outbox_seq: 0,
                next_login_id: 700_000
                    + i64::from(u16::try_from(config.seed % 1000).unwrap_or(0)) * 1000,
                rng: fastrand::Rng::with_seed(config.seed ^ 0x0010_6100),
                counts: VideoCounts::default(),
            }),
            faults: injector.clone(),
            clock: self.clock.unwrap_or_default(),
        });
        let app = VideoState(Arc::new(VideoInner {
            config,
            shared,
            base_url: base_url.clone(),
        }));
        let router = Router::new()
            .route("/api/login", post(login::login))
            .route(
                "/api/session/{session_id}/invitation",
                post(invitation::send_invitation),
            )
            .fallback(not_found)
            .method_not_allowed_fallback(method_not_allowed)
            .layer(from_fn_with_state(
                FaultLayer {
                    injector,
                    style: ErrorStyle::Video,
                    exempt: &[],
                    is_csv: |_| false,
                },
                apply_faults,
            ))
            .with_state(app.clone());
        let server = serve(listener, router)?;
        tracing::info!(%base_url, "video session fake listening");
        Ok(VideoSessionFake {
            app,
            server,
            base_url,
            demo,
        })
    }
}

async fn not_found() -> Response {
    api_error(
        StatusCode::NOT_FOUND,
        "NotFound",
        "No such endpoint.",
        None,
        None,
    )
}

async fn method_not_allowed() -> Response {
    api_error(
        StatusCode::METHOD_NOT_ALLOWED,
        "MethodNotAllowed",
        "The method is not allowed for this endpoint.",
        None,
        None,
    )
}

/// A running video session fake. Dropping it stops the server (in the background);
/// [`VideoSessionFake::shutdown`] stops it and waits.
#[derive(Debug)]
pub struct VideoSessionFake {
    app: VideoState,
    server: ServerHandle,
    base_url: String,
    demo: DemoCredentials,
}

impl VideoSessionFake {
    /// A builder with the default (seed 42) demo data.
    pub fn builder() -> VideoSessionFakeBuilder {
        VideoSessionFakeBuilder::default()
    }

    /// Starts a fake with the default configuration.
    ///
    /// # Errors
    /// See [`VideoSessionFakeBuilder::start`].
    pub async fn start_default() -> Result<Self, FakeError> {
        Self::builder().start().await
    }

    /// The spec's `{baseUrl}`: `http://127.0.0.1:PORT` (paths start with `/api`).
    #[must_use]
    pub fn base_url(&self) -> &str {
        &self.base_url
    }

    /// The bound address.
    #[must_use]
    pub fn addr(&self) -> SocketAddr {
        self.server.addr()
    }

    /// The demo credentials: secret key, user, password, open session.
    #[must_use]
    pub fn demo(&self) -> &DemoCredentials {
        &self.demo
    }

    /// The configuration the fake runs with.
    #[must_use]
    pub fn config(&self) -> &VideoSessionConfig {
        &self.app.config
    }

    /// The clock of the lockout; [`FakeClock::advance`] it to pass a block.
    #[must_use]
    pub fn clock(&self) -> &FakeClock {
        &self.app.shared.clock
    }

    /// The ledger: per-account login statistics, counters, injected faults.
    #[must_use]
    pub fn ledger(&self) -> VideoLedger {
        VideoLedger {
            shared: self.app.shared.clone(),
        }
    }

    /// The invitations sent.
    #[must_use]
    pub fn outbox(&self) -> Outbox {
        Outbox {
            shared: self.app.shared.clone(),
        }
    }

    /// Opens another session that invitations may name.
    pub fn add_session(&self, session_id: impl Into<String>) {
        self.app.shared.state().sessions.insert(session_id.into());
    }

    /// Invalidates every `UserToken` issued so far (the next invitation gets 401 `Unauthorized`).
    pub fn revoke_user_tokens(&self) {
        self.app.shared.state().tokens.clear();
    }

    /// The current fault configuration.
    #[must_use]
    pub fn faults(&self) -> Faults {
        self.app.shared.faults.faults()
    }

    /// Replaces the fault configuration (and reseeds its generator) for the following requests.
    ///
    /// # Errors
    /// [`FakeError::Config`] when the probabilities are invalid; the old faults stay.
    pub fn set_faults(&self, faults: Faults) -> Result<(), FakeError> {
        faults.validate().map_err(FakeError::Config)?;
        self.app.shared.faults.set(faults);
        Ok(())
    }

    /// Turns all faults off.
    pub fn clear_faults(&self) {
        self.app.shared.faults.set(Faults::none());
    }

    /// Stops accepting, lets running requests finish (up to 2 s) and waits for the server to end.
    pub async fn shutdown(self) {
        self.server.shutdown().await;
    }
}

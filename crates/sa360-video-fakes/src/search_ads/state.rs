//! The search ads fake's shared state: [`AppState`], which every handler takes, and what it holds.
//!
//! This file imports no handler: the handlers import it, and the state of each area lives in a
//! file of its own that imports no handler either (`tokens.rs`, `oauth_state.rs`,
//! `reporting/state.rs`, `id_mapping/plan.rs`), so the module graph has no cycle
//! (`cargo xtask api --rule module-cycles`).

use std::collections::HashMap;
use std::ops::Deref;
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, SystemTime};

use super::config::{IdMappingSize, SearchAdsConfig};
use super::id_mapping::plan::IdMappingPlan;
use super::ledger::{Counters, Shared, Store};
use super::oauth_state::OAuthState;
use super::reporting::state::ReportingState;
use super::tokens::{Grant, IssuedToken};
use crate::clock::FakeClock;
use crate::faults::FaultInjector;
#[cfg(test)]
use crate::faults::Faults;
use crate::util::hex_token;

/// Requests to the federation endpoints (`federation.rs`), for tests.
#[derive(Default)]
pub(crate) struct FederationCounters {
    pub sts_requests: AtomicU64,
    pub generate_access_token_requests: AtomicU64,
}

/// Shared state of the handlers.
#[derive(Clone)]
pub(crate) struct AppState(Arc<AppInner>);

impl AppState {
    /// The handlers' state: an empty store, no tokens issued yet.
    pub(super) fn new(
        config: SearchAdsConfig,
        clock: FakeClock,
        token_url: String,
        injector: Arc<FaultInjector>,
    ) -> Self {
        let accounts = config.accounts.len();
        let shared = Arc::new(Shared {
            store: Mutex::new(Store {
                views: vec![Default::default(); accounts],
                seeded_overrides: vec![0; accounts],
                ..Store::default()
            }),
            counters: Counters::default(),
            faults: injector,
        });
        AppState(Arc::new(AppInner {
            token_rng: Mutex::new(fastrand::Rng::with_seed(config.seed ^ 0x70CE_0000)),
            token_lifetime: Mutex::new(config.token_lifetime),
            id_mapping_size: Mutex::new(config.id_mapping),
            tokens: Mutex::new(HashMap::new()),
            reporting: ReportingState::new(config.seed, config.reporting.faults.seed),
            oauth: OAuthState::new(config.seed),
            federation: FederationCounters::default(),
            clock,
            token_url,
            shared,
            config,
        }))
    }

    /// The state of a fake that serves nothing, for the handlers' unit tests (they call the
    /// handlers directly).
    #[cfg(test)]
    pub(crate) fn for_tests(config: SearchAdsConfig) -> Self {
        let injector = Arc::new(FaultInjector::new(Faults::none()));
        Self::new(
            config,
            FakeClock::default(),
            "http://127.0.0.1:9/token".to_owned(),
            injector,
        )
    }
}

impl Deref for AppState {
    type Target = AppInner;

    fn deref(&self) -> &AppInner {
        &self.0
    }
}

/// What the handlers share: the configuration, the store, the clock, issued tokens and the state
/// of each area (Reporting page tokens, OAuth books, federation counters).
pub(crate) struct AppInner {
    pub config: SearchAdsConfig,
    pub shared: Arc<Shared>,
    pub clock: FakeClock,
    pub token_url: String,
    tokens: Mutex<HashMap<String, IssuedToken>>,
    token_rng: Mutex<fastrand::Rng>,
    token_lifetime: Mutex<Duration>,
    id_mapping_size: Mutex<IdMappingSize>,
    pub(crate) reporting: ReportingState,
    pub(crate) oauth: OAuthState,
    pub(crate) federation: FederationCounters,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl AppInner {
    pub(crate) fn tokens(&self) -> MutexGuard<'_, HashMap<String, IssuedToken>> {
        lock(&self.tokens)
    }

    /// Issues a new access token; returns it with its lifetime.
    pub(crate) fn issue_token(&self, grant: Grant) -> (String, Duration) {
        let lifetime = *lock(&self.token_lifetime);
        let token = format!("ya29.fake-{}", hex_token(&mut lock(&self.token_rng), 24));
        self.tokens().insert(
            token.clone(),
            IssuedToken {
                expires_at: self.clock.now() + lifetime,
            },
        );
        Counters::bump(&self.shared.counters.tokens_issued);
        tracing::debug!(?grant, "access token issued");
        (token, lifetime)
    }

    /// The fake clock's wall time in epoch milliseconds.
    pub(crate) fn now_ms(&self) -> i64 {
        self.clock
            .system_now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
    }

    pub(crate) fn knows_advertiser(&self, agency: i64, advertiser: i64) -> bool {
        self.config
            .accounts
            .iter()
            .any(|a| a.agency_id == agency && a.advertiser_id == advertiser)
    }

    /// Changes the lifetime of tokens issued from now on.
    pub(crate) fn set_token_lifetime(&self, lifetime: Duration) {
        *lock(&self.token_lifetime) = lifetime;
    }

    /// Changes the size of ID-mapping files served from now on.
    pub(crate) fn set_id_mapping_size(&self, size: IdMappingSize) {
        *lock(&self.id_mapping_size) = size;
    }

    pub(crate) fn id_mapping_plan(&self, agency: i64, advertiser: i64) -> Option<IdMappingPlan> {
        let size = *lock(&self.id_mapping_size);
        IdMappingPlan::new(
            self.config.seed,
            &self.config.accounts,
            agency,
            advertiser,
            size,
        )
    }
}

impl std::fmt::Debug for AppState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AppState")
            .field("token_url", &self.token_url)
            .finish_non_exhaustive()
    }
}

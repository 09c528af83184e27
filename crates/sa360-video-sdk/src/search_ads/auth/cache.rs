//! The token cache every renewing source shares: reuse until shortly before
//! expiry, one refresh at a time for any number of concurrent callers, and
//! invalidation of exactly the token the API refused.

use std::future::Future;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use super::token::AccessToken;
use crate::search_ads::error::Error;

/// A cached token is renewed when less than this is left of its life.
pub(crate) const REFRESH_MARGIN: Duration = Duration::from_secs(30);

/// The cached token and the lock that makes concurrent callers share one
/// refresh.
#[derive(Default)]
pub(crate) struct TokenCache {
    /// One refresh at a time; the others wait for it and find its token.
    refresh: tokio::sync::Mutex<()>,
    cached: Mutex<Option<AccessToken>>,
    /// Successful fetches so far: a caller that waited for the lock takes a
    /// token fetched meanwhile while it has not expired, even inside the
    /// margin (a token endpoint that gives short-lived tokens still gets one
    /// request per wave of callers).
    fetches: AtomicU64,
}

impl TokenCache {
    fn fresh(&self, margin: Duration) -> Option<AccessToken> {
        self.cached
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .as_ref()
            .filter(|t| t.is_fresh(margin))
            .cloned()
    }

    /// The cached token while it is fresh, else the one `fetch` gets (which
    /// is then cached). Concurrent callers run one `fetch` between them; when
    /// it fails, each waiting caller tries its own (one at a time), so an
    /// error is never handed to a caller that did not see it happen.
    pub(crate) async fn get<F, Fut>(&self, fetch: F) -> Result<AccessToken, Error>
    where
        F: FnOnce() -> Fut,
        Fut: Future<Output = Result<AccessToken, Error>>,
    {
        if let Some(token) = self.fresh(REFRESH_MARGIN) {
            return Ok(token);
        }
        let seen = self.fetches.load(Ordering::SeqCst);
        let _refreshing = self.refresh.lock().await;
        let margin = if self.fetches.load(Ordering::SeqCst) == seen {
            REFRESH_MARGIN
        } else {
            Duration::ZERO
        };
        if let Some(token) = self.fresh(margin) {
            return Ok(token);
        }
        let token = fetch().await?;
        *self.cached.lock().unwrap_or_else(|p| p.into_inner()) = Some(token.clone());
        self.fetches.fetch_add(1, Ordering::SeqCst);
        Ok(token)
    }

    /// Drops the cached token if it is `rejected` (a caller may already have
    /// replaced it); true when it was dropped.
    pub(crate) fn invalidate(&self, rejected: &AccessToken) -> bool {
        let mut cached = self.cached.lock().unwrap_or_else(|p| p.into_inner());
        if cached.as_ref().is_some_and(|t| t.same_token(rejected)) {
            *cached = None;
            true
        } else {
            false
        }
    }
}

/// `impl TokenSource` for a renewing source of `kind`: its `token` is `self.fetch()` through
/// `self.cache`, a refused token is dropped from the cache and a fresh one may be asked for, the
/// quota project is `self.quota_project_id` (set by `with_quota_project_id`), and `allow_loopback`
/// opens the endpoints `|s|` names.
macro_rules! cached_source {
    ($source:ty, $kind:expr, |$s:ident| $open_loopback:expr) => {
        impl $source {
            /// The same credentials with another quota project (`None`: none), sent as
            /// `x-goog-user-project` on API calls, as `GOOGLE_CLOUD_QUOTA_PROJECT` overrides a
            /// file's `quota_project_id`. The id is checked like the file's (not empty, sendable
            /// as a header).
            pub fn with_quota_project_id(
                mut self,
                id: Option<&str>,
            ) -> Result<Self, crate::search_ads::error::Error> {
                self.quota_project_id = id
                    .map(|id| super::quota_project::checked("quota_project_id", id))
                    .transpose()?;
                Ok(self)
            }
        }

        impl crate::search_ads::auth::token::TokenSource for $source {
            fn token(
                &self,
            ) -> futures::future::BoxFuture<
                '_,
                Result<crate::search_ads::auth::token::AccessToken, crate::search_ads::error::Error>,
            > {
                Box::pin(self.cache.get(|| self.fetch()))
            }

            fn invalidate(&self, rejected: &crate::search_ads::auth::token::AccessToken) -> bool {
                if self.cache.invalidate(rejected) {
                    tracing::info!(credential = %$kind, "the API refused the cached access token (401): it is dropped");
                }
                true
            }

            fn kind(&self) -> crate::search_ads::auth::credential_kind::CredentialKind {
                $kind
            }

            fn allow_loopback(&self) {
                let $s = self;
                $open_loopback
            }

            fn quota_project_id(&self) -> Option<&str> {
                self.quota_project_id.as_deref()
            }
        }
    };
}
pub(crate) use cached_source;

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicU32, Ordering};
    use std::time::SystemTime;

    use super::*;

    #[tokio::test]
    async fn concurrent_callers_share_one_fetch_and_only_the_refused_token_is_dropped() {
        let cache = Arc::new(TokenCache::default());
        let fetches = Arc::new(AtomicU32::new(0));
        let calls = (0..50).map(|_| {
            let cache = cache.clone();
            let fetches = fetches.clone();
            tokio::spawn(async move {
                cache
                    .get(|| async {
                        let n = fetches.fetch_add(1, Ordering::SeqCst);
                        tokio::time::sleep(Duration::from_millis(20)).await;
                        Ok(AccessToken::with_expiry(
                            format!("t{n}"),
                            SystemTime::now() + Duration::from_secs(3600),
                        ))
                    })
                    .await
            })
        });
        for call in futures::future::join_all(calls).await {
            assert_eq!(call.unwrap().unwrap().expose_secret(), "t0");
        }
        assert_eq!(fetches.load(Ordering::SeqCst), 1);
        assert!(!cache.invalidate(&AccessToken::new("other")));
        assert!(cache.invalidate(&AccessToken::new("t0")));
        assert!(
            !cache.invalidate(&AccessToken::new("t0")),
            "already dropped"
        );
    }
}

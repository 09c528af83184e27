//! One API call from start to end: the overall deadline, the retries of
//! transient failures, and the one retry with a fresh token after a 401.
//!
//! Every call of the client except the batches of a write goes through
//! [`Calls::run`]:
//!
//! 1. the whole call (every attempt and every wait between two attempts) is
//!    bounded by [`HttpOptions::deadline`]; when it passes the call ends with
//!    [`Error::DeadlineExceeded`], which names the deadline;
//! 2. each attempt is retried under the [`RetryPolicy`] when it failed for a
//!    transient reason ([`Error::is_transient`]), which includes a token
//!    endpoint that is unreachable, slow or answered 408/429/5xx
//!    ([`Error::TokenUnavailable`]);
//! 3. inside one attempt, a 401 from the API makes the client tell its
//!    [`TokenSource`] which token was refused ([`TokenSource::invalidate`]);
//!    when the source can get a different one, the request is sent once more
//!    ([`fresh_token_on_401`]). A second 401 is the answer.
//!
//! The token an attempt used is recorded by the token hook in a task-local
//! [`AttemptScope`], so that concurrent calls never invalidate each other's
//! tokens by mistake, and the token itself never leaves the scope.
//!
//! [`HttpOptions::deadline`]: crate::http::HttpOptions::deadline

use std::future::Future;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::auth::{AccessToken, TokenSource};
use super::error::Error;
use super::retry::{RetryPolicy, traced_attempt};
use crate::http::HttpOptions;

/// What one request attempt learned about its authorization, and the
/// timeouts that apply to it (read by the error mapping).
#[derive(Debug, Default)]
pub(crate) struct AttemptScope {
    /// The token put on the request.
    token: Option<AccessToken>,
    /// The typed error of the token source, when it failed.
    token_error: Option<Error>,
    /// The connect timeout of the attempt.
    connect_timeout: Option<Duration>,
    /// The timeout of the attempt.
    attempt_timeout: Option<Duration>,
}

tokio::task_local! {
    static ATTEMPT: Arc<Mutex<AttemptScope>>;
}

fn with_scope<R>(f: impl FnOnce(&mut AttemptScope) -> R) -> Option<R> {
    ATTEMPT
        .try_with(|scope| {
            let mut scope = scope.lock().unwrap_or_else(|p| p.into_inner());
            f(&mut scope)
        })
        .ok()
}

/// Records the token the current attempt sends (called by the token hook).
pub(crate) fn record_token(token: &AccessToken) {
    with_scope(|s| s.token = Some(token.clone()));
}

/// Records the token source's typed error, so the error mapping can return
/// it instead of the generated client's text (called by the token hook).
pub(crate) fn record_token_error(error: &Error) {
    with_scope(|s| s.token_error = Some(error.clone()));
}

/// The token source's error recorded for the current attempt, if any.
pub(crate) fn take_token_error() -> Option<Error> {
    with_scope(|s| s.token_error.take()).flatten()
}

/// The timeout that ended the current attempt: the connect timeout when
/// `connect`, else the attempt's timeout. `None` outside an attempt scope.
pub(crate) fn timeout_of_attempt(connect: bool) -> Option<Duration> {
    with_scope(|s| {
        if connect {
            s.connect_timeout
        } else {
            s.attempt_timeout
        }
    })
    .flatten()
}

/// How the calls of one client are run: retries, token source, timeouts.
#[derive(Clone, Debug)]
pub(crate) struct Calls {
    /// Retries of transient failures.
    pub(crate) retry: RetryPolicy,
    /// The token source, told about refused tokens.
    pub(crate) tokens: Arc<dyn TokenSource>,
    /// The connect timeout (for error messages).
    pub(crate) connect_timeout: Duration,
    /// The timeout of one attempt (for error messages).
    pub(crate) attempt_timeout: Duration,
    /// The overall deadline of one call.
    pub(crate) deadline: Option<Duration>,
}

impl Calls {
    /// The calls of a client with `options`; `attempt_timeout` is the bound of
    /// one attempt (the total timeout, or the read timeout of a download).
    pub(crate) fn new(
        retry: RetryPolicy,
        tokens: Arc<dyn TokenSource>,
        options: &HttpOptions,
        attempt_timeout: Duration,
    ) -> Self {
        Self {
            retry,
            tokens,
            connect_timeout: options.connect_timeout,
            attempt_timeout,
            deadline: options.deadline,
        }
    }

    /// Runs one call: `attempt(n)` until it succeeds, fails for good, the
    /// policy is spent, or the deadline passes. Each attempt gets one more
    /// try with a fresh token after a 401 ([`fresh_token_on_401`]).
    pub(crate) async fn run<T, F, Fut>(
        &self,
        operation: &'static str,
        mut attempt: F,
    ) -> Result<T, Error>
    where
        F: FnMut(u32) -> Fut,
        Fut: Future<Output = Result<T, Error>>,
    {
        let started = AtomicU32::new(0);
        let in_flight = AtomicBool::new(false);
        let last: Mutex<Option<Error>> = Mutex::new(None);
        let work = async {
            let mut n = 1;
            loop {
                started.store(n, Ordering::SeqCst);
                in_flight.store(true, Ordering::SeqCst);
                let result = traced_attempt(
                    operation,
                    n,
                    fresh_token_on_401(self, operation, || attempt(n)),
                )
                .await;
                in_flight.store(false, Ordering::SeqCst);
                let error = match result {
                    Ok(v) => return Ok(v),
                    Err(e) => e,
                };
                match self.retry.next_delay(n, &error) {
                    Some(wait) => {
                        tracing::warn!(
                            operation,
                            attempt = n,
                            wait_ms = u64::try_from(wait.as_millis()).unwrap_or(u64::MAX),
                            error = %error,
                            "transient failure, retrying"
                        );
                        *last.lock().unwrap_or_else(|p| p.into_inner()) = Some(error);
                        tokio::time::sleep(wait).await;
                        n += 1;
                    }
                    None => return Err(error),
                }
            }
        };
        let Some(deadline) = self.deadline else {
            return work.await;
        };
        match tokio::time::timeout(deadline, work).await {
            Ok(result) => result,
            Err(_) => {
                let error = Error::DeadlineExceeded {
                    operation,
                    deadline,
                    attempts: started.load(Ordering::SeqCst),
                    in_flight: in_flight.load(Ordering::SeqCst),
                    last: last
                        .lock()
                        .unwrap_or_else(|p| p.into_inner())
                        .take()
                        .map(Box::new),
                };
                tracing::warn!(operation, error = %error, "deadline passed");
                Err(error)
            }
        }
    }

    /// A fresh attempt scope with this client's timeouts.
    fn scope(&self) -> Arc<Mutex<AttemptScope>> {
        Arc::new(Mutex::new(AttemptScope {
            connect_timeout: Some(self.connect_timeout),
            attempt_timeout: Some(self.attempt_timeout),
            ..AttemptScope::default()
        }))
    }
}

/// Runs `call` once in an attempt scope; when the API answers 401 and the
/// token source, told which token it refused, can get another one, runs
/// `call` once more. Used by [`Calls::run`] and by each batch of a write.
pub(crate) async fn fresh_token_on_401<T, F, Fut>(
    calls: &Calls,
    operation: &'static str,
    mut call: F,
) -> Result<T, Error>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, Error>>,
{
    let scope = calls.scope();
    let result = ATTEMPT.scope(scope.clone(), call()).await;
    let error = match result {
        Err(e) if e.status() == Some(401) => e,
        other => return other,
    };
    let used = scope.lock().unwrap_or_else(|p| p.into_inner()).token.take();
    let Some(used) = used else {
        return Err(error);
    };
    if !calls.tokens.invalidate(&used) {
        return Err(error);
    }
    tracing::info!(
        operation,
        "the API refused the access token (HTTP 401); sending once more with a fresh token"
    );
    ATTEMPT.scope(calls.scope(), call()).await
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::AtomicUsize;

    use futures::future::BoxFuture;

    use super::*;

    /// Hands out `tok-1`, `tok-2`, ...; a 401 on the current one moves on.
    #[derive(Debug, Default)]
    struct Counting {
        current: AtomicUsize,
        invalidated: Mutex<Vec<String>>,
        refreshable: bool,
    }

    impl TokenSource for Counting {
        fn token(&self) -> BoxFuture<'_, Result<AccessToken, Error>> {
            let n = self.current.load(Ordering::SeqCst);
            Box::pin(async move { Ok(AccessToken::new(format!("tok-{n}"))) })
        }

        fn invalidate(&self, rejected: &AccessToken) -> bool {
            self.invalidated
                .lock()
                .unwrap()
                .push(rejected.expose_secret().to_owned());
            self.current.fetch_add(1, Ordering::SeqCst);
            self.refreshable
        }
    }

    fn calls(tokens: Arc<Counting>, deadline: Option<Duration>) -> Calls {
        Calls {
            retry: RetryPolicy {
                base_delay: Duration::from_millis(1),
                max_delay: Duration::from_millis(2),
                ..RetryPolicy::default()
            },
            tokens,
            connect_timeout: Duration::from_secs(1),
            attempt_timeout: Duration::from_secs(2),
            deadline,
        }
    }

    fn unauthorized() -> Error {
        Error::Api {
            operation: "x",
            status: 401,
            reason: Some("authError".into()),
            message: "Invalid Credentials".into(),
            details: vec![],
            details_complete: true,
            retry_after: None,
        }
    }

    /// A call as the generated client makes it: the token hook records the
    /// token, then the API answers by token.
    async fn call_with(
        tokens: &Counting,
        refused: &[&str],
        sent: &Mutex<Vec<String>>,
    ) -> Result<(), Error> {
        let token = tokens.token().await?;
        record_token(&token);
        sent.lock().unwrap().push(token.expose_secret().to_owned());
        if refused.contains(&token.expose_secret()) {
            Err(unauthorized())
        } else {
            Ok(())
        }
    }

    #[tokio::test]
    async fn a_401_invalidates_the_token_used_and_retries_once() {
        let tokens = Arc::new(Counting {
            refreshable: true,
            ..Counting::default()
        });
        let calls = calls(tokens.clone(), None);
        let sent = Mutex::new(vec![]);
        calls
            .run("x", |_| call_with(&tokens, &["tok-0"], &sent))
            .await
            .expect("the second token works");
        assert_eq!(*sent.lock().unwrap(), ["tok-0", "tok-1"]);
        assert_eq!(*tokens.invalidated.lock().unwrap(), ["tok-0"]);
    }

    #[tokio::test]
    async fn a_second_401_is_the_answer() {
        let tokens = Arc::new(Counting {
            refreshable: true,
            ..Counting::default()
        });
        let calls = calls(tokens.clone(), None);
        let sent = Mutex::new(vec![]);
        let e = calls
            .run("x", |_| {
                call_with(&tokens, &["tok-0", "tok-1", "tok-2"], &sent)
            })
            .await
            .expect_err("refused twice");
        assert_eq!(e.status(), Some(401));
        assert_eq!(*sent.lock().unwrap(), ["tok-0", "tok-1"], "one retry only");
    }

    #[tokio::test]
    async fn a_source_that_cannot_refresh_gets_no_retry() {
        let tokens = Arc::new(Counting::default());
        let calls = calls(tokens.clone(), None);
        let sent = Mutex::new(vec![]);
        let e = calls
            .run("x", |_| call_with(&tokens, &["tok-0", "tok-1"], &sent))
            .await
            .expect_err("refused");
        assert_eq!(e.status(), Some(401));
        assert_eq!(sent.lock().unwrap().len(), 1);
    }

    #[tokio::test(start_paused = true)]
    async fn the_deadline_bounds_every_attempt_and_wait_and_is_named() {
        let tokens = Arc::new(Counting::default());
        let mut calls = calls(tokens, Some(Duration::from_secs(5)));
        calls.retry = RetryPolicy {
            max_attempts: 100,
            base_delay: Duration::from_secs(2),
            max_delay: Duration::from_secs(2),
            max_retry_after: Duration::from_secs(60),
        };
        let attempts = AtomicU32::new(0);
        let started = tokio::time::Instant::now();
        let e = calls
            .run("x.get", |_| {
                attempts.fetch_add(1, Ordering::SeqCst);
                async {
                    tokio::time::sleep(Duration::from_secs(1)).await;
                    Err::<(), _>(Error::Api {
                        operation: "x.get",
                        status: 503,
                        reason: None,
                        message: "backend error".into(),
                        details: vec![],
                        details_complete: true,
                        retry_after: None,
                    })
                }
            })
            .await
            .expect_err("never succeeds");
        assert_eq!(started.elapsed(), Duration::from_secs(5));
        let Error::DeadlineExceeded {
            deadline,
            attempts: started_attempts,
            last,
            ..
        } = &e
        else {
            panic!("{e:?}");
        };
        assert_eq!(*deadline, Duration::from_secs(5));
        assert_eq!(*started_attempts, attempts.load(Ordering::SeqCst));
        assert!(*started_attempts >= 2, "{started_attempts}");
        assert_eq!(last.as_ref().and_then(|l| l.status()), Some(503));
        let text = e.to_string();
        assert!(text.contains("deadline of 5 s"), "{text}");
        assert!(text.contains("HttpOptions::deadline"), "{text}");
        assert!(e.may_have_reached_server());
    }

    #[tokio::test]
    async fn token_endpoint_trouble_is_retried_and_bad_credentials_are_not() {
        let tokens = Arc::new(Counting::default());
        let calls = calls(tokens, None);
        let n = AtomicU32::new(0);
        let v = calls
            .run("x", |_| {
                let k = n.fetch_add(1, Ordering::SeqCst);
                async move {
                    if k < 2 {
                        Err(Error::TokenUnavailable {
                            credential:
                                crate::search_ads::auth::credential_kind::CredentialKind::AuthorizedUser,
                            status: Some(503),
                            message: "down".into(),
                            retry_after: None,
                        })
                    } else {
                        Ok(k)
                    }
                }
            })
            .await
            .expect("third attempt");
        assert_eq!(v, 2);
        let n = AtomicU32::new(0);
        let e = calls
            .run("x", |_| {
                n.fetch_add(1, Ordering::SeqCst);
                async {
                    Err::<(), _>(Error::auth(
                        crate::search_ads::auth::credential_kind::CredentialKind::AuthorizedUser,
                        "invalid_client",
                    ))
                }
            })
            .await
            .expect_err("permanent");
        assert!(matches!(e, Error::Auth { .. }));
        assert_eq!(n.load(Ordering::SeqCst), 1);
    }
}

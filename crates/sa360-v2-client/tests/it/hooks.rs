//! The hand-written hooks run for generated operations: authorization before
//! every request, a tracing span per request, and no secrets in the logs.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use sa360_v2_client::{
    AuthorizeError, AuthorizeErrorKind, AuthorizeFuture, AuthorizeRequest, Client, ClientContext,
    Error, http_client_builder, set_bearer_token,
};
use test_support::{TraceCapture, assert_request_logged};

/// Hands out `tok-secret-1`, `tok-secret-2`, ... (a "refreshing" token).
#[derive(Default)]
struct CountingAuthorizer {
    calls: AtomicUsize,
}

impl AuthorizeRequest for CountingAuthorizer {
    fn authorize<'a>(&'a self, request: &'a mut reqwest::Request) -> AuthorizeFuture<'a> {
        Box::pin(async move {
            let n = self.calls.fetch_add(1, Ordering::SeqCst) + 1;
            set_bearer_token(request, &format!("tok-secret-{n}"))
        })
    }
}

struct FailingAuthorizer;

impl AuthorizeRequest for FailingAuthorizer {
    fn authorize<'a>(&'a self, _request: &'a mut reqwest::Request) -> AuthorizeFuture<'a> {
        Box::pin(async {
            Err(AuthorizeError::new(
                AuthorizeErrorKind::Credentials,
                "invalid_grant",
            ))
        })
    }
}

const SAVED_COLUMNS: &str = r#"{"kind":"doubleclicksearch#savedColumnList","items":[]}"#;

fn client(addr: &str, authorizer: Arc<dyn AuthorizeRequest>) -> Client {
    Client::new_with_client(
        addr,
        http_client_builder().build().unwrap(),
        ClientContext::new().with_authorizer(authorizer),
    )
}

/// Any generated operation; the hooks are the same for all of them.
async fn call_operation(client: &Client) -> Result<(), Error<()>> {
    client
        .saved_columns_list()
        .agency_id(1)
        .advertiser_id(2)
        .send()
        .await
        .map(|_| ())
        .map_err(Error::into_untyped)
}

#[tokio::test]
async fn every_request_gets_a_fresh_bearer_token() {
    let authorizer = Arc::new(CountingAuthorizer::default());
    for expected in ["tok-secret-1", "tok-secret-2"] {
        let (addr, head) = test_support::one_shot_http(200, SAVED_COLUMNS)
            .await
            .unwrap();
        let client = client(&format!("http://{addr}"), authorizer.clone());
        call_operation(&client).await.unwrap();
        let head = head.await.unwrap().to_lowercase();
        assert!(
            head.contains(&format!("authorization: bearer {expected}\r\n")),
            "{head}"
        );
    }
}

#[tokio::test]
async fn authorize_failure_aborts_the_request_with_a_recognisable_error() {
    // Nothing listens on the port: had the request been sent, this would be
    // a connect error instead.
    let closed = test_support::ClosedPort::reserve().unwrap();
    let base = format!("http://127.0.0.1:{}", closed.port());
    let error = call_operation(&client(&base, Arc::new(FailingAuthorizer)))
        .await
        .unwrap_err();
    assert!(matches!(error, Error::Custom(_)), "{error}");
    let decoded = AuthorizeError::from_client_error(&error).expect("an authorize error");
    assert_eq!(decoded.kind(), AuthorizeErrorKind::Credentials);
    assert_eq!(decoded.message(), "invalid_grant");
    assert!(!decoded.is_retryable());
}

#[test]
fn operation_futures_are_send() {
    fn assert_send<T: Send>(_: &T) {}
    let client = Client::new("http://127.0.0.1:9", ClientContext::new());
    let future = call_operation(&client);
    assert_send(&future);
}

#[tokio::test]
async fn each_request_is_traced_without_headers() {
    let capture = TraceCapture::start();

    let (addr, _head) = test_support::one_shot_http(200, SAVED_COLUMNS)
        .await
        .unwrap();
    let client = client(
        &format!("http://{addr}"),
        Arc::new(CountingAuthorizer::default()),
    );
    call_operation(&client).await.unwrap();

    assert_request_logged(
        &capture.text(),
        "search_ads",
        "saved_columns_list",
        "GET",
        "tok-secret",
    );
}

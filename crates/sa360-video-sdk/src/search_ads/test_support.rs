//! Test support shared by the unit tests of the paths that make their requests and read their
//! answers themselves (the v2 read's `read/page/`, the Reporting page source's `reporting/source.rs`, the
//! writes' `write/send.rs`): property-test strategies for JSON pages (objects whose members may
//! be absent or unknown, values of any JSON type), a loopback server that gives every request one
//! raw answer, and a client that records the requests it would send.

use std::sync::{Arc, Mutex};

use proptest::prelude::*;
use sa360_v2_client::{AuthorizeError, AuthorizeErrorKind, AuthorizeFuture, AuthorizeRequest};
use serde_json::Value;

/// One member of a generated object; `None` when it is absent.
pub(crate) type Member = Option<(String, Value)>;

/// Members the spec does not have (ignored by both decoders), with any JSON value; the keys of
/// nested objects come from `key`.
pub(crate) fn unknown_members(key: BoxedStrategy<String>) -> BoxedStrategy<Vec<(String, Value)>> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<f64>().prop_map(Value::from),
        "[a-z\"\\\\é]{0,6}".prop_map(Value::from),
    ];
    let value = leaf.prop_recursive(2, 8, 3, move |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..3).prop_map(Value::from),
            prop::collection::vec((key.clone(), inner), 0..3)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    });
    prop::collection::vec(("unknown[A-Za-z]{0,5}", value), 0..2).boxed()
}

/// An object of the present `members`, followed by the `unknown` ones.
pub(crate) fn object(
    members: Vec<BoxedStrategy<Member>>,
    unknown: BoxedStrategy<Vec<(String, Value)>>,
) -> BoxedStrategy<Value> {
    (members, unknown)
        .prop_map(|(members, unknown)| {
            Value::Object(members.into_iter().flatten().chain(unknown).collect())
        })
        .boxed()
}

/// One of `values`, as JSON text.
pub(crate) fn one_of(values: &'static [&'static str]) -> BoxedStrategy<Value> {
    prop::sample::select(values).prop_map(Value::from).boxed()
}

/// Starts a loopback server that answers every request with `head` and `body` as they are (then
/// keeps the connection open for 30 s, so a short body stalls), and returns its base URL.
pub(crate) async fn serve_raw(head: String, body: Vec<u8>) -> String {
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            let (head, body) = (head.clone(), body.clone());
            tokio::spawn(async move {
                let mut buf = vec![0; 64 * 1024];
                let _ = socket.read(&mut buf).await;
                let _ = socket.write_all(head.as_bytes()).await;
                let _ = socket.write_all(&body).await;
                tokio::time::sleep(std::time::Duration::from_secs(30)).await;
            });
        }
    });
    url
}

/// A request as it would be sent: method, URL, headers in order, body.
pub(crate) type Recorded = (String, String, Vec<(String, String)>, Option<Vec<u8>>);

/// Records every request its client would send, and sends none (its authorization fails).
#[derive(Default)]
pub(crate) struct Recorder {
    requests: Mutex<Vec<Recorded>>,
}

impl Recorder {
    /// The requests recorded since the last call.
    pub(crate) fn take(&self) -> Vec<Recorded> {
        self.requests.lock().unwrap().split_off(0)
    }
}

impl AuthorizeRequest for Recorder {
    fn authorize<'a>(&'a self, request: &'a mut reqwest::Request) -> AuthorizeFuture<'a> {
        let headers = request
            .headers()
            .iter()
            .map(|(name, value)| (name.to_string(), value.to_str().unwrap().to_owned()))
            .collect();
        let body = request
            .body()
            .and_then(|b| b.as_bytes())
            .map(<[u8]>::to_vec);
        self.requests.lock().unwrap().push((
            request.method().to_string(),
            request.url().to_string(),
            headers,
            body,
        ));
        Box::pin(async {
            Err(AuthorizeError::new(
                AuthorizeErrorKind::Credentials,
                "recorded",
            ))
        })
    }
}

/// A [`Recorder`] and a client context that authorizes through it (for either generated client).
pub(crate) fn recorder() -> (Arc<Recorder>, sa360_v2_client::ClientContext) {
    let recorder = Arc::new(Recorder::default());
    let context = sa360_v2_client::ClientContext::new().with_authorizer(recorder.clone());
    (recorder, context)
}

/// A v2 client whose requests are recorded by the returned [`Recorder`], never sent.
pub(crate) fn recording_client() -> (sa360_v2_client::Client, Arc<Recorder>) {
    let (recorder, context) = recorder();
    let client = sa360_v2_client::Client::new_with_client(
        "http://127.0.0.1:9/doubleclicksearch/v2",
        reqwest::Client::new(),
        context,
    );
    (client, recorder)
}

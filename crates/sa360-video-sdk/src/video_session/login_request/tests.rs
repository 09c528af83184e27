use std::sync::{Arc, Mutex};

use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

use super::*;

/// Requests as they arrived, raw (head and body).
type Captured = Arc<Mutex<Vec<Vec<u8>>>>;

/// A loopback server that answers every request with `answer` (raw HTTP, one answer per
/// connection) and records each request's bytes; returns its base URL.
async fn capture(answer: Vec<u8>) -> (String, Captured) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let captured = Captured::default();
    let record = Arc::clone(&captured);
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            let (answer, record) = (answer.clone(), Arc::clone(&record));
            tokio::spawn(async move {
                let mut request = Vec::new();
                let mut buf = [0u8; 4096];
                // The head, then as many body bytes as its Content-Length says.
                let complete = |r: &[u8]| {
                    let text = String::from_utf8_lossy(r);
                    let Some(end) = text.find("\r\n\r\n") else {
                        return false;
                    };
                    let length = text[..end]
                        .lines()
                        .find_map(|l| {
                            let (name, value) = l.split_once(':')?;
                            name.eq_ignore_ascii_case("content-length")
                                .then(|| value.trim().parse::<usize>().ok())?
                        })
                        .unwrap_or(0);
                    r.len() >= end + 4 + length
                };
                while !complete(&request) {
                    match socket.read(&mut buf).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => request.extend_from_slice(&buf[..n]),
                    }
                }
                record.lock().unwrap().push(request);
                let _ = socket.write_all(&answer).await;
                let _ = socket.shutdown().await;
            });
        }
    });
    (url, captured)
}

fn http(status: &str, headers: &[&str], body: &str) -> Vec<u8> {
    let mut head = format!(
        "HTTP/1.1 {status}\r\nconnection: close\r\ncontent-length: {}\r\n",
        body.len()
    );
    for h in headers {
        head.push_str(h);
        head.push_str("\r\n");
    }
    format!("{head}\r\n{body}").into_bytes()
}

fn api(base: &str) -> Client {
    let http = video_session_client::http_client_builder()
        .user_agent("login-request-test")
        .build()
        .unwrap();
    Client::new_with_client(base, http, video_session_client::ClientContext::new())
}

const PASSWORD: &str = "pä\"ss\\word\u{1}";
const SECRET_KEY: &str = "sk-1234";
const USER_NAME: &str = "Ünïcode User";

/// The spec's body, for the generated builder.
fn body() -> types::LoginRequest {
    types::LoginRequest {
        password: PASSWORD.to_owned(),
        secret_key: SECRET_KEY.to_owned(),
        user_name: USER_NAME.to_owned(),
    }
}

/// The same, borrowed.
fn borrowed() -> LoginBody<'static> {
    LoginBody {
        password: PASSWORD,
        secret_key: SECRET_KEY,
        user_name: USER_NAME,
    }
}

/// What a result says, for comparing two results.
fn outcome(result: Result<ResponseValue<types::LoginResponse>, Error<types::ApiError>>) -> String {
    match result {
        Ok(value) => format!(
            "ok {} {}",
            value.status(),
            serde_json::to_string(&value.into_inner()).unwrap()
        ),
        Err(Error::ErrorResponse(value)) => format!(
            "error response {} {}",
            value.status(),
            serde_json::to_string(&value.into_inner()).unwrap()
        ),
        Err(Error::UnexpectedResponse(response)) => {
            format!("unexpected response {}", response.status())
        }
        Err(Error::InvalidResponsePayload(bytes, e)) => {
            format!("invalid payload {bytes:?}: {e}")
        }
        Err(other) => {
            // With the causes: a body limit shows only there.
            let mut text = format!("other: {other}");
            let mut source = std::error::Error::source(&other);
            while let Some(cause) = source {
                text.push_str(&format!(": {cause}"));
                source = cause.source();
            }
            text
        }
    }
}

/// The request is the one the generated builder makes, byte for byte: request line, headers
/// in order, body; under a base URL with and without a path.
#[tokio::test]
async fn the_request_is_the_generated_builders() {
    for path in ["", "/prefix/v1"] {
        let (url, captured) = capture(http("401 Unauthorized", &[], "")).await;
        let api = api(&format!("{url}{path}"));
        let generated = api.login().body(body()).send().await;
        let by_hand = send(&api, &login_url(&api).unwrap(), &borrowed()).await;
        assert_eq!(outcome(by_hand), outcome(generated));
        let requests = captured.lock().unwrap().split_off(0);
        assert_eq!(requests.len(), 2, "{path:?}");
        let text = String::from_utf8_lossy(&requests[0]);
        assert!(
            text.starts_with(&format!("POST {path}/api/login HTTP/1.1\r\n")),
            "{text}"
        );
        assert!(
            text.contains("\"Password\":\"pä\\\"ss\\\\word\\u0001\""),
            "{text}"
        );
        assert_eq!(
            String::from_utf8_lossy(&requests[1]),
            text,
            "base path {path:?}"
        );
    }
}

/// Sends one login each way to a server that answers `answer`, and compares the results.
async fn assert_mapped_alike(answer: Vec<u8>) {
    let (url, _captured) = capture(answer.clone()).await;
    let api = api(&url);
    let generated = outcome(api.login().body(body()).send().await);
    let by_hand = outcome(send(&api, &login_url(&api).unwrap(), &borrowed()).await);
    assert_eq!(by_hand, generated, "{}", String::from_utf8_lossy(&answer));
}

/// Every kind of answer becomes the result the generated builder makes of it.
#[tokio::test]
async fn every_answer_maps_as_the_generated_builder_maps_it() {
    let json = ["content-type: application/json"];
    let session = r#"{"UserId":7,"DomainId":3,"LoginId":9,"UserToken":"ut_1","RefreshToken":"rt_1","FirstName":"A","UnknownMember":[1]}"#;
    let api_error =
        r#"{"Code":"InvalidCredentials","Message":"The user name or password is wrong."}"#;
    let answers = [
        http("200 OK", &json, session),
        http("200 OK", &json, r#"{"UserId":"not a number"}"#),
        http(
            "200 OK",
            &["content-type: text/html"],
            "<html>maintenance</html>",
        ),
        http("201 Created", &json, session),
        http("204 No Content", &[], ""),
        http("401 Unauthorized", &json, api_error),
        http(
            "423 Locked",
            &["content-type: application/json", "retry-after: 600"],
            r#"{"Code":"AccountBlocked","Message":"blocked","RetryAfterSeconds":600}"#,
        ),
        http(
            "429 Too Many Requests",
            &json,
            r#"{"Code":"TooManyRequests","Message":"slow down"}"#,
        ),
        http("400 Bad Request", &json, "not json"),
        http(
            "500 Internal Server Error",
            &["content-type: text/plain"],
            "oops",
        ),
        http("503 Service Unavailable", &json, api_error),
        http(
            "301 Moved Permanently",
            &["location: http://elsewhere.invalid/api/login"],
            "",
        ),
    ];
    for answer in answers {
        assert_mapped_alike(answer).await;
    }
}

/// An answer cut short, or no answer at all, fails the same way both ways.
#[tokio::test]
async fn a_broken_answer_fails_as_the_generated_builders_does() {
    let cut = b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 500\r\n\r\n{\"UserId\":".to_vec();
    for answer in [cut, Vec::new(), b"garbage\r\n\r\n".to_vec()] {
        assert_mapped_alike(answer).await;
    }
}

/// The answer goes through the client's `exec` hook, as the generated builder's does: its body
/// is bounded by the context's limits, and its status is recorded for the enclosing
/// `last_answer` scope.
#[tokio::test]
async fn the_answer_goes_through_the_exec_hook() {
    let big = format!(
        r#"{{"UserId":1,"DomainId":2,"LoginId":3,"FirstName":"{}"}}"#,
        "x".repeat(4096)
    );
    let (url, _captured) = capture(http("200 OK", &["content-type: application/json"], &big)).await;
    let http = video_session_client::http_client_builder().build().unwrap();
    let limits = sa360_video_client_support::BodyLimits::default().with_max_bytes(1024);
    let api = Client::new_with_client(
        &url,
        http,
        video_session_client::ClientContext::new().with_body_limits(limits),
    );
    let generated = outcome(api.login().body(body()).send().await);
    let url = login_url(&api).unwrap();
    let (by_hand, answer) =
        sa360_video_client_support::last_answer::scope(send(&api, &url, &borrowed())).await;
    assert!(
        generated.contains("more than the limit of 1024 bytes"),
        "{generated}"
    );
    assert_eq!(outcome(by_hand), generated);
    assert_eq!(answer.map(|a| (a.status, a.json)), Some((200, true)));
}

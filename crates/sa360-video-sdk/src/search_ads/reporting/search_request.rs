//! One `searchAds360:search` request, made as the generated client makes it: the spec's
//! `SearchSearchAds360Request` body, its headers, its `pre` (authorization) and `exec` (tracing
//! span, body size and stall limits of [`HttpOptions`](crate::http::HttpOptions)) hooks; only the
//! 200 answer's body is taken as bytes ([`SearchPage`]) instead of through the generated decoder.
//! Error answers go through the generated `ErrorResponse` as before. A test holds the request
//! equal to the generated builder's.

use sa360_reporting_client::{ClientInfo, ResponseValue, types};
use sa360_v2_client::__glue::{ClientHooks, OperationInfo};

use super::decode::SearchPage;

/// The generated client's error type for the search call.
pub(crate) type SearchError = sa360_reporting_client::Error<types::ErrorResponse>;

/// One `searchAds360:search` call with the generated client's request, hooks and limits; the
/// 200 answer's body comes back as a [`SearchPage`] (bytes, not yet read).
pub(crate) async fn search(
    client: &sa360_reporting_client::Client,
    customer: &str,
    login_customer_id: Option<&str>,
    body: &types::SearchSearchAds360Request,
) -> Result<SearchPage, SearchError> {
    // The customer id is digits only (checked before the report starts), so it needs no
    // percent-encoding in the path.
    let url = format!(
        "{}/v0/customers/{customer}/searchAds360:search",
        client.baseurl()
    );
    // In the generated builder's order: accept, the JSON body, then the spec's headers.
    let mut request = client
        .client()
        .post(url)
        .header(reqwest::header::ACCEPT, "application/json")
        .json(body)
        .header("api-version", sa360_reporting_client::Client::api_version());
    if let Some(login) = login_customer_id {
        request = request.header("login-customer-id", login);
    }
    let mut request = request.build()?;
    let info = OperationInfo {
        operation_id: "customers_search_ads360_search",
    };
    client
        .pre::<types::ErrorResponse>(&mut request, &info)
        .await?;
    let result = client.exec(request, &info).await;
    client.post::<types::ErrorResponse>(&result, &info).await?;
    let response = result?;
    tracing::Span::current().record("status", response.status().as_u16());
    match response.status().as_u16() {
        200 => {
            let body = response
                .bytes()
                .await
                .map_err(SearchError::ResponseBodyError)?;
            Ok(SearchPage::from_bytes(body))
        }
        400..=599 => Err(SearchError::ErrorResponse(
            ResponseValue::from_response(response).await?,
        )),
        _ => Err(SearchError::UnexpectedResponse(response)),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::search_ads::test_support;

    /// A loopback server answering every request with `head` and `body` (then waiting), and a
    /// client with `limits` on it.
    async fn serve(
        head: String,
        body: Vec<u8>,
        limits: sa360_video_client_support::BodyLimits,
    ) -> sa360_reporting_client::Client {
        let url = test_support::serve_raw(head, body).await;
        let context = sa360_v2_client::ClientContext::new().with_body_limits(limits);
        sa360_reporting_client::Client::new_with_client(&url, reqwest::Client::new(), context)
    }

    fn request() -> types::SearchSearchAds360Request {
        types::SearchSearchAds360Request {
            page_size: None,
            page_token: None,
            query: "SELECT conversion.id FROM conversion".to_owned(),
            return_total_results_count: None,
            summary_row_setting: None,
            validate_only: None,
        }
    }

    /// The page is read through the generated client's `exec` hook, so `max_body_bytes` holds
    /// for the bytes this decoder reads, counted while they arrive.
    #[tokio::test]
    async fn a_page_larger_than_max_body_bytes_is_refused() {
        let body = format!(r#"{{"results": [], "fieldMask": "{}"}}"#, "x".repeat(8192));
        // No Content-Length: the limit counts the bytes as they come.
        let head = "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\nconnection: close\r\n\r\n";
        let limits = sa360_video_client_support::BodyLimits::default().with_max_bytes(4096);
        let client = serve(head.to_owned(), body.into_bytes(), limits).await;
        let error = search(&client, "1234567890", None, &request())
            .await
            .unwrap_err();
        let error = crate::search_ads::reporting::rpc::map_error(
            crate::search_ads::reporting::rpc::OP_SEARCH,
            error,
        );
        assert!(
            matches!(
                &error,
                crate::search_ads::error::Error::Transport(t)
                    if matches!(t.kind, crate::http::TransportErrorKind::TooLarge { limit: 4096, .. })
            ),
            "{error:?}"
        );
    }

    /// ... and so does the stall timeout: a page that stops arriving fails instead of hanging.
    #[tokio::test]
    async fn a_page_that_stalls_fails() {
        let head =
            "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 100000\r\n\r\n";
        let limits = sa360_video_client_support::BodyLimits::default()
            .with_stall_timeout(std::time::Duration::from_millis(300));
        let client = serve(head.to_owned(), br#"{"results": ["#.to_vec(), limits).await;
        let started = std::time::Instant::now();
        let error = search(&client, "1234567890", None, &request())
            .await
            .unwrap_err();
        let error = crate::search_ads::reporting::rpc::map_error(
            crate::search_ads::reporting::rpc::OP_SEARCH,
            error,
        );
        assert!(
            matches!(
                &error,
                crate::search_ads::error::Error::Transport(t)
                    if matches!(t.kind, crate::http::TransportErrorKind::Stalled { .. })
            ),
            "{error:?}"
        );
        assert!(started.elapsed() < std::time::Duration::from_secs(10));
    }

    /// The request of a page is the one the generated builder makes: method, URL, headers
    /// (with and without `login-customer-id`) and body.
    #[tokio::test]
    async fn the_request_is_the_generated_builders() {
        let (recorder, context) = test_support::recorder();
        let client = sa360_reporting_client::Client::new_with_client(
            "http://127.0.0.1:9",
            reqwest::Client::new(),
            context,
        );
        let body: types::SearchSearchAds360Request = serde_json::from_value(json!({
            "query": "SELECT conversion.id FROM conversion WHERE segments.date = '2026-11-01'",
            "pageSize": 10000,
            "pageToken": "t\"é"
        }))
        .unwrap();
        for login in [None, Some("1234567890")] {
            let mut call = client
                .customers_search_ads360_search()
                .customer_id("2000012350")
                .body(body.clone());
            if let Some(login) = login {
                call = call.login_customer_id(login);
            }
            assert!(call.send().await.is_err(), "nothing is sent");
            assert!(search(&client, "2000012350", login, &body).await.is_err());
            let requests = recorder.take();
            assert_eq!(requests.len(), 2, "{requests:?}");
            assert_eq!(requests[1], requests[0], "{login:?}");
        }
    }
}

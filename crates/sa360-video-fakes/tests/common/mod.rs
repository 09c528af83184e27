//! Helpers shared by the integration tests.
#![allow(dead_code)]

use serde_json::Value;

/// A plain HTTP client (no redirects, no pooling surprises between faulted requests).
pub fn client() -> reqwest::Client {
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .pool_max_idle_per_host(0)
        .build()
        .expect("client")
}

/// Sends `request` and returns (status, JSON body).
pub async fn json(request: reqwest::RequestBuilder) -> (u16, Value) {
    let response = request.send().await.expect("response");
    let status = response.status().as_u16();
    let text = response.text().await.expect("body");
    let value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("not JSON ({e}): {text}"));
    (status, value)
}

/// The Google error message of an envelope.
pub fn google_message(body: &Value) -> &str {
    body["error"]["message"].as_str().unwrap_or("")
}

/// Percent-encodes `pairs` as an `application/x-www-form-urlencoded` body.
pub fn form(request: reqwest::RequestBuilder, pairs: &[(&str, &str)]) -> reqwest::RequestBuilder {
    fn encode(s: &str) -> String {
        s.bytes()
            .map(|b| match b {
                b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'*' => {
                    char::from(b).to_string()
                }
                b' ' => "+".to_owned(),
                _ => format!("%{b:02X}"),
            })
            .collect()
    }
    let body: Vec<String> = pairs
        .iter()
        .map(|(k, v)| format!("{}={}", encode(k), encode(v)))
        .collect();
    request
        .header("content-type", "application/x-www-form-urlencoded")
        .body(body.join("&"))
}

/// The `savedColumns.list` URL of the first advertiser of `fake`.
pub fn saved_columns_url(fake: &sa360_video_fakes::SearchAdsFake) -> String {
    let a = &fake.accounts()[0];
    format!(
        "{}/agency/{}/advertiser/{}/savedcolumns",
        fake.base_url(),
        a.agency_id,
        a.advertiser_id
    )
}

/// A `POST /api/session/{session}/invitation` of `body` to `fake`, with the `UserToken` header
/// when `token` is given (not sent yet).
pub fn invitation_request(
    fake: &sa360_video_fakes::VideoSessionFake,
    session: &str,
    token: Option<&str>,
    body: &Value,
) -> reqwest::RequestBuilder {
    let request = client()
        .post(format!(
            "{}/api/session/{session}/invitation",
            fake.base_url()
        ))
        .json(body);
    match token {
        Some(token) => request.header("UserToken", token),
        None => request,
    }
}

/// Every row of a Reporting API `query` for the fake's first account, read page after page in
/// pages of `size` over HTTP, and the number of pages; panics on an answer other than 200.
pub async fn search_pages(
    fake: &sa360_video_fakes::SearchAdsFake,
    query: &str,
    size: u32,
) -> (Vec<Value>, usize) {
    let customer = fake.accounts()[0].customer_id.clone();
    let mut out = Vec::new();
    let mut token: Option<String> = None;
    for pages in 1..=10_000 {
        let mut body = serde_json::json!({"query": query, "pageSize": size});
        if let Some(t) = &token {
            body["pageToken"] = serde_json::json!(t);
        }
        let (status, p) = search_page(fake, &customer, None, body).await;
        assert_eq!(status, 200, "{query}: {p}");
        out.extend(p["results"].as_array().cloned().unwrap_or_default());
        match p["nextPageToken"].as_str() {
            Some(t) => token = Some(t.to_owned()),
            None => return (out, pages),
        }
    }
    panic!("{query}: no last page");
}

/// One Reporting API `searchAds360:search` request of `body` for `customer` (with the
/// `login-customer-id` header when `login` is set): the status and the JSON answer.
pub async fn search_page(
    fake: &sa360_video_fakes::SearchAdsFake,
    customer: &str,
    login: Option<&str>,
    body: Value,
) -> (u16, Value) {
    let mut request = client()
        .post(format!(
            "{}/v0/customers/{customer}/searchAds360:search",
            fake.reporting_url()
        ))
        .bearer_auth(fake.dev_token())
        .json(&body);
    if let Some(login) = login {
        request = request.header("login-customer-id", login);
    }
    json(request).await
}

/// A field's path as the answer's JSON names it: `campaign.bidding_strategy` →
/// `campaign.biddingStrategy`, `ad_group_ad.ad.id` → `adGroupAd.ad.id`.
fn camel(field: &str) -> String {
    let mut out = String::new();
    let mut up = false;
    for c in field.chars() {
        if c == '_' {
            up = true;
        } else {
            out.push(if up { c.to_ascii_uppercase() } else { c });
            up = false;
        }
    }
    out
}

/// Checks each field `query` selects, in each of `rows`, against the fake's own catalogue
/// (`searchAds360Fields.get`): the value is filled and of the field's data type (an ENUM value
/// is one the catalogue lists, an INT64 a string of digits, a BOOLEAN a boolean, anything else
/// a string). The number of ENUM values checked.
pub async fn assert_rows_fit_the_catalogue(
    fake: &sa360_video_fakes::SearchAdsFake,
    query: &str,
    rows: &[Value],
) -> usize {
    assert!(!rows.is_empty(), "{query}");
    let select = &query["SELECT ".len()..query.find(" FROM").expect("a FROM clause")];
    let mut enums = 0;
    for field in select.split(',').map(str::trim) {
        let (status, meta) = json(
            client()
                .get(format!(
                    "{}/v0/searchAds360Fields/{field}",
                    fake.reporting_url()
                ))
                .bearer_auth(fake.dev_token()),
        )
        .await;
        assert_eq!(status, 200, "{field}: {meta}");
        let path = camel(field);
        for row in rows {
            let value = path.split('.').fold(row, |v, k| &v[k]);
            let ok = match meta["dataType"].as_str().expect("a data type") {
                "ENUM" => {
                    enums += 1;
                    meta["enumValues"]
                        .as_array()
                        .expect("enum values")
                        .contains(value)
                }
                "INT64" => value.as_str().is_some_and(|s| s.parse::<i64>().is_ok()),
                "BOOLEAN" => value.is_boolean(),
                _ => value.is_string(),
            };
            assert!(ok, "{field} = {value} ({}): {row}", meta["dataType"]);
        }
    }
    enums
}

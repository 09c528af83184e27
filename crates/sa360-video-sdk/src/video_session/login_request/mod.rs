//! One login request, made as the generated `login` builder makes it: the spec's body, its
//! headers in the builder's order, the `pre` hook (secrets marked sensitive), the `exec` hook
//! (traced, the answer's body bounded) and the spec's mapping of statuses to results. Two things
//! differ, neither on the wire:
//! - the URL is parsed once per client: the builder formats it into a `String` that reqwest
//!   parses again at every login, about 6 000 instructions, more than the lockout guard's own
//!   work per login (issue 28);
//! - the body borrows the credentials ([`LoginBody`]): the spec's `LoginRequest` owns its
//!   strings, so building it copied the password and the secret key into memory that is never
//!   wiped.
//!
//! The tests below send both ways and compare the requests byte for byte and the results answer
//! by answer.

use reqwest::header::{ACCEPT, HeaderName, HeaderValue};
use serde::Serialize;
use video_session_client::__glue::{ClientHooks, ClientInfo, OperationInfo};
use video_session_client::{Client, Error, ResponseValue, types};

/// The operation's id, as the spec names it (and the generated builder passes to its hooks).
const OPERATION_ID: &str = "login";

/// The body of a login: the spec's `LoginRequest` (the same members, in the same order, so the
/// same bytes), borrowing the credentials instead of copying them.
#[derive(Serialize)]
pub(super) struct LoginBody<'a> {
    #[serde(rename = "Password")]
    pub(super) password: &'a str,
    #[serde(rename = "SecretKey")]
    pub(super) secret_key: &'a str,
    #[serde(rename = "UserName")]
    pub(super) user_name: &'a str,
}

/// The login endpoint of `api`: the URL its generated builder formats, parsed once.
pub(super) fn login_url(api: &Client) -> Result<reqwest::Url, url::ParseError> {
    reqwest::Url::parse(&format!("{}/api/login", api.baseurl()))
}

/// Sends `body` to `url` (from [`login_url`] for this `api`) once, and maps the answer as the
/// generated `login().send()` does.
pub(super) async fn send(
    api: &Client,
    url: &reqwest::Url,
    body: &LoginBody<'_>,
) -> Result<ResponseValue<types::LoginResponse>, Error<types::ApiError>> {
    // In the generated builder's order: accept, the JSON body, then the spec's headers.
    let mut request = api
        .client()
        .post(url.clone())
        .header(ACCEPT, HeaderValue::from_static("application/json"))
        .json(body)
        .header(
            HeaderName::from_static("api-version"),
            HeaderValue::from_static(Client::api_version()),
        )
        .build()?;
    let info = OperationInfo {
        operation_id: OPERATION_ID,
    };
    api.pre(&mut request, &info).await?;
    let result = api.exec(request, &info).await;
    api.post(&result, &info).await?;
    let response = result?;
    match response.status().as_u16() {
        200 => ResponseValue::from_response(response).await,
        400..=599 => Err(Error::ErrorResponse(
            ResponseValue::from_response(response).await?,
        )),
        _ => Err(Error::UnexpectedResponse(response)),
    }
}

#[cfg(test)]
mod tests;

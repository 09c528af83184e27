//! The fake's Google sign-in: the authorization endpoint of the installed-app flow, the
//! `authorization_code` and `refresh_token` grants of the token endpoint (`auth.rs` routes them
//! here), the revoke endpoint and the metadata server's token endpoint.
//!
//! Each rule follows a Google page (restated in `specs/SOURCES.md`):
//!
//! - [native-app]: "OAuth 2.0 for Mobile & Desktop Apps",
//!   <https://developers.google.com/identity/protocols/oauth2/native-app>;
//! - [web-server]: "Using OAuth 2.0 for Web Server Applications",
//!   <https://developers.google.com/identity/protocols/oauth2/web-server> (the error bodies);
//! - [adc]: "How Application Default Credentials works",
//!   <https://cloud.google.com/docs/authentication/application-default-credentials>, and the
//!   metadata server's page <https://cloud.google.com/compute/docs/metadata/overview>;
//! - RFC 6749 (OAuth 2.0) and RFC 7636 (PKCE) where Google's pages defer to them; SA-25 where they
//!   are silent.
//!
//! Routes (on the fake's origin): `GET /o/oauth2/v2/auth`, `POST /revoke`,
//! `GET /computeMetadata/v1/instance/service-accounts/default/token`.

use std::collections::HashMap;
use std::sync::atomic::Ordering;
use std::time::Duration;

use axum::Form;
use axum::extract::rejection::FormRejection;
use axum::extract::{Query, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde::Serialize;

use super::oauth_state::PendingCode;
use super::state::AppState;
use super::tokens::{Grant, SCOPE};
use crate::errors::json_response;

/// Path of the authorization endpoint (Google's is `https://accounts.google.com/o/oauth2/v2/auth`).
pub const AUTHORIZE_PATH: &str = "/o/oauth2/v2/auth";
/// Path of the revoke endpoint (Google's is `https://oauth2.googleapis.com/revoke`).
pub const REVOKE_PATH: &str = "/revoke";
/// Path of the metadata server's token endpoint (\[adc\]); the fake serves it on its own origin,
/// so `GCE_METADATA_HOST=127.0.0.1:PORT` points Google's libraries (and the SDK) at it.
pub const METADATA_TOKEN_PATH: &str = "/computeMetadata/v1/instance/service-accounts/default/token";

/// An authorization code lives this long (RFC 6749 §4.1.2: "a maximum authorization code lifetime
/// of 10 minutes is RECOMMENDED"; Google does not publish its own).
const CODE_LIFETIME: Duration = Duration::from_secs(600);

#[derive(Serialize)]
struct OAuthErrorBody<'a> {
    error: &'a str,
    error_description: &'a str,
}

/// Google's token-endpoint error body (\[web-server\], "Error responses"): `{"error",
/// "error_description"}` with HTTP 400, or 401 for `invalid_client`.
pub(crate) fn oauth_error(status: StatusCode, error: &str, description: &str) -> Response {
    tracing::debug!(error, description, "OAuth request refused");
    json_response(
        status,
        &OAuthErrorBody {
            error,
            error_description: description,
        },
    )
}

fn bad_request(error: &str, description: &str) -> Response {
    oauth_error(StatusCode::BAD_REQUEST, error, description)
}

/// `invalid_client` (\[web-server\]: 401 when the client id is unknown or the secret is wrong).
pub(crate) fn invalid_client() -> Response {
    oauth_error(
        StatusCode::UNAUTHORIZED,
        "invalid_client",
        "The OAuth client was not found.",
    )
}

/// True for a loopback redirect URI of the installed-app flow (\[native-app\], "Loopback IP
/// address"): `http://127.0.0.1:PORT/…`, `http://[::1]:PORT/…` or `http://localhost:PORT/…`.
fn is_loopback_redirect(uri: &str) -> bool {
    let Ok(url) = url::Url::parse(uri) else {
        return false;
    };
    url.scheme() == "http"
        && url.username().is_empty()
        && url.password().is_none()
        && match url.host() {
            Some(url::Host::Domain(host)) => host.eq_ignore_ascii_case("localhost"),
            Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
            Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
            None => false,
        }
}

fn page(status: StatusCode, title: &str, text: &str) -> Response {
    let body = format!(
        "<!doctype html><html><head><title>{title}</title></head><body><h1>{title}</h1><p>{text}</p></body></html>"
    );
    (
        status,
        [(header::CONTENT_TYPE, "text/html; charset=utf-8")],
        body,
    )
        .into_response()
}

fn html_escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// What a query value keeps unencoded: RFC 3986's unreserved characters.
const UNRESERVED: &percent_encoding::AsciiSet = &percent_encoding::NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~');

/// `redirect_uri` with `params` added to its query.
fn with_query(redirect_uri: &str, params: &[(&str, &str)]) -> String {
    let mut out = redirect_uri.split('#').next().unwrap_or("").to_owned();
    let mut sep = if out.contains('?') { '&' } else { '?' };
    for (name, value) in params {
        out.push(sep);
        out.push_str(name);
        out.push('=');
        out.extend(percent_encoding::utf8_percent_encode(value, UNRESERVED));
        sep = '&';
    }
    out
}

/// A 302 to `location`, with a small page for clients that show it.
fn redirect(location: &str) -> Response {
    let mut response = page(
        StatusCode::FOUND,
        "Signed in",
        &format!(
            "The fake signed you in. Continue to <a href=\"{0}\">{0}</a>.",
            html_escape(location)
        ),
    );
    if let Ok(value) = HeaderValue::from_str(location) {
        response.headers_mut().insert(header::LOCATION, value);
    }
    response
}

/// `GET /o/oauth2/v2/auth`: the consent screen, auto-approved (\[native-app\], step 2).
///
/// - an unknown `client_id` is an error page (401 `invalid_client`), not a redirect: Google never
///   redirects to a client it does not know;
/// - a `redirect_uri` that is not a loopback address is an error page (400
///   `redirect_uri_mismatch`): the fake knows only desktop clients, whose redirect must be loopback
///   (\[native-app\], "Loopback IP address");
/// - otherwise the answer redirects to `redirect_uri` with `code` and the `state` given, or with
///   `error=invalid_request` when `response_type=code` or `scope` is missing, or
///   `error=invalid_scope` when the scope lacks the API's (RFC 6749 §4.1.2.1);
/// - a `code_challenge` is recorded with its method (`S256`, or `plain` when absent, RFC 7636
///   §4.3) and checked at the exchange; PKCE stays optional, as at Google;
/// - a refresh token comes with the code's exchange only when `access_type=offline` (\[native-app\]).
pub(crate) async fn authorize(
    State(app): State<AppState>,
    Query(params): Query<HashMap<String, String>>,
) -> Response {
    let get = |name: &str| params.get(name).map(String::as_str).unwrap_or("");
    let user = &app.config.authorized_user;
    if get("client_id") != user.client_id {
        return page(
            StatusCode::UNAUTHORIZED,
            "Error 401: invalid_client",
            "The OAuth client was not found.",
        );
    }
    let redirect_uri = get("redirect_uri");
    if !is_loopback_redirect(redirect_uri) {
        return page(
            StatusCode::BAD_REQUEST,
            "Error 400: redirect_uri_mismatch",
            "A desktop client must redirect to a loopback address (http://127.0.0.1:PORT).",
        );
    }
    let state = get("state");
    let fail = |error: &str| {
        let mut params = vec![("error", error)];
        if !state.is_empty() {
            params.push(("state", state));
        }
        redirect(&with_query(redirect_uri, &params))
    };
    if get("response_type") != "code" || get("scope").is_empty() {
        return fail("invalid_request");
    }
    if !get("scope").split_whitespace().any(|s| s == SCOPE) {
        return fail("invalid_scope");
    }
    let challenge = match (params.get("code_challenge"), get("code_challenge_method")) {
        (None, _) => None,
        (Some(c), "" | "plain") => Some((c.clone(), "plain".to_owned())),
        (Some(c), "S256") => Some((c.clone(), "S256".to_owned())),
        (Some(_), _) => return fail("invalid_request"),
    };
    let code = format!("4/fake-{}", app.oauth.random(24));
    app.oauth.books().codes.insert(
        code.clone(),
        PendingCode {
            client_id: user.client_id.clone(),
            redirect_uri: redirect_uri.to_owned(),
            challenge,
            offline: get("access_type") == "offline",
            scope: get("scope").to_owned(),
            issued: app.clock.now(),
        },
    );
    let mut out = vec![("code", code.as_str()), ("scope", get("scope"))];
    if !state.is_empty() {
        out.push(("state", state));
    }
    redirect(&with_query(redirect_uri, &out))
}

#[derive(Serialize)]
struct CodeTokenResponse<'a> {
    access_token: &'a str,
    expires_in: u64,
    token_type: &'static str,
    scope: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    refresh_token: Option<&'a str>,
}

fn client_ok(app: &AppState, form: &HashMap<String, String>) -> bool {
    let user = &app.config.authorized_user;
    form.get("client_id") == Some(&user.client_id)
        && form.get("client_secret") == Some(&user.client_secret)
}

fn missing(form: &HashMap<String, String>, names: &[&str]) -> Option<Response> {
    names.iter().find(|n| !form.contains_key(**n)).map(|name| {
        bad_request(
            "invalid_request",
            &format!("Missing required parameter: {name}"),
        )
    })
}

/// The `code_verifier` matches the recorded challenge (RFC 7636 §4.6).
fn verifier_matches(challenge: &(String, String), verifier: &str) -> bool {
    let (expected, method) = challenge;
    let computed = if method == "S256" {
        URL_SAFE_NO_PAD.encode(ring::digest::digest(
            &ring::digest::SHA256,
            verifier.as_bytes(),
        ))
    } else {
        verifier.to_owned()
    };
    computed == *expected
}

/// `grant_type=authorization_code` (\[native-app\], step 5): the client, a known unused unexpired
/// code (single use: RFC 6749 §4.1.2 "the client MUST NOT use the authorization code more than
/// once"), the same `redirect_uri`, and the `code_verifier` when a challenge was recorded.
pub(crate) fn authorization_code(app: &AppState, form: &HashMap<String, String>) -> Response {
    if let Some(refused) = missing(form, &["code", "client_id", "redirect_uri"]) {
        return refused;
    }
    if !client_ok(app, form) {
        return invalid_client();
    }
    // A code is gone once presented, whatever the outcome (single use).
    let Some(pending) = app.oauth.books().codes.remove(&form["code"]) else {
        return bad_request("invalid_grant", "Malformed auth code.");
    };
    if app.clock.now().saturating_duration_since(pending.issued) > CODE_LIFETIME {
        return bad_request("invalid_grant", "Bad Request");
    }
    if pending.client_id != form["client_id"] {
        return bad_request("invalid_grant", "Bad Request");
    }
    if pending.redirect_uri != form["redirect_uri"] {
        return bad_request("redirect_uri_mismatch", "Bad Request");
    }
    if let Some(challenge) = &pending.challenge {
        let Some(verifier) = form.get("code_verifier") else {
            return bad_request("invalid_grant", "Missing code verifier.");
        };
        if !verifier_matches(challenge, verifier) {
            return bad_request("invalid_grant", "Invalid code verifier.");
        }
    }
    let refresh = pending.offline.then(|| {
        let token = format!("1//fake-{}", app.oauth.random(24));
        app.oauth
            .books()
            .refresh_tokens
            .insert(token.clone(), pending.client_id.clone());
        token
    });
    let (access, lifetime) = app.issue_token(Grant::AuthorizationCode);
    if let Some(refresh) = &refresh {
        app.oauth.record_access_parent(&access, refresh);
    }
    json_response(
        StatusCode::OK,
        &CodeTokenResponse {
            access_token: &access,
            expires_in: lifetime.as_secs(),
            token_type: "Bearer",
            scope: &pending.scope,
            refresh_token: refresh.as_deref(),
        },
    )
}

/// `grant_type=refresh_token` (\[native-app\], "Refreshing an access token"): `Ok(refresh_token)`
/// when the client is right and the refresh token is the configured one or one the
/// `authorization_code` grant issued to it, and not revoked; else Google's error: 401
/// `invalid_client`, or 400 `invalid_grant` "Token has been expired or revoked.".
pub(crate) fn check_refresh(
    app: &AppState,
    form: &HashMap<String, String>,
) -> Result<String, Response> {
    if let Some(refused) = missing(form, &["refresh_token", "client_id", "client_secret"]) {
        return Err(refused);
    }
    if !client_ok(app, form) {
        return Err(invalid_client());
    }
    let token = &form["refresh_token"];
    let books = app.oauth.books();
    let known = *token == app.config.authorized_user.refresh_token
        || books.refresh_tokens.get(token) == Some(&form["client_id"]);
    if !known || books.revoked.contains(token) {
        return Err(bad_request(
            "invalid_grant",
            "Token has been expired or revoked.",
        ));
    }
    Ok(token.clone())
}

/// `POST /revoke` (\[native-app\], "Revoking a token"): `token` in the form body or the query; an
/// access token or a refresh token. Revoking a refresh token revokes the access tokens it minted;
/// 200 on success, 400 `invalid_token` for a token the fake does not know (or revoked already).
pub(crate) async fn revoke(
    State(app): State<AppState>,
    Query(query): Query<HashMap<String, String>>,
    form: Result<Form<HashMap<String, String>>, FormRejection>,
) -> Response {
    app.oauth.revoke_requests.fetch_add(1, Ordering::Relaxed);
    let form = form.map(|Form(f)| f).unwrap_or_default();
    let Some(token) = form.get("token").or_else(|| query.get("token")) else {
        return bad_request("invalid_request", "Missing required parameter: token");
    };
    let invalid = || bad_request("invalid_token", "Token expired or revoked");
    let mut books = app.oauth.books();
    let is_refresh = *token == app.config.authorized_user.refresh_token
        || books.refresh_tokens.contains_key(token);
    if is_refresh {
        if !books.revoked.insert(token.clone()) {
            return invalid();
        }
        let children: Vec<String> = books
            .access_parent
            .iter()
            .filter(|(_, parent)| *parent == token)
            .map(|(access, _)| access.clone())
            .collect();
        drop(books);
        let mut tokens = app.tokens();
        for access in children {
            tokens.remove(&access);
        }
    } else {
        drop(books);
        if app.tokens().remove(token).is_none() {
            return invalid();
        }
    }
    tracing::debug!("token revoked");
    (
        StatusCode::OK,
        [(header::CONTENT_TYPE, "application/json")],
        "{}",
    )
        .into_response()
}

#[derive(Serialize)]
struct MetadataToken<'a> {
    access_token: &'a str,
    expires_in: u64,
    token_type: &'static str,
}

/// `GET /computeMetadata/v1/instance/service-accounts/default/token` (\[adc\]): the metadata
/// server answers only requests that carry `Metadata-Flavor: Google` (403 otherwise) and never
/// one with an `X-Forwarded-For` header (the metadata overview: "requests … containing the
/// X-Forwarded-For header are rejected").
pub(crate) async fn metadata_token(State(app): State<AppState>, headers: HeaderMap) -> Response {
    app.oauth.metadata_requests.fetch_add(1, Ordering::Relaxed);
    app.oauth.note_token_request_headers(&headers);
    let flavor = headers.get("metadata-flavor").and_then(|v| v.to_str().ok());
    if flavor != Some("Google") || headers.contains_key("x-forwarded-for") {
        return (
            StatusCode::FORBIDDEN,
            [(header::CONTENT_TYPE, "text/html; charset=utf-8")],
            "Missing required header: Metadata-Flavor",
        )
            .into_response();
    }
    let (access, lifetime) = app.issue_token(Grant::Metadata);
    let mut response = json_response(
        StatusCode::OK,
        &MetadataToken {
            access_token: &access,
            expires_in: lifetime.as_secs(),
            token_type: "Bearer",
        },
    );
    response
        .headers_mut()
        .insert("metadata-flavor", HeaderValue::from_static("Google"));
    response
}

/// `GET /` of the metadata server (\[adc\], the metadata overview): every answer of Google's metadata
/// server carries `Metadata-Flavor: Google`, which is how Google's libraries tell it from anything
/// else listening there before they use it; the root lists `computeMetadata/`.
pub(crate) async fn metadata_root() -> Response {
    (
        StatusCode::OK,
        [
            (header::CONTENT_TYPE, "application/text"),
            (header::HeaderName::from_static("metadata-flavor"), "Google"),
        ],
        "computeMetadata/\n",
    )
        .into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_loopback_redirects_are_accepted() {
        for ok in [
            "http://127.0.0.1:5000/",
            "http://127.0.0.1:5000",
            "http://localhost:8080/cb?x=1",
            "http://[::1]:9/",
        ] {
            assert!(is_loopback_redirect(ok), "{ok}");
        }
        for refused in [
            "https://example.com/cb",
            "http://example.com:80/",
            "http://127.0.0.1.example.com/",
            "http://user@127.0.0.1:5/",
            "urn:ietf:wg:oauth:2.0:oob",
            "",
        ] {
            assert!(!is_loopback_redirect(refused), "{refused}");
        }
    }

    #[test]
    fn pkce_s256_matches_rfc_7636_appendix_b() {
        // RFC 7636, Appendix B.
        let verifier = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";
        let challenge = (
            "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM".to_owned(),
            "S256".to_owned(),
        );
        assert!(verifier_matches(&challenge, verifier));
        assert!(!verifier_matches(&challenge, "another-verifier"));
    }

    #[test]
    fn redirect_queries_are_encoded() {
        assert_eq!(
            with_query(
                "http://127.0.0.1:1/cb",
                &[("code", "4/a b"), ("state", "x&y")]
            ),
            "http://127.0.0.1:1/cb?code=4%2Fa%20b&state=x%26y"
        );
        assert_eq!(
            with_query("http://127.0.0.1:1/?a=1", &[("code", "c")]),
            "http://127.0.0.1:1/?a=1&code=c"
        );
    }
}

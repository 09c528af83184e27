//! The fake OAuth 2.0 token endpoint and the bearer-token check of the API routes.
//!
//! `POST {origin}/token` accepts the three grants Google's auth libraries send, form-encoded:
//! the service-account JWT-bearer grant (`grant_type=urn:ietf:params:oauth:grant-type:jwt-bearer`,
//! `assertion=<JWT>`), the refresh-token grant (`grant_type=refresh_token`, `refresh_token`,
//! `client_id`, `client_secret`) and the installed-app flow's `authorization_code` grant; the last
//! two are checked in `oauth.rs`, with the authorization and revoke endpoints. **JWT signatures
//! are never verified**: the fake decodes the payload
//! and checks `iss`, `aud` (must equal the token URL), `scope` (must contain the doubleclicksearch
//! scope) and `exp` (must be in the future on the fake's clock).

use std::collections::HashMap;

use axum::Form;
use axum::extract::rejection::FormRejection;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::Response;
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde::Serialize;
use serde_json::Value;

use super::ledger::Counters;
use super::oauth;
use super::state::AppState;
use super::tokens::{Grant, SCOPE};
use crate::errors::{GoogleErrorItem, google_error, json_response};

/// The JWT-bearer grant type.
pub const JWT_BEARER_GRANT: &str = "urn:ietf:params:oauth:grant-type:jwt-bearer";
/// The audience Google accepts for self-signed JWTs used directly as bearer tokens.
const SELF_SIGNED_AUDIENCE: &str = "https://doubleclicksearch.googleapis.com/";

#[derive(Serialize)]
struct TokenResponse<'a> {
    access_token: &'a str,
    expires_in: u64,
    token_type: &'static str,
}

#[derive(Serialize)]
struct OAuthError<'a> {
    error: &'a str,
    error_description: &'a str,
}

fn oauth_error(error: &str, description: &str) -> Response {
    tracing::debug!(error, description, "token request refused");
    json_response(
        StatusCode::BAD_REQUEST,
        &OAuthError {
            error,
            error_description: description,
        },
    )
}

/// `POST /token`.
pub(crate) async fn token(
    State(app): State<AppState>,
    headers: HeaderMap,
    form: Result<Form<HashMap<String, String>>, FormRejection>,
) -> Response {
    app.oauth.count_token_request();
    app.oauth.note_token_request_headers(&headers);
    let Ok(Form(form)) = form else {
        return oauth_error(
            "invalid_request",
            "The request must be application/x-www-form-urlencoded.",
        );
    };
    let Some(grant_type) = form.get("grant_type") else {
        return oauth_error("invalid_request", "Missing required parameter: grant_type");
    };
    let (grant, refresh) = match grant_type.as_str() {
        JWT_BEARER_GRANT => {
            let Some(assertion) = form.get("assertion") else {
                return oauth_error("invalid_request", "Missing required parameter: assertion");
            };
            if let Err((error, description)) = check_grant_jwt(&app, assertion) {
                return oauth_error(error, &description);
            }
            (Grant::JwtBearer, None)
        }
        "refresh_token" => match oauth::check_refresh(&app, &form) {
            Ok(refresh) => (Grant::RefreshToken, Some(refresh)),
            Err(refused) => return refused,
        },
        "authorization_code" => return oauth::authorization_code(&app, &form),
        other => {
            return oauth_error(
                "unsupported_grant_type",
                &format!("Invalid grant_type: {other}"),
            );
        }
    };
    let (access_token, lifetime) = app.issue_token(grant);
    if let Some(refresh) = refresh {
        app.oauth.record_access_parent(&access_token, &refresh);
    }
    json_response(
        StatusCode::OK,
        &TokenResponse {
            access_token: &access_token,
            expires_in: lifetime.as_secs(),
            token_type: "Bearer",
        },
    )
}

/// Decodes a JWT's payload without verifying its signature.
fn jwt_payload(jwt: &str) -> Option<serde_json::Map<String, Value>> {
    let mut parts = jwt.split('.');
    let (_header, payload, _signature) = (parts.next()?, parts.next()?, parts.next()?);
    if parts.next().is_some() {
        return None;
    }
    let bytes = URL_SAFE_NO_PAD.decode(payload.trim_end_matches('=')).ok()?;
    match serde_json::from_slice(&bytes).ok()? {
        Value::Object(map) => Some(map),
        _ => None,
    }
}

fn has_scope(claims: &serde_json::Map<String, Value>) -> bool {
    claims
        .get("scope")
        .and_then(Value::as_str)
        .is_some_and(|s| s.split_whitespace().any(|scope| scope == SCOPE))
}

fn unexpired(app: &AppState, claims: &serde_json::Map<String, Value>) -> bool {
    let exp = claims.get("exp").and_then(Value::as_u64);
    exp.is_some_and(|exp| exp > app.clock.unix_seconds())
}

fn check_grant_jwt(app: &AppState, assertion: &str) -> Result<(), (&'static str, String)> {
    let claims = jwt_payload(assertion).ok_or_else(|| {
        (
            "invalid_grant",
            "Invalid JWT: not a decodable JWT.".to_owned(),
        )
    })?;
    if claims
        .get("iss")
        .and_then(Value::as_str)
        .is_none_or(str::is_empty)
    {
        return Err((
            "invalid_grant",
            "Invalid JWT: missing iss claim.".to_owned(),
        ));
    }
    let aud = claims.get("aud").and_then(Value::as_str).unwrap_or("");
    if aud != app.token_url {
        return Err((
            "invalid_grant",
            format!(
                "Invalid JWT audience '{aud}': expected '{}'.",
                app.token_url
            ),
        ));
    }
    if !unexpired(app, &claims) {
        return Err((
            "invalid_grant",
            "Invalid JWT: Token must be a short-lived token (60 minutes) and in a reasonable timeframe. Check your iat and exp values in the JWT claim.".to_owned(),
        ));
    }
    if !has_scope(&claims) {
        return Err((
            "invalid_scope",
            format!("The JWT's scope claim must contain {SCOPE}."),
        ));
    }
    Ok(())
}

/// Whether `token` authorizes API calls right now.
pub(crate) fn token_is_valid(app: &AppState, token: &str) -> bool {
    if token == app.config.dev_token {
        return true;
    }
    if let Some(issued) = app.tokens().get(token) {
        return app.clock.now() < issued.expires_at;
    }
    if app.config.accept_self_signed_jwt
        && let Some(claims) = jwt_payload(token)
    {
        let audience_ok = claims
            .get("aud")
            .and_then(Value::as_str)
            .is_some_and(|aud| {
                aud.trim_end_matches('/') == SELF_SIGNED_AUDIENCE.trim_end_matches('/')
            });
        return unexpired(app, &claims) && (audience_ok || has_scope(&claims));
    }
    false
}

/// Middleware of the API routes: a valid `Authorization: Bearer` token or 401.
pub(crate) async fn require_bearer(
    State(app): State<AppState>,
    request: Request,
    next: Next,
) -> Response {
    app.oauth.note_api_user_project(request.headers());
    let header_value = request
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok());
    let token = header_value.and_then(|v| {
        let (scheme, token) = v.split_once(' ')?;
        scheme.eq_ignore_ascii_case("bearer").then(|| token.trim())
    });
    match token {
        Some(token) if token_is_valid(&app, token) => next.run(request).await,
        Some(_) => unauthorized(
            &app,
            "Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential. See https://developers.google.com/identity/sign-in/web/devconsole-project.",
            "authError",
            "Invalid Credentials",
            "invalid_token",
        ),
        None => unauthorized(
            &app,
            "Request is missing required authentication credential. Expected OAuth 2 access token, login cookie or other valid authentication credential. See https://developers.google.com/identity/sign-in/web/devconsole-project.",
            "required",
            "Login Required.",
            "invalid_request",
        ),
    }
}

fn unauthorized(
    app: &AppState,
    message: &str,
    reason: &'static str,
    item_message: &str,
    www_error: &'static str,
) -> Response {
    Counters::bump(&app.shared.counters.unauthorized);
    let mut response = google_error(
        StatusCode::UNAUTHORIZED,
        message,
        &[GoogleErrorItem::new(reason, item_message).at("Authorization", "header")],
    );
    let challenge = format!("Bearer realm=\"https://accounts.google.com/\", error=\"{www_error}\"");
    if let Ok(v) = HeaderValue::from_str(&challenge) {
        response.headers_mut().insert(header::WWW_AUTHENTICATE, v);
    }
    response
}

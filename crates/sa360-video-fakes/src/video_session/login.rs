//! `POST /api/login` with the lockout of VS-3 and VS-4.

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::Response;
use bytes::Bytes;
use serde::Serialize;
use serde_json::{Map, Value};
use uuid::Uuid;

use super::ledger::{BLOCK_DURATION, DomainUser, MAX_FAILURES, Session};
use super::state::VideoState;
use crate::errors::{api_error, json_response};
use crate::util::hex_token;

/// A 400 `ValidationFailed` on `field`.
pub(crate) fn validation(field: Option<&str>, message: &str) -> Response {
    api_error(
        StatusCode::BAD_REQUEST,
        "ValidationFailed",
        message,
        field,
        None,
    )
}

/// Parses a JSON object body and checks it has only `allowed` properties (closed schemas, G-3).
pub(crate) fn parse_closed_object(
    body: &[u8],
    allowed: &[&str],
) -> Result<Map<String, Value>, Response> {
    let value: Value = serde_json::from_slice(body)
        .map_err(|e| validation(None, &format!("The request body is not valid JSON: {e}")))?;
    let Value::Object(map) = value else {
        return Err(validation(None, "The request body must be a JSON object."));
    };
    if let Some(unknown) = map.keys().find(|k| !allowed.contains(&k.as_str())) {
        return Err(validation(
            Some(unknown),
            &format!("Unknown property '{unknown}'."),
        ));
    }
    Ok(map)
}

fn required_string<'a>(map: &'a Map<String, Value>, field: &str) -> Result<&'a str, Response> {
    match map.get(field) {
        None | Some(Value::Null) => Err(validation(Some(field), &format!("{field} is required."))),
        Some(Value::String(s)) => Ok(s),
        Some(_) => Err(validation(
            Some(field),
            &format!("{field} must be a string."),
        )),
    }
}

#[derive(Serialize)]
#[serde(rename_all = "PascalCase")]
struct LoginResponse<'a> {
    user_id: Uuid,
    first_name: Option<&'a str>,
    last_name: Option<&'a str>,
    profile_image: Option<&'a str>,
    country_code: Option<&'a str>,
    phone_no: Option<&'a str>,
    job_role: Option<&'a str>,
    domain_id: i64,
    domain_name: &'a str,
    user_name: &'a str,
    notification_email: Option<&'a str>,
    role_code: Option<&'a str>,
    login_id: i64,
    user_token: &'a str,
    refresh_token: &'a str,
}

fn blocked(retry_after: std::time::Duration) -> Response {
    let secs = u32::try_from(retry_after.as_secs_f64().ceil() as u64)
        .unwrap_or(u32::MAX)
        .max(1);
    api_error(
        StatusCode::LOCKED,
        "AccountBlocked",
        &format!(
            "The account is blocked after too many failed login attempts. Try again in {secs} seconds."
        ),
        None,
        Some(secs),
    )
}

/// `POST /api/login`.
pub(crate) async fn login(State(app): State<VideoState>, body: Bytes) -> Response {
    app.shared.state().counts.login_attempts += 1;
    let map = match parse_closed_object(&body, &["SecretKey", "UserName", "Password"]) {
        Ok(map) => map,
        Err(response) => return response,
    };
    let fields = (|| {
        Ok::<_, Response>((
            required_string(&map, "SecretKey")?,
            required_string(&map, "UserName")?,
            required_string(&map, "Password")?,
        ))
    })();
    let (secret_key, user_name, password) = match fields {
        Ok(f) => f,
        Err(response) => return response,
    };
    let Some(domain) = app
        .config
        .domains
        .iter()
        .find(|d| d.secret_key == secret_key)
    else {
        return api_error(
            StatusCode::UNAUTHORIZED,
            "InvalidSecretKey",
            "The secret key is not valid.",
            None,
            None,
        );
    };
    if !domain.active {
        return api_error(
            StatusCode::FORBIDDEN,
            "DomainInactive",
            "The domain is not active.",
            None,
            None,
        );
    }
    let Some(user) = app
        .config
        .users
        .iter()
        .find(|u| u.domain_id == domain.id && u.user_name == user_name)
    else {
        // An unknown user name counts for nobody (VS-3).
        return invalid_credentials();
    };
    let now = app.shared.clock.now();
    let key = DomainUser::new(domain.id, user_name);
    let mut state = app.shared.state();
    let account = state.accounts.entry(key.clone()).or_default();
    account.refresh(now);
    if let Some(until) = account.blocked_until {
        account.stats.rejected_while_blocked += 1;
        return blocked(until.saturating_duration_since(now));
    }
    if user.password != password {
        account.failures.push_back(now);
        account.stats.failures_total += 1;
        if account.failures.len() > MAX_FAILURES {
            account.failures.clear();
            account.blocked_until = Some(now + BLOCK_DURATION);
            account.stats.blocks_started += 1;
            tracing::info!(domain = key.domain_id, user = %key.user_name, "account blocked");
            return blocked(BLOCK_DURATION);
        }
        return invalid_credentials();
    }
    account.failures.clear();
    account.stats.successful_logins += 1;
    state.counts.logins_succeeded += 1;
    state.next_login_id += 1;
    let login_id = state.next_login_id;
    let user_token = format!("ut_{}", hex_token(&mut state.rng, 20));
    let refresh_token = format!("rt_{}", hex_token(&mut state.rng, 20));
    state.tokens.insert(
        user_token.clone(),
        Session {
            domain_id: domain.id,
            user_name: user.user_name.clone(),
        },
    );
    drop(state);
    json_response(
        StatusCode::OK,
        &LoginResponse {
            user_id: user.user_id,
            first_name: user.first_name.as_deref(),
            last_name: user.last_name.as_deref(),
            profile_image: user.profile_image.as_deref(),
            country_code: user.country_code.as_deref(),
            phone_no: user.phone_no.as_deref(),
            job_role: user.job_role.as_deref(),
            domain_id: domain.id,
            domain_name: &domain.name,
            user_name: &user.user_name,
            notification_email: user.notification_email.as_deref(),
            role_code: user.role_code.as_deref(),
            login_id,
            user_token: &user_token,
            refresh_token: &refresh_token,
        },
    )
}

fn invalid_credentials() -> Response {
    api_error(
        StatusCode::UNAUTHORIZED,
        "InvalidCredentials",
        "The user name or password is incorrect.",
        None,
        None,
    )
}

//! The endpoints of workload identity federation and service-account impersonation, as Google
//! documents them:
//!
//! - \[sts\]: Security Token Service `POST {origin}/v1/token`,
//!   <https://cloud.google.com/iam/docs/reference/sts/rest/v1/TopLevel/token>: a form-encoded
//!   token exchange (RFC 8693) of an external subject token for a Google access token. Required,
//!   as the page lists them: `grant_type` (`urn:ietf:params:oauth:grant-type:token-exchange`),
//!   `requested_token_type` (`urn:ietf:params:oauth:token-type:access_token`), `subject_token`,
//!   `subject_token_type` (one of the four types the page lists) and `audience` for a workload
//!   identity pool; `scope` is passed through. The answer: `access_token`, `issued_token_type`,
//!   `token_type` (`Bearer`), `expires_in`; a refusal is an OAuth error body (`invalid_request`,
//!   `invalid_grant`, `unsupported_grant_type`) with HTTP 400.
//! - \[iam\]: IAM Credentials `POST {origin}/v1/projects/-/serviceAccounts/{EMAIL}:generateAccessToken`,
//!   <https://cloud.google.com/iam/docs/reference/credentials/rest/v1/projects.serviceAccounts/generateAccessToken>:
//!   called with the source credentials' bearer token, a JSON body with `scope` (required, a list),
//!   `delegates` (optional, `projects/-/serviceAccounts/EMAIL`) and `lifetime` (optional, `"3600s"`
//!   by default and at most one hour, the page's default maximum); the answer is `accessToken` and
//!   `expireTime` (RFC 3339). No bearer, or one the fake did not issue: 401; a bad body: 400.
//!
//! The fake does not verify the subject token (no identity provider stands behind it): any
//! non-empty token is accepted, like the JWT-bearer grant's unverified signatures (`auth.rs`).

use std::collections::HashMap;
use std::sync::atomic::Ordering;
use std::time::Duration;

use axum::Form;
use axum::extract::rejection::{FormRejection, JsonRejection};
use axum::extract::{Json, Path, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::Response;
use serde::Serialize;
use serde_json::Value;

use super::auth::token_is_valid;
use super::oauth::oauth_error;
use super::state::AppState;
use super::tokens::Grant;
use crate::errors::{GoogleErrorItem, google_error, json_response};

/// The STS path, on the fake's origin.
pub const STS_TOKEN_PATH: &str = "/v1/token";

/// The token-exchange grant type (RFC 8693).
const TOKEN_EXCHANGE_GRANT: &str = "urn:ietf:params:oauth:grant-type:token-exchange";

/// The only requested token type STS issues.
const ACCESS_TOKEN_TYPE: &str = "urn:ietf:params:oauth:token-type:access_token";

/// The subject token types \[sts\] lists.
const SUBJECT_TOKEN_TYPES: [&str; 4] = [
    "urn:ietf:params:oauth:token-type:jwt",
    "urn:ietf:params:oauth:token-type:id_token",
    "urn:ietf:params:aws:token-type:aws4_request",
    "urn:ietf:params:oauth:token-type:saml2",
];

/// The longest lifetime \[iam\] grants by default.
const MAX_LIFETIME: Duration = Duration::from_secs(3600);

#[derive(Serialize)]
struct StsAnswer<'a> {
    access_token: &'a str,
    issued_token_type: &'static str,
    token_type: &'static str,
    expires_in: u64,
}

/// `POST /v1/token` (\[sts\]).
pub(crate) async fn sts_token(
    State(app): State<AppState>,
    headers: HeaderMap,
    form: Result<Form<HashMap<String, String>>, FormRejection>,
) -> Response {
    app.federation.sts_requests.fetch_add(1, Ordering::Relaxed);
    app.oauth.note_token_request_headers(&headers);
    let bad =
        |description: &str| oauth_error(StatusCode::BAD_REQUEST, "invalid_request", description);
    let Ok(Form(form)) = form else {
        return bad("The request must be application/x-www-form-urlencoded.");
    };
    let field = |name: &str| form.get(name).map(String::as_str).filter(|v| !v.is_empty());
    for name in [
        "grant_type",
        "requested_token_type",
        "subject_token",
        "subject_token_type",
        "audience",
    ] {
        if field(name).is_none() {
            return bad(&format!("Missing required parameter: {name}"));
        }
    }
    if field("grant_type") != Some(TOKEN_EXCHANGE_GRANT) {
        return oauth_error(
            StatusCode::BAD_REQUEST,
            "unsupported_grant_type",
            "Only the token exchange grant is supported.",
        );
    }
    if field("requested_token_type") != Some(ACCESS_TOKEN_TYPE) {
        return bad("The requested token type must be an access token.");
    }
    if !field("subject_token_type").is_some_and(|t| SUBJECT_TOKEN_TYPES.contains(&t)) {
        return bad("Invalid subject_token_type.");
    }
    let (access_token, lifetime) = app.issue_token(Grant::TokenExchange);
    json_response(
        StatusCode::OK,
        &StsAnswer {
            access_token: &access_token,
            issued_token_type: ACCESS_TOKEN_TYPE,
            token_type: "Bearer",
            expires_in: lifetime.as_secs(),
        },
    )
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct GenerateAccessTokenAnswer<'a> {
    access_token: &'a str,
    expire_time: String,
}

fn iam_error(status: StatusCode, reason: &'static str, message: &str) -> Response {
    google_error(status, message, &[GoogleErrorItem::new(reason, message)])
}

/// `POST /v1/projects/{project}/serviceAccounts/{email}:generateAccessToken` (\[iam\]).
pub(crate) async fn generate_access_token(
    State(app): State<AppState>,
    Path((project, account)): Path<(String, String)>,
    headers: HeaderMap,
    body: Result<Json<Value>, JsonRejection>,
) -> Response {
    app.federation
        .generate_access_token_requests
        .fetch_add(1, Ordering::Relaxed);
    let bearer = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split_once(' '))
        .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
        .map(|(_, token)| token.trim());
    if !bearer.is_some_and(|t| token_is_valid(&app, t)) {
        return iam_error(
            StatusCode::UNAUTHORIZED,
            "authError",
            "Request had invalid authentication credentials.",
        );
    }
    let Some(email) = account.strip_suffix(":generateAccessToken") else {
        return iam_error(StatusCode::NOT_FOUND, "notFound", "Unknown method.");
    };
    if project != "-" || email.is_empty() || !email.contains('@') {
        return iam_error(
            StatusCode::BAD_REQUEST,
            "badRequest",
            "The resource name must be projects/-/serviceAccounts/EMAIL.",
        );
    }
    let Ok(Json(body)) = body else {
        return iam_error(
            StatusCode::BAD_REQUEST,
            "badRequest",
            "Invalid JSON payload.",
        );
    };
    let scopes = body.get("scope").and_then(Value::as_array);
    if !scopes.is_some_and(|s| !s.is_empty() && s.iter().all(Value::is_string)) {
        return iam_error(
            StatusCode::BAD_REQUEST,
            "badRequest",
            "Scope required: give at least one OAuth scope.",
        );
    }
    if let Some(delegates) = body.get("delegates") {
        let ok = delegates.as_array().is_some_and(|d| {
            d.iter().all(|d| {
                d.as_str().is_some_and(|d| {
                    d.starts_with("projects/-/serviceAccounts/") && d.contains('@')
                })
            })
        });
        if !ok {
            return iam_error(
                StatusCode::BAD_REQUEST,
                "badRequest",
                "Delegates must be projects/-/serviceAccounts/EMAIL.",
            );
        }
    }
    let lifetime = match body.get("lifetime") {
        None => MAX_LIFETIME,
        Some(v) => match v
            .as_str()
            .and_then(|s| s.strip_suffix('s'))
            .and_then(|s| s.parse::<f64>().ok())
            .filter(|s| s.is_finite() && *s > 0.0)
        {
            Some(secs) if Duration::from_secs_f64(secs) <= MAX_LIFETIME => {
                Duration::from_secs_f64(secs)
            }
            _ => {
                return iam_error(
                    StatusCode::BAD_REQUEST,
                    "badRequest",
                    "The lifetime must be a duration such as \"3600s\", at most 3600s.",
                );
            }
        },
    };
    let (access_token, issued) = app.issue_token(Grant::Impersonation);
    let lifetime = lifetime.min(issued);
    let expire = chrono::DateTime::<chrono::Utc>::from(app.clock.system_now() + lifetime);
    json_response(
        StatusCode::OK,
        &GenerateAccessTokenAnswer {
            access_token: &access_token,
            expire_time: expire.to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::search_ads::config::SearchAdsConfig;

    fn app() -> AppState {
        AppState::for_tests(SearchAdsConfig::default())
    }

    async fn body(response: Response) -> (StatusCode, Value) {
        let status = response.status();
        let bytes = axum::body::to_bytes(response.into_body(), 1 << 20)
            .await
            .expect("a body");
        (status, serde_json::from_slice(&bytes).expect("JSON"))
    }

    fn exchange(without: &str, with: &[(&str, &str)]) -> HashMap<String, String> {
        let mut form: HashMap<String, String> = [
            ("grant_type", TOKEN_EXCHANGE_GRANT),
            ("requested_token_type", ACCESS_TOKEN_TYPE),
            ("subject_token", "eyJ.x.y"),
            ("subject_token_type", "urn:ietf:params:oauth:token-type:jwt"),
            ("audience", "//iam.googleapis.com/projects/1/x"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect();
        form.remove(without);
        for (k, v) in with {
            form.insert((*k).to_owned(), (*v).to_owned());
        }
        form
    }

    #[tokio::test]
    async fn sts_requires_what_the_page_marks_required() {
        let app = app();
        for name in [
            "grant_type",
            "subject_token",
            "subject_token_type",
            "audience",
        ] {
            let (status, json) = body(
                sts_token(
                    State(app.clone()),
                    HeaderMap::new(),
                    Ok(Form(exchange(name, &[]))),
                )
                .await,
            )
            .await;
            assert_eq!(status, StatusCode::BAD_REQUEST, "{name}");
            assert!(json["error"].is_string(), "{name}: {json}");
        }
        let (status, json) = body(
            sts_token(
                State(app.clone()),
                HeaderMap::new(),
                Ok(Form(exchange("", &[("grant_type", "refresh_token")]))),
            )
            .await,
        )
        .await;
        assert_eq!(status, StatusCode::BAD_REQUEST);
        assert_eq!(json["error"], "unsupported_grant_type");
        let (status, json) = body(
            sts_token(
                State(app.clone()),
                HeaderMap::new(),
                Ok(Form(exchange("", &[]))),
            )
            .await,
        )
        .await;
        assert_eq!(status, StatusCode::OK, "{json}");
        assert_eq!(json["issued_token_type"], ACCESS_TOKEN_TYPE);
        let token = json["access_token"].as_str().expect("a token");
        assert!(token_is_valid(&app, token));
    }

    #[tokio::test]
    async fn generate_access_token_needs_a_bearer_a_scope_and_a_lifetime_within_an_hour() {
        let app = app();
        let (token, _) = app.issue_token(Grant::Direct);
        let call = |bearer: Option<&str>, json: Value| {
            let mut headers = HeaderMap::new();
            if let Some(b) = bearer {
                headers.insert(
                    header::AUTHORIZATION,
                    format!("Bearer {b}").parse().unwrap(),
                );
            }
            generate_access_token(
                State(app.clone()),
                Path((
                    "-".to_owned(),
                    "sa@p.iam.gserviceaccount.com:generateAccessToken".to_owned(),
                )),
                headers,
                Ok(Json(json)),
            )
        };
        let scope = serde_json::json!({"scope": [crate::search_ads::tokens::SCOPE]});
        let (status, _) = body(call(None, scope.clone()).await).await;
        assert_eq!(status, StatusCode::UNAUTHORIZED);
        let (status, _) = body(call(Some("ya29.unknown"), scope.clone()).await).await;
        assert_eq!(status, StatusCode::UNAUTHORIZED);
        let (status, _) = body(call(Some(&token), serde_json::json!({})).await).await;
        assert_eq!(status, StatusCode::BAD_REQUEST);
        let (status, _) = body(
            call(
                Some(&token),
                serde_json::json!({"scope": ["s"], "lifetime": "7200s"}),
            )
            .await,
        )
        .await;
        assert_eq!(status, StatusCode::BAD_REQUEST);
        let (status, _) = body(
            call(
                Some(&token),
                serde_json::json!({"scope": ["s"], "delegates": ["x"]}),
            )
            .await,
        )
        .await;
        assert_eq!(status, StatusCode::BAD_REQUEST);
        let (status, json) = body(
            call(
                Some(&token),
                serde_json::json!({"scope": ["s"], "lifetime": "1800s",
                    "delegates": ["projects/-/serviceAccounts/d@p.iam.gserviceaccount.com"]}),
            )
            .await,
        )
        .await;
        assert_eq!(status, StatusCode::OK, "{json}");
        assert!(json["accessToken"].is_string() && json["expireTime"].is_string());
    }
}

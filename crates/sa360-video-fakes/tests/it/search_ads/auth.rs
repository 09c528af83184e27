//! Authentication: bearer tokens, the token endpoint and its expiry, self-signed JWTs and key
//! files.

use std::time::Duration;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use sa360_video_fakes::search_ads::{JWT_BEARER_GRANT, SCOPE};
use serde_json::{Value, json};

use super::{engine_url, small_fake};
use crate::common::{client, form, json};

fn jwt(claims: &Value) -> String {
    let header = URL_SAFE_NO_PAD.encode(br#"{"alg":"RS256","typ":"JWT"}"#);
    let payload = URL_SAFE_NO_PAD.encode(claims.to_string());
    format!("{header}.{payload}.c2lnbmF0dXJl")
}

fn now_secs() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

#[tokio::test]
async fn bearer_auth_is_required() {
    let fake = small_fake().await;
    let url = format!(
        "{}?startDate=20240101&endDate=20240101&startRow=0&rowCount=1",
        engine_url(&fake, 0)
    );
    let response = client().get(&url).send().await.unwrap();
    assert_eq!(response.status(), 401);
    assert!(
        response.headers()["www-authenticate"]
            .to_str()
            .unwrap()
            .starts_with("Bearer")
    );
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["error"]["code"], 401);
    assert_eq!(body["error"]["errors"][0]["reason"], "required");
    let (status, body) = json(client().get(&url).bearer_auth("ya29.wrong")).await;
    assert_eq!(status, 401);
    assert_eq!(body["error"]["errors"][0]["reason"], "authError");
    assert_eq!(body["error"]["errors"][0]["location"], "Authorization");
    let (status, _) = json(client().get(&url).bearer_auth(fake.dev_token())).await;
    assert_eq!(status, 200);
    assert_eq!(fake.ledger().counts().unauthorized, 2);
}

#[tokio::test]
async fn token_endpoint_grants_and_expiry() {
    let fake = small_fake().await;
    let read = format!(
        "{}?startDate=20240101&endDate=20240101&startRow=0&rowCount=1",
        engine_url(&fake, 0)
    );
    let claims = json!({
        "iss": "fake-sa@fake-project.iam.gserviceaccount.com",
        "scope": format!("https://www.googleapis.com/auth/userinfo.email {SCOPE}"),
        "aud": fake.token_url(),
        "iat": now_secs(),
        "exp": now_secs() + 3600,
    });
    let grant = |assertion: String| {
        form(
            client().post(fake.token_url()),
            &[
                ("grant_type", JWT_BEARER_GRANT),
                ("assertion", assertion.as_str()),
            ],
        )
    };
    let (status, body) = json(grant(jwt(&claims))).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["token_type"], "Bearer");
    assert_eq!(body["expires_in"], 3600);
    let token = body["access_token"].as_str().unwrap().to_owned();
    let (status, _) = json(client().get(&read).bearer_auth(&token)).await;
    assert_eq!(status, 200);

    let mut bad_aud = claims.clone();
    bad_aud["aud"] = json!("https://oauth2.googleapis.com/token");
    let mut expired = claims.clone();
    expired["exp"] = json!(now_secs() - 10);
    let mut no_scope = claims.clone();
    no_scope["scope"] = json!("https://www.googleapis.com/auth/cloud-platform");
    for (claims, error) in [
        (bad_aud, "invalid_grant"),
        (expired, "invalid_grant"),
        (no_scope, "invalid_scope"),
    ] {
        let (status, body) = json(grant(jwt(&claims))).await;
        assert_eq!(status, 400);
        assert_eq!(body["error"], error, "{body}");
        assert!(body["error_description"].is_string());
    }
    let (status, body) = json(grant("not.a-jwt".to_owned())).await;
    assert_eq!(
        (status, body["error"].as_str()),
        (400, Some("invalid_grant"))
    );
    let (status, body) = json(form(
        client().post(fake.token_url()),
        &[("grant_type", "client_credentials")],
    ))
    .await;
    assert_eq!(
        (status, body["error"].as_str()),
        (400, Some("unsupported_grant_type"))
    );

    // Refresh-token grant.
    let user = fake.authorized_user().clone();
    let refresh = |token: &str| {
        form(
            client().post(fake.token_url()),
            &[
                ("grant_type", "refresh_token"),
                ("refresh_token", token),
                ("client_id", user.client_id.as_str()),
                ("client_secret", user.client_secret.as_str()),
            ],
        )
    };
    let (status, body) = json(refresh(&user.refresh_token)).await;
    assert_eq!(status, 200);
    assert!(body["access_token"].as_str().unwrap().starts_with("ya29."));
    let (status, body) = json(refresh("stolen")).await;
    assert_eq!(
        (status, body["error"].as_str()),
        (400, Some("invalid_grant"))
    );

    // Issued tokens expire on the fake's clock.
    fake.set_token_lifetime(Duration::from_secs(60));
    let short = fake.issue_token();
    let (status, _) = json(client().get(&read).bearer_auth(&short)).await;
    assert_eq!(status, 200);
    fake.clock().advance(Duration::from_secs(61));
    let (status, body) = json(client().get(&read).bearer_auth(&short)).await;
    assert_eq!(status, 401);
    assert_eq!(body["error"]["errors"][0]["reason"], "authError");
    assert!(fake.ledger().counts().tokens_issued >= 3);
}

#[tokio::test]
async fn self_signed_jwts_and_key_files() {
    let fake = small_fake().await;
    let read = format!(
        "{}?startDate=20240101&endDate=20240101&startRow=0&rowCount=1",
        engine_url(&fake, 0)
    );
    let self_signed = jwt(&json!({
        "iss": "sa@p.iam.gserviceaccount.com",
        "sub": "sa@p.iam.gserviceaccount.com",
        "aud": "https://doubleclicksearch.googleapis.com/",
        "iat": now_secs(),
        "exp": now_secs() + 3600,
    }));
    let (status, _) = json(client().get(&read).bearer_auth(&self_signed)).await;
    assert_eq!(status, 200);
    let stale = jwt(&json!({"iss": "x", "scope": SCOPE, "exp": now_secs() - 1}));
    let (status, _) = json(client().get(&read).bearer_auth(&stale)).await;
    assert_eq!(status, 401);
    let key: Value = serde_json::from_str(&fake.service_account_key_json()).unwrap();
    assert_eq!(key["type"], "service_account");
    assert_eq!(key["token_uri"], fake.token_url());
    assert!(
        key["private_key"]
            .as_str()
            .unwrap()
            .starts_with("-----BEGIN PRIVATE KEY-----")
    );
}

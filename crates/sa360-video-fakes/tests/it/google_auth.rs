//! The token endpoint works with the Google auth crate the SDK uses (`gcp_auth`): a service
//! account key file whose `token_uri` points at the fake yields a token the API accepts.

use crate::common;

use std::time::Duration;

use common::{client, json, saved_columns_url};
use gcp_auth::TokenProvider as _;
use sa360_video_fakes::SearchAdsFake;
use sa360_video_fakes::search_ads::SCOPE;

#[tokio::test]
async fn gcp_auth_service_account_gets_a_working_token() {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let fake = SearchAdsFake::builder()
        .token_lifetime(Duration::from_secs(1800))
        .start()
        .await
        .unwrap();
    let account = gcp_auth::CustomServiceAccount::from_json(&fake.service_account_key_json())
        .expect("key file parses");
    let token = account.token(&[SCOPE]).await.expect("token from the fake");
    assert!(token.as_str().starts_with("ya29.fake-"));
    assert!(!token.has_expired());
    assert_eq!(fake.ledger().counts().tokens_issued, 1);
    let (status, body) = json(
        client()
            .get(saved_columns_url(&fake))
            .bearer_auth(token.as_str()),
    )
    .await;
    assert_eq!(status, 200, "{body}");
}

//! `savedColumns.list`.

use super::small_fake;
use crate::common::{client, json, saved_columns_url};

#[tokio::test]
async fn saved_columns_list() {
    let fake = small_fake().await;
    let (status, body) = json(
        client()
            .get(saved_columns_url(&fake))
            .bearer_auth(fake.dev_token()),
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!(body["kind"], "doubleclicksearch#savedColumnList");
    assert_eq!(body["items"].as_array().unwrap().len(), 3);
    assert_eq!(body["items"][0]["kind"], "doubleclicksearch#savedColumn");
    let (status, _) = json(
        client()
            .get(format!(
                "{}/agency/1/advertiser/2/savedcolumns",
                fake.base_url()
            ))
            .bearer_auth(fake.dev_token()),
    )
    .await;
    assert_eq!(status, 403);
}

//! The server itself: shutting down, dropping the handle, unknown paths and methods.

use std::time::Duration;

use super::small_fake;
use crate::common::{client, json};

#[tokio::test]
async fn shutdown_stops_serving() {
    let fake = small_fake().await;
    let url = format!("{}/conversion", fake.base_url());
    fake.shutdown().await;
    assert!(client().post(url).send().await.is_err());
}

#[tokio::test]
async fn dropping_the_handle_stops_the_server() {
    let fake = small_fake().await;
    let url = format!("{}/conversion", fake.base_url());
    drop(fake);
    let mut refused = false;
    for _ in 0..50 {
        if client().post(&url).send().await.is_err() {
            refused = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(refused, "the listener closes after the handle is dropped");
}

#[tokio::test]
async fn unknown_paths_and_methods_answer_in_the_envelope() {
    let fake = small_fake().await;
    let (status, body) = json(client().get(format!("{}/nothing", fake.base_url()))).await;
    assert_eq!(status, 404);
    assert_eq!(body["error"]["code"], 404);
    let (status, body) = json(
        client()
            .delete(format!("{}/conversion", fake.base_url()))
            .bearer_auth(fake.dev_token()),
    )
    .await;
    assert_eq!(status, 405);
    assert_eq!(body["error"]["code"], 405);
}

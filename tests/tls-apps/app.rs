//! An application that depends on the SDK and on reqwest, and builds its own
//! `reqwest::Client` before the SDK builds any (issue 24, item 5): it must not
//! panic with "No rustls crypto provider is configured", and need no TLS line.
//!
//! Shared by the two downstream crates beside this file (`#[path]`), which differ
//! only in the reqwest features the application asks for. Each must be built on
//! its own (`cargo test -p tls-app-default-features`), since features unify
//! across the packages of one cargo invocation.

use std::sync::Arc;

use sa360_video_sdk::video_session::{
    Credentials, Invitation, MemoryStore, Message, SessionId, VideoSessionClient,
};

/// The application: its own reqwest client first, then the SDK.
pub async fn run() -> Result<(), Box<dyn std::error::Error>> {
    let fake = sa360_video_fakes::VideoSessionFake::start_default().await?;

    // The application's own client, built before (and without) the SDK's.
    let own = reqwest::Client::builder().build()?;
    let status = own
        .get(format!("{}/", fake.base_url()))
        .send()
        .await?
        .status();
    assert!(status.as_u16() > 0);

    // Then the SDK, against the fake.
    let demo = fake.demo().clone();
    // An in-memory lockout store, named: the default (a per-user file) would write into the
    // home directory of whoever runs the test.
    let client = VideoSessionClient::builder(fake.base_url())
        .lockout_store(Arc::new(MemoryStore::new()))
        .build()?;
    let credentials = Credentials::new(demo.secret_key, demo.user_name, demo.password)?;
    let session = client.login(&credentials).send().await?;
    let invitation = Invitation::Email {
        to: "guest@example.com".parse()?,
        message: Some(Message::new("ready")?),
    };
    let receipt = client
        .send_invitation(&session, SessionId::new(demo.session_id)?, invitation)
        .send()
        .await?;
    assert_eq!(receipt.invitation_type, Some(3));

    // And another client of the application's own after the SDK's.
    reqwest::Client::new();
    Ok(())
}

#[tokio::main(flavor = "current_thread")]
pub async fn main() -> Result<(), Box<dyn std::error::Error>> {
    run().await
}

#[cfg(test)]
mod tests {
    #[tokio::test]
    async fn the_application_builds_its_own_client_first_and_uses_the_sdk() {
        super::run().await.expect("the application runs");
    }
}

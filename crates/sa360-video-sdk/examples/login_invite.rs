//! Logs in to the video session service and sends one session invitation.
//!
//! The client uses the default lockout store, a file in the per-user state directory
//! ([`FileStore::per_user`](sa360_video_sdk::video_session::FileStore::per_user)), so the count survives
//! restarts of this program and is shared by every program of the user on this host (and
//! `apictl`): a login whose failure could block the account (the 6th failure within 10 minutes)
//! is not sent, and the error says when trying again is safe.
//!
//! Run it against the local fakes (see `conversion_report.rs` for `apictl sandbox`):
//!
//! ```sh
//! cargo run -p sa360-video-sdk --example login_invite                                   # by e-mail
//! cargo run -p sa360-video-sdk --example login_invite -- --sms '+1 201 555 0123' US     # by SMS
//! ```
//!
//! Settings (environment): `VIDEO_SESSION_URL`, `VIDEO_SECRET_KEY`, `VIDEO_USER`,
//! `VIDEO_PASSWORD`, `VIDEO_SESSION_ID`.

use anyhow::{Context, bail};
use sa360_video_sdk::video_session::{
    CallExperience, Camera, Credentials, EmailAddress, Error, Invitation, Message, Microphone,
    MobileNumber, SessionId, VideoSessionClient,
};

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let env = |name| std::env::var(name).map_err(|_| anyhow::anyhow!("{name} is not set"));
    let args: Vec<String> = std::env::args().skip(1).collect();
    let invitation = match args.as_slice() {
        [] => Invitation::Email {
            to: EmailAddress::new("patient@example.com")?,
            message: Some(Message::new("Your video consultation is ready")?),
        },
        [flag, number, country] if flag == "--sms" => Invitation::Sms {
            to: MobileNumber::new(country.parse()?, number)?,
            message: Some(Message::new("Your video consultation is ready")?),
        },
        _ => bail!("usage: login_invite [--sms NUMBER COUNTRY]"),
    };

    // The default lockout store: the per-user file (build fails, naming `lockout_store`, when
    // this user has no usable state directory; it never falls back to memory).
    let client = VideoSessionClient::new(env("VIDEO_SESSION_URL")?)?;

    let credentials = Credentials::new(
        env("VIDEO_SECRET_KEY")?,
        env("VIDEO_USER")?,
        env("VIDEO_PASSWORD")?,
    )?;
    let session = match client.login(&credentials).send().await {
        Ok(session) => session,
        Err(refused @ Error::LockoutRefused { .. }) => {
            // Nothing was sent, so the account is not blocked; the message says until when.
            bail!("{refused}");
        }
        Err(other) => return Err(other).context("login"),
    };
    let user = session.user();
    println!(
        "logged in as {} ({} {}, {})",
        credentials.user_name(),
        user.first_name.as_deref().unwrap_or("-"),
        user.last_name.as_deref().unwrap_or("-"),
        user.domain_name.as_deref().unwrap_or("-"),
    );

    let experience = CallExperience::new()
        .microphone(Microphone::On)
        .camera(Camera::Front);
    let session_id = SessionId::new(env("VIDEO_SESSION_ID")?)?;
    let receipt = client
        .send_invitation(&session, session_id.clone(), invitation.clone())
        .experience(experience)
        .send()
        .await?;
    println!(
        "invitation sent by {} for session {session_id}, query string {}",
        invitation.channel(),
        receipt
            .query_string_parameter
            .as_deref()
            .unwrap_or("(none)")
    );
    Ok(())
}

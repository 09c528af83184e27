//! A first application that uses both services: it reads a 30-day conversion report, uploads
//! 1 000 conversions with one outcome per row, logs in to the video session service and sends
//! one invitation.
//!
//! [`main`] reads and checks the settings (typed ids, URLs, credentials) with `anyhow`.
//! Everything that talks to a service is in [`run`], whose error is an enum with one variant
//! per service: `?` works on every call, because each service answers with its own error
//! type.
//!
//! Run it against the local fakes:
//!
//! ```sh
//! cargo run -p sa360-video-cli -- sandbox > sandbox.env &     # both fakes; prints their settings
//! set -a; . ./sandbox.env; set +a
//! cargo run -p sa360-video-sdk --example first_application
//! ```
//!
//! Settings (environment): for search ads `GOOGLE_APPLICATION_CREDENTIALS` (Application Default
//! Credentials, as Google documents: a credentials file, else gcloud's `application-default`
//! login, else the metadata server), `SEARCH_ADS_AGENCY_ID`, `SEARCH_ADS_ADVERTISER_ID`, `SEARCH_ADS_CUSTOMER_ID`; for the video
//! service `VIDEO_SESSION_URL`, `VIDEO_SECRET_KEY`, `VIDEO_USER`, `VIDEO_PASSWORD`,
//! `VIDEO_SESSION_ID`. `SEARCH_ADS_URL` and `SEARCH_ADS_REPORTING_URL` point at the fakes; leave
//! them unset against Google.

use chrono::{DateTime, Utc};
use futures::TryStreamExt;
use sa360_video_sdk::search_ads::{
    self, AdvertiserId, AgencyId, Conversion, CustomerId, DateRange, DefaultCredentials, Outcome,
    SearchAdsClient, SegmentationId,
};
use sa360_video_sdk::video_session::{
    self, Credentials, EmailAddress, Invitation, SessionId, VideoSessionClient,
};

/// What can go wrong in [`run`]: one variant per service.
#[derive(Debug, thiserror::Error)]
enum AppError {
    #[error("search ads: {0}")]
    SearchAds(#[from] search_ads::Error),
    #[error("video session: {0}")]
    Video(#[from] video_session::Error),
}

/// The application's settings, read from the environment by [`main`].
struct Settings {
    google: DefaultCredentials,
    agency: AgencyId,
    advertiser: AdvertiserId,
    customer: CustomerId,
    video_url: String,
    credentials: Credentials,
    session_id: SessionId,
    invitee: EmailAddress,
}

async fn run(settings: Settings) -> Result<(), AppError> {
    // Search ads: one client for the v2 API and the Reporting API.
    // `SEARCH_ADS_URL` / `SEARCH_ADS_REPORTING_URL` point it at the fakes when set.
    let ads = SearchAdsClient::builder(settings.google)
        .endpoints_from_env()
        .build()?;
    let (agency, advertiser) = (settings.agency, settings.advertiser);

    // 1. The last 30 days of conversions, one row at a time.
    let dates = DateRange::last_days(30)?;
    let mut report = ads.conversion_report(settings.customer, dates).stream();
    let (mut count, mut revenue) = (0u64, 0i64);
    while let Some(conversion) = report.try_next().await? {
        count += 1;
        revenue += conversion.revenue_micros.map_or(0, |m| m.get());
    }
    println!("report: {count} conversions in the last 30 days, revenue {revenue} micros");

    // 2. Upload 1 000 conversions: one outcome per row, in input order.
    let now = DateTime::<Utc>::from(std::time::SystemTime::now());
    let run_id = now.timestamp_millis();
    let conversions: Vec<Conversion> = (0..1_000)
        .map(|i| Conversion {
            agency_id: Some(agency),
            advertiser_id: Some(advertiser),
            segmentation_id: Some(SegmentationId::new(551_234)), // a Floodlight activity
            ..Conversion::new(
                format!("first-app-{run_id}-{i}"),
                now - chrono::Duration::seconds(i),
            )
        })
        .collect();
    let upload = ads.insert(&conversions).send().await?;
    for (i, outcome) in upload.outcomes().iter().enumerate() {
        match outcome {
            outcome if outcome.is_stored() => {}
            Outcome::Rejected(issue) => println!("  row {}: rejected: {issue}", i + 1),
            other => println!("  row {}: {other:?}", i + 1),
        }
    }
    println!(
        "upload: {} rows, {} stored, {} rejected, {} without a definite answer",
        upload.len(),
        upload.stored() + upload.stored_earlier(),
        upload.rejected() + upload.invalid(),
        upload.failed()
    );

    // 3. Log in; the lockout guard never sends the login that could block the account. Its count
    // is in the default store, a file per user and host, so a second run of this program (or
    // any other program of the user, or `apictl`) within 10 minutes continues the same count.
    let video = VideoSessionClient::new(&settings.video_url)?;
    let session = video.login(&settings.credentials).send().await?;
    println!("login: signed in as {}", settings.credentials.user_name());

    // 4. One invitation, by e-mail.
    let invitation = Invitation::Email {
        to: settings.invitee,
        message: None,
    };
    let session_id = settings.session_id;
    video
        .send_invitation(&session, session_id.clone(), invitation.clone())
        .send()
        .await?;
    println!(
        "invitation: sent by {} for session {session_id}",
        invitation.channel()
    );
    Ok(())
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let env = |name| std::env::var(name).map_err(|_| anyhow::anyhow!("{name} is not set"));
    let settings = Settings {
        google: DefaultCredentials::new()?,
        agency: env("SEARCH_ADS_AGENCY_ID")?.parse()?,
        advertiser: env("SEARCH_ADS_ADVERTISER_ID")?.parse()?,
        customer: CustomerId::new(env("SEARCH_ADS_CUSTOMER_ID")?)?,
        video_url: env("VIDEO_SESSION_URL")?,
        credentials: Credentials::new(
            env("VIDEO_SECRET_KEY")?,
            env("VIDEO_USER")?,
            env("VIDEO_PASSWORD")?,
        )?,
        session_id: SessionId::new(env("VIDEO_SESSION_ID")?)?,
        invitee: EmailAddress::new("patient@example.com")?,
    };
    run(settings).await?;
    Ok(())
}

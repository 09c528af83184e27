//! `apictl ads availability`: mark Floodlight activities as uploaded up to a time.

use chrono::{DateTime, Utc};
use sa360_video_sdk::search_ads::{
    AdvertiserId, AgencyId, Availability, SegmentationId, WriteOptions,
};
use serde_json::json;

use super::conn::{Conn, parse_id};
use crate::cli::AvailabilityArgs;
use crate::context::{Ctx, print_json};
use crate::error::{AppError, AppResult};

fn parse_time(text: &str) -> AppResult<DateTime<Utc>> {
    let t = text.trim();
    let parsed = if !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit()) {
        t.parse::<i64>()
            .ok()
            .and_then(DateTime::from_timestamp_millis)
    } else {
        DateTime::parse_from_rfc3339(t)
            .ok()
            .map(|d| d.with_timezone(&Utc))
    };
    parsed.ok_or_else(|| {
        AppError::refused(format!("--until {text:?} is not a time"))
            .hint("use RFC 3339 (2024-06-01T10:00:00Z) or epoch milliseconds")
    })
}

/// Availabilities for the given activities, all at `until`.
pub fn availabilities(
    agency: AgencyId,
    advertiser: AdvertiserId,
    until: DateTime<Utc>,
    ids: &[SegmentationId],
    names: &[String],
) -> Vec<Availability> {
    let base = Availability::new(agency, advertiser, until);
    ids.iter()
        .map(|id| Availability {
            segmentation_id: Some(*id),
            ..base.clone()
        })
        .chain(names.iter().map(|name| Availability {
            segmentation_name: Some(name.clone()),
            ..base.clone()
        }))
        .collect()
}

/// One line per availability: `FLOODLIGHT 551234 uploaded up to 2024-...`.
pub fn describe_availability(a: &Availability) -> String {
    let activity = match (&a.segmentation_id, &a.segmentation_name) {
        (Some(id), Some(name)) => format!("{id} ({name})"),
        (Some(id), None) => id.to_string(),
        (None, Some(name)) => format!("{name:?}"),
        (None, None) => "(no activity)".to_owned(),
    };
    format!(
        "{} activity {activity}: all conversions up to {} marked uploaded",
        a.segmentation_type,
        a.availability_timestamp
            .to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
    )
}

/// Runs `apictl ads availability`.
pub(super) async fn run_availability(
    ctx: &Ctx,
    conn: &Conn<'_>,
    args: &AvailabilityArgs,
) -> AppResult<u8> {
    let (agency, advertiser) = conn.advertiser_scope()?;
    let until = match &args.until {
        Some(t) => parse_time(t)?,
        None => DateTime::<Utc>::from(std::time::SystemTime::now()),
    };
    let ids = args
        .segmentation_id
        .iter()
        .map(|t| parse_id("segmentation-id", t))
        .collect::<AppResult<Vec<SegmentationId>>>()?;
    let wanted = availabilities(agency, advertiser, until, &ids, &args.segmentation_name);
    let client = conn.client(WriteOptions::default())?;
    let echo = client.update_availability(wanted.to_vec()).send().await?;
    if ctx.json {
        print_json(&json!({ "availabilities": echo }))?;
    } else {
        for a in &echo {
            crate::output::sayln!("{}", describe_availability(a))?;
        }
    }
    Ok(0)
}

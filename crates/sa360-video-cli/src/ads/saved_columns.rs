//! `apictl ads saved-columns`: the advertiser's saved columns.

use sa360_video_sdk::search_ads::WriteOptions;
use serde_json::json;

use super::conn::Conn;
use crate::context::{Ctx, print_json};
use crate::error::AppResult;

/// Runs `apictl ads saved-columns`.
pub(super) async fn run_saved_columns(ctx: &Ctx, conn: &Conn<'_>) -> AppResult<u8> {
    let (agency, advertiser) = conn.advertiser_scope()?;
    let client = conn.client(WriteOptions::default())?;
    let columns = client.saved_columns(agency, advertiser).send().await?;
    if ctx.json {
        let items: Vec<_> = columns
            .iter()
            .map(|c| json!({"name": c.name, "type": c.column_type}))
            .collect();
        print_json(&json!({ "savedColumns": items }))?;
    } else if columns.is_empty() {
        crate::output::outln!("advertiser {advertiser} has no saved columns")?;
    } else {
        let width = columns.iter().map(|c| c.name.len()).max().unwrap_or(0);
        for c in &columns {
            crate::output::outln!(
                "{:<width$}  {}",
                c.name,
                c.column_type.as_deref().unwrap_or("-")
            )?;
        }
    }
    Ok(0)
}

//! `apictl ads id-mapping`: the advertiser's ID-mapping file.

use std::sync::Arc;

use indicatif::ProgressBar;
use sa360_video_sdk::search_ads::{ProgressFn, WriteOptions};
use serde_json::json;

use super::conn::Conn;
use crate::cli::IdMappingArgs;
use crate::context::{Ctx, print_json};
use crate::error::AppResult;
use crate::progress;

/// A progress callback that moves a byte bar.
pub fn byte_progress(bar: &ProgressBar) -> ProgressFn {
    let bar = bar.clone();
    Arc::new(move |bytes, total| {
        if let Some(total) = total
            && bar.length() != Some(total)
        {
            bar.set_length(total);
        }
        bar.set_position(bytes);
    })
}

/// Runs `apictl ads id-mapping`.
pub(super) async fn run_id_mapping(
    ctx: &Ctx,
    conn: &Conn<'_>,
    args: &IdMappingArgs,
) -> AppResult<u8> {
    let (agency, advertiser) = conn.advertiser_scope()?;
    let client = conn.client(WriteOptions::default())?;
    let bar = progress::bytes("id mapping");
    let result = client
        .id_mapping(agency, advertiser)
        .progress_shared(byte_progress(&bar))
        .save(&args.output)
        .await;
    bar.finish_and_clear();
    let bytes = result?;
    if ctx.json {
        print_json(&json!({"output": args.output.display().to_string(), "bytes": bytes}))?;
    } else {
        crate::output::sayln!(
            "wrote the ID mapping of advertiser {advertiser} ({bytes} bytes) to {}",
            args.output.display()
        )?;
    }
    Ok(0)
}

//! `apictl ads customers`: the customers the credentials reach.

use sa360_video_sdk::search_ads::{CustomerId, WriteOptions};
use serde_json::json;

use super::conn::Conn;
use crate::context::{Ctx, print_json};
use crate::error::AppResult;

/// Runs `apictl ads customers`.
pub(super) async fn run_customers(ctx: &Ctx, conn: &Conn<'_>) -> AppResult<u8> {
    let client = conn.client(WriteOptions::default())?;
    let customers = client.accessible_customers().send().await?;
    if ctx.json {
        let ids: Vec<&str> = customers.iter().map(CustomerId::as_str).collect();
        print_json(&json!({ "customers": ids }))?;
    } else if customers.is_empty() {
        crate::output::outln!("the credentials reach no customer directly")?;
    } else {
        for c in &customers {
            crate::output::outln!("{c}")?;
        }
    }
    Ok(0)
}

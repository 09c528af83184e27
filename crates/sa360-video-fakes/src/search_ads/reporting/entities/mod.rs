//! The rows of the resources the fake serves in `FROM` besides `conversion` (DECISIONS SR-22):
//! the account's seeded campaigns and ad groups (the ones of the ID-mapping file, with their new
//! IDs, SR-12) and the synthetic campaigns of `report_campaigns` after them, their budgets and portfolio bidding strategies, the ads and keywords of the ad
//! groups (the `adId` / `criterionId` of the seeded conversions), the conversion actions (the
//! configured Floodlight activities), labels and their links ([`links`]), and the visits behind
//! the stored conversions ([`visits`]). Attributes are in [`attributes`]; metrics are summed from
//! [`cells`], one row per entity and selected segment tuple ("If you request segments, additional
//! rows are included for each segment-resource tuple",
//! <https://developers.google.com/search-ads/reporting/query/query-language>).
//!
//! Metrics cover the days of the query's date filter within the event-level window (the fake holds
//! no conversions before it); without a date filter, the whole window. Segments the fake computes:
//! `date`, `week`, `month`, `quarter`, `year`, `day_of_week`, `device`; another selectable segment
//! has no value (it meets only `IS NULL`, SR-16 c). Metrics it computes: `impressions`, `clicks`,
//! `cost_micros`, `conversions`, `ctr`, `average_cpc` (for `conversion_action`, `conversions`
//! only). Each row carries the `FROM` resource's `resource_name` even when not selected (the
//! query-language page: "Rows are populated with the selected fields (including the given
//! campaign's resource_name)").

mod attributes;
pub(crate) mod cells;
pub(crate) mod cursor;
pub(crate) mod json;
mod links;
mod model;
mod report;
#[cfg(test)]
mod tests;
mod visits;

pub(crate) use self::model::{Account, EntityRow};
pub(crate) use self::report::Report;

use self::cells::Sums;
use self::model::{Dims, matches, measured, order};
use super::failure::Failure;
use super::query::ConversionQuery;
use crate::search_ads::state::AppState;

/// Every row of `query` (a query of a served resource other than `conversion`) for account `a`,
/// filtered and ordered; the metrics cover `query.start..=query.end`.
pub(crate) fn rows(
    app: &AppState,
    a: usize,
    query: &ConversionQuery,
) -> Result<Vec<EntityRow>, Failure> {
    let account = Account::new(app, a, query.from);
    let rows: Vec<EntityRow> = match query.from {
        "visit" => visits::rows(app, a, query, &Dims::new(&query.select))?,
        from if links::serves(from) => links::entities(from)
            .into_iter()
            .map(|e| EntityRow {
                key: Dims::new(&[]).key(e, None, None),
                sums: Sums::default(),
                visit: None,
            })
            .collect(),
        _ => measured(app, a, query)?
            .into_iter()
            .map(|(key, sums)| EntityRow {
                key,
                sums,
                visit: None,
            })
            .collect(),
    };
    let mut rows: Vec<EntityRow> = rows
        .into_iter()
        .filter(|row| matches(&account, query, row))
        .collect();
    order(&account, query, &mut rows);
    Ok(rows)
}

/// The summary row of a report whose rows' metrics sum to `sums`: the selected metrics, with
/// ratios computed from the sums, and no attribute or segment (SR-33 c).
pub(crate) fn summary_row(
    app: &AppState,
    a: usize,
    query: &ConversionQuery,
    sums: Sums,
) -> serde_json::Value {
    let account = Account::new(app, a, query.from);
    let total = EntityRow {
        key: Dims::new(&[]).key(model::Entity::default(), None, None),
        sums,
        visit: None,
    };
    let mut metrics = serde_json::Map::new();
    for field in query.select.iter().filter(|f| f.starts_with("metrics.")) {
        if let Some(value) = account.value(&total, field) {
            metrics.insert(super::row::json_path(field).1, value.json());
        }
    }
    if metrics.is_empty() {
        serde_json::json!({})
    } else {
        serde_json::json!({ "metrics": metrics })
    }
}

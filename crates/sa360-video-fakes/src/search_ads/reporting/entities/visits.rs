//! `FROM visit` (DECISIONS SR-22): the visits behind the stored conversions. A conversion's visit
//! is the click it carries (`conversion.click_id`, a click the fake issued for seeded conversion
//! `i`, `data::click_origin`); one row per click, whichever conversions (seeded or inserted, any
//! status) carry it. The visit happened at the click's time (`Generator::click_timestamp`, an hour
//! before seeded conversion `i`), in the ad group, on the ad and keyword of seeded conversion `i`,
//! so `visit.click_id`, `visit.ad_id`, `visit.criterion_id` and the attributed `campaign`,
//! `ad_group`, `ad_group_criterion` agree with the conversions of that click. A visit is reported
//! on the day of its click, from conversions up to a day later, on the device of seeded conversion
//! `i` (`segments.device`, which the visit page lists); conversions without a click, or
//! with a click of another account, have no visit. Nothing is stored: the visits of a request are
//! found from the conversions of its date range, at most `MAX_SORTED_ROWS` of them (more is
//! `RESPONSE_SIZE_LIMIT_EXCEEDED`, the bound of the sorted conversion report, SR-16 f).

use std::collections::BTreeSet;

use chrono::{DateTime, NaiveDate};

use axum::http::StatusCode;

use super::super::failure::Failure;
use super::super::query::ConversionQuery;
use super::super::row::Field;
use super::super::rows::IdTranslator;
use super::super::sorted::MAX_SORTED_ROWS;
use super::cells::{self, SLOTS, Sums};
use super::model::{Dims, Entity, EntityRow, Visit};
use crate::search_ads::data::{self, CLICKS_PER_ACCOUNT, Generator};
use crate::search_ads::state::AppState;

/// `visit.id` of click number `n`: this base plus `n`.
const VISIT_BASE: i64 = 6_000_000_000_000_000;

/// The visits of account `a` whose day is in `query.start..=query.end`, one row each, in click
/// order.
pub(super) fn rows(
    app: &AppState,
    a: usize,
    query: &ConversionQuery,
    dims: &Dims,
) -> Result<Vec<EntityRow>, Failure> {
    let seed = app.config.seed;
    let mut clicks = BTreeSet::new();
    let mut over = false;
    let until = query.end.succ_opt().unwrap_or(query.end);
    cells::each_conversion(app, a, query.start, until, |row| {
        if let Some((account, i)) = row
            .text(Field::ClickId)
            .and_then(|click| data::click_origin(seed, click))
            && account == a
            && !over
        {
            clicks.insert(i);
            over = clicks.len() > MAX_SORTED_ROWS;
        }
    });
    if over {
        // The bound the sorted conversion report has (SR-16 f): a limit of the fake.
        return Err(Failure::new(
            StatusCode::BAD_REQUEST,
            "sizeLimitError",
            "RESPONSE_SIZE_LIMIT_EXCEEDED",
            format!("More than {MAX_SORTED_ROWS} visits; narrow the date range."),
        ));
    }
    let generator = Generator {
        config: &app.config,
    };
    let ids = IdTranslator::new(app);
    let offset = data::id_offset(seed);
    let customer = &app.config.accounts[a].customer_id;
    let mut out = Vec::with_capacity(clicks.len());
    for i in clicks {
        let Some(time) = DateTime::from_timestamp_millis(generator.click_timestamp(a, i)) else {
            continue;
        };
        let day: NaiveDate = time.date_naive();
        if day < query.start || day > query.end {
            continue;
        }
        let seeded = generator.conversion(a, i);
        let Some((_, c, g)) = seeded
            .ad_group_id
            .parse()
            .ok()
            .and_then(|id| data::seeded_ad_group_of(seed, app.config.accounts.len(), id))
        else {
            continue;
        };
        let (Ok(ad_id), Ok(criterion_id)) = (seeded.ad_id.parse(), seeded.criterion_id.parse())
        else {
            continue;
        };
        let s = u64::try_from(ad_id - data::ad_id(offset, a, c, g, 0))
            .ok()
            .filter(|s| *s < SLOTS as u64);
        let Some(group) = ids.ad_group(data::ad_group_id(offset, a, c, g)) else {
            continue;
        };
        let n = a as u64 * CLICKS_PER_ACCOUNT + i;
        let id = VISIT_BASE + n as i64;
        let e = Entity {
            c: Some(c),
            g: Some(g),
            s,
            visit: Some(i),
            ..Entity::default()
        };
        out.push(EntityRow {
            // The device of the seeded conversion of this click (the one the cells count).
            key: dims.key(
                e,
                Some(day),
                Some(cells::device_of(generator.seeded_ds_id(a, i))),
            ),
            sums: Sums::default(),
            visit: Some(Box::new(Visit {
                id,
                resource_name: format!("customers/{customer}/visits/{group}~{criterion_id}~{id}"),
                click_id: data::click_id(seed, n),
                date_time: time.format("%Y-%m-%d %H:%M:%S%.6f+00:00").to_string(),
                ad_id,
                criterion_id,
            })),
        });
    }
    Ok(out)
}

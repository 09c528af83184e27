//! The performance of one ad group on one day on one device (a *cell*), the unit every metric of a
//! `FROM customer | campaign | ad_group` report is summed from (DECISIONS SR-22).
//!
//! A cell's conversions are the conversions the `FROM conversion` report returns for that ad group
//! and day (stored and seeded, `ENABLED` only), each given a device by its id; the cell's clicks are
//! those conversions plus seeded extra clicks, its impressions the clicks plus seeded extra
//! impressions, its cost the clicks times a seeded cost per click in micros. So in every cell, and
//! in every sum of cells, `impressions ≥ clicks ≥ conversions` and `cost_micros` is integral; a
//! report segmented by day sums to the same report unsegmented, because both are sums of the same
//! cells. Nothing is stored: the cells of a request are computed from the seed and the conversions
//! of its date range, at most `ad groups × days × devices` of them.

use std::collections::HashMap;

use chrono::{Datelike, NaiveDate};

use super::super::query::ConversionQuery;
use super::super::query::dates::Bounds;
use super::super::row::Field;
use super::super::rows::{self, IdTranslator};
use crate::search_ads::data::{self, AD_GROUPS, CAMPAIGNS};
use crate::search_ads::state::AppState;

/// The devices a cell is split into (`segments.device` values of discovery).
pub(crate) const DEVICES: [&str; 3] = ["DESKTOP", "MOBILE", "TABLET"];

/// The sums of one or more cells.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Sums {
    pub impressions: i64,
    pub clicks: i64,
    pub cost_micros: i64,
    pub conversions: i64,
}

impl Sums {
    pub(crate) fn add(&mut self, other: Sums) {
        self.impressions += other.impressions;
        self.clicks += other.clicks;
        self.cost_micros += other.cost_micros;
        self.conversions += other.conversions;
    }
}

/// A cell's place: campaign and ad-group numbers of the account, the day, the device number.
pub(crate) type Place = (u64, u64, NaiveDate, usize);

fn mix(mut x: u64) -> u64 {
    // splitmix64's finalizer: a fixed, well-spread hash of the inputs.
    x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

fn hash(seed: u64, a: usize, place: Place, salt: u64) -> u64 {
    let (c, g, day, device) = place;
    let day = u64::try_from(day.num_days_from_ce()).unwrap_or(0);
    mix(seed ^ mix(a as u64 ^ mix(c ^ mix(g ^ mix(day ^ mix(device as u64 ^ mix(salt)))))))
}

/// The device of a conversion: fixed by its id.
pub(crate) fn device_of(conversion_id: i64) -> usize {
    (mix(conversion_id as u64) % DEVICES.len() as u64) as usize
}

/// The sums of one cell that holds `conversions` conversions.
pub(crate) fn cell(seed: u64, a: usize, place: Place, conversions: i64) -> Sums {
    let extra_clicks = (hash(seed, a, place, 1) % 40) as i64;
    let clicks = conversions + extra_clicks;
    let impressions = clicks + (hash(seed, a, place, 2) % 900) as i64;
    let cpc_micros = (20 + (hash(seed, a, place, 3) % 180) as i64) * 10_000;
    Sums {
        impressions,
        clicks,
        cost_micros: clicks * cpc_micros,
        conversions,
    }
}

/// The conversions of account `a` from `start` to `end` (inclusive) per cell, read from the same
/// rows the conversion report returns.
pub(crate) fn conversions(
    app: &AppState,
    a: usize,
    start: NaiveDate,
    end: NaiveDate,
) -> HashMap<Place, i64> {
    let mut out = HashMap::new();
    if start > end {
        return out;
    }
    let ids = IdTranslator::new(app);
    let offset = data::id_offset(app.config.seed);
    let mut groups = HashMap::new();
    for c in 0..CAMPAIGNS {
        for g in 0..AD_GROUPS {
            if let Some(id) = ids.ad_group(data::ad_group_id(offset, a, c, g)) {
                groups.insert(id, (c, g));
            }
        }
    }
    let query = ConversionQuery {
        from: "conversion",
        select: Vec::new(),
        filters: Vec::new(),
        order: Vec::new(),
        limit: None,
        bounds: Bounds::default(),
        start,
        end,
    };
    const CHUNK: usize = 10_000;
    let mut cursor = None;
    loop {
        let page = rows::rows_after(app, a, &query, cursor, CHUNK);
        for row in &page {
            let Some(&(c, g)) = row.int(Field::AdGroupId).and_then(|id| groups.get(&id)) else {
                continue; // a conversion of no seeded ad group belongs to no served entity
            };
            if row.status() != "ENABLED" {
                continue;
            }
            let Some(day) = chrono::DateTime::from_timestamp_millis(row.key.0) else {
                continue;
            };
            let place = (c, g, day.date_naive(), device_of(row.key.1));
            *out.entry(place).or_insert(0) += 1;
        }
        match page.last() {
            Some(last) if page.len() == CHUNK => cursor = Some(last.key),
            _ => return out,
        }
    }
}

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
use super::super::row::{Field, Row};
use super::super::rows::{self, IdTranslator};
use crate::search_ads::data::{self, AD_GROUPS, ADS, CAMPAIGNS};
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

/// The seeded parts of a cell: clicks beyond its conversions, impressions beyond its clicks, and
/// the cost of one click.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Parts {
    pub extra_clicks: i64,
    pub extra_impressions: i64,
    pub cpc_micros: i64,
}

impl Parts {
    /// The sums of `conversions` conversions, `extra_clicks` and `extra_impressions` at this
    /// cell's cost per click.
    fn sums(self, conversions: i64, extra_clicks: i64, extra_impressions: i64) -> Sums {
        let clicks = conversions + extra_clicks;
        Sums {
            impressions: clicks + extra_impressions,
            clicks,
            cost_micros: clicks * self.cpc_micros,
            conversions,
        }
    }
}

/// The seeded parts of the cell at `place`.
pub(crate) fn parts(seed: u64, a: usize, place: Place) -> Parts {
    Parts {
        extra_clicks: (hash(seed, a, place, 1) % 40) as i64,
        extra_impressions: (hash(seed, a, place, 2) % 900) as i64,
        cpc_micros: (20 + (hash(seed, a, place, 3) % 180) as i64) * 10_000,
    }
}

/// The sums of one cell that holds `conversions` conversions.
pub(crate) fn cell(seed: u64, a: usize, place: Place, conversions: i64) -> Sums {
    let p = parts(seed, a, place);
    p.sums(conversions, p.extra_clicks, p.extra_impressions)
}

/// The ads (or keywords) of an ad group a cell is split between.
pub(crate) const SLOTS: usize = ADS as usize;

/// Which children of an ad group a cell is split between (each with its own weights).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Split {
    Ads,
    Keywords,
}

/// The cell at `place` split between the ad group's ads or keywords: each child gets its own
/// conversions (`conversions[s]`, the conversions of that ad or keyword), and a share of the
/// cell's extra clicks and extra impressions by seeded weights 1..=4 of the child (integer
/// shares, the remainder to the first child), at the cell's cost per click. So the children's
/// sums are exactly the cell's, and each child has `impressions ≥ clicks ≥ conversions`.
pub(crate) fn split(
    seed: u64,
    a: usize,
    place: Place,
    how: Split,
    conversions: &[i64; SLOTS],
) -> [Sums; SLOTS] {
    let p = parts(seed, a, place);
    let (c, g, _, _) = place;
    let salt = match how {
        Split::Ads => 0xAD,
        Split::Keywords => 0x4B,
    };
    let weights: [i64; SLOTS] = std::array::from_fn(|s| {
        1 + (mix(seed ^ mix(a as u64 ^ mix(c ^ mix(g ^ mix(s as u64 ^ mix(salt)))))) % 4) as i64
    });
    let shares = |total: i64| -> [i64; SLOTS] {
        let sum: i64 = weights.iter().sum();
        let mut out: [i64; SLOTS] = std::array::from_fn(|s| total * weights[s] / sum);
        out[0] += total - out.iter().sum::<i64>();
        out
    };
    let (clicks, impressions) = (shares(p.extra_clicks), shares(p.extra_impressions));
    std::array::from_fn(|s| p.sums(conversions[s], clicks[s], impressions[s]))
}

/// The conversions of one cell: in all, and per ad and per keyword of the ad group.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Counts {
    pub total: i64,
    pub ads: [i64; SLOTS],
    pub keywords: [i64; SLOTS],
}

/// The conversions of a date range: per cell, and per (day, device, conversion action number).
#[derive(Debug, Default)]
pub(crate) struct Tally {
    pub cells: HashMap<Place, Counts>,
    pub actions: HashMap<(NaiveDate, usize, usize), i64>,
}

impl Tally {
    /// The conversions of the cell at `place`.
    pub(crate) fn at(&self, place: &Place) -> Counts {
        self.cells.get(place).copied().unwrap_or_default()
    }
}

/// The conversions of account `a` from `start` to `end` (inclusive) per cell, read from the same
/// rows the conversion report returns. A conversion counts for its ad (`conversion.ad_id`) and its
/// keyword (`conversion.criterion_id`) when they are one of its ad group's seeded ads / keywords,
/// else for the first; and for its conversion action when its Floodlight activity is configured.
pub(crate) fn conversions(app: &AppState, a: usize, start: NaiveDate, end: NaiveDate) -> Tally {
    let mut out = Tally::default();
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
    each_conversion(app, a, start, end, |row| {
        let Some(&(c, g)) = row.int(Field::AdGroupId).and_then(|id| groups.get(&id)) else {
            return; // a conversion of no seeded ad group belongs to no served entity
        };
        if row.status() != "ENABLED" {
            return;
        }
        let Some(day) = chrono::DateTime::from_timestamp_millis(row.key.0) else {
            return;
        };
        let (day, device) = (day.date_naive(), device_of(row.key.1));
        let slot = |id: Option<i64>, first: i64| {
            id.and_then(|id| usize::try_from(id.checked_sub(first)?).ok())
                .filter(|s| *s < SLOTS)
                .unwrap_or(0)
        };
        let counts = out.cells.entry((c, g, day, device)).or_default();
        counts.total += 1;
        counts.ads[slot(row.int(Field::AdId), data::ad_id(offset, a, c, g, 0))] += 1;
        counts.keywords[slot(
            row.int(Field::CriterionId),
            data::criterion_id(offset, a, c, g, 0),
        )] += 1;
        if let Some(k) = row.action().and_then(|id| {
            app.config
                .floodlight_activities
                .iter()
                .position(|f| f.id == id)
        }) {
            *out.actions.entry((day, device, k)).or_insert(0) += 1;
        }
    });
    out
}

/// Calls `f` with every conversion of account `a` from `start` to `end` (inclusive), any status:
/// the rows the conversion report returns, read in chunks (nothing is kept).
pub(crate) fn each_conversion(
    app: &AppState,
    a: usize,
    start: NaiveDate,
    end: NaiveDate,
    mut f: impl FnMut(&Row),
) {
    if start > end {
        return;
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
        page.iter().for_each(&mut f);
        match page.last() {
            Some(last) if page.len() == CHUNK => cursor = Some(last.key),
            _ => return,
        }
    }
}

//! The rows of a `FROM conversion` query: the v2 fake's conversions of one account, in the Reporting
//! API's shape, with the new campaign and ad-group IDs of the ID-mapping file (SR-12).
//!
//! Rows are ordered by (conversion timestamp, `conversion.id`) and read from a cursor (the last row's
//! key), so a page never recomputes the rows before it: seeded rows are found by binary search on
//! their increasing timestamps, stored (inserted) rows through the account's timestamp index.

use chrono::{DateTime, NaiveDate};

use super::query::ConversionQuery;
use super::query::Filter;
use super::query::catalogue::{self, DataType};
use super::query::parser::Op;
pub(crate) use super::row::RowKey;
use super::row::{AccountCells, Field, Row, V2};
use crate::search_ads::data::{
    self, Congruence, DAY_MS, Generator, IdFilter, day_start_ms, filter_congruence,
    seeded_conversion_id,
};
use crate::search_ads::id_mapping::plan::IdMappingPlan;
use crate::search_ads::ledger::ConversionKey;
use crate::search_ads::state::AppState;

/// Translation of legacy campaign / ad-group IDs to the new ones.
pub(crate) struct IdTranslator<'a> {
    app: &'a AppState,
    plans: Vec<Option<IdMappingPlan>>,
}

impl<'a> IdTranslator<'a> {
    pub(crate) fn new(app: &'a AppState) -> Self {
        let plans = app
            .config
            .accounts
            .iter()
            .map(|a| {
                IdMappingPlan::new(
                    app.config.seed,
                    &app.config.accounts,
                    a.agency_id,
                    a.advertiser_id,
                    crate::search_ads::config::IdMappingSize::Rows(0),
                )
            })
            .collect();
        Self { app, plans }
    }

    fn plan(&self, a: usize) -> Option<&IdMappingPlan> {
        self.plans.get(a)?.as_ref()
    }

    /// New campaign ID of a legacy one (only the seeded campaigns are in the file).
    pub(crate) fn campaign(&self, legacy: i64) -> Option<i64> {
        let (a, c) = data::seeded_campaign_of(self.app.config.seed, self.plans.len(), legacy)?;
        Some(self.plan(a)?.seeded_new_ids(a, c, 0)?.0)
    }

    /// New ad-group ID of a legacy one.
    pub(crate) fn ad_group(&self, legacy: i64) -> Option<i64> {
        let (a, c, g) = data::seeded_ad_group_of(self.app.config.seed, self.plans.len(), legacy)?;
        Some(self.plan(a)?.seeded_new_ids(a, c, g)?.1)
    }

    /// New (campaign, ad group) IDs of campaign `c`, ad group `g` of account `a`, seeded or
    /// synthetic (SR-22).
    pub(crate) fn new_ids(&self, a: usize, c: u64, g: u64) -> Option<(i64, i64)> {
        self.plan(a)?.new_ids(a, c, g)
    }

    /// Legacy campaign ID of new campaign `id` in account `a`.
    fn legacy_campaign(&self, a: usize, id: i64) -> Option<i64> {
        let c = self.plan(a)?.seeded_campaign_of_new(a, id)?;
        Some(data::campaign_id(
            data::id_offset(self.app.config.seed),
            a,
            c,
        ))
    }

    /// Legacy ad-group ID of new ad group `id` in account `a`.
    fn legacy_ad_group(&self, a: usize, id: i64) -> Option<i64> {
        let (c, g) = self.plan(a)?.seeded_ad_group_of_new(a, id)?;
        Some(data::ad_group_id(
            data::id_offset(self.app.config.seed),
            a,
            c,
            g,
        ))
    }
}

/// The row of a v2 conversion, with the new IDs of the ID-mapping file (SR-12).
fn to_row(ids: &IdTranslator<'_>, v2: Option<V2<'_>>) -> Option<Row> {
    let v2 = v2?;
    DateTime::from_timestamp_millis(v2.timestamp)?;
    let campaign = v2.campaign_id.and_then(|c| ids.campaign(c));
    let ad_group = v2.ad_group_id.and_then(|g| ids.ad_group(g));
    Some(Row::new(&v2, campaign, ad_group))
}

/// A query's conditions, each resolved to the row field it reads, once per page.
pub(crate) struct Conditions<'q> {
    filters: Vec<(Option<Field>, DataType, &'q Filter)>,
}

impl<'q> Conditions<'q> {
    pub(crate) fn new(query: &'q ConversionQuery) -> Self {
        Self {
            filters: query
                .filters
                .iter()
                // A range condition on segments.date is exactly the day range the rows are read
                // from (`query.start..=query.end` is the intersection of all of them).
                .filter(|f| {
                    !(f.field == "segments.date"
                        && matches!(
                            f.op,
                            Op::Eq | Op::Lt | Op::Gt | Op::Le | Op::Ge | Op::Between | Op::During
                        ))
                })
                .map(|f| {
                    let t = catalogue::field(&f.field).map_or(DataType::String, |i| i.data_type);
                    (Field::parse(&f.field), t, f)
                })
                .collect(),
        }
    }

    /// Whether a row meets every condition (a field the fake never fills has no value: it meets
    /// only `IS NULL`).
    pub(crate) fn matches(&self, row: &Row, account: &AccountCells<'_>) -> bool {
        self.filters.iter().all(|(field, t, filter)| {
            let value = field.and_then(|f| row.value(f, *t, account));
            filter.holds(value.as_ref())
        })
    }
}

/// The seeded-row congruence implied by single-valued id conditions (an optimization: every row is
/// still checked by [`matches`]).
fn congruence(
    app: &AppState,
    ids: &IdTranslator<'_>,
    a: usize,
    query: &ConversionQuery,
) -> Congruence {
    let seed = app.config.seed;
    let mut congruence = Congruence::ALL;
    let fixed = [
        "campaign.id",
        "ad_group.id",
        "conversion.ad_id",
        "conversion.criterion_id",
    ]
    .into_iter()
    .flat_map(|field| query.fixed_int(field).map(move |v| (field, v)));
    for (field, value) in fixed {
        let value = &value;
        let legacy = match field {
            "campaign.id" => ids
                .legacy_campaign(a, *value)
                .map(|l| filter_congruence(seed, a, IdFilter::Campaign, l)),
            "ad_group.id" => ids
                .legacy_ad_group(a, *value)
                .map(|l| filter_congruence(seed, a, IdFilter::AdGroup, l)),
            "conversion.ad_id" => Some(filter_congruence(seed, a, IdFilter::Ad, *value)),
            "conversion.criterion_id" => {
                Some(filter_congruence(seed, a, IdFilter::Criterion, *value))
            }
            _ => continue,
        };
        congruence = congruence.and(legacy.unwrap_or(Congruence::Empty));
    }
    congruence
}

/// Up to `want` rows of account `a` after `cursor` (exclusive), in order.
pub(crate) fn rows_after(
    app: &AppState,
    a: usize,
    query: &ConversionQuery,
    cursor: Option<RowKey>,
    want: usize,
) -> Vec<Row> {
    let config = &app.config;
    let account = &config.accounts[a];
    let generator = Generator { config };
    let ids = IdTranslator::new(app);
    let (lo, hi) = generator.index_range(query.start, query.end);
    let congruence = congruence(app, &ids, a, query);
    let after = |key: RowKey| cursor.is_none_or(|c| key > c);
    let conditions = Conditions::new(query);
    let cells = AccountCells {
        account,
        manager_id: &config.reporting.manager_customer_id,
    };

    // Seeded rows: the first index whose key is after the cursor, by binary search.
    let mut start = lo;
    if let Some((ts, ds)) = cursor {
        let (mut l, mut h) = (lo, hi);
        while l < h {
            let mid = l + (h - l) / 2;
            if (generator.timestamp(a, mid), generator.seeded_ds_id(a, mid)) <= (ts, ds) {
                l = mid + 1;
            } else {
                h = mid;
            }
        }
        start = l;
    }
    let store = app.shared.store();
    let overrides = store.seeded_overrides.get(a).copied().unwrap_or(0) > 0;
    let mut seeded = Vec::new();
    let mut k = congruence.count(lo, start);
    while seeded.len() < want {
        let Some(i) = congruence.nth_from(lo, k) else {
            break;
        };
        if i >= hi {
            break;
        }
        k += 1;
        let stored = overrides
            .then(|| {
                store.conversions.get(&(
                    ConversionKey::advertiser(
                        account.advertiser_id,
                        seeded_conversion_id(account, i),
                    ),
                    generator.timestamp(a, i),
                ))
            })
            .flatten();
        let row = match stored {
            Some(stored) => to_row(&ids, V2::from_record(&stored.record)),
            None => to_row(&ids, V2::from_seeded(&generator.conversion(a, i))),
        };
        if let Some(row) = row
            && conditions.matches(&row, &cells)
        {
            seeded.push(row);
        }
    }
    // Stored rows shown by this account, in the date range, after the cursor.
    let mut inserted = Vec::new();
    if let Some(view) = store.views.get(a) {
        let ts_lo = cursor.map_or(day_start_ms(query.start), |(ts, _)| {
            ts.max(day_start_ms(query.start))
        });
        let ts_hi = day_start_ms(query.end) + DAY_MS;
        for (_, key) in view.range((ts_lo, String::new())..(ts_hi, String::new())) {
            if let Some(stored) = store.conversions.get(key)
                && let Some(row) = to_row(&ids, V2::from_record(&stored.record))
                && after(row.key)
                && conditions.matches(&row, &cells)
            {
                inserted.push(row);
            }
        }
    }
    drop(store);
    inserted.sort_by_key(|r| r.key);
    // Merge.
    let mut out = Vec::with_capacity(want.min(seeded.len() + inserted.len()));
    let (mut s, mut t) = (
        seeded.into_iter().peekable(),
        inserted.into_iter().peekable(),
    );
    while out.len() < want {
        let take_seeded = match (s.peek(), t.peek()) {
            (Some(x), Some(y)) => x.key <= y.key,
            (Some(_), None) => true,
            (None, Some(_)) => false,
            (None, None) => break,
        };
        let next = if take_seeded { s.next() } else { t.next() };
        out.extend(next);
    }
    out
}

/// Today (UTC) on the fake's clock, and the first day of the event-level window.
pub(crate) fn window(app: &AppState) -> (NaiveDate, NaiveDate) {
    let today = DateTime::from_timestamp_millis(app.now_ms())
        .map(|t| t.date_naive())
        .unwrap_or_default();
    let first = today - chrono::Days::new(u64::from(app.config.reporting.window_days) - 1);
    (today, first)
}

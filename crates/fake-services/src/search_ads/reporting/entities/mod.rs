//! The rows of `FROM customer`, `FROM campaign` and `FROM ad_group` (DECISIONS SR-22): the
//! account's seeded campaigns and ad groups (the ones of the ID-mapping file, with their new IDs,
//! SR-12) and the synthetic campaigns of `report_campaigns` after them, their attributes, and metrics summed from [`cells`], one row per entity and selected
//! segment tuple ("If you request segments, additional rows are included for each segment-resource
//! tuple", <https://developers.google.com/search-ads/reporting/query/query-language>).
//!
//! Metrics cover the days of the query's date filter within the event-level window (the fake holds
//! no conversions before it); without a date filter, the whole window. Segments the fake computes:
//! `date`, `week`, `month`, `quarter`, `year`, `day_of_week`, `device`; another selectable segment
//! has no value (it meets only `IS NULL`, SR-16 c). Metrics it computes: `impressions`, `clicks`,
//! `cost_micros`, `conversions`, `ctr`, `average_cpc`. Each row carries the `FROM` resource's
//! `resource_name` even when not selected (the query-language page: "Rows are populated with the
//! selected fields (including the given campaign's resource_name)").

pub(crate) mod cells;
mod json;
#[cfg(test)]
mod tests;

pub(crate) use self::json::EntityPage;

use std::cell::OnceCell;
use std::collections::{BTreeMap, HashMap};

use chrono::{Datelike, NaiveDate};
#[cfg(test)]
use serde_json::{Map, Value, json};

use self::cells::{DEVICES, Place, Sums};
use super::query::ConversionQuery;
use super::query::catalog;
use super::query::dates::Period;
use super::query::eval::Val;
#[cfg(test)]
use super::row::json_path;
use super::rows::IdTranslator;
use crate::search_ads::data::{self, AD_GROUPS, CAMPAIGNS};
use crate::search_ads::state::AppState;

/// A value of one field of a row.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum V {
    /// INT64: a JSON string.
    Int(i64),
    /// INT32: a JSON number.
    Int32(i64),
    Float(f64),
    Str(String),
    Date(NaiveDate),
}

impl V {
    fn val(&self) -> Val<'_> {
        match self {
            V::Int(n) | V::Int32(n) => Val::Int(*n),
            V::Float(f) => Val::Float(*f),
            V::Str(s) => Val::Str(std::borrow::Cow::Borrowed(s)),
            V::Date(d) => Val::Date(*d),
        }
    }

    #[cfg(test)]
    fn json(&self) -> Value {
        match self {
            V::Int(n) => json!(n.to_string()),
            V::Int32(n) => json!(n),
            V::Float(f) => json!(f),
            V::Str(s) => json!(s),
            V::Date(d) => json!(d.format("%Y-%m-%d").to_string()),
        }
    }
}

/// What one row stands for: the entity (campaign and ad-group numbers, by level) and the selected
/// segments' values.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) struct Key {
    c: Option<u64>,
    g: Option<u64>,
    date: Option<NaiveDate>,
    week: Option<NaiveDate>,
    month: Option<NaiveDate>,
    quarter: Option<NaiveDate>,
    year: Option<i32>,
    day_of_week: Option<u32>,
    device: Option<usize>,
}

/// One row: its key and its metrics.
#[derive(Clone, Debug)]
pub(crate) struct EntityRow {
    pub key: Key,
    pub sums: Sums,
}

/// The per-account facts attributes are written from.
pub(crate) struct Account<'a> {
    customer: &'a str,
    engine_id: i64,
    manager_id: &'a str,
    ids: IdTranslator<'a>,
    a: usize,
}

impl<'a> Account<'a> {
    pub(crate) fn new(app: &'a AppState, a: usize) -> Self {
        let account = &app.config.accounts[a];
        Self {
            customer: &account.customer_id,
            engine_id: account.engine_account_id,
            manager_id: &app.config.reporting.manager_customer_id,
            ids: IdTranslator::new(app),
            a,
        }
    }

    /// New campaign ID of campaign `c` (seeded or synthetic, SR-22).
    fn campaign_id(&self, c: u64) -> Option<i64> {
        Some(self.ids.new_ids(self.a, c, 0)?.0)
    }

    fn ad_group_id(&self, c: u64, g: u64) -> Option<i64> {
        Some(self.ids.new_ids(self.a, c, g)?.1)
    }

    /// The value of an attribute of the entity `key` stands for (`None`: not filled by the fake).
    fn attribute(&self, key: &Key, field: &str) -> Option<V> {
        let customer = self.customer;
        let s = |t: &str| Some(V::Str(t.to_owned()));
        let (resource, name) = field.split_once('.')?;
        match resource {
            "customer" => match name {
                "id" => Some(V::Int(customer.parse().ok()?)),
                "resource_name" => s(&format!("customers/{customer}")),
                "descriptive_name" => s(&format!("Engine account {}", self.engine_id)),
                "currency_code" => s("USD"),
                "time_zone" => s("UTC"),
                "manager_id" => Some(V::Int(self.manager_id.parse().ok()?)),
                "engine_id" => s(&self.engine_id.to_string()),
                "status" => s("ENABLED"),
                _ => None,
            },
            "campaign" | "bidding_strategy" | "campaign_budget" => {
                let c = key.c?;
                let id = self.campaign_id(c)?;
                let strategy = id.checked_mul(10)? + 1;
                let budget = id.checked_mul(10)? + 2;
                match (resource, name) {
                    ("campaign", "id") => Some(V::Int(id)),
                    ("campaign", "resource_name") => {
                        s(&format!("customers/{customer}/campaigns/{id}"))
                    }
                    ("campaign", "name") => s(&format!("Campaign {}", c + 1)),
                    // The last seeded campaign is paused, so status filters select something;
                    // so is every synthetic one whose number is a multiple of 10.
                    ("campaign", "status") => {
                        s(if c + 1 == CAMPAIGNS || (c >= CAMPAIGNS && c % 10 == 0) {
                            "PAUSED"
                        } else {
                            "ENABLED"
                        })
                    }
                    ("campaign", "advertising_channel_type") => s("SEARCH"),
                    ("campaign", "bidding_strategy_type") => s("TARGET_SPEND"),
                    ("campaign", "bidding_strategy") => s(&format!(
                        "customers/{customer}/biddingStrategies/{strategy}"
                    )),
                    ("campaign", "campaign_budget") => {
                        s(&format!("customers/{customer}/campaignBudgets/{budget}"))
                    }
                    ("bidding_strategy", "id") => Some(V::Int(strategy)),
                    ("bidding_strategy", "resource_name") => s(&format!(
                        "customers/{customer}/biddingStrategies/{strategy}"
                    )),
                    ("bidding_strategy", "name") => s(&format!("Strategy {}", c + 1)),
                    ("bidding_strategy", "status") => s("ENABLED"),
                    ("bidding_strategy", "type") => s("TARGET_SPEND"),
                    ("campaign_budget", "resource_name") => {
                        s(&format!("customers/{customer}/campaignBudgets/{budget}"))
                    }
                    ("campaign_budget", "amount_micros") => {
                        Some(V::Int((50 + 25 * c as i64) * 1_000_000))
                    }
                    ("campaign_budget", "period") => s("DAILY"),
                    ("campaign_budget", "delivery_method") => s("STANDARD"),
                    _ => None,
                }
            }
            "ad_group" => {
                let (c, g) = (key.c?, key.g?);
                let id = self.ad_group_id(c, g)?;
                match name {
                    "id" => Some(V::Int(id)),
                    "resource_name" => s(&format!("customers/{customer}/adGroups/{id}")),
                    "name" => s(&format!("Ad group {}.{}", c + 1, g + 1)),
                    // The last ad group of each campaign is paused (QS's `ad_group.status = PAUSED`).
                    "status" => s(if g + 1 == AD_GROUPS {
                        "PAUSED"
                    } else {
                        "ENABLED"
                    }),
                    "type" => s("SEARCH_STANDARD"),
                    _ => None,
                }
            }
            _ => None,
        }
    }

    /// The value of any field in a row.
    pub(crate) fn value(&self, row: &EntityRow, field: &str) -> Option<V> {
        let k = &row.key;
        let m = &row.sums;
        match field {
            "segments.date" => k.date.map(V::Date),
            "segments.week" => k.week.map(V::Date),
            "segments.month" => k.month.map(V::Date),
            "segments.quarter" => k.quarter.map(V::Date),
            "segments.year" => k.year.map(|y| V::Int32(i64::from(y))),
            "segments.day_of_week" => k.day_of_week.map(|d| V::Str(WEEKDAYS[d as usize].into())),
            "segments.device" => k.device.map(|d| V::Str(DEVICES[d].into())),
            "metrics.impressions" => Some(V::Int(m.impressions)),
            "metrics.clicks" => Some(V::Int(m.clicks)),
            "metrics.cost_micros" => Some(V::Int(m.cost_micros)),
            "metrics.conversions" => Some(V::Float(m.conversions as f64)),
            "metrics.ctr" => {
                (m.impressions > 0).then(|| V::Float(m.clicks as f64 / m.impressions as f64))
            }
            "metrics.average_cpc" => {
                (m.clicks > 0).then(|| V::Float(m.cost_micros as f64 / m.clicks as f64))
            }
            _ => self.attribute(k, field),
        }
    }
}

/// `segments.day_of_week` values, Monday first (discovery's `DayOfWeek` names).
const WEEKDAYS: [&str; 7] = [
    "MONDAY",
    "TUESDAY",
    "WEDNESDAY",
    "THURSDAY",
    "FRIDAY",
    "SATURDAY",
    "SUNDAY",
];

/// The segments that split rows, by which of them the query selects.
struct Dims {
    date: bool,
    week: bool,
    month: bool,
    quarter: bool,
    year: bool,
    day_of_week: bool,
    device: bool,
}

impl Dims {
    fn new(select: &[String]) -> Self {
        let has = |f: &str| select.iter().any(|s| s == f);
        Self {
            date: has("segments.date"),
            week: has("segments.week"),
            month: has("segments.month"),
            quarter: has("segments.quarter"),
            year: has("segments.year"),
            day_of_week: has("segments.day_of_week"),
            device: has("segments.device"),
        }
    }

    fn by_day(&self) -> bool {
        self.date || self.week || self.month || self.quarter || self.year || self.day_of_week
    }

    fn key(&self, c: Option<u64>, g: Option<u64>, day: Option<NaiveDate>, device: usize) -> Key {
        let period = |on: bool, p: Period| day.filter(|_| on).map(|d| p.start(d));
        Key {
            c,
            g,
            date: period(self.date, Period::Day),
            week: period(self.week, Period::Week),
            month: period(self.month, Period::Month),
            quarter: period(self.quarter, Period::Quarter),
            year: day.filter(|_| self.year).map(|d| d.year()),
            day_of_week: day
                .filter(|_| self.day_of_week)
                .map(|d| d.weekday().num_days_from_monday()),
            device: self.device.then_some(device),
        }
    }
}

/// Where a page of a query in its natural order (no ORDER BY) starts: an entity of the query's
/// level (campaign `c`, ad group `g`; `(0, 0)` for the customer) and how many of its rows were
/// already sent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct EntityCursor {
    c: u64,
    g: u64,
    skip: usize,
}

/// The rows of one `FROM customer | campaign | ad_group` query for one account, computed entity
/// by entity (SR-22 f): a row's key starts with its campaign and ad group, so the rows of the
/// query's entities one after the other, each entity's in key order, are all the rows in key
/// order, and a page needs only the entities it shows (plus the next row, to know whether there
/// is one). The conversions of the seeded campaigns are read once per request, and only when an
/// entity needs them.
pub(crate) struct Report<'a> {
    app: &'a AppState,
    a: usize,
    query: &'a ConversionQuery,
    account: Account<'a>,
    dims: Dims,
    campaigns: u64,
    conversions: OnceCell<HashMap<Place, i64>>,
}

impl<'a> Report<'a> {
    pub(crate) fn new(app: &'a AppState, a: usize, query: &'a ConversionQuery) -> Self {
        Self {
            app,
            a,
            query,
            account: Account::new(app, a),
            dims: Dims::new(&query.select),
            campaigns: data::report_campaigns(&app.config),
            conversions: OnceCell::new(),
        }
    }

    /// The account the rows are of (to write them).
    pub(crate) fn account(&self) -> &Account<'a> {
        &self.account
    }

    fn first(&self) -> Option<(u64, u64)> {
        (self.campaigns > 0).then_some((0, 0))
    }

    /// The entity after `(c, g)` at the query's level.
    fn next(&self, (c, g): (u64, u64)) -> Option<(u64, u64)> {
        match self.query.from {
            "campaign" => (c + 1 < self.campaigns).then_some((c + 1, 0)),
            "ad_group" if g + 1 < data::ad_groups_of(c) => Some((c, g + 1)),
            "ad_group" => (c + 1 < self.campaigns).then_some((c + 1, 0)),
            _ => None,
        }
    }

    /// The ad groups whose cells entity `(c, g)` sums.
    fn ad_groups(&self, (c, g): (u64, u64)) -> Vec<(u64, u64)> {
        match self.query.from {
            "campaign" => (0..data::ad_groups_of(c)).map(|g| (c, g)).collect(),
            "ad_group" => vec![(c, g)],
            _ => (0..self.campaigns)
                .flat_map(|c| (0..data::ad_groups_of(c)).map(move |g| (c, g)))
                .collect(),
        }
    }

    /// Conversions of a cell of a seeded campaign (synthetic ones have none).
    fn conversions(&self, place: &Place) -> i64 {
        if place.0 >= CAMPAIGNS {
            return 0;
        }
        let conversions = self
            .conversions
            .get_or_init(|| cells::conversions(self.app, self.a, self.query.start, self.query.end));
        conversions.get(place).copied().unwrap_or(0)
    }

    /// The rows of one entity, filtered, in key order.
    fn entity_rows(&self, entity: (u64, u64)) -> Vec<EntityRow> {
        let (query, dims) = (self.query, &self.dims);
        let level = |c: u64, g: u64| match query.from {
            "campaign" => (Some(c), None),
            "ad_group" => (Some(c), Some(g)),
            _ => (None, None),
        };
        let groups = self.ad_groups(entity);
        let mut sums: BTreeMap<Key, Sums> = BTreeMap::new();
        if !dims.by_day() {
            // Every entity has a row (with zero metrics when no day is in range).
            for &(c, g) in &groups {
                let (lc, lg) = level(c, g);
                for device in 0..DEVICES.len() {
                    sums.entry(dims.key(lc, lg, None, device)).or_default();
                }
            }
        }
        let mut day = query.start;
        while day <= query.end {
            for &(c, g) in &groups {
                let (lc, lg) = level(c, g);
                for device in 0..DEVICES.len() {
                    let place = (c, g, day, device);
                    let n = self.conversions(&place);
                    let cell = cells::cell(self.app.config.seed, self.a, place, n);
                    sums.entry(dims.key(lc, lg, Some(day), device))
                        .or_default()
                        .add(cell);
                }
            }
            let Some(next) = day.succ_opt() else { break };
            day = next;
        }
        sums.into_iter()
            .map(|(key, sums)| EntityRow { key, sums })
            .filter(|row| matches(&self.account, query, row))
            .collect()
    }

    /// Up to `want` rows in key order from `from` (the first row when `None`), and where the page
    /// after them starts when a row follows.
    pub(crate) fn page(
        &self,
        from: Option<EntityCursor>,
        want: usize,
    ) -> (Vec<EntityRow>, Option<EntityCursor>) {
        let (mut entity, mut skip) = match from {
            Some(cursor) => (Some((cursor.c, cursor.g)), cursor.skip),
            None => (self.first(), 0),
        };
        let mut page = Vec::new();
        while let Some(e) = entity {
            let rows = self.entity_rows(e);
            for (i, row) in rows.into_iter().enumerate().skip(skip) {
                if page.len() == want {
                    let (c, g) = e;
                    return (page, Some(EntityCursor { c, g, skip: i }));
                }
                page.push(row);
            }
            skip = 0;
            entity = self.next(e);
        }
        (page, None)
    }

    /// How many rows the query has.
    pub(crate) fn count(&self) -> u64 {
        let mut n = 0;
        let mut entity = self.first();
        while let Some(e) = entity {
            n += self.entity_rows(e).len() as u64;
            entity = self.next(e);
        }
        n
    }

    /// Every row in the query's ORDER BY (ties in key order), or `None` when there are more than
    /// `max` (the fake sorts at most that many, SR-16).
    pub(crate) fn sorted(&self, max: usize) -> Option<Vec<EntityRow>> {
        let mut rows = Vec::new();
        let mut entity = self.first();
        while let Some(e) = entity {
            rows.extend(self.entity_rows(e));
            if rows.len() > max {
                return None;
            }
            entity = self.next(e);
        }
        let (account, query) = (&self.account, self.query);
        rows.sort_by(|x, y| {
            for (field, desc) in &query.order {
                let (vx, vy) = (account.value(x, field), account.value(y, field));
                let o = match (vx, vy) {
                    (Some(vx), Some(vy)) => vx.val().cmp_to(&vy.val()),
                    (None, Some(_)) => Some(std::cmp::Ordering::Less),
                    (Some(_), None) => Some(std::cmp::Ordering::Greater),
                    (None, None) => None,
                }
                .unwrap_or(std::cmp::Ordering::Equal);
                let o = if *desc { o.reverse() } else { o };
                if o.is_ne() {
                    return o;
                }
            }
            std::cmp::Ordering::Equal
        });
        Some(rows)
    }
}

/// Whether a row meets every condition. A range condition on a core date segment that is not
/// selected is the day range the metrics were summed over, so it holds by construction.
fn matches(account: &Account<'_>, query: &ConversionQuery, row: &EntityRow) -> bool {
    query.filters.iter().all(|f| {
        if catalog::CORE_DATE_SEGMENTS.contains(&f.field.as_str())
            && !query.select.contains(&f.field)
        {
            return true;
        }
        let value = account.value(row, &f.field);
        let value = value.as_ref().map(V::val);
        f.holds(value.as_ref())
    })
}

/// The JSON of one row: the selected fields, nested the way the service writes them, and the
/// `FROM` resource's `resourceName` (as a `Value`: the reference [`EntityPage`] is tested
/// against).
#[cfg(test)]
pub(crate) fn json_row(account: &Account<'_>, query: &ConversionQuery, row: &EntityRow) -> Value {
    let mut out = Map::new();
    let own = format!("{}.resource_name", query.from);
    let fields = query.select.iter().chain(std::iter::once(&own));
    for field in fields {
        let Some(value) = account.value(row, field) else {
            continue;
        };
        let (resource, name) = json_path(field);
        let member = out
            .entry(resource)
            .or_insert_with(|| Value::Object(Map::new()));
        if let Value::Object(m) = member {
            m.insert(name, value.json());
        }
    }
    Value::Object(out)
}

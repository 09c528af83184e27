//! What the entity reports are made of (DECISIONS SR-22): a row's key ([`Key`], [`Entity`]), its
//! values ([`V`]), the account facts attributes are written from ([`Account`]), the metrics of the
//! measured resources, filtering and ordering. The other modules of `entities` build on it and it
//! imports none of them but [`cells`](super::cells).

use std::collections::BTreeMap;

use axum::http::StatusCode;
use chrono::{Datelike, NaiveDate};
use serde_json::{Map, Value, json};

use super::super::failure::Failure;
use super::super::query::ConversionQuery;
use super::super::query::catalogue;
use super::super::query::dates::Period;
use super::super::query::eval::Val;
use super::super::row::json_path;
use super::super::rows::IdTranslator;
use super::super::sorted::MAX_SORTED_ROWS;
use super::cells::{self, DEVICES, SLOTS, Split, Sums};
use crate::search_ads::data;
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
    Bool(bool),
    Date(NaiveDate),
}

impl V {
    pub(super) fn val(&self) -> Val<'_> {
        match self {
            V::Int(n) | V::Int32(n) => Val::Int(*n),
            V::Float(f) => Val::Float(*f),
            V::Str(s) => Val::Str(std::borrow::Cow::Borrowed(s)),
            V::Bool(b) => Val::Bool(*b),
            V::Date(d) => Val::Date(*d),
        }
    }

    pub(super) fn json(&self) -> Value {
        match self {
            V::Int(n) => json!(n.to_string()),
            V::Int32(n) => json!(n),
            V::Float(f) => json!(f),
            V::Str(s) => json!(s),
            V::Bool(b) => json!(b),
            V::Date(d) => json!(d.format("%Y-%m-%d").to_string()),
        }
    }
}

/// The entity a row stands for, by the numbers of its parts: campaign, ad group, ad or keyword
/// within the ad group, portfolio strategy, conversion action, label, visit (a click number).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) struct Entity {
    pub c: Option<u64>,
    pub g: Option<u64>,
    pub s: Option<u64>,
    pub strategy: Option<u64>,
    pub action: Option<usize>,
    pub label: Option<u64>,
    pub visit: Option<u64>,
}

/// What one row stands for: the entity and the selected segments' values.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) struct Key {
    pub(super) e: Entity,
    pub(super) date: Option<NaiveDate>,
    pub(super) week: Option<NaiveDate>,
    pub(super) month: Option<NaiveDate>,
    pub(super) quarter: Option<NaiveDate>,
    pub(super) year: Option<i32>,
    pub(super) day_of_week: Option<u32>,
    pub(super) device: Option<usize>,
}

/// One row: its key, its metrics, and for a visit its facts.
#[derive(Clone, Debug)]
pub(crate) struct EntityRow {
    pub key: Key,
    pub sums: Sums,
    pub visit: Option<Box<Visit>>,
}

/// The per-account facts attributes are written from.
pub(crate) struct Account<'a> {
    pub(super) app: &'a AppState,
    pub(super) from: &'a str,
    pub(super) customer: &'a str,
    pub(super) engine_id: i64,
    pub(super) manager_id: &'a str,
    pub(super) ids: IdTranslator<'a>,
    pub(super) offset: i64,
    pub(super) a: usize,
}

impl<'a> Account<'a> {
    /// The facts of account number `a` for rows of `FROM from`.
    pub(crate) fn new(app: &'a AppState, a: usize, from: &'a str) -> Self {
        let account = &app.config.accounts[a];
        Self {
            app,
            from,
            customer: &account.customer_id,
            engine_id: account.engine_account_id,
            manager_id: &app.config.reporting.manager_customer_id,
            ids: IdTranslator::new(app),
            offset: data::id_offset(app.config.seed),
            a,
        }
    }

    /// New campaign ID of campaign `c` (seeded or synthetic, SR-22).
    pub(super) fn campaign_id(&self, c: u64) -> Option<i64> {
        Some(self.ids.new_ids(self.a, c, 0)?.0)
    }

    pub(super) fn ad_group_id(&self, c: u64, g: u64) -> Option<i64> {
        Some(self.ids.new_ids(self.a, c, g)?.1)
    }

    /// The value of any field in a row.
    pub(crate) fn value(&self, row: &EntityRow, field: &str) -> Option<V> {
        let k = &row.key;
        let m = &row.sums;
        // A conversion action has conversions only (SR-22): no impressions, clicks or cost.
        let traffic = self.from != "conversion_action";
        match field {
            "segments.date" => k.date.map(V::Date),
            "segments.week" => k.week.map(V::Date),
            "segments.month" => k.month.map(V::Date),
            "segments.quarter" => k.quarter.map(V::Date),
            "segments.year" => k.year.map(|y| V::Int32(i64::from(y))),
            "segments.day_of_week" => k.day_of_week.map(|d| V::Str(WEEKDAYS[d as usize].into())),
            "segments.device" => k.device.map(|d| V::Str(DEVICES[d].into())),
            // Each campaign's traffic comes from one postal code (an account's, without one), so
            // the segment splits no row (SR-22).
            "segments.geo_target_postal_code" => {
                let n = self.a as u64 * 7 + k.e.c.unwrap_or(0);
                Some(V::Str(format!(
                    "geoTargetConstants/{}",
                    POSTAL_CODE_TARGETS[(n % POSTAL_CODE_TARGETS.len() as u64) as usize]
                )))
            }
            "metrics.conversions" => Some(V::Float(m.conversions as f64)),
            "metrics.impressions" => traffic.then_some(V::Int(m.impressions)),
            "metrics.clicks" => traffic.then_some(V::Int(m.clicks)),
            "metrics.cost_micros" => traffic.then_some(V::Int(m.cost_micros)),
            "metrics.ctr" => (traffic && m.impressions > 0)
                .then(|| V::Float(m.clicks as f64 / m.impressions as f64)),
            "metrics.average_cpc" => {
                (traffic && m.clicks > 0).then(|| V::Float(m.cost_micros as f64 / m.clicks as f64))
            }
            _ if field.starts_with("visit.") => row.visit.as_deref().and_then(|v| v.value(field)),
            _ => self.attribute(&k.e, field),
        }
    }
}

/// The geo target constants (ids) of the postal codes the fake's traffic comes from: synthetic
/// ids in the range of Google's postal-code targets (`geoTargetConstants/{id}`, Google Ads
/// "Geographical targeting", <https://developers.google.com/google-ads/api/data/geotargets>).
const POSTAL_CODE_TARGETS: [u64; 5] = [9_031_936, 9_031_937, 9_031_938, 9_031_939, 9_031_940];

/// `segments.day_of_week` values, Monday first (discovery's `DayOfWeek` names).
pub(super) const WEEKDAYS: [&str; 7] = [
    "MONDAY",
    "TUESDAY",
    "WEDNESDAY",
    "THURSDAY",
    "FRIDAY",
    "SATURDAY",
    "SUNDAY",
];

/// The segments that split rows, by which of them the query selects.
pub(super) struct Dims {
    pub(super) date: bool,
    pub(super) week: bool,
    pub(super) month: bool,
    pub(super) quarter: bool,
    pub(super) year: bool,
    pub(super) day_of_week: bool,
    pub(super) device: bool,
}

impl Dims {
    pub(super) fn new(select: &[String]) -> Self {
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

    pub(super) fn by_day(&self) -> bool {
        self.date || self.week || self.month || self.quarter || self.year || self.day_of_week
    }

    pub(super) fn key(&self, e: Entity, day: Option<NaiveDate>, device: Option<usize>) -> Key {
        let period = |on: bool, p: Period| day.filter(|_| on).map(|d| p.start(d));
        Key {
            e,
            date: period(self.date, Period::Day),
            week: period(self.week, Period::Week),
            month: period(self.month, Period::Month),
            quarter: period(self.quarter, Period::Quarter),
            year: day.filter(|_| self.year).map(|d| d.year()),
            day_of_week: day
                .filter(|_| self.day_of_week)
                .map(|d| d.weekday().num_days_from_monday()),
            device: device.filter(|_| self.device),
        }
    }
}

/// The portfolio bidding strategies of an account; campaign `c` uses strategy `c % STRATEGIES`.
pub(crate) const STRATEGIES: u64 = 2;

/// The entity of `FROM from` that ad group `g` of campaign `c` (and its ad or keyword `s`) counts
/// for.
pub(super) fn entity_of(from: &str, c: u64, g: u64, s: u64) -> Entity {
    let mut e = Entity::default();
    match from {
        "campaign" | "campaign_budget" => e.c = Some(c),
        "bidding_strategy" => e.strategy = Some(c % STRATEGIES),
        "ad_group" => (e.c, e.g) = (Some(c), Some(g)),
        "ad_group_ad" | "ad_group_criterion" | "keyword_view" => {
            (e.c, e.g, e.s) = (Some(c), Some(g), Some(s));
        }
        _ => {}
    }
    e
}

/// How `FROM from` splits an ad group's cells between its children, if it does.
pub(super) fn split_of(from: &str) -> Option<Split> {
    match from {
        "ad_group_ad" => Some(Split::Ads),
        "ad_group_criterion" | "keyword_view" => Some(Split::Keywords),
        _ => None,
    }
}

/// Sorts `rows` (in key order) by the query's ORDER BY, if it has one; ties keep key order.
pub(super) fn order(account: &Account<'_>, query: &ConversionQuery, rows: &mut [EntityRow]) {
    if query.order.is_empty() {
        return;
    }
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
}

/// The metric rows of a resource with metrics: the cells of the range summed per entity and
/// segment tuple (for `conversion_action`, the conversions per action).
pub(super) fn measured(
    app: &AppState,
    a: usize,
    query: &ConversionQuery,
) -> Result<BTreeMap<Key, Sums>, Failure> {
    let from = query.from;
    let seed = app.config.seed;
    let dims = Dims::new(&query.select);
    let actions = app.config.floodlight_activities.len();
    let campaigns = data::report_campaigns(&app.config);
    if split_of(from).is_some() {
        // Ads and keywords of many synthetic campaigns (SR-22) are bounded like the sorted
        // conversion report (SR-16 f): a limit of the fake.
        let groups: u64 = (0..campaigns).map(data::ad_groups_of).sum();
        let days = if dims.by_day() {
            (query.end - query.start).num_days().max(0) as u64 + 1
        } else {
            1
        };
        let devices = if dims.device { DEVICES.len() as u64 } else { 1 };
        let most = groups * SLOTS as u64 * days * devices;
        if most > MAX_SORTED_ROWS as u64 {
            return Err(Failure::new(
                StatusCode::BAD_REQUEST,
                "sizeLimitError",
                "RESPONSE_SIZE_LIMIT_EXCEEDED",
                format!(
                    "This report of {from} has up to {most} rows, more than {MAX_SORTED_ROWS}; narrow the date range or select fewer segments."
                ),
            ));
        }
    }
    let mut sums: BTreeMap<Key, Sums> = BTreeMap::new();
    if !dims.by_day() {
        // Every entity has a row (with zero metrics when no day is in range).
        for device in 0..DEVICES.len() {
            if from == "conversion_action" {
                for k in 0..actions {
                    let e = Entity {
                        action: Some(k),
                        ..Entity::default()
                    };
                    sums.entry(dims.key(e, None, Some(device))).or_default();
                }
                continue;
            }
            for c in 0..campaigns {
                for g in 0..data::ad_groups_of(c) {
                    for s in 0..SLOTS as u64 {
                        let e = entity_of(from, c, g, s);
                        sums.entry(dims.key(e, None, Some(device))).or_default();
                    }
                }
            }
        }
    }
    let tally = cells::conversions(app, a, query.start, query.end);
    let mut day = query.start;
    while day <= query.end {
        for device in 0..DEVICES.len() {
            if from == "conversion_action" {
                for k in 0..actions {
                    let e = Entity {
                        action: Some(k),
                        ..Entity::default()
                    };
                    let n = tally.actions.get(&(day, device, k)).copied().unwrap_or(0);
                    sums.entry(dims.key(e, Some(day), Some(device)))
                        .or_default()
                        .add(Sums {
                            conversions: n,
                            ..Sums::default()
                        });
                }
                continue;
            }
            for c in 0..campaigns {
                for g in 0..data::ad_groups_of(c) {
                    let place = (c, g, day, device);
                    let counts = tally.at(&place);
                    if let Some(how) = split_of(from) {
                        let per = match how {
                            Split::Ads => &counts.ads,
                            Split::Keywords => &counts.keywords,
                        };
                        let children = cells::split(seed, a, place, how, per);
                        for (s, child) in children.into_iter().enumerate() {
                            let e = entity_of(from, c, g, s as u64);
                            sums.entry(dims.key(e, Some(day), Some(device)))
                                .or_default()
                                .add(child);
                        }
                        continue;
                    }
                    let cell = cells::cell(seed, a, place, counts.total);
                    sums.entry(dims.key(entity_of(from, c, g, 0), Some(day), Some(device)))
                        .or_default()
                        .add(cell);
                }
            }
        }
        let Some(next) = day.succ_opt() else { break };
        day = next;
    }
    Ok(sums)
}

/// Whether a row meets every condition. A range condition on a core date segment that is not
/// selected is the day range the rows were made for, so it holds by construction.
pub(super) fn matches(account: &Account<'_>, query: &ConversionQuery, row: &EntityRow) -> bool {
    query.filters.iter().all(|f| {
        if catalogue::CORE_DATE_SEGMENTS.contains(&f.field.as_str())
            && !query.select.contains(&f.field)
        {
            return true;
        }
        let value = account.value(row, &f.field);
        let value = value.as_ref().map(V::val);
        f.holds(value.as_ref())
    })
}

/// The JSON of one row: the selected fields, nested the way the service writes them
/// (`ad_group_criterion.keyword.text` → `{"adGroupCriterion": {"keyword": {"text": …}}}`), and
/// the `FROM` resource's `resourceName`.
pub(crate) fn json_row(account: &Account<'_>, query: &ConversionQuery, row: &EntityRow) -> Value {
    let mut out = Map::new();
    let own = format!("{}.resource_name", query.from);
    let fields = query.select.iter().chain(std::iter::once(&own));
    for field in fields {
        let Some(value) = account.value(row, field) else {
            continue;
        };
        let (resource, name) = json_path(field);
        let mut member = out
            .entry(resource)
            .or_insert_with(|| Value::Object(Map::new()));
        let mut path = name.split('.').peekable();
        while let Some(part) = path.next() {
            let Value::Object(m) = member else { break };
            if path.peek().is_none() {
                m.insert(part.to_owned(), value.json());
                break;
            }
            member = m
                .entry(part.to_owned())
                .or_insert_with(|| Value::Object(Map::new()));
        }
    }
    Value::Object(out)
}

/// The facts of one visit.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Visit {
    pub(super) id: i64,
    pub(super) resource_name: String,
    pub(super) click_id: String,
    pub(super) date_time: String,
    pub(super) ad_id: i64,
    pub(super) criterion_id: i64,
}

impl Visit {
    /// The value of a `visit.*` field (`None`: not filled by the fake).
    pub(crate) fn value(&self, field: &str) -> Option<V> {
        Some(match field {
            "visit.id" => V::Int(self.id),
            "visit.resource_name" => V::Str(self.resource_name.clone()),
            "visit.click_id" => V::Str(self.click_id.clone()),
            "visit.visit_date_time" => V::Str(self.date_time.clone()),
            "visit.ad_id" => V::Int(self.ad_id),
            "visit.criterion_id" => V::Int(self.criterion_id),
            _ => return None,
        })
    }
}

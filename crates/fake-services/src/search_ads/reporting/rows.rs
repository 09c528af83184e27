//! The rows of a `FROM conversion` query: the v2 fake's conversions of one account, in the Reporting
//! API's shape, with the new campaign and ad-group IDs of the ID-mapping file (SR-12).
//!
//! Rows are ordered by (conversion timestamp, `conversion.id`) and read from a cursor (the last row's
//! key), so a page never recomputes the rows before it: seeded rows are found by binary search on
//! their increasing timestamps, stored (inserted) rows through the account's timestamp index.

use chrono::{DateTime, NaiveDate};
use serde_json::{Map, Value, json};

use super::query::ConversionQuery;
use crate::search_ads::AppState;
use crate::search_ads::data::{
    self, Congruence, DAY_MS, Generator, IdFilter, day_start_ms, filter_congruence,
    seeded_conversion_id,
};
use crate::search_ads::id_mapping::IdMappingPlan;
use crate::search_ads::ledger::ConversionKey;

/// The sort key of a row: (epoch milliseconds, `conversion.id`).
pub(crate) type RowKey = (i64, i64);

/// One result row (all fields; [`select`] keeps the queried ones).
pub(crate) struct Row {
    pub key: RowKey,
    pub value: Value,
}

/// `yyyy-MM-dd HH:mm:ss.ffffff+00:00` of epoch milliseconds (SR-10; the fake's customers are UTC).
pub(crate) fn date_time(ms: i64) -> String {
    DateTime::from_timestamp_millis(ms)
        .map(|t| t.format("%Y-%m-%d %H:%M:%S%.6f+00:00").to_string())
        .unwrap_or_default()
}

fn int(v: &Value, name: &str) -> Option<i64> {
    match v.get(name)? {
        Value::String(s) => s.parse().ok(),
        Value::Number(n) => n.as_i64(),
        _ => None,
    }
}

fn text<'a>(v: &'a Value, name: &str) -> Option<&'a str> {
    v.get(name).and_then(Value::as_str)
}

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
                    crate::search_ads::IdMappingSize::Rows(0),
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

/// A v2 conversion (JSON as the v2 fake returns it) as a full v0 row of customer account `a`.
pub(crate) fn to_row(app: &AppState, ids: &IdTranslator<'_>, a: usize, v2: &Value) -> Option<Row> {
    let account = &app.config.accounts[a];
    let ts = int(v2, "conversionTimestamp")?;
    let ds = int(v2, "dsConversionId")?;
    let customer = &account.customer_id;
    let mut conversion = Map::new();
    let mut put = |k: &str, v: Value| {
        conversion.insert(k.to_owned(), v);
    };
    put("id", json!(ds.to_string()));
    if let Some(s) = text(v2, "conversionId") {
        put("advertiserConversionId", json!(s));
    }
    put("conversionDateTime", json!(date_time(ts)));
    if let Some(m) = int(v2, "conversionModifiedTimestamp") {
        put("conversionLastModifiedDateTime", json!(date_time(m)));
    }
    if let Some(r) = int(v2, "revenueMicros") {
        put("conversionRevenueMicros", json!(r.to_string()));
    }
    if let Some(q) = int(v2, "quantityMillis") {
        put("conversionQuantity", json!((q / 1000).to_string()));
    }
    let status = match text(v2, "state") {
        Some("REMOVED" | "DELETED") => "REMOVED",
        _ => "ENABLED",
    };
    put("status", json!(status));
    for (from, to) in [
        ("clickId", "clickId"),
        ("floodlightOrderId", "floodlightOrderId"),
        ("productId", "productId"),
        ("productCountry", "productCountryCode"),
        ("productLanguage", "productLanguageCode"),
        ("storeId", "productStoreId"),
    ] {
        if let Some(s) = text(v2, from) {
            put(to, json!(s));
        }
    }
    if let Some(ch) = text(v2, "channel") {
        put("productChannel", json!(ch.to_ascii_uppercase()));
    }
    for (from, to) in [
        ("adId", "adId"),
        ("criterionId", "criterionId"),
        ("inventoryAccountId", "merchantId"),
    ] {
        if let Some(n) = int(v2, from) {
            put(to, json!(n.to_string()));
        }
    }
    let campaign = int(v2, "campaignId").and_then(|c| ids.campaign(c));
    let ad_group = int(v2, "adGroupId").and_then(|g| ids.ad_group(g));
    put(
        "resourceName",
        json!(format!(
            "customers/{customer}/conversions/{}~{}~{ds}",
            ad_group.unwrap_or(0),
            int(v2, "criterionId").unwrap_or(0)
        )),
    );
    let date = DateTime::from_timestamp_millis(ts)?.date_naive();
    let mut row = json!({
        "conversion": conversion,
        "segments": {"date": date.format("%Y-%m-%d").to_string()},
        "customer": {
            "id": customer,
            "resourceName": format!("customers/{customer}"),
            "descriptiveName": format!("Engine account {}", account.engine_account_id),
            "currencyCode": "USD",
            "timeZone": "UTC",
            "managerId": app.config.reporting.manager_customer_id,
            "engineId": account.engine_account_id.to_string(),
        },
    });
    if let Some(c) = campaign {
        row["campaign"] = json!({"id": c.to_string(), "resourceName": format!("customers/{customer}/campaigns/{c}")});
    }
    if let Some(g) = ad_group {
        row["adGroup"] = json!({"id": g.to_string(), "resourceName": format!("customers/{customer}/adGroups/{g}")});
    }
    Some(Row {
        key: (ts, ds),
        value: row,
    })
}

/// `conversion.conversion_date_time` → `["conversion", "conversionDateTime"]`.
fn json_path(field: &str) -> (String, String) {
    let (resource, name) = field.split_once('.').unwrap_or((field, ""));
    let camel = |s: &str| {
        let mut out = String::new();
        let mut upper = false;
        for c in s.chars() {
            if c == '_' {
                upper = true;
            } else if upper {
                out.push(c.to_ascii_uppercase());
                upper = false;
            } else {
                out.push(c);
            }
        }
        out
    };
    (camel(resource), camel(name))
}

/// The JSON field mask of the selected fields (`conversion.conversionDateTime,...`).
pub(crate) fn field_mask(select: &[String]) -> String {
    select
        .iter()
        .map(|f| {
            let (r, n) = json_path(f);
            format!("{r}.{n}")
        })
        .collect::<Vec<_>>()
        .join(",")
}

/// The row with only the selected fields (as the service fills only those).
pub(crate) fn select(row: &Value, fields: &[String]) -> Value {
    let mut out = Map::new();
    for field in fields {
        let (resource, name) = json_path(field);
        if let Some(v) = row.get(&resource).and_then(|r| r.get(&name)) {
            let entry = out
                .entry(resource)
                .or_insert_with(|| Value::Object(Map::new()));
            if let Value::Object(map) = entry {
                map.insert(name, v.clone());
            }
        }
    }
    Value::Object(out)
}

fn row_int(row: &Value, field: &str) -> Option<i64> {
    let (r, n) = json_path(field);
    match row.get(&r)?.get(&n)? {
        Value::String(s) => s.parse().ok(),
        _ => None,
    }
}

/// Whether a full row passes the query's id and status conditions.
fn matches(row: &Value, query: &ConversionQuery) -> bool {
    query
        .ids
        .iter()
        .all(|(field, values)| row_int(row, field).is_some_and(|v| values.contains(&v)))
        && query.status.iter().all(|values| {
            row["conversion"]["status"]
                .as_str()
                .is_some_and(|s| values.iter().any(|v| v == s))
        })
        && query.texts.iter().all(|(field, values)| {
            let (r, n) = json_path(field);
            row.get(&r)
                .and_then(|x| x.get(&n))
                .and_then(Value::as_str)
                .is_some_and(|s| values.iter().any(|v| v == s))
        })
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
    for (field, values) in &query.ids {
        let [value] = values.as_slice() else {
            continue;
        };
        let legacy = match field.as_str() {
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
        let v2 = match stored {
            Some(stored) => stored.conversion.clone(),
            None => serde_json::to_value(generator.conversion(a, i)).unwrap_or(Value::Null),
        };
        if let Some(row) = to_row(app, &ids, a, &v2)
            && matches(&row.value, query)
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
                && let Some(row) = to_row(app, &ids, a, &stored.conversion)
                && after(row.key)
                && matches(&row.value, query)
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

//! The page both reads return (`get` and `getByCustomerId`): the validated query, the seeded rows
//! of the account first (in index order, which is timestamp order), then the inserted conversions
//! the account shows (by timestamp, then conversion ID); updated seeded rows as updated.

use std::collections::HashMap;

use axum::http::StatusCode;
use axum::response::Response;
use chrono::NaiveDate;
use serde::Serialize;

use super::params::{int_param, int64_param, param_error};
use crate::errors::json_response;
use crate::search_ads::data::{
    Congruence, DAY_MS, Generator, IdFilter, SeededConversion, day_start_ms, filter_congruence,
    parse_date_number, seeded_conversion_id,
};
use crate::search_ads::ledger::ConversionKey;
use crate::search_ads::record::Record;
use crate::search_ads::state::AppState;

/// The `kind` of a list of conversions (reads, and the echo of insert and update).
pub(super) const CONVERSION_LIST_KIND: &str = "doubleclicksearch#conversionList";

/// The validated query of a read.
pub(super) struct ReadQuery {
    start: NaiveDate,
    end: NaiveDate,
    start_row: u64,
    row_count: u64,
    /// ID filters that map to congruences on seeded rows.
    id_filters: Vec<(IdFilter, &'static str, i64)>,
    /// Filters on values that are constant per account (`customerId`, `agencyId`, ...).
    account_filters: Vec<(&'static str, String)>,
}

pub(super) fn parse_read_query(
    query: &HashMap<String, String>,
    account_filter_names: &[&'static str],
) -> Result<ReadQuery, Response> {
    let date = |name: &str| -> Result<NaiveDate, Response> {
        let n = int_param(query, name, 20_091_101, 99_991_231)?;
        parse_date_number(n).ok_or_else(|| {
            param_error(
                name,
                format!("Invalid value '{n}' for parameter {name}: not a calendar date yyyymmdd"),
            )
        })
    };
    let start = date("startDate")?;
    let end = date("endDate")?;
    if end < start {
        return Err(param_error(
            "endDate",
            "Invalid date range: endDate is before startDate".to_owned(),
        ));
    }
    let start_row = int_param(query, "startRow", 0, i64::from(u32::MAX))?;
    let row_count = int_param(query, "rowCount", 1, 1000)?;
    let mut id_filters = Vec::new();
    for (filter, name) in [
        (IdFilter::Campaign, "campaignId"),
        (IdFilter::AdGroup, "adGroupId"),
        (IdFilter::Ad, "adId"),
        (IdFilter::Criterion, "criterionId"),
    ] {
        if let Some(id) = int64_param(query, name)? {
            id_filters.push((filter, name, id));
        }
    }
    let mut account_filters = Vec::new();
    for &name in account_filter_names {
        if let Some(raw) = query.get(name) {
            if name != "customerId" {
                int64_param(query, name)?;
            }
            account_filters.push((name, raw.trim().to_owned()));
        }
    }
    Ok(ReadQuery {
        start,
        end,
        start_row: u64::try_from(start_row).unwrap_or(0),
        row_count: u64::try_from(row_count).unwrap_or(1),
        id_filters,
        account_filters,
    })
}

/// One row of a page: computed or stored.
#[derive(Serialize)]
#[serde(untagged)]
enum PageRow {
    Seeded(Box<SeededConversion>),
    Stored(Record),
}

#[derive(Serialize)]
struct ConversionPage {
    kind: &'static str,
    /// Omitted when empty, as Google omits empty repeated fields.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    conversion: Vec<PageRow>,
}

pub(super) fn read_page(app: &AppState, a: usize, query: &ReadQuery) -> Response {
    let config = &app.config;
    let account = &config.accounts[a];
    let generator = Generator { config };
    let (lo, hi) = generator.index_range(query.start, query.end);
    let account_value = |name: &str| -> String {
        match name {
            "customerId" => account.customer_id.clone(),
            "agencyId" => account.agency_id.to_string(),
            "advertiserId" => account.advertiser_id.to_string(),
            _ => account.engine_account_id.to_string(),
        }
    };
    let account_matches = query
        .account_filters
        .iter()
        .all(|(name, value)| normalize_id(value) == normalize_id(&account_value(name)));
    let mut congruence = Congruence::ALL;
    for &(filter, _, id) in &query.id_filters {
        congruence = congruence.and(filter_congruence(config.seed, a, filter, id));
    }
    let seeded_count = if account_matches {
        congruence.count(lo, hi)
    } else {
        0
    };

    let store = app.shared.store();
    let row_count = query.row_count;
    let mut rows: Vec<PageRow> = Vec::with_capacity(usize::try_from(row_count).unwrap_or(0));
    let mut k = query.start_row;
    let overrides = store.seeded_overrides.get(a).copied().unwrap_or(0) > 0;
    while (rows.len() as u64) < row_count && k < seeded_count {
        let Some(i) = congruence.nth_from(lo, k) else {
            break;
        };
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
        rows.push(match stored {
            Some(stored) => PageRow::Stored(stored.record.clone()),
            None => PageRow::Seeded(Box::new(generator.conversion(a, i))),
        });
        k += 1;
    }
    if (rows.len() as u64) < row_count
        && let Some(view) = store.views.get(a)
    {
        let skip = query.start_row.saturating_sub(seeded_count);
        let ts_lo = day_start_ms(query.start);
        let ts_hi = day_start_ms(query.end) + DAY_MS;
        let wanted = row_count - rows.len() as u64;
        let matching = view
            .range((ts_lo, String::new())..(ts_hi, String::new()))
            .filter_map(|(_, key)| store.conversions.get(key))
            .map(|stored| &stored.record)
            .filter(|record| stored_matches(record, query))
            .skip(usize::try_from(skip).unwrap_or(usize::MAX))
            .take(usize::try_from(wanted).unwrap_or(usize::MAX));
        rows.extend(matching.cloned().map(PageRow::Stored));
    }
    drop(store);
    json_response(
        StatusCode::OK,
        &ConversionPage {
            kind: CONVERSION_LIST_KIND,
            conversion: rows,
        },
    )
}

fn normalize_id(s: &str) -> String {
    match s.parse::<i64>() {
        Ok(n) => n.to_string(),
        Err(_) => s.to_owned(),
    }
}

fn stored_matches(conversion: &Record, query: &ReadQuery) -> bool {
    query
        .id_filters
        .iter()
        .all(|(_, name, id)| conversion.int(name) == Some(*id))
        && query.account_filters.iter().all(|(name, value)| {
            conversion.str(name).map(normalize_id) == Some(normalize_id(value))
        })
}

#[cfg(test)]
mod tests {
    use axum::extract::{Path, State};
    use axum::http::StatusCode;
    use serde_json::Value;

    use crate::search_ads::conversions::insert;
    use crate::search_ads::conversions::tests::{
        answer, app, body, message, new_conversion, query, seeded,
    };
    use crate::search_ads::data::{DAY_MS, day_start_ms};
    use crate::search_ads::state::AppState;

    async fn read(app: &AppState, q: &[(&str, &str)]) -> (StatusCode, Value) {
        let customer = app.config.accounts[0].customer_id.clone();
        answer(super::super::get_by_customer_id(State(app.clone()), Path(customer), query(q)).await)
            .await
    }

    fn rows(body: &Value) -> Vec<Value> {
        body["conversion"].as_array().cloned().unwrap_or_default()
    }

    #[tokio::test]
    async fn start_row_and_row_count_select_the_page() {
        let app = app();
        let (_, page) = read(
            &app,
            &[
                ("startDate", "20240101"),
                ("endDate", "20240102"),
                ("startRow", "99"),
                ("rowCount", "3"),
            ],
        )
        .await;
        let expected: Vec<_> = (99..102).map(|i| seeded(&app, 0, i)).collect();
        assert_eq!(rows(&page), expected, "rows 99..102 cross the day boundary");
    }

    #[tokio::test]
    async fn a_bad_query_is_400_naming_the_parameter() {
        let app = app();
        let good = [
            ("startDate", "20240101"),
            ("endDate", "20240101"),
            ("startRow", "0"),
            ("rowCount", "10"),
        ];
        for (name, value, expected) in [
            ("startDate", None, "Required parameter: startDate"),
            ("rowCount", Some("1001"), "within the range: [1, 1000]"),
            ("startRow", Some("-1"), "within the range: [0, 4294967295]"),
            ("endDate", Some("20231231"), "endDate is before startDate"),
            ("startDate", Some("20240231"), "not a calendar date"),
            ("rowCount", Some("ten"), "not an integer"),
        ] {
            let q: Vec<(&str, &str)> = good
                .iter()
                .filter(|(n, _)| *n != name)
                .copied()
                .chain(value.map(|v| (name, v)))
                .collect();
            let (status, body) = read(&app, &q).await;
            assert_eq!(status, StatusCode::BAD_REQUEST, "{name}={value:?}");
            assert!(
                message(&body).contains(expected),
                "{name}={value:?}: {body}"
            );
        }
    }

    #[tokio::test]
    async fn inserted_conversions_follow_the_seeded_ones_of_their_day() {
        let app = app();
        // The last seeded day: conversions 9,900..10,000 (100 a day from 2024-01-01).
        let last_day = chrono::NaiveDate::from_ymd_opt(2024, 4, 9).unwrap_or_default();
        let timestamp = day_start_ms(last_day) + DAY_MS - 1000;
        let item = new_conversion("late-1", timestamp);
        let response = insert(
            State(app.clone()),
            None,
            None,
            body(&serde_json::json!({ "conversion": [item] })),
        )
        .await;
        assert_eq!(answer(response).await.0, StatusCode::OK);
        let day = [("startDate", "20240409"), ("endDate", "20240409")];
        let page = |start: &'static str| {
            let mut q = day.to_vec();
            q.extend([("startRow", start), ("rowCount", "1000")]);
            q
        };
        let (_, all) = read(&app, &page("0")).await;
        let all = rows(&all);
        assert_eq!(all.len(), 101);
        assert_eq!(all[0], seeded(&app, 0, 9900));
        assert_eq!(all[100]["conversionId"], "late-1");
        let (_, rest) = read(&app, &page("100")).await;
        assert_eq!(rows(&rest), vec![all[100].clone()]);
    }

    #[tokio::test]
    async fn inserted_conversions_are_filtered_by_their_ids_and_account() {
        let app = app();
        let last_day = chrono::NaiveDate::from_ymd_opt(2024, 4, 9).unwrap_or_default();
        let timestamp = day_start_ms(last_day) + DAY_MS - 1000;
        let with_campaign = |id: &str, campaign: i64| {
            let mut item = new_conversion(id, timestamp);
            item["campaignId"] = Value::from(campaign);
            item
        };
        let items = [
            with_campaign("in-1", 987_654_321),
            with_campaign("in-2", 987_654_322),
        ];
        let request = serde_json::json!({ "conversion": items });
        let response = insert(State(app.clone()), None, None, body(&request)).await;
        assert_eq!(answer(response).await.0, StatusCode::OK);
        fn ids<'a>(q: &[(&'static str, &'a str)]) -> Vec<(&'static str, &'a str)> {
            let mut all = vec![
                ("startDate", "20240409"),
                ("endDate", "20240409"),
                ("startRow", "0"),
                ("rowCount", "1000"),
            ];
            all.extend_from_slice(q);
            all
        }
        let advertiser = app.config.accounts[0].advertiser_id.to_string();
        let agency = format!("00{}", app.config.accounts[0].agency_id);
        for (q, expected) in [
            (vec![("campaignId", "987654321")], vec!["in-1"]),
            (vec![("campaignId", "987654322")], vec!["in-2"]),
            (
                vec![
                    ("campaignId", "987654321"),
                    ("advertiserId", advertiser.as_str()),
                ],
                vec!["in-1"],
            ),
            (
                vec![("campaignId", "987654321"), ("agencyId", agency.as_str())],
                vec!["in-1"],
            ),
            (vec![("campaignId", "987654321"), ("agencyId", "5")], vec![]),
        ] {
            let (status, page) = read(&app, &ids(&q)).await;
            assert_eq!(status, StatusCode::OK, "{page}");
            let got: Vec<Value> = rows(&page)
                .iter()
                .map(|r| r["conversionId"].clone())
                .collect();
            assert_eq!(got, expected, "{q:?}");
        }
    }
}

//! The reports computed entity by entity against the computation of every row of the query at once
//! (in one map, then filtered and sorted, as the other resources' are), and the page JSON written
//! from the rows' values against the `Value` of the same rows.

use chrono::Days;
use serde_json::{Value, json};

use super::cells::Sums;
use super::json::EntityPage;
use super::model::{Account, EntityRow, Key, json_row};
use super::{Report, rows};
use crate::search_ads::config::SearchAdsConfig;
use crate::search_ads::data::CAMPAIGNS;
use crate::search_ads::reporting::query::{self, ConversionQuery};
use crate::search_ads::reporting::rows::window;
use crate::search_ads::state::AppState;

fn app(report_campaigns: u64) -> AppState {
    let today = chrono::Utc::now().date_naive();
    AppState::for_tests(SearchAdsConfig {
        conversions_per_account: 3_000,
        conversions_per_day: 200,
        start_date: today - Days::new(20),
        report_campaigns,
        ..SearchAdsConfig::default()
    })
}

/// `text` parsed, its days cut to the window as the handler does.
fn parse(app: &AppState, text: &str) -> ConversionQuery {
    let (today, first) = window(app);
    let mut q = query::parse(text, today).unwrap_or_else(|e| panic!("{text}: {e:?}"));
    q.start = q.bounds.start.unwrap_or(first).max(first);
    q.end = q.bounds.end.unwrap_or(today).min(today);
    q
}

/// The rows computed all at once ([`rows`]: every cell of the range into one map, filtered,
/// sorted by the ORDER BY), which the other resources' pages are sliced from.
fn reference(app: &AppState, a: usize, query: &ConversionQuery) -> Vec<EntityRow> {
    rows(app, a, query).unwrap_or_else(|_| panic!("{query:?}: refused"))
}

fn keys(rows: &[EntityRow]) -> Vec<(Key, Sums)> {
    rows.iter().map(|r| (r.key, r.sums)).collect()
}

/// Every row through [`Report::page`], `size` at a time, each page from the last one's cursor.
fn paged(report: &Report<'_>, size: usize) -> Vec<EntityRow> {
    let mut out = Vec::new();
    let mut from = None;
    for _ in 0..100_000 {
        let (page, next) = report.page(from, size);
        assert!(page.len() <= size);
        out.extend(page);
        match next {
            Some(cursor) => from = Some(cursor),
            None => return out,
        }
    }
    panic!("no last page");
}

const NATURAL: [&str; 7] = [
    "SELECT campaign.id, campaign.name, segments.date, metrics.impressions, metrics.clicks, metrics.cost_micros FROM campaign WHERE segments.date DURING LAST_14_DAYS",
    "SELECT ad_group.id, ad_group.status, segments.device, metrics.conversions, metrics.ctr FROM ad_group WHERE segments.date DURING LAST_7_DAYS",
    "SELECT customer.id, segments.device, metrics.average_cpc FROM customer",
    "SELECT customer.id, segments.week, metrics.impressions FROM customer WHERE segments.date DURING LAST_30_DAYS",
    "SELECT campaign.id, campaign.status, metrics.clicks FROM campaign WHERE campaign.status = 'PAUSED'",
    "SELECT campaign.id, campaign.resource_name, segments.date, segments.ad_network_type, metrics.conversions FROM campaign WHERE metrics.clicks > 20 AND segments.date DURING LAST_30_DAYS",
    "SELECT ad_group.id, campaign.name, segments.day_of_week, metrics.clicks FROM ad_group WHERE segments.date DURING LAST_30_DAYS AND ad_group.status = 'ENABLED'",
];

const ORDERED: [&str; 2] = [
    "SELECT campaign.id, metrics.clicks FROM campaign ORDER BY metrics.clicks DESC",
    "SELECT ad_group.id, segments.date, metrics.impressions FROM ad_group WHERE segments.date DURING LAST_7_DAYS ORDER BY metrics.impressions, segments.date DESC",
];

/// Queries of the other resources (their pages are sliced from [`rows`]), some with members
/// nested deeper than one level (written through [`json_row`]).
const OTHERS: [&str; 6] = [
    "SELECT ad_group_criterion.criterion_id, ad_group_criterion.keyword.text, ad_group_criterion.keyword.match_type, metrics.clicks FROM keyword_view WHERE segments.date DURING LAST_7_DAYS",
    "SELECT ad_group_ad.ad.id, ad_group_ad.ad.name, segments.device, metrics.impressions, metrics.ctr FROM ad_group_ad",
    "SELECT campaign_budget.resource_name, campaign_budget.amount_micros, customer.id, segments.date, metrics.cost_micros FROM campaign_budget WHERE segments.date DURING LAST_7_DAYS",
    "SELECT bidding_strategy.id, bidding_strategy.type, metrics.clicks FROM bidding_strategy",
    "SELECT conversion_action.id, conversion_action.name, metrics.conversions FROM conversion_action",
    "SELECT label.id, label.name, label.status, label.text_label.background_color FROM label",
];

#[test]
fn pages_and_counts_are_the_rows_computed_at_once() {
    for synthetic in [0, 13] {
        let app = app(synthetic);
        for text in NATURAL {
            let q = parse(&app, text);
            let want = keys(&reference(&app, 0, &q));
            assert!(!want.is_empty(), "{text}: no rows to compare");
            let report = Report::new(&app, 0, &q);
            for size in [1, 7, 10_000] {
                assert_eq!(keys(&paged(&report, size)), want, "{text}, pages of {size}");
            }
            assert_eq!(report.count(), want.len() as u64, "{text}");
            assert_eq!(keys(&report.sorted(usize::MAX).unwrap()), want, "{text}");
        }
        for text in ORDERED {
            let q = parse(&app, text);
            let want = keys(&reference(&app, 0, &q));
            assert!(want.len() > 1, "{text}");
            let report = Report::new(&app, 0, &q);
            assert_eq!(keys(&report.sorted(want.len()).unwrap()), want, "{text}");
            assert!(report.sorted(want.len() - 1).is_none(), "{text}: bounded");
        }
    }
}

#[test]
fn only_the_seeded_campaigns_read_conversions() {
    let app = app(13);
    let q = parse(&app, NATURAL[0]);
    let report = Report::new(&app, 0, &q);
    // A page of synthetic campaigns only: the conversions are never read.
    let from = super::cursor::EntityCursor {
        c: CAMPAIGNS + 2,
        g: 0,
        skip: 3,
    };
    let (page, _) = report.page(Some(from), 20);
    assert_eq!(page.len(), 20);
    assert!(report.conversions.get().is_none());
    // The first page starts with the seeded ones, which read them.
    let (page, _) = report.page(None, 1);
    assert_eq!(page[0].key.e.c, Some(0));
    assert!(report.conversions.get().is_some());
}

#[test]
fn the_page_json_is_the_values_json() {
    let app = app(5);
    let mut texts = NATURAL.to_vec();
    texts.extend(ORDERED);
    texts.extend(OTHERS);
    for text in texts {
        let q = parse(&app, text);
        let rows = reference(&app, 0, &q);
        let account = Account::new(&app, 0, q.from);
        for head in [
            json!({"fieldMask": "x"}),
            json!({"fieldMask": "x", "nextPageToken": "pt1", "totalResultsCount": "9"}),
        ] {
            for rows in [&rows[..], &rows[..0]] {
                let mut value = head.clone();
                if !rows.is_empty() {
                    value["results"] =
                        Value::Array(rows.iter().map(|r| json_row(&account, &q, r)).collect());
                }
                let written =
                    serde_json::to_string(&EntityPage::new(&head, &account, &q, rows)).unwrap();
                assert_eq!(written, serde_json::to_string(&value).unwrap(), "{text}");
            }
        }
    }
}

/// A segment revision 20260810 added (issue 51): each campaign's rows carry its postal code.
#[test]
fn the_postal_code_segment_is_filled() {
    let app = app(0);
    let q = parse(
        &app,
        "SELECT campaign.id, segments.geo_target_postal_code, metrics.clicks FROM campaign \
         WHERE segments.date DURING LAST_7_DAYS",
    );
    let rows = reference(&app, 0, &q);
    assert!(!rows.is_empty());
    let account = Account::new(&app, 0, q.from);
    let codes: std::collections::BTreeSet<String> = rows
        .iter()
        .map(|r| {
            let row = json_row(&account, &q, r);
            let code = row["segments"]["geoTargetPostalCode"]
                .as_str()
                .unwrap()
                .to_owned();
            assert!(code.starts_with("geoTargetConstants/"), "{row}");
            code
        })
        .collect();
    assert!(codes.len() > 1, "{codes:?}");
}

//! Reports of the resources beside customer / campaign / ad group (issue 35, DECISIONS SR-22):
//! budgets, portfolio strategies, conversion actions, labels and label links, ads, keywords and
//! visits, over raw HTTP. The invariants: every resource answers a guide-style query; ads and
//! keywords split each ad group's metrics exactly (per ad group, day and device); budgets and
//! strategies sum their campaigns; conversion actions sum to the customer; every resource name a
//! row links to is a row of the linked resource; the visits are the conversions' visits; the fake
//! takes everything the SDK's table and catalogue let through.

use crate::common::{assert_rows_fit_the_catalogue, client, json, search_page, search_pages};

use std::collections::{BTreeMap, BTreeSet};

use chrono::Days;
use sa360_video_fakes::SearchAdsFake;
use serde_json::{Value, json};

async fn fake() -> SearchAdsFake {
    let today = chrono::DateTime::<chrono::Utc>::from(std::time::SystemTime::now()).date_naive();
    SearchAdsFake::builder()
        .conversions_per_account(3_000)
        .conversions_per_day(150)
        .start_date(today - Days::new(19))
        .start()
        .await
        .expect("starts")
}

/// Every row of `query` (pages of 10 000) for the first account; panics on an error.
async fn rows(fake: &SearchAdsFake, query: &str) -> Vec<Value> {
    search_pages(fake, query, 10_000).await.0
}

/// The value at a JSON path (`adGroupCriterion.keyword.text`).
fn at<'v>(row: &'v Value, path: &str) -> &'v Value {
    path.split('.').fold(row, |v, k| &v[k])
}

fn text(row: &Value, path: &str) -> String {
    at(row, path)
        .as_str()
        .unwrap_or_else(|| panic!("{path} is a string: {row}"))
        .to_owned()
}

/// impressions, clicks, cost, conversions of a row.
fn metrics(row: &Value) -> [i64; 4] {
    let int = |m: &str| text(row, &format!("metrics.{m}")).parse::<i64>().unwrap();
    let conversions = row["metrics"]["conversions"].as_f64().expect("a double");
    [
        int("impressions"),
        int("clicks"),
        int("costMicros"),
        conversions as i64,
    ]
}

fn add(sum: &mut [i64; 4], m: [i64; 4]) {
    for (s, v) in sum.iter_mut().zip(m) {
        *s += v;
    }
}

fn during(fake: &SearchAdsFake) -> String {
    let (today, _) = fake.reporting_window();
    format!(
        "WHERE segments.date BETWEEN '{}' AND '{}'",
        today - Days::new(6),
        today - Days::new(1)
    )
}

const METRICS: &str =
    "metrics.impressions, metrics.clicks, metrics.cost_micros, metrics.conversions";

#[tokio::test]
async fn every_resource_answers_a_guide_style_query() {
    let fake = fake().await;
    let during = during(&fake);
    let queries = [
        ("campaign_budget", format!("SELECT campaign_budget.resource_name, campaign_budget.amount_micros, campaign_budget.period, customer.id, {METRICS} FROM campaign_budget {during}"), 4),
        ("bidding_strategy", format!("SELECT bidding_strategy.id, bidding_strategy.name, bidding_strategy.type, bidding_strategy.campaign_count, {METRICS} FROM bidding_strategy {during}"), 2),
        ("conversion_action", format!("SELECT conversion_action.id, conversion_action.name, conversion_action.status, metrics.conversions FROM conversion_action {during}"), 3),
        ("label", "SELECT label.id, label.name, label.status, label.text_label.background_color FROM label".to_owned(), 3),
        ("campaign_label", "SELECT campaign.id, label.name, campaign_label.label, campaign_label.campaign FROM campaign_label".to_owned(), 3),
        ("ad_group_label", "SELECT ad_group.id, label.name, ad_group_label.ad_group FROM ad_group_label".to_owned(), 4),
        ("ad_group_ad_label", "SELECT ad_group_ad.ad.id, label.name, ad_group_ad_label.ad_group_ad FROM ad_group_ad_label".to_owned(), 12),
        ("ad_group_criterion_label", "SELECT ad_group_criterion.criterion_id, label.name, ad_group_criterion_label.ad_group_criterion FROM ad_group_criterion_label".to_owned(), 24),
        ("ad_group_ad", format!("SELECT ad_group_ad.ad.id, ad_group_ad.ad.name, ad_group_ad.status, ad_group.id, campaign.id, {METRICS} FROM ad_group_ad {during}"), 60),
        ("ad_group_criterion", format!("SELECT ad_group_criterion.criterion_id, ad_group_criterion.keyword.text, ad_group_criterion.keyword.match_type, ad_group.id, {METRICS} FROM ad_group_criterion {during}"), 60),
        // Google's criteria-metrics guide: keyword_view with its parents up to customer.
        ("keyword_view", format!("SELECT ad_group_criterion.keyword.text, ad_group_criterion.keyword.match_type, ad_group.name, campaign.name, customer.id, metrics.impressions, metrics.clicks, metrics.ctr FROM keyword_view {during}"), 60),
        ("visit", format!("SELECT visit.id, visit.click_id, visit.visit_date_time, visit.ad_id, campaign.id, ad_group.id, segments.date FROM visit {during}"), 0),
    ];
    for (resource, query, want) in queries {
        let got = rows(&fake, &query).await;
        assert!(!got.is_empty(), "{query}: no rows");
        if want > 0 {
            assert_eq!(got.len(), want, "{query}");
        }
        let camel: String = resource
            .split('_')
            .enumerate()
            .map(|(i, w)| {
                if i == 0 {
                    w.to_owned()
                } else {
                    w[..1].to_uppercase() + &w[1..]
                }
            })
            .collect();
        for row in &got {
            assert!(
                text(row, &format!("{camel}.resourceName")).starts_with("customers/"),
                "{resource}: {row}"
            );
        }
    }
}

/// Per ad group, day and device: the sums over the children (ads or keywords) of `from`, and the
/// ad group's own metrics; each child row keeps impressions ≥ clicks ≥ conversions.
async fn children_split_the_ad_group(fake: &SearchAdsFake, from: &str) {
    let during = during(fake);
    let key = |r: &Value| {
        (
            text(r, "adGroup.id"),
            text(r, "segments.date"),
            text(r, "segments.device"),
        )
    };
    let parents = rows(
        fake,
        &format!(
            "SELECT ad_group.id, segments.date, segments.device, {METRICS} FROM ad_group {during}"
        ),
    )
    .await;
    let children = rows(
        fake,
        &format!(
            "SELECT ad_group.id, segments.date, segments.device, {METRICS} FROM {from} {during}"
        ),
    )
    .await;
    assert_eq!(children.len(), parents.len() * 5, "5 children per ad group");
    let mut sums: BTreeMap<_, [i64; 4]> = BTreeMap::new();
    for row in &children {
        let [impressions, clicks, cost, conversions] = metrics(row);
        assert!(
            impressions >= clicks && clicks >= conversions,
            "{from}: {row}"
        );
        assert!(cost >= 0 && cost % 10_000 == 0, "{from}: {row}");
        add(sums.entry(key(row)).or_default(), metrics(row));
    }
    let mut converting = 0;
    for row in &parents {
        assert_eq!(sums[&key(row)], metrics(row), "{from} vs ad_group: {row}");
        converting += i64::from(metrics(row)[3] > 0);
    }
    assert!(converting > 0, "some cell has conversions to split");
}

#[tokio::test]
async fn ads_and_keywords_split_each_ad_group_cell_exactly() {
    let fake = fake().await;
    for from in ["ad_group_ad", "ad_group_criterion", "keyword_view"] {
        children_split_the_ad_group(&fake, from).await;
    }
}

#[tokio::test]
async fn budgets_strategies_and_actions_sum_what_they_cover() {
    let fake = fake().await;
    let during = during(&fake);
    let campaigns = rows(
        &fake,
        &format!("SELECT campaign.campaign_budget, campaign.bidding_strategy, {METRICS} FROM campaign {during}"),
    )
    .await;
    for (link, from) in [
        ("campaign.campaignBudget", "campaign_budget"),
        ("campaign.biddingStrategy", "bidding_strategy"),
    ] {
        let mut want: BTreeMap<String, [i64; 4]> = BTreeMap::new();
        for row in &campaigns {
            add(want.entry(text(row, link)).or_default(), metrics(row));
        }
        let got: BTreeMap<String, [i64; 4]> = rows(
            &fake,
            &format!("SELECT {from}.resource_name, {METRICS} FROM {from} {during}"),
        )
        .await
        .iter()
        .map(|r| {
            let camel = if from == "campaign_budget" {
                "campaignBudget"
            } else {
                "biddingStrategy"
            };
            (text(r, &format!("{camel}.resourceName")), metrics(r))
        })
        .collect();
        assert_eq!(got, want, "{from}: the sums of the campaigns using each");
    }
    // Conversion actions: conversions only, summing to the customer's.
    let customer = rows(
        &fake,
        &format!("SELECT customer.id, {METRICS} FROM customer {during}"),
    )
    .await;
    let actions = rows(
        &fake,
        &format!(
            "SELECT conversion_action.id, segments.device, metrics.conversions, \
             metrics.clicks FROM conversion_action {during}"
        ),
    )
    .await;
    assert!(actions.iter().all(|r| r["metrics"]["clicks"].is_null()));
    let total: f64 = actions
        .iter()
        .map(|r| r["metrics"]["conversions"].as_f64().unwrap())
        .sum();
    assert!(total > 0.0);
    assert_eq!(total as i64, metrics(&customer[0])[3]);
}

/// The `resourceName`s of every row of `SELECT {from}.resource_name FROM {from}`.
async fn names(fake: &SearchAdsFake, from: &str, camel: &str) -> BTreeSet<String> {
    rows(fake, &format!("SELECT {from}.resource_name FROM {from}"))
        .await
        .iter()
        .map(|r| text(r, &format!("{camel}.resourceName")))
        .collect()
}

#[tokio::test]
async fn every_linked_resource_name_is_a_row_of_the_linked_resource() {
    let fake = fake().await;
    let campaigns = names(&fake, "campaign", "campaign").await;
    let budgets = names(&fake, "campaign_budget", "campaignBudget").await;
    let strategies = names(&fake, "bidding_strategy", "biddingStrategy").await;
    let groups = names(&fake, "ad_group", "adGroup").await;
    let ads = names(&fake, "ad_group_ad", "adGroupAd").await;
    let criteria = names(&fake, "ad_group_criterion", "adGroupCriterion").await;
    let labels = names(&fake, "label", "label").await;
    assert_eq!((budgets.len(), strategies.len(), labels.len()), (4, 2, 3));
    assert_eq!((ads.len(), criteria.len()), (60, 60));
    let links = [
        (
            "SELECT campaign.campaign_budget, campaign.bidding_strategy FROM campaign",
            vec![
                ("campaign.campaignBudget", &budgets),
                ("campaign.biddingStrategy", &strategies),
            ],
        ),
        (
            "SELECT ad_group_criterion.ad_group FROM ad_group_criterion",
            vec![("adGroupCriterion.adGroup", &groups)],
        ),
        (
            "SELECT campaign_label.campaign, campaign_label.label FROM campaign_label",
            vec![
                ("campaignLabel.campaign", &campaigns),
                ("campaignLabel.label", &labels),
            ],
        ),
        (
            "SELECT ad_group_label.ad_group, ad_group_label.label FROM ad_group_label",
            vec![
                ("adGroupLabel.adGroup", &groups),
                ("adGroupLabel.label", &labels),
            ],
        ),
        (
            "SELECT ad_group_ad_label.ad_group_ad, ad_group_ad_label.label FROM ad_group_ad_label",
            vec![
                ("adGroupAdLabel.adGroupAd", &ads),
                ("adGroupAdLabel.label", &labels),
            ],
        ),
        (
            "SELECT ad_group_criterion_label.ad_group_criterion, ad_group_criterion_label.label FROM ad_group_criterion_label",
            vec![
                ("adGroupCriterionLabel.adGroupCriterion", &criteria),
                ("adGroupCriterionLabel.label", &labels),
            ],
        ),
        (
            "SELECT ad_group_criterion.resource_name, ad_group.resource_name, campaign.resource_name FROM keyword_view",
            vec![
                ("adGroupCriterion.resourceName", &criteria),
                ("adGroup.resourceName", &groups),
                ("campaign.resourceName", &campaigns),
            ],
        ),
    ];
    for (query, checks) in links {
        let got = rows(&fake, query).await;
        assert!(!got.is_empty(), "{query}");
        for row in &got {
            for (path, set) in &checks {
                let name = text(row, path);
                assert!(set.contains(&name), "{query}: {path} = {name} is no row");
            }
        }
    }
    // The conversions' ads and keywords are the ads' and keywords' IDs.
    let during = during(&fake);
    let ad_ids: BTreeSet<String> = rows(&fake, "SELECT ad_group_ad.ad.id FROM ad_group_ad")
        .await
        .iter()
        .map(|r| text(r, "adGroupAd.ad.id"))
        .collect();
    let criterion_ids: BTreeSet<String> = rows(
        &fake,
        "SELECT ad_group_criterion.criterion_id FROM ad_group_criterion",
    )
    .await
    .iter()
    .map(|r| text(r, "adGroupCriterion.criterionId"))
    .collect();
    let conversions = rows(
        &fake,
        &format!("SELECT conversion.ad_id, conversion.criterion_id FROM conversion {during}"),
    )
    .await;
    assert!(!conversions.is_empty());
    for row in &conversions {
        assert!(ad_ids.contains(&text(row, "conversion.adId")), "{row}");
        assert!(
            criterion_ids.contains(&text(row, "conversion.criterionId")),
            "{row}"
        );
    }
}

#[tokio::test]
async fn the_visits_are_the_conversions_visits() {
    let fake = fake().await;
    let (today, _) = fake.reporting_window();
    let (from, to) = (today - Days::new(6), today - Days::new(2));
    let visits = rows(
        &fake,
        &format!(
            "SELECT visit.id, visit.click_id, visit.visit_date_time, visit.ad_id, \
             visit.criterion_id, ad_group.id, segments.date FROM visit \
             WHERE segments.date BETWEEN '{from}' AND '{to}'"
        ),
    )
    .await;
    let conversions = rows(
        &fake,
        &format!(
            "SELECT conversion.click_id, conversion.ad_id, conversion.criterion_id, \
             conversion.conversion_date_time, ad_group.id FROM conversion \
             WHERE segments.date BETWEEN '{from}' AND '{}'",
            to + Days::new(1)
        ),
    )
    .await;
    let by_click: BTreeMap<String, &Value> = conversions
        .iter()
        .filter(|r| r["conversion"]["clickId"].is_string())
        .map(|r| (text(r, "conversion.clickId"), r))
        .collect();
    assert!(!visits.is_empty());
    let mut ids = BTreeSet::new();
    for visit in &visits {
        assert!(ids.insert(text(visit, "visit.id")), "one row per visit");
        let click = text(visit, "visit.clickId");
        let conversion = by_click
            .get(&click)
            .unwrap_or_else(|| panic!("no conversion carries {click}"));
        for (v, c) in [
            ("visit.adId", "conversion.adId"),
            ("visit.criterionId", "conversion.criterionId"),
            ("adGroup.id", "adGroup.id"),
        ] {
            assert_eq!(
                text(visit, v),
                text(conversion, c),
                "{visit} vs {conversion}"
            );
        }
        let (day, time) = (
            text(visit, "segments.date"),
            text(visit, "visit.visitDateTime"),
        );
        assert!(time.starts_with(&day), "{visit}");
        assert!(time < text(conversion, "conversion.conversionDateTime"));
    }
    // Every conversion with a click inside the range (a day in, so its click is too) has its visit.
    let clicks: BTreeSet<String> = visits.iter().map(|v| text(v, "visit.clickId")).collect();
    let inner = (from + Days::new(1)).to_string();
    let last = (to + Days::new(1)).to_string();
    let mut checked = 0;
    for (click, c) in &by_click {
        let at = text(c, "conversion.conversionDateTime");
        if at.as_str() >= inner.as_str() && at[..10] < *last {
            assert!(clicks.contains(click), "{click}: no visit");
            checked += 1;
        }
    }
    assert!(checked > 0);
}

/// Every field the fake fills for the new resources, selected from its resource: it is filled in
/// every row, and an ENUM value is one the catalogue (`searchAds360Fields.get`, read from
/// discovery) lists.
#[tokio::test]
async fn filled_values_are_typed_as_the_catalogue_says() {
    let fake = fake().await;
    let queries = [
        "SELECT campaign_budget.resource_name, campaign_budget.amount_micros, campaign_budget.period, \
         campaign_budget.delivery_method FROM campaign_budget",
        "SELECT bidding_strategy.id, bidding_strategy.resource_name, bidding_strategy.name, \
         bidding_strategy.status, bidding_strategy.type, bidding_strategy.campaign_count, \
         bidding_strategy.non_removed_campaign_count, bidding_strategy.currency_code FROM bidding_strategy",
        "SELECT campaign.bidding_strategy_type FROM campaign",
        "SELECT conversion_action.id, conversion_action.resource_name, conversion_action.name, \
         conversion_action.status, conversion_action.type, conversion_action.owner_customer, \
         conversion_action.include_in_conversions_metric, \
         conversion_action.floodlight_settings.activity_id FROM conversion_action",
        "SELECT label.id, label.resource_name, label.name, label.status, \
         label.text_label.background_color FROM label",
        "SELECT ad_group_ad.resource_name, ad_group_ad.ad.id, ad_group_ad.ad.resource_name, \
         ad_group_ad.ad.name, ad_group_ad.ad.type, ad_group_ad.ad.display_url, ad_group_ad.status, \
         ad_group_ad.engine_status FROM ad_group_ad",
        "SELECT ad_group_criterion.resource_name, ad_group_criterion.criterion_id, \
         ad_group_criterion.ad_group, ad_group_criterion.type, ad_group_criterion.status, \
         ad_group_criterion.negative, ad_group_criterion.keyword.text, \
         ad_group_criterion.keyword.match_type, ad_group_criterion.cpc_bid_micros, \
         ad_group_criterion.engine_status FROM ad_group_criterion",
        "SELECT keyword_view.resource_name FROM keyword_view",
        "SELECT campaign_label.resource_name, campaign_label.owner_customer_id FROM campaign_label",
        "SELECT ad_group_label.resource_name FROM ad_group_label",
        "SELECT ad_group_ad_label.resource_name FROM ad_group_ad_label",
        "SELECT ad_group_criterion_label.resource_name FROM ad_group_criterion_label",
        "SELECT visit.id, visit.resource_name, visit.click_id, visit.visit_date_time, visit.ad_id, \
         visit.criterion_id FROM visit",
    ];
    let mut enums = 0;
    for query in queries {
        enums += assert_rows_fit_the_catalogue(&fake, query, &rows(&fake, query).await).await;
    }
    assert!(enums > 0);
}

/// The names of the catalogue's fields of one category (`searchAds360Fields:search`).
async fn catalogue(fake: &SearchAdsFake, category: &str) -> BTreeSet<String> {
    let (status, body) = json(
        client()
            .post(format!(
                "{}/v0/searchAds360Fields:search",
                fake.reporting_url()
            ))
            .bearer_auth(fake.dev_token())
            .json(&json!({"query": format!("SELECT name WHERE category = {category}")})),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    body["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["name"].as_str().unwrap().to_owned())
        .collect()
}

/// The fake is never stricter than the SDK (DECISIONS SR-22 a): for every resource of the SDK's
/// table (`specs/search-ads-report-fields.yaml`, `resources:`) the fake takes the attributed
/// resources, metrics and segments the table allows, answers a query that selects them, and
/// catalogues every field of those resources that the SDK's generated catalogue holds.
#[tokio::test]
async fn the_fake_accepts_what_the_sdks_table_allows() {
    let fake = fake().await;
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");
    let text = std::fs::read_to_string(format!("{root}/specs/search-ads-report-fields.yaml"))
        .expect("the SDK's table");
    let table: serde_norway::Value = serde_norway::from_str(&text).expect("YAML");
    let resources = table["resources"].as_mapping().expect("resources:");
    let (segments, metrics) = (
        catalogue(&fake, "SEGMENT").await,
        catalogue(&fake, "METRIC").await,
    );
    let mut names: BTreeSet<String> = BTreeSet::new();
    for (resource, entry) in resources {
        let resource = resource.as_str().unwrap();
        names.insert(resource.to_owned());
        let (status, meta) = json(
            client()
                .get(format!(
                    "{}/v0/searchAds360Fields/{resource}",
                    fake.reporting_url()
                ))
                .bearer_auth(fake.dev_token()),
        )
        .await;
        assert_eq!(status, 200, "{resource}: {meta}");
        let list = |v: &Value| -> BTreeSet<String> {
            v.as_array()
                .map(|a| a.iter().map(|s| s.as_str().unwrap().to_owned()).collect())
                .unwrap_or_default()
        };
        let attributed: Vec<&str> = entry["attributed"]
            .as_sequence()
            .unwrap()
            .iter()
            .map(|a| a.as_str().unwrap())
            .collect();
        let taken = list(&meta["attributeResources"]);
        for a in &attributed {
            names.insert((*a).to_owned());
            assert!(taken.contains(*a), "{resource} takes {a}: {meta}");
        }
        let with_metrics = entry["metrics"].as_bool().unwrap();
        if with_metrics {
            assert_eq!(list(&meta["metrics"]), metrics, "{resource}: every metric");
        }
        let wanted: BTreeSet<String> = match &entry["segments"] {
            serde_norway::Value::String(all) if all == "all" => segments.clone(),
            v => v
                .as_sequence()
                .unwrap()
                .iter()
                .map(|s| s.as_str().unwrap().to_owned())
                .collect(),
        };
        assert!(
            list(&meta["segments"]).is_superset(&wanted),
            "{resource}: the segments of the table"
        );
        // A query using all of it is answered.
        let mut select = vec![format!("{resource}.resource_name")];
        select.extend(attributed.iter().map(|a| format!("{a}.resource_name")));
        if with_metrics {
            select.push("metrics.clicks".into());
        }
        let mut query = String::new();
        if wanted.contains("segments.date") {
            select.push("segments.date".into());
            query = " WHERE segments.date DURING LAST_7_DAYS".into();
        }
        if wanted.contains("segments.device") {
            select.push("segments.device".into());
        }
        let query = format!("SELECT {} FROM {resource}{query}", select.join(", "));
        assert!(!rows(&fake, &query).await.is_empty(), "{query}");
    }
    // Every field the SDK's generated catalogue holds for those resources, the segments and the
    // metrics is one the fake knows.
    names.extend(["segments".to_owned(), "metrics".to_owned()]);
    let generated = std::fs::read_to_string(format!(
        "{root}/crates/sa360-video-sdk/src/search_ads/reporting/fields/generated.rs"
    ))
    .expect("the SDK's catalogue");
    let mut known = catalogue(&fake, "ATTRIBUTE").await;
    known.extend(segments);
    known.extend(metrics);
    let mut checked = 0;
    for line in generated.lines() {
        let Some(rest) = line.trim().strip_prefix("FieldInfo::new(\"") else {
            continue;
        };
        let field = &rest[..rest.find('"').unwrap()];
        if names.contains(field.split('.').next().unwrap()) {
            assert!(
                known.contains(field),
                "the SDK lets {field} through, the fake does not know it"
            );
            checked += 1;
        }
    }
    assert!(checked > 400, "{checked} fields checked");
}

/// The visits of a request are bounded like the sorted conversion report (SR-16 f): more than
/// 200 000 is `RESPONSE_SIZE_LIMIT_EXCEEDED`, a narrower range is answered.
#[tokio::test]
async fn visits_are_bounded() {
    let today = chrono::DateTime::<chrono::Utc>::from(std::time::SystemTime::now()).date_naive();
    let fake = SearchAdsFake::builder()
        .conversions_per_account(400_000)
        .conversions_per_day(20_000)
        .start_date(today - Days::new(19))
        .start()
        .await
        .expect("starts");
    let customer = fake.accounts()[0].customer_id.clone();
    let (status, body) = search_page(
        &fake,
        &customer,
        None,
        json!({"query": "SELECT visit.id FROM visit"}),
    )
    .await;
    let rows_sent = body["results"].as_array().map_or(0, Vec::len);
    assert_eq!(
        status, 400,
        "answered with {rows_sent} rows: {}",
        body["error"]
    );
    assert_eq!(
        body["error"]["details"][0]["errors"][0]["errorCode"]["sizeLimitError"],
        "RESPONSE_SIZE_LIMIT_EXCEEDED",
        "{body}"
    );
    let day = today - Days::new(3);
    let one_day = rows(
        &fake,
        &format!("SELECT visit.id FROM visit WHERE segments.date = '{day}'"),
    )
    .await;
    assert!(one_day.len() > 10_000, "{}", one_day.len());
}

/// With the synthetic campaigns of `report_campaigns` (SR-22): every ad group's ads and keywords
/// still split it exactly, budgets and strategies still sum their campaigns, and a report of ads
/// that would pass 200 000 rows is `RESPONSE_SIZE_LIMIT_EXCEEDED`.
#[tokio::test]
async fn synthetic_campaigns_have_budgets_strategies_ads_and_keywords() {
    let today = chrono::DateTime::<chrono::Utc>::from(std::time::SystemTime::now()).date_naive();
    let build = |campaigns: u64| {
        SearchAdsFake::builder()
            .conversions_per_account(3_000)
            .conversions_per_day(150)
            .start_date(today - Days::new(19))
            .report_campaigns(campaigns)
            .start()
    };
    let fake = build(20).await.expect("starts");
    for from in ["ad_group_ad", "keyword_view"] {
        children_split_the_ad_group(&fake, from).await;
    }
    let during = during(&fake);
    let budgets = rows(
        &fake,
        &format!(
            "SELECT campaign_budget.resource_name, metrics.clicks FROM campaign_budget {during}"
        ),
    )
    .await;
    assert_eq!(
        budgets.len(),
        24,
        "one budget per campaign, seeded or synthetic"
    );
    let strategies = rows(
        &fake,
        "SELECT bidding_strategy.campaign_count FROM bidding_strategy",
    )
    .await;
    let counts: Vec<String> = strategies
        .iter()
        .map(|r| text(r, "biddingStrategy.campaignCount"))
        .collect();
    assert_eq!(counts, ["12", "12"]);
    drop(fake);
    let big = build(10_000).await.expect("starts");
    let customer = big.accounts()[0].customer_id.clone();
    let (status, body) = search_page(
        &big,
        &customer,
        None,
        json!({"query": format!(
            "SELECT ad_group_ad.ad.id, segments.date, segments.device, metrics.clicks \
             FROM ad_group_ad {during}"
        )}),
    )
    .await;
    assert_eq!(status, 400, "{}", body["error"]);
    assert_eq!(
        body["error"]["details"][0]["errors"][0]["errorCode"]["sizeLimitError"],
        "RESPONSE_SIZE_LIMIT_EXCEEDED"
    );
}

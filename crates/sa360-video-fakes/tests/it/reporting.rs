//! The Reporting API (v0) side of the search ads fake, over raw HTTP: the QueryError shape for
//! queries Google refuses, page tokens that expire on the fake's clock, the
//! `login-customer-id` rule, the window, the field service, the ID-mapping file agreeing with
//! the rows' new ids, and conditions and ORDER BY checked against rows filtered by the test itself.

use crate::common;

use std::time::Duration;

use chrono::Days;
use common::{client, json, search_page};
use sa360_video_fakes::{FAILURE_TYPE, SearchAdsFake};
use serde_json::{Value, json};

async fn fake() -> SearchAdsFake {
    let today = chrono::DateTime::<chrono::Utc>::from(std::time::SystemTime::now()).date_naive();
    SearchAdsFake::builder()
        .conversions_per_account(2_000)
        .conversions_per_day(100)
        .start_date(today - Days::new(19))
        .start()
        .await
        .expect("starts")
}

fn dates(fake: &SearchAdsFake, back: u64) -> (String, String) {
    let (today, _) = fake.reporting_window();
    ((today - Days::new(back)).to_string(), today.to_string())
}

fn query(fake: &SearchAdsFake, extra: &str) -> String {
    let (from, to) = dates(fake, 5);
    format!(
        "SELECT conversion.id, conversion.conversion_date_time, segments.date, campaign.id, ad_group.id \
         FROM conversion WHERE segments.date BETWEEN '{from}' AND '{to}'{extra}"
    )
}

fn first_error(body: &Value) -> &Value {
    assert_eq!(body["error"]["details"][0]["@type"], FAILURE_TYPE, "{body}");
    &body["error"]["details"][0]["errors"][0]
}

#[tokio::test]
async fn refused_queries_get_the_query_error_shape() {
    let fake = fake().await;
    let customer = &fake.accounts()[0].customer_id;
    for (extra, code) in [
        (" OR conversion.id = 1", "UNEXPECTED_INPUT"),
        (" AND conversion.id = 1 -- comment", "BAD_SYMBOL"),
        (
            " AND conversion.visit_id LIKE '1'",
            "OPERATOR_FIELD_MISMATCH",
        ),
        (" AND conversion.nope = 1", "UNRECOGNIZED_FIELD"),
        (
            " AND segments.device = MOBILE",
            "EXPECTED_REFERENCED_FIELD_IN_SELECT_CLAUSE",
        ),
        (
            " ORDER BY conversion.status",
            "EXPECTED_REFERENCED_FIELD_IN_SELECT_CLAUSE",
        ),
    ] {
        let (status, body) =
            search_page(&fake, customer, None, json!({"query": query(&fake, extra)})).await;
        assert_eq!(status, 400, "{extra}: {body}");
        assert_eq!(body["error"]["status"], "INVALID_ARGUMENT");
        assert_eq!(
            first_error(&body)["errorCode"]["queryError"],
            code,
            "{extra}: {body}"
        );
    }
    let (status, body) = search_page(
        &fake,
        customer,
        None,
        json!({"query": query(&fake, ""), "pageSize": 10_001}),
    )
    .await;
    assert_eq!(status, 400);
    assert_eq!(
        first_error(&body)["errorCode"]["requestError"],
        "INVALID_PAGE_SIZE"
    );
}

#[tokio::test]
async fn page_tokens_page_through_and_expire_on_the_fake_clock() {
    let fake = fake().await;
    let customer = fake.accounts()[0].customer_id.clone();
    let q = query(
        &fake,
        " ORDER BY conversion.conversion_date_time, conversion.id",
    );
    let (status, first) =
        search_page(&fake, &customer, None, json!({"query": q, "pageSize": 250})).await;
    assert_eq!(status, 200, "{first}");
    assert_eq!(first["results"].as_array().unwrap().len(), 250);
    let token = first["nextPageToken"]
        .as_str()
        .expect("more pages")
        .to_owned();
    let mut seen = 250;
    let mut next = Some(token.clone());
    while let Some(t) = next {
        let (status, page) = search_page(
            &fake,
            &customer,
            None,
            json!({"query": q, "pageSize": 250, "pageToken": t}),
        )
        .await;
        assert_eq!(status, 200, "{page}");
        seen += page["results"].as_array().map_or(0, Vec::len);
        next = page["nextPageToken"].as_str().map(str::to_owned);
    }
    assert_eq!(seen, 600, "six days of 100");
    // Another query may not use the token.
    let other = query(&fake, "");
    let (status, body) = search_page(
        &fake,
        &customer,
        None,
        json!({"query": other, "pageToken": token}),
    )
    .await;
    assert_eq!(status, 400);
    assert_eq!(
        first_error(&body)["errorCode"]["requestError"],
        "INVALID_PAGE_TOKEN"
    );
    fake.clock().advance(Duration::from_secs(601));
    let (status, body) = search_page(
        &fake,
        &customer,
        None,
        json!({"query": q, "pageToken": token}),
    )
    .await;
    assert_eq!(status, 400, "{body}");
    assert_eq!(
        first_error(&body)["errorCode"]["requestError"],
        "EXPIRED_PAGE_TOKEN"
    );
}

#[tokio::test]
async fn login_customer_id_rule_and_window() {
    let fake = fake().await;
    let direct = fake.accounts()[0].customer_id.clone();
    let behind = fake.accounts()[1].customer_id.clone();
    let q = query(&fake, "");
    let (status, body) = search_page(&fake, &behind, None, json!({"query": q})).await;
    assert_eq!(status, 403);
    assert_eq!(
        first_error(&body)["errorCode"]["authorizationError"],
        "USER_PERMISSION_DENIED"
    );
    let (status, body) = search_page(&fake, &behind, Some("2000012300"), json!({"query": q})).await;
    assert_eq!(status, 200, "{body}");
    let (status, body) = search_page(&fake, &behind, Some(&direct), json!({"query": q})).await;
    assert_eq!(status, 403);
    assert_eq!(
        first_error(&body)["errorCode"]["authorizationError"],
        "INVALID_LOGIN_CUSTOMER_ID_SERVING_CUSTOMER_ID_COMBINATION"
    );
    let (status, body) =
        search_page(&fake, &direct, Some("200-001-2300"), json!({"query": q})).await;
    assert_eq!(status, 400);
    assert_eq!(
        first_error(&body)["errorCode"]["headerError"],
        "INVALID_LOGIN_CUSTOMER_ID"
    );

    let (from, to) = dates(&fake, 60);
    let old = format!(
        "SELECT conversion.id FROM conversion WHERE segments.date BETWEEN '{from}' AND '{to}'"
    );
    let (status, body) = search_page(&fake, &direct, None, json!({"query": old})).await;
    assert_eq!(status, 400);
    assert_eq!(
        first_error(&body)["errorCode"]["dateError"],
        "EARLIER_THAN_MINIMUM_DATE"
    );

    // Segmented by date (segments.date selected): at most 30 days (DATE_RANGE_TOO_WIDE, SR-13);
    // 30 are fine, and so are 31 when segments.date is only filtered.
    let span = |back: u64, select: &str| {
        let (from, to) = dates(&fake, back);
        format!("SELECT {select} FROM conversion WHERE segments.date BETWEEN '{from}' AND '{to}'")
    };
    let wide = span(30, "conversion.id, segments.date");
    let (status, body) = search_page(&fake, &direct, None, json!({"query": wide})).await;
    assert_eq!(status, 400);
    assert_eq!(
        first_error(&body)["errorCode"]["queryError"],
        "DATE_RANGE_TOO_WIDE"
    );
    for ok in [
        span(29, "conversion.id, segments.date"),
        span(30, "conversion.id"),
    ] {
        let (status, body) = search_page(&fake, &direct, None, json!({"query": ok})).await;
        assert_eq!(status, 200, "{ok}: {body}");
    }
}

#[tokio::test]
async fn rows_carry_the_new_ids_of_the_id_mapping_file() {
    let fake = fake().await;
    let account = fake.accounts()[0].clone();
    let (status, page) = search_page(
        &fake,
        &account.customer_id,
        None,
        json!({"query": query(&fake, ""), "pageSize": 24}),
    )
    .await;
    assert_eq!(status, 200);
    let csv = client()
        .get(format!(
            "{}/agency/{}/advertiser/{}/idmapping?alt=media",
            fake.base_url(),
            account.agency_id,
            account.advertiser_id
        ))
        .bearer_auth(fake.dev_token())
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    for row in page["results"].as_array().unwrap() {
        let campaign = row["campaign"]["id"].as_str().unwrap();
        let ad_group = row["adGroup"]["id"].as_str().unwrap();
        let needle_c = format!("\"\"campaignId\"\":\"\"{campaign}\"\"}}");
        let needle_g = format!("\"\"adGroupId\"\":\"\"{ad_group}\"\"}}");
        assert!(
            csv.lines()
                .any(|l| l.starts_with("CAMPAIGN,") && l.ends_with(&format!("{needle_c}\""))),
            "{campaign}"
        );
        assert!(
            csv.lines()
                .any(|l| l.starts_with("AD_GROUP,") && l.ends_with(&format!("{needle_g}\""))),
            "{ad_group}"
        );
    }
    let (status, fields) = json(
        client()
            .post(format!(
                "{}/v0/searchAds360Fields:search",
                fake.reporting_url()
            ))
            .bearer_auth(fake.dev_token())
            .json(&json!({"query": "SELECT name, data_type WHERE name LIKE 'conversion.%'"})),
    )
    .await;
    assert_eq!(status, 200, "{fields}");
    assert_eq!(fields["results"].as_array().unwrap().len(), 24);
}

/// Every page of `query` for the first account, paged by `page_size`.
async fn all_rows(fake: &SearchAdsFake, query: &str, page_size: u32) -> Vec<Value> {
    let customer = &fake.accounts()[0].customer_id;
    let mut rows = Vec::new();
    let mut token: Option<String> = None;
    loop {
        let mut body = json!({"query": query, "pageSize": page_size});
        if let Some(t) = &token {
            body["pageToken"] = json!(t);
        }
        let (status, page) = search_page(fake, customer, None, body).await;
        assert_eq!(status, 200, "{query}: {page}");
        rows.extend(page["results"].as_array().cloned().unwrap_or_default());
        match page["nextPageToken"].as_str() {
            Some(t) => token = Some(t.to_owned()),
            None => return rows,
        }
    }
}

/// What a condition means for one row, as the test reads the grammar.
type RowTest = Box<dyn Fn(&Value) -> bool>;

#[tokio::test]
async fn conditions_and_order_by_mean_what_the_grammar_says() {
    let fake = fake().await;
    let (from, to) = dates(&fake, 6);
    let fields = "conversion.id, conversion.click_id, conversion.status, conversion.ad_id, \
                  conversion.conversion_date_time, campaign.id, segments.date";
    let range = format!("segments.date BETWEEN '{from}' AND '{to}'");
    let every = all_rows(
        &fake,
        &format!("SELECT {fields} FROM conversion WHERE {range}"),
        10_000,
    )
    .await;
    assert!(every.len() > 500, "{}", every.len());
    let id = |r: &Value| {
        r["conversion"]["id"]
            .as_str()
            .unwrap()
            .parse::<i64>()
            .unwrap()
    };
    let ad = |r: &Value| {
        r["conversion"]["adId"]
            .as_str()
            .unwrap()
            .parse::<i64>()
            .unwrap()
    };
    let campaign = |r: &Value| r["campaign"]["id"].as_str().unwrap().to_owned();
    let ids = |rows: &[Value]| rows.iter().map(id).collect::<Vec<_>>();
    let (lo, hi) = (id(&every[10]), id(&every[200]));
    let some_ad = ad(&every[3]);
    let some_campaign = campaign(&every[5]);
    let last_day = every.last().unwrap()["segments"]["date"]
        .as_str()
        .unwrap()
        .to_owned();
    let cases: Vec<(String, RowTest)> = vec![
        (
            format!("conversion.id BETWEEN {lo} AND {hi}"),
            Box::new(move |r| (lo..=hi).contains(&id(r))),
        ),
        (
            format!("conversion.id > {lo} AND conversion.id <= {hi}"),
            Box::new(move |r| id(r) > lo && id(r) <= hi),
        ),
        (
            format!("conversion.ad_id != {some_ad}"),
            Box::new(move |r| ad(r) != some_ad),
        ),
        (
            format!("campaign.id NOT IN ({some_campaign}, 1)"),
            Box::new({
                let c = some_campaign.clone();
                move |r| campaign(r) != c
            }),
        ),
        (
            "conversion.click_id LIKE '%a_'".to_owned(),
            Box::new(|r| {
                let c = r["conversion"]["clickId"].as_str().unwrap_or("");
                c.len() >= 2 && c.as_bytes()[c.len() - 2] == b'a'
            }),
        ),
        (
            "conversion.click_id IS NULL".to_owned(),
            Box::new(|r| r["conversion"].get("clickId").is_none()),
        ),
        (
            "conversion.status IN (REMOVED, 'ENABLED') AND conversion.status != REMOVED".to_owned(),
            Box::new(|r| r["conversion"]["status"] == "ENABLED"),
        ),
        (
            format!("segments.date = '{last_day}'"),
            Box::new(move |r| r["segments"]["date"] == last_day.as_str()),
        ),
    ];
    for (condition, holds) in cases {
        let got = all_rows(
            &fake,
            &format!("SELECT {fields} FROM conversion WHERE {range} AND {condition}"),
            97,
        )
        .await;
        let want: Vec<Value> = every.iter().filter(|r| holds(r)).cloned().collect();
        assert_eq!(ids(&got), ids(&want), "{condition}");
        // Each condition keeps some rows and drops others, so a fake that ignored it would fail.
        assert!(!want.is_empty() && want.len() < every.len(), "{condition}");
    }

    // ORDER BY several fields, one descending, paged: the documented order, every row once.
    let ordered = all_rows(
        &fake,
        &format!(
            "SELECT {fields} FROM conversion WHERE {range} \
             ORDER BY campaign.id DESC, conversion.ad_id, conversion.id DESC LIMIT 450"
        ),
        100,
    )
    .await;
    let mut want = every.clone();
    want.sort_by(|a, b| {
        campaign(b)
            .parse::<i64>()
            .unwrap()
            .cmp(&campaign(a).parse::<i64>().unwrap())
            .then(ad(a).cmp(&ad(b)))
            .then(id(b).cmp(&id(a)))
    });
    want.truncate(450);
    assert_eq!(ids(&ordered), ids(&want));
}

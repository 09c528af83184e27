//! The Reporting API (v0) side of the search ads fake, over raw HTTP: the QueryError shape for
//! queries Google refuses, page tokens that expire on the fake's clock, the
//! `login-customer-id` rule, the window, the field service and the ID-mapping file agreeing with
//! the rows' new ids.

use crate::common;

use std::time::Duration;

use chrono::Days;
use common::{client, json};
use fake_services::{FAILURE_TYPE, SearchAdsFake};
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

async fn search(
    fake: &SearchAdsFake,
    customer: &str,
    login: Option<&str>,
    body: Value,
) -> (u16, Value) {
    let mut request = client()
        .post(format!(
            "{}/v0/customers/{customer}/searchAds360:search",
            fake.reporting_url()
        ))
        .bearer_auth(fake.dev_token())
        .json(&body);
    if let Some(login) = login {
        request = request.header("login-customer-id", login);
    }
    json(request).await
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
            search(&fake, customer, None, json!({"query": query(&fake, extra)})).await;
        assert_eq!(status, 400, "{extra}: {body}");
        assert_eq!(body["error"]["status"], "INVALID_ARGUMENT");
        assert_eq!(
            first_error(&body)["errorCode"]["queryError"],
            code,
            "{extra}: {body}"
        );
    }
    let (status, body) = search(
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
        search(&fake, &customer, None, json!({"query": q, "pageSize": 250})).await;
    assert_eq!(status, 200, "{first}");
    assert_eq!(first["results"].as_array().unwrap().len(), 250);
    let token = first["nextPageToken"]
        .as_str()
        .expect("more pages")
        .to_owned();
    let mut seen = 250;
    let mut next = Some(token.clone());
    while let Some(t) = next {
        let (status, page) = search(
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
    let (status, body) = search(
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
    let (status, body) = search(
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
    let (status, body) = search(&fake, &behind, None, json!({"query": q})).await;
    assert_eq!(status, 403);
    assert_eq!(
        first_error(&body)["errorCode"]["authorizationError"],
        "USER_PERMISSION_DENIED"
    );
    let (status, body) = search(&fake, &behind, Some("2000012300"), json!({"query": q})).await;
    assert_eq!(status, 200, "{body}");
    let (status, body) = search(&fake, &behind, Some(&direct), json!({"query": q})).await;
    assert_eq!(status, 403);
    assert_eq!(
        first_error(&body)["errorCode"]["authorizationError"],
        "INVALID_LOGIN_CUSTOMER_ID_SERVING_CUSTOMER_ID_COMBINATION"
    );
    let (status, body) = search(&fake, &direct, Some("200-001-2300"), json!({"query": q})).await;
    assert_eq!(status, 400);
    assert_eq!(
        first_error(&body)["errorCode"]["headerError"],
        "INVALID_LOGIN_CUSTOMER_ID"
    );

    let (from, to) = dates(&fake, 60);
    let old = format!(
        "SELECT conversion.id FROM conversion WHERE segments.date BETWEEN '{from}' AND '{to}'"
    );
    let (status, body) = search(&fake, &direct, None, json!({"query": old})).await;
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
    let (status, body) = search(&fake, &direct, None, json!({"query": wide})).await;
    assert_eq!(status, 400);
    assert_eq!(
        first_error(&body)["errorCode"]["queryError"],
        "DATE_RANGE_TOO_WIDE"
    );
    for ok in [
        span(29, "conversion.id, segments.date"),
        span(30, "conversion.id"),
    ] {
        let (status, body) = search(&fake, &direct, None, json!({"query": ok})).await;
        assert_eq!(status, 200, "{ok}: {body}");
    }
}

#[tokio::test]
async fn rows_carry_the_new_ids_of_the_id_mapping_file() {
    let fake = fake().await;
    let account = fake.accounts()[0].clone();
    let (status, page) = search(
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

//! Reads (`conversion.get`): paging through the seeded conversions, date ranges, id filters, the
//! customer-id route and out-of-range parameters.

use std::collections::HashSet;

use super::{get_page, rows, small_fake, ts};
use crate::common::{client, google_message, json};

#[tokio::test]
async fn reads_page_through_seeded_conversions() {
    let fake = small_fake().await;
    let mut ids = HashSet::new();
    let mut last_ts = 0;
    for (start, expected) in [(0, 1000), (1000, 1000), (2000, 500)] {
        let (status, body) = get_page(
            &fake,
            &format!("startDate=20240101&endDate=20241231&startRow={start}&rowCount=1000"),
        )
        .await;
        assert_eq!(status, 200, "{body}");
        assert_eq!(body["kind"], "doubleclicksearch#conversionList");
        let page = rows(&body);
        assert_eq!(page.len(), expected);
        for (k, row) in page.iter().enumerate() {
            assert!(ids.insert(row["conversionId"].as_str().unwrap().to_owned()));
            assert!(ts(row) > last_ts, "timestamps increase");
            last_ts = ts(row);
            if k == 0 {
                assert_eq!(Some(row.clone()), fake.seeded_conversion(0, start));
            }
            for field in [
                "agencyId",
                "advertiserId",
                "engineAccountId",
                "dsConversionId",
            ] {
                assert!(row[field].is_string(), "{field} is an int64 string");
            }
        }
    }
    assert_eq!(ids.len(), 2500);
    let (status, body) = get_page(
        &fake,
        "startDate=20240101&endDate=20241231&startRow=2500&rowCount=10",
    )
    .await;
    assert_eq!(status, 200);
    assert!(body.get("conversion").is_none(), "empty lists are omitted");
    // Same seed, same data.
    let other = small_fake().await;
    assert_eq!(
        other.seeded_conversion(0, 77),
        fake.seeded_conversion(0, 77)
    );
}

#[tokio::test]
async fn date_range_selects_the_days_rows() {
    let fake = small_fake().await;
    let (status, body) = get_page(
        &fake,
        "startDate=20240103&endDate=20240103&startRow=0&rowCount=1000",
    )
    .await;
    assert_eq!(status, 200);
    let page = rows(&body);
    assert_eq!(page.len(), 100);
    let day_start = 1_704_240_000_000_i64; // 2024-01-03T00:00:00Z
    assert!(
        page.iter()
            .all(|r| (day_start..day_start + 86_400_000).contains(&ts(r)))
    );
    assert_eq!(
        page[0]["conversionId"],
        fake.seeded_conversion_id(0, 200).unwrap().as_str()
    );
    let (_, body) = get_page(
        &fake,
        "startDate=20230101&endDate=20231231&startRow=0&rowCount=1000",
    )
    .await;
    assert!(rows(&body).is_empty());
}

#[tokio::test]
async fn id_filters_select_matching_rows() {
    let fake = small_fake().await;
    let sample = fake.seeded_conversion(0, 7).unwrap();
    let campaign = sample["campaignId"].as_str().unwrap();
    let ad_group = sample["adGroupId"].as_str().unwrap();
    let criterion = sample["criterionId"].as_str().unwrap();
    let base = "startDate=20240101&endDate=20241231&rowCount=1000";
    let mut total = 0;
    for start in [0, 1000] {
        let (status, body) = get_page(
            &fake,
            &format!("{base}&startRow={start}&campaignId={campaign}"),
        )
        .await;
        assert_eq!(status, 200);
        let page = rows(&body);
        assert!(page.iter().all(|r| r["campaignId"] == campaign));
        total += page.len();
    }
    assert_eq!(total, 2500 / 4);
    let (_, body) = get_page(
        &fake,
        &format!("{base}&startRow=0&campaignId={campaign}&adGroupId={ad_group}"),
    )
    .await;
    let page = rows(&body);
    assert_eq!(page.len(), (0..2500).filter(|i| i % 12 == 7).count());
    assert!(page.iter().all(|r| r["adGroupId"] == ad_group));
    let (_, body) = get_page(&fake, &format!("{base}&startRow=0&criterionId={criterion}")).await;
    let page = rows(&body);
    assert!(!page.is_empty());
    assert!(page.iter().all(|r| r["criterionId"] == criterion));
    // A campaign and an ad group of another campaign contradict each other.
    let other = fake.seeded_conversion(0, 8).unwrap();
    let (_, body) = get_page(
        &fake,
        &format!(
            "{base}&startRow=0&campaignId={campaign}&adGroupId={}",
            other["adGroupId"].as_str().unwrap()
        ),
    )
    .await;
    assert!(rows(&body).is_empty());
    // Another account's campaign matches nothing here.
    let foreign = fake.seeded_conversion(1, 7).unwrap();
    let (_, body) = get_page(
        &fake,
        &format!(
            "{base}&startRow=0&campaignId={}",
            foreign["campaignId"].as_str().unwrap()
        ),
    )
    .await;
    assert!(rows(&body).is_empty());
}

#[tokio::test]
async fn get_by_customer_id_reads_the_same_account() {
    let fake = small_fake().await;
    let account = fake.accounts()[0].clone();
    let query = "startDate=20240101&endDate=20241231&startRow=10&rowCount=50";
    let (_, by_engine) = get_page(&fake, query).await;
    let url = format!(
        "{}/customer/{}/conversion?{query}",
        fake.base_url(),
        account.customer_id
    );
    let (status, by_customer) = json(client().get(&url).bearer_auth(fake.dev_token())).await;
    assert_eq!(status, 200);
    assert_eq!(by_engine, by_customer);
    let (_, filtered) = json(
        client()
            .get(format!(
                "{url}&engineAccountId={}",
                account.engine_account_id
            ))
            .bearer_auth(fake.dev_token()),
    )
    .await;
    assert_eq!(rows(&filtered).len(), 50);
    let (_, mismatched) = json(
        client()
            .get(format!("{url}&engineAccountId=1"))
            .bearer_auth(fake.dev_token()),
    )
    .await;
    assert!(rows(&mismatched).is_empty());
    let (status, body) = json(
        client()
            .get(format!(
                "{}/customer/999/conversion?{query}",
                fake.base_url()
            ))
            .bearer_auth(fake.dev_token()),
    )
    .await;
    assert_eq!(status, 403);
    assert_eq!(
        body["error"]["errors"][0]["reason"],
        "insufficientPermissions"
    );
    let (status, _) = json(
        client()
            .get(format!(
                "{}/agency/1/advertiser/2/engine/3/conversion?{query}",
                fake.base_url()
            ))
            .bearer_auth(fake.dev_token()),
    )
    .await;
    assert_eq!(status, 403);
}

#[tokio::test]
async fn out_of_range_parameters_are_request_validation_errors() {
    let fake = small_fake().await;
    let ok = "startDate=20240101&endDate=20240131&startRow=0&rowCount=10";
    let cases = [
        (
            "startDate=20240101&endDate=20240131&startRow=0&rowCount=0",
            "rowCount",
        ),
        (
            "startDate=20240101&endDate=20240131&startRow=0&rowCount=1001",
            "rowCount",
        ),
        (
            "startDate=20091031&endDate=20240131&startRow=0&rowCount=10",
            "startDate",
        ),
        (
            "startDate=20240101&endDate=100000000&startRow=0&rowCount=10",
            "endDate",
        ),
        (
            "startDate=20240101&endDate=20240131&startRow=-1&rowCount=10",
            "startRow",
        ),
        (
            "startDate=20240101&endDate=20240131&startRow=4294967296&rowCount=10",
            "startRow",
        ),
        (
            "startDate=20240231&endDate=20240301&startRow=0&rowCount=10",
            "startDate",
        ),
        (
            "startDate=20240301&endDate=20240201&startRow=0&rowCount=10",
            "endDate",
        ),
        (
            "startDate=20240101&endDate=20240131&startRow=0&rowCount=ten",
            "rowCount",
        ),
        (&format!("{ok}&campaignId=abc"), "campaignId"),
    ];
    for (query, field) in cases {
        let (status, body) = get_page(&fake, query).await;
        assert_eq!(status, 400, "{query}: {body}");
        let item = &body["error"]["errors"][0];
        assert_eq!(item["reason"], "requestValidation", "{query}");
        assert_eq!(item["location"], field, "{query}");
        assert_eq!(item["locationType"], "parameter");
        assert_eq!(body["error"]["code"], 400);
    }
    let (status, body) = get_page(&fake, "startDate=20240101&endDate=20240131&rowCount=10").await;
    assert_eq!(status, 400);
    assert_eq!(google_message(&body), "Required parameter: startRow");
    let (status, body) = get_page(
        &fake,
        "startDate=20240101&endDate=20240131&startRow=0&rowCount=1001",
    )
    .await;
    assert_eq!(status, 400);
    assert_eq!(
        google_message(&body),
        "Invalid value '1001'. Values must be within the range: [1, 1000]"
    );
}

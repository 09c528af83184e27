//! `I64String` parameters go on the wire as plain digits, in the path (via
//! `Display`) and in the query (via `Serialize`).

use sa360_v2_client::{Client, ClientContext, I64String};

const CONVERSIONS: &str =
    r#"{"kind":"doubleclicksearch#conversionList","conversion":[{"agencyId":"1"}]}"#;

#[tokio::test]
async fn int64_parameters_are_digits_in_path_and_query() {
    let (addr, head) = test_support::one_shot_http(200, CONVERSIONS).await.unwrap();
    let client = Client::new(&format!("http://{addr}"), ClientContext::new());
    let list = client
        .conversion_get()
        .agency_id(20_700_000_000_000_001_i64)
        .advertiser_id("21700000000000002")
        .engine_account_id(I64String(-3))
        .campaign_id(4_i64)
        .start_date(20_240_101)
        .end_date(20_240_131)
        .start_row(0_u32)
        .row_count(100_u32)
        .send()
        .await
        .unwrap()
        .into_inner();
    assert_eq!(list.conversion[0].agency_id, Some(I64String(1)));

    let head = head.await.unwrap();
    let request_line = head.lines().next().unwrap();
    let (path, query) = request_line
        .strip_prefix("GET ")
        .and_then(|r| r.strip_suffix(" HTTP/1.1"))
        .and_then(|target| target.split_once('?'))
        .unwrap_or_else(|| panic!("{request_line}"));
    assert_eq!(
        path,
        "/agency/20700000000000001/advertiser/21700000000000002/engine/-3/conversion"
    );
    let mut params: Vec<&str> = query.split('&').collect();
    params.sort_unstable();
    assert_eq!(
        params,
        [
            "campaignId=4",
            "endDate=20240131",
            "rowCount=100",
            "startDate=20240101",
            "startRow=0",
        ]
    );
}

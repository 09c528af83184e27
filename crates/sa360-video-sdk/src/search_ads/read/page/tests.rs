use proptest::prelude::*;
use serde_json::{Value, json};

use super::*;
use crate::search_ads::test_support::{self, Member, one_of, recording_client, unknown_members};
use crate::search_ads::wire::conversion_from_wire;

/// What a decoder makes of a page: `Err(())` when the page is not the spec's JSON; else the
/// conversions, or the first one's error.
type Outcome = Result<Rows, ()>;

/// The generated client's way: `ConversionList`, then the mapping of each conversion.
fn generated(body: &[u8]) -> Outcome {
    let page: types::ConversionList = serde_json::from_slice(body).map_err(|_| ())?;
    Ok(page
        .conversion
        .into_iter()
        .map(conversion_from_wire)
        .collect())
}

fn decoded(body: &[u8]) -> Outcome {
    decode(body).map_err(|_| ())
}

/// A member: usually a value of `valid`, sometimes absent or `null`, and in hostile pages
/// sometimes of the wrong JSON type.
fn member(name: &'static str, valid: BoxedStrategy<Value>, hostile: bool) -> BoxedStrategy<Member> {
    let wrong = prop_oneof![
        Just(json!(true)),
        Just(json!([1])),
        Just(json!({"a": 1})),
        Just(json!(1.5)),
    ];
    prop_oneof![
        60 => valid.prop_map(move |v| Some((name.to_owned(), v))),
        3 => Just(None),
        1 => Just(Some((name.to_owned(), Value::Null))),
        u32::from(hostile) => wrong.prop_map(move |v| Some((name.to_owned(), v))),
    ]
    .boxed()
}

/// An object of the present members and up to one unknown member.
fn object(members: Vec<BoxedStrategy<Member>>) -> BoxedStrategy<Value> {
    test_support::object(members, unknown_members("[a-z]{1,4}".boxed()))
}

/// An int64 member: a string of digits, a JSON number, or (in hostile pages) text that is not
/// one and numbers out of range.
fn int64(hostile: bool) -> BoxedStrategy<Value> {
    let h = u32::from(hostile);
    prop_oneof![
        8 => any::<i64>().prop_map(|n| Value::from(n.to_string())),
        4 => (0i64..10_000_000).prop_map(|n| Value::from(n.to_string())),
        2 => any::<i64>().prop_map(Value::from),
        h => Just(json!("12x")),
        h => Just(json!(" 12")),
        h => Just(json!("99999999999999999999")),
        h => Just(json!(u64::MAX)),
    ]
    .boxed()
}

/// Text, with characters JSON escapes.
fn text() -> BoxedStrategy<Value> {
    prop_oneof![
        4 => "[A-Za-z0-9_-]{0,12}".prop_map(Value::from),
        1 => "[a-z\"\\\\/\n\té€]{0,8}".prop_map(Value::from),
    ]
    .boxed()
}

/// Digits in a string (epoch milliseconds, micros), sometimes not quite.
fn digits() -> BoxedStrategy<Value> {
    prop_oneof![
        20 => (0i64..4_000_000_000_000).prop_map(|n| Value::from(n.to_string())),
        2 => any::<i64>().prop_map(|n| Value::from(n.to_string())),
        1 => one_of(&[" 1700000000000 ", "1.5", "", "yesterday", "-0", "+12", "١٢"]),
    ]
    .boxed()
}

fn conversion(hostile: bool) -> BoxedStrategy<Value> {
    let m = |name, valid| member(name, valid, hostile);
    let int64 = || int64(hostile);
    let custom_dimension =
        prop::collection::vec(object(vec![m("name", text()), m("value", text())]), 0..2)
            .prop_map(Value::from)
            .boxed();
    let custom_metric = prop::collection::vec(
        object(vec![
            m("name", text()),
            m(
                "value",
                prop_oneof![
                    any::<i32>().prop_map(Value::from),
                    (-1e9f64..1e9).prop_map(Value::from)
                ]
                .boxed(),
            ),
        ]),
        0..2,
    )
    .prop_map(Value::from)
    .boxed();
    // Split in two: proptest's tuples of strategies stop at 12, vectors do not.
    object(vec![
        m("adGroupId", int64()),
        m("adId", int64()),
        m(
            "adUserDataConsent",
            prop_oneof![4 => one_of(&["GRANTED", "DENIED", "UNKNOWN"]), 1 => text()].boxed(),
        ),
        m("advertiserId", int64()),
        m("agencyId", int64()),
        m("attributionModel", text()),
        m("campaignId", int64()),
        m(
            "channel",
            prop_oneof![4 => one_of(&["online", "local"]), 1 => text()].boxed(),
        ),
        m("clickId", text()),
        m("conversionId", text()),
        m("conversionModifiedTimestamp", int64()),
        m("conversionTimestamp", digits()),
        m("countMillis", int64()),
        m("criterionId", int64()),
        m("currencyCode", one_of(&["EUR", "USD", "JPY"])),
        m("customDimension", custom_dimension),
        m("customMetric", custom_metric),
        m(
            "customerId",
            prop_oneof![
                8 => (0i64..10_000_000_000).prop_map(|n| Value::from(n.to_string())),
                1 => one_of(&["", "12 34", "a/b", "é"]),
            ]
            .boxed(),
        ),
        m(
            "deviceType",
            prop_oneof![4 => one_of(&["DESKTOP", "MOBILE", "TABLET"]), 1 => text()].boxed(),
        ),
        m("dsConversionId", int64()),
        m("engineAccountId", int64()),
        m("floodlightOrderId", text()),
        m("inventoryAccountId", int64()),
        m("productCountry", text()),
        m("productGroupId", int64()),
        m("productId", text()),
        m("productLanguage", text()),
        m("quantityMillis", int64()),
        m("revenueMicros", digits()),
        m("segmentationId", int64()),
        m("segmentationName", text()),
        m(
            "segmentationType",
            prop_oneof![4 => Just(json!("FLOODLIGHT")), 1 => text()].boxed(),
        ),
        m(
            "state",
            prop_oneof![4 => one_of(&["ACTIVE", "REMOVED"]), 1 => text()].boxed(),
        ),
        m("storeId", text()),
        m(
            "type",
            prop_oneof![4 => one_of(&["ACTION", "TRANSACTION"]), 1 => text()].boxed(),
        ),
    ])
}

fn page() -> impl Strategy<Value = Value> {
    prop_oneof![4 => Just(false), 1 => Just(true)].prop_flat_map(|hostile| {
        let conversions = prop_oneof![
            20 => prop::collection::vec(conversion(hostile), 0..6).prop_map(Value::from),
            u32::from(hostile) => Just(json!({})),
            u32::from(hostile) => Just(json!([1])),
        ]
        .boxed();
        object(vec![
            member("conversion", conversions, hostile),
            member(
                "kind",
                Just(json!("doubleclicksearch#conversionList")).boxed(),
                hostile,
            ),
        ])
    })
}

/// Cases run by the property test below.
const CASES: u32 = 1_024;

proptest! {
    #![proptest_config(ProptestConfig::with_cases(CASES))]

    /// Both decoders agree on every page: the same conversions field by field (or the same
    /// first error), or both reject the page.
    #[test]
    fn the_decoder_agrees_with_the_generated_type_and_mapping(page in page()) {
        let body = serde_json::to_vec(&page).unwrap();
        prop_assert_eq!(decoded(&body), generated(&body), "page: {}", page);
    }
}

#[test]
fn duplicate_members_and_broken_pages_are_rejected_by_both() {
    for body in [
        r#"{"conversion": [{"conversionId": "1", "conversionId": "2"}]}"#,
        r#"{"conversion": [], "conversion": []}"#,
        r#"{"conversion": null}"#,
        r#"{"conversion": [{"agencyId": "1"}]"#,
        r#"{"conversion": [] "kind": "a"}"#,
        r#"{"conversion": [{"customDimension": null}]}"#,
        r#"{"conversion": [{"customMetric": [{"value": "3"}]}]}"#,
        r#"{"conversion": []} x"#,
        r#"[[], "kind", 3]"#,
        r#""conversion""#,
        "",
    ] {
        assert_eq!(generated(body.as_bytes()), Err(()), "{body}");
        assert_eq!(decoded(body.as_bytes()), Err(()), "{body}");
    }
}

#[test]
fn the_same_pages_are_accepted_by_both() {
    for body in [
        r#"{}"#,
        r#"{"kind": null, "conversion": []}"#,
        r#"[[{"conversionId": "a\"b\u00e9"}], "kind"]"#,
        r#"{"conversion": [{"conversionId": "x", "clickId": null, "agencyId": 12, "revenueMicros": " 5 "}]}"#,
    ] {
        let generated = generated(body.as_bytes());
        assert!(matches!(&generated, Ok(Ok(_))), "{body}: {generated:?}");
        assert_eq!(decoded(body.as_bytes()), generated, "{body}");
    }
    let rows = decoded(br#"{"conversion": [{"conversionId": "a\"b\u00e9\\"}]}"#)
        .unwrap()
        .unwrap();
    assert_eq!(rows[0].conversion_id.as_deref(), Some("a\"bé\\"));
}

#[test]
fn a_conversion_that_cannot_be_typed_is_named_by_its_field() {
    let body = br#"{"conversion": [{"conversionId": "a"}, {"revenueMicros": "1.5"}, {"conversionTimestamp": "x"}]}"#;
    assert_eq!(
        decoded(body),
        Ok(Err(
            "revenueMicros \"1.5\" is not a whole number of micros".to_owned()
        ))
    );
    assert_eq!(decoded(body), generated(body));
}

/// Memory: a page holds at most the largest page the API answers; the generated type would
/// take any number.
#[test]
fn a_page_longer_than_the_largest_page_is_refused() {
    let page = |n: usize| {
        let rows: Vec<Value> = (0..n)
            .map(|i| json!({"conversionId": i.to_string()}))
            .collect();
        serde_json::to_vec(&json!({"conversion": rows})).unwrap()
    };
    let full = page(MAX_PAGE_SIZE as usize);
    assert_eq!(decoded(&full).unwrap().unwrap().len(), 1000);
    let long = page(MAX_PAGE_SIZE as usize + 1);
    let detail = decoded(&long).unwrap().unwrap_err();
    assert!(detail.contains("more than 1000 conversions"), "{detail}");
    assert_eq!(generated(&long).unwrap().unwrap().len(), 1001);
    // Past the limit the page is still checked as JSON.
    let mut broken = page(MAX_PAGE_SIZE as usize + 1);
    let at = broken.len() - 3;
    broken.splice(at..at, *br#","x""#);
    assert_eq!(decoded(&broken), Err(()));
}

/// The request of a page is the one the generated builder makes, for both methods, with and
/// without filters, with ids that need percent-encoding.
#[tokio::test]
async fn the_request_is_the_generated_builders() {
    use sa360_v2_client::I64String;
    let (client, recorder) = recording_client();
    let account = Owner::EngineAccount {
        agency_id: -20,
        advertiser_id: 21,
        engine_account_id: 700,
    };
    let all = Filters {
        ad_group_id: Some(5),
        ad_id: Some(-6),
        advertiser_id: Some(2),
        agency_id: Some(1),
        campaign_id: Some(71700000001899732),
        criterion_id: Some(7),
        customer_id: Some("é%20x\\y<>`{}\"|^[]".to_owned()),
        engine_account_id: Some(3),
    };
    let customers = ["2000012350", "é%20x\\y<>`{}\"|^[]"];
    for (filters, customer, row_count) in [
        (Filters::default(), customers[0], 1000),
        (all, customers[1], 250),
    ] {
        let by_account = PageQuery {
            owner: account.clone(),
            dates: (20240101, 20241231),
            row_count,
            filters: filters.clone(),
        };
        let by_customer = PageQuery {
            owner: Owner::Customer(customer.to_owned()),
            ..by_account.clone()
        };
        for (query, start_row) in [(by_account, 0), (by_customer, 4_294_967_000)] {
            let f = &query.filters;
            let id = |v: Option<i64>| v.map(I64String::new);
            let generated = match &query.owner {
                Owner::EngineAccount {
                    agency_id,
                    advertiser_id,
                    engine_account_id,
                } => {
                    let mut call = client
                        .conversion_get()
                        .agency_id(I64String::new(*agency_id))
                        .advertiser_id(I64String::new(*advertiser_id))
                        .engine_account_id(I64String::new(*engine_account_id))
                        .start_date(query.dates.0)
                        .end_date(query.dates.1)
                        .start_row(start_row)
                        .row_count(query.row_count);
                    if let Some(v) = id(f.campaign_id) {
                        call = call.campaign_id(v);
                    }
                    if let Some(v) = id(f.ad_group_id) {
                        call = call.ad_group_id(v);
                    }
                    if let Some(v) = id(f.ad_id) {
                        call = call.ad_id(v);
                    }
                    if let Some(v) = id(f.criterion_id) {
                        call = call.criterion_id(v);
                    }
                    if let Some(v) = &f.customer_id {
                        call = call.customer_id(v.clone());
                    }
                    call.send().await.map(drop)
                }
                Owner::Customer(c) => {
                    let mut call = client
                        .conversion_get_by_customer_id()
                        .customer_id(c.clone())
                        .start_date(query.dates.0)
                        .end_date(query.dates.1)
                        .start_row(start_row)
                        .row_count(query.row_count);
                    if let Some(v) = id(f.agency_id) {
                        call = call.agency_id(v);
                    }
                    if let Some(v) = id(f.advertiser_id) {
                        call = call.advertiser_id(v);
                    }
                    if let Some(v) = id(f.engine_account_id) {
                        call = call.engine_account_id(v);
                    }
                    if let Some(v) = id(f.campaign_id) {
                        call = call.campaign_id(v);
                    }
                    if let Some(v) = id(f.ad_group_id) {
                        call = call.ad_group_id(v);
                    }
                    if let Some(v) = id(f.ad_id) {
                        call = call.ad_id(v);
                    }
                    if let Some(v) = id(f.criterion_id) {
                        call = call.criterion_id(v);
                    }
                    call.send().await.map(drop)
                }
            };
            assert!(generated.is_err(), "nothing is sent");
            assert!(fetch(&client, &query, start_row).await.is_err());
            let requests = recorder.take();
            assert_eq!(requests.len(), 2, "{requests:?}");
            assert_eq!(requests[1], requests[0], "{query:?}");
        }
    }
}

/// A loopback server answering every request with `head` and `body` (then waiting), and a
/// client with `limits` on it.
async fn serve(
    head: String,
    body: Vec<u8>,
    limits: sa360_video_client_support::BodyLimits,
) -> sa360_v2_client::Client {
    let url = test_support::serve_raw(head, body).await;
    let context = sa360_v2_client::ClientContext::new().with_body_limits(limits);
    sa360_v2_client::Client::new_with_client(&url, reqwest::Client::new(), context)
}

fn query() -> PageQuery {
    PageQuery {
        owner: Owner::EngineAccount {
            agency_id: 1,
            advertiser_id: 2,
            engine_account_id: 3,
        },
        dates: (20240101, 20240102),
        row_count: 1000,
        filters: Filters::default(),
    }
}

fn transport_kind(error: ClientError) -> crate::http::TransportErrorKind {
    match crate::search_ads::wire::map_error("conversion.get", error) {
        crate::search_ads::error::Error::Transport(t) => t.kind,
        other => panic!("{other:?}"),
    }
}

/// The page is read through the generated client's `exec` hook, so `max_body_bytes` holds for
/// the bytes this decoder reads, counted while they arrive.
#[tokio::test]
async fn a_page_larger_than_max_body_bytes_is_refused() {
    let body = format!(r#"{{"conversion": [], "kind": "{}"}}"#, "x".repeat(8192));
    // No Content-Length: the limit counts the bytes as they come.
    let head = "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\nconnection: close\r\n\r\n";
    let limits = sa360_video_client_support::BodyLimits::default().with_max_bytes(4096);
    let client = serve(head.to_owned(), body.into_bytes(), limits).await;
    let error = fetch(&client, &query(), 0).await.unwrap_err();
    let kind = transport_kind(error);
    assert!(
        matches!(
            kind,
            crate::http::TransportErrorKind::TooLarge { limit: 4096, .. }
        ),
        "{kind:?}"
    );
}

/// ... and so does the stall timeout: a page that stops arriving fails instead of hanging.
#[tokio::test]
async fn a_page_that_stalls_fails() {
    let head =
        "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 100000\r\n\r\n";
    let limits = sa360_video_client_support::BodyLimits::default()
        .with_stall_timeout(std::time::Duration::from_millis(300));
    let client = serve(head.to_owned(), br#"{"conversion": ["#.to_vec(), limits).await;
    let started = std::time::Instant::now();
    let error = fetch(&client, &query(), 0).await.unwrap_err();
    let kind = transport_kind(error);
    assert!(
        matches!(kind, crate::http::TransportErrorKind::Stalled { .. }),
        "{kind:?}"
    );
    assert!(started.elapsed() < std::time::Duration::from_secs(10));
}

/// Text that is not UTF-8 is refused where it is read (the page decodes with the generated
/// type); inside a member nobody reads it is skipped, as the generated type skips it.
#[test]
fn a_page_that_is_not_utf8_is_refused() {
    let inside = b"{\"conversion\": [{\"conversionId\": \"a\xff\"}]}";
    assert_eq!(generated(inside), Err(()));
    assert_eq!(decoded(inside), Err(()));
    let ignored = b"{\"conversion\": [{\"unknownMember\": \"a\xff\"}]}";
    assert!(generated(ignored).is_ok());
    assert_eq!(decode(ignored).unwrap().unwrap().len(), 1);
}

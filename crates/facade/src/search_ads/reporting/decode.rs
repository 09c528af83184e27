//! A `searchAds360:search` answer read as bytes and decoded straight into [`Conversion`]s.
//!
//! The generated client decodes a page into `SearchSearchAds360Response`: every row a 2.2 KiB
//! `SearchAds360Row` with an owned `String` per member, grown into a `Vec` of 10 000 (22 MB per
//! page), which the report then maps to `Conversion`s. This file skips that step for the report's
//! hot path, in two passes over the page's bytes:
//!
//! 1. [`SearchPage::parse`] reads the top level only: `nextPageToken`, and where the `results`
//!    array lies (a [`RawValue`]: scanned, checked as JSON, not decoded). So the shard knows its
//!    next page token, and sends the next request, before any row is decoded.
//! 2. [`SearchPage::rows`] runs a serde visitor over the `results` array that decodes each row
//!    into a small borrowing [`WireRow`] (the members the report selects, text borrowed from the
//!    page where it holds no escapes) and maps it to a `Conversion` at once: no row struct
//!    outlives its mapping, and only the text a `Conversion` keeps is copied.
//!
//! The mapping follows the table in [`mapping`](super::mapping); the property test below holds
//! it to the generated type plus [`conversion_from_row`](super::mapping::conversion_from_row) on
//! random pages (absent, `null` and unknown members, escapes, numbers for int64 strings, wrong
//! types). Where they differ on purpose: members the report does not read (those a conversion
//! report does not select, and the page's headers, `fieldMask`, `summaryRow`) are skipped as JSON
//! without their types being checked, where the generated type rejects the page when one has the
//! wrong type.
//!
//! The request is the generated client's: the spec's `SearchSearchAds360Request` body, its
//! headers, its `pre` (authorization) and `exec` (tracing span, body size and stall limits of
//! [`HttpOptions`](crate::http::HttpOptions)) hooks; only the 200 answer's body is taken as bytes
//! instead of through the generated decoder. Error answers go through the generated
//! `ErrorResponse` as before.

use std::borrow::Cow;
use std::fmt;
use std::ops::Range;

use bytes::Bytes;
use chrono::NaiveDate;
use search_ads_client::__glue::{ClientHooks, OperationInfo};
use search_ads_reporting_client::{ClientInfo, I64String, ResponseValue, types};
use serde::Deserialize;
use serde::de::{self, Deserializer as _, SeqAccess, Visitor};
use serde_json::value::RawValue;

use super::super::conversion::Conversion;
use super::super::values::{
    AdGroupId, AdId, CampaignId, CriterionId, CustomerId, DsConversionId, InventoryAccountId,
    Micros,
};
use super::mapping::{self, RowKey, parse_date_time};

/// The generated client's error type for the search call.
pub(crate) type SearchError = search_ads_reporting_client::Error<types::ErrorResponse>;

/// One `searchAds360:search` call with the generated client's request, hooks and limits; the
/// 200 answer's body comes back as a [`SearchPage`] (top level read, rows not yet decoded).
pub(crate) async fn search(
    client: &search_ads_reporting_client::Client,
    customer: &str,
    login_customer_id: Option<&str>,
    body: &types::SearchSearchAds360Request,
) -> Result<SearchPage, SearchError> {
    // The customer id is digits only (checked before the report starts), so it needs no
    // percent-encoding in the path.
    let url = format!(
        "{}/v0/customers/{customer}/searchAds360:search",
        client.baseurl()
    );
    let mut request = client
        .client()
        .post(url)
        .header(reqwest::header::ACCEPT, "application/json")
        .header(
            "api-version",
            search_ads_reporting_client::Client::api_version(),
        )
        .json(body);
    if let Some(login) = login_customer_id {
        request = request.header("login-customer-id", login);
    }
    let mut request = request.build()?;
    let info = OperationInfo {
        operation_id: "customers_search_ads360_search",
    };
    client
        .pre::<types::ErrorResponse>(&mut request, &info)
        .await?;
    let result = client.exec(request, &info).await;
    let response = result?;
    tracing::Span::current().record("status", response.status().as_u16());
    match response.status().as_u16() {
        200 => {
            let body = response
                .bytes()
                .await
                .map_err(SearchError::ResponseBodyError)?;
            SearchPage::parse(body)
        }
        400..=599 => Err(SearchError::ErrorResponse(
            ResponseValue::from_response(response).await?,
        )),
        _ => Err(SearchError::UnexpectedResponse(response)),
    }
}

/// A page's bytes with its top level read: the next page token, and where the rows are.
#[derive(Debug)]
pub(crate) struct SearchPage {
    body: Bytes,
    /// The `results` array's bytes within `body` (`None`: no `results` member).
    results: Option<Range<usize>>,
    /// `nextPageToken`, `None` when absent, `null` or empty (the last page).
    pub next_page_token: Option<String>,
}

/// The top level of a page: the token, and the rows left as raw JSON.
#[derive(Deserialize)]
struct Head<'a> {
    #[serde(rename = "nextPageToken")]
    next_page_token: Option<String>,
    /// Not `Option<&RawValue>`, which would take `"results": null` as absent: the generated type
    /// (a `Vec` with a default) rejects a `null` array, and so does [`SearchPage::rows`].
    #[serde(borrow, default, deserialize_with = "some_raw")]
    results: Option<&'a RawValue>,
}

fn some_raw<'de, D: de::Deserializer<'de>>(d: D) -> Result<Option<&'de RawValue>, D::Error> {
    <&RawValue>::deserialize(d).map(Some)
}

/// Why a page's rows could not be read.
#[derive(Debug)]
pub(crate) enum RowsError {
    /// The page is not the documented JSON: a member the report reads has the wrong type.
    Payload(serde_json::Error),
    /// A row that cannot be a `Conversion` (the first one); names the member.
    Row(String),
}

/// A page's rows, decoded: each row's sort key and `segments.date` beside its conversion (two
/// vectors, so the conversions go to the reader as they are, without a copy).
#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) struct DecodedRows {
    pub keys: Vec<(RowKey, NaiveDate)>,
    pub conversions: Vec<Conversion>,
}

impl SearchPage {
    /// Reads the top level of `body` (the whole body is checked as JSON; the rows are skipped).
    #[expect(
        clippy::result_large_err,
        reason = "the generated client's error, as from its own send(); mapped by the caller"
    )]
    pub(crate) fn parse(body: Bytes) -> Result<Self, SearchError> {
        // An object only: serde's derived structs also take arrays, by position.
        let head = match serde_json::from_slice::<Head<'_>>(&body) {
            Ok(_) if body.trim_ascii_start().first() != Some(&b'{') => {
                let e = <serde_json::Error as de::Error>::invalid_type(
                    de::Unexpected::Seq,
                    &"a SearchSearchAds360Response object",
                );
                return Err(SearchError::InvalidResponsePayload(body, e));
            }
            Ok(head) => head,
            Err(e) => return Err(SearchError::InvalidResponsePayload(body, e)),
        };
        // The raw value borrows from `body`: its place in it.
        let results = head.results.map(|raw| {
            let start = raw.get().as_ptr() as usize - body.as_ptr() as usize;
            start..start + raw.get().len()
        });
        Ok(Self {
            next_page_token: head.next_page_token.filter(|t| !t.is_empty()),
            results,
            body,
        })
    }

    /// The page's bytes (for an error message).
    pub(crate) fn body(&self) -> &Bytes {
        &self.body
    }

    /// Decodes and maps every row, in order. After the first row that cannot be mapped the
    /// rest are still checked against the spec's types, so a page that the generated type would
    /// reject is a [`RowsError::Payload`] whatever row comes first.
    pub(crate) fn rows(&self) -> Result<DecodedRows, RowsError> {
        let Some(range) = self.results.clone() else {
            return Ok(DecodedRows::default());
        };
        let mut de = serde_json::Deserializer::from_slice(&self.body[range]);
        let (rows, failed) = de
            .deserialize_seq(RowsVisitor)
            .and_then(|out| de.end().map(|()| out))
            .map_err(RowsError::Payload)?;
        match failed {
            Some(detail) => Err(RowsError::Row(detail)),
            None => Ok(rows),
        }
    }
}

/// The `results` array, each row mapped as soon as it is decoded.
struct RowsVisitor;

impl<'de> Visitor<'de> for RowsVisitor {
    type Value = (DecodedRows, Option<String>);

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an array of SearchAds360Row")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let capacity = seq.size_hint().unwrap_or(0).min(10_000);
        let mut rows = DecodedRows {
            keys: Vec::with_capacity(capacity),
            conversions: Vec::with_capacity(capacity),
        };
        let mut failed = None;
        while let Some(row) = seq.next_element::<WireRow<'de>>()? {
            if failed.is_some() {
                continue; // checked, not mapped
            }
            match map_row(row) {
                Ok((key, date, conversion)) => {
                    rows.keys.push((key, date));
                    rows.conversions.push(conversion);
                }
                Err(detail) => failed = Some(detail),
            }
        }
        Ok((rows, failed))
    }
}

/// Text of the page: borrowed when it holds no escapes.
type Text<'a> = Option<Cow<'a, str>>;

/// The members of a row the report reads (the spec's `SearchAds360Row`; others are skipped).
#[derive(Deserialize)]
struct WireRow<'a> {
    #[serde(borrow)]
    conversion: Option<WireConversion<'a>>,
    #[serde(borrow)]
    customer: Option<WireCustomer<'a>>,
    campaign: Option<WireId>,
    #[serde(rename = "adGroup")]
    ad_group: Option<WireId>,
    #[serde(borrow)]
    segments: Option<WireSegments<'a>>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct WireConversion<'a> {
    id: Option<I64String>,
    #[serde(borrow)]
    advertiser_conversion_id: Text<'a>,
    #[serde(borrow)]
    conversion_date_time: Text<'a>,
    #[serde(borrow)]
    conversion_last_modified_date_time: Text<'a>,
    #[serde(borrow)]
    status: Text<'a>,
    conversion_revenue_micros: Option<I64String>,
    conversion_quantity: Option<I64String>,
    #[serde(borrow)]
    click_id: Text<'a>,
    #[serde(borrow)]
    floodlight_order_id: Text<'a>,
    ad_id: Option<I64String>,
    criterion_id: Option<I64String>,
    merchant_id: Option<I64String>,
    #[serde(borrow)]
    product_id: Text<'a>,
    #[serde(borrow)]
    product_channel: Text<'a>,
    #[serde(borrow)]
    product_country_code: Text<'a>,
    #[serde(borrow)]
    product_language_code: Text<'a>,
    #[serde(borrow)]
    product_store_id: Text<'a>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct WireCustomer<'a> {
    id: Option<I64String>,
    #[serde(borrow)]
    currency_code: Text<'a>,
}

/// `campaign` and `adGroup`: the id only.
#[derive(Deserialize)]
struct WireId {
    id: Option<I64String>,
}

#[derive(Deserialize)]
struct WireSegments<'a> {
    #[serde(borrow)]
    date: Text<'a>,
}

fn owned(text: Text<'_>) -> Option<String> {
    text.map(Cow::into_owned)
}

/// One row → its key, date and [`Conversion`] (the rules of [`mapping`](super::mapping)); `Err`
/// names the member that could not be read.
fn map_row(row: WireRow<'_>) -> Result<(RowKey, NaiveDate, Conversion), String> {
    let c = row.conversion.ok_or("the row has no `conversion` member")?;
    let id = c.id.ok_or("conversion.id is missing")?.get();
    let when = parse_date_time(
        "conversion.conversion_date_time",
        c.conversion_date_time
            .as_deref()
            .ok_or("conversion.conversion_date_time is missing")?,
    )?;
    let modified = c
        .conversion_last_modified_date_time
        .as_deref()
        .map(|t| parse_date_time("conversion.conversion_last_modified_date_time", t))
        .transpose()?;
    let state = c.status.map(mapping::state);
    let revenue = c.conversion_revenue_micros.map(|m| Micros::new(m.get()));
    let (customer_id, currency) = match row.customer {
        Some(customer) => (customer.id, customer.currency_code),
        None => (None, None),
    };
    let customer_id = customer_id
        .map(|id| CustomerId::new(id.get().to_string()))
        .transpose()
        .map_err(|e| e.to_string())?;
    let quantity_millis = mapping::quantity_millis(c.conversion_quantity.map(|q| q.get()))?;
    let channel = c.product_channel.as_deref().map(mapping::channel);
    let date = row
        .segments
        .and_then(|s| s.date)
        .and_then(|d| d.parse::<NaiveDate>().ok())
        .ok_or("segments.date is missing or not YYYY-MM-DD")?;
    let conversion = Conversion {
        conversion_id: owned(c.advertiser_conversion_id),
        conversion_timestamp: Some(when),
        conversion_modified_timestamp: modified,
        ds_conversion_id: Some(DsConversionId::new(id)),
        state,
        revenue_micros: revenue,
        currency_code: revenue.and(owned(currency)),
        quantity_millis,
        click_id: owned(c.click_id),
        floodlight_order_id: owned(c.floodlight_order_id),
        ad_id: c.ad_id.map(|v| AdId::new(v.get())),
        criterion_id: c.criterion_id.map(|v| CriterionId::new(v.get())),
        campaign_id: row
            .campaign
            .and_then(|x| x.id)
            .map(|v| CampaignId::new(v.get())),
        ad_group_id: row
            .ad_group
            .and_then(|x| x.id)
            .map(|v| AdGroupId::new(v.get())),
        customer_id,
        inventory_account_id: c.merchant_id.map(|v| InventoryAccountId::new(v.get())),
        product_id: owned(c.product_id),
        product_country: owned(c.product_country_code),
        product_language: owned(c.product_language_code),
        store_id: owned(c.product_store_id),
        channel,
        ..Conversion::default()
    };
    Ok(((when, id), date, conversion))
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;
    use serde_json::{Value, json};

    use super::*;
    use crate::search_ads::reporting::mapping::conversion_from_row;

    /// What a decoder makes of a page: `Err(())` when the page is not the spec's JSON; else the
    /// next page token and the rows (or the first row's error).
    type Outcome = Result<(Option<String>, Result<DecodedRows, String>), ()>;

    /// The generated client's way: `SearchSearchAds360Response`, then the existing mapping and
    /// the date check the report made before this decoder.
    fn generated(body: &[u8]) -> Outcome {
        let page: types::SearchSearchAds360Response =
            serde_json::from_slice(body).map_err(|_| ())?;
        let token = page.next_page_token.filter(|t| !t.is_empty());
        let mut rows = DecodedRows::default();
        for mut row in page.results {
            let date = row
                .segments
                .as_ref()
                .and_then(|s| s.date.as_deref())
                .and_then(|d| d.parse::<NaiveDate>().ok());
            match (conversion_from_row(&mut row), date) {
                (Ok((key, conversion)), Some(date)) => {
                    rows.keys.push((key, date));
                    rows.conversions.push(conversion);
                }
                (Err(detail), _) => return Ok((token, Err(detail))),
                (Ok(_), None) => {
                    return Ok((
                        token,
                        Err("segments.date is missing or not YYYY-MM-DD".to_owned()),
                    ));
                }
            }
        }
        Ok((token, Ok(rows)))
    }

    fn decoded(body: &[u8]) -> Outcome {
        let page = SearchPage::parse(Bytes::copy_from_slice(body)).map_err(|_| ())?;
        let token = page.next_page_token.clone();
        match page.rows() {
            Ok(rows) => Ok((token, Ok(rows))),
            Err(RowsError::Row(detail)) => Ok((token, Err(detail))),
            Err(RowsError::Payload(_)) => Err(()),
        }
    }

    type Member = Option<(String, Value)>;

    /// A member: usually a value of `valid`, sometimes absent or `null`, and in hostile pages
    /// sometimes of the wrong JSON type.
    fn member(
        name: &'static str,
        valid: BoxedStrategy<Value>,
        hostile: bool,
    ) -> BoxedStrategy<Member> {
        let wrong = prop_oneof![Just(json!(true)), Just(json!([1])), Just(json!({"a": 1}))];
        prop_oneof![
            80 => valid.prop_map(move |v| Some((name.to_owned(), v))),
            1 => Just(None),
            1 => Just(Some((name.to_owned(), Value::Null))),
            u32::from(hostile) => wrong.prop_map(move |v| Some((name.to_owned(), v))),
        ]
        .boxed()
    }

    /// Members the spec does not have (skipped by both), with any JSON value.
    fn unknown_members() -> BoxedStrategy<Vec<(String, Value)>> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::from),
            any::<i64>().prop_map(Value::from),
            any::<f64>().prop_map(Value::from),
            "[a-z\"\\\\é]{0,6}".prop_map(Value::from),
        ];
        let value = leaf.prop_recursive(2, 8, 3, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..3).prop_map(Value::from),
                prop::collection::vec(("[a-z]{1,4}", inner), 0..3)
                    .prop_map(|m| Value::Object(m.into_iter().collect())),
            ]
        });
        prop::collection::vec(("unknown[A-Za-z]{0,5}", value), 0..2).boxed()
    }

    fn object(members: Vec<BoxedStrategy<Member>>) -> BoxedStrategy<Value> {
        (members, unknown_members())
            .prop_map(|(members, unknown)| {
                Value::Object(members.into_iter().flatten().chain(unknown).collect())
            })
            .boxed()
    }

    /// An int64 member: a string of digits, a JSON number, or (in hostile pages) text that is
    /// not one and numbers out of range.
    fn int64(hostile: bool) -> BoxedStrategy<Value> {
        let h = u32::from(hostile);
        prop_oneof![
            8 => any::<i64>().prop_map(|n| Value::from(n.to_string())),
            4 => (0i64..10_000).prop_map(|n| Value::from(n.to_string())),
            2 => any::<i64>().prop_map(Value::from),
            h => Just(json!("12x")),
            h => Just(json!("99999999999999999999")),
            h => Just(json!(u64::MAX)),
        ]
        .boxed()
    }

    /// An int64 member's valid values only (for members the new decoder skips unchecked).
    fn valid_int64() -> BoxedStrategy<Value> {
        prop_oneof![
            any::<i64>().prop_map(|n| Value::from(n.to_string())),
            any::<i64>().prop_map(Value::from),
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

    fn one_of(values: &'static [&'static str]) -> BoxedStrategy<Value> {
        prop::sample::select(values).prop_map(Value::from).boxed()
    }

    fn date_time() -> BoxedStrategy<Value> {
        prop_oneof![
            40 => (0i64..2_000_000_000, 0u32..1_000_000, -12i32..14, prop::bool::ANY).prop_map(
                |(secs, micros, hours, fraction)| {
                    let offset = chrono::FixedOffset::east_opt(hours * 3600).unwrap();
                    let t = chrono::DateTime::from_timestamp(secs, micros * 1000)
                        .unwrap()
                        .with_timezone(&offset);
                    let format = if fraction {
                        "%Y-%m-%d %H:%M:%S%.6f%:z"
                    } else {
                        "%Y-%m-%d %H:%M:%S%:z"
                    };
                    Value::from(t.format(format).to_string())
                }
            ),
            // Not the documented form (SR-10).
            1 => one_of(&[
                "2026-10-01 12:34:56",
                "2026-10-01T12:34:56+00:00",
                "2026-10-01 12:34:56Z",
                "2026-10-01 12:34:56+0000",
                "yesterday",
            ]),
        ]
        .boxed()
    }

    fn row(hostile: bool) -> BoxedStrategy<Value> {
        let m = |name, valid| member(name, valid, hostile);
        let int64 = || int64(hostile);
        let conversion = object(vec![
            m("id", int64()),
            m("advertiserConversionId", text()),
            m("conversionDateTime", date_time()),
            m("conversionLastModifiedDateTime", date_time()),
            m(
                "status",
                prop_oneof![4 => one_of(&["ENABLED", "REMOVED"]), 1 => text()].boxed(),
            ),
            m("conversionRevenueMicros", int64()),
            m(
                "conversionQuantity",
                prop_oneof![
                    40 => (0i64..1_000).prop_map(|n| Value::from(n.to_string())),
                    1 => int64(),
                ]
                .boxed(),
            ),
            m("clickId", text()),
            m("floodlightOrderId", text()),
            m("adId", int64()),
            m("criterionId", int64()),
            m("merchantId", int64()),
            m("productId", text()),
            m(
                "productChannel",
                prop_oneof![4 => one_of(&["ONLINE", "LOCAL", "online", "Local"]), 1 => text()]
                    .boxed(),
            ),
            m("productCountryCode", text()),
            m("productLanguageCode", text()),
            m("productStoreId", text()),
            // Spec members the report does not read, with values of their types.
            member("visitId", valid_int64(), false),
            member("attributionType", text(), false),
            member("resourceName", text(), false),
        ]);
        let customer = object(vec![
            m("id", int64()),
            m("currencyCode", one_of(&["EUR", "USD", "JPY"])),
            member("descriptiveName", text(), false),
        ]);
        let id_only = || object(vec![m("id", int64()), member("name", text(), false)]);
        let date = prop_oneof![
            40 => (0i64..20_000).prop_map(|d| {
                let day = NaiveDate::from_ymd_opt(2000, 1, 1).unwrap() + chrono::Days::new(d as u64);
                Value::from(day.to_string())
            }),
            1 => one_of(&["2026-13-01", "2026-1-1", "", "today"]),
        ]
        .boxed();
        let segments = object(vec![m("date", date), member("device", text(), false)]);
        let wrong_object =
            |name: &'static str, valid: BoxedStrategy<Value>| member(name, valid, hostile);
        object(vec![
            wrong_object("conversion", conversion),
            wrong_object("customer", customer),
            wrong_object("campaign", id_only()),
            wrong_object("adGroup", id_only()),
            wrong_object("segments", segments),
            // An array member (not `null`: the generated type's `Vec` rejects it unchecked here).
            prop_oneof![
                Just(None),
                Just(Some(("customColumns".to_owned(), json!([]))))
            ]
            .boxed(),
        ])
    }

    fn page() -> impl Strategy<Value = Value> {
        prop_oneof![4 => Just(false), 1 => Just(true)].prop_flat_map(|hostile| {
            let results = prop_oneof![
                20 => prop::collection::vec(row(hostile), 0..8).prop_map(Value::from),
                u32::from(hostile) => Just(json!({})),
            ]
            .boxed();
            let token =
                prop_oneof![Just(json!("")), "[A-Za-z0-9=]{1,12}".prop_map(Value::from)].boxed();
            object(vec![
                member("results", results, hostile),
                member("nextPageToken", token, hostile),
                member("fieldMask", text(), false),
                member("totalResultsCount", valid_int64(), false),
            ])
        })
    }

    /// Cases run by the property test below. Of 300 pages drawn, 53 were rejected by both
    /// decoders, 109 ended at a row error and 138 decoded whole (339 rows).
    const CASES: u32 = 1_024;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(CASES))]

        /// Both decoders agree on every page: the same token, the same rows field by field (or
        /// the same first row error), or both reject the page.
        #[test]
        fn the_decoder_agrees_with_the_generated_type_and_mapping(page in page()) {
            let body = serde_json::to_vec(&page).unwrap();
            prop_assert_eq!(decoded(&body), generated(&body), "page: {}", page);
        }
    }

    #[test]
    fn duplicate_members_and_broken_pages_are_rejected_by_both() {
        for body in [
            r#"{"results": [{"conversion": {"id": "1", "id": "2"}}]}"#,
            r#"{"results": [], "results": []}"#,
            r#"{"results": null}"#,
            r#"{"results": [{"conversion": {"id": "1"}}"#,
            r#"{"results": [] "nextPageToken": "a"}"#,
            r#"["results"]"#,
            r#"[[], [], [], null, "token"]"#,
            "",
        ] {
            assert_eq!(generated(body.as_bytes()), Err(()), "{body}");
            assert_eq!(decoded(body.as_bytes()), Err(()), "{body}");
        }
    }

    #[test]
    fn the_token_is_read_without_the_rows_and_escaped_text_is_unescaped() {
        let body = br#"{"results": [{"conversion": {"id": "7", "conversionDateTime": "2026-10-01 12:00:00+00:00", "clickId": "a\"b\u00e9"}, "segments": {"date": "2026-10-01"}}], "nextPageToken": "next"}"#;
        let page = SearchPage::parse(Bytes::from_static(body)).unwrap();
        assert_eq!(page.next_page_token.as_deref(), Some("next"));
        let rows = page.rows().unwrap();
        assert_eq!(rows.conversions[0].click_id.as_deref(), Some("a\"bé"));
        assert_eq!(decoded(body), generated(body));
    }

    /// A loopback server answering every request with `head` and `body` (then waiting), and a
    /// client with `limits` on it.
    async fn serve(
        head: String,
        body: Vec<u8>,
        limits: client_support::BodyLimits,
    ) -> search_ads_reporting_client::Client {
        use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        tokio::spawn(async move {
            while let Ok((mut socket, _)) = listener.accept().await {
                let (head, body) = (head.clone(), body.clone());
                tokio::spawn(async move {
                    let mut buf = vec![0; 64 * 1024];
                    let _ = socket.read(&mut buf).await;
                    let _ = socket.write_all(head.as_bytes()).await;
                    let _ = socket.write_all(&body).await;
                    tokio::time::sleep(std::time::Duration::from_secs(30)).await;
                });
            }
        });
        let context = search_ads_client::ClientContext::new().with_body_limits(limits);
        search_ads_reporting_client::Client::new_with_client(&url, reqwest::Client::new(), context)
    }

    fn request() -> types::SearchSearchAds360Request {
        types::SearchSearchAds360Request {
            page_size: None,
            page_token: None,
            query: "SELECT conversion.id FROM conversion".to_owned(),
            return_total_results_count: None,
            summary_row_setting: None,
            validate_only: None,
        }
    }

    /// The page is read through the generated client's `exec` hook, so `max_body_bytes` holds
    /// for the bytes this decoder reads, counted while they arrive.
    #[tokio::test]
    async fn a_page_larger_than_max_body_bytes_is_refused() {
        let body = format!(r#"{{"results": [], "fieldMask": "{}"}}"#, "x".repeat(8192));
        // No Content-Length: the limit counts the bytes as they come.
        let head = "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\nconnection: close\r\n\r\n";
        let limits = client_support::BodyLimits::default().with_max_bytes(4096);
        let client = serve(head.to_owned(), body.into_bytes(), limits).await;
        let error = search(&client, "1234567890", None, &request())
            .await
            .unwrap_err();
        let error = crate::search_ads::reporting::rpc::map_error(
            crate::search_ads::reporting::rpc::OP_SEARCH,
            error,
        );
        assert!(
            matches!(
                &error,
                crate::search_ads::error::Error::Transport(t)
                    if matches!(t.kind, crate::http::TransportErrorKind::TooLarge { limit: 4096, .. })
            ),
            "{error:?}"
        );
    }

    /// ... and so does the stall timeout: a page that stops arriving fails instead of hanging.
    #[tokio::test]
    async fn a_page_that_stalls_fails() {
        let head =
            "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 100000\r\n\r\n";
        let limits = client_support::BodyLimits::default()
            .with_stall_timeout(std::time::Duration::from_millis(300));
        let client = serve(head.to_owned(), br#"{"results": ["#.to_vec(), limits).await;
        let started = std::time::Instant::now();
        let error = search(&client, "1234567890", None, &request())
            .await
            .unwrap_err();
        let error = crate::search_ads::reporting::rpc::map_error(
            crate::search_ads::reporting::rpc::OP_SEARCH,
            error,
        );
        assert!(
            matches!(
                &error,
                crate::search_ads::error::Error::Transport(t)
                    if matches!(t.kind, crate::http::TransportErrorKind::Stalled { .. })
            ),
            "{error:?}"
        );
        assert!(started.elapsed() < std::time::Duration::from_secs(10));
    }
}

//! A `searchAds360:search` answer read as bytes and decoded straight into [`Conversion`]s.
//!
//! The generated client decodes a page into `SearchSearchAds360Response`: every row a 2.2 KiB
//! `SearchAds360Row` with an owned `String` per member, grown into a `Vec` of 10 000 (22 MB per
//! page), which the report then maps to `Conversion`s. This file skips that step for the report's
//! hot path:
//!
//! 1. [`SearchPage::token_hint`] finds the top-level `nextPageToken` in the first and last
//!    [`HINT_WINDOW`] bytes of the page (where the service writes it: before or after `results`),
//!    without reading the rows, so the shard sends its next request before any row is decoded.
//!    It is a hint: [`SearchPage::decode`] reads the token again, and the shard drops a request
//!    sent with a hint that turns out different (only a page that is not JSON can make it so).
//! 2. [`SearchPage::decode`] reads the page once: the bytes checked as UTF-8 once (not string by
//!    string), then one serde pass over the top level that reads the token and runs a visitor over
//!    the `results` array, which decodes each row into a small borrowing [`WireRow`] (the members
//!    the report selects, text borrowed from the page where it holds no escapes) and maps it to a
//!    `Conversion` at once: no row struct outlives its mapping, and only the text a `Conversion`
//!    keeps is copied.
//!
//! The mapping follows the table in [`mapping`](super::mapping); the property test below holds
//! it to the generated type plus [`conversion_from_row`](super::mapping::conversion_from_row) on
//! random pages (absent, `null` and unknown members, escapes, numbers for int64 strings, wrong
//! types, members in any order and with any white space). Where they differ on purpose: members
//! the report does not read (those a conversion report does not select, and the page's headers,
//! `fieldMask`, `summaryRow`) are skipped as JSON without their types being checked, where the
//! generated type rejects the page when one has the wrong type; and a page that is not UTF-8 is
//! rejected as a whole (RFC 8259 §8.1), where the generated type checks only the strings it keeps.
//!
//! The request is the generated client's: the spec's `SearchSearchAds360Request` body, its
//! headers, its `pre` (authorization) and `exec` (tracing span, body size and stall limits of
//! [`HttpOptions`](crate::http::HttpOptions)) hooks; only the 200 answer's body is taken as bytes
//! instead of through the generated decoder. Error answers go through the generated
//! `ErrorResponse` as before.

use std::borrow::Cow;
use std::fmt;

use bytes::Bytes;
use chrono::NaiveDate;
use search_ads_client::__glue::{ClientHooks, OperationInfo};
use search_ads_reporting_client::{ClientInfo, I64String, ResponseValue, types};
use serde::Deserialize;
use serde::de::{
    self, DeserializeSeed, Deserializer as _, IgnoredAny, MapAccess, SeqAccess, Visitor,
};

use super::super::conversion::Conversion;
use super::super::values::{
    AdGroupId, AdId, CampaignId, CriterionId, CustomerId, DsConversionId, InventoryAccountId,
    Micros,
};
use super::mapping::{self, RowKey, parse_date, parse_date_time};

/// The generated client's error type for the search call.
pub(crate) type SearchError = search_ads_reporting_client::Error<types::ErrorResponse>;

/// One `searchAds360:search` call with the generated client's request, hooks and limits; the
/// 200 answer's body comes back as a [`SearchPage`] (bytes, not yet read).
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
    // In the generated builder's order: accept, the JSON body, then the spec's headers.
    let mut request = client
        .client()
        .post(url)
        .header(reqwest::header::ACCEPT, "application/json")
        .json(body)
        .header(
            "api-version",
            search_ads_reporting_client::Client::api_version(),
        );
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
    client.post::<types::ErrorResponse>(&result, &info).await?;
    let response = result?;
    tracing::Span::current().record("status", response.status().as_u16());
    match response.status().as_u16() {
        200 => {
            let body = response
                .bytes()
                .await
                .map_err(SearchError::ResponseBodyError)?;
            Ok(SearchPage { body })
        }
        400..=599 => Err(SearchError::ErrorResponse(
            ResponseValue::from_response(response).await?,
        )),
        _ => Err(SearchError::UnexpectedResponse(response)),
    }
}

/// The bytes of a page's answer.
#[derive(Debug)]
pub(crate) struct SearchPage {
    body: Bytes,
}

/// A page read: its next page token (`None` when absent, `null` or empty: the last page), and
/// its rows (or the first row that cannot be a `Conversion`, named).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct DecodedPage {
    pub next_page_token: Option<String>,
    pub rows: Result<DecodedRows, String>,
}

/// A page's rows, decoded: each row's sort key and `segments.date` beside its conversion (two
/// vectors, so the conversions go to the reader as they are, without a copy).
#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) struct DecodedRows {
    pub keys: Vec<(RowKey, NaiveDate)>,
    pub conversions: Vec<Conversion>,
}

impl SearchPage {
    /// A page of `body` (tests).
    #[cfg(test)]
    pub(crate) fn from_bytes(body: Bytes) -> Self {
        Self { body }
    }

    /// The page's bytes (for an error message).
    pub(crate) fn body(&self) -> &Bytes {
        &self.body
    }

    /// The top-level `nextPageToken` if it is found in the first or last [`HINT_WINDOW`] bytes
    /// (see [`token_hint`]); a hint, which [`decode`](Self::decode) confirms.
    pub(crate) fn token_hint(&self) -> Option<&str> {
        token_hint(&self.body)
    }

    /// Reads the page: its token and every row, in order, each row mapped as soon as it is
    /// decoded, into vectors of `capacity` (the page size asked for). After the first row that
    /// cannot be mapped the rest are still checked against the spec's types, so a page that the
    /// generated type would reject is an `Err` whatever row comes first. `Err`: the page is not
    /// the documented JSON (a member the report reads has the wrong type, ...).
    pub(crate) fn decode(&self, capacity: usize) -> Result<DecodedPage, serde_json::Error> {
        // Checked once here, so the deserializer need not check each string.
        let text = std::str::from_utf8(&self.body).map_err(|e| {
            <serde_json::Error as de::Error>::custom(format_args!("the page is not UTF-8: {e}"))
        })?;
        let mut de = serde_json::Deserializer::from_str(text);
        let page = de.deserialize_map(PageVisitor {
            capacity: capacity
                .min(usize::try_from(super::options::MAX_REPORT_PAGE_SIZE).unwrap_or(usize::MAX)),
        })?;
        de.end()?;
        Ok(page)
    }
}

/// Most bytes [`token_hint`] reads from each end of a page: the members around `results` are a
/// few hundred bytes; beyond this window the hint gives up and the token comes from the decode.
pub(crate) const HINT_WINDOW: usize = 64 * 1024;

/// The top-level `nextPageToken` of a page, read without its rows: forward from the start over
/// the members before `results`, else backward from the end over those after it, each within
/// [`HINT_WINDOW`] bytes. `None` when it is not found there, is not a plain string (escapes,
/// `null`, empty), or the page does not look like JSON. For a page that is JSON, a `Some` is the
/// token the decode reads (the property test below checks it on pages in any member order).
pub(crate) fn token_hint(body: &[u8]) -> Option<&str> {
    forward_hint(&body[..body.len().min(HINT_WINDOW)]).or_else(|| backward_hint(body))
}

const TOKEN: &[u8] = b"nextPageToken";
const RESULTS: &[u8] = b"results";

fn skip_ws(b: &[u8], mut i: usize) -> usize {
    while b.get(i).is_some_and(u8::is_ascii_whitespace) {
        i += 1;
    }
    i
}

/// The end (past the closing quote) of the string that starts at `i`.
fn skip_string(b: &[u8], i: usize) -> Option<usize> {
    if b.get(i) != Some(&b'"') {
        return None;
    }
    let mut j = i + 1;
    loop {
        match b.get(j)? {
            b'"' => return Some(j + 1),
            b'\\' => j += 2,
            _ => j += 1,
        }
    }
}

/// The text of the string at `i` if it has no escapes, and its end.
fn plain_string(b: &[u8], i: usize) -> Option<(&[u8], usize)> {
    let end = skip_string(b, i)?;
    let text = &b[i + 1..end - 1];
    (!text.contains(&b'\\')).then_some((text, end))
}

/// The end of the JSON value that starts at `i`.
fn skip_value(b: &[u8], i: usize) -> Option<usize> {
    match *b.get(i)? {
        b'"' => skip_string(b, i),
        b'{' | b'[' => {
            let mut depth = 0usize;
            let mut j = i;
            loop {
                match *b.get(j)? {
                    b'"' => {
                        j = skip_string(b, j)?;
                        continue;
                    }
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth -= 1;
                        if depth == 0 {
                            return Some(j + 1);
                        }
                    }
                    _ => {}
                }
                j += 1;
            }
        }
        _ => {
            let mut j = i;
            while b
                .get(j)
                .is_some_and(|c| !matches!(c, b',' | b'}' | b']') && !c.is_ascii_whitespace())
            {
                j += 1;
            }
            (j > i && j < b.len()).then_some(j)
        }
    }
}

/// The token among the top-level members before `results`.
fn forward_hint(b: &[u8]) -> Option<&str> {
    let mut i = skip_ws(b, 0);
    if b.get(i) != Some(&b'{') {
        return None;
    }
    i += 1;
    loop {
        i = skip_ws(b, i);
        let (key, after) = plain_string(b, i)?;
        i = skip_ws(b, after);
        if b.get(i) != Some(&b':') {
            return None;
        }
        i = skip_ws(b, i + 1);
        match key {
            TOKEN => return plain_token(b, i),
            RESULTS => return None,
            _ => i = skip_value(b, i)?,
        }
        i = skip_ws(b, i);
        if b.get(i) != Some(&b',') {
            return None;
        }
        i += 1;
    }
}

/// A token value at `i`: a plain, non-empty string.
fn plain_token(b: &[u8], i: usize) -> Option<&str> {
    let (text, _) = plain_string(b, i)?;
    std::str::from_utf8(text).ok().filter(|t| !t.is_empty())
}

/// Backward from `end` (exclusive) over white space, not below `floor`.
fn skip_ws_back(b: &[u8], mut end: usize, floor: usize) -> usize {
    while end > floor && b[end - 1].is_ascii_whitespace() {
        end -= 1;
    }
    end
}

/// The start of the string whose closing quote is `b[end - 1]`: the quote before it that is not
/// escaped (an even number of backslashes before it).
fn string_start_back(b: &[u8], end: usize, floor: usize) -> Option<usize> {
    if end < floor + 2 || b[end - 1] != b'"' {
        return None;
    }
    let mut k = end - 1;
    while k > floor {
        k -= 1;
        if b[k] == b'"' {
            let mut slashes = 0;
            while k - slashes > floor && b[k - slashes - 1] == b'\\' {
                slashes += 1;
            }
            if slashes % 2 == 0 {
                return Some(k);
            }
        }
    }
    None
}

/// The start of the JSON value that ends at `end` (exclusive).
fn skip_value_back(b: &[u8], end: usize, floor: usize) -> Option<usize> {
    if end <= floor {
        return None;
    }
    match b[end - 1] {
        b'"' => string_start_back(b, end, floor),
        b'}' | b']' => {
            let mut depth = 0usize;
            let mut k = end;
            while k > floor {
                match b[k - 1] {
                    b'"' => {
                        k = string_start_back(b, k, floor)?;
                        continue;
                    }
                    b'}' | b']' => depth += 1,
                    b'{' | b'[' => {
                        depth -= 1;
                        if depth == 0 {
                            return Some(k - 1);
                        }
                    }
                    _ => {}
                }
                k -= 1;
            }
            None
        }
        _ => {
            let mut k = end;
            while k > floor
                && !matches!(b[k - 1], b':' | b',' | b'[' | b'{')
                && !b[k - 1].is_ascii_whitespace()
            {
                k -= 1;
            }
            (k > floor).then_some(k)
        }
    }
}

/// The token among the top-level members after `results`.
fn backward_hint(b: &[u8]) -> Option<&str> {
    let floor = b.len().saturating_sub(HINT_WINDOW);
    let mut j = skip_ws_back(b, b.len(), floor);
    if j <= floor || b[j - 1] != b'}' {
        return None;
    }
    j -= 1;
    loop {
        j = skip_ws_back(b, j, floor);
        let value = skip_value_back(b, j, floor)?;
        j = skip_ws_back(b, value, floor);
        if j <= floor || b[j - 1] != b':' {
            return None;
        }
        j = skip_ws_back(b, j - 1, floor);
        let key_start = string_start_back(b, j, floor)?;
        let key = &b[key_start + 1..j - 1];
        if key.contains(&b'\\') {
            return None;
        }
        match key {
            TOKEN => return plain_token(b, value),
            RESULTS => return None,
            _ => {}
        }
        j = skip_ws_back(b, key_start, floor);
        if j <= floor || b[j - 1] != b',' {
            return None;
        }
        j -= 1;
    }
}

/// The top-level members the report reads.
enum PageKey {
    Token,
    Results,
    Other,
}

impl<'de> Deserialize<'de> for PageKey {
    fn deserialize<D: de::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct KeyVisitor;
        impl Visitor<'_> for KeyVisitor {
            type Value = PageKey;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a member name")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<PageKey, E> {
                Ok(match v {
                    "nextPageToken" => PageKey::Token,
                    "results" => PageKey::Results,
                    _ => PageKey::Other,
                })
            }
        }
        d.deserialize_identifier(KeyVisitor)
    }
}

/// The page object: `nextPageToken` and `results` read, other members skipped.
struct PageVisitor {
    capacity: usize,
}

impl<'de> Visitor<'de> for PageVisitor {
    type Value = DecodedPage;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a SearchSearchAds360Response object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<DecodedPage, A::Error> {
        let mut token: Option<Option<String>> = None;
        let mut rows: Option<(DecodedRows, Option<String>)> = None;
        while let Some(key) = map.next_key::<PageKey>()? {
            match key {
                PageKey::Token => {
                    if token.is_some() {
                        return Err(de::Error::duplicate_field("nextPageToken"));
                    }
                    token = Some(map.next_value()?);
                }
                PageKey::Results => {
                    if rows.is_some() {
                        return Err(de::Error::duplicate_field("results"));
                    }
                    rows = Some(map.next_value_seed(RowsSeed {
                        capacity: self.capacity,
                    })?);
                }
                PageKey::Other => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        let (rows, failed) = rows.unwrap_or_default();
        Ok(DecodedPage {
            next_page_token: token.flatten().filter(|t| !t.is_empty()),
            rows: match failed {
                Some(detail) => Err(detail),
                None => Ok(rows),
            },
        })
    }
}

/// The `results` array, into vectors of `capacity`.
struct RowsSeed {
    capacity: usize,
}

impl<'de> DeserializeSeed<'de> for RowsSeed {
    type Value = (DecodedRows, Option<String>);

    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_seq(RowsVisitor {
            capacity: self.capacity,
        })
    }
}

/// The `results` array, each row mapped as soon as it is decoded.
struct RowsVisitor {
    capacity: usize,
}

impl<'de> Visitor<'de> for RowsVisitor {
    type Value = (DecodedRows, Option<String>);

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an array of SearchAds360Row")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut rows = DecodedRows {
            keys: Vec::with_capacity(self.capacity),
            conversions: Vec::with_capacity(self.capacity),
        };
        let mut failed = None;
        // The rows of a page share their customer: its id is checked and allocated once.
        let mut customer: Option<(i64, CustomerId)> = None;
        while let Some(row) = seq.next_element::<WireRow<'de>>()? {
            if failed.is_some() {
                continue; // checked, not mapped
            }
            match map_row(row, &mut customer) {
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

/// An int64 member, read as the spec's `I64String` reads it (a string of digits or a JSON
/// number; anything else is the error `I64String` gives), with plain digits read without
/// `str::parse` (six a row).
#[derive(Clone, Copy)]
struct Int64(i64);

impl Int64 {
    fn get(self) -> i64 {
        self.0
    }
}

impl<'de> Deserialize<'de> for Int64 {
    fn deserialize<D: de::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Int64Visitor;
        impl Visitor<'_> for Int64Visitor {
            type Value = Int64;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a 64-bit integer as a string of digits or a number")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Int64, E> {
                // Up to 18 digits cannot overflow.
                if (1..=18).contains(&v.len()) && v.bytes().all(|b| b.is_ascii_digit()) {
                    let n = v.bytes().fold(0i64, |n, b| n * 10 + i64::from(b - b'0'));
                    return Ok(Int64(n));
                }
                v.parse::<I64String>()
                    .map(|n| Int64(n.get()))
                    .map_err(E::custom)
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Int64, E> {
                Ok(Int64(v))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Int64, E> {
                i64::try_from(v)
                    .map(Int64)
                    .map_err(|_| E::invalid_value(de::Unexpected::Unsigned(v), &self))
            }
        }
        d.deserialize_any(Int64Visitor)
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
    id: Option<Int64>,
    #[serde(borrow)]
    advertiser_conversion_id: Text<'a>,
    #[serde(borrow)]
    conversion_date_time: Text<'a>,
    #[serde(borrow)]
    conversion_last_modified_date_time: Text<'a>,
    #[serde(borrow)]
    status: Text<'a>,
    conversion_revenue_micros: Option<Int64>,
    conversion_quantity: Option<Int64>,
    #[serde(borrow)]
    click_id: Text<'a>,
    #[serde(borrow)]
    floodlight_order_id: Text<'a>,
    ad_id: Option<Int64>,
    criterion_id: Option<Int64>,
    merchant_id: Option<Int64>,
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
    id: Option<Int64>,
    #[serde(borrow)]
    currency_code: Text<'a>,
}

/// `campaign` and `adGroup`: the id only.
#[derive(Deserialize)]
struct WireId {
    id: Option<Int64>,
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
/// `customer` keeps the last customer id read, so rows of the same customer share its check.
fn map_row(
    row: WireRow<'_>,
    customer: &mut Option<(i64, CustomerId)>,
) -> Result<(RowKey, NaiveDate, Conversion), String> {
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
    let customer_id = match customer_id.map(Int64::get) {
        None => None,
        Some(id) => match customer {
            Some((last, checked)) if *last == id => Some(checked.clone()),
            _ => {
                let checked = CustomerId::new(id.to_string()).map_err(|e| e.to_string())?;
                *customer = Some((id, checked.clone()));
                Some(checked)
            }
        },
    };
    let quantity_millis = mapping::quantity_millis(c.conversion_quantity.map(|q| q.get()))?;
    let channel = c.product_channel.as_deref().map(mapping::channel);
    let date = row
        .segments
        .and_then(|s| s.date)
        .and_then(|d| parse_date(&d))
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
    use crate::search_ads::test_support::{self, Member, one_of, unknown_members};

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
        let page = SearchPage::from_bytes(Bytes::copy_from_slice(body));
        let hint = page.token_hint().map(str::to_owned);
        let decoded = page.decode(10_000).map_err(|_| ())?;
        // A hint is the token the decode reads (or there is none).
        assert!(
            hint.is_none() || hint == decoded.next_page_token,
            "hint {hint:?}, token {:?}",
            decoded.next_page_token
        );
        Ok((decoded.next_page_token, decoded.rows))
    }

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

    /// A member name of a nested object: sometimes one the top level reads (which the token hint
    /// must not take for the top level's).
    fn nested_key() -> BoxedStrategy<String> {
        prop_oneof![
            6 => "[a-z]{1,4}",
            1 => Just("nextPageToken".to_owned()),
            1 => Just("results".to_owned()),
        ]
        .boxed()
    }

    /// An object of the present members and up to one unknown member.
    fn object(members: Vec<BoxedStrategy<Member>>) -> BoxedStrategy<Value> {
        test_support::object(members, unknown_members(nested_key()))
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
            1 => Just(Value::from("\"nextPageToken\": \"not-it\"}")),
        ]
        .boxed()
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

    /// A page's bytes: its members in any order, compact or with white space.
    fn page_body() -> impl Strategy<Value = String> {
        page()
            .prop_flat_map(|page| {
                let Value::Object(map) = page else {
                    unreachable!("pages are objects")
                };
                let members: Vec<(String, Value)> = map.into_iter().collect();
                (Just(members).prop_shuffle(), any::<bool>())
            })
            .prop_map(|(members, pretty)| {
                let text = |v: &Value| {
                    if pretty {
                        serde_json::to_string_pretty(v).unwrap()
                    } else {
                        serde_json::to_string(v).unwrap()
                    }
                };
                let (colon, comma, open, close) = if pretty {
                    (": ", ",\n  ", "{\n  ", "\n}\n")
                } else {
                    (":", ",", "{", "}")
                };
                let members: Vec<String> = members
                    .iter()
                    .map(|(k, v)| format!("{}{colon}{}", text(&Value::from(k.as_str())), text(v)))
                    .collect();
                format!("{open}{}{close}", members.join(comma))
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
        fn the_decoder_agrees_with_the_generated_type_and_mapping(body in page_body()) {
            let outcome = decoded(body.as_bytes());
            prop_assert_eq!(&outcome, &generated(body.as_bytes()), "page: {}", body);
            // A plain token is found before the rows are read, wherever it stands.
            if let Ok((Some(token), _)) = &outcome
                && !token.contains(['"', '\\'])
            {
                prop_assert_eq!(token_hint(body.as_bytes()), Some(token.as_str()), "page: {}", body);
            }
        }
    }

    proptest! {
        /// The hint reads any bytes without panicking (it runs before the page is known to be
        /// JSON), and on JSON-like text that the decode reads, it is the decode's token or none.
        #[test]
        fn the_hint_takes_any_bytes(
            bytes in prop::collection::vec(any::<u8>(), 0..300),
            text in "[{}\\[\\]\",: \\\\a-z0-9]{0,300}",
        ) {
            let _ = token_hint(&bytes);
            let _ = decoded(&bytes);
            let _ = decoded(text.as_bytes());
            let shaped = format!(r#"{{"nextPageToken": "t", {text}"#);
            let _ = decoded(shaped.as_bytes());
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
        let page = SearchPage::from_bytes(Bytes::from_static(body));
        assert_eq!(page.token_hint(), Some("next"));
        let page = page.decode(10).unwrap();
        assert_eq!(page.next_page_token.as_deref(), Some("next"));
        let rows = page.rows.unwrap();
        assert_eq!(rows.conversions[0].click_id.as_deref(), Some("a\"bé"));
        assert_eq!(decoded(body), generated(body));
    }

    /// The hint reads a few hundred bytes at either end: not the rows, not a member nested in
    /// them, and gives up (the decode then reads the token) beyond its window.
    #[test]
    fn the_hint_reads_the_top_level_at_either_end_only() {
        let row = r#"{"conversion": {"id": "7", "clickId": "\"nextPageToken\": \"no\""}, "x": {"nextPageToken": "no"}}"#;
        let rows = [row; 4].join(",");
        for (body, hint) in [
            (
                format!(r#"{{"fieldMask": "a,b", "nextPageToken": "first", "results": [{rows}]}}"#),
                Some("first"),
            ),
            (
                format!(r#"{{"results": [{rows}], "nextPageToken": "last", "fieldMask": "a"}}"#),
                Some("last"),
            ),
            (
                format!(r#"{{"results": [{rows}], "fieldMask": "a"}}"#),
                None,
            ),
            (format!(r#"{{"results": [{rows}]}}"#), None),
            (
                format!(r#"{{"results": [{rows}], "nextPageToken": "a\u0062"}}"#),
                None,
            ),
            (
                format!(r#"{{"results": [{rows}], "nextPageToken": null}}"#),
                None,
            ),
            (
                format!(r#" {{ "results" : [{rows}] , "nextPageToken" : "spaced" }} "#),
                Some("spaced"),
            ),
        ] {
            assert_eq!(token_hint(body.as_bytes()), hint, "{body}");
        }
        let many = vec![row; HINT_WINDOW / row.len() + 1].join(",");
        let before = format!(r#"{{"x": [{many}], "nextPageToken": "far", "results": []}}"#);
        assert_eq!(token_hint(before.as_bytes()), None);
        let after = format!(r#"{{"results": [], "nextPageToken": "far", "x": [{many}]}}"#);
        assert_eq!(token_hint(after.as_bytes()), None);
    }

    /// A loopback server answering every request with `head` and `body` (then waiting), and a
    /// client with `limits` on it.
    async fn serve(
        head: String,
        body: Vec<u8>,
        limits: client_support::BodyLimits,
    ) -> search_ads_reporting_client::Client {
        let url = test_support::serve_raw(head, body).await;
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

    /// The request of a page is the one the generated builder makes: method, URL, headers
    /// (with and without `login-customer-id`) and body.
    #[tokio::test]
    async fn the_request_is_the_generated_builders() {
        let (recorder, context) = test_support::recorder();
        let client = search_ads_reporting_client::Client::new_with_client(
            "http://127.0.0.1:9",
            reqwest::Client::new(),
            context,
        );
        let body: types::SearchSearchAds360Request = serde_json::from_value(json!({
            "query": "SELECT conversion.id FROM conversion WHERE segments.date = '2026-11-01'",
            "pageSize": 10000,
            "pageToken": "t\"é"
        }))
        .unwrap();
        for login in [None, Some("1234567890")] {
            let mut call = client
                .customers_search_ads360_search()
                .customer_id("2000012350")
                .body(body.clone());
            if let Some(login) = login {
                call = call.login_customer_id(login);
            }
            assert!(call.send().await.is_err(), "nothing is sent");
            assert!(search(&client, "2000012350", login, &body).await.is_err());
            let requests = recorder.take();
            assert_eq!(requests.len(), 2, "{requests:?}");
            assert_eq!(requests[1], requests[0], "{login:?}");
        }
    }
}

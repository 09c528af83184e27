//! One page of a v2 read (`conversion.get`, `conversion.getByCustomerId`): the generated
//! client's request, its 200 answer read as bytes and decoded straight into [`Conversion`]s.
//!
//! Each conversion of the `conversion` array is decoded into the generated `types::Conversion`
//! (the spec's shape: member names, JSON types, unknown members ignored) and mapped at once by
//! `conversion_from_wire`, the one mapping of the v2 wire shape. A page with more than
//! [`MAX_PAGE_SIZE`] conversions (the most `rowCount` may ask for) is refused, so a hostile page
//! cannot grow the read's memory beyond the largest page the API answers (a body of 32 MiB of
//! `{},` would otherwise become millions of conversions); the conversions past the limit are
//! still checked as JSON, never kept.
//!
//! The request is the generated client's: its URL (path ids percent-encoded as progenitor
//! encodes them), query, headers, and its `pre` (authorization) and `exec` (tracing span, body
//! size and stall limits of [`HttpOptions`](crate::http::HttpOptions)) hooks; a test compares
//! it with the generated builder's request. Error answers go through the generated
//! `GoogleErrorResponse` as before.

use std::fmt;

use percent_encoding::{AsciiSet, CONTROLS, utf8_percent_encode};
use sa360_v2_client::__glue::{ClientHooks, OperationInfo};
use sa360_v2_client::{ClientInfo, ResponseValue, types};
use serde::Deserialize;
use serde::de::{self, SeqAccess, Visitor};

use super::super::conversion::Conversion;
use super::super::wire::{ClientError, conversion_from_wire};

/// Largest page the API serves (`rowCount`, SA-12).
pub const MAX_PAGE_SIZE: u32 = 1000;

/// A page's conversions, in order; or why the first that cannot be typed cannot (its field).
pub(super) type Rows = Result<Vec<Conversion>, String>;

/// Whose conversions a page lists: the request's path.
#[derive(Debug, Clone)]
pub(super) enum Owner {
    /// `conversion.get`.
    EngineAccount {
        agency_id: i64,
        advertiser_id: i64,
        engine_account_id: i64,
    },
    /// `conversion.getByCustomerId`.
    Customer(String),
}

/// The optional query parameters of a read (`None`: not sent). `customer_id` is sent by
/// `conversion.get` only; `agency_id`, `advertiser_id` and `engine_account_id` by
/// `conversion.getByCustomerId` only (`ListOptions::validate` refuses the others).
#[derive(Debug, Clone, Default)]
pub(super) struct Filters {
    pub(super) ad_group_id: Option<i64>,
    pub(super) ad_id: Option<i64>,
    pub(super) advertiser_id: Option<i64>,
    pub(super) agency_id: Option<i64>,
    pub(super) campaign_id: Option<i64>,
    pub(super) criterion_id: Option<i64>,
    pub(super) customer_id: Option<String>,
    pub(super) engine_account_id: Option<i64>,
}

/// What every page of one read asks for, besides its first row.
#[derive(Debug, Clone)]
pub(super) struct PageQuery {
    pub(super) owner: Owner,
    /// `startDate` and `endDate`, `yyyymmdd`.
    pub(super) dates: (i32, i32),
    /// `rowCount`.
    pub(super) row_count: u32,
    pub(super) filters: Filters,
}

impl PageQuery {
    /// The generated client's operation id.
    fn operation_id(&self) -> &'static str {
        match self.owner {
            Owner::EngineAccount { .. } => "conversion_get",
            Owner::Customer(_) => "conversion_get_by_customer_id",
        }
    }

    /// The request for the page that starts at `start_row`, as the generated builder makes it.
    fn request(
        &self,
        client: &sa360_v2_client::Client,
        start_row: u32,
    ) -> reqwest::Result<reqwest::Request> {
        let base = client.baseurl();
        let f = &self.filters;
        let by_customer = matches!(self.owner, Owner::Customer(_));
        let url = match &self.owner {
            Owner::EngineAccount {
                agency_id,
                advertiser_id,
                engine_account_id,
            } => format!(
                "{base}/agency/{}/advertiser/{}/engine/{}/conversion",
                encode_path(&agency_id.to_string()),
                encode_path(&advertiser_id.to_string()),
                encode_path(&engine_account_id.to_string()),
            ),
            Owner::Customer(customer) => {
                format!("{base}/customer/{}/conversion", encode_path(customer))
            }
        };
        // The generated builder's query: its parameters in alphabetical order, unset ones left
        // out, and only those of the method.
        let mut params: Vec<(&str, String)> = Vec::with_capacity(12);
        let mut add = |name, value: Option<String>| {
            if let Some(value) = value {
                params.push((name, value));
            }
        };
        let id = |id: Option<i64>| id.map(|id| id.to_string());
        add("adGroupId", id(f.ad_group_id));
        add("adId", id(f.ad_id));
        if by_customer {
            add("advertiserId", id(f.advertiser_id));
            add("agencyId", id(f.agency_id));
        }
        add("campaignId", id(f.campaign_id));
        add("criterionId", id(f.criterion_id));
        if !by_customer {
            add("customerId", f.customer_id.clone());
        }
        add("endDate", Some(self.dates.1.to_string()));
        if by_customer {
            add("engineAccountId", id(f.engine_account_id));
        }
        add("rowCount", Some(self.row_count.to_string()));
        add("startDate", Some(self.dates.0.to_string()));
        add("startRow", Some(start_row.to_string()));
        client
            .client()
            .get(url)
            .header(reqwest::header::ACCEPT, "application/json")
            .query(&params)
            .header("api-version", sa360_v2_client::Client::api_version())
            .build()
    }
}

/// The characters progenitor's `encode_path` percent-encodes in a path parameter (besides
/// everything outside ASCII).
const PATH_SET: &AsciiSet = &CONTROLS
    .add(b' ')
    .add(b'"')
    .add(b'#')
    .add(b'<')
    .add(b'>')
    .add(b'?')
    .add(b'`')
    .add(b'{')
    .add(b'}')
    .add(b'/')
    .add(b'%');

fn encode_path(segment: &str) -> String {
    utf8_percent_encode(segment, PATH_SET).to_string()
}

/// Sends the request for the page at `start_row` through the generated client's hooks and
/// decodes its 200 answer. A body that is not the spec's `ConversionList` is the generated
/// client's `InvalidResponsePayload`, as from its own `send()`.
pub(super) async fn fetch(
    client: &sa360_v2_client::Client,
    query: &PageQuery,
    start_row: u32,
) -> Result<Rows, ClientError> {
    let mut request = query.request(client, start_row)?;
    let info = OperationInfo {
        operation_id: query.operation_id(),
    };
    client
        .pre::<types::GoogleErrorResponse>(&mut request, &info)
        .await?;
    let result = client.exec(request, &info).await;
    client
        .post::<types::GoogleErrorResponse>(&result, &info)
        .await?;
    let response = result?;
    match response.status().as_u16() {
        200 => {
            tracing::Span::current().record("status", 200);
            let body = response
                .bytes()
                .await
                .map_err(ClientError::ResponseBodyError)?;
            decode(&body).map_err(|e| ClientError::InvalidResponsePayload(body, e))
        }
        400..=599 => Err(ClientError::ErrorResponse(
            ResponseValue::from_response(response).await?,
        )),
        _ => Err(ClientError::UnexpectedResponse(response)),
    }
}

/// A page's bytes decoded and mapped: `Err` when the page is not the spec's `ConversionList`;
/// else its conversions, or the first one's field that cannot be typed. More than
/// [`MAX_PAGE_SIZE`] conversions (the API's largest page) are refused.
pub(super) fn decode(body: &[u8]) -> Result<Rows, serde_json::Error> {
    let page: Page = serde_json::from_slice(body)?;
    Ok(page.conversion.0)
}

/// The top level of a `ConversionList`, in the generated type's member order: the conversions,
/// each mapped as soon as it is decoded, and `kind`, checked as text and dropped.
#[derive(Deserialize)]
struct Page {
    #[serde(default, deserialize_with = "conversions")]
    conversion: Mapped,
    #[serde(rename = "kind")]
    _kind: Option<String>,
}

/// The mapped `conversion` array (absent: none).
struct Mapped(Rows);

impl Default for Mapped {
    fn default() -> Self {
        Self(Ok(Vec::new()))
    }
}

fn conversions<'de, D: de::Deserializer<'de>>(deserializer: D) -> Result<Mapped, D::Error> {
    deserializer.deserialize_seq(ConversionsVisitor)
}

/// The `conversion` array, each element mapped as soon as it is decoded. After the first that
/// cannot be mapped (or the first past [`MAX_PAGE_SIZE`]) the rest are still checked against the
/// spec's types, never kept, so a page the generated type would reject is rejected whatever
/// element comes first.
struct ConversionsVisitor;

impl<'de> Visitor<'de> for ConversionsVisitor {
    type Value = Mapped;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an array of Conversion")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Mapped, A::Error> {
        let mut rows = Vec::new();
        let mut failed = None;
        while let Some(wire) = seq.next_element::<types::Conversion>()? {
            if failed.is_some() {
                continue; // checked, not mapped
            }
            if rows.len() == MAX_PAGE_SIZE as usize {
                failed = Some(format!(
                    "the page holds more than {MAX_PAGE_SIZE} conversions, the most the API answers (rowCount)"
                ));
                continue;
            }
            match conversion_from_wire(wire) {
                Ok(conversion) => rows.push(conversion),
                Err(detail) => failed = Some(detail),
            }
        }
        Ok(Mapped(match failed {
            Some(detail) => Err(detail),
            None => Ok(rows),
        }))
    }
}

#[cfg(test)]
mod tests;

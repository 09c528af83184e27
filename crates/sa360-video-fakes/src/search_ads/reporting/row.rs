//! One `FROM conversion` result row: a v2 conversion in the Reporting API's shape (SR-12), kept
//! typed and written straight to the response with only the selected fields.
//!
//! A page of 10 000 rows is written without an intermediate `serde_json::Value` per row: a cell is
//! formatted only when its field is selected, and the selection is resolved once per page
//! ([`Selection`]).

use std::sync::LazyLock;

use std::borrow::Cow;

use chrono::format::{Item, StrftimeItems};
use chrono::{DateTime, Datelike, NaiveDate};
use serde::ser::{Serialize, SerializeMap, SerializeSeq, Serializer};

use super::query::catalogue::DataType;
use super::query::dates::Period;
use super::query::eval::Val;
use crate::search_ads::config::KnownAccount;
use crate::search_ads::data::SeededConversion;
use crate::search_ads::record::Record;

/// The sort key of a row: (epoch milliseconds, `conversion.id`).
pub(crate) type RowKey = (i64, i64);

/// The fields of a v2 conversion that a row is made of, whichever way it is held (a seeded
/// conversion or a stored record).
#[derive(Debug, Default)]
pub(crate) struct V2<'a> {
    pub timestamp: i64,
    pub ds_conversion_id: i64,
    pub conversion_id: Option<&'a str>,
    pub modified: Option<i64>,
    pub revenue_micros: Option<i64>,
    pub quantity_millis: Option<i64>,
    pub state: Option<&'a str>,
    pub click_id: Option<&'a str>,
    pub floodlight_order_id: Option<&'a str>,
    pub product_id: Option<&'a str>,
    pub product_country: Option<&'a str>,
    pub product_language: Option<&'a str>,
    pub store_id: Option<&'a str>,
    pub channel: Option<&'a str>,
    pub ad_id: Option<i64>,
    pub criterion_id: Option<i64>,
    pub inventory_account_id: Option<i64>,
    pub campaign_id: Option<i64>,
    pub ad_group_id: Option<i64>,
    /// `segmentationId`: the Floodlight activity (the conversion action, SR-22).
    pub segmentation_id: Option<i64>,
}

impl<'a> V2<'a> {
    /// A stored conversion; `None` without a timestamp or `dsConversionId`.
    pub(crate) fn from_record(v: &'a Record) -> Option<Self> {
        let int = |name: &str| v.int(name);
        let text = |name: &str| v.str(name);
        Some(Self {
            timestamp: int("conversionTimestamp")?,
            ds_conversion_id: int("dsConversionId")?,
            conversion_id: text("conversionId"),
            modified: int("conversionModifiedTimestamp"),
            revenue_micros: int("revenueMicros"),
            quantity_millis: int("quantityMillis"),
            state: text("state"),
            click_id: text("clickId"),
            floodlight_order_id: text("floodlightOrderId"),
            product_id: text("productId"),
            product_country: text("productCountry"),
            product_language: text("productLanguage"),
            store_id: text("storeId"),
            channel: text("channel"),
            ad_id: int("adId"),
            criterion_id: int("criterionId"),
            inventory_account_id: int("inventoryAccountId"),
            campaign_id: int("campaignId"),
            ad_group_id: int("adGroupId"),
            segmentation_id: int("segmentationId"),
        })
    }

    /// A seeded conversion, read the way [`from_record`](Self::from_record) reads a stored one.
    pub(crate) fn from_seeded(c: &'a SeededConversion) -> Option<Self> {
        Some(Self {
            timestamp: c.conversion_timestamp.parse().ok()?,
            ds_conversion_id: c.ds_conversion_id.parse().ok()?,
            conversion_id: Some(&c.conversion_id),
            modified: c.conversion_modified_timestamp.parse().ok(),
            revenue_micros: c.revenue_micros.as_deref().and_then(|r| r.parse().ok()),
            quantity_millis: c.quantity_millis.parse().ok(),
            state: Some(c.state),
            click_id: c.click_id.as_deref(),
            floodlight_order_id: Some(&c.floodlight_order_id),
            channel: Some(c.channel),
            ad_id: c.ad_id.parse().ok(),
            criterion_id: c.criterion_id.parse().ok(),
            campaign_id: c.campaign_id.parse().ok(),
            ad_group_id: c.ad_group_id.parse().ok(),
            segmentation_id: c.segmentation_id.parse().ok(),
            ..Self::default()
        })
    }
}

/// A full row (every field the fake fills); [`Selection`] writes the queried ones.
#[derive(Debug, Clone)]
pub(crate) struct Row {
    pub key: RowKey,
    advertiser_conversion_id: Option<String>,
    modified: Option<i64>,
    revenue_micros: Option<i64>,
    quantity: Option<i64>,
    removed: bool,
    click_id: Option<String>,
    floodlight_order_id: Option<String>,
    product_id: Option<String>,
    product_country: Option<String>,
    product_language: Option<String>,
    store_id: Option<String>,
    channel: Option<String>,
    ad_id: Option<i64>,
    criterion_id: Option<i64>,
    merchant_id: Option<i64>,
    campaign: Option<i64>,
    ad_group: Option<i64>,
    action: Option<i64>,
}

impl Row {
    /// The row of `v2`, with the new campaign and ad-group IDs already translated (`campaign`,
    /// `ad_group`).
    pub(crate) fn new(v2: &V2<'_>, campaign: Option<i64>, ad_group: Option<i64>) -> Self {
        let owned = |s: Option<&str>| s.map(str::to_owned);
        Self {
            key: (v2.timestamp, v2.ds_conversion_id),
            advertiser_conversion_id: owned(v2.conversion_id),
            modified: v2.modified,
            revenue_micros: v2.revenue_micros,
            quantity: v2.quantity_millis.map(|q| q / 1000),
            removed: matches!(v2.state, Some("REMOVED" | "DELETED")),
            click_id: owned(v2.click_id),
            floodlight_order_id: owned(v2.floodlight_order_id),
            product_id: owned(v2.product_id),
            product_country: owned(v2.product_country),
            product_language: owned(v2.product_language),
            store_id: owned(v2.store_id),
            channel: v2.channel.map(str::to_ascii_uppercase),
            ad_id: v2.ad_id,
            criterion_id: v2.criterion_id,
            merchant_id: v2.inventory_account_id,
            campaign,
            ad_group,
            action: v2.segmentation_id,
        }
    }

    /// The Floodlight activity (conversion action) the conversion was recorded for.
    pub(crate) fn action(&self) -> Option<i64> {
        self.action
    }

    /// `conversion.status`.
    pub(crate) fn status(&self) -> &'static str {
        if self.removed { "REMOVED" } else { "ENABLED" }
    }

    /// The value of an integer field (`None` when the row has none).
    pub(crate) fn int(&self, field: Field) -> Option<i64> {
        match field {
            Field::ConversionId => Some(self.key.1),
            Field::AdId => self.ad_id,
            Field::CriterionId => self.criterion_id,
            Field::MerchantId => self.merchant_id,
            Field::CampaignId => self.campaign,
            Field::AdGroupId => self.ad_group,
            _ => None,
        }
    }

    /// The value of a text field (`None` when the row has none).
    pub(crate) fn text(&self, field: Field) -> Option<&str> {
        match field {
            Field::AdvertiserConversionId => self.advertiser_conversion_id.as_deref(),
            Field::Status => Some(self.status()),
            Field::ClickId => self.click_id.as_deref(),
            Field::FloodlightOrderId => self.floodlight_order_id.as_deref(),
            Field::ProductId => self.product_id.as_deref(),
            Field::ProductCountryCode => self.product_country.as_deref(),
            Field::ProductLanguageCode => self.product_language.as_deref(),
            Field::ProductStoreId => self.store_id.as_deref(),
            Field::ProductChannel => self.channel.as_deref(),
            _ => None,
        }
    }

    /// The day of the conversion (UTC, the fake's customers' time zone).
    fn day(&self) -> Option<NaiveDate> {
        DateTime::from_timestamp_millis(self.key.0).map(|t| t.date_naive())
    }

    /// The value of `field` for a WHERE condition or ORDER BY, as the data type `as_type` of the
    /// field in the catalogue reads it; `None` when the row has no value.
    pub(crate) fn value<'r>(
        &'r self,
        field: Field,
        as_type: DataType,
        account: &'r AccountCells<'r>,
    ) -> Option<Val<'r>> {
        let cell = self.cell(field, account)?;
        Some(match (cell, as_type) {
            (Cell::Int(n), DataType::Int64 | DataType::Int32) => Val::Int(n),
            (Cell::Text(t), DataType::Int64 | DataType::Int32) => Val::Int(t.parse().ok()?),
            (Cell::Text(t), _) => Val::Str(Cow::Borrowed(t)),
            (Cell::Date(ms), DataType::Date) => {
                Val::Date(DateTime::from_timestamp_millis(ms)?.date_naive())
            }
            (Cell::Day(d), _) => Val::Date(d),
            (other, _) => Val::Str(Cow::Owned(
                serde_json::to_value(&other).ok()?.as_str()?.to_owned(),
            )),
        })
    }

    /// The cell of `field` as the service writes it, or `None` when the row has no value.
    fn cell<'r>(&'r self, field: Field, account: &'r AccountCells<'r>) -> Option<Cell<'r>> {
        let customer = account.account.customer_id.as_str();
        Some(match field {
            Field::ConversionId
            | Field::AdId
            | Field::CriterionId
            | Field::MerchantId
            | Field::CampaignId
            | Field::AdGroupId => Cell::Int(self.int(field)?),
            Field::ConversionDateTime => Cell::DateTime(self.key.0),
            Field::ConversionLastModifiedDateTime => Cell::DateTime(self.modified?),
            Field::ConversionRevenueMicros => Cell::Int(self.revenue_micros?),
            Field::ConversionQuantity => Cell::Int(self.quantity?),
            Field::ConversionResourceName => Cell::ConversionResource {
                customer,
                ad_group: self.ad_group.unwrap_or(0),
                criterion: self.criterion_id.unwrap_or(0),
                ds: self.key.1,
            },
            Field::Date => Cell::Date(self.key.0),
            Field::Week => Cell::Day(Period::Week.start(self.day()?)),
            Field::Month => Cell::Day(Period::Month.start(self.day()?)),
            Field::Quarter => Cell::Day(Period::Quarter.start(self.day()?)),
            Field::Year => Cell::Int(i64::from(self.day()?.year())),
            Field::CustomerId => Cell::Text(customer),
            Field::CustomerResourceName => Cell::Resource(customer, "", None),
            Field::CustomerDescriptiveName => {
                Cell::EngineAccount(account.account.engine_account_id)
            }
            Field::CustomerCurrencyCode => Cell::Text("USD"),
            Field::CustomerTimeZone => Cell::Text("UTC"),
            Field::CustomerManagerId => Cell::Text(account.manager_id),
            Field::CustomerEngineId => Cell::Int(account.account.engine_account_id),
            Field::CampaignResourceName => {
                Cell::Resource(customer, "campaigns", Some(self.campaign?))
            }
            Field::AdGroupResourceName => {
                Cell::Resource(customer, "adGroups", Some(self.ad_group?))
            }
            Field::AdvertiserConversionId
            | Field::Status
            | Field::ClickId
            | Field::FloodlightOrderId
            | Field::ProductId
            | Field::ProductCountryCode
            | Field::ProductLanguageCode
            | Field::ProductStoreId
            | Field::ProductChannel => Cell::Text(self.text(field)?),
        })
    }
}

/// The fields a row has (query names in [`Field::parse`]); a selectable field that is not here
/// (e.g. `conversion.visit_id`) is never filled by the fake.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Field {
    ConversionId,
    AdvertiserConversionId,
    ConversionDateTime,
    ConversionLastModifiedDateTime,
    ConversionRevenueMicros,
    ConversionQuantity,
    Status,
    ClickId,
    FloodlightOrderId,
    ProductId,
    ProductCountryCode,
    ProductLanguageCode,
    ProductStoreId,
    ProductChannel,
    AdId,
    CriterionId,
    MerchantId,
    ConversionResourceName,
    Date,
    Week,
    Month,
    Quarter,
    Year,
    CustomerId,
    CustomerResourceName,
    CustomerDescriptiveName,
    CustomerCurrencyCode,
    CustomerTimeZone,
    CustomerManagerId,
    CustomerEngineId,
    CampaignId,
    CampaignResourceName,
    AdGroupId,
    AdGroupResourceName,
}

impl Field {
    /// The field of a query name (`conversion.conversion_date_time`), if the fake fills it.
    pub(crate) fn parse(name: &str) -> Option<Self> {
        Some(match name {
            "conversion.id" => Self::ConversionId,
            "conversion.advertiser_conversion_id" => Self::AdvertiserConversionId,
            "conversion.conversion_date_time" => Self::ConversionDateTime,
            "conversion.conversion_last_modified_date_time" => Self::ConversionLastModifiedDateTime,
            "conversion.conversion_revenue_micros" => Self::ConversionRevenueMicros,
            "conversion.conversion_quantity" => Self::ConversionQuantity,
            "conversion.status" => Self::Status,
            "conversion.click_id" => Self::ClickId,
            "conversion.floodlight_order_id" => Self::FloodlightOrderId,
            "conversion.product_id" => Self::ProductId,
            "conversion.product_country_code" => Self::ProductCountryCode,
            "conversion.product_language_code" => Self::ProductLanguageCode,
            "conversion.product_store_id" => Self::ProductStoreId,
            "conversion.product_channel" => Self::ProductChannel,
            "conversion.ad_id" => Self::AdId,
            "conversion.criterion_id" => Self::CriterionId,
            "conversion.merchant_id" => Self::MerchantId,
            "conversion.resource_name" => Self::ConversionResourceName,
            "segments.date" => Self::Date,
            "segments.week" => Self::Week,
            "segments.month" => Self::Month,
            "segments.quarter" => Self::Quarter,
            "segments.year" => Self::Year,
            "customer.id" => Self::CustomerId,
            "customer.resource_name" => Self::CustomerResourceName,
            "customer.descriptive_name" => Self::CustomerDescriptiveName,
            "customer.currency_code" => Self::CustomerCurrencyCode,
            "customer.time_zone" => Self::CustomerTimeZone,
            "customer.manager_id" => Self::CustomerManagerId,
            "customer.engine_id" => Self::CustomerEngineId,
            "campaign.id" => Self::CampaignId,
            "campaign.resource_name" => Self::CampaignResourceName,
            "ad_group.id" => Self::AdGroupId,
            "ad_group.resource_name" => Self::AdGroupResourceName,
            _ => return None,
        })
    }
}

/// `conversion.conversion_date_time` → (`conversion`, `conversionDateTime`).
pub(crate) fn json_path(field: &str) -> (String, String) {
    let (resource, name) = field.split_once('.').unwrap_or((field, ""));
    let camel = |s: &str| {
        let mut out = String::new();
        let mut upper = false;
        for c in s.chars() {
            if c == '_' {
                upper = true;
            } else if upper {
                out.push(c.to_ascii_uppercase());
                upper = false;
            } else {
                out.push(c);
            }
        }
        out
    };
    (camel(resource), camel(name))
}

/// The JSON field mask of the selected fields (`conversion.conversionDateTime,...`).
pub(crate) fn field_mask(select: &[String]) -> String {
    select
        .iter()
        .map(|f| {
            let (r, n) = json_path(f);
            format!("{r}.{n}")
        })
        .collect::<Vec<_>>()
        .join(",")
}

/// One formatted value; every value of a row is a JSON string.
enum Cell<'r> {
    Text(&'r str),
    Int(i64),
    /// Epoch milliseconds as `yyyy-MM-dd HH:mm:ss.ffffff+00:00` (SR-10; the fake's customers are UTC).
    DateTime(i64),
    /// Epoch milliseconds as `yyyy-MM-dd`.
    Date(i64),
    /// A day as `yyyy-MM-dd`.
    Day(NaiveDate),
    /// `customers/{customer}[/{collection}/{id}]`.
    Resource(&'r str, &'static str, Option<i64>),
    ConversionResource {
        customer: &'r str,
        ad_group: i64,
        criterion: i64,
        ds: i64,
    },
    EngineAccount(i64),
}

/// A format, parsed once (a page writes two date-times and a date per row).
fn items(format: &'static str) -> Vec<Item<'static>> {
    StrftimeItems::new(format).parse().unwrap_or_default()
}
static DATE_TIME: LazyLock<Vec<Item<'static>>> =
    LazyLock::new(|| items("%Y-%m-%d %H:%M:%S%.6f+00:00"));
static DATE: LazyLock<Vec<Item<'static>>> = LazyLock::new(|| items("%Y-%m-%d"));

/// Writes the decimal digits of `n` (`width` at least, zero-padded) at the end of `buf[..end]`;
/// returns where they start.
fn put_digits(buf: &mut [u8], end: usize, mut n: u64, width: usize) -> usize {
    let mut i = end;
    loop {
        i -= 1;
        buf[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 && end - i >= width {
            return i;
        }
    }
}

/// `n` in decimal, without the formatting machinery (a page writes six integers a row).
fn int_text(n: i64, buf: &mut [u8; 20]) -> &str {
    let mut start = put_digits(buf, 20, n.unsigned_abs(), 1);
    if n < 0 {
        start -= 1;
        buf[start] = b'-';
    }
    std::str::from_utf8(&buf[start..]).unwrap_or_default()
}

/// `t` as `%Y-%m-%d` into `buf[..10]` (years 0 to 9999; `None` for others, which chrono writes).
fn put_date(t: &NaiveDate, buf: &mut [u8]) -> Option<()> {
    let year = u64::try_from(t.year()).ok().filter(|y| *y <= 9999)?;
    put_digits(buf, 4, year, 4);
    buf[4] = b'-';
    put_digits(buf, 7, u64::from(t.month()), 2);
    buf[7] = b'-';
    put_digits(buf, 10, u64::from(t.day()), 2);
    Some(())
}

/// `t` as `%Y-%m-%d %H:%M:%S%.6f+00:00` (SR-10), the same text chrono's [`DATE_TIME`] format
/// writes, without its per-item formatting (a page writes two date-times a row); `None` for a
/// year outside 0 to 9999, which chrono writes.
fn date_time_text(t: &DateTime<chrono::Utc>, buf: &mut [u8; 32]) -> Option<()> {
    use chrono::Timelike;
    put_date(&t.date_naive(), &mut buf[..10])?;
    buf[10] = b' ';
    put_digits(buf, 13, u64::from(t.hour()), 2);
    buf[13] = b':';
    put_digits(buf, 16, u64::from(t.minute()), 2);
    buf[16] = b':';
    put_digits(buf, 19, u64::from(t.second()), 2);
    buf[19] = b'.';
    put_digits(
        buf,
        26,
        u64::from(t.nanosecond() % 1_000_000_000 / 1_000),
        6,
    );
    buf[26..].copy_from_slice(b"+00:00");
    Some(())
}

impl Serialize for Cell<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match *self {
            Cell::Text(t) => s.serialize_str(t),
            Cell::Int(n) => s.serialize_str(int_text(n, &mut [0; 20])),
            Cell::DateTime(ms) => match DateTime::from_timestamp_millis(ms) {
                Some(t) => {
                    let mut buf = [0; 32];
                    match date_time_text(&t, &mut buf) {
                        Some(()) => s.serialize_str(std::str::from_utf8(&buf).unwrap_or_default()),
                        None => s.collect_str(&t.format_with_items(DATE_TIME.iter())),
                    }
                }
                None => s.serialize_str(""),
            },
            Cell::Date(ms) => match DateTime::from_timestamp_millis(ms) {
                Some(t) => {
                    let mut buf = [0; 10];
                    match put_date(&t.date_naive(), &mut buf) {
                        Some(()) => s.serialize_str(std::str::from_utf8(&buf).unwrap_or_default()),
                        None => s.collect_str(&t.date_naive().format_with_items(DATE.iter())),
                    }
                }
                None => s.serialize_str(""),
            },
            Cell::Day(d) => s.collect_str(&d.format_with_items(DATE.iter())),
            Cell::Resource(customer, _, None) => {
                s.collect_str(&format_args!("customers/{customer}"))
            }
            Cell::Resource(customer, collection, Some(id)) => {
                s.collect_str(&format_args!("customers/{customer}/{collection}/{id}"))
            }
            Cell::ConversionResource {
                customer,
                ad_group,
                criterion,
                ds,
            } => s.collect_str(&format_args!(
                "customers/{customer}/conversions/{ad_group}~{criterion}~{ds}"
            )),
            Cell::EngineAccount(id) => s.collect_str(&format_args!("Engine account {id}")),
        }
    }
}

/// What every row of one account shares.
pub(crate) struct AccountCells<'a> {
    pub account: &'a KnownAccount,
    pub manager_id: &'a str,
}

/// The selected fields grouped by resource, in the order the response writes them (resources and
/// names sorted, as in a JSON object with sorted keys).
pub(crate) struct Selection {
    resources: Vec<(String, Vec<(String, Field)>)>,
}

impl Selection {
    /// The selection of a query's `SELECT` list; fields the fake never fills are left out.
    pub(crate) fn new(select: &[String]) -> Self {
        let mut resources: Vec<(String, Vec<(String, Field)>)> = Vec::new();
        for name in select {
            let Some(field) = Field::parse(name) else {
                continue;
            };
            let (resource, key) = json_path(name);
            match resources.iter_mut().find(|(r, _)| *r == resource) {
                Some((_, fields)) => {
                    if !fields.iter().any(|(k, _)| *k == key) {
                        fields.push((key, field));
                    }
                }
                None => resources.push((resource, vec![(key, field)])),
            }
        }
        resources.sort_by(|a, b| a.0.cmp(&b.0));
        for (_, fields) in &mut resources {
            fields.sort_by(|a, b| a.0.cmp(&b.0));
        }
        Self { resources }
    }

    /// The page's rows as a JSON array of objects holding only the selected fields.
    pub(crate) fn page<'p>(&'p self, account: AccountCells<'p>, rows: &'p [Row]) -> Page<'p> {
        Page {
            selection: self,
            account,
            rows,
        }
    }
}

/// A page of rows written with a [`Selection`].
pub(crate) struct Page<'p> {
    selection: &'p Selection,
    account: AccountCells<'p>,
    rows: &'p [Row],
}

impl Serialize for Page<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut seq = s.serialize_seq(Some(self.rows.len()))?;
        for row in self.rows {
            seq.serialize_element(&Selected { page: self, row })?;
        }
        seq.end()
    }
}

struct Selected<'p> {
    page: &'p Page<'p>,
    row: &'p Row,
}

impl Serialize for Selected<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(None)?;
        for (resource, fields) in &self.page.selection.resources {
            // A resource appears only when the row has a value for one of its selected fields.
            if fields
                .iter()
                .any(|(_, f)| self.row.cell(*f, &self.page.account).is_some())
            {
                map.serialize_entry(
                    resource,
                    &Resource {
                        fields,
                        selected: self,
                    },
                )?;
            }
        }
        map.end()
    }
}

struct Resource<'p> {
    fields: &'p [(String, Field)],
    selected: &'p Selected<'p>,
}

impl Serialize for Resource<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(None)?;
        let account = &self.selected.page.account;
        for (key, field) in self.fields {
            if let Some(cell) = self.selected.row.cell(*field, account) {
                map.serialize_entry(key, &cell)?;
            }
        }
        map.end()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::search_ads::conversions::record_from_value;
    use crate::search_ads::record::Schema;
    use serde_json::{Value, json};

    fn account() -> KnownAccount {
        KnownAccount {
            agency_id: 1,
            advertiser_id: 2,
            engine_account_id: 3,
            customer_id: "1234567890".into(),
        }
    }

    fn write(select: &[&str], rows: &[Row]) -> Value {
        let select: Vec<String> = select.iter().map(|s| (*s).to_owned()).collect();
        let account = account();
        let selection = Selection::new(&select);
        let page = selection.page(
            AccountCells {
                account: &account,
                manager_id: "2000012300",
            },
            rows,
        );
        serde_json::to_value(&page).unwrap()
    }

    fn stored_from(item: Value) -> Record {
        record_from_value(Schema::Conversion, item).unwrap_or_else(|d| panic!("{}", d.text))
    }

    fn stored() -> Record {
        stored_from(json!({
            "conversionTimestamp": "1700000000123",
            "dsConversionId": "77",
            "conversionId": "order-1",
            "quantityMillis": "3000",
            "revenueMicros": "1500000",
            "state": "DELETED",
            "channel": "online",
            "adGroupId": "5",
            "criterionId": "6",
        }))
    }

    #[test]
    fn only_selected_fields_with_values_are_written_as_strings() {
        let v = stored();
        let row = Row::new(&V2::from_record(&v).unwrap(), None, Some(900));
        let page = write(
            &[
                "conversion.id",
                "conversion.conversion_date_time",
                "conversion.conversion_quantity",
                "conversion.status",
                "conversion.product_channel",
                "conversion.resource_name",
                "conversion.click_id",
                "conversion.visit_id",
                "segments.date",
                "customer.descriptive_name",
                "campaign.id",
                "ad_group.id",
                "ad_group.resource_name",
            ],
            &[row],
        );
        assert_eq!(
            page,
            json!([{
                "adGroup": {"id": "900", "resourceName": "customers/1234567890/adGroups/900"},
                "conversion": {
                    "conversionDateTime": "2023-11-14 22:13:20.123000+00:00",
                    "conversionQuantity": "3",
                    "id": "77",
                    "productChannel": "ONLINE",
                    "resourceName": "customers/1234567890/conversions/900~6~77",
                    "status": "REMOVED",
                },
                "customer": {"descriptiveName": "Engine account 3"},
                "segments": {"date": "2023-11-14"},
            }])
        );
    }

    /// The hand-written cells are the text chrono's formats and `i64`'s `Display` write.
    #[test]
    fn cells_are_written_as_chrono_and_display_write_them() {
        let mut rng = fastrand::Rng::with_seed(7);
        let extremes = [i64::MIN, i64::MAX, 0, -1, 1, 9, 10, -10, 1_000_000_000_000];
        for ms in extremes
            .into_iter()
            .chain((0..20_000).map(|_| rng.i64(-70_000_000_000_000..300_000_000_000_000)))
        {
            let cell = |c: Cell<'_>| serde_json::to_value(&c).unwrap();
            assert_eq!(cell(Cell::Int(ms)), json!(ms.to_string()));
            let expected = DateTime::from_timestamp_millis(ms).map_or(json!(""), |t| {
                json!(t.format_with_items(DATE_TIME.iter()).to_string())
            });
            assert_eq!(cell(Cell::DateTime(ms)), expected, "{ms}");
            let expected = DateTime::from_timestamp_millis(ms).map_or(json!(""), |t| {
                json!(t.date_naive().format_with_items(DATE.iter()).to_string())
            });
            assert_eq!(cell(Cell::Date(ms)), expected, "{ms}");
        }
    }

    #[test]
    fn a_resource_without_any_value_is_left_out() {
        let v = stored();
        let row = Row::new(&V2::from_record(&v).unwrap(), None, None);
        let page = write(&["conversion.id", "campaign.id"], &[row]);
        assert_eq!(page, json!([{"conversion": {"id": "77"}}]));
    }

    #[test]
    fn a_conversion_without_timestamp_or_ds_id_is_no_row() {
        assert!(V2::from_record(&stored_from(json!({"dsConversionId": "1"}))).is_none());
        assert!(V2::from_record(&stored_from(json!({"conversionTimestamp": "1"}))).is_none());
    }

    #[test]
    fn field_names_follow_the_json_mask() {
        assert_eq!(
            field_mask(&["ad_group.resource_name".into(), "segments.date".into()]),
            "adGroup.resourceName,segments.date"
        );
        for name in super::super::query::catalogue::CATALOGUE.fields.keys() {
            if let Some(field) = Field::parse(name) {
                let (r, _) = json_path(name);
                assert!(!r.is_empty(), "{field:?}");
            }
        }
    }
}

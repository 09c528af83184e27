//! One row of a `searchAds360:search` page as the report reads it: a small borrowing
//! [`WireRow`] (the members a conversion report selects, text borrowed from the page where it
//! holds no escapes), mapped at once to a [`Conversion`] by [`map_row`] following the table in
//! [`mapping`](super::mapping).

use std::borrow::Cow;
use std::fmt;
use std::marker::PhantomData;

use chrono::NaiveDate;
use serde::Deserialize;
use serde::de::value::MapAccessDeserializer;
use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, Visitor};

use super::super::conversion::Conversion;
use super::super::values::{
    AdGroupId, AdId, CampaignId, CriterionId, CustomerId, DsConversionId, InventoryAccountId,
    Micros,
};
use super::int64::Int64;
use super::mapping::{self, RowKey, parse_date, parse_date_time};

/// Text of the page: borrowed when it holds no escapes.
pub(super) type Text<'a> = Option<Cow<'a, str>>;

/// The members of a row the report reads (the spec's `SearchAds360Row`; others are skipped).
/// Each is an object or `null`: serde's derived structs would also take a JSON array, as their
/// fields in order, which the spec's types refuse ([`object`]).
#[derive(Deserialize)]
pub(super) struct WireRow<'a> {
    #[serde(borrow, default, deserialize_with = "object")]
    conversion: Option<WireConversion<'a>>,
    #[serde(borrow, default, deserialize_with = "object")]
    customer: Option<WireCustomer<'a>>,
    #[serde(default, deserialize_with = "object")]
    campaign: Option<WireId>,
    #[serde(rename = "adGroup", default, deserialize_with = "object")]
    ad_group: Option<WireId>,
    #[serde(borrow, default, deserialize_with = "object")]
    segments: Option<WireSegments<'a>>,
}

/// A member that must be a JSON object or `null`, read as `T`.
pub(super) fn object<'de, D, T>(deserializer: D) -> Result<Option<T>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    deserializer.deserialize_any(ObjectOrNull(PhantomData))
}

/// Reads a JSON object as `T` and `null` as `None`; anything else is the wrong type.
pub(super) struct ObjectOrNull<T>(PhantomData<T>);

impl<T> ObjectOrNull<T> {
    /// For one value.
    pub(super) fn new() -> Self {
        Self(PhantomData)
    }
}

impl<'de, T: Deserialize<'de>> Visitor<'de> for ObjectOrNull<T> {
    type Value = Option<T>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an object or null")
    }

    fn visit_unit<E: de::Error>(self) -> Result<Option<T>, E> {
        Ok(None)
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Option<T>, A::Error> {
        T::deserialize(MapAccessDeserializer::new(map)).map(Some)
    }
}

impl<'de, T: Deserialize<'de>> DeserializeSeed<'de> for ObjectOrNull<T> {
    type Value = Option<T>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Option<T>, D::Error> {
        deserializer.deserialize_any(self)
    }
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct WireConversion<'a> {
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
pub(super) struct WireCustomer<'a> {
    id: Option<Int64>,
    #[serde(borrow)]
    currency_code: Text<'a>,
}

/// `campaign` and `adGroup`: the id only.
#[derive(Deserialize)]
pub(super) struct WireId {
    id: Option<Int64>,
}

#[derive(Deserialize)]
pub(super) struct WireSegments<'a> {
    #[serde(borrow)]
    date: Text<'a>,
}

pub(super) fn owned(text: Text<'_>) -> Option<String> {
    text.map(Cow::into_owned)
}

/// One row → its key, date and [`Conversion`] (the rules of [`mapping`](super::mapping)); `Err`
/// names the member that could not be read.
/// `customer` keeps the last customer id read, so rows of the same customer share its check.
pub(super) fn map_row(
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
            Some((last, checked)) if *last == id => Some(*checked),
            _ => {
                let checked = CustomerId::new(id.to_string()).map_err(|e| e.to_string())?;
                *customer = Some((id, checked));
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

//! A Reporting API row of `FROM conversion` → the same typed [`Conversion`] that
//! `list_conversions` yields.
//!
//! | `Conversion` field | filled from | note |
//! |---|---|---|
//! | `conversion_id` | `conversion.advertiser_conversion_id` | the advertiser's id (V2UPD) |
//! | `ds_conversion_id` | `conversion.id` | |
//! | `conversion_timestamp` | `conversion.conversion_date_time` | `yyyy-MM-dd HH:mm:ss[.f]±HH:MM` (SR-10) |
//! | `conversion_modified_timestamp` | `conversion.conversion_last_modified_date_time` | same format |
//! | `state` | `conversion.status` | `ENABLED` → `ACTIVE`, `REMOVED` → `REMOVED`, others kept as `Other` |
//! | `revenue_micros` | `conversion.conversion_revenue_micros` | adjusted revenue, in the customer's currency |
//! | `currency_code` | `customer.currency_code` | only when the conversion has revenue, as v2 sets it |
//! | `quantity_millis` | `conversion.conversion_quantity` × 1000 | v0 counts whole units |
//! | `click_id`, `floodlight_order_id`, `product_id` | same names | |
//! | `ad_id`, `criterion_id` | `conversion.ad_id`, `conversion.criterion_id` | same ids in both APIs (SR-12) |
//! | `campaign_id`, `ad_group_id` | `campaign.id`, `ad_group.id` | **new** ids (the ID-mapping file translates) |
//! | `customer_id` | `customer.id` | |
//! | `inventory_account_id` | `conversion.merchant_id` | |
//! | `product_country`, `product_language`, `store_id` | `conversion.product_country_code`, `_language_code`, `product_store_id` | |
//! | `channel` | `conversion.product_channel` | `ONLINE`/`LOCAL` → `online`/`local` |
//!
//! Left `None` (empty for the lists), because v0's `conversion` resource has no such field:
//! `segmentation_type`, `segmentation_id`, `segmentation_name` (the Floodlight activity is
//! `conversion_action`, not selectable with `FROM conversion` as far as the public material says),
//! `conversion_type` (no ACTION/TRANSACTION on the event), `count_millis`, `device_type`,
//! `ad_user_data_consent`, `attribution_model`, `custom_dimensions`, `custom_metrics` (raw event
//! dimensions need their headers and are not requested), `agency_id`, `advertiser_id`,
//! `engine_account_id` (the legacy hierarchy does not exist in v0; `customer_id` names the account)
//! and `product_group_id`.

use chrono::{DateTime, NaiveDate, Utc};
use sa360_reporting_client::types;

use super::super::conversion::Conversion;
use super::super::values::{
    AdGroupId, AdId, CampaignId, Channel, ConversionState, CriterionId, CustomerId, DsConversionId,
    InventoryAccountId, Micros,
};

/// Parses `yyyy-MM-dd HH:mm:ss[.fraction]±HH:MM` (SR-10): RFC 3339 with a space between date and
/// time (not `T`) and an offset (not `Z`), read by chrono.
pub(crate) fn parse_date_time(field: &str, text: &str) -> Result<DateTime<Utc>, String> {
    let b = text.as_bytes();
    let documented = b.get(10) == Some(&b' ')
        && matches!(b.len().checked_sub(6).map(|i| b[i]), Some(b'+' | b'-'));
    documented
        .then(|| DateTime::parse_from_rfc3339(text).ok())
        .flatten()
        .map(|t| t.with_timezone(&Utc))
        .ok_or_else(|| {
            format!(
                "{field} {text:?} is not `yyyy-MM-dd HH:mm:ss[.ffffff]±HH:MM` (a time without a UTC \
                 offset cannot be placed in time)"
            )
        })
}

/// `segments.date`, `yyyy-MM-dd`.
pub(crate) fn parse_date(text: &str) -> Option<NaiveDate> {
    text.parse().ok()
}

/// `conversion.status` → the conversion's state: `ENABLED` is active, `REMOVED` removed, anything
/// else kept as sent.
pub(crate) fn state(status: std::borrow::Cow<'_, str>) -> ConversionState {
    match &*status {
        "ENABLED" => ConversionState::Active,
        "REMOVED" => ConversionState::Removed,
        _ => ConversionState::Other(status.into_owned()),
    }
}

/// `conversion.conversion_quantity` (whole units) → thousandths; `Err` when it does not fit.
pub(crate) fn quantity_millis(quantity: Option<i64>) -> Result<Option<i64>, String> {
    quantity
        .map(|q| {
            q.checked_mul(1000)
                .ok_or_else(|| "conversion.conversion_quantity is too large".to_owned())
        })
        .transpose()
}

/// `conversion.product_channel` → [`Channel`]: `ONLINE`/`LOCAL` → `online`/`local` without a new
/// string per row.
pub(crate) fn channel(wire: &str) -> Channel {
    if wire.eq_ignore_ascii_case("online") {
        Channel::from_wire("online")
    } else if wire.eq_ignore_ascii_case("local") {
        Channel::from_wire("local")
    } else {
        Channel::from_wire(&wire.to_ascii_lowercase())
    }
}

/// The sort key of a row: (conversion time, `conversion.id`), the report's order (SR-9).
pub(crate) type RowKey = (DateTime<Utc>, i64);

/// Maps one row of the generated type; `Err` names the field that could not be read.
pub(crate) fn conversion_from_row(
    row: &mut types::SearchAds360Row,
) -> Result<(RowKey, Conversion), String> {
    let c = row
        .conversion
        .as_mut()
        .ok_or("the row has no `conversion` member")?;
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
    let state = c.status.take().map(|s| state(s.into()));
    let revenue = c.conversion_revenue_micros.map(|m| Micros::new(m.get()));
    let customer = row.customer.as_mut();
    let customer_id = customer
        .as_ref()
        .and_then(|c| c.id)
        .map(|id| CustomerId::new(id.get().to_string()))
        .transpose()
        .map_err(|e| e.to_string())?;
    let currency_code = revenue.and(customer.and_then(|c| c.currency_code.take()));
    let quantity_millis = quantity_millis(c.conversion_quantity.map(|q| q.get()))?;
    let channel = c.product_channel.as_deref().map(channel);
    let conversion = Conversion {
        conversion_id: c.advertiser_conversion_id.take(),
        conversion_timestamp: Some(when),
        conversion_modified_timestamp: modified,
        ds_conversion_id: Some(DsConversionId::new(id)),
        state,
        revenue_micros: revenue,
        currency_code,
        quantity_millis,
        click_id: c.click_id.take(),
        floodlight_order_id: c.floodlight_order_id.take(),
        ad_id: c.ad_id.map(|v| AdId::new(v.get())),
        criterion_id: c.criterion_id.map(|v| CriterionId::new(v.get())),
        campaign_id: row
            .campaign
            .as_ref()
            .and_then(|x| x.id)
            .map(|v| CampaignId::new(v.get())),
        ad_group_id: row
            .ad_group
            .as_ref()
            .and_then(|x| x.id)
            .map(|v| AdGroupId::new(v.get())),
        customer_id,
        inventory_account_id: c.merchant_id.map(|v| InventoryAccountId::new(v.get())),
        product_id: c.product_id.take(),
        product_country: c.product_country_code.take(),
        product_language: c.product_language_code.take(),
        store_id: c.product_store_id.take(),
        channel,
        ..Conversion::default()
    };
    Ok(((when, id), conversion))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn date_times_need_an_offset() {
        let t = parse_date_time("f", "2026-10-01 12:34:56.123000+00:00").unwrap();
        assert_eq!(t.timestamp_millis() % 1000, 123);
        let t2 = parse_date_time("f", "2026-10-01 14:34:56+02:00").unwrap();
        assert_eq!(t2.timestamp(), t.timestamp());
        let e =
            parse_date_time("conversion.conversion_date_time", "2026-10-01 12:34:56").unwrap_err();
        assert!(e.contains("conversion.conversion_date_time"), "{e}");
        // The documented form has a space between date and time; other RFC 3339 spellings and
        // offsets without a colon are not it.
        assert!(parse_date_time("f", "2026-10-01T12:34:56+00:00").is_err());
        assert!(parse_date_time("f", "2026-10-01 12:34:56+0000").is_err());
        assert!(parse_date_time("f", "2026-10-01 12:34:56Z").is_err());
        assert!(parse_date_time("f", "2026-10-01 12:34:56-07:30").is_ok());
    }
}

//! Typed conversions, availabilities and saved columns to and from the
//! generated client's wire types; a value that does not parse is named by its
//! field.

use sa360_v2_client::types;

use crate::search_ads::conversion::{
    Availability, Conversion, CustomDimension, CustomMetric, SavedColumn,
};
use crate::search_ads::values::{
    AdGroupId, AdId, AdvertiserId, AgencyId, CampaignId, Channel, Consent, ConversionState,
    ConversionType, CriterionId, CustomerId, DeviceType, DsConversionId, EngineAccountId,
    InventoryAccountId, Micros, ProductGroupId, SegmentationId, SegmentationType,
    parse_epoch_millis, to_epoch_millis,
};

fn millis_string(t: chrono::DateTime<chrono::Utc>) -> String {
    to_epoch_millis(t).to_string()
}

/// A typed conversion in the wire shape.
pub(crate) fn conversion_to_wire(c: &Conversion) -> types::Conversion {
    conversion_into_wire(c.clone())
}

/// A typed conversion in the wire shape, its text moved rather than copied.
pub(crate) fn conversion_into_wire(c: Conversion) -> types::Conversion {
    types::Conversion {
        ad_group_id: c.ad_group_id.map(|id| id.wire()),
        ad_id: c.ad_id.map(|id| id.wire()),
        ad_user_data_consent: c
            .ad_user_data_consent
            .as_ref()
            .map(|v| v.as_str().to_owned()),
        advertiser_id: c.advertiser_id.map(|id| id.wire()),
        agency_id: c.agency_id.map(|id| id.wire()),
        attribution_model: c.attribution_model,
        campaign_id: c.campaign_id.map(|id| id.wire()),
        channel: c.channel.as_ref().map(|v| v.as_str().to_owned()),
        click_id: c.click_id,
        conversion_id: c.conversion_id,
        conversion_modified_timestamp: c
            .conversion_modified_timestamp
            .map(|t| to_epoch_millis(t).into()),
        conversion_timestamp: c.conversion_timestamp.map(millis_string),
        count_millis: c.count_millis.map(Into::into),
        criterion_id: c.criterion_id.map(|id| id.wire()),
        currency_code: c.currency_code,
        custom_dimension: c
            .custom_dimensions
            .into_iter()
            .map(|d| types::CustomDimension {
                name: Some(d.name),
                value: Some(d.value),
            })
            .collect(),
        custom_metric: c
            .custom_metrics
            .into_iter()
            .map(|m| types::CustomMetric {
                name: Some(m.name),
                value: Some(m.value),
            })
            .collect(),
        customer_id: c.customer_id.as_ref().map(|v| v.as_str().to_owned()),
        device_type: c.device_type.as_ref().map(|v| v.as_str().to_owned()),
        ds_conversion_id: c.ds_conversion_id.map(|id| id.wire()),
        engine_account_id: c.engine_account_id.map(|id| id.wire()),
        floodlight_order_id: c.floodlight_order_id,
        inventory_account_id: c.inventory_account_id.map(|id| id.wire()),
        product_country: c.product_country,
        product_group_id: c.product_group_id.map(|id| id.wire()),
        product_id: c.product_id,
        product_language: c.product_language,
        quantity_millis: c.quantity_millis.map(Into::into),
        revenue_micros: c.revenue_micros.map(|m| m.get().to_string()),
        segmentation_id: c.segmentation_id.map(|id| id.wire()),
        segmentation_name: c.segmentation_name,
        segmentation_type: c.segmentation_type.as_ref().map(|v| v.as_str().to_owned()),
        state: c.state.as_ref().map(|v| v.as_str().to_owned()),
        store_id: c.store_id,
        type_: c.conversion_type.as_ref().map(|v| v.as_str().to_owned()),
    }
}

/// A wire conversion, typed (the one mapping of the v2 wire shape: reads, pages and JSON);
/// the error names the field that does not parse.
pub(crate) fn conversion_from_wire(w: types::Conversion) -> Result<Conversion, String> {
    let conversion_timestamp = w
        .conversion_timestamp
        .as_deref()
        .map(|t| {
            parse_epoch_millis(t)
                .ok_or_else(|| format!("conversionTimestamp {t:?} is not epoch milliseconds"))
        })
        .transpose()?;
    let revenue_micros = w
        .revenue_micros
        .as_deref()
        .map(|t| {
            t.trim()
                .parse::<i64>()
                .map(Micros::new)
                .map_err(|_| format!("revenueMicros {t:?} is not a whole number of micros"))
        })
        .transpose()?;
    let customer_id = w
        .customer_id
        .map(|t| CustomerId::new(&t).map_err(|_| format!("customerId {t:?} is not a customer id")))
        .transpose()?;
    let conversion_modified_timestamp = w
        .conversion_modified_timestamp
        .map(|m| {
            crate::search_ads::values::from_epoch_millis(m.get())
                .ok_or_else(|| format!("conversionModifiedTimestamp {m} is out of range"))
        })
        .transpose()?;
    Ok(Conversion {
        conversion_id: w.conversion_id,
        conversion_timestamp,
        segmentation_type: w
            .segmentation_type
            .as_deref()
            .map(SegmentationType::from_wire),
        segmentation_id: w.segmentation_id.as_ref().map(SegmentationId::from_wire),
        segmentation_name: w.segmentation_name,
        conversion_type: w.type_.as_deref().map(ConversionType::from_wire),
        state: w.state.as_deref().map(ConversionState::from_wire),
        revenue_micros,
        currency_code: w.currency_code,
        quantity_millis: w.quantity_millis.map(i64::from),
        count_millis: w.count_millis.map(i64::from),
        click_id: w.click_id,
        agency_id: w.agency_id.as_ref().map(AgencyId::from_wire),
        advertiser_id: w.advertiser_id.as_ref().map(AdvertiserId::from_wire),
        engine_account_id: w.engine_account_id.as_ref().map(EngineAccountId::from_wire),
        campaign_id: w.campaign_id.as_ref().map(CampaignId::from_wire),
        ad_group_id: w.ad_group_id.as_ref().map(AdGroupId::from_wire),
        ad_id: w.ad_id.as_ref().map(AdId::from_wire),
        criterion_id: w.criterion_id.as_ref().map(CriterionId::from_wire),
        customer_id,
        ds_conversion_id: w.ds_conversion_id.as_ref().map(DsConversionId::from_wire),
        floodlight_order_id: w.floodlight_order_id,
        channel: w.channel.as_deref().map(Channel::from_wire),
        device_type: w.device_type.as_deref().map(DeviceType::from_wire),
        ad_user_data_consent: w.ad_user_data_consent.as_deref().map(Consent::from_wire),
        attribution_model: w.attribution_model,
        conversion_modified_timestamp,
        custom_dimensions: w
            .custom_dimension
            .into_iter()
            .map(|d| CustomDimension {
                name: d.name.unwrap_or_default(),
                value: d.value.unwrap_or_default(),
            })
            .collect(),
        custom_metrics: w
            .custom_metric
            .into_iter()
            .map(|m| CustomMetric {
                name: m.name.unwrap_or_default(),
                value: m.value.unwrap_or_default(),
            })
            .collect(),
        inventory_account_id: w
            .inventory_account_id
            .as_ref()
            .map(InventoryAccountId::from_wire),
        product_country: w.product_country,
        product_group_id: w.product_group_id.as_ref().map(ProductGroupId::from_wire),
        product_id: w.product_id,
        product_language: w.product_language,
        store_id: w.store_id,
    })
}

/// A typed availability in the wire shape.
pub(crate) fn availability_to_wire(a: &Availability) -> types::AvailabilityUpdate {
    types::AvailabilityUpdate {
        advertiser_id: a.advertiser_id.wire(),
        agency_id: a.agency_id.wire(),
        availability_timestamp: to_epoch_millis(a.availability_timestamp).into(),
        customer_id: a.customer_id.as_ref().map(|c| c.as_str().to_owned()),
        segmentation_id: a.segmentation_id.map(|id| id.wire()),
        segmentation_name: a.segmentation_name.clone(),
        segmentation_type: a.segmentation_type.as_str().to_owned(),
    }
}

/// The members the request shapes of insert and update
/// ([`types::ConversionInsert`], [`types::ConversionUpdate`], SA-20) share
/// with the wire shape `$w` unchanged, plus the caller's `$member: $value`s
/// (the ones whose type differs).
macro_rules! request_shape {
    ($ty:ident, $w:ident, { $($member:ident: $value:expr),* $(,)? }) => {
        types::$ty {
            $($member: $value,)*
            ad_group_id: $w.ad_group_id,
            ad_id: $w.ad_id,
            ad_user_data_consent: $w.ad_user_data_consent,
            advertiser_id: $w.advertiser_id,
            agency_id: $w.agency_id,
            attribution_model: $w.attribution_model,
            campaign_id: $w.campaign_id,
            channel: $w.channel,
            click_id: $w.click_id,
            conversion_modified_timestamp: $w.conversion_modified_timestamp,
            count_millis: $w.count_millis,
            criterion_id: $w.criterion_id,
            currency_code: $w.currency_code,
            customer_id: $w.customer_id,
            device_type: $w.device_type,
            ds_conversion_id: $w.ds_conversion_id,
            engine_account_id: $w.engine_account_id,
            floodlight_order_id: $w.floodlight_order_id,
            inventory_account_id: $w.inventory_account_id,
            product_country: $w.product_country,
            product_group_id: $w.product_group_id,
            product_id: $w.product_id,
            product_language: $w.product_language,
            quantity_millis: $w.quantity_millis,
            revenue_micros: $w.revenue_micros,
            segmentation_id: $w.segmentation_id,
            segmentation_name: $w.segmentation_name,
            state: $w.state,
            store_id: $w.store_id,
            type_: $w.type_,
        }
    };
}

/// A required member of a request shape; the error names it.
fn required<T>(value: Option<T>, member: &str) -> Result<T, String> {
    value.ok_or_else(|| format!("{member} is missing"))
}

/// The custom dimensions and metrics in their request shape.
fn custom_inputs(
    c: &mut Conversion,
) -> (
    Vec<types::CustomDimensionInput>,
    Vec<types::CustomMetricInput>,
) {
    let dimensions = std::mem::take(&mut c.custom_dimensions)
        .into_iter()
        .map(|d| types::CustomDimensionInput {
            name: d.name,
            value: d.value,
        })
        .collect();
    let metrics = std::mem::take(&mut c.custom_metrics)
        .into_iter()
        .map(|m| types::CustomMetricInput {
            name: m.name,
            value: m.value,
        })
        .collect();
    (dimensions, metrics)
}

/// A conversion in the request shape of insert ([`types::ConversionInsert`],
/// SA-20): the wire shape's members, with `conversionId`,
/// `conversionTimestamp` and `segmentationType` required. Its text is moved,
/// not copied. The error names what is missing;
/// [`crate::search_ads::write::input_problems`] refuses such a conversion
/// before it gets here, so it is not expected.
pub(crate) fn conversion_into_insert(mut c: Conversion) -> Result<types::ConversionInsert, String> {
    let (dimensions, metrics) = custom_inputs(&mut c);
    let w = conversion_into_wire(c);
    Ok(request_shape!(ConversionInsert, w, {
        conversion_id: required(w.conversion_id, "conversionId")?,
        conversion_timestamp: required(w.conversion_timestamp, "conversionTimestamp")?,
        segmentation_type: required(w.segmentation_type, "segmentationType")?,
        custom_dimension: dimensions,
        custom_metric: metrics,
    }))
}

/// A conversion in the request shape of update ([`types::ConversionUpdate`]):
/// like [`conversion_into_insert`], with `segmentationType` optional.
pub(crate) fn conversion_into_update(mut c: Conversion) -> Result<types::ConversionUpdate, String> {
    let (dimensions, metrics) = custom_inputs(&mut c);
    let w = conversion_into_wire(c);
    Ok(request_shape!(ConversionUpdate, w, {
        conversion_id: required(w.conversion_id, "conversionId")?,
        conversion_timestamp: required(w.conversion_timestamp, "conversionTimestamp")?,
        segmentation_type: w.segmentation_type,
        custom_dimension: dimensions,
        custom_metric: metrics,
    }))
}

/// A wire availability, typed; the error names a missing or bad field.
pub(crate) fn availability_from_wire(w: types::Availability) -> Result<Availability, String> {
    let missing = |f: &str| format!("{f} is missing");
    let timestamp = w
        .availability_timestamp
        .ok_or_else(|| missing("availabilityTimestamp"))?;
    Ok(Availability {
        agency_id: AgencyId::from_wire(&w.agency_id.ok_or_else(|| missing("agencyId"))?),
        advertiser_id: AdvertiserId::from_wire(
            &w.advertiser_id.ok_or_else(|| missing("advertiserId"))?,
        ),
        availability_timestamp: crate::search_ads::values::from_epoch_millis(timestamp.get())
            .ok_or_else(|| format!("availabilityTimestamp {timestamp} is out of range"))?,
        segmentation_type: w
            .segmentation_type
            .map(SegmentationType::from)
            .unwrap_or(SegmentationType::Floodlight),
        segmentation_id: w.segmentation_id.as_ref().map(SegmentationId::from_wire),
        segmentation_name: w.segmentation_name,
        customer_id: w
            .customer_id
            .map(|t| {
                CustomerId::new(t.clone())
                    .map_err(|_| format!("customerId {t:?} is not a customer id"))
            })
            .transpose()?,
    })
}

/// A wire saved column, typed.
pub(crate) fn saved_column_from_wire(w: types::SavedColumn) -> SavedColumn {
    SavedColumn {
        name: w.saved_column_name.unwrap_or_default(),
        column_type: w.type_,
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use chrono::DateTime;

    use crate::search_ads::values::*;
    use crate::search_ads::wire::conversion::*;

    /// A conversion with every field set.
    pub(crate) fn full() -> Conversion {
        Conversion {
            conversion_id: Some("order-1".into()),
            conversion_timestamp: DateTime::from_timestamp_millis(1_704_103_200_123),
            segmentation_type: Some(SegmentationType::Floodlight),
            segmentation_id: Some(SegmentationId::new(551234)),
            segmentation_name: Some("Purchase".into()),
            conversion_type: Some(ConversionType::Transaction),
            state: Some(ConversionState::Active),
            revenue_micros: Some(Micros::new(19_990_000)),
            currency_code: Some("EUR".into()),
            quantity_millis: Some(2000),
            count_millis: Some(1000),
            click_id: Some("gclid".into()),
            agency_id: Some(AgencyId::new(20700000000000125)),
            advertiser_id: Some(AdvertiserId::new(21700000012345)),
            engine_account_id: Some(EngineAccountId::new(700000000042205)),
            campaign_id: Some(CampaignId::new(71700000001899732)),
            ad_group_id: Some(AdGroupId::new(58700000000000001)),
            ad_id: Some(AdId::new(43700000000000001)),
            criterion_id: Some(CriterionId::new(43700000000000002)),
            customer_id: Some(CustomerId::new("2000012350").unwrap()),
            ds_conversion_id: Some(DsConversionId::new(9_000_000_001)),
            floodlight_order_id: Some("fl-1".into()),
            channel: Some(Channel::Online),
            device_type: Some(DeviceType::Other("SMART_TV".into())),
            ad_user_data_consent: Some(Consent::Granted),
            attribution_model: Some("model".into()),
            conversion_modified_timestamp: DateTime::from_timestamp_millis(1_704_103_300_000),
            custom_dimensions: vec![CustomDimension {
                name: "Store Region".into(),
                value: "North".into(),
            }],
            custom_metrics: vec![CustomMetric {
                name: "Basket Size".into(),
                value: 3.5,
            }],
            inventory_account_id: Some(InventoryAccountId::new(1)),
            product_country: Some("DE".into()),
            product_group_id: Some(ProductGroupId::new(2)),
            product_id: Some("sku".into()),
            product_language: Some("de".into()),
            store_id: Some("store".into()),
        }
    }

    #[test]
    fn a_conversion_round_trips_through_the_wire_shape() {
        let c = full();
        let wire = conversion_to_wire(&c);
        assert_eq!(conversion_from_wire(wire.clone()).unwrap(), c);
        let json = serde_json::to_value(&wire).unwrap();
        assert_eq!(json["agencyId"], "20700000000000125");
        assert_eq!(json["conversionTimestamp"], "1704103200123");
        assert_eq!(json["revenueMicros"], "19990000");
        assert_eq!(json["quantityMillis"], "2000");
        assert_eq!(json["type"], "TRANSACTION");
        assert_eq!(json["channel"], "online");
        assert_eq!(json["deviceType"], "SMART_TV");
        assert_eq!(json["customDimension"][0]["name"], "Store Region");
        let minimal = Conversion::new("x", DateTime::from_timestamp_millis(5).unwrap());
        let json = serde_json::to_value(conversion_to_wire(&minimal)).unwrap();
        assert_eq!(
            json,
            serde_json::json!({"conversionId": "x", "conversionTimestamp": "5", "segmentationType": "FLOODLIGHT"})
        );
    }

    #[test]
    fn the_request_shapes_are_the_wire_shape_with_required_members() {
        // The reference: the wire shape's JSON read as the request shape (what
        // the SDK sent before the request shapes were built directly).
        fn through_json<T: serde::de::DeserializeOwned>(c: &Conversion) -> T {
            serde_json::from_value(serde_json::to_value(conversion_to_wire(c)).unwrap()).unwrap()
        }
        let minimal = Conversion::new("x", DateTime::from_timestamp_millis(5).unwrap());
        for c in [full(), minimal] {
            let insert = conversion_into_insert(c.clone()).unwrap();
            assert_eq!(insert, through_json::<types::ConversionInsert>(&c));
            let update = conversion_into_update(c.clone()).unwrap();
            assert_eq!(update, through_json::<types::ConversionUpdate>(&c));
            assert_eq!(
                serde_json::to_value(&insert).unwrap(),
                serde_json::to_value(conversion_to_wire(&c)).unwrap()
            );
        }
        let mut c = full();
        c.segmentation_type = None;
        let e = conversion_into_insert(c.clone()).unwrap_err();
        assert!(e.contains("segmentationType"), "{e}");
        assert_eq!(conversion_into_update(c).unwrap().segmentation_type, None);
        let mut c = full();
        c.conversion_timestamp = None;
        let e = conversion_into_update(c).unwrap_err();
        assert!(e.contains("conversionTimestamp"), "{e}");
    }

    #[test]
    fn wire_values_that_do_not_parse_name_their_field() {
        let wire: types::Conversion =
            serde_json::from_value(serde_json::json!({"conversionTimestamp": "yesterday"}))
                .unwrap();
        let e = conversion_from_wire(wire).unwrap_err();
        assert!(e.contains("conversionTimestamp"), "{e}");
        let wire: types::Conversion =
            serde_json::from_value(serde_json::json!({"revenueMicros": "1.5"})).unwrap();
        assert!(
            conversion_from_wire(wire)
                .unwrap_err()
                .contains("revenueMicros")
        );
        // int64 ids accept JSON numbers as well as strings.
        let wire: types::Conversion =
            serde_json::from_value(serde_json::json!({"agencyId": 12, "advertiserId": "13"}))
                .unwrap();
        let c = conversion_from_wire(wire).unwrap();
        assert_eq!(c.agency_id, Some(AgencyId::new(12)));
        assert_eq!(c.advertiser_id, Some(AdvertiserId::new(13)));
    }

    #[test]
    fn an_availability_round_trips() {
        let a = Availability {
            segmentation_id: Some(SegmentationId::new(551234)),
            segmentation_name: Some("Purchase".into()),
            customer_id: Some(CustomerId::new("2000012350").unwrap()),
            ..Availability::new(
                AgencyId::new(1),
                AdvertiserId::new(2),
                DateTime::from_timestamp_millis(1_704_103_200_000).unwrap(),
            )
        };
        let wire = availability_to_wire(&a);
        assert_eq!(
            serde_json::to_value(&wire).unwrap()["availabilityTimestamp"],
            "1704103200000"
        );
        // The echo has the response shape: the same members, all optional.
        let echo: types::Availability =
            serde_json::from_value(serde_json::to_value(&wire).unwrap()).unwrap();
        assert_eq!(availability_from_wire(echo).unwrap(), a);
    }
}

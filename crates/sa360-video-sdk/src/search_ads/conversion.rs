//! Typed conversions, availabilities and saved columns.

use chrono::{DateTime, Utc};

use super::values::{
    AdGroupId, AdId, AdvertiserId, AgencyId, CampaignId, Channel, Consent, ConversionState,
    ConversionType, CriterionId, CustomerId, DeviceType, DsConversionId, EngineAccountId,
    InventoryAccountId, Micros, ProductGroupId, SegmentationId, SegmentationType,
};

/// A conversion, typed.
///
/// Every field is optional because which fields are required depends on the
/// method (SA-7): `insert` needs [`conversion_id`](Self::conversion_id),
/// [`conversion_timestamp`](Self::conversion_timestamp) and
/// [`segmentation_type`](Self::segmentation_type); `update` needs the id and
/// the timestamp. [`Conversion::new`] sets all three.
///
/// ```
/// use chrono::DateTime;
/// use sa360_video_sdk::search_ads::{
///     AdvertiserId, AgencyId, Conversion, ConversionType, Micros, SegmentationId,
/// };
///
/// let when = DateTime::from_timestamp_millis(1_704_103_200_000).unwrap();
/// let conversion = Conversion {
///     agency_id: Some(AgencyId::new(20700000000000125)),
///     advertiser_id: Some(AdvertiserId::new(21700000012345)),
///     segmentation_id: Some(SegmentationId::new(551234)),
///     conversion_type: Some(ConversionType::Transaction),
///     revenue_micros: Some("19.99".parse::<Micros>()?),
///     currency_code: Some("EUR".into()),
///     click_id: Some("gclid-123".into()),
///     ..Conversion::new("order-1001", when)
/// };
/// assert_eq!(conversion.conversion_id.as_deref(), Some("order-1001"));
/// # Ok::<(), sa360_video_sdk::search_ads::Error>(())
/// ```
///
/// # JSON form
///
/// `Conversion` implements [`Serialize`](serde::Serialize) and
/// [`Deserialize`](serde::Deserialize) as the API's Conversion resource, so a
/// conversion written to a file can be uploaded again as it is:
///
/// - the field names are the API's ([`Conversion::FIELDS`]): `type` for
///   [`conversion_type`](Self::conversion_type), `customDimension` and
///   `customMetric` (arrays of `{"name", "value"}`) for the custom values;
/// - ids, `quantityMillis` and `countMillis` are strings of digits,
///   timestamps are epoch milliseconds as a string of digits, `revenueMicros`
///   is micros as a string of digits, value sets are their wire strings;
/// - absent fields are left out.
///
/// Reading accepts the same, and also JSON numbers wherever the API has
/// digits in a string (ids, timestamps, millis, micros); `null` is the same as
/// an absent field. A field that is not one of [`Conversion::FIELDS`], or a
/// value that does not parse, is an error that names the field.
///
/// ```
/// use sa360_video_sdk::search_ads::{AgencyId, Conversion, Micros};
///
/// let line = r#"{"conversionId": "order-1001", "conversionTimestamp": 1704103200000,
///     "segmentationType": "FLOODLIGHT", "agencyId": 20700000000000125,
///     "revenueMicros": "19990000", "customMetric": [{"name": "Basket Size", "value": 3}]}"#;
/// let conversion: Conversion = serde_json::from_str(line)?;
/// assert_eq!(conversion.agency_id, Some(AgencyId::new(20700000000000125)));
/// assert_eq!(conversion.revenue_micros, Some(Micros::new(19_990_000)));
///
/// let json = serde_json::to_value(&conversion)?;
/// assert_eq!(json["agencyId"], "20700000000000125");
/// assert_eq!(json["conversionTimestamp"], "1704103200000");
/// assert_eq!(json["customMetric"][0]["value"], 3.0);
/// assert_eq!(serde_json::from_value::<Conversion>(json)?, conversion);
///
/// let e = serde_json::from_str::<Conversion>(r#"{"segmentationId": "12x"}"#).unwrap_err();
/// assert!(e.to_string().starts_with(r#"segmentationId "12x" is not valid"#), "{e}");
/// # Ok::<(), serde_json::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Conversion {
    /// The advertiser's id for the conversion; unique per advertiser (SA-15).
    pub conversion_id: Option<String>,
    /// When the conversion happened (sent as epoch milliseconds).
    pub conversion_timestamp: Option<DateTime<Utc>>,
    /// The segmentation type, `FLOODLIGHT`.
    pub segmentation_type: Option<SegmentationType>,
    /// The Floodlight activity id.
    pub segmentation_id: Option<SegmentationId>,
    /// The Floodlight activity name.
    pub segmentation_name: Option<String>,
    /// `ACTION` or `TRANSACTION` (`type` on the wire).
    pub conversion_type: Option<ConversionType>,
    /// `ACTIVE` or `REMOVED`.
    pub state: Option<ConversionState>,
    /// The revenue of a transaction.
    pub revenue_micros: Option<Micros>,
    /// ISO 4217 currency of the revenue.
    pub currency_code: Option<String>,
    /// The quantity times 1000.
    pub quantity_millis: Option<i64>,
    /// The count times 1000 (support-gated).
    pub count_millis: Option<i64>,
    /// The click id (gclid).
    pub click_id: Option<String>,
    /// The agency.
    pub agency_id: Option<AgencyId>,
    /// The advertiser.
    pub advertiser_id: Option<AdvertiserId>,
    /// The engine account.
    pub engine_account_id: Option<EngineAccountId>,
    /// The campaign.
    pub campaign_id: Option<CampaignId>,
    /// The ad group.
    pub ad_group_id: Option<AdGroupId>,
    /// The ad.
    pub ad_id: Option<AdId>,
    /// The criterion (keyword).
    pub criterion_id: Option<CriterionId>,
    /// The customer of the new Search Ads 360 experience.
    pub customer_id: Option<CustomerId>,
    /// The id Search Ads 360 generated (read-only in practice).
    pub ds_conversion_id: Option<DsConversionId>,
    /// The Floodlight order id.
    pub floodlight_order_id: Option<String>,
    /// The sales channel.
    pub channel: Option<Channel>,
    /// The device.
    pub device_type: Option<DeviceType>,
    /// Consent for core platform services.
    pub ad_user_data_consent: Option<Consent>,
    /// Support-gated attribution model.
    pub attribution_model: Option<String>,
    /// When the conversion was last modified (set by the server).
    pub conversion_modified_timestamp: Option<DateTime<Utc>>,
    /// Custom dimensions.
    pub custom_dimensions: Vec<CustomDimension>,
    /// Custom metrics.
    pub custom_metrics: Vec<CustomMetric>,
    /// The inventory account of the product.
    pub inventory_account_id: Option<InventoryAccountId>,
    /// ISO 3166 country of the product's feed.
    pub product_country: Option<String>,
    /// The product group.
    pub product_group_id: Option<ProductGroupId>,
    /// The product id (SKU).
    pub product_id: Option<String>,
    /// ISO 639 language of the product's feed.
    pub product_language: Option<String>,
    /// The local store (channel `local` only).
    pub store_id: Option<String>,
}

impl Conversion {
    /// The field names of the JSON form (the API's Conversion resource), in
    /// the order of a table's columns: the identity first, then the values,
    /// the owner ids and the rest.
    pub const FIELDS: [&'static str; 35] = [
        "conversionId",
        "conversionTimestamp",
        "segmentationType",
        "segmentationId",
        "segmentationName",
        "type",
        "state",
        "revenueMicros",
        "currencyCode",
        "quantityMillis",
        "countMillis",
        "clickId",
        "agencyId",
        "advertiserId",
        "engineAccountId",
        "campaignId",
        "adGroupId",
        "adId",
        "criterionId",
        "customerId",
        "dsConversionId",
        "floodlightOrderId",
        "channel",
        "deviceType",
        "adUserDataConsent",
        "attributionModel",
        "conversionModifiedTimestamp",
        "customDimension",
        "customMetric",
        "inventoryAccountId",
        "productCountry",
        "productGroupId",
        "productId",
        "productLanguage",
        "storeId",
    ];

    /// A conversion with the fields every insert needs: its id, its time and
    /// the segmentation type `FLOODLIGHT`.
    pub fn new(conversion_id: impl Into<String>, timestamp: DateTime<Utc>) -> Self {
        Self {
            conversion_id: Some(conversion_id.into()),
            conversion_timestamp: Some(timestamp),
            segmentation_type: Some(SegmentationType::Floodlight),
            ..Self::default()
        }
    }
}

/// A custom dimension of a conversion.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CustomDimension {
    /// The dimension's name (as configured for the advertiser).
    pub name: String,
    /// The value.
    pub value: String,
}

/// A custom metric of a conversion.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct CustomMetric {
    /// The metric's name (as configured for the advertiser).
    pub name: String,
    /// The value.
    pub value: f64,
}

/// The availability of a Floodlight activity: all its conversions up to
/// `availability_timestamp` have been uploaded.
///
/// ```
/// use chrono::DateTime;
/// use sa360_video_sdk::search_ads::{AdvertiserId, AgencyId, Availability, SegmentationId};
/// let until = DateTime::from_timestamp_millis(1_704_103_200_000).unwrap();
/// let a = Availability {
///     segmentation_id: Some(SegmentationId::new(551234)),
///     ..Availability::new(AgencyId::new(1), AdvertiserId::new(2), until)
/// };
/// assert_eq!(a.segmentation_type.as_str(), "FLOODLIGHT");
/// ```
///
/// Like [`Conversion`], it (de)serializes as the API's resource: field names
/// [`Availability::FIELDS`], ids and `availabilityTimestamp` (epoch
/// milliseconds) as strings of digits, numbers accepted on input.
///
/// ```
/// # use chrono::DateTime;
/// # use sa360_video_sdk::search_ads::{AdvertiserId, AgencyId, Availability};
/// # let until = DateTime::from_timestamp_millis(1_704_103_200_000).unwrap();
/// let a = Availability::new(AgencyId::new(1), AdvertiserId::new(2), until);
/// let json = serde_json::to_value(&a)?;
/// assert_eq!(json["availabilityTimestamp"], "1704103200000");
/// assert_eq!(serde_json::from_value::<Availability>(json)?, a);
/// # Ok::<(), serde_json::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Availability {
    /// The agency.
    pub agency_id: AgencyId,
    /// The advertiser.
    pub advertiser_id: AdvertiserId,
    /// Everything up to this time has been uploaded.
    pub availability_timestamp: DateTime<Utc>,
    /// The segmentation type, `FLOODLIGHT` by default.
    pub segmentation_type: SegmentationType,
    /// The Floodlight activity id.
    pub segmentation_id: Option<SegmentationId>,
    /// The Floodlight activity name.
    pub segmentation_name: Option<String>,
    /// The customer of the new Search Ads 360 experience.
    pub customer_id: Option<CustomerId>,
}

impl Availability {
    /// The field names of the JSON form (the API's Availability resource).
    pub const FIELDS: [&'static str; 7] = [
        "agencyId",
        "advertiserId",
        "availabilityTimestamp",
        "segmentationType",
        "segmentationId",
        "segmentationName",
        "customerId",
    ];

    /// An availability of a Floodlight activity (`FLOODLIGHT`); set
    /// `segmentation_id` or `segmentation_name` to name the activity.
    pub fn new(
        agency_id: AgencyId,
        advertiser_id: AdvertiserId,
        availability_timestamp: DateTime<Utc>,
    ) -> Self {
        Self {
            agency_id,
            advertiser_id,
            availability_timestamp,
            segmentation_type: SegmentationType::Floodlight,
            segmentation_id: None,
            segmentation_name: None,
            customer_id: None,
        }
    }
}

/// A saved column of an advertiser.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SavedColumn {
    /// The column's name.
    pub name: String,
    /// The type of data it produces (`double`, `integer`, `string`, ...), when given.
    pub column_type: Option<String>,
}

/// A borrowed conversion is cloned, so [`SearchAdsClient::insert`](super::SearchAdsClient::insert)
/// takes `&[Conversion]`, `&Vec<Conversion>` and owned conversions alike.
impl From<&Conversion> for Conversion {
    fn from(c: &Conversion) -> Self {
        c.clone()
    }
}

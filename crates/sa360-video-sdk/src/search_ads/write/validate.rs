//! The checks of one input conversion before it is sent (SA-7, SA-20,
//! SA-22): required members, closed value sets, an owner, no control
//! characters, no over-long ids or texts.

use super::super::conversion::Conversion;
use super::super::error::Error;
use super::kind::WriteKind;

/// Longest `conversionId`, `floodlightOrderId`, `clickId`, `productId` and
/// `storeId` the SDK sends, in characters (SA-22).
pub const MAX_ID_CHARS: usize = 256;

/// Longest other text member (`segmentationName`, `attributionModel`,
/// `productCountry`, `productLanguage`, custom dimension names and values,
/// custom metric names) the SDK sends, in characters (SA-22).
pub const MAX_TEXT_CHARS: usize = 1024;

/// The first problem of conversion `index` that an insert or update refuses
/// before sending, as [`Error::Validation`] naming the field and the index.
/// Duplicates are the [`DuplicateDetector`](super::dedup::DuplicateDetector)'s job.
pub(crate) fn check(kind: WriteKind, index: usize, c: &Conversion) -> Result<(), Error> {
    let verb = kind.verb();
    let problem = |field: &str, reason: String| Err(Error::validation(field, Some(index), reason));
    match c.conversion_id.as_deref().map(str::trim) {
        Some(id) if !id.is_empty() => {}
        _ => {
            return problem(
                "conversionId",
                format!("is required for {verb}: set Conversion::conversion_id"),
            );
        }
    }
    match c.conversion_timestamp {
        None => {
            return problem(
                "conversionTimestamp",
                format!("is required for {verb}: set Conversion::conversion_timestamp"),
            );
        }
        Some(t) if t.timestamp_millis() < 0 => {
            return problem(
                "conversionTimestamp",
                format!("is {t}, before 1970-01-01: the API takes epoch milliseconds >= 0"),
            );
        }
        Some(_) => {}
    }
    if kind == WriteKind::Insert && c.segmentation_type.is_none() {
        return problem(
            "segmentationType",
            "is required for insert: set Conversion::segmentation_type (FLOODLIGHT)".to_owned(),
        );
    }
    if let Some((field, reason)) = text_problem(c) {
        return problem(field, reason);
    }
    if let Some((field, reason)) = request_shape_problem(c) {
        return problem(field, reason);
    }
    Ok(())
}

/// Every text member with its bound.
fn texts(c: &Conversion) -> impl Iterator<Item = (&'static str, &str, usize)> {
    fn one<'c>(
        field: &'static str,
        value: &'c Option<String>,
        max: usize,
    ) -> Option<(&'static str, &'c str, usize)> {
        value.as_deref().map(|v| (field, v, max))
    }
    [
        one("conversionId", &c.conversion_id, MAX_ID_CHARS),
        one("floodlightOrderId", &c.floodlight_order_id, MAX_ID_CHARS),
        one("clickId", &c.click_id, MAX_ID_CHARS),
        one("productId", &c.product_id, MAX_ID_CHARS),
        one("storeId", &c.store_id, MAX_ID_CHARS),
        one("segmentationName", &c.segmentation_name, MAX_TEXT_CHARS),
        one("attributionModel", &c.attribution_model, MAX_TEXT_CHARS),
        one("productCountry", &c.product_country, MAX_TEXT_CHARS),
        one("productLanguage", &c.product_language, MAX_TEXT_CHARS),
        one("currencyCode", &c.currency_code, MAX_TEXT_CHARS),
    ]
    .into_iter()
    .flatten()
    .chain(c.custom_dimensions.iter().flat_map(|d| {
        [
            ("customDimension.name", d.name.as_str(), MAX_TEXT_CHARS),
            ("customDimension.value", d.value.as_str(), MAX_TEXT_CHARS),
        ]
    }))
    .chain(
        c.custom_metrics
            .iter()
            .map(|m| ("customMetric.name", m.name.as_str(), MAX_TEXT_CHARS)),
    )
}

/// A control character (C0 `U+0000..=U+001F`, `U+007F`, C1 `U+0080..=U+009F`)
/// or a text longer than its bound (SA-22). The length is counted only up to
/// one past the bound, so a 1 MB id costs no more than a short one.
fn text_problem(c: &Conversion) -> Option<(&'static str, String)> {
    for (field, value, max) in texts(c) {
        if let Some((at, ch)) = value.chars().enumerate().find(|(_, ch)| ch.is_control()) {
            return Some((
                field,
                format!(
                    "holds the control character U+{:04X} at character {}: the service takes \
                     printable text only; remove it",
                    u32::from(ch),
                    at + 1
                ),
            ));
        }
        if value.chars().take(max + 1).count() > max {
            return Some((
                field,
                format!(
                    "is longer than {max} characters ({} bytes): the SDK sends at most {max} \
                     (SA-22)",
                    value.len()
                ),
            ));
        }
    }
    None
}

/// What the insert and update request schemas refuse besides the required
/// members (SA-20): a value outside a closed set, a malformed currency code, no
/// owner (an agency and advertiser, a customer, or a click, SA-17).
fn request_shape_problem(c: &Conversion) -> Option<(&'static str, String)> {
    use crate::search_ads::values::{
        Channel, Consent, ConversionState, ConversionType, SegmentationType,
    };
    let closed = |field: &'static str, value: &str, allowed: &str| {
        (
            field,
            format!("is {value:?}: the service takes only {allowed}"),
        )
    };
    if let Some(SegmentationType::Other(v)) = &c.segmentation_type {
        return Some(closed("segmentationType", v, "FLOODLIGHT"));
    }
    if let Some(ConversionType::Other(v)) = &c.conversion_type {
        return Some(closed("type", v, "ACTION or TRANSACTION"));
    }
    if let Some(ConversionState::Other(v)) = &c.state {
        return Some(closed("state", v, "ACTIVE, REMOVED or DELETED"));
    }
    if let Some(Channel::Other(v)) = &c.channel {
        return Some(closed("channel", v, "local or online"));
    }
    if let Some(Consent::Other(v)) = &c.ad_user_data_consent {
        return Some(closed("adUserDataConsent", v, "UNKNOWN, GRANTED or DENIED"));
    }
    if let Some(code) = &c.currency_code
        && !(code.len() == 3 && code.bytes().all(|b| b.is_ascii_uppercase()))
    {
        return Some((
            "currencyCode",
            format!("is {code:?}: give an ISO 4217 code of three upper-case letters, e.g. USD"),
        ));
    }
    let owned = (c.agency_id.is_some() && c.advertiser_id.is_some())
        || c.customer_id.is_some()
        || c.click_id.is_some();
    if !owned {
        let field = if c.advertiser_id.is_some() {
            "agencyId"
        } else {
            "advertiserId"
        };
        return Some((
            field,
            "names no owner: set Conversion::agency_id and advertiser_id, customer_id, or \
             click_id (the service attributes a click-ID-only conversion from its click)"
                .to_owned(),
        ));
    }
    None
}

#[cfg(test)]
mod tests {
    use chrono::DateTime;

    use super::*;
    use crate::search_ads::conversion::CustomDimension;

    fn clicked(id: &str) -> Conversion {
        let mut c = Conversion::new(id, DateTime::from_timestamp_millis(1_000).unwrap());
        c.click_id = Some("gclid-1".into());
        c
    }

    fn field_of(kind: WriteKind, c: &Conversion) -> String {
        match check(kind, 4, c) {
            Err(Error::Validation { field, index, .. }) => {
                assert_eq!(index, Some(4));
                field
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn required_members() {
        assert!(check(WriteKind::Insert, 0, &clicked("a")).is_ok());
        let mut c = clicked("a");
        c.segmentation_type = None;
        assert_eq!(field_of(WriteKind::Insert, &c), "segmentationType");
        assert!(check(WriteKind::Update, 0, &c).is_ok());
        assert_eq!(field_of(WriteKind::Insert, &clicked(" ")), "conversionId");
        let mut c = clicked("a");
        c.conversion_timestamp = DateTime::from_timestamp_millis(-1);
        assert_eq!(field_of(WriteKind::Insert, &c), "conversionTimestamp");
        c.conversion_timestamp = None;
        assert_eq!(field_of(WriteKind::Update, &c), "conversionTimestamp");
    }

    #[test]
    fn the_request_schemas_closed_sets_and_owner() {
        use crate::search_ads::values::{ConversionState, ConversionType};
        let t = DateTime::from_timestamp_millis(1_000).unwrap();
        let mut c = clicked("a");
        c.conversion_type = Some(ConversionType::Other("SALE".into()));
        assert_eq!(field_of(WriteKind::Insert, &c), "type");
        let mut c = clicked("a");
        c.state = Some(ConversionState::Other("GONE".into()));
        assert_eq!(field_of(WriteKind::Insert, &c), "state");
        let mut c = clicked("a");
        c.currency_code = Some("usd".into());
        assert_eq!(field_of(WriteKind::Insert, &c), "currencyCode");
        assert_eq!(
            field_of(WriteKind::Insert, &Conversion::new("a", t)),
            "advertiserId"
        );
        let mut c = Conversion::new("a", t);
        c.advertiser_id = Some("5".parse().unwrap());
        assert_eq!(field_of(WriteKind::Insert, &c), "agencyId");
        c.agency_id = Some("7".parse().unwrap());
        assert!(check(WriteKind::Insert, 0, &c).is_ok());
        let mut c = Conversion::new("a", t);
        c.customer_id = Some("2000012350".parse().unwrap());
        assert!(check(WriteKind::Update, 0, &c).is_ok());
    }

    #[test]
    fn control_characters_are_refused_in_every_text() {
        for ch in ['\0', '\u{1b}', '\t', '\n', '\u{7f}', '\u{85}', '\u{9f}'] {
            let e = check(WriteKind::Insert, 2, &clicked(&format!("o{ch}1"))).unwrap_err();
            assert!(
                e.to_string().contains(&format!("U+{:04X}", u32::from(ch))),
                "{e}"
            );
            let mut c = clicked("o-1");
            c.custom_dimensions = vec![CustomDimension {
                name: "Channel".into(),
                value: format!("web{ch}"),
            }];
            assert_eq!(field_of(WriteKind::Insert, &c), "customDimension.value");
            let mut c = clicked("o-1");
            c.floodlight_order_id = Some(format!("{ch}"));
            assert_eq!(field_of(WriteKind::Update, &c), "floodlightOrderId");
        }
        // Printable non-ASCII text passes.
        assert!(check(WriteKind::Insert, 0, &clicked("commande-é-東京")).is_ok());
    }

    #[test]
    fn over_long_ids_are_refused() {
        let at_bound = "é".repeat(MAX_ID_CHARS);
        assert!(check(WriteKind::Insert, 0, &clicked(&at_bound)).is_ok());
        let e = check(WriteKind::Insert, 9, &clicked(&"x".repeat(1 << 20))).unwrap_err();
        assert!(
            matches!(&e, Error::Validation { field, index: Some(9), .. } if field == "conversionId"),
            "{e:?}"
        );
        assert!(e.to_string().contains("1048576 bytes"), "{e}");
        let mut c = clicked("a");
        c.click_id = Some("g".repeat(MAX_ID_CHARS + 1));
        assert_eq!(field_of(WriteKind::Insert, &c), "clickId");
        let mut c = clicked("a");
        c.segmentation_name = Some("n".repeat(MAX_TEXT_CHARS + 1));
        assert_eq!(field_of(WriteKind::Insert, &c), "segmentationName");
        c.segmentation_name = Some("n".repeat(MAX_TEXT_CHARS));
        assert!(check(WriteKind::Insert, 0, &c).is_ok());
    }
}

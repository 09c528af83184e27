//! The generated search-ads types carry `{type: string, format: int64}`
//! values as `I64String`: strings on the wire, numbers tolerated on input.

use sa360_v2_client::I64String;
use sa360_v2_client::types::{Conversion, ConversionList};
use serde_json::json;

fn conversion_list() -> serde_json::Value {
    json!({
        "kind": "doubleclicksearch#conversionList",
        "conversion": [{
            "agencyId": "20700000000000000",
            "advertiserId": "21700000000000000",
            "engineAccountId": "700000000000000",
            "campaignId": "71700000000000000",
            "adGroupId": "58700000000000000",
            "criterionId": "43700000000000000",
            "conversionId": "order-1",
            "conversionTimestamp": "1700000000000",
            "segmentationType": "FLOODLIGHT",
            "segmentationId": "9223372036854775807",
            "quantityMillis": "-1000",
            "revenueMicros": "10000000",
            "dsConversionId": "1",
            "customMetric": [{"name": "m", "value": 1.5}],
            "type": "TRANSACTION"
        }]
    })
}

#[test]
fn conversion_list_round_trips_with_int64_strings() {
    let input = conversion_list();
    let parsed: ConversionList = serde_json::from_value(input.clone()).unwrap();
    let conversion = &parsed.conversion[0];
    assert_eq!(
        conversion.agency_id,
        Some(I64String(20_700_000_000_000_000))
    );
    assert_eq!(conversion.segmentation_id, Some(I64String(i64::MAX)));
    assert_eq!(conversion.quantity_millis, Some(I64String(-1000)));
    // `revenueMicros` and `conversionTimestamp` are formatless strings (SA-5).
    assert_eq!(conversion.revenue_micros.as_deref(), Some("10000000"));
    assert_eq!(serde_json::to_value(&parsed).unwrap(), input);
}

#[test]
fn numbers_in_int64_fields_are_accepted_and_sent_back_as_strings() {
    let parsed: Conversion =
        serde_json::from_value(json!({"agencyId": 12345, "advertiserId": "6"})).unwrap();
    assert_eq!(parsed.agency_id, Some(I64String(12345)));
    assert_eq!(
        serde_json::to_value(&parsed).unwrap(),
        json!({"agencyId": "12345", "advertiserId": "6"})
    );
}

#[test]
fn malformed_int64_strings_are_rejected() {
    for bad in [
        json!("12x"),
        json!("1.5"),
        json!(1.5),
        json!("99999999999999999999"),
    ] {
        let result = serde_json::from_value::<Conversion>(json!({ "agencyId": bad }));
        assert!(result.is_err(), "{bad} accepted");
    }
}

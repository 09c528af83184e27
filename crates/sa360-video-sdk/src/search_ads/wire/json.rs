//! The JSON form of [`Conversion`] and [`Availability`]: the wire shape,
//! every member name checked, `null` taken for absent and the formatless
//! integers accepted as numbers (SA-5).

use serde::de::{DeserializeOwned, Error as _};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};

use sa360_v2_client::types;

use super::conversion::{
    availability_from_wire, availability_to_wire, conversion_from_wire, conversion_to_wire,
};
use crate::search_ads::conversion::{Availability, Conversion};

/// Fields the API carries as strings of digits without an int64 format
/// (SA-5); their JSON form accepts a number too, like the int64 fields.
const FORMATLESS_INTEGERS: [&str; 2] = ["conversionTimestamp", "revenueMicros"];

/// `Serialize` and `Deserialize` for a resource whose JSON form is its wire
/// shape: written through `$to_wire`; read through [`checked_object`] (every
/// member named in `$ty::FIELDS`), the wire type `$wire` and `$from_wire`.
macro_rules! json_form_is_the_wire_shape {
    ($(#[$doc:meta])* $ty:ident, $what:literal, $wire:ty, $to_wire:path, $from_wire:path) => {
        $(#[$doc])*
        impl Serialize for $ty {
            fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                $to_wire(self).serialize(serializer)
            }
        }

        impl<'de> Deserialize<'de> for $ty {
            fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                let value = Value::deserialize(deserializer)?;
                let object = checked_object(value, $what, stringify!($ty), &$ty::FIELDS)
                    .map_err(D::Error::custom)?;
                let wire: $wire = wire_from_object(object).map_err(D::Error::custom)?;
                $from_wire(wire).map_err(D::Error::custom)
            }
        }
    };
}

json_form_is_the_wire_shape!(
    /// The JSON form of a conversion is the wire shape (see [`Conversion`]).
    Conversion,
    "conversion",
    types::Conversion,
    conversion_to_wire,
    conversion_from_wire
);

json_form_is_the_wire_shape!(
    /// The JSON form of an availability is the wire shape (see [`Availability`]).
    Availability,
    "availability",
    types::Availability,
    availability_to_wire,
    availability_from_wire
);

/// The members of a JSON object, every name one of `fields`; `null` members
/// are dropped and the formatless integers taken as digits.
fn checked_object(
    value: Value,
    what: &str,
    resource: &str,
    fields: &[&str],
) -> Result<Map<String, Value>, String> {
    let Value::Object(members) = value else {
        return Err(format!(
            "a {what} must be a JSON object, not {}",
            shown(&value)
        ));
    };
    let mut object = Map::new();
    for (name, value) in members {
        if !fields.contains(&name.as_str()) {
            return Err(format!(
                "unknown field {name:?}: not a field of the {resource} resource"
            ));
        }
        let value = match value {
            Value::Null => continue,
            Value::Number(n)
                if FORMATLESS_INTEGERS.contains(&name.as_str()) && (n.is_i64() || n.is_u64()) =>
            {
                Value::String(n.to_string())
            }
            other => other,
        };
        object.insert(name, value);
    }
    Ok(object)
}

/// Reads a wire type from an object; a value of the wrong shape is named by
/// its field.
fn wire_from_object<T: DeserializeOwned>(object: Map<String, Value>) -> Result<T, String> {
    let value = Value::Object(object);
    let error = match T::deserialize(&value) {
        Ok(wire) => return Ok(wire),
        Err(e) => e,
    };
    // Find the member at fault: the wire types have no required member, so
    // each member can be read on its own.
    if let Value::Object(object) = &value {
        for (name, member) in object {
            let single = Value::Object(Map::from_iter([(name.clone(), member.clone())]));
            if let Err(e) = T::deserialize(&single) {
                return Err(format!("{name} {} is not valid ({e})", shown(member)));
            }
        }
    }
    Err(error.to_string())
}

/// A JSON value for a message, cut short.
fn shown(value: &Value) -> String {
    let text = value.to_string();
    if text.chars().count() <= 60 {
        text
    } else {
        let cut: String = text.chars().take(60).collect();
        format!("{cut}…")
    }
}

#[cfg(test)]
mod tests {
    use chrono::DateTime;

    use super::*;
    use crate::search_ads::values::*;
    use crate::search_ads::wire::conversion::tests::full;

    /// The member names of `json` are `fields`, each once.
    fn assert_names_each_field_once(json: &serde_json::Value, fields: &[&str], message: &str) {
        let mut names: Vec<&str> = json
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        let mut fields = fields.to_vec();
        names.sort_unstable();
        fields.sort_unstable();
        assert_eq!(names, fields, "{message}");
    }

    #[test]
    fn the_json_form_is_the_wire_shape_with_every_field_named() {
        let c = full();
        let json = serde_json::to_value(&c).unwrap();
        assert_eq!(json, serde_json::to_value(conversion_to_wire(&c)).unwrap());
        assert_names_each_field_once(
            &json,
            &Conversion::FIELDS,
            "Conversion::FIELDS names every wire field once",
        );
        assert_eq!(serde_json::from_value::<Conversion>(json).unwrap(), c);

        let a = Availability {
            segmentation_id: Some(SegmentationId::new(1)),
            segmentation_name: Some("n".into()),
            customer_id: Some(CustomerId::new("3").unwrap()),
            ..Availability::new(
                AgencyId::new(1),
                AdvertiserId::new(2),
                DateTime::from_timestamp_millis(5).unwrap(),
            )
        };
        let json = serde_json::to_value(&a).unwrap();
        assert_names_each_field_once(
            &json,
            &Availability::FIELDS,
            "Availability::FIELDS names every wire field once",
        );
        assert_eq!(serde_json::from_value::<Availability>(json).unwrap(), a);
    }

    #[test]
    fn json_input_takes_numbers_for_digits_and_null_for_absent() {
        let c: Conversion = serde_json::from_value(serde_json::json!({
            "conversionId": "n-1",
            "conversionTimestamp": 1_704_103_200_123_i64,
            "revenueMicros": 19_990_000,
            "agencyId": 12,
            "quantityMillis": 2000,
            "clickId": null,
            "customDimension": null,
        }))
        .unwrap();
        assert_eq!(
            c.conversion_timestamp,
            DateTime::from_timestamp_millis(1_704_103_200_123)
        );
        assert_eq!(c.revenue_micros, Some(Micros::new(19_990_000)));
        assert_eq!(c.agency_id, Some(AgencyId::new(12)));
        assert_eq!(c.quantity_millis, Some(2000));
        assert_eq!(c.click_id, None);
        assert!(c.custom_dimensions.is_empty());
    }

    #[test]
    fn json_input_errors_name_the_field() {
        let error = |json: serde_json::Value| {
            serde_json::from_value::<Conversion>(json)
                .unwrap_err()
                .to_string()
        };
        let e = error(serde_json::json!({"conversionId": "x", "segmentationId": "12x"}));
        assert!(
            e.starts_with("segmentationId \"12x\" is not valid ("),
            "{e}"
        );
        let e = error(serde_json::json!({"conversionId": true}));
        assert!(e.starts_with("conversionId true is not valid ("), "{e}");
        let e = error(serde_json::json!({"revenueMicros": 1.5}));
        assert!(e.starts_with("revenueMicros 1.5 is not valid ("), "{e}");
        let e = error(serde_json::json!({"revenueMicros": "12.50"}));
        assert_eq!(e, "revenueMicros \"12.50\" is not a whole number of micros");
        let e = error(serde_json::json!({"conversionTimestamp": "yesterday"}));
        assert_eq!(
            e,
            "conversionTimestamp \"yesterday\" is not epoch milliseconds"
        );
        let e = error(serde_json::json!({"customMetric": [{"name": "m", "value": "x"}]}));
        assert!(e.starts_with("customMetric [{"), "{e}");
        let e = error(serde_json::json!({"colour": "red"}));
        assert_eq!(
            e,
            "unknown field \"colour\": not a field of the Conversion resource"
        );
        let e = error(serde_json::json!([1]));
        assert_eq!(e, "a conversion must be a JSON object, not [1]");
        let e = serde_json::from_value::<Availability>(serde_json::json!({"agencyId": "1"}))
            .unwrap_err()
            .to_string();
        assert_eq!(e, "availabilityTimestamp is missing");
    }
}

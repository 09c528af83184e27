//! A conversion or an availability as the search ads fake holds it: the fields of the discovery
//! document's `Conversion` and `Availability` with their JSON types, and [`Record`], one item's
//! present fields as the JSON object it is answered as (members in name order, int64 values as
//! strings of their canonical digits).

use serde::Serialize;
use serde_json::{Map, Value};

/// The JSON type a field of an item must have.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    /// `string`/`int64`: a JSON string of digits or a JSON integer; answered as a string.
    Int64,
    /// A non-negative integer carried as a string (`conversionTimestamp`).
    UnsignedDigits,
    /// A string.
    Str,
    /// `customDimension`.
    Dimensions,
    /// `customMetric`.
    Metrics,
}

/// The fields of `Conversion`, sorted by name.
pub(crate) const CONVERSION_FIELDS: &[(&str, Kind)] = &[
    ("adGroupId", Kind::Int64),
    ("adId", Kind::Int64),
    ("adUserDataConsent", Kind::Str),
    ("advertiserId", Kind::Int64),
    ("agencyId", Kind::Int64),
    ("attributionModel", Kind::Str),
    ("campaignId", Kind::Int64),
    ("channel", Kind::Str),
    ("clickId", Kind::Str),
    ("conversionId", Kind::Str),
    ("conversionModifiedTimestamp", Kind::Int64),
    ("conversionTimestamp", Kind::UnsignedDigits),
    ("countMillis", Kind::Int64),
    ("criterionId", Kind::Int64),
    ("currencyCode", Kind::Str),
    ("customDimension", Kind::Dimensions),
    ("customMetric", Kind::Metrics),
    ("customerId", Kind::Str),
    ("deviceType", Kind::Str),
    ("dsConversionId", Kind::Int64),
    ("engineAccountId", Kind::Int64),
    ("floodlightOrderId", Kind::Str),
    ("inventoryAccountId", Kind::Int64),
    ("productCountry", Kind::Str),
    ("productGroupId", Kind::Int64),
    ("productId", Kind::Str),
    ("productLanguage", Kind::Str),
    ("quantityMillis", Kind::Int64),
    ("revenueMicros", Kind::Int64),
    ("segmentationId", Kind::Int64),
    ("segmentationName", Kind::Str),
    ("segmentationType", Kind::Str),
    ("state", Kind::Str),
    ("storeId", Kind::Str),
    ("type", Kind::Str),
];

/// The fields of `Availability`, sorted by name.
pub(crate) const AVAILABILITY_FIELDS: &[(&str, Kind)] = &[
    ("advertiserId", Kind::Int64),
    ("agencyId", Kind::Int64),
    ("availabilityTimestamp", Kind::Int64),
    ("customerId", Kind::Str),
    ("segmentationId", Kind::Int64),
    ("segmentationName", Kind::Str),
    ("segmentationType", Kind::Str),
];

/// Which object a record is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Schema {
    /// `Conversion`.
    Conversion,
    /// `Availability`.
    Availability,
}

impl Schema {
    /// The object's fields, sorted by name.
    pub(crate) fn fields(self) -> &'static [(&'static str, Kind)] {
        match self {
            Self::Conversion => CONVERSION_FIELDS,
            Self::Availability => AVAILABILITY_FIELDS,
        }
    }

    /// The JSON type of field `name`, `None` when it is not one.
    pub(crate) fn kind(self, name: &str) -> Option<Kind> {
        let fields = self.fields();
        let i = fields.binary_search_by(|(n, _)| (*n).cmp(name)).ok()?;
        Some(fields[i].1)
    }
}

/// The present fields of one item, checked for their JSON types (`parse`), as answered.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(transparent)]
pub(crate) struct Record(pub(super) Map<String, Value>);

impl Record {
    /// The value of field `name`.
    pub(crate) fn get(&self, name: &str) -> Option<&Value> {
        self.0.get(name)
    }

    /// Whether field `name` is present.
    pub(crate) fn contains(&self, name: &str) -> bool {
        self.0.contains_key(name)
    }

    /// A string or int64 field as the text it is answered with.
    pub(crate) fn str(&self, name: &str) -> Option<&str> {
        self.get(name).and_then(Value::as_str)
    }

    /// An int64 field.
    pub(crate) fn int(&self, name: &str) -> Option<i64> {
        self.str(name)?.parse().ok()
    }

    /// A list field (`customDimension`, `customMetric`).
    pub(crate) fn list(&self, name: &str) -> Option<&[Value]> {
        self.get(name).and_then(Value::as_array).map(Vec::as_slice)
    }

    /// Sets field `name`.
    pub(crate) fn set(&mut self, name: &str, value: Value) {
        self.0.insert(name.to_owned(), value);
    }

    /// Sets int64 field `name`, as the string of its digits.
    pub(crate) fn set_int(&mut self, name: &str, value: i64) {
        self.set(name, Value::String(value.to_string()));
    }

    /// The record as the JSON object it is answered as.
    pub(crate) fn to_value(&self) -> Value {
        Value::Object(self.0.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::{AVAILABILITY_FIELDS, CONVERSION_FIELDS, Kind, Schema};

    #[test]
    fn the_field_lists_are_sorted_and_every_name_is_found() {
        for schema in [Schema::Conversion, Schema::Availability] {
            let fields = schema.fields();
            assert!(fields.windows(2).all(|w| w[0].0 < w[1].0));
            for (name, kind) in fields {
                assert_eq!(schema.kind(name), Some(*kind), "{name}");
                assert_eq!(schema.kind(&name.to_uppercase()), None, "{name}");
            }
            for other in ["", "x", "adid", "availabilityTimestamps", "conversion"] {
                assert_eq!(schema.kind(other), None, "{other}");
            }
        }
        assert_eq!(CONVERSION_FIELDS.len(), 35);
        assert_eq!(AVAILABILITY_FIELDS.len(), 7);
        assert_eq!(Schema::Conversion.kind("customMetric"), Some(Kind::Metrics));
        assert_eq!(Schema::Availability.kind("conversionId"), None);
    }
}

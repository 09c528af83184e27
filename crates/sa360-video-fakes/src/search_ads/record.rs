//! A conversion or an availability as the search ads fake holds it: the fields of the discovery
//! document's `Conversion` and `Availability` with their JSON types, and [`Record`], the present
//! fields of one item in name order.
//!
//! A record keeps int64 values as numbers and strings of up to 22 bytes inline, and serializes
//! exactly as the JSON object it stands for: members in name order, int64 values as strings of
//! their canonical digits. The store keeps each conversion [`Packed`] into one allocation of
//! about 150 bytes (a `serde_json::Value` tree of the same object took about 1.7 KB), so ten
//! million stored conversions take a few GiB, not sixteen.

use std::borrow::Cow;
use std::sync::LazyLock;

use serde::ser::{Serialize, SerializeMap, Serializer};
use serde_json::Value;

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

    /// The number of field `name` in [`fields`](Self::fields), `None` when it is not one.
    ///
    /// Every member of a body and every field a check reads is looked up here, dozens of times
    /// an item: the names are grouped by length, so a lookup compares `name` with the one to five
    /// names of its length rather than ordering it against six names of a binary search.
    pub(crate) fn field(self, name: &str) -> Option<u8> {
        let by_length: &[Vec<u8>] = match self {
            Self::Conversion => &CONVERSION_BY_LENGTH,
            Self::Availability => &AVAILABILITY_BY_LENGTH,
        };
        let fields = self.fields();
        by_length
            .get(name.len())?
            .iter()
            .copied()
            .find(|&i| fields[usize::from(i)].0 == name)
    }

    /// The name and kind of field number `field`.
    fn entry(self, field: u8) -> (&'static str, Kind) {
        self.fields()
            .get(usize::from(field))
            .copied()
            .unwrap_or(("", Kind::Str))
    }
}

/// The numbers of `fields` by the length of their names.
fn by_length(fields: &[(&str, Kind)]) -> Vec<Vec<u8>> {
    let mut by_length = Vec::new();
    for (i, (name, _)) in fields.iter().enumerate() {
        if by_length.len() <= name.len() {
            by_length.resize_with(name.len() + 1, Vec::new);
        }
        by_length[name.len()].extend(u8::try_from(i).ok());
    }
    by_length
}

static CONVERSION_BY_LENGTH: LazyLock<Vec<Vec<u8>>> =
    LazyLock::new(|| by_length(CONVERSION_FIELDS));

static AVAILABILITY_BY_LENGTH: LazyLock<Vec<Vec<u8>>> =
    LazyLock::new(|| by_length(AVAILABILITY_FIELDS));

/// The longest string a [`Val`] holds without an allocation of its own.
const INLINE: usize = 22;

/// One field's value.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Val {
    /// An int64 field, answered as the string of its digits.
    Int(i64),
    /// A string of up to [`INLINE`] bytes.
    Short { len: u8, bytes: [u8; INLINE] },
    /// A longer string.
    Long(Box<str>),
    /// `customDimension` or `customMetric`: the list as answered.
    Json(Box<Value>),
}

impl Val {
    /// A string value.
    pub(crate) fn text(s: &str) -> Self {
        match u8::try_from(s.len()) {
            Ok(len) if s.len() <= INLINE => {
                let mut bytes = [0; INLINE];
                bytes[..s.len()].copy_from_slice(s.as_bytes());
                Self::Short { len, bytes }
            }
            _ => Self::Long(s.into()),
        }
    }

    /// The string, when this is one.
    pub(crate) fn as_str(&self) -> Option<&str> {
        match self {
            // Built from a `&str` by `text`, so always UTF-8.
            Self::Short { len, bytes } => std::str::from_utf8(&bytes[..usize::from(*len)]).ok(),
            Self::Long(s) => Some(s),
            Self::Int(_) | Self::Json(_) => None,
        }
    }
}

impl Serialize for Val {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::Int(n) => serializer.collect_str(n),
            Self::Json(v) => v.serialize(serializer),
            Self::Short { .. } | Self::Long(_) => {
                serializer.serialize_str(self.as_str().unwrap_or_default())
            }
        }
    }
}

/// The present fields of one item, in name order, each at most once.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Record {
    schema: Schema,
    fields: Vec<(u8, Val)>,
}

impl Record {
    /// A record from fields in any order; of a field given twice the last one counts.
    pub(crate) fn from_fields(schema: Schema, mut fields: Vec<(u8, Val)>) -> Self {
        fields.sort_by_key(|(field, _)| *field);
        // After a stable sort the last of equal fields is the one given last: keep it.
        let mut kept: Vec<(u8, Val)> = Vec::with_capacity(fields.len() + 2);
        for (field, val) in fields {
            match kept.last_mut() {
                Some(last) if last.0 == field => last.1 = val,
                _ => kept.push((field, val)),
            }
        }
        Self {
            schema,
            fields: kept,
        }
    }

    fn position(&self, name: &str) -> Result<usize, Option<(u8, usize)>> {
        let Some(field) = self.schema.field(name) else {
            return Err(None);
        };
        self.fields
            .binary_search_by_key(&field, |(f, _)| *f)
            .map_err(|at| Some((field, at)))
    }

    /// The value of field `name`.
    pub(crate) fn get(&self, name: &str) -> Option<&Val> {
        self.position(name).ok().map(|i| &self.fields[i].1)
    }

    /// Whether field `name` is present.
    pub(crate) fn contains(&self, name: &str) -> bool {
        self.position(name).is_ok()
    }

    /// A string field.
    pub(crate) fn str(&self, name: &str) -> Option<&str> {
        self.get(name).and_then(Val::as_str)
    }

    /// An int64 field.
    pub(crate) fn int(&self, name: &str) -> Option<i64> {
        match self.get(name)? {
            Val::Int(n) => Some(*n),
            _ => None,
        }
    }

    /// A string or int64 field as the text it is answered with.
    pub(crate) fn text(&self, name: &str) -> Option<Cow<'_, str>> {
        match self.get(name)? {
            Val::Int(n) => Some(Cow::Owned(n.to_string())),
            other => other.as_str().map(Cow::Borrowed),
        }
    }

    /// A list field (`customDimension`, `customMetric`).
    pub(crate) fn list(&self, name: &str) -> Option<&[Value]> {
        match self.get(name)? {
            Val::Json(v) => v.as_array().map(Vec::as_slice),
            _ => None,
        }
    }

    /// Sets field `name` (a name of this record's schema; any other is ignored).
    pub(crate) fn set(&mut self, name: &str, val: Val) {
        match self.position(name) {
            Ok(i) => self.fields[i].1 = val,
            Err(Some((field, at))) => self.fields.insert(at, (field, val)),
            Err(None) => debug_assert!(false, "{name} is not a field of {:?}", self.schema),
        }
    }

    /// Sets field `name` unless it is present.
    pub(crate) fn set_if_absent(&mut self, name: &str, val: impl FnOnce() -> Val) {
        if !self.contains(name) {
            self.set(name, val());
        }
    }

    /// The record packed into one allocation, as the store keeps it.
    pub(crate) fn pack(&self) -> Packed {
        let mut bytes = Vec::with_capacity(self.fields.len() * 12);
        for (field, val) in &self.fields {
            bytes.push(*field);
            match val {
                Val::Int(n) => {
                    bytes.push(TAG_INT);
                    bytes.extend_from_slice(&n.to_le_bytes());
                }
                Val::Json(v) => {
                    bytes.push(TAG_JSON);
                    put_text(&mut bytes, &v.to_string());
                }
                Val::Short { .. } | Val::Long(_) => {
                    bytes.push(TAG_STR);
                    put_text(&mut bytes, val.as_str().unwrap_or_default());
                }
            }
        }
        Packed {
            schema: self.schema,
            bytes: bytes.into_boxed_slice(),
        }
    }

    /// The record as the JSON object it is answered as.
    pub(crate) fn to_value(&self) -> Value {
        // A record always serializes: its members are strings, int64s and JSON values.
        serde_json::to_value(self).unwrap_or(Value::Null)
    }
}

impl Serialize for Record {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.fields.len()))?;
        for (field, val) in &self.fields {
            map.serialize_entry(self.schema.entry(*field).0, val)?;
        }
        map.end()
    }
}

/// A packed field's value is an int64: 8 bytes, little-endian.
const TAG_INT: u8 = 0;
/// A packed field's value is a string: its length (4 bytes, little-endian), then its bytes.
const TAG_STR: u8 = 1;
/// A packed field's value is a list, as JSON text (length, then bytes).
const TAG_JSON: u8 = 2;

fn put_text(bytes: &mut Vec<u8>, text: &str) {
    // A field of a request body: far below 4 GiB (the fake bounds bodies).
    let len = u32::try_from(text.len()).unwrap_or(u32::MAX);
    bytes.extend_from_slice(&len.to_le_bytes());
    bytes.extend_from_slice(&text.as_bytes()[..len as usize]);
}

/// A [`Record`] as the store keeps it: each field as its number, a tag and its value, in one
/// allocation. Only [`Record::pack`] makes one, so [`unpack`](Self::unpack) always reads back
/// the record that was packed.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Packed {
    schema: Schema,
    bytes: Box<[u8]>,
}

impl Packed {
    /// The record that was packed.
    pub(crate) fn unpack(&self) -> Record {
        let mut fields = Vec::with_capacity(16);
        let mut rest: &[u8] = &self.bytes;
        while let [field, tag, tail @ ..] = rest {
            let (val, tail) = if *tag == TAG_INT {
                let Some((n, tail)) = tail.split_first_chunk::<8>() else {
                    break;
                };
                (Val::Int(i64::from_le_bytes(*n)), tail)
            } else {
                let Some((len, tail)) = tail.split_first_chunk::<4>() else {
                    break;
                };
                let len = u32::from_le_bytes(*len) as usize;
                let (Some(text), Some(tail)) = (tail.get(..len), tail.get(len..)) else {
                    break;
                };
                let text = std::str::from_utf8(text).unwrap_or_default();
                let val = if *tag == TAG_JSON {
                    Val::Json(Box::new(serde_json::from_str(text).unwrap_or(Value::Null)))
                } else {
                    Val::text(text)
                };
                (val, tail)
            };
            fields.push((*field, val));
            rest = tail;
        }
        Record {
            schema: self.schema,
            fields,
        }
    }
}

impl Serialize for Packed {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.unpack().serialize(serializer)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::{AVAILABILITY_FIELDS, CONVERSION_FIELDS, Kind, Record, Schema, Val};

    #[test]
    fn the_field_lists_are_sorted_and_every_name_is_found() {
        for fields in [CONVERSION_FIELDS, AVAILABILITY_FIELDS] {
            assert!(fields.windows(2).all(|w| w[0].0 < w[1].0));
        }
        assert_eq!(Schema::Conversion.field("adGroupId"), Some(0));
        assert_eq!(Schema::Conversion.field("type"), Some(34));
        assert_eq!(Schema::Conversion.field("customer"), None);
        assert_eq!(Schema::Availability.field("availabilityTimestamp"), Some(2));
        for schema in [Schema::Conversion, Schema::Availability] {
            for (i, (name, _)) in schema.fields().iter().enumerate() {
                assert_eq!(schema.field(name), u8::try_from(i).ok(), "{name}");
                assert_eq!(schema.field(&name.to_uppercase()), None, "{name}");
            }
            for other in ["", "x", "adid", "availabilityTimestamps", "conversion"] {
                assert_eq!(schema.field(other), None, "{other}");
            }
        }
        assert_eq!(Schema::Availability.field("conversionId"), None);
    }

    #[test]
    fn a_record_answers_as_the_json_object_in_name_order() {
        let id = |name| Schema::Conversion.field(name).unwrap_or(u8::MAX);
        let mut record = Record::from_fields(
            Schema::Conversion,
            vec![
                (id("type"), Val::text("ACTION")),
                (id("adId"), Val::Int(-7)),
                (
                    id("conversionId"),
                    Val::text("a conversion id longer than 22"),
                ),
                (id("adId"), Val::Int(12)),
                (
                    id("customMetric"),
                    Val::Json(Box::new(json!([{ "name": "m", "value": 2.5 }]))),
                ),
            ],
        );
        record.set("state", Val::text("ACTIVE"));
        record.set("type", Val::text("TRANSACTION"));
        record.set_if_absent("adId", || Val::Int(1));
        assert_eq!(
            serde_json::to_string(&record).ok().as_deref(),
            Some(
                r#"{"adId":"12","conversionId":"a conversion id longer than 22","customMetric":[{"name":"m","value":2.5}],"state":"ACTIVE","type":"TRANSACTION"}"#
            ),
            "the last of a field given twice counts; set replaces or inserts in order"
        );
        assert_eq!(record.int("adId"), Some(12));
        assert_eq!(record.str("adId"), None);
        assert_eq!(record.text("adId").as_deref(), Some("12"));
        assert_eq!(record.str("state"), Some("ACTIVE"));
        assert_eq!(record.list("customMetric").map(<[_]>::len), Some(1));
        assert!(!record.contains("clickId"));
        assert_eq!(
            record.to_value()["conversionId"],
            "a conversion id longer than 22"
        );
    }

    #[test]
    fn a_record_writes_the_json_a_value_of_it_writes() {
        // Every field present: the record's member order must be the order of a JSON object's
        // sorted keys, and each value must be written as a `Value` writes it.
        let fields = CONVERSION_FIELDS
            .iter()
            .enumerate()
            .map(|(i, (name, kind))| {
                let val = match kind {
                    Kind::Int64 | Kind::UnsignedDigits => Val::Int(i as i64 * 1_000_003 - 7),
                    Kind::Str => Val::text(&format!("{name} \"é\" {}", "x".repeat(i))),
                    Kind::Dimensions | Kind::Metrics => Val::Json(Box::new(
                        json!([{ "name": name, "value": 1.5 }, { "name": "b", "value": 2 }]),
                    )),
                };
                (u8::try_from(i).unwrap_or(u8::MAX), val)
            })
            .collect();
        let record = Record::from_fields(Schema::Conversion, fields);
        let written = serde_json::to_string(&record).ok();
        let as_value = serde_json::to_string(&record.to_value()).ok();
        assert!(written.is_some());
        assert_eq!(written, as_value);
    }

    #[test]
    fn a_packed_record_unpacks_to_the_record() {
        let id = |name| Schema::Conversion.field(name).unwrap_or(u8::MAX);
        let record = Record::from_fields(
            Schema::Conversion,
            vec![
                (id("adId"), Val::Int(i64::MIN)),
                (id("agencyId"), Val::Int(i64::MAX)),
                (id("conversionId"), Val::text("bench-facade-1-0000001")),
                (id("clickId"), Val::text("")),
                (id("floodlightOrderId"), Val::text(&"ü".repeat(300))),
                (
                    id("customMetric"),
                    Val::Json(Box::new(
                        json!([{ "name": "m", "value": 3.0 }, { "name": "n", "value": 2 }]),
                    )),
                ),
                (id("type"), Val::text("TRANSACTION")),
            ],
        );
        let packed = record.pack();
        assert_eq!(packed.unpack(), record);
        assert_eq!(
            serde_json::to_string(&packed).ok(),
            serde_json::to_string(&record).ok()
        );
        let empty = Record::from_fields(Schema::Availability, Vec::new());
        assert_eq!(empty.pack().unpack(), empty);

        // What the bench uploads: seven int64s and four strings.
        let bench = Record::from_fields(
            Schema::Conversion,
            [
                "agencyId",
                "advertiserId",
                "segmentationId",
                "revenueMicros",
                "conversionTimestamp",
                "dsConversionId",
                "conversionModifiedTimestamp",
            ]
            .iter()
            .map(|name| (id(name), Val::Int(1_717_200_000_000)))
            .chain([
                (id("conversionId"), Val::text("bench-facade-1-0000001")),
                (id("type"), Val::text("TRANSACTION")),
                (id("currencyCode"), Val::text("USD")),
                (id("segmentationType"), Val::text("FLOODLIGHT")),
            ])
            .collect(),
        );
        assert!(
            bench.pack().bytes.len() <= 150,
            "{}",
            bench.pack().bytes.len()
        );
    }

    #[test]
    fn strings_up_to_22_bytes_are_held_inline() {
        assert!(matches!(
            Val::text("1234567890123456789012"),
            Val::Short { len: 22, .. }
        ));
        assert!(matches!(Val::text("12345678901234567890123"), Val::Long(_)));
        assert_eq!(Val::text("ünï").as_str(), Some("ünï"));
        assert!(
            std::mem::size_of::<Val>() <= 24,
            "{}",
            std::mem::size_of::<Val>()
        );
    }
}

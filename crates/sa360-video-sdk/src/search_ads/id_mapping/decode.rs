//! One CSV record of the ID-mapping file to a typed [`IdMappingRow`]: the
//! `Entity Type` and the two ID cells, each a JSON object of ids.

use std::borrow::Cow;

use super::rows::{EntityIds, IdMappingRow};
use crate::search_ads::error::Error;
use crate::search_ads::values::{CustomerId, EntityType};

pub(super) fn csv_error(line: u64, message: impl Into<String>) -> Error {
    Error::Csv {
        line,
        message: message.into(),
    }
}

/// A key of an ID cell, borrowed from the cell unless it has escapes.
struct CellKey<'a>(Cow<'a, str>);

impl<'de> serde::Deserialize<'de> for CellKey<'de> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Visit;
        impl<'de> serde::de::Visitor<'de> for Visit {
            type Value = CellKey<'de>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a string")
            }
            fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Self::Value, E> {
                Ok(CellKey(Cow::Borrowed(v)))
            }
            fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
                Ok(CellKey(Cow::Owned(v.to_owned())))
            }
            fn visit_string<E>(self, v: String) -> Result<Self::Value, E> {
                Ok(CellKey(Cow::Owned(v)))
            }
        }
        d.deserialize_str(Visit)
    }
}

/// A value of an ID cell: its text (a string, or a number's JSON text), or
/// any other JSON value (an error later).
enum CellValue<'a> {
    Text(Cow<'a, str>),
    Other(serde_json::Value),
}

impl<'de> serde::Deserialize<'de> for CellValue<'de> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::value::{MapAccessDeserializer, SeqAccessDeserializer};
        struct Visit;
        impl<'de> serde::de::Visitor<'de> for Visit {
            type Value = CellValue<'de>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("any valid JSON value")
            }
            fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Self::Value, E> {
                Ok(CellValue::Text(Cow::Borrowed(v)))
            }
            fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
                Ok(CellValue::Text(Cow::Owned(v.to_owned())))
            }
            fn visit_string<E>(self, v: String) -> Result<Self::Value, E> {
                Ok(CellValue::Text(Cow::Owned(v)))
            }
            fn visit_i64<E>(self, v: i64) -> Result<Self::Value, E> {
                Ok(CellValue::Text(Cow::Owned(
                    serde_json::Number::from(v).to_string(),
                )))
            }
            fn visit_u64<E>(self, v: u64) -> Result<Self::Value, E> {
                Ok(CellValue::Text(Cow::Owned(
                    serde_json::Number::from(v).to_string(),
                )))
            }
            fn visit_f64<E>(self, v: f64) -> Result<Self::Value, E> {
                Ok(match serde_json::Number::from_f64(v) {
                    Some(n) => CellValue::Text(Cow::Owned(n.to_string())),
                    None => CellValue::Other(serde_json::Value::Null),
                })
            }
            fn visit_bool<E>(self, v: bool) -> Result<Self::Value, E> {
                Ok(CellValue::Other(serde_json::Value::Bool(v)))
            }
            fn visit_unit<E>(self) -> Result<Self::Value, E> {
                Ok(CellValue::Other(serde_json::Value::Null))
            }
            fn visit_none<E>(self) -> Result<Self::Value, E> {
                Ok(CellValue::Other(serde_json::Value::Null))
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                seq: A,
            ) -> Result<Self::Value, A::Error> {
                serde::Deserialize::deserialize(SeqAccessDeserializer::new(seq))
                    .map(CellValue::Other)
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                map: A,
            ) -> Result<Self::Value, A::Error> {
                serde::Deserialize::deserialize(MapAccessDeserializer::new(map))
                    .map(CellValue::Other)
            }
        }
        d.deserialize_any(Visit)
    }
}

/// The entries of an ID cell as a JSON object would hold them: sorted by key,
/// the last of a repeated key winning (the semantics of
/// `serde_json::Map<String, Value>`), but borrowing from the cell instead of
/// allocating a map, a key and a value per entry.
struct CellEntries<'a>(Vec<(CellKey<'a>, CellValue<'a>)>);

impl<'de> serde::Deserialize<'de> for CellEntries<'de> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Visit;
        impl<'de> serde::de::Visitor<'de> for Visit {
            type Value = CellEntries<'de>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a map")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<Self::Value, A::Error> {
                let mut entries: Vec<(CellKey<'de>, CellValue<'de>)> = Vec::with_capacity(8);
                while let Some(entry) = map.next_entry()? {
                    entries.push(entry);
                }
                // Stable: equal keys stay in document order, and the last wins.
                entries.sort_by(|a, b| a.0.0.cmp(&b.0.0));
                entries.dedup_by(|later, kept| {
                    let same = later.0.0 == kept.0.0;
                    if same {
                        std::mem::swap(later, kept);
                    }
                    same
                });
                Ok(CellEntries(entries))
            }
        }
        d.deserialize_map(Visit)
    }
}

/// Applies one entry of an ID cell to `ids`; the error names the column and
/// the key.
fn apply_entry(
    ids: &mut EntityIds,
    line: u64,
    column: &str,
    key: Cow<'_, str>,
    value: CellValue<'_>,
) -> Result<(), Error> {
    let text = match value {
        CellValue::Text(text) => text,
        CellValue::Other(other) => {
            return Err(csv_error(
                line,
                format!("{column}: `{key}` is {other}, expected a string of digits"),
            ));
        }
    };
    let number = || {
        text.trim().parse::<i64>().map_err(|_| {
            csv_error(
                line,
                format!("{column}: `{key}` is {text:?}, expected a string of digits"),
            )
        })
    };
    match key.as_ref() {
        "agencyId" => ids.agency_id = Some(number()?.into()),
        "advertiserId" => ids.advertiser_id = Some(number()?.into()),
        "engineAccountId" => ids.engine_account_id = Some(number()?.into()),
        "campaignId" => ids.campaign_id = Some(number()?.into()),
        "adGroupId" => ids.ad_group_id = Some(number()?.into()),
        "adId" => ids.ad_id = Some(number()?.into()),
        "criterionId" => ids.criterion_id = Some(number()?.into()),
        "customerId" => {
            ids.customer_id = Some(CustomerId::new(text.as_ref()).map_err(|_| {
                csv_error(
                    line,
                    format!("{column}: `customerId` {text:?} is not a customer id"),
                )
            })?);
        }
        _ => {
            ids.other.insert(key.into_owned(), text.into_owned());
        }
    }
    Ok(())
}

fn parse_ids(line: u64, column: &str, cell: &str) -> Result<EntityIds, Error> {
    let not_an_object = |e: serde_json::Error| {
        csv_error(
            line,
            format!(
                "the {column} cell is not a JSON object ({e}): {:?}",
                short(cell)
            ),
        )
    };
    let mut json = serde_json::Deserializer::from_str(cell);
    let entries =
        <CellEntries<'_> as serde::Deserialize>::deserialize(&mut json).map_err(not_an_object)?;
    json.end().map_err(not_an_object)?;
    let mut ids = EntityIds::default();
    for (CellKey(key), value) in entries.0 {
        apply_entry(&mut ids, line, column, key, value)?;
    }
    Ok(ids)
}

pub(super) fn short(text: &str) -> String {
    text.chars().take(80).collect()
}

pub(super) fn parse_row(line: u64, record: &csv::StringRecord) -> Result<IdMappingRow, Error> {
    if record.len() != 3 {
        return Err(csv_error(
            line,
            format!("expected 3 fields, found {}", record.len()),
        ));
    }
    Ok(IdMappingRow {
        entity_type: EntityType::from_wire(record[0].trim()),
        legacy: parse_ids(line, "Legacy IDs", &record[1])?,
        new: parse_ids(line, "New IDs", &record[2])?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::search_ads::values::{AdId, CampaignId};

    #[test]
    fn cells_read_like_json_objects() {
        // The last of a repeated key wins, also over a bad earlier value.
        let ids = parse_ids(
            2,
            "New IDs",
            r#"{"labelId":"1","campaignId":"x","labelId":"2","campaignId":"7","labelId":"3"}"#,
        )
        .unwrap();
        assert_eq!(ids.campaign_id, Some(CampaignId::new(7)));
        assert_eq!(ids.other.get("labelId").map(String::as_str), Some("3"));
        // Numbers count as their text; escapes are decoded.
        let ids = parse_ids(2, "New IDs", r#"{"adId":12,"customerId":"2000\u0031"}"#).unwrap();
        assert_eq!(ids.ad_id, Some(AdId::new(12)));
        assert_eq!(ids.customer_id.as_ref().map(|c| c.as_str()), Some("20001"));
        // Of two bad entries the error names the first in key order.
        let Err(Error::Csv { line, message }) =
            parse_ids(3, "Legacy IDs", r#"{"campaignId":"x","adGroupId":true}"#)
        else {
            panic!("expected an error")
        };
        assert_eq!(line, 3);
        assert!(message.contains("`adGroupId` is true"), "{message}");
        // Broken JSON and non-objects are reported as such, before any key.
        for cell in [r#"{"campaignId":"x",}"#, "[1]", r#"{"a":"1"} x"#, ""] {
            let Err(Error::Csv { message, .. }) = parse_ids(3, "Legacy IDs", cell) else {
                panic!("{cell}: expected an error")
            };
            assert!(
                message.contains("is not a JSON object"),
                "{cell}: {message}"
            );
        }
    }
}

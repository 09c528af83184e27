//! [`WithUnknown`]: a row in the caller's type, with the values of the fields the catalogue does
//! not have beside it, so a field newer than the catalogue that the query sends (SR-32) reaches
//! the caller instead of being dropped by a type that does not name it.

use std::collections::BTreeMap;

use serde::de::{self, DeserializeOwned, Deserializer};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::fields;

/// A report row decoded into `T` (the caller's type, or the generated client's
/// `SearchAds360Row`), and every value of the row whose field the catalogue
/// ([`fields::REVISION`]) does not have, by its query name.
///
/// ```
/// use sa360_video_sdk::search_ads::reporting::WithUnknown;
/// #[derive(serde::Deserialize)]
/// struct Row {
///     campaign: Campaign,
/// }
/// #[derive(serde::Deserialize)]
/// struct Campaign {
///     id: String,
/// }
/// let row: WithUnknown<Row> = serde_json::from_str(
///     r#"{"campaign": {"id": "7"}, "segments": {"geoTargetNeighborhood": "geoTargetConstants/1"}}"#,
/// )?;
/// assert_eq!(row.row.campaign.id, "7");
/// assert_eq!(row.unknown["segments.geo_target_neighborhood"], "geoTargetConstants/1");
/// # Ok::<(), serde_json::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct WithUnknown<T> {
    /// The row, as `T` reads it.
    pub row: T,
    /// The values of the fields the catalogue does not have (`segments.geo_target_postal_code`
    /// in a release before it), by query name; custom columns are not among them.
    pub unknown: BTreeMap<String, Value>,
}

impl<'de, T: DeserializeOwned> Deserialize<'de> for WithUnknown<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let value = Value::deserialize(d)?;
        let mut unknown = BTreeMap::new();
        if let Value::Object(members) = &value {
            collect(None, members, &mut unknown);
        }
        let row = T::deserialize(value).map_err(de::Error::custom)?;
        Ok(Self { row, unknown })
    }
}

/// `geoTargetPostalCode` → `geo_target_postal_code`.
fn snake(camel: &str) -> String {
    let mut out = String::with_capacity(camel.len() + 4);
    for c in camel.chars() {
        if c.is_ascii_uppercase() {
            out.push('_');
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

/// The leaves under `prefix` whose names the catalogue lacks: an object the catalogue does not
/// name as a field is a message, read through; anything else is a value.
fn collect(prefix: Option<&str>, members: &Map<String, Value>, out: &mut BTreeMap<String, Value>) {
    for (member, value) in members {
        if prefix.is_none() && member == "customColumns" {
            continue;
        }
        let name = match prefix {
            None => snake(member),
            Some(prefix) => format!("{prefix}.{}", snake(member)),
        };
        match value {
            _ if fields::lookup(&name).is_some() => {}
            Value::Object(inner) => collect(Some(&name), inner, out),
            _ if prefix.is_some() => {
                out.insert(name, value.clone());
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn camel(snake: &str) -> String {
        let mut out = String::new();
        let mut upper = false;
        for c in snake.chars() {
            match c {
                '_' => upper = true,
                c if upper => {
                    out.push(c.to_ascii_uppercase());
                    upper = false;
                }
                c => out.push(c),
            }
        }
        out
    }

    #[test]
    fn every_catalogued_name_is_found_from_its_json_member() {
        for f in fields::catalogue() {
            let json: Vec<String> = f.name.split('.').map(camel).collect();
            let back: Vec<String> = json.iter().map(|m| snake(m)).collect();
            assert_eq!(back.join("."), f.name);
        }
    }

    #[test]
    fn a_typed_row_keeps_its_fields_and_the_unknown_ones_beside_it() {
        let row: WithUnknown<sa360_reporting_client::types::SearchAds360Row> =
            serde_json::from_value(serde_json::json!({
                "campaign": {"id": "7", "resourceName": "customers/1/campaigns/7", "newThing": {"deep": true}},
                "segments": {"date": "2026-12-01", "geoTargetNeighborhood": "geoTargetConstants/9"},
                "metrics": {"clicks": "3"},
                "customColumns": [{"int64Value": "1"}],
            }))
            .unwrap();
        let campaign = row.row.campaign.as_ref().unwrap();
        assert_eq!(
            campaign.resource_name.as_deref(),
            Some("customers/1/campaigns/7")
        );
        assert_eq!(
            row.row.segments.as_ref().unwrap().date.as_deref(),
            Some("2026-12-01")
        );
        assert_eq!(
            row.unknown,
            BTreeMap::from([
                ("campaign.new_thing.deep".to_owned(), Value::Bool(true)),
                (
                    "segments.geo_target_neighborhood".to_owned(),
                    Value::from("geoTargetConstants/9")
                ),
            ])
        );
    }

    #[test]
    fn a_row_that_does_not_fit_the_type_is_an_error() {
        #[derive(Debug, serde::Deserialize)]
        struct Row {
            #[allow(dead_code)]
            campaign: Value,
        }
        let error = serde_json::from_str::<WithUnknown<Row>>(r#"{"adGroup": {"id": "1"}}"#)
            .unwrap_err()
            .to_string();
        assert!(error.contains("missing field `campaign`"), "{error}");
    }
}

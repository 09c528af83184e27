//! The JSON of a page of a report of a resource other than `conversion`, written straight from
//! the rows' values (no `serde_json::Value` per row, SR-22 g). The text is what a `Value` of the
//! same members would give: objects' members in name order (serde_json's `Map` sorts them), a
//! resource present when at least one of its members has a value. A query that selects a field
//! nested deeper than one member (`ad_group_criterion.keyword.text`) has its rows written through
//! [`json_row`]'s `Value`.

use serde::Serialize;
use serde::ser::{SerializeMap, SerializeSeq};
use serde_json::Value;

use super::super::query::ConversionQuery;
use super::super::row::json_path;
use super::model::{Account, EntityRow, V, json_row};

/// Where each selected field goes in a row: resources in name order, each with its members in
/// name order (a field selected twice, or the `FROM` resource's `resource_name`, once).
pub(crate) struct Layout {
    resources: Vec<(String, Vec<(String, String)>)>,
    /// Whether a member is nested (its name holds a `.`): then rows go through [`json_row`].
    nested: bool,
}

impl Layout {
    /// The layout of `query`'s rows: the selected fields and the `FROM` resource's
    /// `resource_name`.
    pub(crate) fn new(query: &ConversionQuery) -> Self {
        let own = format!("{}.resource_name", query.from);
        let mut resources: Vec<(String, Vec<(String, String)>)> = Vec::new();
        let mut nested = false;
        for field in query.select.iter().chain(std::iter::once(&own)) {
            let (resource, name) = json_path(field);
            nested |= name.contains('.');
            let at = match resources.binary_search_by(|(r, _)| r.cmp(&resource)) {
                Ok(at) => at,
                Err(at) => {
                    resources.insert(at, (resource, Vec::new()));
                    at
                }
            };
            let members = &mut resources[at].1;
            if let Err(i) = members.binary_search_by(|(n, _)| n.cmp(&name)) {
                members.insert(i, (name, field.clone()));
            }
        }
        Self { resources, nested }
    }
}

impl Serialize for V {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            // INT64 is a JSON string.
            V::Int(n) => s.collect_str(n),
            V::Int32(n) => s.serialize_i64(*n),
            // As `Value::from(f64)`: a number, or null when not finite.
            V::Float(f) if f.is_finite() => s.serialize_f64(*f),
            V::Float(_) => s.serialize_unit(),
            V::Str(text) => s.serialize_str(text),
            V::Bool(b) => s.serialize_bool(*b),
            V::Date(d) => s.collect_str(&d.format("%Y-%m-%d")),
        }
    }
}

/// One resource's members with a value.
struct Members<'l>(Vec<(&'l str, V)>);

impl Serialize for Members<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(self.0.len()))?;
        for (name, value) in &self.0 {
            map.serialize_entry(name, value)?;
        }
        map.end()
    }
}

/// One row.
struct Row<'p> {
    account: &'p Account<'p>,
    query: &'p ConversionQuery,
    layout: &'p Layout,
    row: &'p EntityRow,
}

impl Serialize for Row<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        if self.layout.nested {
            return json_row(self.account, self.query, self.row).serialize(s);
        }
        let mut map = s.serialize_map(None)?;
        for (resource, fields) in &self.layout.resources {
            let members: Vec<(&str, V)> = fields
                .iter()
                .filter_map(|(name, field)| {
                    Some((name.as_str(), self.account.value(self.row, field)?))
                })
                .collect();
            if !members.is_empty() {
                map.serialize_entry(resource, &Members(members))?;
            }
        }
        map.end()
    }
}

/// A page's rows.
struct Rows<'p> {
    account: &'p Account<'p>,
    query: &'p ConversionQuery,
    layout: &'p Layout,
    rows: &'p [EntityRow],
}

impl Serialize for Rows<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut seq = s.serialize_seq(Some(self.rows.len()))?;
        for row in self.rows {
            seq.serialize_element(&Row {
                account: self.account,
                query: self.query,
                layout: self.layout,
                row,
            })?;
        }
        seq.end()
    }
}

/// A response object (`fieldMask`, `nextPageToken`, `totalResultsCount`) with the page's rows as
/// `results`, in name order among them.
pub(crate) struct EntityPage<'p> {
    head: &'p Value,
    account: &'p Account<'p>,
    query: &'p ConversionQuery,
    layout: Layout,
    rows: &'p [EntityRow],
}

impl<'p> EntityPage<'p> {
    pub(crate) fn new(
        head: &'p Value,
        account: &'p Account<'p>,
        query: &'p ConversionQuery,
        rows: &'p [EntityRow],
    ) -> Self {
        Self {
            head,
            account,
            query,
            layout: Layout::new(query),
            rows,
        }
    }
}

impl Serialize for EntityPage<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        const RESULTS: &str = "results";
        let rows = Rows {
            account: self.account,
            query: self.query,
            layout: &self.layout,
            rows: self.rows,
        };
        let mut map = s.serialize_map(None)?;
        let mut written = self.rows.is_empty();
        if let Value::Object(head) = self.head {
            for (k, v) in head {
                if !written && k.as_str() > RESULTS {
                    map.serialize_entry(RESULTS, &rows)?;
                    written = true;
                }
                map.serialize_entry(k, v)?;
            }
        }
        if !written {
            map.serialize_entry(RESULTS, &rows)?;
        }
        map.end()
    }
}

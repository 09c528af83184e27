//! The Reporting API's field catalogue, generated for the SDK (SR-30): the fields of the
//! discovery document's `SearchAds360Row` (names, data types, repeated or not) and what the
//! in-repo table `specs/search-ads-report-fields.yaml` adds from Google's field reference pages
//! (category, selectable / filterable / sortable, what each `FROM` resource may select). `cargo
//! xtask generate` writes [`OUTPUT`]; `cargo xtask check` fails when it is stale.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::fs;

use anyhow::{Context, Result, bail};
use serde::Deserialize;
use serde_json::Value;

use crate::Workspace;

/// The discovery document the fields come from (workspace-relative).
pub const DISCOVERY: &str = "crates/sa360-video-fakes/data/searchads360-v0-discovery.json";
/// The table of what the discovery document lacks (workspace-relative).
pub const TABLE: &str = "specs/search-ads-report-fields.yaml";
/// The generated catalogue (workspace-relative).
pub const OUTPUT: &str = "crates/sa360-video-sdk/src/search_ads/reporting/fields/generated.rs";

/// Nested messages deeper than this are not flattened further (none is, in revision 20260810).
const MAX_DEPTH: usize = 6;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Table {
    date_segments: Vec<String>,
    not_selectable: Vec<String>,
    not_filterable: Vec<String>,
    not_sortable: Vec<String>,
    resources: BTreeMap<String, ResourceRow>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ResourceRow {
    page: String,
    attributed: Vec<String>,
    metrics: bool,
    segments: Segments,
}

#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum Segments {
    All(String),
    Only(Vec<String>),
}

/// One catalogued field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Field {
    pub name: String,
    category: &'static str,
    pub data_type: &'static str,
    pub repeated: bool,
    selectable: bool,
    filterable: bool,
    sortable: bool,
}

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

fn pascal(snake: &str) -> String {
    snake
        .split('_')
        .map(|part| {
            let mut chars = part.chars();
            chars.next().map_or_else(String::new, |first| {
                first.to_ascii_uppercase().to_string() + chars.as_str()
            })
        })
        .collect()
}

struct Reader<'a> {
    schemas: &'a serde_json::Map<String, Value>,
    date_segments: &'a [String],
    fields: Vec<Field>,
}

impl Reader<'_> {
    fn schema(&self, id: &str) -> Result<&serde_json::Map<String, Value>> {
        self.schemas
            .get(id)
            .and_then(|s| s.get("properties"))
            .and_then(Value::as_object)
            .with_context(|| format!("{DISCOVERY}: schema {id} has no properties"))
    }

    /// The leaves of schema `id` under `prefix` (`campaign`, `metrics`, ...).
    fn walk(
        &mut self,
        category: &'static str,
        prefix: &str,
        id: &str,
        path: &mut Vec<String>,
    ) -> Result<()> {
        if path.len() > MAX_DEPTH || path.iter().any(|p| p == id) {
            return Ok(());
        }
        path.push(id.to_owned());
        let props = self.schema(id)?.clone();
        for (member, def) in &props {
            let name = format!("{prefix}.{}", snake(member));
            let repeated = def.get("type").and_then(Value::as_str) == Some("array");
            let item = if repeated {
                def.get("items").unwrap_or(def)
            } else {
                def
            };
            if let Some(reference) = item.get("$ref").and_then(Value::as_str) {
                if repeated {
                    self.push(category, name, "MESSAGE", true);
                } else {
                    self.walk(category, &name, reference, path)?;
                }
                continue;
            }
            let data_type = self.data_type(&name, item, def);
            self.push(category, name, data_type, repeated);
        }
        path.pop();
        Ok(())
    }

    fn data_type(&self, name: &str, item: &Value, def: &Value) -> &'static str {
        let format = item.get("format").and_then(Value::as_str);
        let kind = item.get("type").and_then(Value::as_str);
        let description = def
            .get("description")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_ascii_lowercase();
        if self.date_segments.iter().any(|d| d == name) {
            return "DATE";
        }
        if item.get("enum").is_some() {
            return "ENUM";
        }
        match (kind, format) {
            (_, Some("int64")) => "INT64",
            (_, Some("uint64")) => "UINT64",
            (_, Some("int32")) => "INT32",
            (_, Some("float")) => "FLOAT",
            (_, Some("double")) => "DOUBLE",
            (Some("integer"), _) => "INT32",
            (Some("number"), _) => "DOUBLE",
            (Some("boolean"), _) => "BOOLEAN",
            _ if description.contains("resource name") => "RESOURCE_NAME",
            _ => "STRING",
        }
    }

    fn push(
        &mut self,
        category: &'static str,
        name: String,
        data_type: &'static str,
        repeated: bool,
    ) {
        let operable = !matches!(data_type, "RESOURCE_NAME" | "MESSAGE");
        self.fields.push(Field {
            name,
            category,
            data_type,
            repeated,
            selectable: true,
            filterable: operable,
            sortable: operable && !repeated,
        });
    }
}

/// The fields and resources a discovery document's `SearchAds360Row` catalogues.
#[derive(Debug)]
pub(crate) struct Read {
    /// The document's `revision` (`unknown` when it has none).
    pub revision: String,
    /// Every field, sorted by name.
    pub fields: Vec<Field>,
    /// Every resource (members of the row but `metrics`, `segments`, `custom_columns`).
    pub resources: BTreeSet<String>,
}

/// Reads a discovery document (`date_segments` typed DATE, the table's rule).
pub(crate) fn read(discovery: &Value, date_segments: &[String]) -> Result<Read> {
    let schemas = discovery
        .get("schemas")
        .and_then(Value::as_object)
        .with_context(|| format!("{DISCOVERY}: no schemas"))?;
    let revision = discovery
        .get("revision")
        .and_then(Value::as_str)
        .unwrap_or("unknown")
        .to_owned();
    let mut reader = Reader {
        schemas,
        date_segments,
        fields: Vec::new(),
    };
    let row = reader
        .schema("GoogleAdsSearchads360V0Services__SearchAds360Row")?
        .clone();
    let mut resources = BTreeSet::new();
    for (member, def) in &row {
        let name = snake(member);
        if name == "custom_columns" {
            continue; // selected by id (`custom_columns.id[N]`), not catalogued by name
        }
        let reference = def
            .get("$ref")
            .and_then(Value::as_str)
            .with_context(|| format!("{DISCOVERY}: SearchAds360Row.{member} is not a message"))?;
        let category = match name.as_str() {
            "metrics" => "METRIC",
            "segments" => "SEGMENT",
            _ => {
                resources.insert(name.clone());
                "ATTRIBUTE"
            }
        };
        reader.walk(category, &name, reference, &mut Vec::new())?;
    }
    let mut fields = reader.fields;
    fields.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(Read {
        revision,
        fields,
        resources,
    })
}

/// Parses a JSON file.
pub(crate) fn json_file(path: &std::path::Path) -> Result<Value> {
    serde_json::from_str(
        &fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?,
    )
    .with_context(|| format!("parsing {}", path.display()))
}

/// The catalogue's source text, from the discovery document and the table.
pub fn render(ws: &Workspace) -> Result<String> {
    let discovery = json_file(&ws.path(DISCOVERY))?;
    let table: Table = serde_norway::from_str(
        &fs::read_to_string(ws.path(TABLE)).with_context(|| format!("reading {TABLE}"))?,
    )
    .with_context(|| format!("parsing {TABLE}"))?;
    let Read {
        revision,
        mut fields,
        resources,
    } = read(&discovery, &table.date_segments)?;
    let names: BTreeSet<String> = fields.iter().map(|f| f.name.clone()).collect();
    for (list, what) in [
        (&table.not_selectable, "not_selectable"),
        (&table.not_filterable, "not_filterable"),
        (&table.not_sortable, "not_sortable"),
        (&table.date_segments, "date_segments"),
    ] {
        for name in list {
            if !names.contains(name) {
                bail!("{TABLE}: {what} names {name}, which the discovery document does not have");
            }
        }
    }
    for field in &mut fields {
        field.selectable &= !table.not_selectable.contains(&field.name);
        field.filterable &= !table.not_filterable.contains(&field.name);
        field.sortable &= !table.not_sortable.contains(&field.name);
    }
    for (resource, row) in &table.resources {
        if !resources.contains(resource) {
            bail!("{TABLE}: resource {resource} is not a member of SearchAds360Row");
        }
        for attributed in &row.attributed {
            if !resources.contains(attributed) {
                bail!("{TABLE}: {resource} attributes {attributed}, which is not a resource");
            }
        }
        match &row.segments {
            Segments::All(word) if word != "all" => {
                bail!("{TABLE}: {resource}.segments is `{word}`; write `all` or a list")
            }
            Segments::Only(list) => {
                for s in list {
                    if !names.contains(s) || !s.starts_with("segments.") {
                        bail!("{TABLE}: {resource} lists segment {s}, which is not a segment");
                    }
                }
            }
            Segments::All(_) => {}
        }
        if !row.page.starts_with("https://developers.google.com/") {
            bail!("{TABLE}: {resource}.page must be Google's page");
        }
    }
    emit(&revision, &fields, &resources, &table)
}

fn emit(
    revision: &str,
    fields: &[Field],
    resources: &BTreeSet<String>,
    table: &Table,
) -> Result<String> {
    let mut out = String::new();
    let w = &mut out;
    writeln!(
        w,
        "// @generated by `cargo xtask generate` from {DISCOVERY} (revision {revision}) and {TABLE}."
    )?;
    writeln!(
        w,
        "// Do not edit: change the table (or the discovery document) and generate again."
    )?;
    writeln!(w)?;
    writeln!(
        w,
        "//! The generated field catalogue: {} fields of {} resources, metrics and segments.",
        fields.len(),
        resources.len()
    )?;
    writeln!(w)?;
    writeln!(
        w,
        "use super::types::{{Category, Compat, DataType, Field, FieldInfo, ResourceInfo}};"
    )?;
    writeln!(w)?;
    writeln!(
        w,
        "/// The revision of the discovery document the catalogue was generated from: a name the"
    )?;
    writeln!(
        w,
        "/// service added after it is unknown here (see [`UnknownFields`](super::super::UnknownFields))."
    )?;
    writeln!(w, "pub const REVISION: &str = {revision:?};")?;
    writeln!(w)?;
    writeln!(w, "/// Every catalogued field, sorted by name.")?;
    writeln!(w, "pub(crate) static FIELDS: &[FieldInfo] = &[")?;
    for f in fields {
        writeln!(
            w,
            "    FieldInfo::new({:?}, Category::{}, DataType::{}, {}, {}, {}, {}),",
            f.name,
            pascal(&f.category.to_ascii_lowercase()),
            pascal(&f.data_type.to_ascii_lowercase()),
            f.repeated,
            f.selectable,
            f.filterable,
            f.sortable
        )?;
    }
    writeln!(w, "];")?;
    writeln!(w)?;
    writeln!(
        w,
        "/// Every resource of `SearchAds360Row`, sorted by name, with what it may select in `FROM`."
    )?;
    writeln!(w, "pub(crate) static RESOURCES: &[ResourceInfo] = &[")?;
    for r in resources {
        match table.resources.get(r) {
            None => writeln!(w, "    ResourceInfo::unchecked({r:?}),")?,
            Some(row) => {
                let segments = match &row.segments {
                    Segments::All(_) => "Compat::All".to_owned(),
                    Segments::Only(list) => format!("Compat::Only(&{list:?})"),
                };
                let metrics = if row.metrics {
                    "Compat::All"
                } else {
                    "Compat::Only(&[])"
                };
                writeln!(
                    w,
                    "    ResourceInfo::checked({r:?}, &{:?}, {metrics}, {segments}),",
                    row.attributed
                )?;
            }
        }
    }
    writeln!(w, "];")?;
    writeln!(w)?;
    // The resource enum.
    writeln!(
        w,
        "/// A resource of the Reporting API, as named in `FROM` (every member of `SearchAds360Row`"
    )?;
    writeln!(w, "/// but `metrics`, `segments` and `custom_columns`).")?;
    writeln!(w, "///")?;
    writeln!(
        w,
        "/// `#[non_exhaustive]`: the Reporting API adds resources; match with a wildcard arm."
    )?;
    writeln!(
        w,
        "#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]"
    )?;
    writeln!(w, "#[non_exhaustive]")?;
    writeln!(w, "pub enum Resource {{")?;
    for r in resources {
        writeln!(w, "    /// `{r}`.")?;
        writeln!(w, "    {},", pascal(r))?;
    }
    writeln!(w, "}}")?;
    writeln!(w)?;
    writeln!(w, "impl Resource {{")?;
    writeln!(w, "    /// Every resource, in the order of their names.")?;
    writeln!(w, "    pub const ALL: &[Resource] = &[")?;
    for r in resources {
        writeln!(w, "        Resource::{},", pascal(r))?;
    }
    writeln!(w, "    ];")?;
    writeln!(w)?;
    writeln!(
        w,
        "    /// The name in the query language (`campaign`, `keyword_view`, ...)."
    )?;
    writeln!(w, "    pub const fn as_str(self) -> &'static str {{")?;
    writeln!(w, "        match self {{")?;
    for r in resources {
        writeln!(w, "            Resource::{} => {r:?},", pascal(r))?;
    }
    writeln!(w, "        }}")?;
    writeln!(w, "    }}")?;
    writeln!(w, "}}")?;
    // Constants, one module per resource, plus metrics and segments.
    let mut groups: BTreeMap<&str, Vec<&Field>> = BTreeMap::new();
    for f in fields {
        let (group, _) = f.name.split_once('.').context("a field without a dot")?;
        groups.entry(group).or_default().push(f);
    }
    for (group, members) in &groups {
        writeln!(w)?;
        writeln!(w, "/// The fields of `{group}`, as typed constants.")?;
        writeln!(w, "pub mod {group} {{")?;
        writeln!(w, "    use super::Field;")?;
        let mut seen = BTreeSet::new();
        for f in members {
            let rest = &f.name[group.len() + 1..];
            let constant = rest.replace('.', "_").to_ascii_uppercase();
            if !seen.insert(constant.clone()) {
                bail!("two fields of {group} make the constant {constant}");
            }
            writeln!(w)?;
            writeln!(
                w,
                "    /// `{}`: {}, {}{}.",
                f.name,
                f.category,
                f.data_type,
                if f.repeated { ", repeated" } else { "" }
            )?;
            writeln!(
                w,
                "    pub const {constant}: Field = Field::new({:?});",
                f.name
            )?;
        }
        writeln!(w, "}}")?;
    }
    Ok(out)
}

/// Writes [`OUTPUT`] when it changed; the line `generate` prints.
pub fn write(ws: &Workspace) -> Result<String> {
    let code = render(ws)?;
    let path = ws.path(OUTPUT);
    let unchanged = fs::read_to_string(&path).is_ok_and(|old| old == code);
    if !unchanged {
        if let Some(dir) = path.parent() {
            fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        }
        fs::write(&path, &code).with_context(|| format!("writing {}", path.display()))?;
    }
    Ok(format!(
        "report-fields: {} lines ({} {OUTPUT})",
        code.lines().count(),
        if unchanged { "unchanged" } else { "wrote" }
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_converted_as_the_query_language_spells_them() {
        assert_eq!(snake("adGroupCriterion"), "ad_group_criterion");
        assert_eq!(snake("costMicros"), "cost_micros");
        assert_eq!(pascal("keyword_view"), "KeywordView");
        assert_eq!(pascal("int64"), "Int64");
    }

    #[test]
    fn the_catalogue_has_the_guides_fields_with_their_flags() {
        let code = render(&Workspace::from_manifest_dir()).unwrap();
        for line in [
            r#"FieldInfo::new("campaign.id", Category::Attribute, DataType::Int64, false, true, true, true),"#,
            r#"FieldInfo::new("metrics.clicks", Category::Metric, DataType::Int64, false, true, true, true),"#,
            r#"FieldInfo::new("segments.date", Category::Segment, DataType::Date, false, true, true, true),"#,
            r#"FieldInfo::new("campaign.resource_name", Category::Attribute, DataType::ResourceName, false, true, false, false),"#,
            r#"ResourceInfo::checked("keyword_view", &["ad_group", "ad_group_criterion", "campaign", "customer"], Compat::All, Compat::All),"#,
        ] {
            assert!(code.contains(line), "missing: {line}");
        }
        assert!(code.contains("pub const NETWORK_SETTINGS_TARGET_GOOGLE_SEARCH: Field"));
    }
}

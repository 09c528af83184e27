//! What the fake knows about fields and resources, read from Google's discovery document
//! (`crates/sa360-video-fakes/data/searchads360-v0-discovery.json`, revision 20260810).
//!
//! - Resources: the members of `SearchAds360Row` (except `metrics`, `segments`, `custom_columns`).
//!   The fake serves the resources of [`SERVED`] in `FROM`; another resource is
//!   `PROHIBITED_RESOURCE_TYPE_IN_FROM_CLAUSE` ("not supported by this service"), an unknown name
//!   `BAD_RESOURCE_TYPE_IN_FROM_CLAUSE`.
//! - Fields: the scalar members of the 16 resources the spec types (DECISIONS SR-21), of `Segments`
//!   and of `Metrics`. Data types follow discovery: `int64` → INT64, `int32` → INT32, `double` →
//!   DOUBLE, `boolean` → BOOLEAN, an `enum` → ENUM, a member described as a resource name →
//!   RESOURCE_NAME, any other string → STRING; the core date segments
//!   `segments.date|week|month|quarter` are DATE (GRAM, "Date ranges"). Nested messages are
//!   flattened to their leaves (`ad_group_criterion.keyword.text`), as the SDK's catalogue does
//!   (SR-30); a repeated member is catalogued whole (a repeated message as MESSAGE), though the
//!   fake fills none.
//! - Selectable / filterable / sortable: every catalogued field is selectable; RESOURCE_NAME fields
//!   are neither filterable nor sortable (discovery: "No operators work with RESOURCE_NAME fields").
//! - Selectable with: a `FROM` resource takes its own fields, its attributed resources' fields
//!   (Google's field-service page: "Resources that can be implicitly joined to the resource in the
//!   FROM clause", <https://developers.google.com/search-ads/reporting/concepts/field-service>),
//!   the core date segments, and, for the non-event resources, every segment and metric (SR-22).

use std::collections::BTreeMap;
use std::sync::LazyLock;

use serde_json::Value;

/// The discovery document the catalogue is read from.
const DISCOVERY: &str = include_str!("../../../../data/searchads360-v0-discovery.json");

/// The event-level resource whose rows are the stored conversions.
pub(crate) const SERVED_RESOURCE: &str = "conversion";

/// A resource the fake serves in `FROM`.
#[derive(Debug)]
pub(crate) struct Served {
    /// The resource's query name.
    pub name: &'static str,
    /// Resources implicitly joined to it (their fields do not segment the rows).
    pub attributed: &'static [&'static str],
    /// Whether metrics and segments other than the core date segments may be selected with it.
    pub metrics_and_segments: bool,
    /// Whether the core date segments may be selected with it.
    pub date_segments: bool,
}

const fn served_with(
    name: &'static str,
    attributed: &'static [&'static str],
    metrics_and_segments: bool,
    date_segments: bool,
) -> Served {
    Served {
        name,
        attributed,
        metrics_and_segments,
        date_segments,
    }
}

/// The resources the fake serves in `FROM` (SR-22), with what each may select: the SDK's table
/// (`specs/search-ads-report-fields.yaml`, `resources:`, from the field reference pages
/// <https://developers.google.com/search-ads/reporting/api/reference/fields/v0/>), so the fake
/// accepts every query the SDK lets through. `conversion`'s attributed resources are CF's;
/// `ad_group`'s are the field-service page's example (`customer`, `campaign`); `campaign` takes
/// `bidding_strategy` (QS's example selects `bidding_strategy.id` `FROM campaign`); `keyword_view`
/// reaches its parents up to `customer` (Google's criteria-metrics guide). The label links and
/// `label` take no segments and no metrics, `conversion` and `visit` only the core date segments.
pub(crate) const SERVED: &[Served] = &[
    served_with(SERVED_RESOURCE, ATTRIBUTED, false, true),
    served_with("customer", &[], true, true),
    served_with(
        "campaign",
        &[
            "accessible_bidding_strategy",
            "bidding_strategy",
            "campaign_budget",
            "customer",
        ],
        true,
        true,
    ),
    served_with("campaign_budget", &["customer"], true, true),
    served_with("bidding_strategy", &["customer"], true, true),
    served_with("conversion_action", &["customer"], true, true),
    served_with("ad_group", &["campaign", "customer"], true, true),
    served_with(
        "ad_group_ad",
        &["ad_group", "campaign", "customer"],
        true,
        true,
    ),
    served_with(
        "ad_group_criterion",
        &["ad_group", "campaign", "customer"],
        true,
        true,
    ),
    served_with(
        "keyword_view",
        &["ad_group", "ad_group_criterion", "campaign", "customer"],
        true,
        true,
    ),
    served_with(
        "visit",
        &["ad_group", "ad_group_criterion", "campaign", "customer"],
        false,
        true,
    ),
    served_with("label", &["customer"], false, false),
    served_with(
        "campaign_label",
        &["campaign", "customer", "label"],
        false,
        false,
    ),
    served_with(
        "ad_group_label",
        &["ad_group", "campaign", "customer", "label"],
        false,
        false,
    ),
    served_with(
        "ad_group_ad_label",
        &["ad_group", "ad_group_ad", "campaign", "customer", "label"],
        false,
        false,
    ),
    served_with(
        "ad_group_criterion_label",
        &[
            "ad_group",
            "ad_group_criterion",
            "campaign",
            "customer",
            "label",
        ],
        false,
        false,
    ),
];

/// The segments besides the core date segments that `FROM visit` takes: its field reference page,
/// filtered to "visit specified in the FROM clause", lists `ad_network_type`, `date`, `device`,
/// `month`, `quarter`, `week` and `year`
/// (<https://developers.google.com/search-ads/reporting/api/reference/fields/v0/visit>).
pub(crate) const VISIT_SEGMENTS: &[&str] = &["segments.device", "segments.ad_network_type"];

/// The served resource of a `FROM` name.
pub(crate) fn served(name: &str) -> Option<&'static Served> {
    SERVED.iter().find(|s| s.name == name)
}

/// Resources whose fields `FROM conversion` may select and filter (CF).
pub(crate) const ATTRIBUTED: &[&str] = &["ad_group", "ad_group_criterion", "campaign", "customer"];

/// The core date segments: exempt from the referenced-field rule, and a selected one needs a finite
/// date filter (Google Ads "Segmentation", which the SA360 language follows).
pub(crate) const CORE_DATE_SEGMENTS: &[&str] = &[
    "segments.date",
    "segments.week",
    "segments.month",
    "segments.quarter",
    "segments.year",
];

/// `SearchAds360Field.dataType` (discovery), with the operators its description lists.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum DataType {
    Boolean,
    Date,
    Double,
    Enum,
    Int32,
    Int64,
    ResourceName,
    String,
    /// A repeated message, kept whole (SR-30).
    Message,
}

impl DataType {
    pub(crate) fn name(self) -> &'static str {
        match self {
            DataType::Boolean => "BOOLEAN",
            DataType::Date => "DATE",
            DataType::Double => "DOUBLE",
            DataType::Enum => "ENUM",
            DataType::Int32 => "INT32",
            DataType::Int64 => "INT64",
            DataType::ResourceName => "RESOURCE_NAME",
            DataType::String => "STRING",
            DataType::Message => "MESSAGE",
        }
    }
}

/// `SearchAds360Field.category`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Category {
    Attribute,
    Segment,
    Metric,
}

impl Category {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Category::Attribute => "ATTRIBUTE",
            Category::Segment => "SEGMENT",
            Category::Metric => "METRIC",
        }
    }
}

/// One catalogued field.
#[derive(Clone, Debug)]
pub(crate) struct FieldInfo {
    pub name: String,
    pub category: Category,
    pub data_type: DataType,
    pub enum_values: Vec<String>,
    /// A repeated member (a list).
    pub repeated: bool,
}

impl FieldInfo {
    /// RESOURCE_NAME and MESSAGE fields take no operator (discovery's `dataType` descriptions).
    pub(crate) fn filterable(&self) -> bool {
        !matches!(self.data_type, DataType::ResourceName | DataType::Message)
    }

    /// A repeated field has no order (the SDK's table, SR-30).
    pub(crate) fn sortable(&self) -> bool {
        self.filterable() && !self.repeated
    }

    /// The resource (or `segments` / `metrics`) the field belongs to.
    pub(crate) fn resource(&self) -> &str {
        self.name.split_once('.').map_or("", |(r, _)| r)
    }
}

/// Everything read from discovery.
pub(crate) struct Catalogue {
    pub fields: BTreeMap<String, FieldInfo>,
    pub resources: Vec<String>,
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

fn schema<'a>(schemas: &'a Value, suffix: &str) -> Option<&'a serde_json::Map<String, Value>> {
    schemas
        .as_object()?
        .iter()
        .find(|(k, _)| k.ends_with(suffix))?
        .1
        .get("properties")?
        .as_object()
}

/// The members of a schema as fields named `prefix.member`; a nested message (a `$ref`) is
/// flattened to its leaves (`ad_group_criterion.keyword.text`) and a repeated member kept whole
/// (`ad_group_ad.labels`), as the SDK's catalogue does (SR-30); the fake fills no repeated member.
fn members(
    schemas: &Value,
    props: &serde_json::Map<String, Value>,
    prefix: &str,
    category: Category,
    depth: usize,
    fields: &mut BTreeMap<String, FieldInfo>,
) {
    for (key, p) in props {
        let name = format!("{prefix}.{}", snake(key));
        if let Some(target) = p.get("$ref").and_then(Value::as_str) {
            // Discovery's messages nest at most three deep; the bound guards a cycle.
            if depth < 4
                && let Some(nested) = schemas
                    .get(target)
                    .and_then(|s| s.get("properties"))
                    .and_then(Value::as_object)
            {
                members(schemas, nested, &name, category, depth + 1, fields);
            }
            continue;
        }
        let description = p.get("description").and_then(Value::as_str).unwrap_or("");
        // A repeated member is typed by its items: a message is MESSAGE, a scalar its own type.
        let repeated = p.get("type").and_then(Value::as_str) == Some("array");
        let p = match p.get("items") {
            Some(items) if repeated => items,
            _ => p,
        };
        let format = p.get("format").and_then(Value::as_str);
        let enum_values: Vec<String> = p
            .get("enum")
            .and_then(Value::as_array)
            .map(|v| {
                v.iter()
                    .filter_map(|s| s.as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default();
        let data_type = match (p.get("type").and_then(Value::as_str), format) {
            _ if CORE_DATE_SEGMENTS[..4].contains(&name.as_str()) => DataType::Date,
            (Some("string"), Some("int64")) => DataType::Int64,
            (Some("string"), Some("uint64")) => DataType::Int64,
            (Some("integer"), _) => DataType::Int32,
            (Some("number"), _) => DataType::Double,
            (Some("boolean"), _) => DataType::Boolean,
            (Some("string"), _) if !enum_values.is_empty() => DataType::Enum,
            (Some("string"), _)
                if key == "resourceName"
                    || description.contains("resource name of the")
                    || description.contains("resource name of a") =>
            {
                DataType::ResourceName
            }
            (Some("string"), _) => DataType::String,
            _ if repeated && p.get("$ref").is_some() => DataType::Message,
            _ => continue,
        };
        fields.insert(
            name.clone(),
            FieldInfo {
                name,
                category,
                data_type,
                enum_values,
                repeated,
            },
        );
    }
}

fn read() -> Catalogue {
    let doc: Value = serde_json::from_str(DISCOVERY).unwrap_or(Value::Null);
    let schemas = &doc["schemas"];
    let mut fields = BTreeMap::new();
    let mut resources = Vec::new();
    if let Some(row) = schema(schemas, "__SearchAds360Row") {
        resources = row
            .keys()
            .map(|k| snake(k))
            .filter(|k| !["metrics", "segments", "custom_columns"].contains(&k.as_str()))
            .collect();
    }
    let groups = [
        ("Resources__Conversion", "conversion", Category::Attribute),
        ("Resources__AdGroup", "ad_group", Category::Attribute),
        ("Resources__AdGroupAd", "ad_group_ad", Category::Attribute),
        (
            "Resources__AdGroupAdLabel",
            "ad_group_ad_label",
            Category::Attribute,
        ),
        (
            "Resources__AdGroupCriterion",
            "ad_group_criterion",
            Category::Attribute,
        ),
        (
            "Resources__AdGroupCriterionLabel",
            "ad_group_criterion_label",
            Category::Attribute,
        ),
        (
            "Resources__AdGroupLabel",
            "ad_group_label",
            Category::Attribute,
        ),
        (
            "Resources__BiddingStrategy",
            "bidding_strategy",
            Category::Attribute,
        ),
        ("Resources__Campaign", "campaign", Category::Attribute),
        (
            "Resources__CampaignBudget",
            "campaign_budget",
            Category::Attribute,
        ),
        (
            "Resources__CampaignLabel",
            "campaign_label",
            Category::Attribute,
        ),
        (
            "Resources__ConversionAction",
            "conversion_action",
            Category::Attribute,
        ),
        ("Resources__Customer", "customer", Category::Attribute),
        (
            "Resources__KeywordView",
            "keyword_view",
            Category::Attribute,
        ),
        ("Resources__Label", "label", Category::Attribute),
        ("Resources__Visit", "visit", Category::Attribute),
        // Attributed to `campaign` in the SDK's table; catalogued so the fake accepts what it does.
        (
            "Resources__AccessibleBiddingStrategy",
            "accessible_bidding_strategy",
            Category::Attribute,
        ),
        ("Common__Segments", "segments", Category::Segment),
        ("Common__Metrics", "metrics", Category::Metric),
    ];
    for (suffix, prefix, category) in groups {
        let Some(props) = schema(schemas, suffix) else {
            continue;
        };
        members(schemas, props, prefix, category, 0, &mut fields);
    }
    Catalogue { fields, resources }
}

/// The catalogue, read once.
pub(crate) static CATALOGUE: LazyLock<Catalogue> = LazyLock::new(read);

/// A field by its query name.
pub(crate) fn field(name: &str) -> Option<&'static FieldInfo> {
    CATALOGUE.fields.get(name)
}

/// Whether `name` is a resource of the Reporting API.
pub(crate) fn is_resource(name: &str) -> bool {
    CATALOGUE.resources.iter().any(|r| r == name)
}

/// Whether the catalogue holds the fields of `resource` (a resource, `segments` or `metrics`).
pub(crate) fn is_catalogued(resource: &str) -> bool {
    CATALOGUE
        .fields
        .keys()
        .any(|k| k.split_once('.').is_some_and(|(r, _)| r == resource))
}

/// Whether a field may appear in SELECT or WHERE with `FROM from`: the resource's own fields, its
/// attributed resources' fields and the core date segments; other segments and metrics only with
/// the resources that take them (with `conversion` they are unverified, facts §11.3, SR-14).
pub(crate) fn selectable_with(from: &Served, f: &FieldInfo) -> bool {
    let resource = f.resource();
    resource == from.name
        || from.attributed.contains(&resource)
        || (from.date_segments && CORE_DATE_SEGMENTS.contains(&f.name.as_str()))
        || (from.name == "visit" && VISIT_SEGMENTS.contains(&f.name.as_str()))
        || (from.metrics_and_segments && matches!(f.category, Category::Segment | Category::Metric))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn discovery_gives_the_conversion_fields_their_types() {
        let t = |n: &str| field(n).unwrap_or_else(|| panic!("{n}")).data_type;
        assert_eq!(t("conversion.id"), DataType::Int64);
        assert_eq!(t("conversion.status"), DataType::Enum);
        assert_eq!(t("conversion.advertiser_conversion_id"), DataType::String);
        assert_eq!(t("conversion.resource_name"), DataType::ResourceName);
        assert_eq!(t("segments.date"), DataType::Date);
        assert_eq!(t("segments.month"), DataType::Date);
        assert_eq!(t("segments.year"), DataType::Int32);
        assert_eq!(t("customer.manager"), DataType::Boolean);
        assert_eq!(t("campaign.name"), DataType::String);
        assert_eq!(
            field("segments.device").unwrap().category,
            Category::Segment
        );
        assert_eq!(
            field("conversion.status").unwrap().enum_values,
            ["UNSPECIFIED", "UNKNOWN", "ENABLED", "REMOVED"]
        );
        let conversion = CATALOGUE
            .fields
            .keys()
            .filter(|k| k.starts_with("conversion."))
            .count();
        assert_eq!(
            conversion, 24,
            "the 24 properties of the conversion resource"
        );
        assert!(is_resource("conversion") && is_resource("campaign") && !is_resource("nope"));
        // Nested messages are flattened to their leaves (SR-30), repeated members left out.
        assert_eq!(t("ad_group_criterion.keyword.text"), DataType::String);
        assert_eq!(t("ad_group_criterion.keyword.match_type"), DataType::Enum);
        assert_eq!(t("ad_group_ad.ad.id"), DataType::Int64);
        let urls = field("ad_group_ad.ad.final_urls").unwrap();
        assert!(urls.repeated && urls.filterable() && !urls.sortable());
        assert_eq!(t("ad_group_ad.ad.final_urls"), DataType::String);
        let count = |c: Category| {
            CATALOGUE
                .fields
                .values()
                .filter(|f| f.category == c)
                .count()
        };
        assert_eq!(
            (
                count(Category::Attribute),
                count(Category::Segment),
                count(Category::Metric)
            ),
            (323, 77, 100),
            "the catalogue's size (SR-22)"
        );
    }
}

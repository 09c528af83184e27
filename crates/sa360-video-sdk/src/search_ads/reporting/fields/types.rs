//! The types of the field catalogue: a field's name as a typed constant ([`Field`]), what the
//! catalogue knows of it ([`FieldInfo`]) and of a resource (`ResourceInfo`).

use std::fmt;

/// A field of the query language (`campaign.id`, `metrics.clicks`, `segments.date`): the
/// generated constants of [`fields`](super) are of this type, so a field misspelt in Rust does
/// not compile.
///
/// ```
/// use sa360_video_sdk::search_ads::reporting::fields;
/// assert_eq!(fields::campaign::ID.name(), "campaign.id");
/// assert_eq!(fields::metrics::COST_MICROS.to_string(), "metrics.cost_micros");
/// ```
///
/// ```compile_fail
/// use sa360_video_sdk::search_ads::reporting::fields;
/// let _ = fields::campaign::IDD;
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Field(&'static str);

impl Field {
    /// The field of this name (the generated constants are made with it; nothing checks the
    /// name here: a query made of it is checked before it is sent).
    pub const fn new(name: &'static str) -> Self {
        Self(name)
    }

    /// The name in the query language (`campaign.id`).
    pub const fn name(self) -> &'static str {
        self.0
    }
}

impl fmt::Display for Field {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0)
    }
}

/// `SearchAds360Field.category`: what kind of artifact a name is.
///
/// `#[non_exhaustive]`: match with a wildcard arm.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Category {
    /// A resource (`campaign`): what `FROM` names.
    Resource,
    /// A field of a resource (`campaign.name`).
    Attribute,
    /// A segment (`segments.date`): splits the rows (and their metrics).
    Segment,
    /// A metric (`metrics.clicks`).
    Metric,
}

impl Category {
    /// The wire name (`ATTRIBUTE`, ...).
    pub const fn as_str(self) -> &'static str {
        match self {
            Category::Resource => "RESOURCE",
            Category::Attribute => "ATTRIBUTE",
            Category::Segment => "SEGMENT",
            Category::Metric => "METRIC",
        }
    }
}

/// `SearchAds360Field.dataType`: which operators a field takes in `WHERE`.
///
/// `#[non_exhaustive]`: match with a wildcard arm.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum DataType {
    /// `=`, `!=`.
    Boolean,
    /// `=`, `<`, `>`, `<=`, `>=`, `BETWEEN`, `DURING`, `IN`; text `YYYY-MM-DD`.
    Date,
    /// `=`, `!=`, `<`, `>`, `IN`, `NOT IN`.
    Double,
    /// `=`, `!=`, `IN`, `NOT IN`; the value is a name (`ENABLED`).
    Enum,
    /// As [`Double`](Self::Double).
    Float,
    /// `=`, `!=`, `<`, `>`, `<=`, `>=`, `BETWEEN`, `IN`, `NOT IN`.
    Int32,
    /// As [`Int32`](Self::Int32); the JSON value is a string of digits.
    Int64,
    /// A nested message: no operator.
    Message,
    /// A resource name (`customers/1/campaigns/2`): no operator.
    ResourceName,
    /// `=`, `!=`, `LIKE`, `NOT LIKE`, `IN`, `NOT IN`.
    String,
    /// As [`Int64`](Self::Int64).
    Uint64,
}

impl DataType {
    /// The wire name (`INT64`, ...).
    pub const fn as_str(self) -> &'static str {
        match self {
            DataType::Boolean => "BOOLEAN",
            DataType::Date => "DATE",
            DataType::Double => "DOUBLE",
            DataType::Enum => "ENUM",
            DataType::Float => "FLOAT",
            DataType::Int32 => "INT32",
            DataType::Int64 => "INT64",
            DataType::Message => "MESSAGE",
            DataType::ResourceName => "RESOURCE_NAME",
            DataType::String => "STRING",
            DataType::Uint64 => "UINT64",
        }
    }
}

/// One field of the catalogue (`SearchAds360Field` of a field: its name, category, data type and
/// where it may be used).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct FieldInfo {
    /// The name (`campaign.id`).
    pub name: &'static str,
    /// Attribute, segment or metric.
    pub category: Category,
    /// The data type.
    pub data_type: DataType,
    /// Whether the value is a list.
    pub repeated: bool,
    /// Whether it may be in `SELECT`.
    pub selectable: bool,
    /// Whether it may be in `WHERE`.
    pub filterable: bool,
    /// Whether it may be in `ORDER BY`.
    pub sortable: bool,
}

impl FieldInfo {
    /// For the generated table.
    #[allow(clippy::fn_params_excessive_bools)]
    pub(crate) const fn new(
        name: &'static str,
        category: Category,
        data_type: DataType,
        repeated: bool,
        selectable: bool,
        filterable: bool,
        sortable: bool,
    ) -> Self {
        Self {
            name,
            category,
            data_type,
            repeated,
            selectable,
            filterable,
            sortable,
        }
    }

    /// The resource (or `metrics`, `segments`) the field belongs to: the part before the first dot.
    pub fn group(&self) -> &'static str {
        self.name
            .split_once('.')
            .map_or(self.name, |(group, _)| group)
    }
}

/// What a set of names allows: all of them, or only those listed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Compat {
    All,
    Only(&'static [&'static str]),
}

impl Compat {
    pub(crate) fn allows(self, name: &str) -> bool {
        match self {
            Compat::All => true,
            Compat::Only(names) => names.contains(&name),
        }
    }
}

/// A resource: its name and, when the sourced table lists it, what may be selected with it in
/// `FROM` (its attributed resources, metrics, segments).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ResourceInfo {
    pub name: &'static str,
    pub with: Option<SelectableWith>,
}

/// What may be selected with a resource in `FROM`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct SelectableWith {
    pub attributed: &'static [&'static str],
    pub metrics: Compat,
    pub segments: Compat,
}

impl SelectableWith {
    /// Whether `FROM from` may select (and filter) `field`: its own fields and its attributed
    /// resources' fields, the metrics and segments it allows.
    pub(crate) fn allows(&self, from: &str, field: &FieldInfo) -> bool {
        match field.category {
            Category::Metric => self.metrics.allows(field.name),
            Category::Segment => self.segments.allows(field.name),
            _ => field.group() == from || self.attributed.contains(&field.group()),
        }
    }
}

impl ResourceInfo {
    /// Whether `FROM` this resource may select `field`, as far as the catalogue knows: a
    /// resource the table does not list is known to take its own fields only.
    pub(crate) fn accepts(&self, field: &FieldInfo) -> bool {
        match &self.with {
            Some(with) => with.allows(self.name, field),
            None => field.group() == self.name,
        }
    }

    /// A resource whose compatibility the table gives.
    pub(crate) const fn checked(
        name: &'static str,
        attributed: &'static [&'static str],
        metrics: Compat,
        segments: Compat,
    ) -> Self {
        Self {
            name,
            with: Some(SelectableWith {
                attributed,
                metrics,
                segments,
            }),
        }
    }

    /// A resource the table does not list: only its fields' existence and flags are checked.
    pub(crate) const fn unchecked(name: &'static str) -> Self {
        Self { name, with: None }
    }
}

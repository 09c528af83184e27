//! [`Query`]: a query of the Reporting API's query language, written as text or built from the
//! typed field constants of [`fields`](super::super::fields). Either way it is checked against the
//! catalogue before it is sent (`check.rs`); the builder only ever writes values as typed
//! literals (numbers, quoted and escaped text, checked enum names), so no value can add a clause.

use std::fmt::{self, Write as _};

use chrono::NaiveDate;

use super::super::fields::{Field, Resource};

/// A Reporting API query: text (`Query::text`, or `From<&str>` / `From<String>`) or built
/// ([`Query::select`] and the builder methods), sent by
/// [`SearchAdsClient::search`](crate::search_ads::SearchAdsClient::search).
///
/// ```
/// use sa360_video_sdk::search_ads::reporting::fields::{self, Resource};
/// use sa360_video_sdk::search_ads::reporting::{DuringRange, Query};
///
/// let query = Query::select([
///     fields::campaign::ID,
///     fields::campaign::NAME,
///     fields::segments::DEVICE,
///     fields::segments::DATE,
///     fields::metrics::IMPRESSIONS,
///     fields::metrics::CLICKS,
/// ])
/// .from(Resource::Campaign)
/// .where_(fields::segments::DATE.during(DuringRange::Last30Days))
/// .order_by(fields::metrics::CLICKS.desc());
/// assert_eq!(
///     query.to_string(),
///     "SELECT campaign.id, campaign.name, segments.device, segments.date, metrics.impressions, \
///      metrics.clicks FROM campaign WHERE segments.date DURING LAST_30_DAYS \
///      ORDER BY metrics.clicks DESC"
/// );
/// let same = Query::text("SELECT campaign.id FROM campaign");
/// assert_eq!(same.to_string(), "SELECT campaign.id FROM campaign");
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Query {
    kind: Kind,
}

#[derive(Debug, Clone, PartialEq)]
enum Kind {
    Text(String),
    Built(Built),
}

#[derive(Debug, Clone, PartialEq, Default)]
struct Built {
    select: Vec<Selected>,
    from: Option<Resource>,
    conditions: Vec<Condition>,
    order: Vec<OrderBy>,
    limit: Option<u64>,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Selected {
    Field(Field),
    CustomColumn(u64),
}

impl Query {
    /// A query written as text, sent as it is (after the checks).
    pub fn text(text: impl Into<String>) -> Self {
        Self {
            kind: Kind::Text(text.into()),
        }
    }

    /// A query built from typed fields: `SELECT` these, then [`from`](Self::from) (required),
    /// [`where_`](Self::where_), [`order_by`](Self::order_by), [`limit`](Self::limit).
    pub fn select(fields: impl IntoIterator<Item = Field>) -> Self {
        Self {
            kind: Kind::Built(Built {
                select: fields.into_iter().map(Selected::Field).collect(),
                ..Built::default()
            }),
        }
    }

    fn built(&mut self) -> &mut Built {
        if let Kind::Text(text) = &self.kind {
            // A text query extended with builder calls is rebuilt from nothing: refuse that
            // loudly in the check rather than splice text.
            self.kind = Kind::Built(Built {
                select: Vec::new(),
                from: None,
                conditions: vec![Condition::invalid(text)],
                order: Vec::new(),
                limit: None,
            });
        }
        match &mut self.kind {
            Kind::Built(built) => built,
            Kind::Text(_) => unreachable!("replaced above"),
        }
    }

    /// Also selects custom columns, by id (`custom_columns.id[N]`): their values come in the
    /// row's `customColumns` list, in the order selected.
    #[must_use]
    pub fn custom_columns(mut self, ids: impl IntoIterator<Item = u64>) -> Self {
        self.built()
            .select
            .extend(ids.into_iter().map(Selected::CustomColumn));
        self
    }

    /// The resource in `FROM`.
    #[must_use]
    pub fn from(mut self, resource: Resource) -> Self {
        self.built().from = Some(resource);
        self
    }

    /// Adds a condition (conditions are joined with `AND`; the language has no `OR`).
    #[must_use]
    pub fn where_(mut self, condition: Condition) -> Self {
        self.built().conditions.push(condition);
        self
    }

    /// Adds an ordering (a [`Field`] orders ascending; [`Field::desc`] descending).
    #[must_use]
    pub fn order_by(mut self, order: impl Into<OrderBy>) -> Self {
        self.built().order.push(order.into());
        self
    }

    /// `LIMIT n`: at most `n` rows (`n` ≥ 1; 0 is refused by the service, `LIMIT_VALUE_TOO_LOW`,
    /// and before sending here).
    #[must_use]
    pub fn limit(mut self, n: u64) -> Self {
        self.built().limit = Some(n);
        self
    }

    /// Whether the query was written as text.
    pub fn is_text(&self) -> bool {
        matches!(self.kind, Kind::Text(_))
    }
}

impl From<&str> for Query {
    fn from(text: &str) -> Self {
        Query::text(text)
    }
}

impl From<String> for Query {
    fn from(text: String) -> Self {
        Query::text(text)
    }
}

impl fmt::Display for Query {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.kind {
            Kind::Text(text) => f.write_str(text),
            Kind::Built(b) => {
                f.write_str("SELECT ")?;
                for (i, s) in b.select.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    match s {
                        Selected::Field(field) => f.write_str(field.name())?,
                        Selected::CustomColumn(id) => write!(f, "custom_columns.id[{id}]")?,
                    }
                }
                if let Some(from) = b.from {
                    write!(f, " FROM {}", from.as_str())?;
                }
                for (i, c) in b.conditions.iter().enumerate() {
                    f.write_str(if i == 0 { " WHERE " } else { " AND " })?;
                    write!(f, "{c}")?;
                }
                for (i, o) in b.order.iter().enumerate() {
                    f.write_str(if i == 0 { " ORDER BY " } else { ", " })?;
                    write!(
                        f,
                        "{} {}",
                        o.field.name(),
                        if o.descending { "DESC" } else { "ASC" }
                    )?;
                }
                if let Some(n) = b.limit {
                    write!(f, " LIMIT {n}")?;
                }
                Ok(())
            }
        }
    }
}

/// One ordering of `ORDER BY`: a field, ascending or descending.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OrderBy {
    field: Field,
    descending: bool,
}

impl From<Field> for OrderBy {
    fn from(field: Field) -> Self {
        field.asc()
    }
}

/// A predefined date range of `DURING` ("Date ranges": each `LAST_N_DAYS` excludes today).
///
/// [`DateRange::last_days`](crate::search_ads::DateRange::last_days) includes today:
/// `DateRange::last_days(30)` ends a day later than `LAST_30_DAYS` and starts a day later too. A
/// name not in this list is refused before sending (`INVALID_VALUE_WITH_DURING_OPERATOR`, with
/// the nearest name), for text queries as for built ones.
///
/// `#[non_exhaustive]`: match with a wildcard arm.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum DuringRange {
    /// `TODAY`.
    Today,
    /// `YESTERDAY`.
    Yesterday,
    /// `LAST_7_DAYS`.
    Last7Days,
    /// `LAST_14_DAYS`.
    Last14Days,
    /// `LAST_30_DAYS`.
    Last30Days,
    /// `LAST_BUSINESS_WEEK` (the previous Monday to Friday).
    LastBusinessWeek,
    /// `THIS_MONTH`.
    ThisMonth,
    /// `LAST_MONTH`.
    LastMonth,
    /// `THIS_WEEK_SUN_TODAY`.
    ThisWeekSunToday,
    /// `THIS_WEEK_MON_TODAY`.
    ThisWeekMonToday,
    /// `LAST_WEEK_SUN_SAT`.
    LastWeekSunSat,
    /// `LAST_WEEK_MON_SUN`.
    LastWeekMonSun,
}

impl DuringRange {
    /// Every range, in the order of Google's query grammar page.
    pub const ALL: [DuringRange; 12] = [
        DuringRange::Today,
        DuringRange::Yesterday,
        DuringRange::Last7Days,
        DuringRange::Last14Days,
        DuringRange::Last30Days,
        DuringRange::LastBusinessWeek,
        DuringRange::ThisMonth,
        DuringRange::LastMonth,
        DuringRange::ThisWeekSunToday,
        DuringRange::ThisWeekMonToday,
        DuringRange::LastWeekSunSat,
        DuringRange::LastWeekMonSun,
    ];

    /// The range of a name of the query language (in any case), if it is one.
    pub fn named(name: &str) -> Option<Self> {
        Self::ALL
            .into_iter()
            .find(|r| r.as_str().eq_ignore_ascii_case(name))
    }

    /// The name in the query language.
    pub const fn as_str(self) -> &'static str {
        match self {
            DuringRange::Today => "TODAY",
            DuringRange::Yesterday => "YESTERDAY",
            DuringRange::Last7Days => "LAST_7_DAYS",
            DuringRange::Last14Days => "LAST_14_DAYS",
            DuringRange::Last30Days => "LAST_30_DAYS",
            DuringRange::LastBusinessWeek => "LAST_BUSINESS_WEEK",
            DuringRange::ThisMonth => "THIS_MONTH",
            DuringRange::LastMonth => "LAST_MONTH",
            DuringRange::ThisWeekSunToday => "THIS_WEEK_SUN_TODAY",
            DuringRange::ThisWeekMonToday => "THIS_WEEK_MON_TODAY",
            DuringRange::LastWeekSunSat => "LAST_WEEK_SUN_SAT",
            DuringRange::LastWeekMonSun => "LAST_WEEK_MON_SUN",
        }
    }
}

/// A value of a condition: written as a literal of the query language.
///
/// `#[non_exhaustive]`: build it with `From` (`i64`, `f64`, `bool`, `&str`, `String`,
/// [`NaiveDate`]) or [`Literal::enum_value`].
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Literal {
    /// A whole number.
    Int(i64),
    /// A number with a fraction.
    Double(f64),
    /// `TRUE` or `FALSE`.
    Bool(bool),
    /// Text, written quoted with `'` and `\` escaped. A line break or another control
    /// character is refused before sending (`PROHIBITED_NEWLINE_IN_STRING`).
    Text(String),
    /// A date, written `'YYYY-MM-DD'`.
    Date(NaiveDate),
    /// An enum value's name (`ENABLED`): upper-case letters, digits and `_` only, else refused
    /// before sending (`BAD_ENUM_CONSTANT`).
    Enum(String),
}

impl Literal {
    /// An enum value by name (`Literal::enum_value("PAUSED")`).
    pub fn enum_value(name: impl Into<String>) -> Self {
        Literal::Enum(name.into())
    }

    /// Whether the literal can be written without changing the query's structure; the
    /// refusal's code and reason otherwise.
    pub(crate) fn problem(&self) -> Option<(&'static str, String)> {
        match self {
            Literal::Text(t) if t.chars().any(char::is_control) => Some((
                "PROHIBITED_NEWLINE_IN_STRING",
                "holds a line break or another control character".to_owned(),
            )),
            Literal::Enum(e)
                if e.is_empty()
                    || !e
                        .bytes()
                        .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_') =>
            {
                Some((
                    "BAD_ENUM_CONSTANT",
                    format!("{e:?} is not an enum name (A-Z, 0-9, _)"),
                ))
            }
            Literal::Double(d) if !d.is_finite() => {
                Some(("BAD_NUMBER", format!("{d} is not a finite number")))
            }
            _ => None,
        }
    }
}

impl fmt::Display for Literal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Literal::Int(n) => write!(f, "{n}"),
            Literal::Double(d) => write!(f, "{d:?}"),
            Literal::Bool(b) => f.write_str(if *b { "TRUE" } else { "FALSE" }),
            Literal::Date(d) => write!(f, "'{}'", d.format("%Y-%m-%d")),
            Literal::Enum(e) => f.write_str(e),
            Literal::Text(t) => {
                f.write_char('\'')?;
                for c in t.chars() {
                    if c == '\'' || c == '\\' {
                        f.write_char('\\')?;
                    }
                    f.write_char(c)?;
                }
                f.write_char('\'')
            }
        }
    }
}

/// `From` for each kind of value a literal holds.
macro_rules! literal_from {
    ($($ty:ty => $make:expr),+ $(,)?) => {
        $(impl From<$ty> for Literal {
            fn from(value: $ty) -> Self {
                $make(value)
            }
        })+
    };
}

literal_from! {
    i64 => Literal::Int,
    f64 => Literal::Double,
    bool => Literal::Bool,
    &str => |t: &str| Literal::Text(t.to_owned()),
    String => Literal::Text,
    NaiveDate => Literal::Date,
}

/// One condition of `WHERE`, made by the methods of [`Field`] (`fields::campaign::ID.eq(1)`,
/// `fields::segments::DATE.during(DuringRange::Last30Days)`, ...).
#[derive(Debug, Clone, PartialEq)]
pub struct Condition {
    field: Option<Field>,
    operator: &'static str,
    values: Values,
}

#[derive(Debug, Clone, PartialEq)]
enum Values {
    None,
    One(Literal),
    List(Vec<Literal>),
    Between(Literal, Literal),
    During(DuringRange),
    /// A text query extended with builder calls: refused by the check.
    Invalid(String),
}

impl Condition {
    fn new(field: Field, operator: &'static str, values: Values) -> Self {
        Self {
            field: Some(field),
            operator,
            values,
        }
    }

    fn invalid(text: &str) -> Self {
        Self {
            field: None,
            operator: "",
            values: Values::Invalid(text.chars().take(80).collect()),
        }
    }

    /// The literals of the condition (for the check).
    pub(crate) fn literals(&self) -> Vec<&Literal> {
        match &self.values {
            Values::One(v) => vec![v],
            Values::List(vs) => vs.iter().collect(),
            Values::Between(a, b) => vec![a, b],
            Values::None | Values::During(_) | Values::Invalid(_) => vec![],
        }
    }

    /// The problem of a condition the builder could not make (a text query extended with
    /// builder methods, an empty list).
    pub(crate) fn structural_problem(&self) -> Option<(&'static str, String, String)> {
        match &self.values {
            Values::Invalid(text) => Some((
                "EXPECTED_SELECT",
                text.clone(),
                "is a text query: builder methods (from, where_, order_by, limit, custom_columns) \
                 extend only a query made with Query::select"
                    .to_owned(),
            )),
            Values::List(vs) if vs.is_empty() => Some((
                "PROHIBITED_EMPTY_LIST_IN_CONDITION",
                self.field.map(Field::name).unwrap_or_default().to_owned(),
                format!("has an empty list for {}", self.operator),
            )),
            _ => None,
        }
    }
}

impl fmt::Display for Condition {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let field = self.field.map(Field::name).unwrap_or_default();
        match &self.values {
            Values::None => write!(f, "{field} {}", self.operator),
            Values::One(v) => write!(f, "{field} {} {v}", self.operator),
            Values::During(r) => write!(f, "{field} DURING {}", r.as_str()),
            Values::Between(a, b) => write!(f, "{field} BETWEEN {a} AND {b}"),
            Values::List(vs) => {
                write!(f, "{field} {} (", self.operator)?;
                for (i, v) in vs.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{v}")?;
                }
                f.write_char(')')
            }
            Values::Invalid(text) => f.write_str(text),
        }
    }
}

/// `field <operator> value` methods of [`Field`].
macro_rules! comparisons {
    ($($(#[$doc:meta])* $name:ident $operator:literal),+ $(,)?) => {
        $($(#[$doc])*
        pub fn $name(self, value: impl Into<Literal>) -> Condition {
            Condition::new(self, $operator, Values::One(value.into()))
        })+
    };
}

/// Conditions and orderings on a field, for [`Query::where_`] and [`Query::order_by`].
impl Field {
    comparisons! {
        /// `field = value`.
        eq "=",
        /// `field != value`.
        ne "!=",
        /// `field > value`.
        gt ">",
        /// `field >= value`.
        ge ">=",
        /// `field < value`.
        lt "<",
        /// `field <= value`.
        le "<=",
    }

    /// `field LIKE 'pattern'`.
    pub fn like(self, pattern: impl Into<String>) -> Condition {
        Condition::new(self, "LIKE", Values::One(Literal::Text(pattern.into())))
    }

    /// `field IN (a, b, ...)` (an empty list is refused before sending).
    pub fn in_<V: Into<Literal>>(self, values: impl IntoIterator<Item = V>) -> Condition {
        let values = values.into_iter().map(Into::into).collect();
        Condition::new(self, "IN", Values::List(values))
    }

    /// `field NOT IN (a, b, ...)` (an empty list is refused before sending).
    pub fn not_in<V: Into<Literal>>(self, values: impl IntoIterator<Item = V>) -> Condition {
        let values = values.into_iter().map(Into::into).collect();
        Condition::new(self, "NOT IN", Values::List(values))
    }

    /// `field BETWEEN a AND b` (inclusive).
    pub fn between(self, low: impl Into<Literal>, high: impl Into<Literal>) -> Condition {
        Condition::new(self, "BETWEEN", Values::Between(low.into(), high.into()))
    }

    /// `field DURING RANGE` (date segments).
    pub fn during(self, range: DuringRange) -> Condition {
        Condition::new(self, "DURING", Values::During(range))
    }

    /// `field IS NULL`.
    pub fn is_null(self) -> Condition {
        Condition::new(self, "IS NULL", Values::None)
    }

    /// `field IS NOT NULL`.
    pub fn is_not_null(self) -> Condition {
        Condition::new(self, "IS NOT NULL", Values::None)
    }

    /// Orders by this field, ascending.
    pub fn asc(self) -> OrderBy {
        OrderBy {
            field: self,
            descending: false,
        }
    }

    /// Orders by this field, descending.
    pub fn desc(self) -> OrderBy {
        OrderBy {
            field: self,
            descending: true,
        }
    }
}

impl Query {
    /// The conditions of a built query (the check looks at their literals); none for text.
    pub(crate) fn conditions(&self) -> &[Condition] {
        match &self.kind {
            Kind::Built(b) => &b.conditions,
            Kind::Text(_) => &[],
        }
    }

    /// `LIMIT` of a built query.
    pub(crate) fn built_limit(&self) -> Option<u64> {
        match &self.kind {
            Kind::Built(b) => b.limit,
            Kind::Text(_) => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::search_ads::reporting::fields;

    #[test]
    fn the_builder_writes_the_guides_query() {
        let q = Query::select([fields::campaign::ID, fields::metrics::CLICKS])
            .custom_columns([7, 9])
            .from(Resource::KeywordView)
            .where_(fields::campaign::STATUS.in_([
                Literal::enum_value("ENABLED"),
                Literal::enum_value("PAUSED"),
            ]))
            .where_(fields::segments::DATE.between(
                NaiveDate::from_ymd_opt(2026, 1, 1).unwrap(),
                NaiveDate::from_ymd_opt(2026, 1, 31).unwrap(),
            ))
            .where_(fields::campaign::NAME.eq("it's \\ here"))
            .order_by(fields::campaign::ID)
            .limit(10);
        assert_eq!(
            q.to_string(),
            "SELECT campaign.id, metrics.clicks, custom_columns.id[7], custom_columns.id[9] \
             FROM keyword_view WHERE campaign.status IN (ENABLED, PAUSED) AND segments.date \
             BETWEEN '2026-01-01' AND '2026-01-31' AND campaign.name = 'it\\'s \\\\ here' \
             ORDER BY campaign.id ASC LIMIT 10"
        );
    }

    #[test]
    fn literals_that_would_change_the_query_are_flagged() {
        assert!(Literal::from("a\nb").problem().is_some());
        assert!(Literal::enum_value("ENABLED OR 1").problem().is_some());
        assert!(Literal::enum_value("ENABLED").problem().is_none());
        assert!(Literal::from(f64::NAN).problem().is_some());
        assert!(Literal::from("plain ' quote").problem().is_none());
    }
}

//! The rules a parsed query must keep, each with the `queryError` code Google documents for it
//! (discovery's `queryError` values; GRAM; the facts file's "Which fields must be selected"):
//!
//! - every field is known (`UNRECOGNIZED_FIELD`); `FROM` names a resource (`EXPECTED_FROM`,
//!   `BAD_RESOURCE_TYPE_IN_FROM_CLAUSE`) the fake serves (`PROHIBITED_RESOURCE_TYPE_IN_FROM_CLAUSE`;
//!   `catalogue::SERVED`);
//! - referenced fields: a segment in WHERE, other than the core date segments, and every ORDER BY
//!   field must be selected (`EXPECTED_REFERENCED_FIELD_IN_SELECT_CLAUSE`); fields of the resource
//!   and of its attributed resources need not be (Google's `SELECT campaign.id FROM ad_group WHERE
//!   ad_group.status = PAUSED`);
//! - a field comes from the resource, an attributed resource or a segment the resource takes
//!   (`PROHIBITED_RESOURCE_TYPE_IN_SELECT_CLAUSE` / `_WHERE_CLAUSE`,
//!   `PROHIBITED_SEGMENT_IN_SELECT_OR_WHERE_CLAUSE`, `PROHIBITED_METRIC_IN_SELECT_OR_WHERE_CLAUSE`);
//! - a WHERE field is filterable (`PROHIBITED_FIELD_IN_WHERE_CLAUSE`), takes the operator
//!   (`OPERATOR_FIELD_MISMATCH`; the operators of each `dataType` in discovery, plus `IS [NOT]
//!   NULL` on any filterable field, DECISIONS SR-16) and values of its type (`BAD_VALUE`,
//!   `BAD_NUMBER`, `INVALID_STRING_VALUE`, `INVALID_DATE_FORMAT`, `BAD_ENUM_CONSTANT`,
//!   `INVALID_VALUE_WITH_DURING_OPERATOR`, `INVALID_VALUE_WITH_BETWEEN_OPERATOR`,
//!   `INVALID_VALUE_WITH_LIKE_OPERATOR`, `PROHIBITED_VALUE_COMBINATION_IN_LIST`,
//!   `PROHIBITED_VALUE_COMBINATION_WITH_BETWEEN_OPERATOR`, `MISALIGNED_DATE_FOR_FILTER`);
//! - an ORDER BY field is sortable (`PROHIBITED_FIELD_IN_ORDER_BY_CLAUSE`);
//! - a selected core date segment needs a finite date filter (`EXPECTED_FILTERS_ON_DATE_RANGE`); a
//!   query segmented by date spans at most 30 days (`DATE_RANGE_TOO_WIDE`, SR-13);
//! - PARAMETERS are `metrics_currency` and `enable_mcc_expansion` (QS; `BAD_PARAMETER_NAME`,
//!   `BAD_PARAMETER_VALUE`).

use chrono::NaiveDate;

use super::catalogue::{self, Category, DataType, FieldInfo, Served};
use super::conversion_query::ConversionQuery;
use super::dates::{self, Bounds, Period};
use super::error::QueryError;
use super::eval::{Const, Filter};
use super::parser::{Ast, Condition, Literal, Op, Operand};

/// Most days a query that selects `segments.date` may span (SR-13).
pub const MAX_SEGMENTED_DAYS: i64 = 30;

/// The operators a data type takes (discovery's `dataType` descriptions); `IS NULL` and `IS NOT
/// NULL` are added for every filterable type (SR-16).
pub(crate) fn operators(t: DataType) -> &'static [Op] {
    use Op::*;
    match t {
        DataType::Boolean => &[Eq, Ne, IsNull, IsNotNull],
        DataType::Date => &[Eq, Lt, Gt, Le, Ge, Between, During, In, IsNull, IsNotNull],
        DataType::Double => &[Eq, Ne, Lt, Gt, In, NotIn, IsNull, IsNotNull],
        DataType::Enum => &[Eq, Ne, In, NotIn, IsNull, IsNotNull],
        DataType::Int32 | DataType::Int64 => &[
            Eq, Ne, Lt, Gt, Le, Ge, Between, In, NotIn, IsNull, IsNotNull,
        ],
        DataType::String => &[Eq, Ne, Like, NotLike, In, NotIn, IsNull, IsNotNull],
        DataType::ResourceName | DataType::Message => &[],
    }
}

fn kind(l: &Literal) -> u8 {
    match l {
        Literal::Number(_) => 0,
        // An enum constant may be written bare or quoted.
        Literal::Str(_) | Literal::Word(_) => 1,
    }
}

/// The type a field of a filter has, whatever the catalogue it comes from.
pub(crate) struct Typed<'a> {
    pub name: &'a str,
    pub data_type: DataType,
    pub enum_values: &'a [String],
}

fn constant(f: &Typed<'_>, op: Op, l: &Literal) -> Result<Const, QueryError> {
    let bad = |code: &'static str, what: &str| {
        QueryError::new(code, format!("{} takes {what}.", f.name)).at(l.shown())
    };
    match f.data_type {
        DataType::Int32 | DataType::Int64 => {
            let text = match l {
                Literal::Number(n) | Literal::Str(n) => n,
                Literal::Word(_) => return Err(bad("BAD_VALUE", "an integer")),
            };
            if text.contains('.') {
                return Err(bad("BAD_VALUE", "an integer"));
            }
            text.parse::<i64>()
                .map(Const::Int)
                .map_err(|_| bad("BAD_NUMBER", "an integer within 64 bits"))
        }
        DataType::Double => match l {
            Literal::Number(n) => n
                .parse::<f64>()
                .map(Const::Float)
                .map_err(|_| bad("BAD_NUMBER", "a number")),
            _ => Err(bad("BAD_VALUE", "a number")),
        },
        DataType::Boolean => match l {
            Literal::Word(w) | Literal::Str(w) if w.eq_ignore_ascii_case("true") => {
                Ok(Const::Bool(true))
            }
            Literal::Word(w) | Literal::Str(w) if w.eq_ignore_ascii_case("false") => {
                Ok(Const::Bool(false))
            }
            _ => Err(bad("BAD_VALUE", "TRUE or FALSE")),
        },
        DataType::String => match l {
            Literal::Str(s) => Ok(Const::Str(s.clone())),
            _ if matches!(op, Op::Like | Op::NotLike) => {
                Err(bad("INVALID_VALUE_WITH_LIKE_OPERATOR", "a quoted pattern"))
            }
            _ => Err(bad("INVALID_STRING_VALUE", "a quoted string")),
        },
        DataType::Enum => match l {
            Literal::Word(w) | Literal::Str(w) => {
                if f.enum_values.iter().any(|v| v == w) {
                    Ok(Const::Str(w.clone()))
                } else {
                    Err(bad("BAD_ENUM_CONSTANT", "one of its enum constants"))
                }
            }
            Literal::Number(_) => Err(bad("BAD_ENUM_CONSTANT", "one of its enum constants")),
        },
        DataType::Date => match l {
            Literal::Str(s) => NaiveDate::parse_from_str(s, "%Y-%m-%d")
                .ok()
                .filter(|_| s.len() == 10)
                .map(Const::Date)
                .ok_or_else(|| {
                    if op == Op::Between {
                        bad("INVALID_VALUE_WITH_BETWEEN_OPERATOR", "dates 'YYYY-MM-DD'")
                    } else {
                        bad("INVALID_DATE_FORMAT", "a date 'YYYY-MM-DD'")
                    }
                }),
            _ => Err(bad("INVALID_DATE_FORMAT", "a date 'YYYY-MM-DD'")),
        },
        DataType::ResourceName | DataType::Message => {
            Err(bad("OPERATOR_FIELD_MISMATCH", "no operator"))
        }
    }
}

/// A condition read for the type of its field: the operator is allowed and the values fit.
pub(crate) fn typed(f: &Typed<'_>, c: &Condition, today: NaiveDate) -> Result<Filter, QueryError> {
    if !operators(f.data_type).contains(&c.op) {
        return Err(QueryError::new(
            "OPERATOR_FIELD_MISMATCH",
            format!(
                "{} is {}, which does not take {}.",
                f.name,
                f.data_type.name(),
                c.op.name()
            ),
        )
        .at(c.op.name()));
    }
    let values = match (&c.op, &c.value) {
        (Op::During, Operand::One(l)) => {
            let range = match l {
                Literal::Word(w) => dates::during(w, today),
                _ => None,
            };
            let Some((a, z)) = range else {
                return Err(QueryError::new(
                    "INVALID_VALUE_WITH_DURING_OPERATOR",
                    format!(
                        "DURING takes a predefined range: {}.",
                        dates::RANGES.join(", ")
                    ),
                )
                .at(l.shown()));
            };
            vec![Const::Date(a), Const::Date(z)]
        }
        (_, Operand::Nothing) => Vec::new(),
        (_, Operand::One(l)) => vec![constant(f, c.op, l)?],
        (_, Operand::Pair(a, z)) => {
            if kind(a) != kind(z) {
                return Err(QueryError::new(
                    "PROHIBITED_VALUE_COMBINATION_WITH_BETWEEN_OPERATOR",
                    "The two values of BETWEEN have different types.",
                )
                .at(format!("{} AND {}", a.shown(), z.shown())));
            }
            vec![constant(f, c.op, a)?, constant(f, c.op, z)?]
        }
        (_, Operand::List(list)) => {
            if list.iter().any(|l| kind(l) != kind(&list[0])) {
                return Err(QueryError::new(
                    "PROHIBITED_VALUE_COMBINATION_IN_LIST",
                    "The values of a list have different types.",
                )
                .at(c.field.clone()));
            }
            list.iter()
                .map(|l| constant(f, c.op, l))
                .collect::<Result<_, _>>()?
        }
    };
    if let Some(period) = Period::of(f.name)
        && c.op != Op::During
    {
        for v in &values {
            if let Const::Date(d) = v {
                dates::check_aligned(f.name, period, *d)?;
            }
        }
    }
    Ok(Filter {
        field: c.field.clone(),
        op: c.op,
        values,
    })
}

fn lookup(name: &str, clause: &str) -> Result<&'static FieldInfo, QueryError> {
    catalogue::field(name).ok_or_else(|| {
        let (resource, _) = name.split_once('.').unwrap_or((name, ""));
        let catalogued = catalogue::is_catalogued(resource);
        let code = match clause {
            _ if catalogued || !catalogue::is_resource(resource) => "UNRECOGNIZED_FIELD",
            "WHERE" => "PROHIBITED_RESOURCE_TYPE_IN_WHERE_CLAUSE",
            _ => "PROHIBITED_RESOURCE_TYPE_IN_SELECT_CLAUSE",
        };
        QueryError::new(code, format!("Unrecognized field in the query: '{name}'.")).at(name)
    })
}

fn compatible(from: &Served, f: &FieldInfo, clause: &str) -> Result<(), QueryError> {
    if catalogue::selectable_with(from, f) {
        return Ok(());
    }
    let code = match (f.category, clause) {
        (Category::Segment, _) => "PROHIBITED_SEGMENT_IN_SELECT_OR_WHERE_CLAUSE",
        (Category::Metric, _) => "PROHIBITED_METRIC_IN_SELECT_OR_WHERE_CLAUSE",
        (Category::Attribute, "WHERE") => "PROHIBITED_RESOURCE_TYPE_IN_WHERE_CLAUSE",
        (Category::Attribute, _) => "PROHIBITED_RESOURCE_TYPE_IN_SELECT_CLAUSE",
    };
    Err(QueryError::new(
        code,
        format!("'{}' cannot be used with FROM {}.", f.name, from.name),
    )
    .at(f.name.clone()))
}

fn parameters(ast: &Ast) -> Result<(), QueryError> {
    for (name, value) in &ast.parameters {
        match name.as_str() {
            "metrics_currency" => match value {
                Literal::Str(s) | Literal::Word(s)
                    if s.len() == 3 && s.bytes().all(|b| b.is_ascii_uppercase()) => {}
                other => {
                    return Err(QueryError::new(
                        "BAD_PARAMETER_VALUE",
                        "metrics_currency takes an ISO 4217 currency code such as 'USD'.",
                    )
                    .at(other.shown()));
                }
            },
            "enable_mcc_expansion" => match value {
                Literal::Word(w) | Literal::Str(w)
                    if w.eq_ignore_ascii_case("true") || w.eq_ignore_ascii_case("false") => {}
                other => {
                    return Err(QueryError::new(
                        "BAD_PARAMETER_VALUE",
                        "enable_mcc_expansion takes true or false.",
                    )
                    .at(other.shown()));
                }
            },
            other => {
                return Err(QueryError::new(
                    "BAD_PARAMETER_NAME",
                    "PARAMETERS takes metrics_currency and enable_mcc_expansion.",
                )
                .at(other));
            }
        }
    }
    Ok(())
}

/// Checks a `searchAds360:search` query against the rules above; `today` (in the account's time
/// zone) fixes the `DURING` ranges.
pub(crate) fn conversion_query(ast: Ast, today: NaiveDate) -> Result<ConversionQuery, QueryError> {
    let Some(from) = ast.from.as_deref() else {
        return Err(QueryError::new(
            "EXPECTED_FROM",
            "A searchAds360:search query needs a FROM clause.",
        ));
    };
    let Some(served) = catalogue::served(from) else {
        let code = if catalogue::is_resource(from) {
            "PROHIBITED_RESOURCE_TYPE_IN_FROM_CLAUSE"
        } else {
            "BAD_RESOURCE_TYPE_IN_FROM_CLAUSE"
        };
        let names: Vec<&str> = catalogue::SERVED.iter().map(|s| s.name).collect();
        return Err(QueryError::new(
            code,
            format!(
                "The fake serves FROM {}, not FROM {from}.",
                names.join(", ")
            ),
        )
        .at(from));
    };
    let select: Vec<&FieldInfo> = ast
        .select
        .iter()
        .map(|n| lookup(n, "SELECT"))
        .collect::<Result<_, _>>()?;
    let selected = |name: &str| ast.select.iter().any(|s| s == name);
    let mut wheres = Vec::with_capacity(ast.conditions.len());
    for c in &ast.conditions {
        let f = lookup(&c.field, "WHERE")?;
        if f.category == Category::Segment
            && !catalogue::CORE_DATE_SEGMENTS.contains(&f.name.as_str())
            && !selected(&f.name)
        {
            return Err(referenced(&f.name));
        }
        wheres.push(f);
    }
    for (name, _) in &ast.order {
        lookup(name, "ORDER BY")?;
        if !selected(name) {
            return Err(referenced(name));
        }
    }
    for f in &select {
        compatible(served, f, "SELECT")?;
    }
    let mut filters = Vec::with_capacity(wheres.len());
    for (f, c) in wheres.iter().zip(&ast.conditions) {
        compatible(served, f, "WHERE")?;
        if !f.filterable() {
            return Err(QueryError::new(
                "PROHIBITED_FIELD_IN_WHERE_CLAUSE",
                format!("'{}' cannot be filtered.", f.name),
            )
            .at(f.name.clone()));
        }
        let t = Typed {
            name: &f.name,
            data_type: f.data_type,
            enum_values: &f.enum_values,
        };
        filters.push(typed(&t, c, today)?);
    }
    for (name, _) in &ast.order {
        if catalogue::field(name).is_some_and(|f| !f.sortable()) {
            return Err(QueryError::new(
                "PROHIBITED_FIELD_IN_ORDER_BY_CLAUSE",
                format!("'{name}' cannot be sorted."),
            )
            .at(name.clone()));
        }
    }
    parameters(&ast)?;
    let bounds = dates::bounds(&filters)?;
    date_rules(&ast.select, &bounds)?;
    Ok(ConversionQuery {
        from: served.name,
        select: ast.select,
        filters,
        order: ast.order,
        limit: ast.limit,
        bounds,
        start: NaiveDate::MIN,
        end: NaiveDate::MIN,
    })
}

fn referenced(name: &str) -> QueryError {
    QueryError::new(
        "EXPECTED_REFERENCED_FIELD_IN_SELECT_CLAUSE",
        format!("'{name}' is used in WHERE or ORDER BY but missing from the SELECT clause."),
    )
    .at(name)
}

fn date_rules(select: &[String], bounds: &Bounds) -> Result<(), QueryError> {
    if let Some(segment) = select
        .iter()
        .find(|s| catalogue::CORE_DATE_SEGMENTS.contains(&s.as_str()))
        && !bounds.finite()
    {
        return Err(QueryError::new(
            "EXPECTED_FILTERS_ON_DATE_RANGE",
            format!("{segment} is selected: the WHERE clause needs a finite date range."),
        )
        .at(segment.clone()));
    }
    if select.iter().any(|s| s == "segments.date")
        && let (Some(s), Some(e)) = (bounds.start, bounds.end)
    {
        let days = (e - s).num_days() + 1;
        if days > MAX_SEGMENTED_DAYS {
            return Err(QueryError::too_wide(days));
        }
    }
    Ok(())
}

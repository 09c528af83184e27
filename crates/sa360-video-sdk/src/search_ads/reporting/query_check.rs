//! A query checked against the field catalogue before it is sent (SR-30): every name in
//! `SELECT`, `WHERE` and `ORDER BY` must be a field of the catalogue, usable in that clause
//! (selectable, filterable, sortable), and selectable with the resource in `FROM` (one of its
//! own fields or of its attributed resources; a metric or segment it allows). A refusal is the
//! [`Error::Query`] with the code the Reporting API gives for it (the `queryError` values of the
//! discovery document) and, for an unknown name, the nearest valid one.

use super::super::error::Error;
use super::fields::{self, Category, FieldInfo, SelectableWith};
use super::query_clauses::clauses;
use super::search_query::Query;

/// Longest query text sent (characters): a query is a few hundred; this bounds the work of the
/// check and the size of every request.
pub const MAX_QUERY_CHARS: usize = 100_000;

/// Where a name is used.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Clause {
    Select,
    Where,
    OrderBy,
}

impl Clause {
    fn name(self) -> &'static str {
        match self {
            Clause::Select => "SELECT",
            Clause::Where => "WHERE",
            Clause::OrderBy => "ORDER BY",
        }
    }
}

fn refuse(code: &'static str, field: &str, reason: String, suggestion: Option<&str>) -> Error {
    Error::Query {
        code,
        field: field.to_owned(),
        reason,
        suggestion: suggestion.map(str::to_owned),
    }
}

/// Checks `query`; its text when it may be sent.
pub(crate) fn check(query: &Query) -> Result<String, Error> {
    for condition in query.conditions() {
        if let Some((code, field, reason)) = condition.structural_problem() {
            return Err(refuse(code, &field, reason, None));
        }
        for literal in condition.literals() {
            if let Some((code, reason)) = literal.problem() {
                return Err(refuse(code, &literal.to_string(), reason, None));
            }
        }
    }
    if query.built_limit() == Some(0) {
        return Err(refuse(
            "LIMIT_VALUE_TOO_LOW",
            "LIMIT 0",
            "is below 1".to_owned(),
            None,
        ));
    }
    let text = query.to_string();
    if text.chars().count() > MAX_QUERY_CHARS {
        return Err(Error::validation(
            "query",
            None,
            format!("is longer than {MAX_QUERY_CHARS} characters"),
        ));
    }
    let c = clauses(&text).map_err(|(code, field, reason)| refuse(code, &field, reason, None))?;
    let Some(from) = c.from.as_deref() else {
        return Err(refuse(
            "EXPECTED_FROM",
            "FROM",
            "is missing: a report query names its resource".to_owned(),
            None,
        ));
    };
    let resource = fields::resource(from).ok_or_else(|| {
        refuse(
            "BAD_RESOURCE_TYPE_IN_FROM_CLAUSE",
            from,
            "is not a resource of the Reporting API".to_owned(),
            fields::nearest(from, true),
        )
    })?;
    for name in &c.select {
        if let Some(id) = custom_column_id(name) {
            if id.is_none() {
                return Err(refuse(
                    "BAD_FIELD_NAME",
                    name,
                    "is not `custom_columns.id[N]` with N a custom column's id".to_owned(),
                    None,
                ));
            }
            continue;
        }
        field_in(name, Clause::Select, from, resource.with.as_ref())?;
    }
    // A custom column (`custom_columns.id[N]`) is the customer's own: where it may be used is the
    // service's to judge.
    let own = |name: &str| matches!(custom_column_id(name), Some(Some(_)));
    for name in c.filtered.iter().filter(|n| !own(n)) {
        field_in(name, Clause::Where, from, resource.with.as_ref())?;
    }
    for name in c.ordered.iter().filter(|n| !own(n)) {
        field_in(name, Clause::OrderBy, from, resource.with.as_ref())?;
    }
    Ok(text)
}

impl Query {
    /// The names in `SELECT`, in order: the column names Google's clients give a report's
    /// columns (`campaign.id`, `metrics.clicks`, `custom_columns.id[7]`). Checked as
    /// [`SearchRequest::stream`](super::SearchRequest::stream) checks it.
    ///
    /// ```
    /// use sa360_video_sdk::search_ads::reporting::Query;
    /// let query = Query::text("SELECT campaign.id, metrics.clicks FROM campaign");
    /// assert_eq!(query.columns()?, ["campaign.id", "metrics.clicks"]);
    /// assert!(Query::text("SELECT campaign.idd FROM campaign").columns().is_err());
    /// # Ok::<(), sa360_video_sdk::search_ads::Error>(())
    /// ```
    pub fn columns(&self) -> Result<Vec<String>, Error> {
        let text = check(self)?;
        let c =
            clauses(&text).map_err(|(code, field, reason)| refuse(code, &field, reason, None))?;
        Ok(c.select)
    }
}

/// `Some(Some(id))` for `custom_columns.id[id]`, `Some(None)` for another `custom_columns` name.
fn custom_column_id(name: &str) -> Option<Option<u64>> {
    let rest = name.strip_prefix("custom_columns")?;
    Some(
        rest.strip_prefix(".id[")
            .and_then(|r| r.strip_suffix(']'))
            .filter(|digits| !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()))
            .and_then(|digits| digits.parse().ok()),
    )
}

fn field_in(
    name: &str,
    clause: Clause,
    from: &str,
    with: Option<&SelectableWith>,
) -> Result<&'static FieldInfo, Error> {
    let Some(field) = fields::lookup(name) else {
        if fields::resource(name).is_some() {
            return Err(refuse(
                match clause {
                    Clause::Select => "PROHIBITED_FIELD_IN_SELECT_CLAUSE",
                    Clause::Where => "PROHIBITED_FIELD_IN_WHERE_CLAUSE",
                    Clause::OrderBy => "PROHIBITED_FIELD_IN_ORDER_BY_CLAUSE",
                },
                name,
                format!(
                    "is a resource, not a field: name its fields (`{name}.id`, ...) in {}",
                    clause.name()
                ),
                None,
            ));
        }
        return Err(refuse(
            "UNRECOGNIZED_FIELD",
            name,
            format!("in {} is not a field of the Reporting API", clause.name()),
            fields::nearest(name, false),
        ));
    };
    let (usable, code) = match clause {
        Clause::Select => (field.selectable, "PROHIBITED_FIELD_IN_SELECT_CLAUSE"),
        Clause::Where => (field.filterable, "PROHIBITED_FIELD_IN_WHERE_CLAUSE"),
        Clause::OrderBy => (field.sortable, "PROHIBITED_FIELD_IN_ORDER_BY_CLAUSE"),
    };
    if !usable {
        return Err(refuse(
            code,
            name,
            format!(
                "cannot be used in {} (a {} field{})",
                clause.name(),
                field.data_type.as_str(),
                if field.repeated { ", repeated" } else { "" }
            ),
            None,
        ));
    }
    let Some(with) = with else {
        return Ok(field);
    };
    let group = field.group();
    match field.category {
        Category::Metric if !with.metrics.allows(field.name) => Err(refuse(
            "PROHIBITED_METRIC_IN_SELECT_OR_WHERE_CLAUSE",
            name,
            format!("cannot be selected with FROM {from}"),
            None,
        )),
        Category::Segment if !with.segments.allows(field.name) => Err(refuse(
            "PROHIBITED_SEGMENT_IN_SELECT_OR_WHERE_CLAUSE",
            name,
            format!("cannot be selected with FROM {from}"),
            None,
        )),
        Category::Attribute if group != from && !with.attributed.contains(&group) => {
            let attributed = if with.attributed.is_empty() {
                "none".to_owned()
            } else {
                with.attributed.join(", ")
            };
            Err(refuse(
                match clause {
                    Clause::Where => "PROHIBITED_RESOURCE_TYPE_IN_WHERE_CLAUSE",
                    _ => "PROHIBITED_RESOURCE_TYPE_IN_SELECT_CLAUSE",
                },
                name,
                format!(
                    "is a field of {group}, which FROM {from} cannot select (its attributed \
                     resources: {attributed})"
                ),
                None,
            ))
        }
        _ => Ok(field),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn code(text: &str) -> (&'static str, String, Option<String>) {
        match check(&Query::text(text)) {
            Err(Error::Query {
                code,
                field,
                suggestion,
                ..
            }) => (code, field, suggestion),
            other => panic!("{text}: {other:?}"),
        }
    }

    #[test]
    fn the_guides_queries_pass() {
        for q in [
            "SELECT campaign.id, campaign.name FROM campaign",
            "SELECT campaign.id FROM ad_group WHERE ad_group.status = PAUSED",
            "SELECT campaign.id, campaign.name, segments.device, segments.date, \
             metrics.impressions, metrics.clicks FROM campaign WHERE segments.date DURING LAST_30_DAYS",
            "SELECT ad_group_criterion.keyword.text, ad_group.name, campaign.name, \
             metrics.impressions, metrics.clicks, metrics.ctr, metrics.average_cpc \
             FROM keyword_view WHERE segments.date DURING LAST_30_DAYS",
            "SELECT conversion.id FROM conversion WHERE segments.date DURING LAST_30_DAYS",
            "SELECT campaign.id, custom_columns.id[12] FROM campaign",
            "SELECT campaign.id, custom_columns.id[12] FROM campaign \
             WHERE custom_columns.id[12] > 5 ORDER BY custom_columns.id[12] DESC",
            "SELECT asset.id FROM asset",
            // The visit page's segments with `FROM visit`: the date ones, device, network.
            "SELECT visit.id, segments.device, segments.ad_network_type, segments.date FROM visit \
             WHERE segments.date DURING LAST_7_DAYS",
        ] {
            assert!(
                check(&Query::text(q)).is_ok(),
                "{q}: {:?}",
                check(&Query::text(q))
            );
        }
    }

    #[test]
    fn each_refusal_has_the_services_code_and_the_field() {
        assert_eq!(
            code("SELECT campaign.nme FROM campaign"),
            (
                "UNRECOGNIZED_FIELD",
                "campaign.nme".into(),
                Some("campaign.name".into())
            )
        );
        assert_eq!(
            code("SELECT campaign.id FROM campaing"),
            (
                "BAD_RESOURCE_TYPE_IN_FROM_CLAUSE",
                "campaing".into(),
                Some("campaign".into())
            )
        );
        assert_eq!(
            code("SELECT campaign.id FROM campaign WHERE campaign.resource_name = 'x'").0,
            "PROHIBITED_FIELD_IN_WHERE_CLAUSE"
        );
        assert_eq!(
            code("SELECT campaign.id FROM campaign ORDER BY campaign.labels").0,
            "PROHIBITED_FIELD_IN_ORDER_BY_CLAUSE"
        );
        assert_eq!(
            code("SELECT ad_group.id FROM campaign").0,
            "PROHIBITED_RESOURCE_TYPE_IN_SELECT_CLAUSE"
        );
        assert_eq!(
            code("SELECT campaign.id FROM campaign WHERE ad_group.id = 1").0,
            "PROHIBITED_RESOURCE_TYPE_IN_WHERE_CLAUSE"
        );
        assert_eq!(
            code("SELECT conversion.id, metrics.clicks FROM conversion").0,
            "PROHIBITED_METRIC_IN_SELECT_OR_WHERE_CLAUSE"
        );
        assert_eq!(
            code("SELECT conversion.id, segments.device FROM conversion").0,
            "PROHIBITED_SEGMENT_IN_SELECT_OR_WHERE_CLAUSE"
        );
        assert_eq!(
            code("SELECT visit.id, segments.keyword.info.text FROM visit").0,
            "PROHIBITED_SEGMENT_IN_SELECT_OR_WHERE_CLAUSE"
        );
        assert_eq!(
            code("SELECT visit.id, metrics.clicks FROM visit").0,
            "PROHIBITED_METRIC_IN_SELECT_OR_WHERE_CLAUSE"
        );
        assert_eq!(
            code("SELECT campaign FROM campaign").0,
            "PROHIBITED_FIELD_IN_SELECT_CLAUSE"
        );
        assert_eq!(code("SELECT campaign.id").0, "EXPECTED_FROM");
        assert_eq!(
            code("SELECT custom_columns.id[x] FROM campaign").0,
            "BAD_FIELD_NAME"
        );
    }

    #[test]
    fn a_built_query_with_an_unsafe_literal_is_refused() {
        let q = Query::select([fields::campaign::ID])
            .from(fields::Resource::Campaign)
            .where_(fields::campaign::NAME.eq("a\nb"));
        assert!(matches!(
            check(&q),
            Err(Error::Query {
                code: "PROHIBITED_NEWLINE_IN_STRING",
                ..
            })
        ));
        let q = Query::select([fields::campaign::ID])
            .from(fields::Resource::Campaign)
            .where_(fields::campaign::ID.in_(Vec::<i64>::new()));
        assert!(matches!(
            check(&q),
            Err(Error::Query {
                code: "PROHIBITED_EMPTY_LIST_IN_CONDITION",
                ..
            })
        ));
        let q = Query::select([fields::campaign::ID])
            .from(fields::Resource::Campaign)
            .limit(0);
        assert!(matches!(
            check(&q),
            Err(Error::Query {
                code: "LIMIT_VALUE_TOO_LOW",
                ..
            })
        ));
        let long = format!(
            "SELECT campaign.id FROM campaign WHERE campaign.name = '{}'",
            "x".repeat(MAX_QUERY_CHARS)
        );
        assert!(matches!(
            check(&Query::text(long)),
            Err(Error::Validation { .. })
        ));
    }
}

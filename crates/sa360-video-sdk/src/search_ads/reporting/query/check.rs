//! A query checked against the field catalogue before it is sent (SR-30): every name in
//! `SELECT`, `WHERE` and `ORDER BY` must be usable in that clause (selectable, filterable,
//! sortable), and selectable with the resource in `FROM` (one of its own fields or of its
//! attributed resources; a metric or segment it allows). A refusal is the [`Error::Query`] with
//! the code the Reporting API gives for it (the `queryError` values of the discovery document).
//!
//! A well-formed name the catalogue does not have may be newer than it (SR-32): what happens to
//! it is [`UnknownFields`]' to say, here and nowhere else. By default it is refused as a typo
//! (with the catalogued name it is near) when a catalogued name is at most [`TYPO_DISTANCE`](fields::TYPO_DISTANCE)
//! edits from it and differs from it in more than digits; any other is sent as it is, named in
//! [`CheckedQuery::unknown`] and in a warning with the catalogue's [`REVISION`].

use super::super::super::error::Error;
use super::super::fields::{self, Category, FieldInfo, REVISION, SelectableWith};
use super::builder::{DuringRange, Query};
use super::clauses::clauses;

/// What the check does with a well-formed name (field, or resource in `FROM`) that the field
/// catalogue does not have: one the service added after [`REVISION`], or a typo (SR-32).
///
/// `#[non_exhaustive]`: match with a wildcard arm.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum UnknownFields {
    /// Refused as a typo (`UNRECOGNIZED_FIELD`, `BAD_RESOURCE_TYPE_IN_FROM_CLAUSE`, with the
    /// catalogued name it is near) when a catalogued name is at most [`TYPO_DISTANCE`](fields::TYPO_DISTANCE) edits from
    /// it and differs from it in more than digits; any other is sent as it is, with a warning.
    #[default]
    RefuseTypos,
    /// Every one sent as it is (with a warning): the service judges it.
    Send,
}

/// A query that passed the check: what would be sent ([`SearchRequest::checked_query`]).
///
/// [`SearchRequest::checked_query`]: super::super::SearchRequest::checked_query
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct CheckedQuery {
    /// The query text sent.
    pub text: String,
    /// The names in `SELECT`, in order: the column names Google's clients give a report's
    /// columns (`campaign.id`, `metrics.clicks`, `custom_columns.id[7]`).
    pub columns: Vec<String>,
    /// The names the catalogue (revision [`REVISION`]) does not have, sent as they are, in
    /// the order of their first use: their values reach a row type that keeps them
    /// ([`WithUnknown`](super::super::WithUnknown), `serde_json::Value`).
    pub unknown: Vec<String>,
}

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
        typo: false,
    }
}

/// Checks `query` (`unknown`: what to do with a name the catalogue does not have).
pub(crate) fn check(query: &Query, unknown: UnknownFields) -> Result<CheckedQuery, Error> {
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
    if let Some(range) = c.during.iter().find(|r| DuringRange::named(r).is_none()) {
        let names = DuringRange::ALL.map(DuringRange::as_str);
        let nearest = names
            .iter()
            .min_by_key(|n| strsim::levenshtein(&range.to_ascii_uppercase(), n))
            .filter(|_| !range.is_empty());
        return Err(refuse(
            "INVALID_VALUE_WITH_DURING_OPERATOR",
            if range.is_empty() { "DURING" } else { range },
            format!(
                "is not a predefined date range of DURING ({})",
                names.join(", ")
            ),
            nearest.copied(),
        ));
    }
    let Some(from) = c.from.as_deref() else {
        return Err(refuse(
            "EXPECTED_FROM",
            "FROM",
            "is missing: a report query names its resource".to_owned(),
            None,
        ));
    };
    let mut checker = Checker {
        from,
        with: None,
        policy: unknown,
        unknown: Vec::new(),
    };
    match fields::resource(from) {
        Some(resource) => checker.with = resource.with,
        None => checker.unknown_name(from, None)?,
    }
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
        checker.field_in(name, Clause::Select)?;
    }
    // A custom column (`custom_columns.id[N]`) is the customer's own: where it may be used is the
    // service's to judge.
    let own = |name: &str| matches!(custom_column_id(name), Some(Some(_)));
    for name in c.filtered.iter().filter(|n| !own(n)) {
        checker.field_in(name, Clause::Where)?;
    }
    for name in c.ordered.iter().filter(|n| !own(n)) {
        checker.field_in(name, Clause::OrderBy)?;
    }
    Ok(CheckedQuery {
        text,
        columns: c.select,
        unknown: checker.unknown,
    })
}

impl Query {
    /// The names in `SELECT`, in order: the column names Google's clients give a report's
    /// columns (`campaign.id`, `metrics.clicks`, `custom_columns.id[7]`). Checked as
    /// [`SearchRequest::stream`](super::super::SearchRequest::stream) checks it with the default
    /// [`UnknownFields`] (its [`checked_query`](super::super::SearchRequest::checked_query) follows the
    /// request's own).
    ///
    /// ```
    /// use sa360_video_sdk::search_ads::reporting::Query;
    /// let query = Query::text("SELECT campaign.id, metrics.clicks FROM campaign");
    /// assert_eq!(query.columns()?, ["campaign.id", "metrics.clicks"]);
    /// assert!(Query::text("SELECT campaign.idd FROM campaign").columns().is_err());
    /// # Ok::<(), sa360_video_sdk::search_ads::Error>(())
    /// ```
    pub fn columns(&self) -> Result<Vec<String>, Error> {
        check(self, UnknownFields::default()).map(|checked| checked.columns)
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

/// What the names of a query are checked against, and the unknown names sent so far.
struct Checker<'q> {
    from: &'q str,
    with: Option<SelectableWith>,
    policy: UnknownFields,
    unknown: Vec<String>,
}

/// Whether `name` is made as the query language's names are: lowercase words of letters, digits
/// and `_`, joined by single dots (`campaign.id`; a resource is one word).
fn well_formed(name: &str) -> bool {
    name.split('.').all(|word| {
        word.starts_with(|c: char| c.is_ascii_lowercase())
            && word
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
    })
}

impl Checker<'_> {
    /// A name the catalogue does not have (`clause`: `None` for the resource in `FROM`): sent, and
    /// remembered, or refused as [`UnknownFields`] says.
    fn unknown_name(&mut self, name: &str, clause: Option<Clause>) -> Result<(), Error> {
        let (code, place, kind) = match clause {
            None => ("BAD_RESOURCE_TYPE_IN_FROM_CLAUSE", "FROM", "resource"),
            Some(clause) => ("UNRECOGNIZED_FIELD", clause.name(), "field"),
        };
        let resource = clause.is_none();
        // A field has a dot; a resource has none.
        if !well_formed(name) || resource == name.contains('.') {
            return Err(refuse(
                code,
                name,
                format!("in {place} is not a {kind} of the Reporting API"),
                fields::nearest(name, resource),
            ));
        }
        if self.policy == UnknownFields::RefuseTypos
            && let Some((near, edits)) = fields::typo_of(name, resource)
        {
            return Err(Error::Query {
                code,
                field: name.to_owned(),
                reason: format!(
                    "in {place} is not in the field catalogue (revision {REVISION}) and is \
                     {edits} edit{} from a {kind} in it",
                    if edits == 1 { "" } else { "s" }
                ),
                suggestion: Some(near.to_owned()),
                typo: true,
            });
        }
        if !self.unknown.iter().any(|n| n == name) {
            self.unknown.push(name.to_owned());
        }
        Ok(())
    }

    fn field_in(&mut self, name: &str, clause: Clause) -> Result<(), Error> {
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
            return self.unknown_name(name, Some(clause));
        };
        usable_in(field, clause, self.from, self.with.as_ref())
    }
}

fn usable_in(
    field: &FieldInfo,
    clause: Clause,
    from: &str,
    with: Option<&SelectableWith>,
) -> Result<(), Error> {
    let name = field.name;
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
    let Some(with) = with.filter(|w| !w.allows(from, field)) else {
        return Ok(());
    };
    match field.category {
        Category::Metric => Err(refuse(
            "PROHIBITED_METRIC_IN_SELECT_OR_WHERE_CLAUSE",
            name,
            format!("cannot be selected with FROM {from}"),
            None,
        )),
        Category::Segment => Err(refuse(
            "PROHIBITED_SEGMENT_IN_SELECT_OR_WHERE_CLAUSE",
            name,
            format!("cannot be selected with FROM {from}"),
            None,
        )),
        _ => {
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
                    "is a field of {}, which FROM {from} cannot select (its attributed \
                     resources: {attributed})",
                    field.group()
                ),
                None,
            ))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn code(text: &str) -> (&'static str, String, Option<String>) {
        match check(&Query::text(text), UnknownFields::default()) {
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
                check(&Query::text(q), UnknownFields::default()).is_ok(),
                "{q}: {:?}",
                check(&Query::text(q), UnknownFields::default())
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
    fn a_during_range_not_in_the_grammar_is_refused_with_the_nearest_name() {
        let q = "SELECT campaign.id FROM campaign WHERE segments.date DURING LAST_31_DAYS";
        assert_eq!(
            code(q),
            (
                "INVALID_VALUE_WITH_DURING_OPERATOR",
                "LAST_31_DAYS".into(),
                Some("LAST_30_DAYS".into())
            )
        );
        let q = "SELECT campaign.id FROM campaign WHERE segments.date during last_week_mon_sun";
        assert!(check(&Query::text(q), UnknownFields::default()).is_ok());
        for range in DuringRange::ALL {
            let q = format!(
                "SELECT campaign.id FROM campaign WHERE segments.date DURING {}",
                range.as_str()
            );
            assert!(
                check(&Query::text(q), UnknownFields::default()).is_ok(),
                "{range:?}"
            );
        }
    }

    #[test]
    fn a_built_query_with_an_unsafe_literal_is_refused() {
        let q = Query::select([fields::campaign::ID])
            .from(fields::Resource::Campaign)
            .where_(fields::campaign::NAME.eq("a\nb"));
        assert!(matches!(
            check(&q, UnknownFields::default()),
            Err(Error::Query {
                code: "PROHIBITED_NEWLINE_IN_STRING",
                ..
            })
        ));
        let q = Query::select([fields::campaign::ID])
            .from(fields::Resource::Campaign)
            .where_(fields::campaign::ID.in_(Vec::<i64>::new()));
        assert!(matches!(
            check(&q, UnknownFields::default()),
            Err(Error::Query {
                code: "PROHIBITED_EMPTY_LIST_IN_CONDITION",
                ..
            })
        ));
        let q = Query::select([fields::campaign::ID])
            .from(fields::Resource::Campaign)
            .limit(0);
        assert!(matches!(
            check(&q, UnknownFields::default()),
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
            check(&Query::text(long), UnknownFields::default()),
            Err(Error::Validation { .. })
        ));
    }

    /// The 19 fields revision 20260810 added, none in revision 20251116 (`cargo xtask discovery
    /// compare`).
    const ADDED_IN_20260810: [&str; 19] = [
        "ad_group_ad.ad.synthetic_content_info.advertiser_attestation.source",
        "ad_group_ad.ad.synthetic_content_info.advertiser_attestation.status",
        "ad_group_ad.ad.synthetic_content_info.system_attestation.source",
        "ad_group_ad.ad.synthetic_content_info.system_attestation.status",
        "asset.synthetic_content_info.advertiser_attestation.source",
        "asset.synthetic_content_info.advertiser_attestation.status",
        "asset.synthetic_content_info.system_attestation.source",
        "asset.synthetic_content_info.system_attestation.status",
        "segments.ad_format_type",
        "segments.geo_target_postal_code",
        "segments.vertical_ads_event_participant_display_names",
        "segments.vertical_ads_hotel_class",
        "segments.vertical_ads_listing",
        "segments.vertical_ads_listing_brand",
        "segments.vertical_ads_listing_city",
        "segments.vertical_ads_listing_country",
        "segments.vertical_ads_listing_region",
        "segments.vertical_ads_partner_account",
        "segments.vertical_ads_vertical",
    ];

    #[test]
    fn the_default_rule_would_have_sent_every_field_the_last_revision_added() {
        let older = || {
            fields::catalogue()
                .iter()
                .map(|f| f.name)
                .filter(|n| !ADDED_IN_20260810.contains(n))
        };
        assert_eq!(older().count() + 19, fields::catalogue().len());
        for name in ADDED_IN_20260810 {
            assert_eq!(fields::typo_among(name, older()), None, "{name}");
        }
    }

    #[test]
    fn a_typo_of_a_known_field_is_refused_with_the_revision_and_the_setting() {
        let error = check(
            &Query::text("SELECT campaign.id, metrics.clikcs FROM campaign"),
            UnknownFields::default(),
        )
        .unwrap_err();
        let Error::Query {
            code: c,
            field,
            suggestion,
            typo,
            ..
        } = &error
        else {
            panic!("{error:?}")
        };
        assert_eq!(
            (*c, field.as_str(), suggestion.as_deref(), *typo),
            (
                "UNRECOGNIZED_FIELD",
                "metrics.clikcs",
                Some("metrics.clicks"),
                true
            )
        );
        let text = error.to_string();
        assert!(text.contains(&format!("(revision {REVISION})")), "{text}");
        assert!(text.contains("is 1 edit from a field in it"), "{text}");
        assert!(text.contains("UnknownFields::Send"), "{text}");
        // In every clause, and for the resource in FROM.
        assert_eq!(
            code("SELECT campaign.id FROM campaign WHERE campaign.stauts = 'ENABLED'").2,
            Some("campaign.status".into())
        );
        assert_eq!(
            code("SELECT campaign.id FROM campaign ORDER BY campaign.nmae").2,
            Some("campaign.name".into())
        );
        assert_eq!(
            code("SELECT campaign.id FROM keyword_veiw").0,
            "BAD_RESOURCE_TYPE_IN_FROM_CLAUSE"
        );
        assert_eq!(
            code("SELECT campaing.id FROM campaign").2,
            Some("campaign.id".into())
        );
    }

    #[test]
    fn a_distant_new_name_is_sent_and_named() {
        let q = "SELECT campaign.id, segments.zz_invented_for_this_test, metrics.clicks \
                 FROM campaign WHERE segments.zz_invented_for_this_test = 'x' \
                 ORDER BY segments.zz_invented_for_this_test";
        let checked = check(&Query::text(q), UnknownFields::default()).unwrap();
        assert_eq!(checked.unknown, ["segments.zz_invented_for_this_test"]);
        assert_eq!(
            checked.columns,
            [
                "campaign.id",
                "segments.zz_invented_for_this_test",
                "metrics.clicks"
            ]
        );
        assert_eq!(checked.text, q);
        // A resource newer than the catalogue, and its fields.
        let checked = check(
            &Query::text("SELECT zz_new_resource.id, metrics.clicks FROM zz_new_resource"),
            UnknownFields::default(),
        )
        .unwrap();
        assert_eq!(checked.unknown, ["zz_new_resource", "zz_new_resource.id"]);
        // A sibling that differs only in its digits is new, not a typo.
        let checked = check(
            &Query::text("SELECT ad_group_ad.ad.expanded_text_ad.headline4 FROM ad_group_ad"),
            UnknownFields::default(),
        )
        .unwrap();
        assert_eq!(
            checked.unknown,
            ["ad_group_ad.ad.expanded_text_ad.headline4"]
        );
        // Known fields are still checked as before beside unknown ones.
        assert_eq!(
            code("SELECT segments.zz_invented_for_this_test, ad_group.id FROM campaign").0,
            "PROHIBITED_RESOURCE_TYPE_IN_SELECT_CLAUSE"
        );
    }

    #[test]
    fn send_sends_a_near_name_too_and_a_malformed_one_never() {
        let near = Query::text("SELECT campaign.id, metrics.clickz FROM campaign");
        assert!(check(&near, UnknownFields::default()).is_err());
        let checked = check(&near, UnknownFields::Send).unwrap();
        assert_eq!(checked.unknown, ["metrics.clickz"]);
        for (q, name) in [
            ("SELECT Campaign.ID FROM campaign", "Campaign.ID"),
            ("SELECT campaign..id FROM campaign", "campaign..id"),
            ("SELECT nothing FROM campaign", "nothing"),
            ("SELECT campaign.id FROM campaign.id", "campaign.id"),
        ] {
            match check(&Query::text(q), UnknownFields::Send) {
                Err(Error::Query { field, typo, .. }) => {
                    assert_eq!((field.as_str(), typo), (name, false), "{q}");
                }
                other => panic!("{q}: {other:?}"),
            }
        }
    }
}

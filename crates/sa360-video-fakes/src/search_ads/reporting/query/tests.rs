//! The rules of [`checks`](super::checks) end to end (text → checked query), and property tests:
//! no input panics the parser, over arbitrary strings and over mutations of valid queries.

use chrono::NaiveDate;
use proptest::prelude::*;

use super::parse;
use super::parser::Op;

fn today() -> NaiveDate {
    "2026-11-26".parse().unwrap()
}

fn code(text: &str) -> &'static str {
    match parse(text, today()) {
        Ok(_) => "OK",
        Err(e) => e.code,
    }
}

const BASE: &str = "SELECT conversion.id, conversion.conversion_date_time FROM conversion";

#[test]
fn the_three_forms_of_issue_26_are_accepted() {
    for q in [
        "SELECT conversion.id, conversion.conversion_date_time FROM conversion \
         WHERE segments.date BETWEEN '2026-11-01' AND '2026-11-25'",
        "SELECT conversion.id FROM conversion WHERE segments.date DURING LAST_30_DAYS",
        "SELECT conversion.id FROM conversion \
         WHERE segments.date >= '2026-11-01' AND segments.date <= '2026-11-25'",
    ] {
        assert_eq!(code(q), "OK", "{q}");
    }
    let q = parse(
        "SELECT conversion.id FROM conversion WHERE segments.date DURING LAST_7_DAYS",
        today(),
    )
    .unwrap();
    assert_eq!(
        (q.bounds.start, q.bounds.end),
        (
            Some("2026-11-19".parse().unwrap()),
            Some("2026-11-25".parse().unwrap())
        )
    );
}

#[test]
fn referenced_fields_follow_the_documented_rule() {
    // Resource and attributed-resource fields need not be selected.
    assert_eq!(
        code(&format!("{BASE} WHERE conversion.status = 'ENABLED'")),
        "OK"
    );
    assert_eq!(code(&format!("{BASE} WHERE campaign.id = 1")), "OK");
    // Core date segments need not be.
    assert_eq!(
        code(&format!("{BASE} WHERE segments.month = '2026-11-01'")),
        "OK"
    );
    // Other segments must be (and are then checked against the resource).
    assert_eq!(
        code(&format!("{BASE} WHERE segments.device = MOBILE")),
        "EXPECTED_REFERENCED_FIELD_IN_SELECT_CLAUSE"
    );
    assert_eq!(
        code("SELECT segments.device FROM conversion WHERE segments.device = MOBILE"),
        "PROHIBITED_SEGMENT_IN_SELECT_OR_WHERE_CLAUSE"
    );
    // ORDER BY fields must be selected.
    assert_eq!(
        code(&format!("{BASE} ORDER BY conversion.status")),
        "EXPECTED_REFERENCED_FIELD_IN_SELECT_CLAUSE"
    );
    assert_eq!(
        code(&format!(
            "{BASE} ORDER BY conversion.id DESC, conversion.conversion_date_time"
        )),
        "OK"
    );
}

#[test]
fn operators_follow_the_data_type() {
    for (cond, expected) in [
        ("conversion.id != 1", "OK"),
        ("conversion.id BETWEEN 1 AND 9", "OK"),
        ("conversion.id NOT IN (1, 2)", "OK"),
        ("conversion.id >= 1", "OK"),
        ("conversion.id LIKE '1%'", "OPERATOR_FIELD_MISMATCH"),
        ("conversion.id = 1.5", "BAD_VALUE"),
        ("conversion.id = 99999999999999999999", "BAD_NUMBER"),
        (
            "conversion.id IN (1, 'a')",
            "PROHIBITED_VALUE_COMBINATION_IN_LIST",
        ),
        ("conversion.click_id LIKE 'EAI%'", "OK"),
        ("conversion.click_id NOT LIKE 'EAI%'", "OK"),
        ("conversion.click_id > 'a'", "OPERATOR_FIELD_MISMATCH"),
        ("conversion.click_id = 1", "INVALID_STRING_VALUE"),
        (
            "conversion.click_id LIKE x",
            "INVALID_VALUE_WITH_LIKE_OPERATOR",
        ),
        (
            "conversion.click_id REGEXP_MATCH 'x'",
            "OPERATOR_FIELD_MISMATCH",
        ),
        ("conversion.click_id IS NULL", "OK"),
        ("conversion.click_id IS NOT NULL", "OK"),
        ("conversion.status IN (ENABLED, \"REMOVED\")", "OK"),
        ("conversion.status != REMOVED", "OK"),
        ("conversion.status = PAUSED", "BAD_ENUM_CONSTANT"),
        ("conversion.status < ENABLED", "OPERATOR_FIELD_MISMATCH"),
        ("customer.manager = TRUE", "OK"),
        ("customer.manager = 1", "BAD_VALUE"),
        ("customer.manager IN (TRUE)", "OPERATOR_FIELD_MISMATCH"),
        (
            "conversion.resource_name = 'x'",
            "PROHIBITED_FIELD_IN_WHERE_CLAUSE",
        ),
        ("segments.date IN ('2026-11-01', '2026-11-02')", "OK"),
        ("segments.date != '2026-11-01'", "OPERATOR_FIELD_MISMATCH"),
        ("segments.date = '2026-11-1'", "INVALID_DATE_FORMAT"),
        (
            "segments.date BETWEEN 'x' AND 'y'",
            "INVALID_VALUE_WITH_BETWEEN_OPERATOR",
        ),
        (
            "segments.date BETWEEN '2026-11-01' AND 3",
            "PROHIBITED_VALUE_COMBINATION_WITH_BETWEEN_OPERATOR",
        ),
        (
            "segments.date DURING LAST_8_DAYS",
            "INVALID_VALUE_WITH_DURING_OPERATOR",
        ),
        (
            "segments.date DURING 'LAST_7_DAYS'",
            "INVALID_VALUE_WITH_DURING_OPERATOR",
        ),
        (
            "segments.date CONTAINS ANY ('2026-11-01')",
            "OPERATOR_FIELD_MISMATCH",
        ),
        ("segments.week = '2026-11-23'", "OK"),
        ("segments.week = '2026-11-24'", "MISALIGNED_DATE_FOR_FILTER"),
        ("segments.quarter >= '2026-10-01'", "OK"),
        (
            "segments.quarter >= '2026-11-01'",
            "MISALIGNED_DATE_FOR_FILTER",
        ),
        ("segments.year = 2026", "OK"),
        (
            "segments.date > '2026-11-20' AND segments.date < '2026-11-10'",
            "DATE_RANGE_TOO_NARROW",
        ),
        ("campaign.name LIKE 'Brand%'", "OK"),
        (
            "metrics.clicks > 1",
            "PROHIBITED_METRIC_IN_SELECT_OR_WHERE_CLAUSE",
        ),
        ("visit.id = 1", "PROHIBITED_RESOURCE_TYPE_IN_WHERE_CLAUSE"),
        ("conversion.nope = 1", "UNRECOGNIZED_FIELD"),
    ] {
        assert_eq!(code(&format!("{BASE} WHERE {cond}")), expected, "{cond}");
    }
}

#[test]
fn date_range_rules() {
    let seg = "SELECT conversion.id, segments.date FROM conversion";
    assert_eq!(code(seg), "EXPECTED_FILTERS_ON_DATE_RANGE");
    assert_eq!(
        code(&format!("{seg} WHERE segments.date >= '2026-11-01'")),
        "EXPECTED_FILTERS_ON_DATE_RANGE"
    );
    assert_eq!(
        code(&format!("{seg} WHERE segments.date DURING LAST_30_DAYS")),
        "OK"
    );
    assert_eq!(
        code(&format!(
            "{seg} WHERE segments.date BETWEEN '2026-10-26' AND '2026-11-25'"
        )),
        "DATE_RANGE_TOO_WIDE"
    );
    // Not segmented by date: no width rule, no filter needed.
    assert_eq!(
        code(&format!(
            "{BASE} WHERE segments.date BETWEEN '2026-09-01' AND '2026-11-25'"
        )),
        "OK"
    );
    assert_eq!(code(BASE), "OK");
    // A selected week needs a date range, and the range of a week counts whole weeks.
    assert_eq!(
        code("SELECT segments.week FROM conversion"),
        "EXPECTED_FILTERS_ON_DATE_RANGE"
    );
    let q = parse(
        "SELECT segments.week FROM conversion WHERE segments.week = '2026-11-16'",
        today(),
    )
    .unwrap();
    assert_eq!(q.bounds.end, Some("2026-11-22".parse().unwrap()));
}

#[test]
fn resources_and_clauses() {
    // Served (SR-22): campaign, keyword_view; a Reporting API resource the fake does not serve
    // is refused.
    assert_eq!(code("SELECT campaign.id FROM campaign"), "OK");
    assert_eq!(
        code("SELECT keyword_view.resource_name FROM keyword_view"),
        "OK"
    );
    assert_eq!(
        code("SELECT customer_client.id FROM customer_client"),
        "PROHIBITED_RESOURCE_TYPE_IN_FROM_CLAUSE"
    );
    assert_eq!(
        code("SELECT campaign.id FROM nothing_here"),
        "BAD_RESOURCE_TYPE_IN_FROM_CLAUSE"
    );
    assert_eq!(code("SELECT conversion.id"), "EXPECTED_FROM");
    assert_eq!(
        code(&format!(
            "{BASE} LIMIT 5 PARAMETERS metrics_currency = 'EUR'"
        )),
        "OK"
    );
    assert_eq!(
        code(&format!("{BASE} PARAMETERS enable_mcc_expansion = true")),
        "OK"
    );
    assert_eq!(
        code(&format!("{BASE} PARAMETERS include_drafts = true")),
        "BAD_PARAMETER_NAME"
    );
    assert_eq!(
        code(&format!("{BASE} PARAMETERS metrics_currency = 5")),
        "BAD_PARAMETER_VALUE"
    );
    assert_eq!(
        code(&format!("{BASE} ORDER BY conversion.resource_name")),
        "EXPECTED_REFERENCED_FIELD_IN_SELECT_CLAUSE"
    );
    assert_eq!(
        code("SELECT conversion.resource_name FROM conversion ORDER BY conversion.resource_name"),
        "PROHIBITED_FIELD_IN_ORDER_BY_CLAUSE"
    );
    assert_eq!(
        code(
            "select conversion.id from conversion where conversion.id = 1 order by conversion.id desc limit 1"
        ),
        "OK"
    );
    let q = parse(
        &format!("{BASE} WHERE campaign.id IN (7) AND conversion.id = 3"),
        today(),
    )
    .unwrap();
    assert_eq!(q.fixed_int("campaign.id").collect::<Vec<_>>(), [7]);
    assert_eq!(q.filters[1].op, Op::Eq);
    assert!(q.natural_order());
    let q = parse(
        &format!("{BASE} ORDER BY conversion.conversion_date_time DESC"),
        today(),
    )
    .unwrap();
    assert!(!q.natural_order());
}

/// Valid queries whose mutations the property test feeds to the parser.
const SEEDS: &[&str] = &[
    "SELECT conversion.id, conversion.conversion_date_time, segments.date, campaign.id FROM conversion \
     WHERE segments.date BETWEEN '2026-11-01' AND '2026-11-25' AND campaign.id IN (1, 2) AND \
     conversion.status = 'ENABLED' ORDER BY conversion.conversion_date_time, conversion.id LIMIT 5",
    "SELECT conversion.id FROM conversion WHERE segments.date DURING LAST_30_DAYS",
    "SELECT conversion.id, conversion.click_id FROM conversion WHERE segments.date >= '2026-11-01' \
     AND segments.date <= '2026-11-25' AND conversion.click_id LIKE \"EAI[_]%\" AND \
     conversion.visit_id IS NOT NULL ORDER BY conversion.click_id DESC PARAMETERS metrics_currency = 'USD'",
    "SELECT segments.month, conversion.id FROM conversion WHERE segments.month = '2026-11-01' AND \
     customer.manager = FALSE AND conversion.id NOT IN (1, 2, 3) AND conversion.id BETWEEN 1 AND 9",
];

/// The pieces `query_shaped_text_never_panics` strings together.
const WORDS: &[&str] = &[
    "SELECT",
    "FROM",
    "WHERE",
    "AND",
    "OR",
    "ORDER",
    "BY",
    "LIMIT",
    "PARAMETERS",
    "DURING",
    "BETWEEN",
    "IN",
    "NOT",
    "IS",
    "NULL",
    "LIKE",
    "CONTAINS",
    "ANY",
    "ASC",
    "DESC",
    "conversion",
    "campaign",
    "conversion.id",
    "conversion.status",
    "conversion.click_id",
    "segments.date",
    "segments.week",
    "segments.year",
    "campaign.id",
    "metrics.clicks",
    "LAST_7_DAYS",
    "ENABLED",
    "'2026-11-01'",
    "'2026-11-3'",
    "\"x\"",
    "'%[_]'",
    "0",
    "-1",
    "1.5",
    "99999999999999999999",
    "(",
    ")",
    ",",
    "=",
    "!=",
    "<=",
    ">=",
    "<",
    ">",
    "'",
    "\"",
    "\\",
    "\n",
];

/// Proptest cases per property (reported in the issue's closing note).
const CASES: u32 = 4096;

proptest! {
    #![proptest_config(ProptestConfig::with_cases(CASES))]

    #[test]
    fn arbitrary_text_never_panics(text in "\\PC{0,200}") {
        let _ = parse(&text, today());
    }

    #[test]
    fn query_shaped_text_never_panics(
        words in proptest::collection::vec(
            (prop::sample::select(WORDS), prop::sample::select(&[" ", "", "  "][..])),
            0..40,
        )
    ) {
        let text: String = words.iter().flat_map(|(w, sep)| [*w, *sep]).collect();
        let _ = parse(&text, today());
    }

    #[test]
    fn mutated_valid_queries_never_panic(
        seed in 0..SEEDS.len(),
        edits in proptest::collection::vec((any::<prop::sample::Index>(), 0u8..4, "\\PC{0,3}"), 1..6),
    ) {
        let mut text: Vec<char> = SEEDS[seed].chars().collect();
        for (at, kind, insert) in edits {
            let i = at.index(text.len() + 1);
            match kind {
                0 => { text.splice(i..i, insert.chars()); }
                1 if i < text.len() => { text.remove(i); }
                2 if i < text.len() => { text.truncate(i); }
                _ => { let j = (i + 5).min(text.len()); text.splice(i..j, insert.chars()); }
            }
        }
        let text: String = text.into_iter().collect();
        let _ = parse(&text, today());
    }
}

#[test]
fn the_seeds_are_valid() {
    for q in SEEDS {
        assert_eq!(code(q), "OK", "{q}");
    }
}

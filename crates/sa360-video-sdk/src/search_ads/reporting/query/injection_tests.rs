//! The query builder never lets input change the query's structure: with any text filter (quotes,
//! backslashes, `OR`, `--`, semicolons, parentheses, newlines), the query tokenizes — by an
//! independent tokenizer of the query language's lexical rules — into exactly the tokens of the
//! same query with a harmless value, except the one string literal, which decodes back to the
//! input. Text with a line break or another control character is refused before sending.

use super::filters::{ConversionStatus, ReportFilters, conversion_query};
use crate::search_ads::error::Error;
use crate::search_ads::values::CampaignId;
use chrono::NaiveDate;
use proptest::prelude::*;

#[derive(Debug, Clone, PartialEq, Eq)]
enum Token {
    Word(String),
    Number(String),
    Str(String),
    Punct(char),
}

/// Single- or double-quoted strings with backslash escapes; words; numbers; punctuation.
fn tokenize(q: &str) -> Result<Vec<Token>, String> {
    let chars: Vec<char> = q.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c.is_whitespace() {
            i += 1;
        } else if c == '\'' || c == '"' {
            let mut s = String::new();
            i += 1;
            loop {
                let Some(&d) = chars.get(i) else {
                    return Err("unterminated string".into());
                };
                i += 1;
                if d == '\\' {
                    let Some(&e) = chars.get(i) else {
                        return Err("dangling escape".into());
                    };
                    s.push(e);
                    i += 1;
                } else if d == c {
                    break;
                } else if d == '\n' || d == '\r' {
                    return Err("newline in string".into());
                } else {
                    s.push(d);
                }
            }
            out.push(Token::Str(s));
        } else if c.is_ascii_digit() {
            let start = i;
            while chars.get(i).is_some_and(char::is_ascii_digit) {
                i += 1;
            }
            out.push(Token::Number(chars[start..i].iter().collect()));
        } else if c.is_alphanumeric() || c == '_' {
            let start = i;
            while chars
                .get(i)
                .is_some_and(|c| c.is_alphanumeric() || *c == '_' || *c == '.')
            {
                i += 1;
            }
            out.push(Token::Word(chars[start..i].iter().collect()));
        } else {
            out.push(Token::Punct(c));
            i += 1;
        }
    }
    Ok(out)
}

fn day() -> NaiveDate {
    NaiveDate::from_ymd_opt(2026, 11, 1).expect("date")
}

fn query_with(texts: Vec<String>) -> String {
    let filters = ReportFilters::default()
        .campaign_ids(vec![CampaignId::new(7)])
        .statuses(vec![ConversionStatus::Enabled])
        .advertiser_conversion_ids(texts);
    conversion_query(day(), day(), &filters).to_string()
}

fn hostile() -> impl Strategy<Value = String> {
    let pieces = prop_oneof![
        Just("'".to_owned()),
        Just("\"".to_owned()),
        Just("\\".to_owned()),
        Just(" OR ".to_owned()),
        Just("--".to_owned()),
        Just(";".to_owned()),
        Just(")".to_owned()),
        Just("(".to_owned()),
        Just(" AND conversion.id = 1".to_owned()),
        Just("é".to_owned()),
        "[a-z0-9 =,]{0,4}",
    ];
    proptest::collection::vec(pieces, 0..12).prop_map(|v| v.concat())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2_000, ..ProptestConfig::default() })]

    #[test]
    fn text_never_changes_the_structure(texts in proptest::collection::vec(hostile(), 1..4)) {
        let filters = ReportFilters::default().advertiser_conversion_ids(texts.clone());
        prop_assert!(filters.validate().is_ok());
        let harmless = vec!["x".to_owned(); texts.len()];
        let reference = tokenize(&query_with(harmless)).expect("tokenizes");
        let tokens = tokenize(&query_with(texts.clone())).expect("tokenizes");
        prop_assert_eq!(tokens.len(), reference.len());
        let mut literals = Vec::new();
        for (got, want) in tokens.iter().zip(&reference) {
            match (got, want) {
                (Token::Str(s), Token::Str(x)) if x == "x" => literals.push(s.clone()),
                _ => prop_assert_eq!(got, want),
            }
        }
        prop_assert_eq!(literals, texts);
    }

    #[test]
    fn line_breaks_and_control_characters_are_refused(
        before in hostile(),
        control in prop_oneof![Just('\n'), Just('\r'), Just('\0'), Just('\u{1b}'), Just('\u{85}')],
        after in hostile(),
    ) {
        let filters = ReportFilters::default().advertiser_conversion_ids(vec![format!("{before}{control}{after}")]);
        let e = filters.validate().unwrap_err();
        let is_validation = matches!(&e, Error::Validation { field, index: Some(0), .. } if field == "advertiser_conversion_ids");
        prop_assert!(is_validation, "{}", e);
    }
}

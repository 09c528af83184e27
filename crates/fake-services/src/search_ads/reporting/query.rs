//! The Search Ads 360 Query Language subset the fake understands.
//!
//! ```text
//! SELECT field (, field)* FROM conversion
//!   WHERE cond (AND cond)*
//!   [ORDER BY conversion.conversion_date_time [ASC], conversion.id [ASC]]
//!   [LIMIT n]
//! cond := field (= | IN | BETWEEN) ...
//! ```
//!
//! `segments.date` takes `BETWEEN 'yyyy-mm-dd' AND 'yyyy-mm-dd'` or `= 'yyyy-mm-dd'`; the id fields
//! (`campaign.id`, `ad_group.id`, `conversion.ad_id`, `conversion.criterion_id`, `conversion.id`)
//! take `=` or `IN` with integers; `conversion.status` takes `=` or `IN` with strings. Anything else
//! is a `QueryError` with the code the real service uses for it (GRAM, SR-9). Strings are single or
//! double quoted with backslash escapes (`\\`, `\'`, `\"`); a raw newline inside one is
//! `PROHIBITED_NEWLINE_IN_STRING`.

use chrono::NaiveDate;

/// A query error: the `queryError` code, a message and the offending text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct QueryError {
    pub code: &'static str,
    pub message: String,
    pub trigger: Option<String>,
}

impl QueryError {
    fn new(code: &'static str, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
            trigger: None,
        }
    }

    /// `DATE_RANGE_TOO_WIDE`: a query segmented by date spans `days` days, more than 30.
    pub(crate) fn too_wide(days: i64) -> Self {
        Self::new(
            "DATE_RANGE_TOO_WIDE",
            format!(
                "Date filters fail to restrict date to a range smaller than 31 days ({days} days). \
                 Applicable if the query is segmented by date."
            ),
        )
    }

    fn at(mut self, trigger: impl Into<String>) -> Self {
        self.trigger = Some(trigger.into());
        self
    }
}

#[derive(Clone, Debug, PartialEq)]
enum Token {
    Word(String),
    Number(i64),
    Str(String),
    Comma,
    Open,
    Close,
    Eq,
    NotEq,
    Star,
}

fn describe(token: &Token) -> String {
    match token {
        Token::Word(w) => w.clone(),
        Token::Number(n) => n.to_string(),
        Token::Str(s) => format!("'{s}'"),
        Token::Comma => ",".into(),
        Token::Open => "(".into(),
        Token::Close => ")".into(),
        Token::Eq => "=".into(),
        Token::NotEq => "!=".into(),
        Token::Star => "*".into(),
    }
}

fn tokenize(text: &str) -> Result<Vec<Token>, QueryError> {
    let mut tokens = Vec::new();
    let chars: Vec<char> = text.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        match c {
            c if c.is_whitespace() => i += 1,
            ',' => {
                tokens.push(Token::Comma);
                i += 1;
            }
            '(' => {
                tokens.push(Token::Open);
                i += 1;
            }
            ')' => {
                tokens.push(Token::Close);
                i += 1;
            }
            '*' => {
                tokens.push(Token::Star);
                i += 1;
            }
            '=' => {
                tokens.push(Token::Eq);
                i += 1;
            }
            '!' if chars.get(i + 1) == Some(&'=') => {
                tokens.push(Token::NotEq);
                i += 2;
            }
            '\'' | '"' => {
                let quote = c;
                let mut value = String::new();
                i += 1;
                loop {
                    let Some(&c) = chars.get(i) else {
                        return Err(QueryError::new(
                            "STRING_NOT_TERMINATED",
                            "A string literal is not terminated.",
                        )
                        .at(value));
                    };
                    i += 1;
                    match c {
                        '\n' | '\r' => {
                            return Err(QueryError::new(
                                "PROHIBITED_NEWLINE_IN_STRING",
                                "A string literal contains a newline.",
                            )
                            .at(value));
                        }
                        '\\' => {
                            let escaped = chars.get(i).copied();
                            i += 1;
                            match escaped {
                                Some(e @ ('\\' | '\'' | '"')) => value.push(e),
                                other => {
                                    return Err(QueryError::new(
                                        "BAD_ESCAPE_SEQUENCE",
                                        "Invalid escape sequence in a string literal.",
                                    )
                                    .at(format!(
                                        "\\{}",
                                        other.map(String::from).unwrap_or_default()
                                    )));
                                }
                            }
                        }
                        c if c == quote => break,
                        c => value.push(c),
                    }
                }
                tokens.push(Token::Str(value));
            }
            c if c.is_ascii_digit()
                || (c == '-' && chars.get(i + 1).is_some_and(char::is_ascii_digit)) =>
            {
                let start = i;
                i += 1;
                while chars.get(i).is_some_and(char::is_ascii_digit) {
                    i += 1;
                }
                let text: String = chars[start..i].iter().collect();
                let n = text.parse().map_err(|_| {
                    QueryError::new("BAD_NUMBER", "A number is out of range.").at(text.clone())
                })?;
                tokens.push(Token::Number(n));
            }
            c if c.is_ascii_alphabetic() || c == '_' => {
                let start = i;
                while chars
                    .get(i)
                    .is_some_and(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == '.')
                {
                    i += 1;
                }
                tokens.push(Token::Word(chars[start..i].iter().collect()));
            }
            other => {
                return Err(
                    QueryError::new("BAD_SYMBOL", format!("Unexpected symbol {other:?}."))
                        .at(other.to_string()),
                );
            }
        }
    }
    Ok(tokens)
}

/// The fields a `FROM conversion` query may select here.
pub(crate) const SELECTABLE: &[&str] = &[
    "conversion.ad_id",
    "conversion.advertiser_conversion_id",
    "conversion.asset_field_type",
    "conversion.asset_id",
    "conversion.attribution_type",
    "conversion.click_id",
    "conversion.conversion_date_time",
    "conversion.conversion_last_modified_date_time",
    "conversion.conversion_quantity",
    "conversion.conversion_revenue_micros",
    "conversion.conversion_visit_date_time",
    "conversion.criterion_id",
    "conversion.floodlight_order_id",
    "conversion.floodlight_original_revenue",
    "conversion.id",
    "conversion.merchant_id",
    "conversion.product_channel",
    "conversion.product_country_code",
    "conversion.product_id",
    "conversion.product_language_code",
    "conversion.product_store_id",
    "conversion.resource_name",
    "conversion.status",
    "conversion.visit_id",
    "segments.date",
    "customer.id",
    "customer.resource_name",
    "customer.descriptive_name",
    "customer.currency_code",
    "customer.time_zone",
    "customer.manager_id",
    "customer.engine_id",
    "campaign.id",
    "campaign.resource_name",
    "ad_group.id",
    "ad_group.resource_name",
];

/// Integer-valued fields that may be filtered with `=` / `IN`.
pub(crate) const ID_FILTERS: &[&str] = &[
    "campaign.id",
    "ad_group.id",
    "conversion.ad_id",
    "conversion.criterion_id",
    "conversion.id",
];

/// String-valued fields that may be filtered with `=` / `IN`.
pub(crate) const TEXT_FILTERS: &[&str] = &["conversion.advertiser_conversion_id"];

/// A parsed conversion query.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct ConversionQuery {
    /// Selected fields, in order (query names, snake_case).
    pub select: Vec<String>,
    /// `segments.date` from, inclusive.
    pub start: NaiveDate,
    /// `segments.date` to, inclusive.
    pub end: NaiveDate,
    /// Per id field, each condition's allowed values (all must hold).
    pub ids: Vec<(String, Vec<i64>)>,
    /// Each `conversion.status` condition's allowed values.
    pub status: Vec<Vec<String>>,
    /// Per text field, each condition's allowed values.
    pub texts: Vec<(String, Vec<String>)>,
    /// `LIMIT`.
    pub limit: Option<u64>,
}

struct Parser {
    tokens: Vec<Token>,
    pos: usize,
}

impl Parser {
    fn peek(&self) -> Option<&Token> {
        self.tokens.get(self.pos)
    }

    fn next(&mut self) -> Result<Token, QueryError> {
        let token = self.tokens.get(self.pos).cloned().ok_or_else(|| {
            QueryError::new("UNEXPECTED_END_OF_QUERY", "The query ended unexpectedly.")
        })?;
        self.pos += 1;
        Ok(token)
    }

    fn keyword(&mut self, word: &str, code: &'static str) -> Result<(), QueryError> {
        match self.next()? {
            Token::Word(w) if w.eq_ignore_ascii_case(word) => Ok(()),
            other => Err(QueryError::new(code, format!("Expected {word}.")).at(describe(&other))),
        }
    }

    fn is_keyword(&self, word: &str) -> bool {
        matches!(self.peek(), Some(Token::Word(w)) if w.eq_ignore_ascii_case(word))
    }

    fn field(&mut self) -> Result<String, QueryError> {
        match self.next()? {
            Token::Word(w)
                if w.starts_with(|c: char| c.is_ascii_lowercase()) && !is_reserved(&w) =>
            {
                Ok(w)
            }
            other => {
                Err(QueryError::new("BAD_FIELD_NAME", "Expected a field name.")
                    .at(describe(&other)))
            }
        }
    }
}

fn is_reserved(word: &str) -> bool {
    [
        "select",
        "from",
        "where",
        "and",
        "or",
        "order",
        "by",
        "limit",
        "in",
        "between",
        "not",
        "like",
        "asc",
        "desc",
        "during",
        "is",
        "null",
        "parameters",
    ]
    .iter()
    .any(|k| k.eq_ignore_ascii_case(word))
}

fn date(token: &Token) -> Result<NaiveDate, QueryError> {
    match token {
        Token::Str(s) => NaiveDate::parse_from_str(s, "%Y-%m-%d")
            .ok()
            .filter(|_| s.len() == 10)
            .ok_or_else(|| {
                QueryError::new("INVALID_DATE_FORMAT", "Dates must be 'YYYY-MM-DD'.").at(s.clone())
            }),
        other => Err(
            QueryError::new("INVALID_DATE_FORMAT", "Dates must be 'YYYY-MM-DD'.")
                .at(describe(other)),
        ),
    }
}

/// Parses `text`; any construct outside the subset is a [`QueryError`].
pub(crate) fn parse(text: &str) -> Result<ConversionQuery, QueryError> {
    let mut p = Parser {
        tokens: tokenize(text)?,
        pos: 0,
    };
    p.keyword("SELECT", "EXPECTED_SELECT")?;
    let mut select = vec![p.field()?];
    while p.peek() == Some(&Token::Comma) {
        p.pos += 1;
        select.push(p.field()?);
    }
    for field in &select {
        if !SELECTABLE.contains(&field.as_str()) {
            return Err(QueryError::new(
                "UNRECOGNIZED_FIELD",
                format!("Unrecognized field in the query: '{field}'."),
            )
            .at(field.clone()));
        }
    }
    p.keyword("FROM", "EXPECTED_FROM")?;
    match p.next()? {
        Token::Word(w) if w == "conversion" => {}
        Token::Word(w) => {
            return Err(QueryError::new(
                "PROHIBITED_RESOURCE_TYPE_IN_FROM_CLAUSE",
                format!("This fake serves only FROM conversion, not '{w}'."),
            )
            .at(w));
        }
        other => {
            return Err(QueryError::new(
                "BAD_RESOURCE_TYPE_IN_FROM_CLAUSE",
                "Expected a resource name after FROM.",
            )
            .at(describe(&other)));
        }
    }
    let mut dates: Option<(NaiveDate, NaiveDate)> = None;
    let mut ids: Vec<(String, Vec<i64>)> = Vec::new();
    let mut status = Vec::new();
    let mut texts: Vec<(String, Vec<String>)> = Vec::new();
    let mut referenced = Vec::new();
    if p.is_keyword("WHERE") {
        p.pos += 1;
        loop {
            let field = p.field()?;
            referenced.push(field.clone());
            let op = p.next()?;
            match (field.as_str(), &op) {
                ("segments.date", Token::Word(w)) if w.eq_ignore_ascii_case("BETWEEN") => {
                    let from = date(&p.next()?)?;
                    p.keyword("AND", "EXPECTED_AND")?;
                    let to = date(&p.next()?)?;
                    if to < from {
                        return Err(QueryError::new(
                            "INVALID_VALUE_WITH_BETWEEN_OPERATOR",
                            "The second date of BETWEEN is before the first.",
                        ));
                    }
                    dates = Some(intersect(dates, (from, to)));
                }
                ("segments.date", Token::Eq) => {
                    let day = date(&p.next()?)?;
                    dates = Some(intersect(dates, (day, day)));
                }
                (f, Token::Eq) if ID_FILTERS.contains(&f) => match p.next()? {
                    Token::Number(n) => ids.push((field.clone(), vec![n])),
                    other => {
                        return Err(QueryError::new("BAD_VALUE", "Expected an integer.")
                            .at(describe(&other)));
                    }
                },
                (f, Token::Word(w)) if ID_FILTERS.contains(&f) && w.eq_ignore_ascii_case("IN") => {
                    let values = list(&mut p, |t| match t {
                        Token::Number(n) => Some(n),
                        _ => None,
                    })?;
                    ids.push((field.clone(), values));
                }
                ("conversion.status", Token::Eq) => match p.next()? {
                    Token::Str(s) => status.push(vec![enum_value(s)?]),
                    other => {
                        return Err(
                            QueryError::new("BAD_VALUE", "Expected a string.").at(describe(&other))
                        );
                    }
                },
                ("conversion.status", Token::Word(w)) if w.eq_ignore_ascii_case("IN") => {
                    let values = list(&mut p, |t| match t {
                        Token::Str(s) => Some(s),
                        _ => None,
                    })?;
                    status.push(
                        values
                            .into_iter()
                            .map(enum_value)
                            .collect::<Result<_, _>>()?,
                    );
                }
                (f, Token::Eq) if TEXT_FILTERS.contains(&f) => match p.next()? {
                    Token::Str(s) => texts.push((field.clone(), vec![s])),
                    other => {
                        return Err(
                            QueryError::new("BAD_VALUE", "Expected a string.").at(describe(&other))
                        );
                    }
                },
                (f, Token::Word(w))
                    if TEXT_FILTERS.contains(&f) && w.eq_ignore_ascii_case("IN") =>
                {
                    let values = list(&mut p, |t| match t {
                        Token::Str(s) => Some(s),
                        _ => None,
                    })?;
                    texts.push((field.clone(), values));
                }
                (f, _) if SELECTABLE.contains(&f) => {
                    return Err(QueryError::new(
                        "BAD_OPERATOR",
                        format!("This fake does not support {} on '{f}'.", describe(&op)),
                    )
                    .at(describe(&op)));
                }
                (f, _) => {
                    return Err(QueryError::new(
                        "UNRECOGNIZED_FIELD",
                        format!("Unrecognized field in the query: '{f}'."),
                    )
                    .at(f.to_owned()));
                }
            }
            if p.is_keyword("AND") {
                p.pos += 1;
            } else {
                break;
            }
        }
    }
    if p.is_keyword("ORDER") {
        p.pos += 1;
        p.keyword("BY", "EXPECTED_BY")?;
        let mut order = Vec::new();
        loop {
            let field = p.field()?;
            referenced.push(field.clone());
            if p.is_keyword("ASC") {
                p.pos += 1;
            }
            order.push(field);
            if p.peek() == Some(&Token::Comma) {
                p.pos += 1;
            } else {
                break;
            }
        }
        let natural = ["conversion.conversion_date_time", "conversion.id"];
        if order
            .iter()
            .map(String::as_str)
            .ne(natural.iter().copied().take(order.len()))
        {
            return Err(QueryError::new(
                "PROHIBITED_FIELD_IN_ORDER_BY_CLAUSE",
                "This fake orders only by conversion.conversion_date_time, conversion.id (ascending).",
            )
            .at(order.join(", ")));
        }
    }
    let mut limit = None;
    if p.is_keyword("LIMIT") {
        p.pos += 1;
        match p.next()? {
            Token::Number(n) if n > 0 => limit = Some(n as u64),
            Token::Number(n) => {
                return Err(
                    QueryError::new("LIMIT_VALUE_TOO_LOW", "LIMIT must be positive.")
                        .at(n.to_string()),
                );
            }
            other => {
                return Err(
                    QueryError::new("BAD_LIMIT_VALUE", "LIMIT takes an integer.")
                        .at(describe(&other)),
                );
            }
        }
    }
    if let Some(extra) = p.peek() {
        return Err(
            QueryError::new("UNEXPECTED_INPUT", "Unexpected input after the query.")
                .at(describe(extra)),
        );
    }
    for field in &referenced {
        if !select.contains(field) {
            return Err(QueryError::new(
                "EXPECTED_REFERENCED_FIELD_IN_SELECT_CLAUSE",
                format!("'{field}' is used in WHERE or ORDER BY but not selected."),
            )
            .at(field.clone()));
        }
    }
    let Some((start, end)) = dates else {
        return Err(QueryError::new(
            "EXPECTED_FILTERS_ON_DATE_RANGE",
            "A conversion query needs a segments.date filter.",
        ));
    };
    Ok(ConversionQuery {
        select,
        start,
        end,
        ids,
        status,
        texts,
        limit,
    })
}

fn intersect(
    current: Option<(NaiveDate, NaiveDate)>,
    (from, to): (NaiveDate, NaiveDate),
) -> (NaiveDate, NaiveDate) {
    match current {
        None => (from, to),
        Some((a, b)) => (a.max(from), b.min(to)),
    }
}

fn enum_value(s: String) -> Result<String, QueryError> {
    if ["ENABLED", "REMOVED", "UNKNOWN", "UNSPECIFIED"].contains(&s.as_str()) {
        Ok(s)
    } else {
        Err(QueryError::new(
            "BAD_ENUM_CONSTANT",
            "conversion.status is ENABLED or REMOVED.",
        )
        .at(s))
    }
}

fn list<T>(p: &mut Parser, item: impl Fn(Token) -> Option<T>) -> Result<Vec<T>, QueryError> {
    match p.next()? {
        Token::Open => {}
        other => return Err(QueryError::new("EXPECTED_LIST", "Expected '('.").at(describe(&other))),
    }
    let mut values = Vec::new();
    loop {
        let token = p.next()?;
        if token == Token::Close && values.is_empty() {
            return Err(QueryError::new(
                "PROHIBITED_EMPTY_LIST_IN_CONDITION",
                "A list must not be empty.",
            ));
        }
        let shown = describe(&token);
        values.push(
            item(token)
                .ok_or_else(|| QueryError::new("BAD_VALUE", "Unexpected list value.").at(shown))?,
        );
        match p.next()? {
            Token::Comma => {}
            Token::Close => break,
            other => {
                return Err(
                    QueryError::new("EXPECTED_LIST", "Expected ',' or ')'.").at(describe(&other))
                );
            }
        }
    }
    if values.len() > 10_000 {
        return Err(QueryError::new(
            "FILTER_HAS_TOO_MANY_VALUES",
            "A list holds at most 10,000 values.",
        ));
    }
    Ok(values)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(s: &str) -> NaiveDate {
        NaiveDate::parse_from_str(s, "%Y-%m-%d").unwrap()
    }

    #[test]
    fn parses_the_facade_query() {
        let q = parse(
            "SELECT conversion.id, conversion.conversion_date_time, segments.date, campaign.id, \
             conversion.status FROM conversion WHERE segments.date BETWEEN '2026-10-01' AND \
             '2026-10-31' AND campaign.id IN (1, 2) AND conversion.status = 'ENABLED' ORDER BY \
             conversion.conversion_date_time, conversion.id LIMIT 5",
        )
        .unwrap();
        assert_eq!((q.start, q.end), (d("2026-10-01"), d("2026-10-31")));
        assert_eq!(q.ids, vec![("campaign.id".to_owned(), vec![1, 2])]);
        assert_eq!(q.status, vec![vec!["ENABLED".to_owned()]]);
        assert_eq!(q.limit, Some(5));
    }

    #[test]
    fn rejects_what_it_does_not_know() {
        let code = |q: &str| parse(q).unwrap_err().code;
        let base = "SELECT conversion.id, segments.date FROM conversion WHERE segments.date = '2026-10-01'";
        assert_eq!(
            code(&format!("{base} OR conversion.id = 1")),
            "UNEXPECTED_INPUT"
        );
        assert_eq!(
            code(&format!("{base} AND conversion.id = 1 -- x")),
            "BAD_SYMBOL"
        );
        assert_eq!(
            code("SELECT conversion.id FROM visit WHERE segments.date = '2026-10-01'"),
            "PROHIBITED_RESOURCE_TYPE_IN_FROM_CLAUSE"
        );
        assert_eq!(
            code("SELECT conversion.id FROM conversion"),
            "EXPECTED_FILTERS_ON_DATE_RANGE"
        );
        assert_eq!(
            code("SELECT conversion.id FROM conversion WHERE segments.date = '2026-10-01'"),
            "EXPECTED_REFERENCED_FIELD_IN_SELECT_CLAUSE"
        );
        assert_eq!(
            code(&format!("{base} AND conversion.status = 'EN\nABLED'")),
            "PROHIBITED_NEWLINE_IN_STRING"
        );
        assert_eq!(
            code(&format!("{base} AND conversion.status = 'x")),
            "STRING_NOT_TERMINATED"
        );
        assert_eq!(code("SELECT nope FROM conversion"), "UNRECOGNIZED_FIELD");
        assert_eq!(code(&format!("{base} LIMIT 0")), "LIMIT_VALUE_TOO_LOW");
        assert_eq!(code("SELECT"), "UNEXPECTED_END_OF_QUERY");
    }

    #[test]
    fn escaped_quotes_stay_inside_the_string() {
        let err = parse(
            "SELECT conversion.status, segments.date FROM conversion WHERE segments.date = '2026-10-01' AND conversion.status = 'a\\' OR 1 = 1'",
        )
        .unwrap_err();
        assert_eq!(err.code, "BAD_ENUM_CONSTANT");
        assert_eq!(err.trigger.as_deref(), Some("a' OR 1 = 1"));
    }
}

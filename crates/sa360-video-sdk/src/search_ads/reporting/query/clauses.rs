//! A query's clauses as the check needs them: the names in `SELECT`, `FROM`, `WHERE` and
//! `ORDER BY`, read from its text with the query language's tokens (Google's "Query grammar
//! reference", <https://developers.google.com/search-ads/reporting/query/query-grammar>). Only the
//! clause structure is read; what the values of a condition may be is the service's to judge,
//! except where a mistake is certain (an unterminated string).

/// The clauses of a query: names as written.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct Clauses {
    pub select: Vec<String>,
    pub from: Option<String>,
    pub filtered: Vec<String>,
    pub ordered: Vec<String>,
    /// The values after each `DURING`, as written (empty when it is not a name).
    pub during: Vec<String>,
}

/// A query whose clause structure cannot be read: the service's code, the text at fault, why.
pub(crate) type Refusal = (&'static str, String, String);

#[derive(Debug, Clone, PartialEq, Eq)]
enum Token {
    /// A field, resource, keyword or enum name (`campaign.id`, `custom_columns.id[3]`, `AND`).
    Name(String),
    /// A quoted string or a number.
    Value,
    /// `,`, `(`, `)`, an operator.
    Symbol(String),
}

fn tokens(text: &str) -> Result<Vec<Token>, Refusal> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c.is_whitespace() {
            i += 1;
        } else if c.is_ascii_alphabetic() || c == '_' {
            let start = i;
            while i < chars.len()
                && (chars[i].is_ascii_alphanumeric() || chars[i] == '_' || chars[i] == '.')
            {
                i += 1;
            }
            // custom_columns.id[123]
            if chars.get(i) == Some(&'[') {
                while i < chars.len() && chars[i] != ']' {
                    i += 1;
                }
                i = (i + 1).min(chars.len());
            }
            out.push(Token::Name(chars[start..i].iter().collect()));
        } else if c == '\'' || c == '"' {
            let start = i;
            i += 1;
            loop {
                match chars.get(i) {
                    None => {
                        return Err((
                            "STRING_NOT_TERMINATED",
                            chars[start..].iter().take(40).collect(),
                            "is a string without its closing quote".to_owned(),
                        ));
                    }
                    Some('\\') => i += 2,
                    Some(&q) if q == c => {
                        i += 1;
                        break;
                    }
                    Some(_) => i += 1,
                }
            }
            out.push(Token::Value);
        } else if c.is_ascii_digit()
            || (c == '-' && chars.get(i + 1).is_some_and(char::is_ascii_digit))
        {
            i += 1;
            while i < chars.len() && (chars[i].is_ascii_alphanumeric() || chars[i] == '.') {
                i += 1;
            }
            out.push(Token::Value);
        } else if matches!(c, '!' | '<' | '>' | '=') {
            let two = chars.get(i + 1) == Some(&'=');
            let symbol: String = chars[i..i + if two { 2 } else { 1 }].iter().collect();
            i += symbol.len();
            out.push(Token::Symbol(symbol));
        } else if matches!(c, ',' | '(' | ')') {
            out.push(Token::Symbol(c.to_string()));
            i += 1;
        } else if !c.is_ascii() {
            return Err((
                "BAD_SYMBOL",
                c.to_string(),
                "is a non-ASCII symbol outside a string".to_owned(),
            ));
        } else {
            return Err((
                "UNEXPECTED_INPUT",
                c.to_string(),
                "is not a symbol of the query language".to_owned(),
            ));
        }
    }
    Ok(out)
}

fn is_keyword(token: &Token, keyword: &str) -> bool {
    matches!(token, Token::Name(n) if n.eq_ignore_ascii_case(keyword))
}

fn is_clause_start(token: &Token) -> bool {
    ["FROM", "WHERE", "ORDER", "LIMIT", "PARAMETERS"]
        .iter()
        .any(|k| is_keyword(token, k))
}

/// Reads the clauses of `text`.
pub(crate) fn clauses(text: &str) -> Result<Clauses, Refusal> {
    let tokens = tokens(text)?;
    let mut it = tokens.iter().peekable();
    let mut out = Clauses::default();
    if !it.next().is_some_and(|t| is_keyword(t, "SELECT")) {
        return Err((
            "EXPECTED_SELECT",
            text.chars().take(40).collect(),
            "does not begin with SELECT".to_owned(),
        ));
    }
    while let Some(t) = it.peek() {
        if is_clause_start(t) {
            break;
        }
        match it.next() {
            Some(Token::Name(n)) => out.select.push(n.clone()),
            Some(Token::Symbol(s)) if s == "," => {}
            _ => {
                return Err((
                    "UNEXPECTED_INPUT",
                    "SELECT".to_owned(),
                    "lists something that is not a field name".to_owned(),
                ));
            }
        }
    }
    while let Some(t) = it.next() {
        if is_keyword(t, "FROM") {
            match it.next() {
                Some(Token::Name(n)) => out.from = Some(n.clone()),
                _ => {
                    return Err((
                        "EXPECTED_FROM",
                        "FROM".to_owned(),
                        "names no resource".to_owned(),
                    ));
                }
            }
        } else if is_keyword(t, "WHERE") {
            let mut expect_field = true;
            let mut between = false;
            let mut depth = 0usize;
            while let Some(t) = it.peek() {
                if depth == 0 && is_clause_start(t) && !is_keyword(t, "FROM") {
                    break;
                }
                let t = it.next().expect("peeked");
                match t {
                    Token::Symbol(s) if s == "(" => depth += 1,
                    Token::Symbol(s) if s == ")" => depth = depth.saturating_sub(1),
                    Token::Name(n) if n.eq_ignore_ascii_case("DURING") => {
                        out.during.push(match it.peek() {
                            Some(Token::Name(range)) => range.clone(),
                            _ => String::new(),
                        });
                    }
                    Token::Name(n) if depth == 0 && n.eq_ignore_ascii_case("BETWEEN") => {
                        between = true;
                    }
                    Token::Name(n) if depth == 0 && n.eq_ignore_ascii_case("AND") => {
                        if between {
                            between = false;
                        } else {
                            expect_field = true;
                        }
                    }
                    Token::Name(n) if expect_field => {
                        out.filtered.push(n.clone());
                        expect_field = false;
                    }
                    _ => {}
                }
            }
        } else if is_keyword(t, "ORDER") {
            if !it.next().is_some_and(|t| is_keyword(t, "BY")) {
                return Err((
                    "EXPECTED_BY",
                    "ORDER".to_owned(),
                    "is not followed by BY".to_owned(),
                ));
            }
            let mut expect_field = true;
            while let Some(t) = it.peek() {
                if is_clause_start(t) {
                    break;
                }
                match it.next().expect("peeked") {
                    Token::Name(n) if expect_field => {
                        out.ordered.push(n.clone());
                        expect_field = false;
                    }
                    Token::Symbol(s) if s == "," => expect_field = true,
                    _ => {}
                }
            }
        } else if is_keyword(t, "LIMIT") {
            it.next(); // the number: the service's to judge
        } else if is_keyword(t, "PARAMETERS") {
            break; // `name = value` pairs: the service's to judge
        } else {
            return Err((
                "UNEXPECTED_INPUT",
                match t {
                    Token::Name(n) | Token::Symbol(n) => n.clone(),
                    Token::Value => "a value".to_owned(),
                },
                "is out of place".to_owned(),
            ));
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_guides_query_has_its_clauses() {
        let c = clauses(
            "SELECT campaign.id, campaign.name, segments.device, segments.date, \
             metrics.impressions, metrics.clicks FROM campaign \
             WHERE segments.date DURING LAST_30_DAYS AND campaign.status IN ('ENABLED', 'PAUSED') \
             AND metrics.clicks BETWEEN 1 AND 5 AND campaign.name LIKE 'a AND b' \
             ORDER BY metrics.clicks DESC, campaign.id LIMIT 10",
        )
        .unwrap();
        assert_eq!(c.select.len(), 6);
        assert_eq!(c.from.as_deref(), Some("campaign"));
        assert_eq!(
            c.filtered,
            [
                "segments.date",
                "campaign.status",
                "metrics.clicks",
                "campaign.name"
            ]
        );
        assert_eq!(c.ordered, ["metrics.clicks", "campaign.id"]);
    }

    #[test]
    fn custom_columns_and_lowercase_keywords_are_read() {
        let c = clauses("select custom_columns.id[12], campaign.id from campaign").unwrap();
        assert_eq!(c.select, ["custom_columns.id[12]", "campaign.id"]);
        assert_eq!(c.from.as_deref(), Some("campaign"));
    }

    #[test]
    fn structure_errors_have_the_services_codes() {
        let code = |q: &str| clauses(q).unwrap_err().0;
        assert_eq!(code("campaign.id FROM campaign"), "EXPECTED_SELECT");
        assert_eq!(code("SELECT campaign.id FROM"), "EXPECTED_FROM");
        assert_eq!(
            code("SELECT campaign.id FROM campaign WHERE campaign.name = 'x"),
            "STRING_NOT_TERMINATED"
        );
        assert_eq!(
            code("SELECT campaign.id FROM campaign ORDER campaign.id"),
            "EXPECTED_BY"
        );
        assert_eq!(code("SELECT campaign.id; DROP"), "UNEXPECTED_INPUT");
        assert_eq!(
            code("SELECT campaign.id FROM campaign WHERE campaign.name = é"),
            "BAD_SYMBOL"
        );
    }
}

//! Tokens of the query language (GRAM: "Query grammar reference",
//! <https://developers.google.com/search-ads/reporting/query/query-grammar>).
//!
//! Keywords are words (matched case-insensitively by the parser); strings take single or double
//! quotes with backslash escapes; a raw newline in a string is `PROHIBITED_NEWLINE_IN_STRING`, a
//! symbol the grammar does not have is `BAD_SYMBOL` (the discovery document's `queryError` values).

use super::error::QueryError;

/// One token.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Token {
    /// A keyword, field, resource, enum constant or function name.
    Word(String),
    /// A number as written (`-12`, `3.5`); the parser reads it for the field's type.
    Number(String),
    /// A quoted string, escapes resolved.
    Str(String),
    Comma,
    Open,
    Close,
    /// `=`, `!=`, `<`, `>`, `<=`, `>=`.
    Cmp(&'static str),
}

impl Token {
    /// The token as the query wrote it (for error triggers).
    pub(crate) fn shown(&self) -> String {
        match self {
            Token::Word(w) | Token::Number(w) => w.clone(),
            Token::Str(s) => format!("'{s}'"),
            Token::Comma => ",".into(),
            Token::Open => "(".into(),
            Token::Close => ")".into(),
            Token::Cmp(op) => (*op).into(),
        }
    }
}

/// Splits `text` into tokens.
pub(crate) fn tokenize(text: &str) -> Result<Vec<Token>, QueryError> {
    let mut tokens = Vec::new();
    let mut chars = text.char_indices().peekable();
    while let Some((start, c)) = chars.next() {
        let token = match c {
            c if c.is_whitespace() => continue,
            ',' => Token::Comma,
            '(' => Token::Open,
            ')' => Token::Close,
            '=' => Token::Cmp("="),
            '!' if chars.next_if(|&(_, c)| c == '=').is_some() => Token::Cmp("!="),
            '<' if chars.next_if(|&(_, c)| c == '=').is_some() => Token::Cmp("<="),
            '>' if chars.next_if(|&(_, c)| c == '=').is_some() => Token::Cmp(">="),
            '<' => Token::Cmp("<"),
            '>' => Token::Cmp(">"),
            '\'' | '"' => Token::Str(string(c, &mut chars)?),
            c if c.is_ascii_digit()
                || (c == '-' && chars.peek().is_some_and(|(_, c)| c.is_ascii_digit())) =>
            {
                let mut end = start + c.len_utf8();
                while let Some((i, c)) = chars.next_if(|(_, c)| c.is_ascii_digit() || *c == '.') {
                    end = i + c.len_utf8();
                }
                Token::Number(text[start..end].to_owned())
            }
            c if c.is_ascii_alphabetic() || c == '_' => {
                let mut end = start + 1;
                while let Some((i, _)) =
                    chars.next_if(|(_, c)| c.is_ascii_alphanumeric() || *c == '_' || *c == '.')
                {
                    end = i + 1;
                }
                Token::Word(text[start..end].to_owned())
            }
            other => {
                return Err(QueryError::new(
                    "BAD_SYMBOL",
                    format!("Unexpected symbol {other:?} outside a string."),
                )
                .at(other.to_string()));
            }
        };
        tokens.push(token);
    }
    Ok(tokens)
}

fn string(
    quote: char,
    chars: &mut std::iter::Peekable<std::str::CharIndices<'_>>,
) -> Result<String, QueryError> {
    let mut value = String::new();
    loop {
        let Some((_, c)) = chars.next() else {
            return Err(QueryError::new(
                "STRING_NOT_TERMINATED",
                "A string literal is not terminated.",
            )
            .at(value));
        };
        match c {
            '\n' | '\r' => {
                return Err(QueryError::new(
                    "PROHIBITED_NEWLINE_IN_STRING",
                    "A string literal contains a newline.",
                )
                .at(value));
            }
            '\\' => match chars.next().map(|(_, c)| c) {
                Some(e @ ('\\' | '\'' | '"')) => value.push(e),
                other => {
                    return Err(QueryError::new(
                        "BAD_ESCAPE_SEQUENCE",
                        "Invalid escape sequence in a string literal.",
                    )
                    .at(format!("\\{}", other.map(String::from).unwrap_or_default())));
                }
            },
            c if c == quote => return Ok(value),
            c => value.push(c),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(text: &str) -> Vec<String> {
        tokenize(text).unwrap().iter().map(Token::shown).collect()
    }

    #[test]
    fn operators_numbers_words_and_both_quotes() {
        assert_eq!(
            words("a>=1 b<=-2.5 c!=\"x\" d<'y' e>f=(1,2)"),
            [
                "a", ">=", "1", "b", "<=", "-2.5", "c", "!=", "'x'", "d", "<", "'y'", "e", ">",
                "f", "=", "(", "1", ",", "2", ")"
            ]
        );
    }

    #[test]
    fn escapes_stay_inside_the_string() {
        assert_eq!(
            tokenize(r#"'a\'b' "c\"d\\""#).unwrap(),
            [Token::Str("a'b".into()), Token::Str("c\"d\\".into())]
        );
    }

    #[test]
    fn errors_carry_google_codes() {
        let code = |t: &str| tokenize(t).unwrap_err().code;
        assert_eq!(code("a -- b"), "BAD_SYMBOL");
        assert_eq!(code("é"), "BAD_SYMBOL");
        assert_eq!(code("'x"), "STRING_NOT_TERMINATED");
        assert_eq!(code("'x\ny'"), "PROHIBITED_NEWLINE_IN_STRING");
        assert_eq!(code(r"'\n'"), "BAD_ESCAPE_SEQUENCE");
        assert_eq!(code("'\\"), "BAD_ESCAPE_SEQUENCE");
    }
}

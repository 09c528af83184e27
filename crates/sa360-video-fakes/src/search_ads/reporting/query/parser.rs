//! The clauses of a query, as GRAM writes them:
//!
//! ```text
//! Query      -> SelectClause FromClause? WhereClause? OrderByClause? LimitClause? ParametersClause?
//! SelectClause -> SELECT FieldName (, FieldName)*
//! FromClause   -> FROM ResourceName
//! WhereClause  -> WHERE Condition (AND Condition)*
//! Condition    -> FieldName Operator Value
//! OrderByClause -> ORDER BY Ordering (, Ordering)*      Ordering -> FieldName (ASC | DESC)?
//! LimitClause   -> LIMIT PositiveInteger
//! ParametersClause -> PARAMETERS Literal = Value (, Literal = Value)*
//! Operator -> = | != | > | >= | < | <= | IN | NOT IN | LIKE | NOT LIKE | CONTAINS ANY | CONTAINS ALL
//!           | CONTAINS NONE | IS NULL | IS NOT NULL | DURING | BETWEEN | REGEXP_MATCH | NOT REGEXP_MATCH
//! Value    -> Literal | LiteralList | Number | NumberList | String | StringList | Function
//! FieldName -> [a-z] ([a-zA-Z0-9._])*          ResourceName -> [a-z] ([a-zA-Z_])*
//! ```
//!
//! Keywords are case-insensitive; there is no `OR`. Whether a field takes an operator or a value is
//! [`checks`](super::checks)' job; this file only knows the shape.

use super::error::QueryError;
use super::lexer::Token;

/// An operator of a condition.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Op {
    Eq,
    Ne,
    Lt,
    Gt,
    Le,
    Ge,
    In,
    NotIn,
    Like,
    NotLike,
    ContainsAny,
    ContainsAll,
    ContainsNone,
    IsNull,
    IsNotNull,
    During,
    Between,
    RegexpMatch,
    NotRegexpMatch,
}

impl Op {
    /// The operator as GRAM spells it.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Op::Eq => "=",
            Op::Ne => "!=",
            Op::Lt => "<",
            Op::Gt => ">",
            Op::Le => "<=",
            Op::Ge => ">=",
            Op::In => "IN",
            Op::NotIn => "NOT IN",
            Op::Like => "LIKE",
            Op::NotLike => "NOT LIKE",
            Op::ContainsAny => "CONTAINS ANY",
            Op::ContainsAll => "CONTAINS ALL",
            Op::ContainsNone => "CONTAINS NONE",
            Op::IsNull => "IS NULL",
            Op::IsNotNull => "IS NOT NULL",
            Op::During => "DURING",
            Op::Between => "BETWEEN",
            Op::RegexpMatch => "REGEXP_MATCH",
            Op::NotRegexpMatch => "NOT REGEXP_MATCH",
        }
    }
}

/// A literal value.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Literal {
    /// A number as written.
    Number(String),
    /// A quoted string.
    Str(String),
    /// An unquoted literal: an enum constant, `TRUE`/`FALSE`, a date function.
    Word(String),
}

impl Literal {
    pub(crate) fn shown(&self) -> String {
        match self {
            Literal::Number(n) | Literal::Word(n) => n.clone(),
            Literal::Str(s) => format!("'{s}'"),
        }
    }
}

/// The right-hand side of a condition.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Operand {
    /// `IS NULL`, `IS NOT NULL`.
    Nothing,
    One(Literal),
    List(Vec<Literal>),
    /// `BETWEEN a AND b`.
    Pair(Literal, Literal),
}

/// `field op value`.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Condition {
    pub field: String,
    pub op: Op,
    pub value: Operand,
}

/// A parsed query, before any field is looked up.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct Ast {
    pub select: Vec<String>,
    pub from: Option<String>,
    pub conditions: Vec<Condition>,
    /// Field and whether it sorts descending.
    pub order: Vec<(String, bool)>,
    pub limit: Option<u64>,
    pub parameters: Vec<(String, Literal)>,
}

const KEYWORDS: &[&str] = &[
    "select",
    "from",
    "where",
    "and",
    "or",
    "order",
    "by",
    "limit",
    "parameters",
    "asc",
    "desc",
];

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

    fn is_keyword(&self, word: &str) -> bool {
        matches!(self.peek(), Some(Token::Word(w)) if w.eq_ignore_ascii_case(word))
    }

    fn eat(&mut self, word: &str) -> bool {
        let found = self.is_keyword(word);
        self.pos += usize::from(found);
        found
    }

    fn expect(&mut self, word: &str, code: &'static str) -> Result<(), QueryError> {
        match self.next()? {
            Token::Word(w) if w.eq_ignore_ascii_case(word) => Ok(()),
            other => Err(QueryError::new(code, format!("Expected {word}.")).at(other.shown())),
        }
    }

    fn field(&mut self) -> Result<String, QueryError> {
        match self.next()? {
            Token::Word(w)
                if w.starts_with(|c: char| c.is_ascii_lowercase())
                    && !KEYWORDS.iter().any(|k| k.eq_ignore_ascii_case(&w)) =>
            {
                Ok(w)
            }
            other => {
                Err(QueryError::new("BAD_FIELD_NAME", "Expected a field name.").at(other.shown()))
            }
        }
    }

    fn literal(&mut self) -> Result<Literal, QueryError> {
        match self.next()? {
            Token::Number(n) => Ok(Literal::Number(n)),
            Token::Str(s) => Ok(Literal::Str(s)),
            Token::Word(w) if !KEYWORDS.iter().any(|k| k.eq_ignore_ascii_case(&w)) => {
                Ok(Literal::Word(w))
            }
            Token::Open => Err(QueryError::new(
                "EXPECTED_SINGLE_VALUE",
                "The operator takes one value, not a list.",
            )
            .at("(")),
            other => Err(QueryError::new("BAD_VALUE", "Expected a value.").at(other.shown())),
        }
    }

    fn list(&mut self) -> Result<Vec<Literal>, QueryError> {
        match self.next()? {
            Token::Open => {}
            other => {
                return Err(QueryError::new(
                    "EXPECTED_LIST",
                    "The operator takes a list in parentheses.",
                )
                .at(other.shown()));
            }
        }
        if self.peek() == Some(&Token::Close) {
            return Err(QueryError::new(
                "PROHIBITED_EMPTY_LIST_IN_CONDITION",
                "A list must not be empty.",
            )
            .at("()"));
        }
        let mut values = Vec::new();
        loop {
            values.push(self.literal()?);
            match self.next()? {
                Token::Comma => {}
                Token::Close => return Ok(values),
                other => {
                    return Err(
                        QueryError::new("EXPECTED_LIST", "Expected ',' or ')'.").at(other.shown())
                    );
                }
            }
        }
    }

    fn operator(&mut self) -> Result<Op, QueryError> {
        let token = self.next()?;
        let word = |w: &str| matches!(&token, Token::Word(x) if x.eq_ignore_ascii_case(w));
        Ok(match &token {
            Token::Cmp("=") => Op::Eq,
            Token::Cmp("!=") => Op::Ne,
            Token::Cmp("<") => Op::Lt,
            Token::Cmp(">") => Op::Gt,
            Token::Cmp("<=") => Op::Le,
            Token::Cmp(">=") => Op::Ge,
            _ if word("IN") => Op::In,
            _ if word("LIKE") => Op::Like,
            _ if word("DURING") => Op::During,
            _ if word("BETWEEN") => Op::Between,
            _ if word("REGEXP_MATCH") => Op::RegexpMatch,
            _ if word("NOT") => {
                if self.eat("IN") {
                    Op::NotIn
                } else if self.eat("LIKE") {
                    Op::NotLike
                } else if self.eat("REGEXP_MATCH") {
                    Op::NotRegexpMatch
                } else {
                    return Err(self.bad_operator("NOT"));
                }
            }
            _ if word("IS") => {
                let not = self.eat("NOT");
                if !self.eat("NULL") {
                    return Err(self.bad_operator("IS"));
                }
                if not { Op::IsNotNull } else { Op::IsNull }
            }
            _ if word("CONTAINS") => {
                if self.eat("ANY") {
                    Op::ContainsAny
                } else if self.eat("ALL") {
                    Op::ContainsAll
                } else if self.eat("NONE") {
                    Op::ContainsNone
                } else {
                    return Err(self.bad_operator("CONTAINS"));
                }
            }
            other => {
                return Err(QueryError::new("BAD_OPERATOR", "Invalid operator.").at(other.shown()));
            }
        })
    }

    fn bad_operator(&self, head: &str) -> QueryError {
        let next = self.peek().map(Token::shown).unwrap_or_default();
        QueryError::new("BAD_OPERATOR", "Invalid operator.").at(format!("{head} {next}"))
    }

    fn condition(&mut self) -> Result<Condition, QueryError> {
        let field = self.field()?;
        let op = self.operator()?;
        let value = match op {
            Op::IsNull | Op::IsNotNull => Operand::Nothing,
            Op::In | Op::NotIn | Op::ContainsAny | Op::ContainsAll | Op::ContainsNone => {
                Operand::List(self.list()?)
            }
            Op::Between => {
                let missing = || {
                    QueryError::new(
                        "EXPECTED_VALUE_WITH_BETWEEN_OPERATOR",
                        "BETWEEN takes two values: BETWEEN a AND b.",
                    )
                };
                if self.peek().is_none() || self.is_keyword("AND") {
                    return Err(missing());
                }
                let from = self.literal()?;
                self.expect("AND", "EXPECTED_AND")?;
                if self.peek().is_none() {
                    return Err(missing());
                }
                Operand::Pair(from, self.literal()?)
            }
            _ => Operand::One(self.literal()?),
        };
        Ok(Condition { field, op, value })
    }
}

/// Parses the clauses of `text`.
pub(crate) fn parse(text: &str) -> Result<Ast, QueryError> {
    let mut p = Parser {
        tokens: super::lexer::tokenize(text)?,
        pos: 0,
    };
    let mut ast = Ast::default();
    p.expect("SELECT", "EXPECTED_SELECT")?;
    loop {
        ast.select.push(p.field()?);
        if p.peek() != Some(&Token::Comma) {
            break;
        }
        p.pos += 1;
    }
    if p.eat("FROM") {
        match p.next()? {
            Token::Word(w)
                if w.starts_with(|c: char| c.is_ascii_lowercase())
                    && w.chars().all(|c| c.is_ascii_alphabetic() || c == '_')
                    && !KEYWORDS.iter().any(|k| k.eq_ignore_ascii_case(&w)) =>
            {
                ast.from = Some(w);
            }
            other => {
                return Err(QueryError::new(
                    "BAD_RESOURCE_TYPE_IN_FROM_CLAUSE",
                    "Invalid resource type in the FROM clause.",
                )
                .at(other.shown()));
            }
        }
    }
    if p.eat("WHERE") {
        loop {
            ast.conditions.push(p.condition()?);
            if !p.eat("AND") {
                break;
            }
        }
    }
    if p.eat("ORDER") {
        p.expect("BY", "EXPECTED_BY")?;
        loop {
            let field = p.field()?;
            let desc = if p.eat("DESC") {
                true
            } else {
                p.eat("ASC");
                false
            };
            ast.order.push((field, desc));
            if p.peek() != Some(&Token::Comma) {
                break;
            }
            p.pos += 1;
        }
    }
    if p.eat("LIMIT") {
        match p.next()? {
            Token::Number(n) => match n.parse::<i64>() {
                Ok(v) if v > 0 => ast.limit = Some(v as u64),
                Ok(_) => {
                    return Err(
                        QueryError::new("LIMIT_VALUE_TOO_LOW", "LIMIT must be positive.").at(n),
                    );
                }
                Err(_) => {
                    return Err(QueryError::new(
                        "BAD_LIMIT_VALUE",
                        "LIMIT takes a positive integer.",
                    )
                    .at(n));
                }
            },
            other => {
                return Err(
                    QueryError::new("BAD_LIMIT_VALUE", "LIMIT takes a positive integer.")
                        .at(other.shown()),
                );
            }
        }
    }
    if p.eat("PARAMETERS") {
        loop {
            let name = match p.next()? {
                Token::Word(w) => w,
                other => {
                    return Err(QueryError::new(
                        "BAD_PARAMETER_NAME",
                        "Expected a parameter name.",
                    )
                    .at(other.shown()));
                }
            };
            match p.next()? {
                Token::Cmp("=") => {}
                other => {
                    return Err(
                        QueryError::new("BAD_OPERATOR", "Expected '=' after a parameter.")
                            .at(other.shown()),
                    );
                }
            }
            ast.parameters.push((name, p.literal()?));
            if p.peek() != Some(&Token::Comma) {
                break;
            }
            p.pos += 1;
        }
    }
    if let Some(extra) = p.peek() {
        return Err(
            QueryError::new("UNEXPECTED_INPUT", "Unexpected input after the query.")
                .at(extra.shown()),
        );
    }
    Ok(ast)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_clause_and_operator_parses_with_any_keyword_case() {
        let ast = parse(
            "select a.b, c.d from conversion where a.b = 1 and a.b != 'x' and a.b < 1 and a.b > 1 \
             and a.b <= 1 and a.b >= 1 and a.b in (1, 2) and a.b not in (\"x\") and a.b like 'x%' \
             and a.b not like 'y' and a.b contains any (1) and a.b contains all (1) and a.b \
             contains none (1) and a.b is null and a.b is not null and a.b during LAST_7_DAYS \
             and a.b between '2020-01-01' and '2020-01-02' and a.b regexp_match 'x' and a.b not \
             regexp_match 'y' order by a.b desc, c.d asc, a.b limit 10 parameters \
             metrics_currency = 'USD', enable_mcc_expansion = true",
        )
        .unwrap();
        let ops: Vec<&str> = ast.conditions.iter().map(|c| c.op.name()).collect();
        assert_eq!(
            ops,
            [
                "=",
                "!=",
                "<",
                ">",
                "<=",
                ">=",
                "IN",
                "NOT IN",
                "LIKE",
                "NOT LIKE",
                "CONTAINS ANY",
                "CONTAINS ALL",
                "CONTAINS NONE",
                "IS NULL",
                "IS NOT NULL",
                "DURING",
                "BETWEEN",
                "REGEXP_MATCH",
                "NOT REGEXP_MATCH"
            ]
        );
        assert_eq!(
            ast.order,
            [
                ("a.b".into(), true),
                ("c.d".into(), false),
                ("a.b".into(), false)
            ]
        );
        assert_eq!(ast.limit, Some(10));
        assert_eq!(ast.parameters.len(), 2);
        assert_eq!(ast.from.as_deref(), Some("conversion"));
    }

    #[test]
    fn shapes_get_google_codes() {
        let code = |t: &str| parse(t).unwrap_err().code;
        assert_eq!(code("FROM x"), "EXPECTED_SELECT");
        assert_eq!(code("SELECT"), "UNEXPECTED_END_OF_QUERY");
        assert_eq!(code("SELECT A.b FROM x"), "BAD_FIELD_NAME");
        assert_eq!(code("SELECT a FROM 9"), "BAD_RESOURCE_TYPE_IN_FROM_CLAUSE");
        assert_eq!(
            code("SELECT a FROM x WHERE a = 1 OR a = 2"),
            "UNEXPECTED_INPUT"
        );
        assert_eq!(code("SELECT a FROM x WHERE a ~ 1"), "BAD_SYMBOL");
        assert_eq!(code("SELECT a FROM x WHERE a NOT = 1"), "BAD_OPERATOR");
        assert_eq!(code("SELECT a FROM x WHERE a IN 1"), "EXPECTED_LIST");
        assert_eq!(
            code("SELECT a FROM x WHERE a IN ()"),
            "PROHIBITED_EMPTY_LIST_IN_CONDITION"
        );
        assert_eq!(
            code("SELECT a FROM x WHERE a = (1)"),
            "EXPECTED_SINGLE_VALUE"
        );
        assert_eq!(
            code("SELECT a FROM x WHERE a BETWEEN 1 OR 2"),
            "EXPECTED_AND"
        );
        assert_eq!(
            code("SELECT a FROM x WHERE a BETWEEN AND 2"),
            "EXPECTED_VALUE_WITH_BETWEEN_OPERATOR"
        );
        assert_eq!(code("SELECT a FROM x ORDER a"), "EXPECTED_BY");
        assert_eq!(code("SELECT a FROM x LIMIT 0"), "LIMIT_VALUE_TOO_LOW");
        assert_eq!(code("SELECT a FROM x LIMIT x"), "BAD_LIMIT_VALUE");
        assert_eq!(
            code("SELECT a FROM x LIMIT 99999999999999999999"),
            "BAD_LIMIT_VALUE"
        );
    }
}

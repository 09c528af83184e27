//! Google's `fields` partial-response parameter on the JSON methods (SA-18).
//!
//! A selection is a comma-separated list of items; an item is a path of field names joined by
//! `/`, optionally followed by a parenthesized sub-selection (`conversion(conversionId,type)`),
//! or `*` for every field at its level. Lists are transparent: a selection applies to each
//! element. Names are checked against the method's response schema, as Google's front end does;
//! a malformed selection or an unknown name is 400 `invalidParameter` on `fields`, before the
//! method runs. Error answers are never filtered.

use std::collections::BTreeMap;

use axum::body::{Body, to_bytes};
use axum::extract::{Request, State};
use axum::http::{Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::Response;
use serde_json::{Map, Value};

use super::conversions::{is_availability_field, is_conversion_field};
use super::state::AppState;
use crate::errors::{GoogleErrorItem, google_error};

/// Longest accepted `fields` value, in bytes. This bound, the depth and the body size below are the
/// fake's own (Google documents none; SA-24): they keep a hostile selection from costing the fake
/// more than a page.
const MAX_SELECTION_LEN: usize = 4096;
/// Deepest accepted nesting of parentheses and paths.
const MAX_DEPTH: usize = 16;
/// Largest JSON answer that is filtered (the largest real one, a page of 1000 conversions, is a
/// few MiB).
const MAX_BODY: usize = 64 * 1024 * 1024;

/// The fields an object of a response may have: `None` for a name it does not have, the shape
/// of the value otherwise.
#[derive(Clone, Copy)]
pub(crate) enum Shape {
    /// A scalar (or a list of scalars): no sub-selection applies.
    Leaf,
    /// An object (or a list of objects).
    Object(fn(&str) -> Option<Shape>),
}

fn conversion_list(name: &str) -> Option<Shape> {
    match name {
        "kind" => Some(Shape::Leaf),
        "conversion" => Some(Shape::Object(conversion)),
        _ => None,
    }
}

fn conversion(name: &str) -> Option<Shape> {
    match name {
        "customDimension" | "customMetric" => Some(Shape::Object(named_value)),
        _ if is_conversion_field(name) => Some(Shape::Leaf),
        _ => None,
    }
}

fn named_value(name: &str) -> Option<Shape> {
    matches!(name, "name" | "value").then_some(Shape::Leaf)
}

fn availability_response(name: &str) -> Option<Shape> {
    (name == "availabilities").then_some(Shape::Object(availability))
}

fn availability(name: &str) -> Option<Shape> {
    is_availability_field(name).then_some(Shape::Leaf)
}

fn saved_column_list(name: &str) -> Option<Shape> {
    match name {
        "kind" => Some(Shape::Leaf),
        "items" => Some(Shape::Object(saved_column)),
        _ => None,
    }
}

fn saved_column(name: &str) -> Option<Shape> {
    matches!(name, "kind" | "savedColumnName" | "type").then_some(Shape::Leaf)
}

fn empty_object(_: &str) -> Option<Shape> {
    None
}

/// The response shape of the method at `path` (relative to the API prefix), or `None` for a
/// media download or an unknown route (`fields` does not apply there).
fn response_shape(method: &Method, path: &str, query: &str) -> Option<Shape> {
    if path.ends_with("/idmapping") {
        let media = query.split('&').any(|pair| pair == "alt=media");
        return (!media).then_some(Shape::Object(empty_object));
    }
    if path.ends_with("/savedcolumns") {
        return Some(Shape::Object(saved_column_list));
    }
    if path.ends_with("/conversion/updateAvailability") && method == Method::POST {
        return Some(Shape::Object(availability_response));
    }
    if path.ends_with("/conversion") {
        return Some(Shape::Object(conversion_list));
    }
    None
}

/// A parsed selection: per selected name, `None` for the whole value or the sub-selection.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct Selection(BTreeMap<String, Option<Selection>>);

impl Selection {
    /// Adds `path` (with an optional sub-selection) to this selection, merging with what is there;
    /// selecting a whole value wins over a sub-selection of it.
    fn add(&mut self, path: &[String], sub: Option<Selection>) {
        let Some((first, rest)) = path.split_first() else {
            return;
        };
        let child = if rest.is_empty() {
            sub
        } else {
            let mut nested = Selection::default();
            nested.add(rest, sub);
            Some(nested)
        };
        match (self.0.get_mut(first), child) {
            (Some(None), _) => {}
            (Some(slot), None) => *slot = None,
            (Some(Some(existing)), Some(child)) => existing.merge(child),
            (None, child) => {
                self.0.insert(first.clone(), child);
            }
        }
    }

    fn merge(&mut self, other: Selection) {
        for (name, sub) in other.0 {
            self.add(&[name], sub);
        }
    }
}

/// Parses a `fields` value.
///
/// # Errors
/// A readable reason when it is empty, too long, too deep or malformed.
pub(crate) fn parse(text: &str) -> Result<Selection, String> {
    if text.len() > MAX_SELECTION_LEN {
        return Err(format!("longer than {MAX_SELECTION_LEN} bytes"));
    }
    let mut parser = Parser {
        bytes: text.as_bytes(),
        pos: 0,
    };
    let selection = parser.selection(0)?;
    if parser.pos != parser.bytes.len() {
        return Err(format!("unexpected '{}'", parser.bytes[parser.pos] as char));
    }
    Ok(selection)
}

struct Parser<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl Parser<'_> {
    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.pos).copied()
    }

    fn selection(&mut self, depth: usize) -> Result<Selection, String> {
        if depth > MAX_DEPTH {
            return Err(format!("nested deeper than {MAX_DEPTH}"));
        }
        let mut selection = Selection::default();
        loop {
            let mut path = vec![self.name()?];
            while self.peek() == Some(b'/') {
                self.pos += 1;
                path.push(self.name()?);
                if path.len() > MAX_DEPTH {
                    return Err(format!("nested deeper than {MAX_DEPTH}"));
                }
            }
            let sub = if self.peek() == Some(b'(') {
                self.pos += 1;
                let sub = self.selection(depth + 1)?;
                if self.peek() != Some(b')') {
                    return Err("missing ')'".to_owned());
                }
                self.pos += 1;
                Some(sub)
            } else {
                None
            };
            selection.add(&path, sub);
            if self.peek() == Some(b',') {
                self.pos += 1;
            } else {
                return Ok(selection);
            }
        }
    }

    fn name(&mut self) -> Result<String, String> {
        let start = self.pos;
        if self.peek() == Some(b'*') {
            self.pos += 1;
            return Ok("*".to_owned());
        }
        while self
            .peek()
            .is_some_and(|b| b.is_ascii_alphanumeric() || b == b'_')
        {
            self.pos += 1;
        }
        if self.pos == start {
            return Err(match self.peek() {
                Some(b) => format!("expected a field name at '{}'", b as char),
                None => "expected a field name at the end".to_owned(),
            });
        }
        Ok(String::from_utf8_lossy(&self.bytes[start..self.pos]).into_owned())
    }
}

/// Checks every name of `selection` against `shape`; returns the first unknown path.
pub(crate) fn check(selection: &Selection, shape: Shape, prefix: &str) -> Result<(), String> {
    for (name, sub) in &selection.0 {
        let path = if prefix.is_empty() {
            name.clone()
        } else {
            format!("{prefix}/{name}")
        };
        if name == "*" {
            if let (Some(sub), Shape::Object(_)) = (sub, shape) {
                // `*(x)` applies `x` to every field; each must then be an object having `x`,
                // which no response here guarantees: refuse it as Google refuses unknown paths.
                return Err(format!("{path}({})", render(sub)));
            }
            continue;
        }
        let Shape::Object(lookup) = shape else {
            return Err(path);
        };
        let Some(child) = lookup(name) else {
            return Err(path);
        };
        if let Some(sub) = sub {
            check(sub, child, &path)?;
        }
    }
    Ok(())
}

fn render(selection: &Selection) -> String {
    selection
        .0
        .iter()
        .map(|(name, sub)| match sub {
            None => name.clone(),
            Some(sub) => format!("{name}({})", render(sub)),
        })
        .collect::<Vec<_>>()
        .join(",")
}

/// Keeps only the selected parts of `value`.
pub(crate) fn apply(value: Value, selection: &Selection) -> Value {
    match value {
        Value::Array(items) => Value::Array(
            items
                .into_iter()
                .map(|item| apply(item, selection))
                .collect(),
        ),
        Value::Object(map) => {
            let all = selection.0.get("*");
            let mut out = Map::new();
            for (name, v) in map {
                let chosen = match selection.0.get(&name) {
                    Some(sub) => Some(sub),
                    None => all,
                };
                match chosen {
                    Some(None) => {
                        out.insert(name, v);
                    }
                    Some(Some(sub)) => {
                        out.insert(name, apply(v, sub));
                    }
                    None => {}
                }
            }
            Value::Object(out)
        }
        scalar => scalar,
    }
}

fn invalid_selection(text: &str, why: &str) -> Response {
    let message = format!("Invalid field selection {text}: {why}");
    google_error(
        StatusCode::BAD_REQUEST,
        &message,
        &[GoogleErrorItem::new("invalidParameter", message.clone()).at("fields", "parameter")],
    )
}

/// The value of the `fields` query parameter, percent-decoded, if present.
fn fields_param(query: &str) -> Option<String> {
    url::form_urlencoded::parse(query.as_bytes())
        .find(|(name, _)| name == "fields")
        .map(|(_, value)| value.into_owned())
}

/// Middleware: validates `fields` before the method runs and filters its JSON success answer.
pub(crate) async fn partial_response(
    State(_app): State<AppState>,
    request: Request,
    next: Next,
) -> Response {
    let query = request.uri().query().unwrap_or("").to_owned();
    let Some(text) = fields_param(&query) else {
        return next.run(request).await;
    };
    let Some(shape) = response_shape(request.method(), request.uri().path(), &query) else {
        return next.run(request).await;
    };
    let selection = match parse(&text) {
        Ok(selection) => selection,
        Err(why) => return invalid_selection(&text, &why),
    };
    if let Err(path) = check(&selection, shape, "") {
        return invalid_selection(&text, &format!("unknown field {path}"));
    }
    let response = next.run(request).await;
    let is_json = response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/json"));
    if response.status() != StatusCode::OK || !is_json {
        return response;
    }
    let (mut parts, body) = response.into_parts();
    let filtered = match to_bytes(body, MAX_BODY).await {
        Ok(bytes) => match serde_json::from_slice::<Value>(&bytes) {
            Ok(value) => serde_json::to_vec(&apply(value, &selection)).unwrap_or_default(),
            Err(_) => bytes.to_vec(),
        },
        Err(e) => {
            tracing::warn!(error = %e, "partial response: answer not filtered");
            return Response::from_parts(parts, Body::empty());
        }
    };
    parts.headers.remove(header::CONTENT_LENGTH);
    Response::from_parts(parts, Body::from(filtered))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn parses_paths_sub_selections_and_wildcards() {
        let s = parse("kind,conversion(conversionId,customMetric/name),conversion/type").unwrap();
        let value = json!({
            "kind": "k",
            "conversion": [
                {"conversionId": "a", "type": "ACTION", "state": "ACTIVE",
                 "customMetric": [{"name": "m", "value": 1.0}]},
                {"conversionId": "b"}
            ]
        });
        assert_eq!(
            apply(value.clone(), &s),
            json!({
                "kind": "k",
                "conversion": [
                    {"conversionId": "a", "type": "ACTION", "customMetric": [{"name": "m"}]},
                    {"conversionId": "b"}
                ]
            })
        );
        assert_eq!(apply(value.clone(), &parse("*").unwrap()), value);
        assert_eq!(
            apply(value, &parse("conversion,conversion/type").unwrap())["conversion"][0]["state"],
            "ACTIVE",
            "a whole field wins over a sub-selection of it"
        );
        assert!(check(&s, Shape::Object(conversion_list), "").is_ok());
    }

    #[test]
    fn refuses_malformed_and_unknown_selections() {
        for bad in ["", ",", "a(", "a()", "a/", "a)b", "a b", "a(b))"] {
            assert!(parse(bad).is_err(), "{bad:?}");
        }
        let shape = Shape::Object(conversion_list);
        assert_eq!(
            check(&parse("conversion/nope").unwrap(), shape, ""),
            Err("conversion/nope".to_owned())
        );
        assert_eq!(
            check(&parse("kind/x").unwrap(), shape, ""),
            Err("kind/x".to_owned())
        );
        assert!(parse(&"a(".repeat(40)).is_err());
        assert!(parse(&"a,".repeat(3000)).is_err());
    }

    #[test]
    fn decodes_the_query_value() {
        assert_eq!(
            fields_param("alt=json&fields=conversion%28conversionId%29").as_deref(),
            Some("conversion(conversionId)")
        );
        assert_eq!(fields_param("alt=json"), None);
        assert_eq!(fields_param("fields=%zz%2").as_deref(), Some("%zz%2"));
    }
}

//! `specs/video-session.yaml` says what the video session seed says: both
//! operations, every field of its three tables with type, format, nullability
//! and length limit, the `UserToken` header, closed requests and open responses
//! (VS-1). The seed's tables are transcribed below; a spec edit that drifts
//! from them fails here.

use serde_json::Value;

use crate::discovery;

use discovery::resolve;

/// (field, type, format, nullable, maxLength) of a seed table.
type Row = (
    &'static str,
    &'static str,
    Option<&'static str>,
    bool,
    Option<u64>,
);

/// Seed, "Invitation request (JSON object, no properties other than these)".
const INVITATION: &[Row] = &[
    ("InvitationType", "integer", Some("int32"), false, None),
    ("IsoCode", "string", None, true, None),
    ("MobileNo", "string", None, true, None),
    ("EmailAddress", "string", Some("email"), true, Some(255)),
    ("Message", "string", None, true, Some(100)),
    ("QueryStringParameter", "string", None, true, None),
];

/// Seed, "Login request (JSON object, no other properties)".
const LOGIN_REQUEST: &[Row] = &[
    ("SecretKey", "string", None, false, None),
    ("UserName", "string", None, false, None),
    ("Password", "string", None, false, None),
];

/// Seed, "Login response (JSON object, no other properties)".
const LOGIN_RESPONSE: &[Row] = &[
    ("UserId", "string", Some("uuid"), false, None),
    ("FirstName", "string", None, true, None),
    ("LastName", "string", None, true, None),
    ("ProfileImage", "string", None, true, None),
    ("CountryCode", "string", None, true, None),
    ("PhoneNo", "string", None, true, None),
    ("JobRole", "string", None, true, None),
    ("DomainId", "integer", Some("int64"), false, None),
    ("DomainName", "string", None, true, None),
    ("UserName", "string", None, true, None),
    ("NotificationEmail", "string", None, true, None),
    ("RoleCode", "string", None, true, None),
    ("LoginId", "integer", Some("int64"), false, None),
    ("UserToken", "string", None, true, None),
    ("RefreshToken", "string", None, true, None),
];

fn spec() -> Value {
    discovery::spec("video-session.yaml")
}

/// A property's effective schema: `nullable` may sit on the property while
/// the rest comes from the one `$ref` of its `allOf`.
fn effective(spec: &Value, property: &Value) -> (Value, bool) {
    let nullable = property.get("nullable").and_then(Value::as_bool) == Some(true);
    let node = resolve(spec, property);
    let inner_nullable = node.get("nullable").and_then(Value::as_bool) == Some(true);
    (node.clone(), nullable || inner_nullable)
}

fn check(spec: &Value, schema: &str, rows: &[Row], closed: bool) -> Vec<String> {
    let object = &spec["components"]["schemas"][schema];
    let mut problems = Vec::new();
    let properties = object["properties"].as_object().unwrap();
    let required: Vec<&str> = object
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    for &(field, ty, format, nullable, max_length) in rows {
        let Some(property) = properties.get(field) else {
            problems.push(format!("{schema}.{field}: missing"));
            continue;
        };
        let (node, is_nullable) = effective(spec, property);
        if node["type"] != ty {
            problems.push(format!(
                "{schema}.{field}: type {} (seed: {ty})",
                node["type"]
            ));
        }
        if node.get("format").and_then(Value::as_str) != format {
            problems.push(format!(
                "{schema}.{field}: format {:?} (seed: {format:?})",
                node.get("format")
            ));
        }
        if is_nullable != nullable {
            problems.push(format!(
                "{schema}.{field}: nullable {is_nullable} (seed: {nullable})"
            ));
        }
        if node.get("maxLength").and_then(Value::as_u64) != max_length {
            problems.push(format!(
                "{schema}.{field}: maxLength {:?} (seed: {max_length:?})",
                node.get("maxLength")
            ));
        }
        // VS-1: a field the seed marks not nullable is required.
        if !nullable && !required.contains(&field) {
            problems.push(format!(
                "{schema}.{field}: not nullable in the seed, so required"
            ));
        }
    }
    if properties.len() != rows.len() {
        problems.push(format!(
            "{schema}: {} properties, the seed lists {}",
            properties.len(),
            rows.len()
        ));
    }
    let is_closed = object.get("additionalProperties") == Some(&Value::Bool(false));
    if is_closed != closed {
        problems.push(format!(
            "{schema}: closed = {is_closed}, expected {closed} (VS-1)"
        ));
    }
    problems
}

#[test]
fn schemas_match_the_seed_tables() {
    let spec = spec();
    let mut problems = check(&spec, "InvitationRequest", INVITATION, true);
    problems.extend(check(&spec, "LoginRequest", LOGIN_REQUEST, true));
    problems.extend(check(&spec, "LoginResponse", LOGIN_RESPONSE, false));
    // The seed: the 200 body "is listed with the same fields as the request";
    // it is a response, so open, and nothing in it is required (VS-1).
    let response: Vec<Row> = INVITATION
        .iter()
        .map(|&(f, t, fm, _, ml)| (f, t, fm, f != "InvitationType", ml))
        .collect();
    let mut response_problems = check(&spec, "InvitationResponse", &response, false);
    response_problems.retain(|p| !p.contains("so required"));
    problems.extend(response_problems);
    assert!(
        problems.is_empty(),
        "spec and seed disagree:\n{}",
        problems.join("\n")
    );
}

#[test]
fn invitation_type_is_the_integer_enum_of_the_seed() {
    let spec = spec();
    let node = &spec["components"]["schemas"]["InvitationType"];
    assert_eq!(node["type"], "integer");
    assert_eq!(node["enum"], serde_json::json!([1, 2, 3, 4, 5, 6]));
}

#[test]
fn operations_match_the_seed() {
    let spec = spec();
    let login = &spec["paths"]["/api/login"]["post"];
    assert_eq!(login["operationId"], "login");
    assert!(
        login.get("parameters").is_none(),
        "login takes no parameters or token header"
    );
    let invite = &spec["paths"]["/api/session/{SessionId}/invitation"]["post"];
    let params = invite["parameters"].as_array().unwrap();
    let find = |name: &str| params.iter().find(|p| p["name"] == name).unwrap();
    assert_eq!(find("SessionId")["in"], "path");
    assert_eq!(find("SessionId")["schema"]["type"], "string");
    assert_eq!(find("UserToken")["in"], "header");
    assert_eq!(find("UserToken")["required"], true);
    assert_eq!(params.len(), 2, "no query parameters");
    for op in [login, invite] {
        assert!(op["responses"]["200"].is_object());
        assert_eq!(
            op["requestBody"]["content"]
                .as_object()
                .unwrap()
                .keys()
                .collect::<Vec<_>>(),
            ["application/json"]
        );
    }
}

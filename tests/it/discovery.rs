//! What the tests comparing a spec with Google's discovery document share: loading both, following
//! `$ref`s, the documented exceptions, the OAuth scopes, and the one assertion.

use std::path::Path;

use serde_json::Value;

/// The workspace root (`tests/` is one of its packages).
pub fn workspace_root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("tests/ lives in the workspace")
}

/// A discovery document, named by its path from the workspace root.
pub fn discovery(file: &str) -> Value {
    let path = workspace_root().join(file);
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// A spec of `specs/`, as JSON.
pub fn spec(file: &str) -> Value {
    let text = std::fs::read_to_string(workspace_root().join("specs").join(file)).unwrap();
    serde_norway::from_str(&text).unwrap()
}

/// Follows `$ref`s (and `allOf` wrappers of one `$ref`) inside the spec.
pub fn resolve<'a>(spec: &'a Value, mut node: &'a Value) -> &'a Value {
    loop {
        if let Some(reference) = node.get("$ref").and_then(Value::as_str) {
            let pointer = reference.trim_start_matches('#');
            node = spec
                .pointer(pointer)
                .unwrap_or_else(|| panic!("dangling {reference}"));
        } else if let Some([only]) = node
            .get("allOf")
            .and_then(Value::as_array)
            .map(Vec::as_slice)
        {
            node = only;
        } else {
            return node;
        }
    }
}

/// The last segment of a `$ref` (the component's name).
pub fn last_segment(reference: &str) -> &str {
    reference.rsplit('/').next().unwrap_or(reference)
}

/// Whether `(subject, what)` is one of the documented differences in `allowed`.
pub fn allowed(list: &[(&str, &str)], subject: &str, what: &str) -> bool {
    list.iter().any(|(s, w)| *s == subject && *w == what)
}

/// The OAuth scopes: discovery's, and the spec's authorization-code flow's.
pub fn oauth_scopes<'a>(discovery: &'a Value, spec: &'a Value) -> (Vec<&'a str>, Vec<&'a str>) {
    let keys = |v: &'a Value| -> Vec<&'a str> {
        v.as_object().unwrap().keys().map(String::as_str).collect()
    };
    (
        keys(&discovery["auth"]["oauth2"]["scopes"]),
        keys(
            &spec["components"]["securitySchemes"]["oauth2"]["flows"]["authorizationCode"]["scopes"],
        ),
    )
}

/// Fails with every difference found, one a line.
pub fn assert_agree(problems: &[String]) {
    assert!(
        problems.is_empty(),
        "spec and discovery disagree:\n{}",
        problems.join("\n")
    );
}

/// The spec parameter (of `params`) that discovery parameter `name` describes: same name and
/// location, and the same `required`. A missing one, or another `required`, is a problem about
/// `subject`; the parameter is returned when it exists.
pub fn matching_parameter<'a>(
    params: &'a [Value],
    name: &str,
    their: &Value,
    subject: &str,
    problems: &mut Vec<String>,
) -> Option<&'a Value> {
    let location = their["location"].as_str().unwrap();
    let Some(our) = params
        .iter()
        .find(|p| p["name"] == name && p["in"] == location)
    else {
        problems.push(format!("{subject}: missing ({location})"));
        return None;
    };
    let required = their["required"].as_bool().unwrap_or(false);
    if our["required"].as_bool().unwrap_or(false) != required {
        problems.push(format!("{subject}: required should be {required}"));
    }
    Some(our)
}

/// Every spec parameter of `method_id` that discovery does not have is a problem, unless
/// `documented(name)` says why the spec has it.
pub fn extra_parameters(
    params: &[Value],
    theirs: &serde_json::Map<String, Value>,
    method_id: &str,
    documented: impl Fn(&str) -> bool,
    problems: &mut Vec<String>,
) {
    for p in params {
        let name = p["name"].as_str().unwrap();
        if !theirs.contains_key(name) && !documented(name) {
            problems.push(format!("{method_id}?{name}: not a parameter in discovery"));
        }
    }
}

//! YAML to JSON (keys as strings) and back (in the original order), and values as a warning shows them.

use serde_json::Value;

/// A YAML mapping key as a string: `200` → `"200"`, `true` → `"true"`.
pub(super) fn key_string(k: &serde_norway::Value) -> String {
    use serde_norway::Value as Y;
    match k {
        Y::String(s) => s.clone(),
        Y::Number(n) => n.to_string(),
        Y::Bool(b) => b.to_string(),
        Y::Null => "null".to_owned(),
        Y::Tagged(t) => key_string(&t.value),
        other => yaml_scalar_text(other),
    }
}

/// `json` as YAML, with mapping keys in the order of `original` (the text
/// as read) where they were there, keys added by the reader last.
pub(super) fn ordered(json: &Value, original: Option<&serde_norway::Value>) -> serde_norway::Value {
    use serde_norway::Value as Y;
    let original = match original {
        Some(Y::Tagged(t)) => Some(&t.value),
        other => other,
    };
    match json {
        Value::Null => Y::Null,
        Value::Bool(b) => Y::Bool(*b),
        Value::Number(n) => {
            if let Some(i) = n.as_i64() {
                Y::Number(i.into())
            } else if let Some(u) = n.as_u64() {
                Y::Number(u.into())
            } else {
                Y::Number(n.as_f64().unwrap_or_default().into())
            }
        }
        Value::String(s) => Y::String(s.clone()),
        Value::Array(list) => {
            let originals = original.and_then(Y::as_sequence);
            Y::Sequence(
                list.iter()
                    .enumerate()
                    .map(|(i, v)| ordered(v, originals.and_then(|o| o.get(i))))
                    .collect(),
            )
        }
        Value::Object(map) => {
            let mut out = serde_norway::Mapping::new();
            if let Some(originals) = original.and_then(Y::as_mapping) {
                for (k, v) in originals {
                    let key = key_string(k);
                    if let Some(value) = map.get(&key)
                        && !out.contains_key(key.as_str())
                    {
                        out.insert(Y::String(key), ordered(value, Some(v)));
                    }
                }
            }
            for (key, value) in map {
                if !out.contains_key(key.as_str()) {
                    out.insert(Y::String(key.clone()), ordered(value, None));
                }
            }
            Y::Mapping(out)
        }
    }
}

/// A YAML scalar as text (for unusual mapping keys).
pub(super) fn yaml_scalar_text(v: &serde_norway::Value) -> String {
    serde_norway::to_string(v)
        .map(|s| s.trim().to_owned())
        .unwrap_or_default()
}

/// A value shown in a warning, cut to 60 characters.
pub(super) fn short(v: &Value) -> String {
    let text = match v {
        Value::Null => "null".to_owned(),
        Value::Object(map) if map.is_empty() => "{}".to_owned(),
        other => other.to_string(),
    };
    if text.chars().count() > 60 {
        let cut: String = text.chars().take(57).collect();
        format!("{cut}...")
    } else {
        text
    }
}

//! Rule `one-path`: every public item of the SDK has one public path
//! (`search_ads::CampaignId`, never also `search_ads::values::CampaignId`).
//!
//! It walks the SDK's rustdoc JSON (the same document [`super::foreign_types`] reads) from
//! the crate root: a public module adds its name to the path, a re-export (`pub use`) names
//! its target where it stands (a re-exported module is walked under its new name), any other
//! item is reached at `module::name`. An item reached by two paths is a violation: one of the
//! two modules should be private, or the re-export dropped.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

/// Public items reached by more than one public path: the item's paths, sorted.
pub fn check(doc: &Value) -> Result<Vec<Vec<String>>, String> {
    let index = doc
        .get("index")
        .and_then(Value::as_object)
        .ok_or("the rustdoc JSON has no `index`")?;
    let root = doc
        .get("root")
        .map(key)
        .ok_or("the rustdoc JSON has no `root`")?;
    let name = index
        .get(&root)
        .and_then(|item| item.get("name"))
        .and_then(Value::as_str)
        .unwrap_or("crate");
    let mut paths: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut walking = vec![root.clone()];
    walk(index, &root, name, &mut walking, &mut paths);
    Ok(paths
        .into_values()
        .filter(|p| p.len() > 1)
        .map(|p| p.into_iter().collect())
        .collect())
}

fn walk(
    index: &serde_json::Map<String, Value>,
    module: &str,
    path: &str,
    walking: &mut Vec<String>,
    paths: &mut BTreeMap<String, BTreeSet<String>>,
) {
    let items = index
        .get(module)
        .and_then(|m| m.pointer("/inner/module/items"))
        .and_then(Value::as_array);
    for id in items.into_iter().flatten().map(key) {
        let Some(item) = index.get(&id) else { continue };
        let (target, name) = match item.pointer("/inner/use") {
            Some(import) if import.get("is_glob").and_then(Value::as_bool) == Some(true) => {
                // A glob re-exports the module's items where the glob stands.
                if let Some(target) = import.get("id").filter(|v| !v.is_null()).map(key)
                    && !walking.contains(&target)
                {
                    walking.push(target.clone());
                    walk(index, &target, path, walking, paths);
                    walking.pop();
                }
                continue;
            }
            Some(import) => match import.get("id").filter(|v| !v.is_null()) {
                Some(target) => (key(target), import.get("name").and_then(Value::as_str)),
                None => continue, // a re-export of another crate's item rustdoc does not index
            },
            None => (id.clone(), item.get("name").and_then(Value::as_str)),
        };
        let Some(name) = name else { continue };
        let here = format!("{path}::{name}");
        let is_module = index
            .get(&target)
            .is_some_and(|t| t.pointer("/inner/module").is_some());
        if is_module && !walking.contains(&target) {
            walking.push(target.clone());
            walk(index, &target, &here, walking, paths);
            walking.pop();
        }
        paths.entry(target).or_default().insert(here);
    }
}

fn key(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// `sdk::ads` holds `CampaignId` and, when `values_public`, the public module `values`
    /// that defines it; `ads` re-exports it either way.
    fn doc(values_public: bool) -> Value {
        let ads_items = if values_public {
            json!([3, 4])
        } else {
            json!([4])
        };
        json!({
            "root": 0,
            "index": {
                "0": {"name": "sdk", "inner": {"module": {"items": [1]}}},
                "1": {"name": "ads", "inner": {"module": {"items": ads_items}}},
                "3": {"name": "values", "inner": {"module": {"items": [5]}}},
                "4": {"name": null, "inner": {"use": {"source": "values::CampaignId", "name": "CampaignId", "id": 5, "is_glob": false}}},
                "5": {"name": "CampaignId", "inner": {"struct": {}}}
            }
        })
    }

    #[test]
    fn an_item_reexported_beside_its_public_module_has_two_paths() {
        assert_eq!(
            check(&doc(true)).unwrap(),
            vec![vec![
                "sdk::ads::CampaignId".to_owned(),
                "sdk::ads::values::CampaignId".to_owned()
            ]]
        );
    }

    #[test]
    fn an_item_reexported_from_a_private_module_has_one() {
        assert_eq!(check(&doc(false)).unwrap(), Vec::<Vec<String>>::new());
    }
}

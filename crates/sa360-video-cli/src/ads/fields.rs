//! `apictl ads fields [PATTERN]`: the Reporting API's field catalogue shipped with the facade
//! (name, category, data type, and whether each field may be selected, filtered, sorted).

use sa360_video_sdk::search_ads::reporting::fields::{self, FieldInfo};
use serde_json::json;

use crate::cli::FieldsArgs;
use crate::context::{Ctx, print_json};
use crate::error::{AppError, AppResult};

/// The fields whose name contains `pattern` (all without one).
pub fn matching(pattern: Option<&str>) -> Vec<&'static FieldInfo> {
    let pattern = pattern.map(str::to_ascii_lowercase);
    fields::catalogue()
        .iter()
        .filter(|f| pattern.as_deref().is_none_or(|p| f.name.contains(p)))
        .collect()
}

fn yes(flag: bool) -> &'static str {
    if flag { "yes" } else { "no" }
}

/// Runs `apictl ads fields`.
pub(super) fn run_fields(ctx: &Ctx, args: &FieldsArgs) -> AppResult<u8> {
    let found = matching(args.pattern.as_deref());
    if found.is_empty() {
        let pattern = args.pattern.as_deref().unwrap_or_default();
        let hint = match fields::nearest(pattern, false) {
            Some(name) => format!("did you mean `{name}`? Run `apictl ads fields` for all of them"),
            None => "run `apictl ads fields` without a pattern for all of them".to_owned(),
        };
        return Err(AppError::new(format!("no field name contains {pattern:?}")).hint(hint));
    }
    if ctx.json {
        let list: Vec<_> = found
            .iter()
            .map(|f| {
                json!({
                    "name": f.name,
                    "category": f.category.as_str(),
                    "dataType": f.data_type.as_str(),
                    "isRepeated": f.repeated,
                    "selectable": f.selectable,
                    "filterable": f.filterable,
                    "sortable": f.sortable,
                })
            })
            .collect();
        print_json(&json!({ "fields": list }))?;
        return Ok(0);
    }
    let width = found.iter().map(|f| f.name.len()).max().unwrap_or(4).max(4);
    crate::output::outln!(
        "{:<width$}  CATEGORY   DATA TYPE      SELECT  FILTER  SORT",
        "NAME"
    )?;
    for f in found {
        crate::output::outln!(
            "{:<width$}  {:<9}  {:<13}  {:<6}  {:<6}  {}",
            f.name,
            f.category.as_str(),
            format!(
                "{}{}",
                f.data_type.as_str(),
                if f.repeated { "[]" } else { "" }
            ),
            yes(f.selectable),
            yes(f.filterable),
            yes(f.sortable),
        )?;
    }
    Ok(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pattern_selects_by_name() {
        let clicks = matching(Some("METRICS.CLICKS"));
        assert!(clicks.iter().any(|f| f.name == "metrics.clicks"));
        assert!(clicks.iter().all(|f| f.name.contains("metrics.clicks")));
        assert!(matching(None).len() > matching(Some("campaign.")).len());
        assert!(matching(Some("no-such-field")).is_empty());
    }
}

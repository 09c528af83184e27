//! `apictl ads fields [PATTERN] [--from RESOURCE]`: the Reporting API's field catalogue shipped
//! with the SDK (name, category, data type, whether each field may be selected, filtered,
//! sorted, and the `FROM` resources that may select it).

use sa360_video_client_support::printable;
use sa360_video_sdk::search_ads::reporting::fields::{self, FieldInfo};
use serde_json::json;

use crate::cli::FieldsArgs;
use crate::context::{Ctx, print_json};
use crate::error::{AppError, AppResult};

/// The fields whose name contains `pattern` (all without one) that `FROM from` may select (any
/// without one).
pub fn matching(pattern: Option<&str>, from: Option<&str>) -> Vec<&'static FieldInfo> {
    let pattern = pattern.map(str::to_ascii_lowercase);
    fields::catalogue()
        .iter()
        .filter(|f| pattern.as_deref().is_none_or(|p| f.name.contains(p)))
        .filter(|f| from.is_none_or(|r| fields::resources_accepting(f).any(|a| a == r)))
        .collect()
}

fn yes(flag: bool) -> &'static str {
    if flag { "yes" } else { "no" }
}

/// Runs `apictl ads fields`.
pub(super) fn run_fields(ctx: &Ctx, args: &FieldsArgs) -> AppResult<u8> {
    let from = args.from.as_deref();
    if let Some(resource) = from
        && !fields::resource_names().any(|r| r == resource)
    {
        let hint = match fields::nearest(resource, true) {
            Some(name) => format!("did you mean `{name}`?"),
            None => "name a resource of the Reporting API (`campaign`, `ad_group`, ...)".to_owned(),
        };
        return Err(AppError::refused(format!(
            "--from {}: not a resource of apictl's field catalogue (revision {})",
            printable(resource),
            fields::REVISION
        ))
        .hint(hint));
    }
    let found = matching(args.pattern.as_deref(), from);
    if found.is_empty() && from.is_some() {
        return Err(AppError::refused(format!(
            "no field{} that FROM {} may select",
            args.pattern
                .as_deref()
                .map(|p| format!(" containing {p:?}"))
                .unwrap_or_default(),
            from.unwrap_or_default()
        ))
        .hint("run `apictl ads fields PATTERN` to see which resources accept a field"));
    }
    if found.is_empty() {
        let pattern = args.pattern.as_deref().unwrap_or_default();
        let hint = match fields::nearest(pattern, false) {
            Some(name) => format!("did you mean `{name}`? Run `apictl ads fields` for all of them"),
            None => "run `apictl ads fields` without a pattern for all of them".to_owned(),
        };
        return Err(AppError::refused(format!("no field name contains {pattern:?}")).hint(hint));
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
                    "selectableWith": fields::resources_accepting(f).collect::<Vec<_>>(),
                })
            })
            .collect();
        print_json(&json!({ "fields": list }))?;
        return Ok(0);
    }
    let width = found.iter().map(|f| f.name.len()).max().unwrap_or(4).max(4);
    crate::output::outln!(
        "{:<width$}  CATEGORY   DATA TYPE      SELECT  FILTER  SORT  FROM",
        "NAME"
    )?;
    for f in found {
        crate::output::outln!(
            "{:<width$}  {:<9}  {:<13}  {:<6}  {:<6}  {:<4}  {}",
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
            fields::resources_accepting(f).collect::<Vec<_>>().join(","),
        )?;
    }
    Ok(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pattern_selects_by_name() {
        let clicks = matching(Some("METRICS.CLICKS"), None);
        assert!(clicks.iter().any(|f| f.name == "metrics.clicks"));
        assert!(clicks.iter().all(|f| f.name.contains("metrics.clicks")));
        assert!(matching(None, None).len() > matching(Some("campaign."), None).len());
        assert!(matching(Some("no-such-field"), None).is_empty());
    }

    #[test]
    fn from_selects_what_the_resource_may_select() {
        let names = |pattern, from| -> Vec<&str> {
            matching(pattern, from).iter().map(|f| f.name).collect()
        };
        // `ad_group` selects its own fields and its attributed resources' (campaign, customer).
        let ad_group = names(None, Some("ad_group"));
        assert!(ad_group.contains(&"ad_group.name") && ad_group.contains(&"campaign.name"));
        assert!(
            !ad_group
                .iter()
                .any(|n| n.starts_with("ad_group_criterion."))
        );
        // `label` takes no metrics and no segments.
        assert!(names(Some("metrics."), Some("label")).is_empty());
        assert!(names(Some("segments."), Some("label")).is_empty());
        assert_eq!(
            names(Some("metrics.clicks"), Some("campaign")),
            ["metrics.clicks"]
        );
    }
}

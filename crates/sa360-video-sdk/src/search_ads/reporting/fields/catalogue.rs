//! Lookups in the generated catalogue: a field or resource by name, the nearest valid name of a
//! misspelt one.

use super::generated::{FIELDS, RESOURCES};
use super::types::{FieldInfo, ResourceInfo};

/// Every catalogued field (attributes, segments, metrics), sorted by name.
///
/// ```
/// use sa360_video_sdk::search_ads::reporting::fields;
/// let clicks = fields::lookup("metrics.clicks").unwrap();
/// assert!(clicks.selectable && clicks.filterable && clicks.sortable);
/// assert!(fields::catalogue().len() > 700);
/// ```
pub fn catalogue() -> &'static [FieldInfo] {
    FIELDS
}

/// The field of this name, if the catalogue has it.
pub fn lookup(name: &str) -> Option<&'static FieldInfo> {
    FIELDS
        .binary_search_by(|f| f.name.cmp(name))
        .ok()
        .map(|i| &FIELDS[i])
}

/// The names of every resource `FROM` may name, sorted.
pub fn resource_names() -> impl Iterator<Item = &'static str> {
    RESOURCES.iter().map(|r| r.name)
}

/// The resources whose `FROM` accepts `field` in `SELECT` and `WHERE`, sorted, as far as the
/// catalogue knows: those of the table (SR-30) by what they may select, any other by its own
/// fields only (whether it takes more is the service's to say).
///
/// ```
/// use sa360_video_sdk::search_ads::reporting::fields;
/// let from: Vec<_> = fields::resources_accepting(fields::lookup("ad_group.name").unwrap()).collect();
/// assert!(from.contains(&"ad_group") && from.contains(&"keyword_view"));
/// assert!(!from.contains(&"campaign"));
/// ```
pub fn resources_accepting(field: &FieldInfo) -> impl Iterator<Item = &'static str> + '_ {
    RESOURCES
        .iter()
        .filter(move |r| r.accepts(field))
        .map(|r| r.name)
}

pub(crate) fn resource(name: &str) -> Option<&'static ResourceInfo> {
    RESOURCES
        .binary_search_by(|r| r.name.cmp(name))
        .ok()
        .map(|i| &RESOURCES[i])
}

/// Longest name compared for a suggestion: longer input is not a misspelling of a field.
const MAX_SUGGESTION_INPUT: usize = 200;

/// The valid name nearest to `name` (Levenshtein distance, at most a third of its length, and
/// at least 1), among the fields or, with `resources`, the resource names. `None` when nothing
/// is that near.
pub fn nearest(name: &str, resources: bool) -> Option<&'static str> {
    if name.len() > MAX_SUGGESTION_INPUT {
        return None;
    }
    let limit = (name.chars().count() / 3).max(1);
    let names: Box<dyn Iterator<Item = &'static str>> = if resources {
        Box::new(resource_names())
    } else {
        Box::new(FIELDS.iter().map(|f| f.name))
    };
    names
        .map(|candidate| (strsim::levenshtein(name, candidate), candidate))
        .filter(|(d, _)| *d <= limit)
        .min()
        .map(|(_, candidate)| candidate)
}

/// Most edits (insertions, deletions, substitutions, swaps of neighbours) between a name the
/// catalogue does not have and a catalogued one for the default
/// [`UnknownFields`](super::super::UnknownFields) to refuse it as a typo of it (SR-32).
pub const TYPO_DISTANCE: usize = 2;

/// The catalogued name a name the catalogue does not have is taken for a typo of, with the
/// edits between them (SR-32): the nearest field (or, with `resources`, resource name) at most
/// [`TYPO_DISTANCE`] edits away (optimal string alignment:
/// insertions, deletions, substitutions, swaps of neighbours) that differs from it in more than
/// its digits (`headline4` is a sibling of `headline3`, not a typo of it).
///
/// ```
/// use sa360_video_sdk::search_ads::reporting::fields;
/// assert_eq!(fields::typo_of("metrics.clikcs", false), Some(("metrics.clicks", 1)));
/// assert_eq!(fields::typo_of("segments.geo_target_neighborhood", false), None);
/// assert_eq!(fields::typo_of("ad_group_ad.ad.text_ad.description3", false), None);
/// ```
pub fn typo_of(name: &str, resources: bool) -> Option<(&'static str, usize)> {
    if resources {
        typo_among(name, resource_names())
    } else {
        typo_among(name, FIELDS.iter().map(|f| f.name))
    }
}

/// [`typo_of`] among `names`.
pub(crate) fn typo_among(
    name: &str,
    names: impl Iterator<Item = &'static str>,
) -> Option<(&'static str, usize)> {
    if name.len() > MAX_SUGGESTION_INPUT {
        return None;
    }
    let letters = |s: &str| -> String { s.chars().filter(|c| !c.is_ascii_digit()).collect() };
    names
        .filter(|candidate| letters(candidate) != letters(name))
        .map(|candidate| (strsim::osa_distance(name, candidate), candidate))
        .filter(|(d, _)| *d <= TYPO_DISTANCE)
        .min()
        .map(|(d, candidate)| (candidate, d))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tables_are_sorted_so_lookups_find_every_name() {
        assert!(FIELDS.windows(2).all(|w| w[0].name < w[1].name));
        assert!(RESOURCES.windows(2).all(|w| w[0].name < w[1].name));
        for f in FIELDS {
            assert_eq!(lookup(f.name).map(|g| g.name), Some(f.name));
        }
        assert!(resource("keyword_view").is_some());
        assert!(resource("metrics").is_none());
    }

    #[test]
    fn a_misspelt_name_gets_the_nearest_valid_one() {
        assert_eq!(nearest("campaign.nme", false), Some("campaign.name"));
        assert_eq!(nearest("metrics.clicsk", false), Some("metrics.clicks"));
        assert_eq!(nearest("campaing", true), Some("campaign"));
        assert_eq!(nearest("zzzzzzzzzzzzzzzzzz", false), None);
    }
}

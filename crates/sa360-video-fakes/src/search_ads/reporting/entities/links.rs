//! The labels of an account and the label links (`campaign_label`, `ad_group_label`,
//! `ad_group_ad_label`, `ad_group_criterion_label`), seeded and fixed (DECISIONS SR-22): three
//! labels; the even campaigns carry "Brand" and the first campaign also "Top performers"; the
//! first ad group of each campaign carries "Seasonal"; the first ad of each ad group carries "Top
//! performers"; the first two keywords of each ad group carry "Seasonal". These resources take no
//! metrics and no segments (the SDK's table, `specs/search-ads-report-fields.yaml`), so a row is
//! one entity.

use super::model::Entity;
use crate::search_ads::data::ADS;
use crate::search_ads::data::{AD_GROUPS, CAMPAIGNS};

/// The names of the labels, by label number.
pub(crate) const LABELS: [&str; 3] = ["Brand", "Seasonal", "Top performers"];

/// `label.text_label.background_color` by label number.
pub(crate) const COLOURS: [&str; 3] = ["#1A73E8", "#F9AB00", "#188038"];

/// The ID of label `l` (the same in every account: a label is named by its customer).
pub(crate) fn label_id(l: u64) -> i64 {
    4_100_000_001 + l as i64
}

/// Whether `from` is `label` or a label link.
pub(crate) fn serves(from: &str) -> bool {
    matches!(
        from,
        "label"
            | "campaign_label"
            | "ad_group_label"
            | "ad_group_ad_label"
            | "ad_group_criterion_label"
    )
}

/// The labels of campaign `c`.
pub(crate) fn campaign_labels(c: u64) -> Vec<u64> {
    let mut out = Vec::new();
    if c.is_multiple_of(2) {
        out.push(0);
    }
    if c == 0 {
        out.push(2);
    }
    out
}

/// The labels of ad group `g` (of any campaign).
pub(crate) fn ad_group_labels(g: u64) -> Vec<u64> {
    if g == 0 { vec![1] } else { Vec::new() }
}

/// The labels of ad `s` (of any ad group).
pub(crate) fn ad_labels(s: u64) -> Vec<u64> {
    if s == 0 { vec![2] } else { Vec::new() }
}

/// The labels of keyword `s` (of any ad group).
pub(crate) fn keyword_labels(s: u64) -> Vec<u64> {
    if s < 2 { vec![1] } else { Vec::new() }
}

/// The entities of `FROM from` (`label` or a label link), in a fixed order.
pub(crate) fn entities(from: &str) -> Vec<Entity> {
    let mut out = Vec::new();
    let with = |label: u64, c: Option<u64>, g: Option<u64>, s: Option<u64>| Entity {
        c,
        g,
        s,
        label: Some(label),
        ..Entity::default()
    };
    match from {
        "label" => {
            for l in 0..LABELS.len() as u64 {
                out.push(with(l, None, None, None));
            }
        }
        "campaign_label" => {
            for c in 0..CAMPAIGNS {
                for l in campaign_labels(c) {
                    out.push(with(l, Some(c), None, None));
                }
            }
        }
        _ => {
            for c in 0..CAMPAIGNS {
                for g in 0..AD_GROUPS {
                    if from == "ad_group_label" {
                        for l in ad_group_labels(g) {
                            out.push(with(l, Some(c), Some(g), None));
                        }
                        continue;
                    }
                    for s in 0..ADS {
                        let labels = if from == "ad_group_ad_label" {
                            ad_labels(s)
                        } else {
                            keyword_labels(s)
                        };
                        for l in labels {
                            out.push(with(l, Some(c), Some(g), Some(s)));
                        }
                    }
                }
            }
        }
    }
    out
}

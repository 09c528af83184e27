//! Bounds: `minimum`/`maximum` (exclusive or not), lengths, item and
//! property counts, `uniqueItems`, `pattern` and `multipleOf`.

use super::facets::Facets;
use crate::diff::compare::differ::{Differ, Site};
use crate::diff::rules as r;

impl<'a> Differ<'a> {
    pub(super) fn bounds(&mut self, site: &Site, o: &Facets<'a>, n: &Facets<'a>) {
        self.numeric_bound(site, "minimum", &o.minimum, &n.minimum, true);
        self.numeric_bound(site, "maximum", &o.maximum, &n.maximum, false);
        let counts = [
            ("minLength", o.min_length, n.min_length, true),
            ("maxLength", o.max_length, n.max_length, false),
            ("minItems", o.min_items, n.min_items, true),
            ("maxItems", o.max_items, n.max_items, false),
            ("minProperties", o.min_properties, n.min_properties, true),
            ("maxProperties", o.max_properties, n.max_properties, false),
        ];
        for (name, a, b, lower) in counts {
            let to = |v: Option<usize>| v.map(|v| (v as f64, false, v.to_string()));
            self.numeric_bound(site, name, &to(a), &to(b), lower);
        }
        match (o.unique_items, n.unique_items) {
            (false, true) => self.at(site, &r::BOUND_NARROWED, "uniqueItems added"),
            (true, false) => self.at(site, &r::BOUND_WIDENED, "uniqueItems removed"),
            _ => {}
        }
        self.pattern(site, o, n);
        match (o.multiple_of, n.multiple_of) {
            (None, Some(m)) => self.at(
                site,
                &r::BOUND_NARROWED,
                format_args!("multipleOf {m} added"),
            ),
            (Some(m), None) => self.at(
                site,
                &r::BOUND_WIDENED,
                format_args!("multipleOf {m} removed"),
            ),
            (Some(a), Some(b)) if a != b => {
                let rule = if (b / a).fract() == 0.0 {
                    &r::BOUND_NARROWED
                } else if (a / b).fract() == 0.0 {
                    &r::BOUND_WIDENED
                } else {
                    &r::CONSTRAINT_CHANGED
                };
                self.at(
                    site,
                    rule,
                    format_args!("multipleOf changed from {a} to {b}"),
                );
            }
            _ => {}
        }
    }

    /// `pattern` added, removed or changed.
    pub(super) fn pattern(&mut self, site: &Site, o: &Facets<'a>, n: &Facets<'a>) {
        // `.*` (anchored or not) and the empty pattern match every string:
        // the same as no pattern.
        let real = |p: &Option<String>| {
            p.clone()
                .filter(|p| !matches!(p.as_str(), "" | ".*" | "^.*$" | "^.*" | ".*$"))
        };
        match (&real(&o.pattern), &real(&n.pattern)) {
            (None, Some(p)) => self.at(
                site,
                &r::BOUND_NARROWED,
                format_args!("pattern `{p}` added"),
            ),
            (Some(p), None) => self.at(
                site,
                &r::PATTERN_REMOVED,
                format_args!("pattern `{p}` removed"),
            ),
            (Some(a), Some(b)) if a != b => self.at(
                site,
                &r::PATTERN_CHANGED,
                format_args!("pattern changed from `{a}` to `{b}`"),
            ),
            _ => {}
        }
    }

    /// A lower (`minimum`, `minLength`, …) or upper bound.
    fn numeric_bound(
        &mut self,
        site: &Site,
        name: &str,
        o: &Option<(f64, bool, String)>,
        n: &Option<(f64, bool, String)>,
        lower: bool,
    ) {
        let show_bound = |(_, exclusive, text): &(f64, bool, String)| {
            if *exclusive {
                format!("{text} (exclusive)")
            } else {
                text.clone()
            }
        };
        match (o, n) {
            (None, None) => {}
            (None, Some(b)) => self.at(
                site,
                &r::BOUND_NARROWED,
                format_args!("{name} {} added", show_bound(b)),
            ),
            (Some(a), None) => self.at(
                site,
                &r::BOUND_WIDENED,
                format_args!("{name} {} removed", show_bound(a)),
            ),
            (Some(a), Some(b)) => {
                // Tighter: a lower bound goes up (or becomes exclusive), an
                // upper bound goes down (or becomes exclusive).
                let key = |(v, exclusive, _): &(f64, bool, String)| {
                    if lower {
                        (*v, *exclusive)
                    } else {
                        (-*v, *exclusive)
                    }
                };
                let (ka, kb) = (key(a), key(b));
                if ka == kb {
                    return;
                }
                let tighter = kb.0 > ka.0 || (kb.0 == ka.0 && kb.1);
                let (rule, verb) = match (tighter, lower) {
                    (true, true) => (&r::BOUND_NARROWED, "raised"),
                    (true, false) => (&r::BOUND_NARROWED, "lowered"),
                    (false, true) => (&r::BOUND_WIDENED, "lowered"),
                    (false, false) => (&r::BOUND_WIDENED, "raised"),
                };
                self.at(
                    site,
                    rule,
                    format_args!("{name} {verb} from {} to {}", show_bound(a), show_bound(b)),
                );
            }
        }
    }
}

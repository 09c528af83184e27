//! Operations: pairing, deprecation and sunset, callbacks; one file each for security,
//! parameters, request bodies and responses.

mod bodies;
mod parameters;
mod responses;
mod security;

use super::differ::{Differ, Subject};
use crate::diff::rules as r;
use crate::openapi::{Op, escape};

/// The report subject of an operation.
fn subject_of(op: &Op<'_>) -> Subject {
    Subject::Operation {
        id: op.id(),
        method: op.method.to_uppercase(),
        path: op.path.to_owned(),
    }
}

/// Pair operations: the same operationId on the same route first, then the
/// same operationId, then the same route; each operation is paired at most
/// once (an operationId reused on several routes pairs route by route).
fn pair_operations(old: &[Op<'_>], new: &[Op<'_>]) -> Vec<Option<usize>> {
    fn same_id(o: &Op<'_>, n: &Op<'_>) -> bool {
        o.operation.operation_id.is_some() && o.operation.operation_id == n.operation.operation_id
    }
    fn same_route(o: &Op<'_>, n: &Op<'_>) -> bool {
        o.method == n.method && o.route() == n.route()
    }
    fn same_both(o: &Op<'_>, n: &Op<'_>) -> bool {
        same_id(o, n) && same_route(o, n)
    }
    let mut pairs = vec![None; old.len()];
    let mut taken = vec![false; new.len()];
    let passes: [fn(&Op<'_>, &Op<'_>) -> bool; 3] = [same_both, same_id, same_route];
    for pass in passes {
        for (i, o) in old.iter().enumerate() {
            if pairs[i].is_some() {
                continue;
            }
            if let Some(j) = (0..new.len()).find(|&j| !taken[j] && pass(o, &new[j])) {
                taken[j] = true;
                pairs[i] = Some(j);
            }
        }
    }
    pairs
}

/// `deprecated: true`, or the `x-deprecated: true` extension.
fn is_deprecated(flag: bool, extensions: &Extensions) -> bool {
    flag || extensions.get("x-deprecated") == Some(&serde_json::Value::Bool(true))
}

/// The sunset date (`YYYY-MM-DD`) of an `x-sunset` extension.
fn sunset_of(extensions: &Extensions) -> Option<String> {
    let value = extensions.get("x-sunset")?.as_str()?;
    let date: String = value.chars().take(10).collect();
    let valid = date.len() == 10
        && date.char_indices().all(|(i, c)| {
            if i == 4 || i == 7 {
                c == '-'
            } else {
                c.is_ascii_digit()
            }
        });
    valid.then_some(date)
}

/// Today's UTC date, `YYYY-MM-DD` (`XTASK_DIFF_TODAY` overrides it, for
/// tests and to replay a review).
fn today() -> String {
    if let Ok(day) = std::env::var("XTASK_DIFF_TODAY") {
        return day;
    }
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let days = i64::try_from(secs / 86_400).unwrap_or(0);
    // Howard Hinnant's civil_from_days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02}")
}

/// The extensions map of `openapiv3` objects (`x-…` keys).
type Extensions = indexmap::IndexMap<String, serde_json::Value>;

impl<'a> Differ<'a> {
    pub(in crate::diff::compare) fn operations(&mut self) {
        let (old, new) = (self.old.operations(), self.new.operations());
        self.operation_lists(&old, &new);
    }

    /// Pair and compare two lists of operations (the documents', or a
    /// callback's on both sides).
    pub(in crate::diff::compare) fn operation_lists(
        &mut self,
        old_ops: &[Op<'a>],
        new_ops: &[Op<'a>],
    ) {
        let pairs = pair_operations(old_ops, new_ops);
        let mut paired_new = vec![false; new_ops.len()];
        for (o, j) in old_ops.iter().zip(&pairs) {
            match j {
                None => {
                    let sunset = sunset_of(&o.operation.extensions);
                    let deprecated = is_deprecated(o.operation.deprecated, &o.operation.extensions);
                    let (rule, why) = match sunset {
                        Some(date) if deprecated && date.as_str() <= today().as_str() => (
                            &r::OPERATION_REMOVED_AFTER_SUNSET,
                            format!(" (deprecated, sunset {date} has passed)"),
                        ),
                        Some(date) if deprecated => {
                            (&r::OPERATION_REMOVED, format!(" before its sunset {date}"))
                        }
                        _ => (&r::OPERATION_REMOVED, String::new()),
                    };
                    let detail = format!("operation `{}` ({}) removed{why}", o.id(), o.label());
                    self.record(&subject_of(o), &o.pointer, rule, detail, None);
                }
                Some(j) => {
                    paired_new[*j] = true;
                    self.operation(o, &new_ops[*j]);
                }
            }
        }
        for (n, paired) in new_ops.iter().zip(paired_new) {
            if !paired {
                let detail = format!("operation `{}` ({}) added", n.id(), n.label());
                self.record(
                    &subject_of(n),
                    &n.pointer,
                    &r::OPERATION_ADDED,
                    detail,
                    None,
                );
            }
        }
    }

    pub(in crate::diff::compare) fn operation(&mut self, o: &Op<'a>, n: &Op<'a>) {
        let subject = subject_of(n);
        let at = n.pointer.clone();
        if o.operation.operation_id != n.operation.operation_id {
            let detail = format!("operationId changed from `{}` to `{}`", o.id(), n.id());
            self.record(&subject, &at, &r::OPERATION_ID_CHANGED, detail, None);
        }
        if o.method != n.method || o.route() != n.route() {
            let detail = format!("route changed from {} to {}", o.label(), n.label());
            self.record(&subject, &at, &r::OPERATION_ROUTE_CHANGED, detail, None);
        }
        let deprecated =
            |op: &Op<'_>| is_deprecated(op.operation.deprecated, &op.operation.extensions);
        self.deprecation(&subject, &at, "operation", deprecated(o), deprecated(n));
        self.sunset(
            &subject,
            &at,
            "operation",
            &o.operation.extensions,
            &n.operation.extensions,
        );
        self.security(&subject, o, n);
        self.parameters(&subject, o, n);
        self.request_body(&subject, o, n);
        self.responses(&subject, o, n);
        self.callbacks(&subject, o, n);
    }

    /// Compare the sunset dates (`x-sunset`) of an operation or parameter.
    pub(in crate::diff::compare) fn sunset(
        &mut self,
        subject: &Subject,
        at: &str,
        what: &str,
        old: &Extensions,
        new: &Extensions,
    ) {
        match (sunset_of(old), sunset_of(new)) {
            (Some(a), Some(b)) if b < a => self.record(
                subject,
                at,
                &r::SUNSET_BROUGHT_FORWARD,
                format!("{what} sunset brought forward from {a} to {b}"),
                None,
            ),
            (Some(a), Some(b)) if a != b => self.record(
                subject,
                at,
                &r::SUNSET_CHANGED,
                format!("{what} sunset postponed from {a} to {b}"),
                None,
            ),
            (None, Some(b)) => self.record(
                subject,
                at,
                &r::SUNSET_CHANGED,
                format!("{what} sunset {b} announced"),
                None,
            ),
            (Some(a), None) => self.record(
                subject,
                at,
                &r::SUNSET_CHANGED,
                format!("{what} sunset {a} withdrawn"),
                None,
            ),
            _ => {}
        }
    }

    /// Compare the callbacks of two paired operations; inside a callback
    /// the provider sends the requests, so directions and roles swap.
    pub(in crate::diff::compare) fn callbacks(
        &mut self,
        subject: &Subject,
        o: &Op<'a>,
        n: &Op<'a>,
    ) {
        if self.callback.is_some() {
            // Callbacks of callbacks: not walked (no known API uses them).
            return;
        }
        let at = format!("{}/callbacks", n.pointer);
        for (name, old_cb) in &o.operation.callbacks {
            let Some(new_cb) = n.operation.callbacks.get(name) else {
                let detail = format!("callback `{name}` removed");
                self.record(subject, &at, &r::CALLBACK_REMOVED, detail, None);
                continue;
            };
            let base_old = format!("{}/callbacks/{}", o.pointer, escape(name));
            let base_new = format!("{}/callbacks/{}", n.pointer, escape(name));
            let old_ops = crate::openapi::operations_in(old_cb.iter(), &base_old);
            let new_ops = crate::openapi::operations_in(new_cb.iter(), &base_new);
            self.callback = Some(name.clone());
            self.callback_lists(subject, &old_ops, &new_ops);
            self.callback = None;
        }
        for name in n.operation.callbacks.keys() {
            if !o.operation.callbacks.contains_key(name) {
                let detail = format!("callback `{name}` added");
                self.record(subject, &at, &r::CALLBACK_ADDED, detail, None);
            }
        }
    }

    /// The operations of one callback on both sides, reported against the
    /// operation owning the callback.
    pub(in crate::diff::compare) fn callback_lists(
        &mut self,
        subject: &Subject,
        old_ops: &[Op<'a>],
        new_ops: &[Op<'a>],
    ) {
        let pairs = pair_operations(old_ops, new_ops);
        let mut paired_new = vec![false; new_ops.len()];
        for (o, j) in old_ops.iter().zip(&pairs) {
            match j {
                None => {
                    let detail = format!("request {} removed", o.label());
                    self.record(subject, &o.pointer, &r::CALLBACK_REMOVED, detail, None);
                }
                Some(j) => {
                    paired_new[*j] = true;
                    let n = &new_ops[*j];
                    self.security(subject, o, n);
                    self.parameters(subject, o, n);
                    self.request_body(subject, o, n);
                    self.responses(subject, o, n);
                }
            }
        }
        for (n, paired) in new_ops.iter().zip(paired_new) {
            if !paired {
                let detail = format!("request {} added", n.label());
                self.record(subject, &n.pointer, &r::CALLBACK_ADDED, detail, None);
            }
        }
    }
}

//! The detail lists of a rejected batch (SA-9): issue codes, one detail
//! (`0x<code>: <text> for conversion index=<n>`), and the `Details: [...]`
//! list of a 400 message, read even when Google cut it short.

use std::fmt;

/// A conversion upload error code (`0x0000011A`, ...), as listed in SA-9.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct IssueCode(pub u32);

impl IssueCode {
    /// `0x00000100`: a field is missing or invalid (the fake's code; Google documents none).
    pub const FIELD_INVALID: Self = Self(0x100);
    /// `0x00000101`: click id not found.
    pub const CLICK_ID_NOT_FOUND: Self = Self(0x101);
    /// `0x0000010E`: Floodlight activity not found.
    pub const FLOODLIGHT_ACTIVITY_NOT_FOUND: Self = Self(0x10E);
    /// `0x00000115`: custom dimension not found.
    pub const CUSTOM_DIMENSION_NOT_FOUND: Self = Self(0x115);
    /// `0x00000116`: custom metric not found.
    pub const CUSTOM_METRIC_NOT_FOUND: Self = Self(0x116);
    /// `0x0000011A`: the conversion id was already used (the server stored it before).
    pub const DUPLICATE_CONVERSION_ID: Self = Self(0x11A);
    /// `0x0000011B`: conversion id not found (update).
    pub const CONVERSION_ID_NOT_FOUND: Self = Self(0x11B);
    /// `0x0000011D`: no permission for the advertiser.
    pub const NO_PERMISSION: Self = Self(0x11D);
    /// `0x0000011F`: the conversion id is repeated within the request.
    pub const REPEATED_IN_REQUEST: Self = Self(0x11F);

    /// A short description of a documented code.
    pub fn description(self) -> Option<&'static str> {
        Some(match self {
            Self::FIELD_INVALID => "a field is missing or invalid",
            Self::CLICK_ID_NOT_FOUND => "click id not found",
            Self::FLOODLIGHT_ACTIVITY_NOT_FOUND => "Floodlight activity not found",
            Self::CUSTOM_DIMENSION_NOT_FOUND => "custom dimension not found",
            Self::CUSTOM_METRIC_NOT_FOUND => "custom metric not found",
            Self::DUPLICATE_CONVERSION_ID => "conversion id already used",
            Self::CONVERSION_ID_NOT_FOUND => "conversion id not found",
            Self::NO_PERMISSION => "no permission for the advertiser",
            Self::REPEATED_IN_REQUEST => "conversion id repeated within the request",
            _ => return None,
        })
    }
}

impl fmt::Display for IssueCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "0x{:08X}", self.0)
    }
}

/// One detail of a rejected batch: `0x<code>: <text> for conversion index=<n>`
/// (SA-9), or a batch-wide text such as `Empty batch encountered.`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConversionIssue {
    /// The 0-based index of the conversion. In an
    /// [`Error::Api`](super::Error::Api) it is the index in the request; in a
    /// [`WriteReport`](crate::search_ads::WriteReport) outcome it is the index
    /// in the caller's input. `None` for a batch-wide problem.
    pub index: Option<usize>,
    /// The code, when the detail has one.
    pub code: Option<IssueCode>,
    /// The text, without the code and the index suffix.
    pub message: String,
}

impl ConversionIssue {
    /// True for `0x0000011A` (conversion id already used).
    pub fn is_duplicate(&self) -> bool {
        self.code == Some(IssueCode::DUPLICATE_CONVERSION_ID)
    }
}

impl fmt::Display for ConversionIssue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(code) = self.code {
            write!(f, "{code}: ")?;
        }
        f.write_str(&self.message)?;
        if let Some(i) = self.index {
            write!(f, " (conversion index {i})")?;
        }
        Ok(())
    }
}

pub(crate) const DETAILS_MARKER: &str = "Details: [";
const INDEX_MARKER: &str = " index=";
const FOR_MARKER: &str = " for ";

/// Splits `<text> for <item> index=<n>` (`item` is `conversion`, or
/// `availability` for updateAvailability) into the text and the index. The
/// index must end the detail: a detail with anything behind its index is not
/// one this parser can vouch for.
fn split_index(rest: &str) -> Option<(&str, Option<usize>)> {
    let pos = rest.rfind(INDEX_MARKER)?;
    let head = &rest[..pos];
    let for_pos = head.rfind(FOR_MARKER)?;
    let item = &head[for_pos + FOR_MARKER.len()..];
    if item.is_empty() || !item.chars().all(|c| c.is_ascii_alphabetic()) {
        return None;
    }
    let digits = &rest[pos + INDEX_MARKER.len()..];
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let index = digits.parse::<usize>().ok()?;
    Some((&head[..for_pos], Some(index)))
}

/// Parses one detail: `0x0000011A: text for conversion index=3`, or a text
/// without code or index.
pub(crate) fn parse_detail(detail: &str) -> ConversionIssue {
    let detail = detail.trim();
    let (code, rest) = match split_code(detail) {
        Some((code, rest)) => (Some(code), rest),
        None => (None, detail),
    };
    let (message, index) = split_index(rest).unwrap_or((rest, None));
    ConversionIssue {
        index,
        code,
        message: message.trim().to_owned(),
    }
}

/// `0x` + 8 hex digits + `:` at the start of `text`.
pub(crate) fn split_code(text: &str) -> Option<(IssueCode, &str)> {
    let hex = text
        .strip_prefix("0x")
        .or_else(|| text.strip_prefix("0X"))?;
    let digits = hex.get(..8)?;
    if !digits.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    let rest = hex.get(8..)?.strip_prefix(':')?;
    let code = u32::from_str_radix(digits, 16).ok()?;
    Some((IssueCode(code), rest.trim_start()))
}

/// Positions in `list` where a coded detail starts (`0x########:` at the start
/// or after `", "`).
fn detail_starts(list: &str) -> Vec<usize> {
    let mut starts = Vec::new();
    for (pos, _) in list.match_indices("0x") {
        let at_boundary = pos == 0 || list[..pos].ends_with(", ");
        if at_boundary && split_code(&list[pos..]).is_some() {
            starts.push(pos);
        }
    }
    starts
}

/// The details of a 400 answer and whether they arrived whole.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Details {
    /// The details that arrived whole, in the server's order.
    pub issues: Vec<ConversionIssue>,
    /// False when the list was cut short (no closing `]`) or held a detail
    /// that could not be read: conversions it does not name are unknown.
    pub complete: bool,
}

/// Parses the details of `The request was not valid. Details: [d, d, ...]`.
///
/// Details are split at each `, 0x########:` boundary, so a detail text that
/// itself contains commas stays whole. A list without coded details is one
/// batch-wide detail (`[Empty batch encountered.]`).
///
/// Google truncates long messages. In a list without its closing `]` the last
/// detail is kept only when the separator behind its index proves the index
/// whole (`… index=1, 0x0000`); a detail cut inside its text or its index is
/// dropped, and the list is marked incomplete.
pub(crate) fn parse_details_message(message: &str) -> Details {
    let Some(start) = message.find(DETAILS_MARKER) else {
        return Details {
            issues: Vec::new(),
            complete: true,
        };
    };
    let body = &message[start + DETAILS_MARKER.len()..];
    let (list, closed) = match body.rfind(']') {
        Some(end) if body[end + 1..].trim().is_empty() => (&body[..end], true),
        _ => (body, false),
    };
    let starts = detail_starts(list);
    let mut issues = Vec::with_capacity(starts.len() + 1);
    let mut complete = closed;
    if starts.is_empty() {
        let text = list.trim();
        // Without its `]`, even a batch-wide text may be cut: nothing is known.
        if closed && !text.is_empty() {
            issues.push(parse_detail(text));
        }
        return Details { issues, complete };
    }
    // Text before the first coded detail is a batch-wide detail of its own.
    let lead = list[..starts[0]].trim().trim_end_matches(',').trim();
    if !lead.is_empty() {
        issues.push(parse_detail(lead));
    }
    for (n, &s) in starts.iter().enumerate() {
        let last = n + 1 == starts.len();
        let end = starts.get(n + 1).map_or(list.len(), |&next| next);
        let mut piece = list[s..end].trim_end();
        if last && !closed {
            // `…index=3, 0x0000`: the cut fell after the separator behind
            // an index, so the detail before it is whole; anything else may
            // be cut short.
            let whole = piece
                .rmatch_indices(',')
                .map(|(pos, _)| &piece[..pos])
                .find(|head| parse_detail(head).index.is_some());
            match whole {
                Some(head) => piece = head,
                None => continue,
            }
        }
        issues.push(parse_detail(piece.trim_end_matches(',')));
    }
    // A coded detail without a readable index beside indexed ones cannot be
    // placed: the list is not understood whole.
    if issues.iter().any(|i| i.index.is_some()) {
        let before = issues.len();
        issues.retain(|i| i.index.is_some() || i.code.is_none());
        complete &= issues.len() == before;
    }
    Details { issues, complete }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_coded_detail_parses() {
        let d = parse_detail(
            "0x00000116: Custom metric 'Banking Account Opens' is not found for conversion index=0",
        );
        assert_eq!(d.code, Some(IssueCode::CUSTOM_METRIC_NOT_FOUND));
        assert_eq!(d.index, Some(0));
        assert_eq!(
            d.message,
            "Custom metric 'Banking Account Opens' is not found"
        );
        assert_eq!(
            d.to_string(),
            "0x00000116: Custom metric 'Banking Account Opens' is not found (conversion index 0)"
        );
    }

    #[test]
    fn a_details_list_with_commas_in_texts_splits_at_codes() {
        let msg = "The request was not valid. Details: [0x0000011A: Advertiser conversion ID 'a, b' is already used by conversion 77 for conversion index=3, 0x00000101: Click ID not found for conversion index=12]";
        let parsed = parse_details_message(msg);
        assert!(parsed.complete);
        let d = parsed.issues;
        assert_eq!(d.len(), 2);
        assert_eq!(d[0].index, Some(3));
        assert!(d[0].is_duplicate());
        assert_eq!(
            d[0].message,
            "Advertiser conversion ID 'a, b' is already used by conversion 77"
        );
        assert_eq!(d[1].code, Some(IssueCode::CLICK_ID_NOT_FOUND));
        assert_eq!(d[1].index, Some(12));
        let a = parse_detail(
            "0x00000100: field is missing or invalid: agencyId for availability index=2",
        );
        assert_eq!(a.index, Some(2));
        assert_eq!(a.message, "field is missing or invalid: agencyId");
        let odd = parse_detail("0x00000100: text for two words index=2");
        assert_eq!(odd.index, None);
    }

    #[test]
    fn a_batch_wide_detail_has_no_index() {
        let d =
            parse_details_message("The request was not valid. Details: [Empty batch encountered.]");
        assert_eq!(
            d,
            Details {
                issues: vec![ConversionIssue {
                    index: None,
                    code: None,
                    message: "Empty batch encountered.".into()
                }],
                complete: true
            }
        );
        assert!(
            parse_details_message("Invalid Credentials")
                .issues
                .is_empty()
        );
    }

    #[test]
    fn a_truncated_details_list_keeps_the_complete_details() {
        const HEAD: &str = "The request was not valid. Details: [";
        let metric = "0x00000116: Custom metric 'x' is not found for conversion index=0";
        // Cut inside the next detail's code: the first detail is whole.
        let d = parse_details_message(&format!("{HEAD}{metric}, 0x0000"));
        assert!(!d.complete);
        assert_eq!(d.issues.len(), 1);
        assert_eq!(d.issues[0].index, Some(0));
        assert_eq!(d.issues[0].message, "Custom metric 'x' is not found");
        // Cut inside a detail's text: the fragment is dropped, not taken for
        // a batch-wide detail.
        let d = parse_details_message(&format!(
            "{HEAD}{metric}, 0x00000101: Click ID 'a, b' not fo"
        ));
        assert!(!d.complete);
        assert_eq!(d.issues.len(), 1);
        assert_eq!(d.issues[0].index, Some(0));
        // Cut inside an index: `index=1` may have been `index=12`.
        let d = parse_details_message(&format!(
            "{HEAD}{metric}, 0x00000101: Click ID not found for conversion index=1"
        ));
        assert!(!d.complete);
        assert_eq!(d.issues.len(), 1);
        // Cut right behind a separator: both are whole.
        let d = parse_details_message(&format!(
            "{HEAD}{metric}, 0x00000101: Click ID 'a, b' not found for conversion index=12,"
        ));
        assert!(!d.complete);
        assert_eq!(d.issues.len(), 2);
        assert_eq!(d.issues[1].index, Some(12));
        // Cut before any detail ended: nothing is known, not even batch-wide.
        let d = parse_details_message(&format!("{HEAD}Empty batch enc"));
        assert_eq!(
            d,
            Details {
                issues: vec![],
                complete: false
            }
        );
        // Anything behind an index makes the detail unreadable.
        let d = parse_details_message(&format!(
            "{HEAD}{metric}, 0x00000101: Click ID not found for conversion index=1x]"
        ));
        assert!(!d.complete);
        assert_eq!(d.issues.len(), 1);
    }

    #[test]
    fn issue_codes_print_as_eight_upper_hex_digits() {
        assert_eq!(IssueCode::DUPLICATE_CONVERSION_ID.to_string(), "0x0000011A");
        assert_eq!(IssueCode(0xABC).description(), None);
    }
}

//! The answers of the batch methods (insert, update, updateAvailability) that are not an echo:
//! a rejected item's detail, the 400s of a body Google's parser refuses, and the one 400 that
//! names every rejected item. The bodies themselves are read by `parse`.

use axum::http::StatusCode;
use axum::response::Response;

use crate::errors::{GoogleErrorItem, google_error};
use crate::faults::{DetailsCut, DetailsTruncationApplied};
use crate::search_ads::record::Schema;

/// How Google starts the message of a 400 that lists rejected items.
const REQUEST_NOT_VALID: &str = "The request was not valid. Details: ";

/// Whether `name` is a field of `Conversion`.
pub(crate) fn is_conversion_field(name: &str) -> bool {
    Schema::Conversion.kind(name).is_some()
}

/// Whether `name` is a field of `Availability`.
pub(crate) fn is_availability_field(name: &str) -> bool {
    Schema::Availability.kind(name).is_some()
}

/// A rejected item: its hex code and text (without the index suffix).
pub(crate) struct Detail {
    pub(crate) code: u32,
    pub(crate) text: String,
}

impl Detail {
    pub(super) fn new(code: u32, text: impl Into<String>) -> Self {
        Self {
            code,
            text: text.into(),
        }
    }

    pub(super) fn invalid(field: &str) -> Self {
        Self::new(0x100, format!("Field is missing or invalid: {field}"))
    }
}

/// A whole-request problem: Google's JSON parser or a batch-wide validation failure.
pub(super) fn bad_payload(message: String, reason: &'static str) -> Response {
    google_error(
        StatusCode::BAD_REQUEST,
        &message,
        &[GoogleErrorItem::new(reason, message.clone())],
    )
}

/// A 400 for a batch without items.
pub(super) fn empty_batch() -> Response {
    let message = format!("{REQUEST_NOT_VALID}[Empty batch encountered.]");
    bad_payload(message, "requestValidation")
}

/// A 400 for a name that is not a field, at the top level or `at` an item.
pub(super) fn unknown_name(name: &str, at: Option<&str>) -> Response {
    let message = match at {
        Some(at) => {
            format!(
                "Invalid JSON payload received. Unknown name \"{name}\" at '{at}': Cannot find field."
            )
        }
        None => {
            format!("Invalid JSON payload received. Unknown name \"{name}\": Cannot find field.")
        }
    };
    bad_payload(message, "invalid")
}

/// The 400 naming every rejected item (`0x...: text for {item} index=i`), cut short as Google
/// cuts long lists when `cut` says so.
pub(super) fn batch_failure(
    details: &[(usize, Detail)],
    item: &str,
    cut: Option<DetailsCut>,
) -> Response {
    let mut rendered: Vec<String> = details
        .iter()
        .map(|(i, d)| format!("0x{:08X}: {} for {item} index={i}", d.code, d.text))
        .collect();
    let Some(cut) = cut.filter(|_| !details.is_empty()) else {
        let message = format!("{REQUEST_NOT_VALID}[{}]", rendered.join(", "));
        let items: Vec<GoogleErrorItem> = rendered
            .into_iter()
            .map(|detail| GoogleErrorItem::new("requestValidation", detail))
            .collect();
        return google_error(StatusCode::BAD_REQUEST, &message, &items);
    };
    // A long message cut short, as Google cuts them: the last detail loses
    // its end, the list its `]`, and `errors[]` ends with the same fragment.
    let (index, last) = &details[details.len() - 1];
    let fragment = match cut {
        DetailsCut::InsideCode => format!("0x{:04X}", last.code >> 16),
        DetailsCut::InsideText => {
            let half: String = last
                .text
                .chars()
                .take(last.text.chars().count() / 2)
                .collect();
            format!("0x{:08X}: {half}", last.code)
        }
    };
    tracing::debug!(index, ?cut, "list of details cut short");
    rendered.pop();
    rendered.push(fragment);
    let message = format!("{REQUEST_NOT_VALID}[{}", rendered.join(", "));
    let items: Vec<GoogleErrorItem> = rendered
        .into_iter()
        .map(|detail| GoogleErrorItem::new("requestValidation", detail))
        .collect();
    let mut response = google_error(StatusCode::BAD_REQUEST, &message, &items);
    response.extensions_mut().insert(DetailsTruncationApplied);
    response
}

#[cfg(test)]
mod tests {
    use super::{Detail, batch_failure};
    use crate::faults::{DetailsCut, DetailsTruncationApplied};
    use crate::search_ads::conversions::tests::{answer, message};

    #[test]
    fn the_field_names_are_those_of_each_object() {
        assert!(super::is_conversion_field("customerId"));
        assert!(super::is_conversion_field("adGroupId"));
        assert!(!super::is_conversion_field("customer"));
        assert!(super::is_availability_field("availabilityTimestamp"));
        assert!(!super::is_availability_field("conversionId"));
    }

    #[tokio::test]
    async fn the_400_names_every_rejected_item_and_can_be_cut_as_google_cuts_it() {
        let details = [
            (1, Detail::new(0x11F, "first problem")),
            (4, Detail::invalid("state")),
        ];
        let whole = batch_failure(&details, "conversion", None);
        assert!(
            whole
                .extensions()
                .get::<DetailsTruncationApplied>()
                .is_none()
        );
        let (_, body) = answer(whole).await;
        assert_eq!(
            message(&body),
            "The request was not valid. Details: [0x0000011F: first problem for conversion index=1, 0x00000100: Field is missing or invalid: state for conversion index=4]"
        );
        assert_eq!(body["error"]["errors"].as_array().map(Vec::len), Some(2));

        let cut = batch_failure(&details, "conversion", Some(DetailsCut::InsideCode));
        assert!(cut.extensions().get::<DetailsTruncationApplied>().is_some());
        let (_, body) = answer(cut).await;
        assert_eq!(
            message(&body),
            "The request was not valid. Details: [0x0000011F: first problem for conversion index=1, 0x0000"
        );
        assert_eq!(body["error"]["errors"][1]["message"], "0x0000");

        let (_, body) = answer(batch_failure(
            &details,
            "conversion",
            Some(DetailsCut::InsideText),
        ))
        .await;
        assert!(
            message(&body).ends_with(", 0x00000100: Field is missing "),
            "half the text: {body}"
        );
    }
}

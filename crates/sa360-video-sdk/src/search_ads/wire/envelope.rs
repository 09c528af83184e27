//! Google's error envelope (SA-8) made into the SDK's [`Error::Api`],
//! with the details taken from `errors[]` or from the message's list (SA-9).

use std::time::Duration;

use crate::search_ads::error::Error;
use crate::search_ads::error::details::{
    ConversionIssue, DETAILS_MARKER, parse_detail, parse_details_message, split_code,
};

/// The parts of Google's error envelope the SDK uses (SA-8).
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct Envelope {
    pub message: Option<String>,
    pub status: Option<String>,
    /// `(reason, message)` of each item of `errors[]`.
    pub items: Vec<(Option<String>, Option<String>)>,
}

impl Envelope {
    /// Builds the SDK's error for an error answer with `status`.
    pub(crate) fn into_error(
        self,
        operation: &'static str,
        status: u16,
        retry_after: Option<Duration>,
    ) -> Error {
        let reason = self
            .items
            .iter()
            .find_map(|(reason, _)| reason.clone())
            .or(self.status.clone());
        let message = self
            .message
            .clone()
            .or_else(|| self.items.iter().find_map(|(_, m)| m.clone()))
            .unwrap_or_else(|| format!("HTTP {status} without a message"));
        // SA-9: errors[] carries one item per detail with the detail as its
        // message; use those when they are coded details, else parse the
        // top-level message's `Details: [...]` list. Either way the list is
        // whole only when the message's list is (Google cuts long messages)
        // and the two agree.
        let from_message = parse_details_message(&message);
        let mut from_items: Vec<ConversionIssue> = self
            .items
            .iter()
            .filter_map(|(_, m)| m.as_deref())
            .filter(|m| split_code(m.trim()).is_some())
            .map(parse_detail)
            .collect();
        let (details, details_complete) = if from_items.is_empty() {
            (from_message.issues, from_message.complete)
        } else {
            let listed = message.contains(DETAILS_MARKER);
            let agree = !listed || from_message.issues.len() == from_items.len();
            let before = from_items.len();
            if before > 1 {
                from_items.retain(|i| i.index.is_some());
            }
            let readable = from_items.len() == before;
            (from_items, from_message.complete && agree && readable)
        };
        Error::Api {
            operation,
            status,
            reason,
            message,
            details,
            details_complete,
            retry_after,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn envelope(body: &[u8]) -> Option<Envelope> {
        let wire: sa360_v2_client::types::GoogleErrorResponse =
            serde_json::from_slice(body).ok()?;
        Some(Envelope::from_wire(&wire.error))
    }

    #[test]
    fn cut_messages_and_disagreeing_items_make_the_details_incomplete() {
        let cut = br#"{"error":{"code":400,"message":"The request was not valid. Details: [0x0000011A: dup for conversion index=1, 0x000","errors":[{"reason":"requestValidation","message":"0x0000011A: dup for conversion index=1"}]}}"#;
        let err = envelope(cut)
            .unwrap()
            .into_error("conversion.insert", 400, None);
        let Error::Api {
            details,
            details_complete,
            ..
        } = &err
        else {
            panic!("{err:?}")
        };
        assert_eq!(details.len(), 1);
        assert!(!details_complete);
        let text = err.to_string();
        assert!(text.contains("cut short"), "{text}");
        assert!(
            !text.contains("the others in the batch were stored"),
            "{text}"
        );

        // Two details in the message, one item: they disagree.
        let disagree = br#"{"error":{"code":400,"message":"The request was not valid. Details: [0x0000011A: dup for conversion index=1, 0x0000011A: dup for conversion index=2]","errors":[{"reason":"requestValidation","message":"0x0000011A: dup for conversion index=1"}]}}"#;
        let err = envelope(disagree)
            .unwrap()
            .into_error("conversion.insert", 400, None);
        assert!(matches!(
            err,
            Error::Api {
                details_complete: false,
                ..
            }
        ));
    }

    #[test]
    fn the_envelope_prefers_coded_items() {
        let body = br#"{"error":{"code":400,"message":"The request was not valid. Details: [0x0000011A: dup for conversion index=1]","errors":[{"domain":"global","reason":"requestValidation","message":"0x0000011A: dup for conversion index=1"}]}}"#;
        let err = envelope(body)
            .unwrap()
            .into_error("conversion.insert", 400, None);
        match &err {
            Error::Api {
                status,
                reason,
                details,
                ..
            } => {
                assert_eq!(*status, 400);
                assert_eq!(reason.as_deref(), Some("requestValidation"));
                assert_eq!(details.len(), 1);
                assert_eq!(details[0].index, Some(1));
            }
            other => panic!("{other:?}"),
        }
        assert!(!err.is_transient());
        let text = err.to_string();
        assert!(
            text.contains("conversion.insert failed with HTTP 400 (requestValidation)"),
            "{text}"
        );
        assert!(text.contains("0x0000011A"), "{text}");
        assert!(
            text.contains("HTTP 400 (requestValidation): 1 detail: "),
            "{text}"
        );
    }

    #[test]
    fn the_envelope_tolerates_missing_members() {
        let e = envelope(br#"{"error":{}}"#).unwrap();
        let err = e.into_error("savedColumns.list", 503, Some(Duration::from_secs(2)));
        assert!(err.is_transient());
        assert_eq!(err.retry_after(), Some(Duration::from_secs(2)));
        assert!(err.to_string().contains("HTTP 503"));
        assert!(envelope(b"<html>").is_none());
        assert!(envelope(br#"{"kind":"x"}"#).is_none());
    }
}

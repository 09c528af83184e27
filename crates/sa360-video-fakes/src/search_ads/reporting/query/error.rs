//! A query error: what the checks of the query language answer with (`queryError` and its
//! codes, SR-16), shared by every step from the lexer on.

/// A query error: the error kind (`queryError` unless said), the code, a message and the
/// offending text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct QueryError {
    pub kind: &'static str,
    pub code: &'static str,
    pub message: String,
    pub trigger: Option<String>,
}

impl QueryError {
    pub(crate) fn new(code: &'static str, message: impl Into<String>) -> Self {
        Self {
            kind: "queryError",
            code,
            message: message.into(),
            trigger: None,
        }
    }

    /// `DATE_RANGE_TOO_WIDE`: a query segmented by date spans `days` days, more than 30.
    pub(crate) fn too_wide(days: i64) -> Self {
        Self::new(
            "DATE_RANGE_TOO_WIDE",
            format!(
                "Date filters fail to restrict date to a range smaller than 31 days ({days} days). \
                 Applicable if the query is segmented by date."
            ),
        )
    }

    pub(crate) fn at(mut self, trigger: impl Into<String>) -> Self {
        self.trigger = Some(trigger.into());
        self
    }
}

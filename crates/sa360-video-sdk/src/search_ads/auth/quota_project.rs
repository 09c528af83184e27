//! The quota project: the Google Cloud project that API calls made with user
//! credentials are billed and counted against, sent as the
//! `x-goog-user-project` header, as Google's libraries do.
//!
//! Where it comes from, in Google's order
//! (<https://cloud.google.com/docs/authentication/adc-troubleshooting/user-creds>,
//! <https://cloud.google.com/docs/quotas/set-quota-project>): the environment
//! variable `GOOGLE_CLOUD_QUOTA_PROJECT` wins over the `quota_project_id` of a
//! credentials file (which `gcloud auth application-default login` and
//! `gcloud auth application-default set-quota-project` write). The header goes
//! on API calls only, never on token requests (the token endpoint bills
//! nothing).

use crate::search_ads::error::Error;

/// The environment variable naming the quota project; it wins over a
/// credentials file's `quota_project_id`, as in Google's libraries.
pub const QUOTA_PROJECT_ENV: &str = "GOOGLE_CLOUD_QUOTA_PROJECT";

/// The header that names the quota project on API calls.
pub const QUOTA_PROJECT_HEADER: &str = "x-goog-user-project";

/// Checks a quota project id from `field` (a file's `quota_project_id`, the
/// environment variable or a setter): not empty, and sendable as a header
/// value (visible ASCII, no spaces). Google's project ids are stricter (6 to
/// 30 lowercase letters, digits and hyphens); the service decides about
/// those, the client only refuses what it could not send.
pub(crate) fn checked(field: &str, id: &str) -> Result<String, Error> {
    let id = id.trim();
    if id.is_empty() {
        return Err(Error::invalid(field, "is empty"));
    }
    if id.len() > 256 || !id.bytes().all(|b| b.is_ascii_graphic()) {
        return Err(Error::invalid(
            field,
            "must be a Google Cloud project id (visible ASCII characters, at most 256)",
        ));
    }
    Ok(id.to_owned())
}

/// Puts `x-goog-user-project: <id>` on an API request.
pub(crate) fn apply(request: &mut reqwest::Request, id: Option<&str>) {
    let Some(id) = id else { return };
    // Checked when it was set; a value that still does not fit is not sent.
    if let Ok(value) = reqwest::header::HeaderValue::from_str(id) {
        request.headers_mut().insert(QUOTA_PROJECT_HEADER, value);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_that_cannot_be_sent_are_refused_by_field() {
        for bad in ["", "  ", "my project", "p\nx", "é"] {
            let e = checked("quota_project_id", bad).unwrap_err();
            assert!(e.to_string().contains("quota_project_id"), "{e}");
        }
        assert_eq!(checked("x", " my-project-1 ").unwrap(), "my-project-1");
    }
}

//! The SDK's messages are worded for library users: they name Rust items
//! (`set Conversion::conversion_id`, `SearchAdsClientBuilder::login_customer_id`).
//! This says the same with the CSV column, JSON field or flag an operator of
//! apictl types.

/// Whole phrases of the SDK and apictl's words for them.
const PHRASES: &[(&str, &str)] = &[
    (
        "set SearchAdsClientBuilder::login_customer_id",
        "pass --login-customer-id (or set SEARCH_ADS_LOGIN_CUSTOMER_ID)",
    ),
    (
        "set Conversion::agency_id and advertiser_id, customer_id, or click_id",
        "fill the columns agencyId and advertiserId, or customerId, or clickId",
    ),
    (
        "raise RetryPolicy::max_retry_after",
        "run the command again later",
    ),
    ("raise HttpOptions::deadline", "raise --deadline (seconds)"),
    (
        "declared new once with RedisStore::initialize",
        "declared new once with `apictl video lockout-init`",
    ),
    (
        "a client whose endpoints are on loopback, or TokenSource::allow_loopback",
        "--url or --reporting-url on 127.0.0.1, as `apictl sandbox` prints them",
    ),
    (
        "DefaultCredentialsBuilder::allow_non_google_token_hosts",
        "APICTL_ALLOW_NON_GOOGLE_TOKEN_HOSTS=1 (Application Default Credentials files only)",
    ),
];

/// `text` with the SDK's Rust items replaced by what an operator types:
/// `set Conversion::conversion_id` becomes `fill the column conversionId` (the
/// CSV column and JSON-lines field of `apictl ads conversions upload`).
pub fn for_operator(text: &str) -> String {
    let mut out = text.to_owned();
    for (rust, operator) in PHRASES {
        out = out.replace(rust, operator);
    }
    conversion_members(&out)
}

/// `set Conversion::snake_name` → `fill the column snakeName`; a bare
/// `Conversion::snake_name` → `snakeName`.
fn conversion_members(text: &str) -> String {
    const ITEM: &str = "Conversion::";
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(ITEM) {
        let (before, after) = rest.split_at(at);
        let after = &after[ITEM.len()..];
        let end = after
            .find(|c: char| !(c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_'))
            .unwrap_or(after.len());
        let (name, tail) = after.split_at(end);
        match before.strip_suffix("set ") {
            Some(head) if !name.is_empty() => {
                out.push_str(head);
                out.push_str("fill the column ");
            }
            _ => out.push_str(before),
        }
        if name.is_empty() {
            out.push_str(ITEM);
        } else {
            out.push_str(&camel(name));
        }
        rest = tail;
    }
    out.push_str(rest);
    out
}

/// `conversion_timestamp` → `conversionTimestamp`.
fn camel(snake: &str) -> String {
    let mut out = String::with_capacity(snake.len());
    let mut upper = false;
    for c in snake.chars() {
        if c == '_' {
            upper = true;
        } else if upper {
            out.push(c.to_ascii_uppercase());
            upper = false;
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rust_items_become_columns_and_flags() {
        assert_eq!(
            for_operator(
                "invalid input: `conversionId` is required for insert: set Conversion::conversion_id (nothing was sent)"
            ),
            "invalid input: `conversionId` is required for insert: fill the column conversionId (nothing was sent)"
        );
        assert_eq!(
            for_operator("is required for insert: set Conversion::segmentation_type (FLOODLIGHT)"),
            "is required for insert: fill the column segmentationType (FLOODLIGHT)"
        );
        assert_eq!(
            for_operator(
                "names no owner: set Conversion::agency_id and advertiser_id, customer_id, or click_id (x)"
            ),
            "names no owner: fill the columns agencyId and advertiserId, or customerId, or clickId (x)"
        );
        let reporting = for_operator(
            "Reach a client account through its manager: set SearchAdsClientBuilder::login_customer_id to the manager's customer id",
        );
        assert!(reporting.contains("--login-customer-id"), "{reporting}");
        assert!(!reporting.contains("::"), "{reporting}");
        assert_eq!(for_operator("no items here"), "no items here");
    }
}

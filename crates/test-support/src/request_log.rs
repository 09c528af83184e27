//! What the request span of a generated client's operation must show, and must not.

/// Panics unless `logs` (a [`TraceCapture`](crate::TraceCapture)'s text) show one request of
/// `service`'s operation `operation_id` with `method`, status 200 and its duration, and nothing of
/// `secret` nor any `authorization` header.
pub fn assert_request_logged(
    logs: &str,
    service: &str,
    operation_id: &str,
    method: &str,
    secret: &str,
) {
    for expected in [
        format!("operation_id=\"{operation_id}\""),
        format!("service=\"{service}\""),
        format!("method={method}"),
        "status=200".to_owned(),
        "duration_ms=".to_owned(),
    ] {
        assert!(logs.contains(&expected), "no {expected} in: {logs}");
    }
    assert!(!logs.contains(secret), "secret leaked into logs: {logs}");
    assert!(!logs.to_lowercase().contains("authorization"), "{logs}");
}

#[cfg(test)]
mod tests {
    use super::assert_request_logged;

    const LOGS: &str = "DEBUG request{service=\"s\" operation_id=\"op\" method=GET path=/p}: status=200 duration_ms=3";

    #[test]
    fn accepts_a_complete_line() {
        assert_request_logged(LOGS, "s", "op", "GET", "tok-secret");
    }

    #[test]
    #[should_panic(expected = "secret leaked")]
    fn refuses_a_secret() {
        assert_request_logged(
            &format!("{LOGS} tok-secret"),
            "s",
            "op",
            "GET",
            "tok-secret",
        );
    }

    #[test]
    #[should_panic(expected = "no status=200")]
    fn refuses_a_missing_field() {
        assert_request_logged(&LOGS.replace("status=200", ""), "s", "op", "GET", "x");
    }
}

//! The transport-limit flags (`--timeout`, `--deadline`, `--stall-timeout`,
//! `--max-body`, `--max-download`): their ranges, checked before anything is
//! sent, in one place for `apictl ads` and `apictl video`.

use std::time::Duration;

use sa360_video_sdk::http::HttpOptions;

use crate::cli::VideoLimitArgs;
use crate::error::{AppError, AppResult};

/// A duration flag: 1 to 86 400 seconds.
pub fn seconds(flag: &str, value: u64) -> AppResult<Duration> {
    if (1..=86_400).contains(&value) {
        Ok(Duration::from_secs(value))
    } else {
        Err(AppError::refused(format!("{flag} {value} is out of range"))
            .hint(format!("give {flag} a number of seconds from 1 to 86400")))
    }
}

/// A size flag: at least 1 KiB.
pub fn bytes(flag: &str, value: u64) -> AppResult<u64> {
    if value >= 1024 {
        Ok(value)
    } else {
        Err(AppError::refused(format!("{flag} {value} is too small"))
            .hint(format!("give {flag} at least 1024 bytes")))
    }
}

/// `--timeout`, `--stall-timeout` and `--max-body`, the flags both `apictl ads`
/// and `apictl video` have, over the SDK's defaults.
pub fn common_http_options(
    timeout: Option<u64>,
    stall_timeout: Option<u64>,
    max_body: Option<u64>,
) -> AppResult<HttpOptions> {
    let mut options = HttpOptions::default();
    if let Some(v) = timeout {
        options.timeout = seconds("--timeout", v)?;
    }
    if let Some(v) = stall_timeout {
        options.read_timeout = seconds("--stall-timeout", v)?;
    }
    if let Some(v) = max_body {
        options.max_body_bytes = bytes("--max-body", v)?;
    }
    Ok(options)
}

/// The video commands' limits over the SDK's defaults.
pub fn video_http_options(args: &VideoLimitArgs) -> AppResult<HttpOptions> {
    common_http_options(args.timeout, args.stall_timeout, args.max_body)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn out_of_range_values_name_the_flag_and_the_range() {
        let e = seconds("--timeout", 0).unwrap_err();
        assert!(e.message.contains("--timeout 0"), "{}", e.message);
        assert!(e.hint.as_deref().unwrap().contains("1 to 86400"));
        assert!(seconds("--deadline", 86_401).is_err());
        assert_eq!(seconds("--deadline", 5).unwrap(), Duration::from_secs(5));
        let e = bytes("--max-body", 10).unwrap_err();
        assert!(e.hint.as_deref().unwrap().contains("--max-body"));
        let options = video_http_options(&VideoLimitArgs {
            timeout: Some(7),
            stall_timeout: Some(3),
            max_body: Some(4096),
        })
        .unwrap();
        assert_eq!(options.timeout, Duration::from_secs(7));
        assert_eq!(options.read_timeout, Duration::from_secs(3));
        assert_eq!(options.max_body_bytes, 4096);
    }
}

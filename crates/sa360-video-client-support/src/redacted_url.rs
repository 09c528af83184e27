//! [`RedactedUrl`]: a URL as every message, log line and `Debug` shows it.
//!
//! A URL's user info (`user:password@`) and its query values (`?key=…`) are
//! secrets as much as a token is; its scheme, host, port and path are what a
//! reader needs to see what was used or refused. So a URL is shown with its
//! user info as `***@`, each query value as `***` (the names stay), and no
//! fragment. Text that does not parse as a URL is not shown at all (it could
//! be a URL with a password that a typo broke).

use std::fmt;

/// Shows a URL without its secrets (see the module docs).
///
/// ```
/// use sa360_video_client_support::RedactedUrl;
/// let shown = RedactedUrl("https://user:HUNTER2@idp.example/token?key=K&x=1#f").to_string();
/// assert_eq!(shown, "https://***@idp.example/token?key=***&x=***");
/// assert_eq!(RedactedUrl("http://127.0.0.1:8/v1/token").to_string(), "http://127.0.0.1:8/v1/token");
/// assert_eq!(RedactedUrl("https://u:p@exa mple").to_string(), "(not a URL)");
/// ```
#[derive(Clone, Copy)]
pub struct RedactedUrl<'a>(pub &'a str);

impl fmt::Display for RedactedUrl<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Ok(url) = reqwest::Url::parse(self.0.trim()) else {
            return f.write_str("(not a URL)");
        };
        let Some(host) = url.host_str() else {
            return write!(f, "{}:(no host)", url.scheme());
        };
        write!(f, "{}://", url.scheme())?;
        if !url.username().is_empty() || url.password().is_some() {
            f.write_str("***@")?;
        }
        f.write_str(host)?;
        if let Some(port) = url.port() {
            write!(f, ":{port}")?;
        }
        f.write_str(url.path())?;
        if let Some(query) = url.query() {
            let names: Vec<String> = reqwest::Url::parse(&format!("x:?{query}"))
                .map(|q| {
                    q.query_pairs()
                        .map(|(name, _)| format!("{name}=***"))
                        .collect()
                })
                .unwrap_or_default();
            write!(f, "?{}", names.join("&"))?;
        }
        Ok(())
    }
}

impl fmt::Debug for RedactedUrl<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "\"{self}\"")
    }
}

#[cfg(test)]
mod tests {
    use super::RedactedUrl;

    #[test]
    fn user_info_and_query_values_never_show() {
        for (url, shown) in [
            (
                "https://user:HUNTER2@idp.example/token",
                "https://***@idp.example/token",
            ),
            ("https://admin@iam.example/x", "https://***@iam.example/x"),
            (
                "https://sts.example/v1/token?key=APIKEY-SECRET-123",
                "https://sts.example/v1/token?key=***",
            ),
            (
                "http://[::1]:9/a%20b?x&y=%2Fz",
                "http://[::1]:9/a%20b?x=***&y=***",
            ),
            ("https://host/#frag-SECRET", "https://host/"),
            ("not a url HUNTER2", "(not a URL)"),
            ("mailto:HUNTER2@x", "mailto:(no host)"),
        ] {
            assert_eq!(RedactedUrl(url).to_string(), shown, "{url}");
            assert_eq!(format!("{:?}", RedactedUrl(url)), format!("\"{shown}\""));
        }
    }
}

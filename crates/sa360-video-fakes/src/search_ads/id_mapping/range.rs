//! What a request's `Range` / `If-Range` headers ask for (RFC 9110).

use axum::http::{HeaderMap, header};

/// What a request's `Range` / `If-Range` ask for (RFC 9110, sections 13.1.5 and 14).
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum RangeAnswer {
    /// The whole file: no `Range`, an `If-Range` that does not match, a unit other than bytes, a
    /// malformed or multi-range set (which a server may ignore, RFC 9110 section 14.2).
    Full,
    /// Bytes `first..=last`.
    Partial { first: u64, last: u64 },
    /// A single range starting at or after the end (or a zero-length suffix): 416.
    Unsatisfiable,
}

pub(crate) fn requested_range(headers: &HeaderMap, etag: &str, total: u64) -> RangeAnswer {
    let Some(range) = headers.get(header::RANGE).and_then(|v| v.to_str().ok()) else {
        return RangeAnswer::Full;
    };
    if let Some(if_range) = headers.get(header::IF_RANGE) {
        // Strong comparison; a date never matches (the file has no Last-Modified).
        if if_range.to_str().ok().map(str::trim) != Some(etag) {
            return RangeAnswer::Full;
        }
    }
    let Some((unit, set)) = range.trim().split_once('=') else {
        return RangeAnswer::Full;
    };
    if !unit.trim().eq_ignore_ascii_case("bytes") || set.contains(',') {
        return RangeAnswer::Full;
    }
    let Some((first, last)) = set.trim().split_once('-') else {
        return RangeAnswer::Full;
    };
    let number = |s: &str| -> Option<u64> {
        (!s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()))
            .then(|| s.parse().ok())
            .flatten()
    };
    match (first.trim(), last.trim()) {
        ("", suffix) => match number(suffix) {
            None => RangeAnswer::Full,
            Some(0) => RangeAnswer::Unsatisfiable,
            Some(_) if total == 0 => RangeAnswer::Unsatisfiable,
            Some(n) => RangeAnswer::Partial {
                first: total.saturating_sub(n),
                last: total - 1,
            },
        },
        (first, last) => {
            let Some(first) = number(first) else {
                return RangeAnswer::Full;
            };
            let last = if last.is_empty() {
                None
            } else {
                match number(last) {
                    Some(l) if l >= first => Some(l),
                    _ => return RangeAnswer::Full,
                }
            };
            if first >= total {
                return RangeAnswer::Unsatisfiable;
            }
            RangeAnswer::Partial {
                first,
                last: last.map_or(total - 1, |l| l.min(total - 1)),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use axum::http::HeaderValue;

    use super::*;

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (name, value) in pairs {
            h.insert(*name, HeaderValue::from_str(value).unwrap());
        }
        h
    }

    #[test]
    fn range_headers_follow_rfc_9110() {
        let tag = "\"idm-1\"";
        let r = |pairs: &[(&'static str, &str)]| requested_range(&headers(pairs), tag, 1000);
        let part = |first, last| RangeAnswer::Partial { first, last };
        assert_eq!(r(&[]), RangeAnswer::Full);
        assert_eq!(r(&[("range", "bytes=0-99")]), part(0, 99));
        assert_eq!(r(&[("range", "bytes=990-")]), part(990, 999));
        assert_eq!(r(&[("range", "bytes=990-5000")]), part(990, 999));
        assert_eq!(r(&[("range", "bytes=-10")]), part(990, 999));
        assert_eq!(r(&[("range", "bytes=-5000")]), part(0, 999));
        assert_eq!(r(&[("range", "Bytes = 1-1")]), part(1, 1));
        assert_eq!(r(&[("range", "bytes=1000-")]), RangeAnswer::Unsatisfiable);
        assert_eq!(r(&[("range", "bytes=-0")]), RangeAnswer::Unsatisfiable);
        // Ignored: other units, malformed or reversed ranges, several ranges.
        for ignored in [
            "items=0-1",
            "bytes=5-1",
            "bytes=a-b",
            "bytes=0-1,5-6",
            "bytes=-",
            "bytes",
        ] {
            assert_eq!(r(&[("range", ignored)]), RangeAnswer::Full, "{ignored}");
        }
        // If-Range: only the current strong tag keeps the range; a date never does.
        assert_eq!(r(&[("range", "bytes=0-9"), ("if-range", tag)]), part(0, 9));
        assert_eq!(
            r(&[("range", "bytes=0-9"), ("if-range", "\"idm-2\"")]),
            RangeAnswer::Full
        );
        assert_eq!(
            r(&[("range", "bytes=0-9"), ("if-range", "W/\"idm-1\"")]),
            RangeAnswer::Full
        );
        assert_eq!(
            r(&[
                ("range", "bytes=0-9"),
                ("if-range", "Mon, 23 Nov 2026 10:00:00 GMT")
            ]),
            RangeAnswer::Full
        );
    }
}

//! The page token of a `searchAds360:search` answer, found without reading its rows.
//!
//! [`token_hint`] finds the top-level `nextPageToken` in the first and last [`HINT_WINDOW`] bytes
//! of the page (where the service writes it: before or after `results`), so the shard sends its
//! next request before any row is decoded. It is a hint: [`SearchPage::decode`]
//! (super::decode::SearchPage::decode) reads the token again, and the shard drops a request sent
//! with a hint that turns out different (only a page that is not JSON can make it so).

/// Most bytes [`token_hint`] reads from each end of a page: the members around `results` are a
/// few hundred bytes; beyond this window the hint gives up and the token comes from the decode.
pub(crate) const HINT_WINDOW: usize = 64 * 1024;

/// The top-level `nextPageToken` of a page, read without its rows: forward from the start over
/// the members before `results`, else backward from the end over those after it, each within
/// [`HINT_WINDOW`] bytes. `None` when it is not found there, is not a plain string (escapes,
/// `null`, empty), or the page does not look like JSON. For a page that is JSON, a `Some` is the
/// token the decode reads (the property test below checks it on pages in any member order).
pub(crate) fn token_hint(body: &[u8]) -> Option<&str> {
    forward_hint(&body[..body.len().min(HINT_WINDOW)]).or_else(|| backward_hint(body))
}

const TOKEN: &[u8] = b"nextPageToken";
const RESULTS: &[u8] = b"results";

fn skip_ws(b: &[u8], mut i: usize) -> usize {
    while b.get(i).is_some_and(u8::is_ascii_whitespace) {
        i += 1;
    }
    i
}

/// The end (past the closing quote) of the string that starts at `i`.
fn skip_string(b: &[u8], i: usize) -> Option<usize> {
    if b.get(i) != Some(&b'"') {
        return None;
    }
    let mut j = i + 1;
    loop {
        match b.get(j)? {
            b'"' => return Some(j + 1),
            b'\\' => j += 2,
            _ => j += 1,
        }
    }
}

/// The text of the string at `i` if it has no escapes, and its end.
fn plain_string(b: &[u8], i: usize) -> Option<(&[u8], usize)> {
    let end = skip_string(b, i)?;
    let text = &b[i + 1..end - 1];
    (!text.contains(&b'\\')).then_some((text, end))
}

/// The end of the JSON value that starts at `i`.
fn skip_value(b: &[u8], i: usize) -> Option<usize> {
    match *b.get(i)? {
        b'"' => skip_string(b, i),
        b'{' | b'[' => {
            let mut depth = 0usize;
            let mut j = i;
            loop {
                match *b.get(j)? {
                    b'"' => {
                        j = skip_string(b, j)?;
                        continue;
                    }
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth -= 1;
                        if depth == 0 {
                            return Some(j + 1);
                        }
                    }
                    _ => {}
                }
                j += 1;
            }
        }
        _ => {
            let mut j = i;
            while b
                .get(j)
                .is_some_and(|c| !matches!(c, b',' | b'}' | b']') && !c.is_ascii_whitespace())
            {
                j += 1;
            }
            (j > i && j < b.len()).then_some(j)
        }
    }
}

/// The token among the top-level members before `results`.
fn forward_hint(b: &[u8]) -> Option<&str> {
    let mut i = skip_ws(b, 0);
    if b.get(i) != Some(&b'{') {
        return None;
    }
    i += 1;
    loop {
        i = skip_ws(b, i);
        let (key, after) = plain_string(b, i)?;
        i = skip_ws(b, after);
        if b.get(i) != Some(&b':') {
            return None;
        }
        i = skip_ws(b, i + 1);
        match key {
            TOKEN => return plain_token(b, i),
            RESULTS => return None,
            _ => i = skip_value(b, i)?,
        }
        i = skip_ws(b, i);
        if b.get(i) != Some(&b',') {
            return None;
        }
        i += 1;
    }
}

/// A token value at `i`: a plain, non-empty string.
fn plain_token(b: &[u8], i: usize) -> Option<&str> {
    let (text, _) = plain_string(b, i)?;
    std::str::from_utf8(text).ok().filter(|t| !t.is_empty())
}

/// Backward from `end` (exclusive) over white space, not below `floor`.
fn skip_ws_back(b: &[u8], mut end: usize, floor: usize) -> usize {
    while end > floor && b[end - 1].is_ascii_whitespace() {
        end -= 1;
    }
    end
}

/// The start of the string whose closing quote is `b[end - 1]`: the quote before it that is not
/// escaped (an even number of backslashes before it).
fn string_start_back(b: &[u8], end: usize, floor: usize) -> Option<usize> {
    if end < floor + 2 || b[end - 1] != b'"' {
        return None;
    }
    let mut k = end - 1;
    while k > floor {
        k -= 1;
        if b[k] == b'"' {
            let mut slashes = 0;
            while k - slashes > floor && b[k - slashes - 1] == b'\\' {
                slashes += 1;
            }
            if slashes % 2 == 0 {
                return Some(k);
            }
        }
    }
    None
}

/// The start of the JSON value that ends at `end` (exclusive).
fn skip_value_back(b: &[u8], end: usize, floor: usize) -> Option<usize> {
    if end <= floor {
        return None;
    }
    match b[end - 1] {
        b'"' => string_start_back(b, end, floor),
        b'}' | b']' => {
            let mut depth = 0usize;
            let mut k = end;
            while k > floor {
                match b[k - 1] {
                    b'"' => {
                        k = string_start_back(b, k, floor)?;
                        continue;
                    }
                    b'}' | b']' => depth += 1,
                    b'{' | b'[' => {
                        depth -= 1;
                        if depth == 0 {
                            return Some(k - 1);
                        }
                    }
                    _ => {}
                }
                k -= 1;
            }
            None
        }
        _ => {
            let mut k = end;
            while k > floor
                && !matches!(b[k - 1], b':' | b',' | b'[' | b'{')
                && !b[k - 1].is_ascii_whitespace()
            {
                k -= 1;
            }
            (k > floor).then_some(k)
        }
    }
}

/// The token among the top-level members after `results`.
fn backward_hint(b: &[u8]) -> Option<&str> {
    let floor = b.len().saturating_sub(HINT_WINDOW);
    let mut j = skip_ws_back(b, b.len(), floor);
    if j <= floor || b[j - 1] != b'}' {
        return None;
    }
    j -= 1;
    loop {
        j = skip_ws_back(b, j, floor);
        let value = skip_value_back(b, j, floor)?;
        j = skip_ws_back(b, value, floor);
        if j <= floor || b[j - 1] != b':' {
            return None;
        }
        j = skip_ws_back(b, j - 1, floor);
        let key_start = string_start_back(b, j, floor)?;
        let key = &b[key_start + 1..j - 1];
        if key.contains(&b'\\') {
            return None;
        }
        match key {
            TOKEN => return plain_token(b, value),
            RESULTS => return None,
            _ => {}
        }
        j = skip_ws_back(b, key_start, floor);
        if j <= floor || b[j - 1] != b',' {
            return None;
        }
        j -= 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The hint reads a few hundred bytes at either end: not the rows, not a member nested in
    /// them, and gives up (the decode then reads the token) beyond its window.
    #[test]
    fn the_hint_reads_the_top_level_at_either_end_only() {
        let row = r#"{"conversion": {"id": "7", "clickId": "\"nextPageToken\": \"no\""}, "x": {"nextPageToken": "no"}}"#;
        let rows = [row; 4].join(",");
        for (body, hint) in [
            (
                format!(r#"{{"fieldMask": "a,b", "nextPageToken": "first", "results": [{rows}]}}"#),
                Some("first"),
            ),
            (
                format!(r#"{{"results": [{rows}], "nextPageToken": "last", "fieldMask": "a"}}"#),
                Some("last"),
            ),
            (
                format!(r#"{{"results": [{rows}], "fieldMask": "a"}}"#),
                None,
            ),
            (format!(r#"{{"results": [{rows}]}}"#), None),
            (
                format!(r#"{{"results": [{rows}], "nextPageToken": "a\u0062"}}"#),
                None,
            ),
            (
                format!(r#"{{"results": [{rows}], "nextPageToken": null}}"#),
                None,
            ),
            (
                format!(r#" {{ "results" : [{rows}] , "nextPageToken" : "spaced" }} "#),
                Some("spaced"),
            ),
        ] {
            assert_eq!(token_hint(body.as_bytes()), hint, "{body}");
        }
        let many = vec![row; HINT_WINDOW / row.len() + 1].join(",");
        let before = format!(r#"{{"x": [{many}], "nextPageToken": "far", "results": []}}"#);
        assert_eq!(token_hint(before.as_bytes()), None);
        let after = format!(r#"{{"results": [], "nextPageToken": "far", "x": [{many}]}}"#);
        assert_eq!(token_hint(after.as_bytes()), None);
    }
}

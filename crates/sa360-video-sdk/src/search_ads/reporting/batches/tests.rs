use std::convert::Infallible;

use bytes::Bytes;
use futures::{FutureExt, StreamExt};
use proptest::prelude::*;

use super::{BatchError, batches};

/// The items `batches` yields for `chunks` with `limit` (the stream never waits: its body is
/// in memory).
fn split(chunks: &[&[u8]], limit: usize) -> Vec<Result<Bytes, BatchError<Infallible>>> {
    let body = futures::stream::iter(
        chunks
            .iter()
            .map(|c| Ok::<_, Infallible>(Bytes::copy_from_slice(c)))
            .collect::<Vec<_>>(),
    );
    let stream = batches(body, limit);
    futures::pin_mut!(stream);
    let mut out = Vec::new();
    while let Some(item) = stream.next().now_or_never().expect("ready") {
        out.push(item);
    }
    out
}

fn ok(chunks: &[&[u8]]) -> Vec<String> {
    split(chunks, 1 << 20)
        .into_iter()
        .map(|b| String::from_utf8(b.expect("a batch").to_vec()).unwrap())
        .collect()
}

fn err(chunks: &[&[u8]], limit: usize) -> String {
    let items = split(chunks, limit);
    let last = items.last().expect("an item");
    let e = last.as_ref().expect_err("ends with an error");
    e.to_string()
}

#[test]
fn splits_an_array_of_objects() {
    assert_eq!(ok(&[b"[]"]), Vec::<String>::new());
    assert_eq!(ok(&[b" \n[ \t]\r\n "]), Vec::<String>::new());
    assert_eq!(
        ok(&[br#"[{"a":1},{"b":[2,{"c":3}]}]"#]),
        [r#"{"a":1}"#, r#"{"b":[2,{"c":3}]}"#]
    );
    assert_eq!(ok(&[b"[ {} ,\n\t{ } ]"]), ["{}", "{ }"]);
    let tricky = r#"{"s":"]}{[,\"\\","t":"\\","u":"\"}"}"#;
    assert_eq!(ok(&[format!("[{tricky}]").as_bytes()]), [tricky]);
    // Chunk boundaries anywhere, even inside an escape.
    assert_eq!(
        ok(&[b"[{\"s\":\"a\\", b"\"}\"}", b",", b"{}]"]),
        [r#"{"s":"a\"}"}"#, "{}"]
    );
}

#[test]
fn refuses_what_is_not_an_array_of_objects() {
    assert!(err(&[b"{}"], 100).contains("not an array at byte 0"));
    assert!(err(&[b"[1]"], 100).contains("a member that is not an object at byte 1"));
    assert!(err(&[b"[{},]"], 100).contains("a member that is not an object at byte 4"));
    assert!(err(&[b"[{} x {}]"], 100).contains("neither `,` nor `]` after a batch at byte 4"));
    assert!(err(&[b"[{}]", b" ["], 100).contains("text after the array at byte 5"));
    assert!(err(&[b"[{]}]"], 100).contains("`]` closing a batch at byte 2"));
    // The batch before the error still arrives.
    let items = split(&[b"[{},{}", b" x"], 100);
    assert_eq!(items.len(), 3);
    assert!(items[0].is_ok() && items[1].is_ok() && items[2].is_err());
}

#[test]
fn an_answer_cut_short_is_an_error() {
    for body in [
        &b""[..],
        b"[",
        b"[{}",
        b"[{},",
        br#"[{"a":"]}"#,
        br#"[{"a":"\"}]"#,
    ] {
        assert!(
            err(&[body], 100).contains("ended before its closing"),
            "{body:?}"
        );
    }
}

#[test]
fn a_batch_longer_than_the_limit_is_refused_without_buffering_it() {
    assert_eq!(ok(&[b"[{\"a\":12}]"]).len(), 1);
    assert_eq!(split(&[b"[{\"a\":12}]"], 8).len(), 1, "exactly the limit");
    assert!(err(&[b"[{\"a\":123}]"], 8).contains("longer than 8 bytes"));
    // Refused as soon as the batch grows past the limit, before the body ends.
    let big = [b' '; 64];
    let mut chunks: Vec<&[u8]> = vec![b"[{\"a\":"];
    chunks.extend(std::iter::repeat_n(&big[..], 1000));
    let items = split(&chunks, 100);
    assert_eq!(items.len(), 1);
    assert!(matches!(items[0], Err(BatchError::TooLarge { limit: 100 })));
}

#[test]
fn a_body_error_is_passed_on() {
    let body = futures::stream::iter(vec![Ok(Bytes::from_static(b"[{}")), Err("reset")]);
    let stream = batches(body, 100);
    futures::pin_mut!(stream);
    let mut items = Vec::new();
    while let Some(item) = stream.next().now_or_never().unwrap() {
        items.push(item);
    }
    assert_eq!(items.len(), 2);
    assert!(items[0].is_ok());
    assert!(matches!(items[1], Err(BatchError::Body("reset"))));
}

/// Text with the characters that matter to the scanner.
fn text() -> impl Strategy<Value = String> {
    proptest::collection::vec(
        prop_oneof![
            Just('"'),
            Just('\\'),
            Just('{'),
            Just('}'),
            Just('['),
            Just(']'),
            Just(','),
            Just(' '),
            Just('é'),
            any::<char>()
        ],
        0..12,
    )
    .prop_map(|cs| cs.into_iter().collect())
}

fn batch() -> impl Strategy<Value = String> {
    (
        proptest::collection::vec((text(), text()), 0..4),
        any::<u8>(),
    )
        .prop_map(|(rows, n)| {
            let results: Vec<_> = rows
                .iter()
                .map(|(k, v)| serde_json::json!({ "campaign": { "name": v }, k.as_str(): [n, {}] }))
                .collect();
            serde_json::json!({"results": results, "requestId": "r1"}).to_string()
        })
}

proptest! {
    #[test]
    fn batches_survive_any_chunking_and_whitespace(
        batches in proptest::collection::vec(batch(), 0..6),
        gaps in proptest::collection::vec("[ \t\r\n]{0,3}", 8),
        cuts in proptest::collection::vec(any::<prop::sample::Index>(), 0..12),
    ) {
        let gap = |i: usize| gaps[i % gaps.len()].as_str();
        let mut body = format!("{}[{}", gap(0), gap(1));
        for (i, b) in batches.iter().enumerate() {
            if i > 0 {
                body.push_str(&format!("{},{}", gap(i + 2), gap(i + 3)));
            }
            body.push_str(b);
        }
        body.push_str(&format!("{}]{}", gap(4), gap(5)));
        let bytes = body.as_bytes();
        let mut at: Vec<usize> = cuts.iter().map(|c| c.index(bytes.len() + 1)).collect();
        at.sort_unstable();
        let mut chunks = Vec::new();
        let mut from = 0;
        for cut in at.into_iter().chain([bytes.len()]) {
            chunks.push(&bytes[from..cut]);
            from = cut;
        }
        let got = ok(&chunks);
        prop_assert_eq!(&got, &batches);
        for b in &got {
            prop_assert!(serde_json::from_str::<serde_json::Value>(b).unwrap().is_object());
        }
        // Any answer cut before its `]` ends with an error, after a prefix of the batches.
        let end = body.trim_end().len() - 1;
        let cut = cuts.first().map_or(0, |c| c.index(end));
        let items = split(&[&bytes[..cut]], 1 << 20);
        let (last, rest) = items.split_last().unwrap();
        prop_assert!(matches!(last, Err(BatchError::Truncated { .. })), "{:?}", last);
        prop_assert!(rest.len() <= batches.len());
        for (b, want) in rest.iter().zip(&batches) {
            prop_assert_eq!(b.as_ref().unwrap().as_ref(), want.as_bytes());
        }
    }
}

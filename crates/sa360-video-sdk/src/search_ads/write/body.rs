//! A batch's request body: its conversions in the request shape of its method
//! (the spec's `ConversionInsertList` or `ConversionUpdateList`), serialized
//! as each row joins the batch, so the JSON is ready when the batch starts.
//!
//! A batch is read and checked while earlier ones are in flight
//! ([`WriteStream`](super::WriteStream)), so serializing it there takes the
//! work off the path between one answer and the next request, where the
//! generated builder's `.json(list)` would do it on every attempt. The bytes
//! are the generated builder's: each conversion goes through the generated
//! type's own `Serialize`, between the opening and closing text of the empty
//! list (serialized by the same type), and `send.rs` checks the whole request
//! against the builder's.

use bytes::Bytes;
use sa360_v2_client::types;

use super::super::conversion::Conversion;
use super::super::wire;
use super::kind::WriteKind;

/// The conversions of a batch in the request shape of its method, as JSON.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Body {
    kind: WriteKind,
    json: Json,
    len: usize,
}

/// The body's text: still growing, or whole (see [`Body::seal`]).
#[derive(Debug, Clone, PartialEq)]
enum Json {
    /// The list's opening text and the conversions so far, comma-separated.
    Open(Vec<u8>),
    /// The whole body, shared by every attempt.
    Sealed(Bytes),
}

/// The text of `kind`'s list before and after its conversions: the empty list
/// serialized by the generated type, split at its `[]`.
fn frame(kind: WriteKind) -> (Vec<u8>, Vec<u8>) {
    let empty = match kind {
        WriteKind::Insert => serde_json::to_vec(&types::ConversionInsertList {
            conversion: Vec::new(),
            kind: None,
        }),
        WriteKind::Update => serde_json::to_vec(&types::ConversionUpdateList {
            conversion: Vec::new(),
            kind: None,
        }),
    }
    .unwrap_or_default();
    match empty.windows(2).position(|w| w == b"[]") {
        Some(at) => (empty[..=at].to_vec(), empty[at + 1..].to_vec()),
        // Not reachable: the list type serializes `conversion` as an array.
        None => (b"{\"conversion\":[".to_vec(), b"]}".to_vec()),
    }
}

impl Body {
    /// An empty body of `kind`'s method.
    pub(crate) fn new(kind: WriteKind) -> Self {
        Self {
            kind,
            json: Json::Open(frame(kind).0),
            len: 0,
        }
    }

    /// Conversions in the body.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// Appends `c` (checked before: a conversion an insert or update refuses
    /// never gets here); the error names a required member it lacks.
    pub(crate) fn push(&mut self, c: Conversion) -> Result<(), String> {
        let Json::Open(json) = &mut self.json else {
            return Err("the batch's body was already sealed".to_owned());
        };
        let mark = json.len();
        if self.len > 0 {
            json.push(b',');
        }
        let written = match self.kind {
            WriteKind::Insert => {
                serde_json::to_writer(&mut *json, &wire::conversion_into_insert(c)?)
            }
            WriteKind::Update => {
                serde_json::to_writer(&mut *json, &wire::conversion_into_update(c)?)
            }
        };
        if let Err(e) = written {
            json.truncate(mark);
            return Err(format!("cannot be written as JSON: {e}"));
        }
        self.len += 1;
        Ok(())
    }

    /// Closes the list: the body is whole, and [`bytes`](Self::bytes) shares
    /// it with every attempt. Called as the batch closes.
    pub(crate) fn seal(&mut self) {
        if let Json::Open(json) = &mut self.json {
            let mut whole = std::mem::take(json);
            whole.extend_from_slice(&frame(self.kind).1);
            self.json = Json::Sealed(Bytes::from(whole));
        }
    }

    /// The request body's bytes (a copy only while the body is not sealed).
    pub(crate) fn bytes(&self) -> Bytes {
        match &self.json {
            Json::Sealed(bytes) => bytes.clone(),
            Json::Open(json) => {
                let mut whole = json.clone();
                whole.extend_from_slice(&frame(self.kind).1);
                Bytes::from(whole)
            }
        }
    }

    /// The method the body is for.
    pub(crate) fn kind(&self) -> WriteKind {
        self.kind
    }
}

#[cfg(test)]
mod tests {
    use chrono::DateTime;

    use super::*;

    fn conversions() -> Vec<Conversion> {
        (0..3)
            .map(|i| {
                let mut c = Conversion::new(
                    format!("c-{i}\"é"),
                    DateTime::from_timestamp_millis(1_700_000_000_000 + i).unwrap(),
                );
                c.click_id = Some("gclid-1".into());
                c.revenue_micros = Some(crate::search_ads::Micros::new(i * 1_000_000));
                c
            })
            .collect()
    }

    /// The bytes are what the generated type serializes, empty or not, sealed or not.
    #[test]
    fn the_body_is_the_generated_lists_json() {
        for n in [0, 1, 3] {
            let mut insert = Body::new(WriteKind::Insert);
            let mut update = Body::new(WriteKind::Update);
            let mut inserts = Vec::new();
            let mut updates = Vec::new();
            for c in conversions().into_iter().take(n) {
                inserts.push(wire::conversion_into_insert(c.clone()).unwrap());
                updates.push(wire::conversion_into_update(c.clone()).unwrap());
                insert.push(c.clone()).unwrap();
                update.push(c).unwrap();
            }
            let want_insert = serde_json::to_vec(&types::ConversionInsertList {
                conversion: inserts,
                kind: None,
            })
            .unwrap();
            let want_update = serde_json::to_vec(&types::ConversionUpdateList {
                conversion: updates,
                kind: None,
            })
            .unwrap();
            assert_eq!(insert.bytes(), want_insert, "{n}");
            assert_eq!(update.bytes(), want_update, "{n}");
            insert.seal();
            update.seal();
            assert_eq!(insert.bytes(), want_insert, "{n} sealed");
            assert_eq!(update.bytes(), want_update, "{n} sealed");
            assert_eq!(insert.len(), n);
        }
    }

    /// A sealed body takes no more rows.
    #[test]
    fn a_sealed_body_refuses_a_row() {
        let mut body = Body::new(WriteKind::Insert);
        body.seal();
        assert!(body.push(conversions().remove(0)).is_err());
        assert_eq!(body.len(), 0);
    }
}

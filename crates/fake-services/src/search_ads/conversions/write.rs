//! The batch loop that `insert` and `update` share: best effort per conversion (SA-9).

use std::collections::HashSet;

use axum::Extension;
use axum::http::StatusCode;
use axum::response::Response;
use serde_json::{Map, Value};

use super::CONVERSION_LIST_KIND;
use super::batch::{
    CONVERSION_FIELDS, Detail, batch_failure, empty_batch, i64_field, parse_batch, str_field,
};
use super::insert::{CheckedInsert, check_insert, store_insert};
use super::update::update_one;
use crate::errors::bytes_response;
use crate::faults::{DetailsTruncation, RequestSeq};
use crate::search_ads::AppState;
use crate::search_ads::ledger::{ConversionKey, Counters, Store};

/// What tells `insert` and `update` apart.
#[derive(Clone, Copy)]
pub(super) enum WriteMethod {
    Insert,
    Update,
}

/// Insert or update a batch: best effort per conversion (SA-9). The valid
/// conversions are stored; when any is rejected the answer is one 400 naming
/// every rejected index.
pub(super) fn write_batch(
    app: &AppState,
    seq: Option<Extension<RequestSeq>>,
    cut: Option<Extension<DetailsTruncation>>,
    body: &[u8],
    kind: WriteMethod,
) -> Response {
    let counters = &app.shared.counters;
    Counters::bump(match kind {
        WriteMethod::Insert => &counters.insert_requests,
        WriteMethod::Update => &counters.update_requests,
    });
    let request = seq.map_or(0, |Extension(RequestSeq(n))| n);
    let items = match parse_batch(body, "conversion", CONVERSION_FIELDS) {
        Ok(items) => items,
        Err(response) => return response,
    };
    if items.is_empty() {
        return empty_batch();
    }
    let now_ms = app.now_ms();
    let mut details = Vec::new();
    let mut claims = Claims::default();
    // An insert's checks that do not read the store run before it is locked, in the same order
    // per item, so that requests in flight at once check their items side by side.
    let checked: Vec<_> = match kind {
        WriteMethod::Insert => items
            .into_iter()
            .map(|item| Item::Checked(check_insert(app, &mut claims, item)))
            .collect(),
        WriteMethod::Update => items.into_iter().map(Item::Raw).collect(),
    };
    let mut store = app.shared.store();
    let mut batch = Batch {
        store: &mut store,
        claims,
        now_ms,
        request,
        echo: Echo::new(),
    };
    for (index, item) in checked.into_iter().enumerate() {
        let result = match item {
            Item::Checked(checked) => checked.and_then(|c| store_insert(app, &mut batch, c)),
            Item::Raw(item) => update_one(app, &mut batch, item),
        };
        if let Err(detail) = result {
            details.push((index, detail));
        }
    }
    let echo = batch.echo;
    drop(store);
    Counters::add(
        match kind {
            WriteMethod::Insert => &counters.conversions_inserted,
            WriteMethod::Update => &counters.conversions_updated,
        },
        echo.count as u64,
    );
    Counters::add(&counters.conversions_rejected, details.len() as u64);
    if details.is_empty() {
        echo.response()
    } else {
        tracing::debug!(
            rejected = details.len(),
            stored = echo.count,
            "batch partly rejected"
        );
        batch_failure(
            &details,
            "conversion",
            cut.map(|Extension(DetailsTruncation(cut))| cut),
        )
    }
}

/// The two fields every conversion of a write needs: `conversionId` and `conversionTimestamp`.
pub(super) fn required_common(map: &Map<String, Value>) -> Result<(String, i64), Detail> {
    let id = str_field(map, "conversionId")
        .filter(|s| !s.is_empty())
        .ok_or_else(|| Detail::invalid("conversionId"))?;
    let ts = i64_field(map, "conversionTimestamp")
        .ok_or_else(|| Detail::invalid("conversionTimestamp"))?;
    Ok((id.to_owned(), ts))
}

/// The 200 answer of a write, `{"kind": "doubleclicksearch#conversionList", "conversion": [...]}`
/// with the conversions as stored, written as each is stored (not copied out of the store first).
pub(super) struct Echo {
    /// `{"kind":...,"conversion":[` and the conversions so far, comma-separated.
    body: Vec<u8>,
    /// Conversions written.
    count: usize,
}

impl Echo {
    fn new() -> Self {
        let mut body = Vec::with_capacity(4096);
        body.extend_from_slice(b"{\"kind\":");
        // A constant string: serializing it cannot fail.
        let _ = serde_json::to_writer(&mut body, CONVERSION_LIST_KIND);
        body.extend_from_slice(b",\"conversion\":[");
        Self { body, count: 0 }
    }

    /// Appends `conversion` as stored.
    pub(super) fn push(&mut self, conversion: &Value) {
        if self.count > 0 {
            self.body.push(b',');
        }
        // A `Value` always serializes (its map keys are strings).
        let _ = serde_json::to_writer(&mut self.body, conversion);
        self.count += 1;
    }

    /// The 200 answer.
    fn response(mut self) -> Response {
        self.body.extend_from_slice(b"]}");
        bytes_response(StatusCode::OK, self.body)
    }
}

/// An item of a write request on its way to the store.
enum Item {
    /// An insert's item after the checks that do not read the store.
    Checked(Result<CheckedInsert, Detail>),
    /// An update's item, checked under the store's lock.
    Raw(Value),
}

/// The conversions the items of one request named so far.
#[derive(Default)]
pub(super) struct Claims(HashSet<ConversionKey>);

impl Claims {
    /// Claims `key` for this item: a conversion named twice in one request is `0x0000011F`.
    pub(super) fn claim(&mut self, key: &ConversionKey) -> Result<(), Detail> {
        if self.0.insert(key.clone()) {
            return Ok(());
        }
        Err(Detail::new(
            0x11F,
            format!(
                "Advertiser conversion ID '{}' is already specified in this request",
                key.conversion_id
            ),
        ))
    }
}

/// What the items of one write request share while they are stored one by one.
pub(super) struct Batch<'a> {
    /// The store, locked while the request's items are stored.
    pub(super) store: &'a mut Store,
    /// The conversions already named by earlier items.
    pub(super) claims: Claims,
    /// The fake clock's time of the request (`conversionModifiedTimestamp`).
    pub(super) now_ms: i64,
    /// The fake's number of the request.
    pub(super) request: u64,
    /// The answer, should every item be stored.
    pub(super) echo: Echo,
}

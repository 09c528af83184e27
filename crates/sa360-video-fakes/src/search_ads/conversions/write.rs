//! The batch loop that `insert` and `update` share: best effort per conversion (SA-9).

use std::collections::HashSet;
use std::sync::atomic::AtomicU64;

use axum::Extension;
use axum::http::StatusCode;
use axum::response::Response;

use super::batch::{Detail, batch_failure, empty_batch};
use super::page::CONVERSION_LIST_KIND;
use super::parse::{Item, parse_batch};
use crate::errors::bytes_response;
use crate::faults::{DetailsTruncation, RequestSeq};
use crate::search_ads::ledger::{ConversionKey, Counters, Store};
use crate::search_ads::record::{Record, Schema};
use crate::search_ads::state::AppState;
use serde::Serialize;

/// What tells `insert` and `update` apart (each implements it in its own file): their
/// counters, the checks that run before the store is locked, and how one checked conversion
/// is stored.
pub(super) trait WriteMethod {
    /// A conversion after the checks that do not read the store.
    type Checked;
    /// The counters of this method's requests and of the conversions it stored.
    fn counters(counters: &Counters) -> (&AtomicU64, &AtomicU64);
    /// The checks that do not read the store, run before it is locked, in item order, so that
    /// requests in flight at once check their items side by side.
    fn check(app: &AppState, claims: &mut Claims, item: Item) -> Self::Checked;
    /// Stores one checked conversion, under the store's lock, and echoes it as stored.
    fn store(app: &AppState, batch: &mut Batch<'_>, checked: Self::Checked) -> Result<(), Detail>;
}

/// Insert or update a batch: best effort per conversion (SA-9). The valid
/// conversions are stored; when any is rejected the answer is one 400 naming
/// every rejected index.
pub(super) fn write_batch<M: WriteMethod>(
    app: &AppState,
    seq: Option<Extension<RequestSeq>>,
    cut: Option<Extension<DetailsTruncation>>,
    body: &[u8],
) -> Response {
    let counters = &app.shared.counters;
    let (requests, stored) = M::counters(counters);
    Counters::bump(requests);
    let request = seq.map_or(0, |Extension(RequestSeq(n))| n);
    let items = match parse_batch(body, "conversion", Schema::Conversion) {
        Ok(items) => items,
        Err(response) => return response,
    };
    if items.is_empty() {
        return empty_batch();
    }
    let now_ms = app.now_ms();
    let mut details = Vec::new();
    let mut claims = Claims::default();
    let checked: Vec<M::Checked> = items
        .into_iter()
        .map(|item| M::check(app, &mut claims, item))
        .collect();
    let mut store = app.shared.store();
    let mut batch = Batch {
        store: &mut store,
        claims,
        now_ms,
        request,
        echo: Echo::new(),
    };
    for (index, item) in checked.into_iter().enumerate() {
        if let Err(detail) = M::store(app, &mut batch, item) {
            details.push((index, detail));
        }
    }
    let echo = batch.echo;
    drop(store);
    Counters::add(stored, echo.count as u64);
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
pub(super) fn required_common(map: &Record) -> Result<(String, i64), Detail> {
    let id = map
        .str("conversionId")
        .filter(|s| !s.is_empty())
        .ok_or_else(|| Detail::invalid("conversionId"))?;
    let ts = map
        .int("conversionTimestamp")
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
    pub(super) fn push(&mut self, conversion: &(impl Serialize + ?Sized)) {
        if self.count > 0 {
            self.body.push(b',');
        }
        // A record always serializes (its members are strings, int64s and JSON values).
        let _ = serde_json::to_writer(&mut self.body, conversion);
        self.count += 1;
    }

    /// The 200 answer.
    fn response(mut self) -> Response {
        self.body.extend_from_slice(b"]}");
        bytes_response(StatusCode::OK, self.body)
    }
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

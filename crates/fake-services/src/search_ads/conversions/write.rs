//! The batch loop that `insert` and `update` share: best effort per conversion (SA-9).

use std::collections::HashSet;

use axum::Extension;
use axum::http::StatusCode;
use axum::response::Response;
use serde::Serialize;
use serde_json::{Map, Value};

use super::CONVERSION_LIST_KIND;
use super::batch::{
    CONVERSION_FIELDS, Detail, batch_failure, empty_batch, i64_field, parse_batch, str_field,
};
use super::insert::insert_one;
use super::update::update_one;
use crate::errors::json_response;
use crate::faults::{DetailsTruncation, RequestSeq};
use crate::search_ads::AppState;
use crate::search_ads::ledger::{ConversionKey, Counters, Store};

/// The 200 answer of a write: the conversions as stored.
#[derive(Serialize)]
struct ConversionEcho<'a> {
    kind: &'static str,
    conversion: &'a [Value],
}

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
    let mut echoed = Vec::with_capacity(items.len());
    let mut store = app.shared.store();
    let mut batch = Batch {
        store: &mut store,
        seen: HashSet::new(),
        now_ms,
        request,
    };
    for (index, item) in items.into_iter().enumerate() {
        let result = match kind {
            WriteMethod::Insert => insert_one(app, &mut batch, item),
            WriteMethod::Update => update_one(app, &mut batch, item),
        };
        match result {
            Ok(conversion) => echoed.push(conversion),
            Err(detail) => details.push((index, detail)),
        }
    }
    drop(store);
    Counters::add(
        match kind {
            WriteMethod::Insert => &counters.conversions_inserted,
            WriteMethod::Update => &counters.conversions_updated,
        },
        echoed.len() as u64,
    );
    Counters::add(&counters.conversions_rejected, details.len() as u64);
    if details.is_empty() {
        json_response(
            StatusCode::OK,
            &ConversionEcho {
                kind: CONVERSION_LIST_KIND,
                conversion: &echoed,
            },
        )
    } else {
        tracing::debug!(
            rejected = details.len(),
            stored = echoed.len(),
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

/// What the items of one write request share while they are checked one by one.
pub(super) struct Batch<'a> {
    /// The store, locked for the whole request.
    pub(super) store: &'a mut Store,
    /// The conversions already named by earlier items.
    seen: HashSet<ConversionKey>,
    /// The fake clock's time of the request (`conversionModifiedTimestamp`).
    pub(super) now_ms: i64,
    /// The fake's number of the request.
    pub(super) request: u64,
}

impl Batch<'_> {
    /// Claims `key` for this item: a conversion named twice in one request is `0x0000011F`.
    pub(super) fn claim(&mut self, key: &ConversionKey) -> Result<(), Detail> {
        if self.seen.insert(key.clone()) {
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

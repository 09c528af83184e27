//! What the conversion methods' unit tests share: a fake's state without a server, a call's
//! answer as JSON, and valid items to send.

use std::collections::HashMap;

use axum::extract::Query;
use axum::http::StatusCode;
use axum::response::Response;
use bytes::Bytes;
use serde_json::{Value, json};

use crate::search_ads::config::SearchAdsConfig;
use crate::search_ads::data::Generator;
use crate::search_ads::ledger::{SearchAdsCounts, SearchAdsLedger};
use crate::search_ads::state::AppState;

/// The default configuration's state (two accounts of one advertiser, seed 42).
pub(super) fn app() -> AppState {
    AppState::for_tests(SearchAdsConfig::default())
}

/// The state of a configuration changed by `change`.
pub(super) fn app_with(change: impl FnOnce(&mut SearchAdsConfig)) -> AppState {
    let mut config = SearchAdsConfig::default();
    change(&mut config);
    AppState::for_tests(config)
}

/// The ledger of `app`, as tests outside the crate read it.
pub(super) fn ledger(app: &AppState) -> SearchAdsLedger {
    SearchAdsLedger {
        shared: app.shared.clone(),
    }
}

/// The counters of `app`.
pub(super) fn counts(app: &AppState) -> SearchAdsCounts {
    ledger(app).counts()
}

/// The status and JSON body of an answer.
pub(super) async fn answer(response: Response) -> (StatusCode, Value) {
    let status = response.status();
    let bytes = axum::body::to_bytes(response.into_body(), 1 << 24)
        .await
        .unwrap_or_default();
    let body = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
    (status, body)
}

/// A query string as the handlers receive it.
pub(super) fn query(pairs: &[(&str, &str)]) -> Query<HashMap<String, String>> {
    Query(
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect(),
    )
}

/// A JSON body.
pub(super) fn body(value: &Value) -> Bytes {
    Bytes::from(value.to_string())
}

/// The top-level `error.message` of a Google error body.
pub(super) fn message(body: &Value) -> &str {
    body["error"]["message"].as_str().unwrap_or_default()
}

/// A conversion insert accepts for account number 0 of the default configuration.
pub(super) fn new_conversion(id: &str, timestamp: i64) -> Value {
    let account = &SearchAdsConfig::default().accounts[0];
    json!({
        "agencyId": account.agency_id.to_string(),
        "advertiserId": account.advertiser_id.to_string(),
        "engineAccountId": account.engine_account_id.to_string(),
        "conversionId": id,
        "conversionTimestamp": timestamp.to_string(),
        "segmentationType": "FLOODLIGHT",
        "segmentationName": "Purchase",
        "type": "TRANSACTION",
        "revenueMicros": "1000000",
        "currencyCode": "USD",
    })
}

/// Seeded conversion `i` of account number `a` of `app`, as reads return it.
pub(super) fn seeded(app: &AppState, a: usize, i: u64) -> Value {
    serde_json::to_value(
        Generator {
            config: &app.config,
        }
        .conversion(a, i),
    )
    .unwrap_or(Value::Null)
}

impl AppState {
    /// The `conversionId` of seeded conversion `i` of account number `a`.
    pub(super) fn seeded_id(&self, a: usize, i: u64) -> String {
        crate::search_ads::data::seeded_conversion_id(&self.config.accounts[a], i)
    }
}

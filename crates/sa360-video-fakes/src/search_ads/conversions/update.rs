//! `conversion.update` (`PUT /conversion`): changes the writable fields of a stored or seeded
//! conversion named by (`conversionId`, `conversionTimestamp`).

use std::collections::btree_map::Entry;
use std::sync::atomic::AtomicU64;

use axum::Extension;
use axum::extract::State;
use axum::response::Response;
use bytes::Bytes;

use super::batch::Detail;
use super::checks::{
    UPDATE_CLICK_MAX_AGE_MS, attributed_owner, check_segmentation, check_value_sets, seeded_target,
};
use super::parse::{Item, record_from_value};
use super::write::{Batch, Claims, WriteMethod, required_common, write_batch};
use crate::faults::{DetailsTruncation, RequestSeq};
use crate::search_ads::data::Generator;
use crate::search_ads::ledger::Counters;
use crate::search_ads::ledger::{ConversionKey, Origin, Stored};
use crate::search_ads::record::Schema;
use crate::search_ads::state::AppState;

/// `PUT /conversion`.
pub(crate) async fn update(
    State(app): State<AppState>,
    seq: Option<Extension<RequestSeq>>,
    cut: Option<Extension<DetailsTruncation>>,
    body: Bytes,
) -> Response {
    write_batch::<Update>(&app, seq, cut, &body)
}

/// `update` as a [`WriteMethod`]: every check of an update reads the store, so all run while
/// storing.
pub(super) struct Update;

impl WriteMethod for Update {
    type Checked = Item;

    fn counters(c: &Counters) -> (&AtomicU64, &AtomicU64) {
        (&c.update_requests, &c.conversions_updated)
    }

    fn check(_: &AppState, _: &mut Claims, item: Item) -> Item {
        item
    }

    fn store(app: &AppState, batch: &mut Batch<'_>, item: Item) -> Result<(), Detail> {
        update_one(app, batch, item)
    }
}

/// The fields `update` may change (the `conversion.update` reference marks these four "writable",
/// <https://developers.google.com/search-ads/v2/reference/conversion/update>).
const WRITABLE: &[&str] = &["currencyCode", "quantityMillis", "revenueMicros", "state"];

/// Checks one conversion of an update and applies it, and echoes it as stored.
pub(super) fn update_one(app: &AppState, batch: &mut Batch<'_>, item: Item) -> Result<(), Detail> {
    let mut map = item?;
    let (conversion_id, timestamp) = required_common(&map)?;
    let owner = attributed_owner(app, &mut map, timestamp, UPDATE_CLICK_MAX_AGE_MS)?;
    let mut key = ConversionKey {
        owner,
        conversion_id,
    };
    batch.claims.claim(&key)?;
    let (store, now_ms, request) = (&mut *batch.store, batch.now_ms, batch.request);
    if map.contains("segmentationType") {
        check_segmentation(app, &map)?;
    }
    check_value_sets(&map)?;
    let not_found = |key: &ConversionKey| {
        Detail::new(
            0x11B,
            format!(
                "Advertiser conversion ID '{}' with conversion timestamp {timestamp} is not found",
                key.conversion_id
            ),
        )
    };
    // A seeded conversion is stored under its advertiser the first time it changes.
    if !store.conversions.contains_key(&(key.clone(), timestamp))
        && let Some((a, i)) = seeded_target(app, &key.owner, &key.conversion_id)
    {
        let generator = Generator {
            config: &app.config,
        };
        if generator.timestamp(a, i) != timestamp {
            return Err(not_found(&key));
        }
        let account = &app.config.accounts[a];
        key = ConversionKey::advertiser(account.advertiser_id, key.conversion_id.clone());
        if let Entry::Vacant(slot) = store.conversions.entry((key.clone(), timestamp)) {
            let seeded = serde_json::to_value(generator.conversion(a, i))
                .map_err(|_| Detail::new(0x100, "Internal error while reading the conversion"))?;
            slot.insert(Stored {
                record: record_from_value(Schema::Conversion, seeded)?,
                origin: Origin::SeededUpdated,
                ds_conversion_id: generator.seeded_ds_id(a, i),
                request,
                updates: 0,
                copies: 1,
            });
            if let Some(count) = store.seeded_overrides.get_mut(a) {
                *count += 1;
            }
        }
    }
    let Some(stored) = store.conversions.get_mut(&(key.clone(), timestamp)) else {
        return Err(not_found(&key));
    };
    for &field in WRITABLE {
        if let Some(v) = map.get(field) {
            stored.record.set(field, v.clone());
        }
    }
    stored.record.set_int("conversionModifiedTimestamp", now_ms);
    stored.updates += 1;
    batch.echo.push(&stored.record);
    Ok(())
}

#[cfg(test)]
mod tests {
    use axum::extract::{Path, State};
    use axum::http::StatusCode;
    use serde_json::{Value, json};

    use super::update;
    use crate::search_ads::conversions::tests::{
        answer, app, body, counts, ledger, message, new_conversion, query, seeded,
    };
    use crate::search_ads::conversions::{get_by_customer_id, insert};
    use crate::search_ads::data::Generator;
    use crate::search_ads::ledger::{ConversionKey, Origin};
    use crate::search_ads::state::AppState;

    async fn send(app: &AppState, items: &[Value]) -> (StatusCode, Value) {
        let request = json!({ "conversion": items });
        answer(update(State(app.clone()), None, None, body(&request)).await).await
    }

    /// An update of seeded conversion `i` of account 0 that changes its revenue and tries to
    /// change its order ID.
    fn seeded_update(app: &AppState, i: u64, timestamp: i64) -> Value {
        let account = &app.config.accounts[0];
        json!({
            "agencyId": account.agency_id.to_string(),
            "advertiserId": account.advertiser_id.to_string(),
            "conversionId": app.seeded_id(0, i),
            "conversionTimestamp": timestamp.to_string(),
            "revenueMicros": 4_250_000,
            "floodlightOrderId": "not-writable",
        })
    }

    #[tokio::test]
    async fn a_seeded_conversion_changes_only_its_writable_fields_and_reads_show_it() {
        let app = app();
        let timestamp = Generator {
            config: &app.config,
        }
        .timestamp(0, 3);
        let (status, echo) = send(&app, &[seeded_update(&app, 3, timestamp)]).await;
        assert_eq!(status, StatusCode::OK, "{echo}");
        let before = seeded(&app, 0, 3);
        let after = &echo["conversion"][0];
        assert_eq!(after["revenueMicros"], "4250000");
        assert_eq!(after["floodlightOrderId"], before["floodlightOrderId"]);
        assert_eq!(after["dsConversionId"], before["dsConversionId"]);
        let key =
            ConversionKey::advertiser(app.config.accounts[0].advertiser_id, app.seeded_id(0, 3));
        let stored = ledger(&app)
            .conversion(&key)
            .unwrap_or_else(|| panic!("not stored"));
        assert_eq!((stored.origin, stored.updates), (Origin::SeededUpdated, 1));

        let customer = app.config.accounts[0].customer_id.clone();
        let q = [
            ("startDate", "20240101"),
            ("endDate", "20240101"),
            ("startRow", "3"),
            ("rowCount", "1"),
        ];
        let (_, page) =
            answer(get_by_customer_id(State(app.clone()), Path(customer), query(&q)).await).await;
        assert_eq!(
            &page["conversion"][0], after,
            "reads return the updated row"
        );
        assert_eq!(counts(&app).conversions_updated, 1);
    }

    #[tokio::test]
    async fn a_conversion_that_does_not_exist_is_0x11b() {
        let app = app();
        let timestamp = Generator {
            config: &app.config,
        }
        .timestamp(0, 3);
        for item in [
            seeded_update(&app, 3, timestamp + 1),
            new_conversion("never-inserted", timestamp),
        ] {
            let (status, error) = send(&app, &[item]).await;
            assert_eq!(status, StatusCode::BAD_REQUEST);
            assert!(message(&error).contains("0x0000011B"), "{error}");
        }
        assert_eq!(ledger(&app).stored_count(), 0);
    }

    #[tokio::test]
    async fn an_inserted_conversion_is_updated_in_place() {
        let app = app();
        let june = 1_717_200_000_000;
        let inserted = json!({ "conversion": [new_conversion("c-9", june)] });
        let (status, _) =
            answer(insert(State(app.clone()), None, None, body(&inserted)).await).await;
        assert_eq!(status, StatusCode::OK);
        let mut change = new_conversion("c-9", june);
        change["state"] = json!("REMOVED");
        let (status, echo) = send(&app, &[change.clone()]).await;
        assert_eq!(status, StatusCode::OK, "{echo}");
        assert_eq!(echo["conversion"][0]["state"], "REMOVED");
        let key = ConversionKey::advertiser(app.config.accounts[0].advertiser_id, "c-9");
        let stored = ledger(&app)
            .conversion(&key)
            .unwrap_or_else(|| panic!("not stored"));
        assert_eq!(
            (stored.updates, stored.conversion["state"].clone()),
            (1, json!("REMOVED"))
        );
        // Twice in one request: the second is refused, the first applied.
        let (status, error) = send(&app, &[change.clone(), change]).await;
        assert_eq!(status, StatusCode::BAD_REQUEST);
        assert!(message(&error).contains("0x0000011F"), "{error}");
        assert_eq!(ledger(&app).conversion(&key).map(|s| s.updates), Some(2));
    }
}

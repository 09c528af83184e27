//! `conversion.insert` (`POST /conversion`): stores new conversions, refusing a
//! (`conversionId`, `conversionTimestamp`) already used by the advertiser (SA-15).

use std::sync::atomic::AtomicU64;

use axum::Extension;
use axum::extract::State;
use axum::response::Response;
use bytes::Bytes;

use super::batch::Detail;
use super::checks::{
    CLICK_MAX_AGE_MS, attributed_owner, check_references, check_segmentation, check_value_sets,
    seeded_target, view_of,
};
use super::parse::Item;
use super::write::{Batch, Claims, WriteMethod, required_common, write_batch};
use crate::faults::{DetailsTruncation, RequestSeq};
use crate::search_ads::data::{Generator, INSERTED_DS_BASE};
use crate::search_ads::ledger::Counters;
use crate::search_ads::ledger::{ConversionKey, Origin, Stored};
use crate::search_ads::record::Record;
use crate::search_ads::state::AppState;

/// `POST /conversion`.
pub(crate) async fn insert(
    State(app): State<AppState>,
    seq: Option<Extension<RequestSeq>>,
    cut: Option<Extension<DetailsTruncation>>,
    body: Bytes,
) -> Response {
    write_batch::<Insert>(&app, seq, cut, &body)
}

/// `insert` as a [`WriteMethod`]: most checks before the store is locked, the rest while storing.
pub(super) struct Insert;

impl WriteMethod for Insert {
    type Checked = Result<CheckedInsert, Detail>;

    fn counters(c: &Counters) -> (&AtomicU64, &AtomicU64) {
        (&c.insert_requests, &c.conversions_inserted)
    }

    fn check(app: &AppState, claims: &mut Claims, item: Item) -> Self::Checked {
        check_insert(app, claims, item)
    }

    fn store(app: &AppState, batch: &mut Batch<'_>, checked: Self::Checked) -> Result<(), Detail> {
        checked.and_then(|c| store_insert(app, batch, c))
    }
}

/// An insert's item that passed every check that does not read the store.
pub(super) struct CheckedInsert {
    map: Record,
    key: ConversionKey,
    timestamp: i64,
}

/// The checks of one conversion of an insert that do not read the store, in the order the fake
/// applies them (the first failure is the item's detail).
pub(super) fn check_insert(
    app: &AppState,
    claims: &mut Claims,
    item: Item,
) -> Result<CheckedInsert, Detail> {
    let mut map = item?;
    let (conversion_id, timestamp) = required_common(&map)?;
    if !map.contains("segmentationType") {
        return Err(Detail::invalid("segmentationType"));
    }
    let owner = attributed_owner(app, &mut map, timestamp, CLICK_MAX_AGE_MS)?;
    let key = ConversionKey {
        owner,
        conversion_id,
    };
    claims.claim(&key)?;
    check_segmentation(app, &map)?;
    check_value_sets(&map)?;
    check_references(app, &map)?;
    Ok(CheckedInsert {
        map,
        key,
        timestamp,
    })
}

/// Stores one checked conversion of an insert (unless its (ID, timestamp) is taken), and echoes
/// it as stored.
pub(super) fn store_insert(
    app: &AppState,
    batch: &mut Batch<'_>,
    checked: CheckedInsert,
) -> Result<(), Detail> {
    let CheckedInsert {
        mut map,
        key,
        timestamp,
    } = checked;
    let (store, now_ms, request) = (&mut *batch.store, batch.now_ms, batch.request);
    // SA-15: (conversionId, conversionTimestamp) is unique per advertiser.
    let generator = Generator {
        config: &app.config,
    };
    let stored_key = (key, timestamp);
    let key = &stored_key.0;
    let existing_ds = store
        .conversions
        .get(&stored_key)
        .map(|s| s.ds_conversion_id)
        .or_else(|| {
            seeded_target(app, &key.owner, &key.conversion_id)
                .filter(|&(a, i)| generator.timestamp(a, i) == timestamp)
                .map(|(a, i)| generator.seeded_ds_id(a, i))
        });
    if !app.config.deduplicate
        && let Some(stored) = store.conversions.get_mut(&stored_key)
    {
        // Without deduplication a repeated insert is stored again.
        stored.copies += 1;
        batch.echo.push(&stored.record);
        return Ok(());
    }
    if let Some(ds) = existing_ds {
        return Err(Detail::new(
            0x11A,
            format!(
                "Advertiser conversion ID '{}' with conversion timestamp {timestamp} is already used by another conversion with SA360 conversion ID {ds}",
                key.conversion_id
            ),
        ));
    }
    if store.next_ds_id == 0 {
        store.next_ds_id = INSERTED_DS_BASE;
    }
    store.next_ds_id += 1;
    let ds = store.next_ds_id;
    map.set_int("dsConversionId", ds);
    map.set_int("conversionModifiedTimestamp", now_ms);
    batch.echo.push(&map);
    if app.config.forget_conversions {
        return Ok(());
    }
    if let Some(a) = view_of(app, &map)
        && let Some(index) = store.views.get_mut(a)
    {
        index.insert((timestamp, key.conversion_id.clone()), stored_key.clone());
    }
    store.conversions.insert(
        stored_key,
        Stored {
            record: map,
            origin: Origin::Inserted,
            ds_conversion_id: ds,
            request,
            updates: 0,
            copies: 1,
        },
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use axum::extract::State;
    use axum::http::StatusCode;
    use serde_json::{Value, json};

    use super::insert;
    use crate::search_ads::conversions::tests::{
        answer, app, app_with, body, counts, ledger, message, new_conversion,
    };
    use crate::search_ads::data::{Generator, INSERTED_DS_BASE};
    use crate::search_ads::ledger::{ConversionKey, Origin};
    use crate::search_ads::state::AppState;

    /// 2024-06-01, after every seeded conversion of the default configuration.
    const JUNE: i64 = 1_717_200_000_000;

    async fn send(app: &AppState, items: &[Value]) -> (StatusCode, Value) {
        let request = json!({ "kind": "doubleclicksearch#conversionList", "conversion": items });
        answer(insert(State(app.clone()), None, None, body(&request)).await).await
    }

    fn key(app: &AppState, id: &str) -> ConversionKey {
        ConversionKey::advertiser(app.config.accounts[0].advertiser_id, id)
    }

    #[tokio::test]
    async fn the_ledger_lists_conversions_by_key_then_timestamp() {
        let app = app();
        let ids = ["c-9", "c-1", "c-50", "c-5", "c-10"];
        for ts in [JUNE + 2, JUNE] {
            let items: Vec<Value> = ids.iter().map(|id| new_conversion(id, ts)).collect();
            let (status, echo) = send(&app, &items).await;
            assert_eq!(status, StatusCode::OK, "{echo}");
        }
        let ledger = ledger(&app);
        let listed: Vec<(String, i64)> = ledger
            .conversions()
            .iter()
            .map(|c| (c.key.conversion_id.clone(), c.timestamp_ms))
            .collect();
        let mut sorted = listed.clone();
        sorted.sort();
        assert_eq!(listed.len(), 10);
        assert_eq!(listed, sorted);
        let first = ledger.conversion(&key(&app, "c-5"));
        assert_eq!(
            first.map(|c| c.timestamp_ms),
            Some(JUNE),
            "a key's earliest"
        );
        assert!(ledger.conversion_at(&key(&app, "c-5"), JUNE + 2).is_some());
        assert!(ledger.conversion_at(&key(&app, "c-5"), JUNE + 1).is_none());
        assert!(!ledger.contains(&key(&app, "c-6")));
    }

    #[tokio::test]
    async fn stores_and_echoes_a_conversion_with_its_new_ds_id() {
        let app = app();
        let (status, echo) = send(&app, &[new_conversion("c-1", JUNE)]).await;
        assert_eq!(status, StatusCode::OK, "{echo}");
        let echoed = &echo["conversion"][0];
        assert_eq!(echoed["dsConversionId"], (INSERTED_DS_BASE + 1).to_string());
        assert!(echoed["conversionModifiedTimestamp"].is_string(), "{echo}");
        let stored = ledger(&app).conversion(&key(&app, "c-1"));
        let stored = stored.unwrap_or_else(|| panic!("c-1 is not stored"));
        assert_eq!(stored.origin, Origin::Inserted);
        assert_eq!(stored.timestamp_ms, JUNE);
        assert_eq!(&stored.conversion, echoed);
        let counts = counts(&app);
        assert_eq!(
            (counts.insert_requests, counts.conversions_inserted),
            (1, 1)
        );
    }

    #[tokio::test]
    async fn a_batch_stores_the_valid_items_and_names_every_rejected_index() {
        let app = app();
        let mut stranger = new_conversion("c-3", JUNE);
        stranger["advertiserId"] = json!("1");
        let mut no_segmentation = new_conversion("c-4", JUNE);
        no_segmentation
            .as_object_mut()
            .map(|m| m.remove("segmentationType"));
        let items = [
            new_conversion("c-1", JUNE),
            new_conversion("c-1", JUNE),
            stranger,
            no_segmentation,
        ];
        let (status, error) = send(&app, &items).await;
        assert_eq!(status, StatusCode::BAD_REQUEST);
        let text = message(&error);
        assert!(text.contains("0x0000011F: Advertiser conversion ID 'c-1' is already specified in this request for conversion index=1"), "{text}");
        assert!(text.contains("0x0000011D: The user does not have permission to view advertiser 1 for conversion index=2"), "{text}");
        assert!(
            text.contains("Field is missing or invalid: segmentationType for conversion index=3"),
            "{text}"
        );
        assert!(!text.contains("index=0"), "{text}");
        assert!(
            ledger(&app).contains(&key(&app, "c-1")),
            "index 0 is stored (SA-9)"
        );
        assert_eq!(ledger(&app).stored_count(), 1);
        assert_eq!(counts(&app).conversions_rejected, 3);
    }

    #[tokio::test]
    async fn an_id_and_timestamp_already_used_are_refused_unless_deduplication_is_off() {
        let app = app();
        assert_eq!(
            send(&app, &[new_conversion("c-1", JUNE)]).await.0,
            StatusCode::OK
        );
        let (status, error) = send(&app, &[new_conversion("c-1", JUNE)]).await;
        assert_eq!(status, StatusCode::BAD_REQUEST);
        assert!(message(&error).contains("0x0000011A"), "{error}");
        // Another timestamp is another conversion (SA-15).
        assert_eq!(
            send(&app, &[new_conversion("c-1", JUNE + 1)]).await.0,
            StatusCode::OK
        );

        let lenient = app_with(|c| c.deduplicate = false);
        for _ in 0..2 {
            assert_eq!(
                send(&lenient, &[new_conversion("c-1", JUNE)]).await.0,
                StatusCode::OK
            );
        }
        let stored = ledger(&lenient).conversion(&key(&lenient, "c-1"));
        assert_eq!(stored.map(|s| s.copies), Some(2));
    }

    #[tokio::test]
    async fn the_bench_mode_answers_every_conversion_and_keeps_none() {
        let app = app_with(|c| c.forget_conversions = true);
        let items = [new_conversion("c-1", JUNE), new_conversion("c-2", JUNE)];
        let (status, echo) = send(&app, &items).await;
        assert_eq!(status, StatusCode::OK, "{echo}");
        assert_eq!(
            echo["conversion"][1]["dsConversionId"],
            (INSERTED_DS_BASE + 2).to_string()
        );
        assert_eq!(
            send(&app, &items[..1]).await.0,
            StatusCode::OK,
            "not kept, not a repeat"
        );
        let (status, error) = send(&app, &[items[0].clone(), items[0].clone()]).await;
        assert_eq!(status, StatusCode::BAD_REQUEST);
        assert!(message(&error).contains("0x0000011F"), "{error}");
        let (status, error) = send(&app, &[json!({ "conversionId": "c-3" })]).await;
        assert_eq!(status, StatusCode::BAD_REQUEST);
        assert!(message(&error).contains("conversionTimestamp"), "{error}");
        assert_eq!(ledger(&app).stored_count(), 0);
        assert_eq!(counts(&app).conversions_inserted, 4);
    }

    #[tokio::test]
    async fn a_seeded_conversion_id_and_timestamp_are_already_used() {
        let app = app();
        let generator = Generator {
            config: &app.config,
        };
        let (status, error) = send(
            &app,
            &[new_conversion(
                &app.seeded_id(0, 7),
                generator.timestamp(0, 7),
            )],
        )
        .await;
        assert_eq!(status, StatusCode::BAD_REQUEST);
        let ds = generator.seeded_ds_id(0, 7);
        assert!(
            message(&error).contains(&format!("SA360 conversion ID {ds}")),
            "{error}"
        );
    }

    #[tokio::test]
    async fn a_click_alone_attributes_the_conversion_to_the_clicks_account() {
        let app = app();
        let generator = Generator {
            config: &app.config,
        };
        let click = crate::search_ads::data::click_id(app.config.seed, 100_000_000_000 + 5);
        let item = json!({
            "clickId": click,
            "conversionId": "by-click",
            "conversionTimestamp": (generator.click_timestamp(1, 5) + 1000).to_string(),
            "segmentationType": "FLOODLIGHT",
            "segmentationId": "551234",
        });
        let (status, echo) = send(&app, &[item]).await;
        assert_eq!(status, StatusCode::OK, "{echo}");
        let account = &app.config.accounts[1];
        assert_eq!(
            echo["conversion"][0]["engineAccountId"],
            account.engine_account_id.to_string()
        );
        assert_eq!(
            echo["conversion"][0]["advertiserId"],
            account.advertiser_id.to_string()
        );
    }

    #[tokio::test]
    async fn an_empty_batch_is_400() {
        let (status, error) = send(&app(), &[]).await;
        assert_eq!(status, StatusCode::BAD_REQUEST);
        assert!(
            message(&error).contains("Empty batch encountered."),
            "{error}"
        );
    }
}

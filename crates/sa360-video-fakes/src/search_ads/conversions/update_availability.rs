//! `conversion.updateAvailability` (`POST /conversion/updateAvailability`).

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::Response;
use bytes::Bytes;
use serde::Serialize;
use serde_json::Value;

use super::batch::{Detail, batch_failure, empty_batch};
use super::checks::{check_segmentation, owner_of};
use super::parse::{Item, parse_batch};
use crate::errors::json_response;
use crate::search_ads::ledger::Counters;
use crate::search_ads::record::Schema;
use crate::search_ads::state::AppState;

#[derive(Serialize)]
struct AvailabilityEcho<'a> {
    availabilities: &'a [Value],
}

/// `POST /conversion/updateAvailability`. All or nothing: any invalid availability rejects the
/// request (the real service documents nothing here).
pub(crate) async fn update_availability(State(app): State<AppState>, body: Bytes) -> Response {
    Counters::bump(&app.shared.counters.availability_requests);
    let items = match parse_batch(&body, "availabilities", Schema::Availability) {
        Ok(items) => items,
        Err(response) => return response,
    };
    if items.is_empty() {
        return empty_batch();
    }
    let mut details = Vec::new();
    let mut accepted = Vec::with_capacity(items.len());
    for (index, item) in items.into_iter().enumerate() {
        match check_availability(&app, item) {
            Ok(v) => accepted.push(v),
            Err(detail) => details.push((index, detail)),
        }
    }
    if !details.is_empty() {
        return batch_failure(&details, "availability", None);
    }
    app.shared
        .store()
        .availabilities
        .extend(accepted.iter().cloned());
    json_response(
        StatusCode::OK,
        &AvailabilityEcho {
            availabilities: &accepted,
        },
    )
}

fn check_availability(app: &AppState, item: Item) -> Result<Value, Detail> {
    let map = item?;
    for required in [
        "agencyId",
        "advertiserId",
        "availabilityTimestamp",
        "segmentationType",
    ] {
        if !map.contains(required) {
            return Err(Detail::invalid(required));
        }
    }
    owner_of(app, &map)?;
    check_segmentation(app, &map)?;
    Ok(map.to_value())
}

#[cfg(test)]
mod tests {
    use axum::extract::State;
    use axum::http::StatusCode;
    use serde_json::{Value, json};

    use super::update_availability;
    use crate::search_ads::conversions::tests::{answer, app, body, counts, ledger, message};
    use crate::search_ads::state::AppState;

    fn availability(app: &AppState) -> Value {
        let account = &app.config.accounts[0];
        json!({
            "agencyId": account.agency_id.to_string(),
            "advertiserId": account.advertiser_id,
            "availabilityTimestamp": "1717200000000",
            "segmentationType": "FLOODLIGHT",
            "segmentationName": "Sign-up",
        })
    }

    async fn send(app: &AppState, items: &[Value]) -> (StatusCode, Value) {
        let request = json!({ "availabilities": items });
        answer(update_availability(State(app.clone()), body(&request)).await).await
    }

    #[tokio::test]
    async fn stores_and_echoes_valid_availabilities() {
        let app = app();
        let (status, echo) = send(&app, &[availability(&app)]).await;
        assert_eq!(status, StatusCode::OK, "{echo}");
        let stored = ledger(&app).availabilities();
        assert_eq!(stored.len(), 1);
        assert_eq!(
            stored[0]["advertiserId"], "21700000012345",
            "int64 values as strings"
        );
        assert_eq!(echo["availabilities"][0], stored[0]);
        assert_eq!(counts(&app).availability_requests, 1);
    }

    #[tokio::test]
    async fn one_invalid_availability_rejects_the_whole_request() {
        let app = app();
        let mut unknown_activity = availability(&app);
        unknown_activity["segmentationName"] = json!("Nope");
        let mut no_time = availability(&app);
        no_time
            .as_object_mut()
            .map(|m| m.remove("availabilityTimestamp"));
        let (status, error) = send(&app, &[availability(&app), unknown_activity, no_time]).await;
        assert_eq!(status, StatusCode::BAD_REQUEST);
        let text = message(&error);
        assert!(
            text.contains("Floodlight activity 'Nope' is not found for availability index=1"),
            "{text}"
        );
        assert!(
            text.contains("availabilityTimestamp for availability index=2"),
            "{text}"
        );
        assert!(ledger(&app).availabilities().is_empty(), "all or nothing");
    }

    #[tokio::test]
    async fn an_unknown_field_fails_the_request_as_googles_parser_does() {
        let app = app();
        let mut item = availability(&app);
        item["conversionId"] = json!("x");
        let (status, error) = send(&app, &[item]).await;
        assert_eq!(status, StatusCode::BAD_REQUEST);
        assert!(
            message(&error).contains("Unknown name \"conversionId\" at 'availabilities[0]'"),
            "{error}"
        );
    }
}

//! `conversion.get`: one engine account's conversions, by agency, advertiser and engine account.

use std::collections::HashMap;

use axum::extract::{Path, Query, State};
use axum::response::Response;

use super::page::{parse_read_query, read_page};
use super::params::{forbidden, parse_path_id};
use crate::search_ads::ledger::Counters;
use crate::search_ads::state::AppState;

/// `GET .../agency/{agencyId}/advertiser/{advertiserId}/engine/{engineAccountId}/conversion`.
pub(crate) async fn get_conversions(
    State(app): State<AppState>,
    Path((agency, advertiser, engine)): Path<(String, String, String)>,
    Query(query): Query<HashMap<String, String>>,
) -> Response {
    Counters::bump(&app.shared.counters.read_requests);
    let (agency, advertiser, engine) = match (
        parse_path_id("agencyId", &agency),
        parse_path_id("advertiserId", &advertiser),
        parse_path_id("engineAccountId", &engine),
    ) {
        (Ok(a), Ok(b), Ok(e)) => (a, b, e),
        (Err(r), _, _) | (_, Err(r), _) | (_, _, Err(r)) => return r,
    };
    let query = match parse_read_query(&query, &["customerId"]) {
        Ok(q) => q,
        Err(response) => return response,
    };
    let account = app.config.accounts.iter().position(|a| {
        a.engine_account_id == engine && a.advertiser_id == advertiser && a.agency_id == agency
    });
    let Some(a) = account else {
        return forbidden(&format!("engine account {engine}"));
    };
    read_page(&app, a, &query)
}

#[cfg(test)]
mod tests {
    use axum::extract::{Path, State};
    use axum::http::StatusCode;

    use super::get_conversions;
    use crate::search_ads::conversions::tests::{answer, app, counts, query, seeded};
    use crate::search_ads::state::AppState;

    async fn get(
        app: &AppState,
        path: (&str, &str, &str),
        q: &[(&str, &str)],
    ) -> (StatusCode, serde_json::Value) {
        let path = (path.0.to_owned(), path.1.to_owned(), path.2.to_owned());
        answer(get_conversions(State(app.clone()), Path(path), query(q)).await).await
    }

    const DAY_ONE: [(&str, &str); 4] = [
        ("startDate", "20240101"),
        ("endDate", "20240101"),
        ("startRow", "0"),
        ("rowCount", "3"),
    ];

    #[tokio::test]
    async fn reads_the_seeded_conversions_of_the_named_engine_account() {
        let app = app();
        let second = app.config.accounts[1].clone();
        let (status, body) = get(
            &app,
            (
                &second.agency_id.to_string(),
                &second.advertiser_id.to_string(),
                &second.engine_account_id.to_string(),
            ),
            &DAY_ONE,
        )
        .await;
        assert_eq!(status, StatusCode::OK, "{body}");
        assert_eq!(body["kind"], "doubleclicksearch#conversionList");
        let rows = body["conversion"].as_array().cloned().unwrap_or_default();
        let expected: Vec<_> = (0..3).map(|i| seeded(&app, 1, i)).collect();
        assert_eq!(rows, expected);
        assert_eq!(counts(&app).read_requests, 1);
    }

    #[tokio::test]
    async fn an_engine_account_of_another_advertiser_is_403() {
        let app = app();
        let account = app.config.accounts[0].clone();
        let (status, body) = get(
            &app,
            (
                &account.agency_id.to_string(),
                "1",
                &account.engine_account_id.to_string(),
            ),
            &DAY_ONE,
        )
        .await;
        assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
        assert_eq!(
            body["error"]["errors"][0]["reason"],
            "insufficientPermissions"
        );
    }

    #[tokio::test]
    async fn a_path_id_that_is_not_an_integer_is_400_naming_it() {
        let app = app();
        let (status, body) = get(&app, ("1", "2", "three"), &DAY_ONE).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
        assert_eq!(body["error"]["errors"][0]["location"], "engineAccountId");
    }
}

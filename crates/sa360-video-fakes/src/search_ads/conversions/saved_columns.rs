//! `savedColumns.list` (`GET .../agency/{agencyId}/advertiser/{advertiserId}/savedcolumns`).

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::Response;
use serde::Serialize;

use super::params::{forbidden, parse_path_id};
use crate::errors::json_response;
use crate::search_ads::ledger::Counters;
use crate::search_ads::state::AppState;

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct SavedColumnOut<'a> {
    kind: &'static str,
    saved_column_name: &'a str,
    #[serde(rename = "type")]
    column_type: &'a str,
}

#[derive(Serialize)]
struct SavedColumnListOut<'a> {
    kind: &'static str,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    items: Vec<SavedColumnOut<'a>>,
}

/// `GET .../agency/{agencyId}/advertiser/{advertiserId}/savedcolumns`.
pub(crate) async fn saved_columns(
    State(app): State<AppState>,
    Path((agency, advertiser)): Path<(String, String)>,
) -> Response {
    Counters::bump(&app.shared.counters.saved_columns_requests);
    let (agency, advertiser) = match (
        parse_path_id("agencyId", &agency),
        parse_path_id("advertiserId", &advertiser),
    ) {
        (Ok(a), Ok(b)) => (a, b),
        (Err(r), _) | (_, Err(r)) => return r,
    };
    if !app.knows_advertiser(agency, advertiser) {
        return forbidden(&format!("advertiser {advertiser}"));
    }
    let items = app
        .config
        .saved_columns
        .iter()
        .map(|c| SavedColumnOut {
            kind: "doubleclicksearch#savedColumn",
            saved_column_name: &c.name,
            column_type: &c.column_type,
        })
        .collect();
    json_response(
        StatusCode::OK,
        &SavedColumnListOut {
            kind: "doubleclicksearch#savedColumnList",
            items,
        },
    )
}

#[cfg(test)]
mod tests {
    use axum::extract::{Path, State};
    use axum::http::StatusCode;
    use serde_json::Value;

    use super::saved_columns;
    use crate::search_ads::conversions::tests::{answer, app, counts};
    use crate::search_ads::state::AppState;

    async fn list(app: &AppState, agency: &str, advertiser: &str) -> (StatusCode, Value) {
        let path = Path((agency.to_owned(), advertiser.to_owned()));
        answer(saved_columns(State(app.clone()), path).await).await
    }

    #[tokio::test]
    async fn lists_the_configured_columns_of_a_known_advertiser() {
        let app = app();
        let account = app.config.accounts[0].clone();
        let (status, body) = list(
            &app,
            &account.agency_id.to_string(),
            &account.advertiser_id.to_string(),
        )
        .await;
        assert_eq!(status, StatusCode::OK, "{body}");
        assert_eq!(body["kind"], "doubleclicksearch#savedColumnList");
        let names: Vec<_> = body["items"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|c| (c["savedColumnName"].clone(), c["type"].clone()))
            .collect();
        let expected: Vec<_> = app
            .config
            .saved_columns
            .iter()
            .map(|c| {
                (
                    Value::from(c.name.as_str()),
                    Value::from(c.column_type.as_str()),
                )
            })
            .collect();
        assert_eq!(names, expected);
        assert_eq!(counts(&app).saved_columns_requests, 1);
    }

    #[tokio::test]
    async fn an_unknown_advertiser_is_403_and_a_bad_id_400() {
        let app = app();
        let agency = app.config.accounts[0].agency_id.to_string();
        assert_eq!(list(&app, &agency, "12").await.0, StatusCode::FORBIDDEN);
        let (status, body) = list(&app, &agency, "twelve").await;
        assert_eq!(status, StatusCode::BAD_REQUEST);
        assert_eq!(body["error"]["errors"][0]["location"], "advertiserId");
    }
}

//! `conversion.getByCustomerId`: one account's conversions, by its customer ID in the new platform.

use std::collections::HashMap;

use axum::extract::{Path, Query, State};
use axum::response::Response;

use super::page::{parse_read_query, read_page};
use super::params::forbidden;
use crate::search_ads::ledger::Counters;
use crate::search_ads::state::AppState;

/// `GET .../customer/{customerId}/conversion`.
pub(crate) async fn get_by_customer_id(
    State(app): State<AppState>,
    Path(customer): Path<String>,
    Query(query): Query<HashMap<String, String>>,
) -> Response {
    Counters::bump(&app.shared.counters.read_requests);
    let query = match parse_read_query(&query, &["agencyId", "advertiserId", "engineAccountId"]) {
        Ok(q) => q,
        Err(response) => return response,
    };
    let Some(a) = app
        .config
        .accounts
        .iter()
        .position(|acc| acc.customer_id == customer)
    else {
        return forbidden(&format!("customer {customer}"));
    };
    read_page(&app, a, &query)
}

#[cfg(test)]
mod tests {
    use axum::extract::{Path, State};
    use axum::http::StatusCode;
    use serde_json::Value;

    use super::get_by_customer_id;
    use crate::search_ads::conversions::tests::{answer, app, counts, query, seeded};
    use crate::search_ads::state::AppState;

    async fn get(app: &AppState, customer: &str, extra: &[(&str, &str)]) -> (StatusCode, Value) {
        let mut q = vec![
            ("startDate", "20240101"),
            ("endDate", "20240101"),
            ("startRow", "0"),
            ("rowCount", "2"),
        ];
        q.extend_from_slice(extra);
        answer(get_by_customer_id(State(app.clone()), Path(customer.to_owned()), query(&q)).await)
            .await
    }

    #[tokio::test]
    async fn reads_the_conversions_of_the_account_with_that_customer_id() {
        let app = app();
        let customer = app.config.accounts[1].customer_id.clone();
        let (status, body) = get(&app, &customer, &[]).await;
        assert_eq!(status, StatusCode::OK, "{body}");
        assert_eq!(
            body["conversion"],
            Value::Array(vec![seeded(&app, 1, 0), seeded(&app, 1, 1)])
        );
        assert_eq!(counts(&app).read_requests, 1);
    }

    #[tokio::test]
    async fn an_unknown_customer_is_403() {
        let (status, body) = get(&app(), "1999999999", &[]).await;
        assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
    }

    #[tokio::test]
    async fn account_filters_compare_ids_as_numbers() {
        let app = app();
        let customer = app.config.accounts[1].customer_id.clone();
        let own = format!("0{}", app.config.accounts[1].engine_account_id);
        let other = app.config.accounts[0].engine_account_id.to_string();
        let (_, same) = get(&app, &customer, &[("engineAccountId", &own)]).await;
        assert_eq!(
            same["conversion"].as_array().map(Vec::len),
            Some(2),
            "{same}"
        );
        let (status, none) = get(&app, &customer, &[("engineAccountId", &other)]).await;
        assert_eq!(status, StatusCode::OK);
        assert_eq!(
            none.get("conversion"),
            None,
            "an empty list is omitted: {none}"
        );
        let (status, bad) = get(&app, &customer, &[("advertiserId", "x1")]).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{bad}");
    }
}

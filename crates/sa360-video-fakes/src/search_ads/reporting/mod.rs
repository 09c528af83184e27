//! The Search Ads 360 Reporting API (v0) side of the search ads fake.
//!
//! Routes (relative to the origin, SR-1): `POST /v0/customers/{customerId}/searchAds360:search`,
//! `POST /v0/customers/{customerId}/searchAds360:searchStream` (every page of `search` in one
//! answer, [`stream`], SR-33),
//! `GET /v0/customers:listAccessibleCustomers`, `GET /v0/customers/{customerId}/customColumns`,
//! `GET /v0/searchAds360Fields/{name}`, `POST /v0/searchAds360Fields:search`; the same bearer
//! tokens as v2 (SR-7). `search` reads the v2 fake's conversions (seeded and stored) with the new
//! IDs of the ID-mapping file (SR-12), parses the query language of [`query`] (SR-16), checks
//! `login-customer-id` (SR-8) and the event-level window on the fake's clock, pages with tokens that
//! expire (SR-11) and injects [`ReportingFaults`](super::ReportingFaults). Errors are
//! `google.rpc.Status` envelopes with a `SearchAds360Failure` detail (SR-6).

pub(crate) mod entities;
mod failure;
mod fields;
pub(crate) mod query;
mod row;
pub(crate) mod rows;
mod sorted;
pub(crate) mod state;
pub(crate) mod stream;

use std::time::Duration;

use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use chrono::NaiveDate;
use serde_json::{Value, json};

use self::entities::cells::Sums;
pub use self::failure::FAILURE_TYPE;
use self::failure::Failure;
use self::query::{ConversionQuery, QueryError};
use self::state::{PageToken, ReportingState};
use super::ledger::Counters;
use super::state::AppState;
use crate::errors::{bytes_response, json_response};
use crate::util::hex_token;

/// Most page tokens kept at once; the oldest are dropped beyond it (a memory bound of the fake,
/// SA-24: Google documents no lifetime or count, SR-11).
const MAX_TOKENS: usize = 100_000;
/// Largest request body a search accepts (the fake's bound, SA-24; Google documents
/// `REQUEST_SIZE_LIMIT_EXCEEDED` without a figure).
pub(crate) const MAX_BODY: usize = 1024 * 1024;
/// Most rows of a `search` page (SR-11) and of a `searchStream` batch (SR-33 b).
const MAX_PAGE: usize = 10_000;

fn google_duration(d: Duration) -> String {
    let nanos = d.subsec_nanos();
    if nanos == 0 {
        format!("{}s", d.as_secs())
    } else {
        let frac = format!("{nanos:09}");
        format!("{}.{}s", d.as_secs(), frac.trim_end_matches('0'))
    }
}

/// The account number of a client customer, after the `login-customer-id` rule (SR-8).
fn authorize_customer(
    app: &AppState,
    customer: &str,
    headers: &HeaderMap,
) -> Result<Option<usize>, Failure> {
    let reporting = &app.config.reporting;
    // Customer ids are digits without dashes (LCI; discovery's requestError.INVALID_CUSTOMER_ID).
    if customer.is_empty() || !customer.bytes().all(|b| b.is_ascii_digit()) {
        return Err(Failure::new(
            StatusCode::BAD_REQUEST,
            "requestError",
            "INVALID_CUSTOMER_ID",
            format!("Invalid customer ID '{customer}': ten digits without dashes."),
        ));
    }
    let account = app
        .config
        .accounts
        .iter()
        .position(|a| a.customer_id == customer);
    let is_manager = customer == reporting.manager_customer_id;
    if account.is_none() && !is_manager {
        return Err(Failure::new(
            StatusCode::FORBIDDEN,
            "authorizationError",
            "USER_PERMISSION_DENIED",
            format!("The caller does not have permission to access customer {customer}."),
        ));
    }
    let login = headers
        .get("login-customer-id")
        .map(|v| v.to_str().unwrap_or("\u{fffd}").to_owned());
    match login {
        None => {
            if !reporting.direct_customer_ids.iter().any(|c| c == customer) {
                return Err(Failure::new(
                    StatusCode::FORBIDDEN,
                    "authorizationError",
                    "USER_PERMISSION_DENIED",
                    format!(
                        "User doesn't have permission to access customer {customer}. Note: If you're accessing a client customer, the manager's customer id must be set in the 'login-customer-id' header."
                    ),
                ));
            }
        }
        Some(login) => {
            if login.len() != 10 || !login.bytes().all(|b| b.is_ascii_digit()) {
                return Err(Failure::new(
                    StatusCode::BAD_REQUEST,
                    "headerError",
                    "INVALID_LOGIN_CUSTOMER_ID",
                    "The login-customer-id header is not a valid customer ID (ten digits, no dashes).",
                ));
            }
            let direct = reporting.direct_customer_ids.contains(&login);
            let above = login == reporting.manager_customer_id || login == customer;
            if !direct || !above {
                return Err(Failure::new(
                    StatusCode::FORBIDDEN,
                    "authorizationError",
                    "INVALID_LOGIN_CUSTOMER_ID_SERVING_CUSTOMER_ID_COMBINATION",
                    format!("Customer {login} cannot serve customer {customer}."),
                ));
            }
        }
    }
    Ok(account)
}

/// `POST /v0/customers/{customerId}/searchAds360:search`.
pub(crate) async fn search(
    State(app): State<AppState>,
    Path(customer): Path<String>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    match search_inner(&app, &customer, &headers, &body) {
        Ok(response) => response,
        Err(failure) => failure.into_response(&app),
    }
}

fn invalid_payload(what: impl std::fmt::Display) -> Failure {
    Failure::new(
        StatusCode::BAD_REQUEST,
        "requestError",
        "REQUIRED_FIELD_MISSING",
        format!("Invalid JSON payload received: {what}"),
    )
}

/// The request's JSON and its non-empty `query` (both methods, SR-15, SR-33 e), with its
/// `summaryRowSetting` read as Google's JSON mapping reads an enum: a name or a number of it, or
/// refused (SR-33 b).
fn read_request(body: &[u8]) -> Result<(Value, String, &'static str), Failure> {
    const SETTINGS: [&str; 5] = [
        "UNSPECIFIED",
        "UNKNOWN",
        "NO_SUMMARY_ROW",
        "SUMMARY_ROW_WITH_RESULTS",
        "SUMMARY_ROW_ONLY",
    ];
    let request: Value = serde_json::from_slice(body).map_err(invalid_payload)?;
    let summary = match request.get("summaryRowSetting") {
        None | Some(Value::Null) => Some(SETTINGS[0]),
        Some(Value::String(name)) => SETTINGS.into_iter().find(|s| s == name),
        Some(v) => v.as_u64().and_then(|n| SETTINGS.get(n as usize).copied()),
    }
    .ok_or_else(|| invalid_payload("Invalid value at 'summary_row_setting'"))?;
    let text = request.get("query").and_then(Value::as_str).unwrap_or("");
    if text.trim().is_empty() {
        return Err(Failure::new(
            StatusCode::BAD_REQUEST,
            "requestError",
            "REQUIRED_FIELD_MISSING",
            "The query is required.",
        ));
    }
    let text = text.to_owned();
    Ok((request, text, summary))
}

/// The injected quota fault, drawn once per request; the draw decides the other faults too.
fn quota_fault(app: &AppState) -> Result<f64, Failure> {
    let faults = &app.config.reporting.faults;
    let draw = ReportingState::lock(&app.reporting.faults_rng).f64();
    if draw < faults.quota_exhausted {
        Counters::bump(&app.shared.counters.reporting_quota_faults);
        let mut f = Failure::new(
            StatusCode::TOO_MANY_REQUESTS,
            "quotaError",
            "RESOURCE_EXHAUSTED",
            "Too many requests. Retry in the retry delay.",
        );
        f.details = Some(json!({"quotaErrorDetails": {
            "rateScope": "ACCOUNT",
            "rateName": "Search requests per minute",
            "retryDelay": google_duration(faults.retry_delay),
        }}));
        return Err(f);
    }
    Ok(draw)
}

/// The parsed and checked query, its date range cut to what the fake serves.
fn checked_query(
    app: &AppState,
    account: Option<usize>,
    text: &str,
) -> Result<ConversionQuery, Failure> {
    // "Today" in the account's time zone: the fake's customers are all UTC (customer.time_zone).
    let (today, first) = rows::window(app);
    let mut query = query::parse(text, today).map_err(Failure::query)?;
    let event_level = query.from == query::catalogue::SERVED_RESOURCE;
    if !event_level && account.is_none() && query.select.iter().any(|f| f.starts_with("metrics.")) {
        // Discovery's queryError.REQUESTED_METRICS_FOR_MANAGER: query each client account.
        return Err(Failure::query(QueryError::new(
            "REQUESTED_METRICS_FOR_MANAGER",
            "Metrics cannot be requested for a manager account; query each client account.",
        )));
    }
    // Event-level rows cover the last `window_days` days (EL, SR-11); a filter that starts
    // earlier is dateError.EARLIER_THAN_MINIMUM_DATE. Without a lower bound the window's first day
    // is the start; without an upper bound, today.
    if let Some(start) = query.bounds.start
        && start < first
        && event_level
    {
        return Err(Failure::new(
            StatusCode::BAD_REQUEST,
            "dateError",
            "EARLIER_THAN_MINIMUM_DATE",
            format!(
                "Conversion data is available for the last {} days only: segments.date must be on or after {first} (today is {today}).",
                app.config.reporting.window_days
            ),
        ));
    }
    // Other resources' metrics cover the window's days only (the fake holds no conversions
    // before it, SR-22), so their range is cut to it.
    query.start =
        query
            .bounds
            .start
            .unwrap_or(first)
            .max(if event_level { NaiveDate::MIN } else { first });
    query.end = query.bounds.end.unwrap_or(today).min(today);
    Ok(query)
}

/// Where a query starts: its first page.
fn first_page(app: &AppState, customer: &str, text: &str, total_requested: bool) -> PageToken {
    PageToken {
        customer: customer.to_owned(),
        query: text.to_owned(),
        cursor: (i64::MIN, i64::MIN),
        entity: None,
        emitted: 0,
        expires: app.clock.now(),
        total_requested,
    }
}

fn search_inner(
    app: &AppState,
    customer: &str,
    headers: &HeaderMap,
    body: &[u8],
) -> Result<Response, Failure> {
    Counters::bump(&app.shared.counters.reporting_search_requests);
    let account = authorize_customer(app, customer, headers)?;
    // The fake's pages carry no summary row (a limit of the fake, SR-33); the value is checked.
    let (request, text, _summary) = read_request(body)?;
    let page_size = match request.get("pageSize") {
        None | Some(Value::Null) => MAX_PAGE,
        Some(v) => v
            .as_i64()
            .filter(|n| (1..=MAX_PAGE as i64).contains(n))
            .ok_or_else(|| {
                Failure::new(
                    StatusCode::BAD_REQUEST,
                    "requestError",
                    "INVALID_PAGE_SIZE",
                    format!("Invalid page size {v}: 1 to 10,000."),
                )
            })? as usize,
    };
    let page_token = request
        .get("pageToken")
        .and_then(Value::as_str)
        .filter(|t| !t.is_empty());
    let total_requested = request
        .get("returnTotalResultsCount")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    let validate_only = request
        .get("validateOnly")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    if validate_only && page_token.is_some() {
        return Err(Failure::new(
            StatusCode::BAD_REQUEST,
            "requestError",
            "VALIDATE_ONLY_REQUEST_HAS_PAGE_TOKEN",
            "A validate-only request cannot carry a page token.",
        ));
    }
    // Injected faults, before any work.
    let draw = quota_fault(app)?;
    if let Some(token) = page_token
        && draw
            < app.config.reporting.faults.quota_exhausted
                + app.config.reporting.faults.expired_page_token
    {
        ReportingState::lock(&app.reporting.tokens).remove(token);
        Counters::bump(&app.shared.counters.reporting_expired_token_faults);
        return Err(expired());
    }
    let query = checked_query(app, account, &text)?;
    let state = match page_token {
        None => first_page(app, customer, &text, total_requested),
        Some(token) => {
            let found = ReportingState::lock(&app.reporting.tokens)
                .get(token)
                .cloned();
            let Some(state) = found else {
                return Err(Failure::new(
                    StatusCode::BAD_REQUEST,
                    "requestError",
                    "INVALID_PAGE_TOKEN",
                    "The page token is not valid.",
                ));
            };
            if app.clock.now() >= state.expires {
                ReportingState::lock(&app.reporting.tokens).remove(token);
                return Err(expired());
            }
            // PG: a page token continues the same query ("keep resending the same query").
            if state.customer != customer || state.query != text {
                return Err(Failure::new(
                    StatusCode::BAD_REQUEST,
                    "requestError",
                    "INVALID_PAGE_TOKEN",
                    "The page token belongs to another query or customer.",
                ));
            }
            if total_requested && !state.total_requested {
                return Err(Failure::new(
                    StatusCode::BAD_REQUEST,
                    "requestError",
                    "TOTAL_RESULTS_COUNT_NOT_ORIGINALLY_REQUESTED",
                    "Ask for the total results count on the first page.",
                ));
            }
            state
        }
    };
    let response = json!({"fieldMask": row::field_mask(&query.select)});
    if validate_only {
        return Ok(json_response(StatusCode::OK, &response));
    }
    let page = page(app, account, &query, state, page_size, response, true)?;
    Ok(bytes_response(StatusCode::OK, page.body))
}

/// One page of a query, written: `search`'s answer, or one batch of `searchStream`'s (SR-33).
struct Page {
    body: Vec<u8>,
    /// Where the next page starts, if one follows.
    next: Option<PageToken>,
    /// The metrics of the page's rows (for the summary row, SR-33 c).
    sums: Sums,
}

/// The next page of `query` from `state`, at most `page_size` rows (and the LIMIT), its members
/// those of `head` with `results` added; with `issue_token`, `nextPageToken` too (`search`).
fn page(
    app: &AppState,
    account: Option<usize>,
    query: &ConversionQuery,
    state: PageToken,
    page_size: usize,
    mut response: Value,
    issue_token: bool,
) -> Result<Page, Failure> {
    let remaining = query
        .limit
        .map_or(u64::MAX, |l| l.saturating_sub(state.emitted));
    let want = (page_size as u64).min(remaining) as usize;
    if query.from != query::catalogue::SERVED_RESOURCE {
        return entity_page(app, account, query, state, want, response, issue_token);
    }
    let total_requested = state.total_requested;
    let cursor = (state.emitted > 0).then_some(state.cursor);
    let found = match account {
        None => Vec::new(), // the manager holds no conversions
        Some(_) if query.start > query.end => Vec::new(),
        Some(a) if query.natural_order() => rows::rows_after(app, a, query, cursor, want + 1),
        Some(a) => sorted::page(app, a, query, state.emitted, want + 1)?,
    };
    let more =
        found.len() > want && (state.emitted + want as u64) < query.limit.unwrap_or(u64::MAX);
    let rows: Vec<_> = found.into_iter().take(want).collect();
    if total_requested && let Some(a) = account {
        response["totalResultsCount"] = json!(count(app, a, query).to_string());
    }
    let next = match rows.last() {
        Some(last) if more => Some(PageToken {
            cursor: last.key,
            emitted: state.emitted + rows.len() as u64,
            ..state
        }),
        _ => None,
    };
    if issue_token && let Some(next) = &next {
        response["nextPageToken"] = json!(self::issue_token(app, next.clone()));
    }
    Counters::bump(&app.shared.counters.reporting_pages);
    // Conversions have no metrics (SR-16 b): their summary row is empty.
    let sums = Sums::default();
    let (Some(a), false) = (account, rows.is_empty()) else {
        return Ok(Page {
            body: to_json(&response)?,
            next,
            sums,
        });
    };
    // The rows are written straight from the typed page (no `Value` per row).
    let selection = row::Selection::new(&query.select);
    let cells = row::AccountCells {
        account: &app.config.accounts[a],
        manager_id: &app.config.reporting.manager_customer_id,
    };
    let body = WithResults {
        head: &response,
        results: selection.page(cells, &rows),
    };
    Ok(Page {
        body: to_json(&body)?,
        next,
        sums,
    })
}

fn to_json<T: serde::Serialize>(value: &T) -> Result<Vec<u8>, Failure> {
    serde_json::to_vec(value).map_err(|e| {
        Failure::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            "internalError",
            "INTERNAL_ERROR",
            format!("The page could not be written: {e}"),
        )
    })
}

/// Stores `next` (expiring after the configured lifetime) and returns its new token.
fn issue_token(app: &AppState, next: PageToken) -> String {
    let token = {
        let mut rng = ReportingState::lock(&app.reporting.rng);
        format!("pt{}", hex_token(&mut rng, 16))
    };
    let next = PageToken {
        expires: app.clock.now() + app.config.reporting.page_token_lifetime,
        ..next
    };
    let mut tokens = ReportingState::lock(&app.reporting.tokens);
    if tokens.len() >= MAX_TOKENS {
        let now = app.clock.now();
        tokens.retain(|_, t| t.expires > now);
        if tokens.len() >= MAX_TOKENS {
            tokens.clear();
        }
    }
    tokens.insert(token.clone(), next);
    token
}

/// One page of a query of a resource other than `conversion` (SR-22 g). A `FROM customer |
/// campaign | ad_group` query in its rows' own order (no ORDER BY) has its page computed from
/// where the last one ended, entity by entity ([`entities::Report`]); with an ORDER BY every row is
/// computed (at most [`sorted::MAX_SORTED_ROWS`], as for conversions, SR-16) and the page is the
/// slice after the rows already sent. Every other resource's rows are all computed (at most ad
/// groups × children × days × devices of them, or one visit per conversion up to
/// [`sorted::MAX_SORTED_ROWS`], SR-22) and the page is the slice after the rows already sent.
fn entity_page(
    app: &AppState,
    account: Option<usize>,
    query: &ConversionQuery,
    state: PageToken,
    want: usize,
    mut response: Value,
    issue_token: bool,
) -> Result<Page, Failure> {
    let Some(a) = account else {
        // The manager has no campaigns of its own.
        if state.total_requested {
            response["totalResultsCount"] = json!("0");
        }
        Counters::bump(&app.shared.counters.reporting_pages);
        let (body, next, sums) = (to_json(&response)?, None, Sums::default());
        return Ok(Page { body, next, sums });
    };
    let skip = usize::try_from(state.emitted).unwrap_or(usize::MAX);
    // The rows of a page, where the next page starts if one follows (`Some(None)`: after the
    // rows already sent), and the number of rows when it was asked for.
    let slice = |rows: Vec<entities::EntityRow>| {
        let more = rows.len().saturating_sub(skip) > want;
        let total = rows.len() as u64;
        let page: Vec<_> = rows.into_iter().skip(skip).take(want).collect();
        (page, more.then_some(None), Some(total))
    };
    let report = entities::Report::served(query.from).then(|| entities::Report::new(app, a, query));
    let (page, next, total) = match &report {
        Some(report) if query.order.is_empty() => {
            let from = if state.emitted > 0 {
                state.entity
            } else {
                None
            };
            let (page, next) = report.page(from, want);
            let total = state.total_requested.then(|| report.count());
            (page, next.map(Some), total)
        }
        Some(report) => slice(report.sorted(sorted::MAX_SORTED_ROWS).ok_or_else(|| {
            Failure::new(
                StatusCode::BAD_REQUEST,
                "sizeLimitError",
                "RESPONSE_SIZE_LIMIT_EXCEEDED",
                format!(
                    "This ORDER BY sorts more than {} rows; narrow the date range or drop the ORDER BY.",
                    sorted::MAX_SORTED_ROWS
                ),
            )
        })?),
        None => slice(entities::rows(app, a, query)?),
    };
    if state.total_requested
        && let Some(total) = total
    {
        response["totalResultsCount"] = json!(total.to_string());
    }
    let sent = state.emitted + page.len() as u64;
    let next = match next {
        Some(entity) if sent < query.limit.unwrap_or(u64::MAX) && !page.is_empty() => {
            Some(PageToken {
                emitted: sent,
                entity,
                ..state
            })
        }
        _ => None,
    };
    if issue_token && let Some(next) = &next {
        response["nextPageToken"] = json!(self::issue_token(app, next.clone()));
    }
    let mut sums = Sums::default();
    for row in &page {
        sums.add(row.sums);
    }
    Counters::bump(&app.shared.counters.reporting_pages);
    // The rows are written straight from their values (no `Value` per row).
    let own;
    let account = match &report {
        Some(report) => report.account(),
        None => {
            own = entities::Account::new(app, a, query.from);
            &own
        }
    };
    let body = entities::json::EntityPage::new(&response, account, query, &page);
    Ok(Page {
        body: to_json(&body)?,
        next,
        sums,
    })
}

/// A response object (`fieldMask`, `nextPageToken`, `totalResultsCount`) with `results` added.
struct WithResults<'p> {
    head: &'p Value,
    results: row::Page<'p>,
}

impl serde::Serialize for WithResults<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = s.serialize_map(None)?;
        if let Value::Object(head) = self.head {
            for (k, v) in head {
                map.serialize_entry(k, v)?;
            }
        }
        map.serialize_entry("results", &self.results)?;
        map.end()
    }
}

fn count(app: &AppState, a: usize, query: &ConversionQuery) -> u64 {
    if query.start > query.end {
        return 0;
    }
    let mut n = 0u64;
    let mut cursor = None;
    loop {
        let rows = rows::rows_after(app, a, query, cursor, 10_000);
        n += rows.len() as u64;
        match rows.last() {
            Some(last) if rows.len() == 10_000 => cursor = Some(last.key),
            _ => return n,
        }
    }
}

fn expired() -> Failure {
    Failure::new(
        StatusCode::BAD_REQUEST,
        "requestError",
        "EXPIRED_PAGE_TOKEN",
        "The page token has expired; run the query again from the first page.",
    )
}

/// `GET /v0/customers:listAccessibleCustomers`.
pub(crate) async fn list_accessible_customers(State(app): State<AppState>) -> Response {
    Counters::bump(&app.shared.counters.reporting_other_requests);
    let names: Vec<String> = app
        .config
        .reporting
        .direct_customer_ids
        .iter()
        .map(|c| format!("customers/{c}"))
        .collect();
    json_response(StatusCode::OK, &json!({"resourceNames": names}))
}

/// `GET /v0/customers/{customerId}/customColumns`.
pub(crate) async fn custom_columns(
    State(app): State<AppState>,
    Path(customer): Path<String>,
    headers: HeaderMap,
) -> Response {
    Counters::bump(&app.shared.counters.reporting_other_requests);
    if let Err(f) = authorize_customer(&app, &customer, &headers) {
        return f.into_response(&app);
    }
    let columns: Vec<Value> = app
        .config
        .saved_columns
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let id = 1000 + i as i64;
            let value_type = match c.column_type.as_str() {
                "double" => "DOUBLE",
                "integer" => "INT64",
                "string" => "STRING",
                "boolean" => "BOOLEAN",
                _ => "UNKNOWN",
            };
            json!({
                "resourceName": format!("customers/{customer}/customColumns/{id}"),
                "id": id.to_string(),
                "name": c.name,
                "valueType": value_type,
                "queryable": true,
                "referencesAttributes": false,
                "referencesMetrics": false,
            })
        })
        .collect();
    json_response(StatusCode::OK, &json!({"customColumns": columns}))
}

pub(crate) use fields::{fields_get, fields_search};
pub(crate) use rows::window;

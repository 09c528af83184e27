//! `reports.getIdMappingFile`: a deterministic CSV generated row by row while it streams.
//!
//! The file starts with the header `Entity Type,Legacy IDs,New IDs`; each row maps the legacy IDs of
//! one entity (a JSON object with string values, CSV-quoted with inner quotes doubled) to its new
//! IDs (SA-11). The first rows are one `CUSTOMER` row per engine account of the advertiser; then
//! campaigns follow, each as one `CAMPAIGN` row, four `AD_GROUP` rows and sixteen `CRITERION` rows.
//! Generated IDs have fixed widths, so every row's length is known in advance and the exact
//! `Content-Length` is computed without generating the file.
//!
//! The campaigns and ad groups that the seeded conversions use (`CAMPAIGNS` per account, `AD_GROUPS`
//! per campaign, see `data.rs`) are the first campaigns of the file with their legacy IDs, so the file
//! translates the conversions' IDs (the Reporting API fake reads the same conversions with the new
//! IDs the file gives, SR-12); the rest of the file is synthetic filler of the same widths.
//!
//! One file a job: `plan.rs` (rows and lengths), `stream.rs` (the body), `range.rs` (range
//! requests); this file is the handler and its answers.

pub(super) mod plan;
mod range;
mod stream;

use std::collections::HashMap;

use axum::Extension;
use axum::body::Body;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::Response;

use crate::errors::{GoogleErrorItem, google_error, google_simple, json_response};
use crate::faults::{CsvTruncation, CsvTruncationApplied, CutStream, Truncation};
use crate::search_ads::conversions::forbidden;
use crate::search_ads::ledger::Counters;
use crate::search_ads::state::AppState;
use crate::util::mix;

use self::plan::IdMappingPlan;
use self::range::{RangeAnswer, requested_range};
use self::stream::CsvStream;

/// `GET .../agency/{agencyId}/advertiser/{advertiserId}/idmapping`.
pub(crate) async fn id_mapping(
    State(app): State<AppState>,
    Path((agency, advertiser)): Path<(String, String)>,
    Query(query): Query<HashMap<String, String>>,
    headers: HeaderMap,
    truncation: Option<Extension<CsvTruncation>>,
) -> Response {
    let (Ok(agency_id), Ok(advertiser_id)) = (agency.parse::<i64>(), advertiser.parse::<i64>())
    else {
        let message = format!("Invalid agencyId '{agency}' or advertiserId '{advertiser}'");
        return google_error(
            StatusCode::BAD_REQUEST,
            &message,
            &[GoogleErrorItem::new("requestValidation", message.clone())],
        );
    };
    let Some(plan) = app.id_mapping_plan(agency_id, advertiser_id) else {
        return forbidden(&format!("advertiser {advertiser_id}"));
    };
    match query.get("alt").map(String::as_str) {
        Some("media") => {}
        None | Some("json") => {
            return json_response(StatusCode::OK, &serde_json::json!({}));
        }
        Some(other) => {
            let message = format!("Invalid value '{other}' for parameter alt");
            return google_error(
                StatusCode::BAD_REQUEST,
                &message,
                &[GoogleErrorItem::new("requestValidation", message.clone())
                    .at("alt", "parameter")],
            );
        }
    }
    Counters::bump(&app.shared.counters.id_mapping_downloads);
    let total = plan.total_len();
    let rows = plan.rows();
    let etag = entity_tag(app.config.seed, agency_id, advertiser_id, rows, total);
    // Injected truncations apply to whole-file answers only.
    match requested_range(&headers, &etag, total) {
        RangeAnswer::Full => {}
        RangeAnswer::Partial { first, last } => {
            return partial_content(plan, &etag, first, last, total, agency_id, advertiser_id);
        }
        RangeAnswer::Unsatisfiable => return range_not_satisfiable(&etag, total),
    }
    let cut = truncation.and_then(|Extension(t)| {
        (rows > 0).then(|| {
            let row = ((rows as f64 * t.at) as u64).min(rows - 1);
            // 12 bytes into a row is inside its first quoted JSON cell.
            (t.truncation, plan.offset_of_row(row) + 12)
        })
    });
    let stream = CsvStream::new(plan);
    let (body, length, applied) = match cut {
        None => (Body::from_stream(stream), Some(total), false),
        Some((Truncation::Abort, at)) => (
            Body::from_stream(CutStream::new(stream, at, true)),
            Some(total),
            true,
        ),
        Some((Truncation::CleanEof, at)) => (
            Body::from_stream(CutStream::new(stream, at, false)),
            None,
            true,
        ),
    };
    let mut response = Response::new(body);
    csv_headers(response.headers_mut(), &etag, agency_id, advertiser_id);
    if let Some(len) = length {
        response
            .headers_mut()
            .insert(header::CONTENT_LENGTH, HeaderValue::from(len));
    }
    if applied {
        response.extensions_mut().insert(CsvTruncationApplied);
    }
    response
}

/// The headers of every CSV answer: type, file name, validator, range support.
fn csv_headers(headers: &mut HeaderMap, etag: &str, agency_id: i64, advertiser_id: i64) {
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/csv; charset=UTF-8"),
    );
    if let Ok(v) = HeaderValue::from_str(&format!(
        "attachment; filename=\"idmapping-{agency_id}-{advertiser_id}.csv\""
    )) {
        headers.insert(header::CONTENT_DISPOSITION, v);
    }
    if let Ok(v) = HeaderValue::from_str(etag) {
        headers.insert(header::ETAG, v);
    }
    headers.insert(header::ACCEPT_RANGES, HeaderValue::from_static("bytes"));
}

/// A strong entity tag of one advertiser's file at its current size: the same bytes always get
/// the same tag, a different size (`set_id_mapping_size`) or seed a different one.
fn entity_tag(seed: u64, agency: i64, advertiser: i64, rows: u64, total: u64) -> String {
    let h = mix(seed ^ mix(agency as u64 ^ mix(advertiser as u64 ^ mix(rows))));
    format!("\"idm-{h:016x}-{total:x}\"")
}

/// 206 with bytes `first..=last` of the file.
fn partial_content(
    plan: IdMappingPlan,
    etag: &str,
    first: u64,
    last: u64,
    total: u64,
    agency_id: i64,
    advertiser_id: i64,
) -> Response {
    let mut response = Response::new(Body::from_stream(CsvStream::range(plan, first, last + 1)));
    *response.status_mut() = StatusCode::PARTIAL_CONTENT;
    let headers = response.headers_mut();
    csv_headers(headers, etag, agency_id, advertiser_id);
    headers.insert(header::CONTENT_LENGTH, HeaderValue::from(last - first + 1));
    if let Ok(v) = HeaderValue::from_str(&format!("bytes {first}-{last}/{total}")) {
        headers.insert(header::CONTENT_RANGE, v);
    }
    response
}

/// 416 with `Content-Range: bytes */<length>` and Google's error envelope.
fn range_not_satisfiable(etag: &str, total: u64) -> Response {
    let mut response = google_simple(
        StatusCode::RANGE_NOT_SATISFIABLE,
        "requestedRangeNotSatisfiable",
        &format!("The requested range is not satisfiable: the file has {total} bytes."),
    );
    let headers = response.headers_mut();
    if let Ok(v) = HeaderValue::from_str(&format!("bytes */{total}")) {
        headers.insert(header::CONTENT_RANGE, v);
    }
    if let Ok(v) = HeaderValue::from_str(etag) {
        headers.insert(header::ETAG, v);
    }
    response
}

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

use std::collections::HashMap;
use std::pin::Pin;
use std::task::{Context, Poll};

use axum::Extension;
use axum::body::Body;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::Response;
use bytes::Bytes;
use futures::Stream;

use super::AppState;
use super::config::{IdMappingSize, KnownAccount};
use super::conversions::forbidden;
use super::data;
use super::ledger::Counters;
use crate::errors::{GoogleErrorItem, google_error, google_simple, json_response};
use crate::faults::{CsvTruncation, CsvTruncationApplied, CutStream, Truncation};
use crate::util::mix;

/// The header line.
pub(crate) const HEADER: &[u8] = b"Entity Type,Legacy IDs,New IDs\n";
/// Rows per campaign block: 1 campaign, 4 ad groups, 16 criteria.
const BLOCK: u64 = 21;
const AD_GROUPS_PER_CAMPAIGN: u64 = 4;
const CRITERIA_PER_AD_GROUP: u64 = 4;
/// Generated IDs keep their widths up to this many campaigns.
const MAX_CAMPAIGNS: u64 = 10_000_000;
/// Bytes generated per body chunk.
const CHUNK: usize = 256 * 1024;

/// The ID-mapping file of one advertiser: its rows and their lengths.
#[derive(Clone, Debug)]
pub(crate) struct IdMappingPlan {
    agency: String,
    advertiser: String,
    accounts: Vec<KnownAccount>,
    /// Index in the configuration's account list of each of `accounts`.
    account_index: Vec<usize>,
    /// `data::id_offset` of the seed: legacy IDs of the seeded campaigns and ad groups.
    seeded_offset: i64,
    legacy_off: u64,
    new_off: u64,
    rows: u64,
    /// Length of the `CUSTOMER` rows, prefix sums.
    customer_prefix: Vec<u64>,
    /// Prefix sums of the lengths of one period of campaign rows (`BLOCK * accounts` rows).
    period_prefix: Vec<u64>,
}

fn push_u64(out: &mut Vec<u8>, mut n: u64) {
    let mut buf = [0u8; 20];
    let mut i = buf.len();
    loop {
        i -= 1;
        buf[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    out.extend_from_slice(&buf[i..]);
}

fn push_i64(out: &mut Vec<u8>, n: i64) {
    if n < 0 {
        out.push(b'-');
    }
    push_u64(out, n.unsigned_abs());
}

/// Writes `""name"":""` ... `""` pieces of a CSV-quoted JSON object.
struct Cell<'a> {
    out: &'a mut Vec<u8>,
    first: bool,
}

impl<'a> Cell<'a> {
    fn open(out: &'a mut Vec<u8>) -> Self {
        out.extend_from_slice(b"\"{");
        Self { out, first: true }
    }

    fn key(&mut self, name: &[u8]) -> &mut Vec<u8> {
        if !self.first {
            self.out.push(b',');
        }
        self.first = false;
        self.out.extend_from_slice(b"\"\"");
        self.out.extend_from_slice(name);
        self.out.extend_from_slice(b"\"\":\"\"");
        self.out
    }

    fn num(&mut self, name: &[u8], n: u64) {
        push_u64(self.key(name), n);
        self.out.extend_from_slice(b"\"\"");
    }

    fn int(&mut self, name: &[u8], n: i64) {
        push_i64(self.key(name), n);
        self.out.extend_from_slice(b"\"\"");
    }

    fn text(&mut self, name: &[u8], s: &str) {
        self.key(name).extend_from_slice(s.as_bytes());
        self.out.extend_from_slice(b"\"\"");
    }

    fn close(self) {
        self.out.extend_from_slice(b"}\"");
    }
}

impl IdMappingPlan {
    /// The plan of an advertiser, or `None` when the fake does not know it.
    pub(crate) fn new(
        seed: u64,
        accounts: &[KnownAccount],
        agency: i64,
        advertiser: i64,
        size: IdMappingSize,
    ) -> Option<Self> {
        let (account_index, accounts): (Vec<usize>, Vec<KnownAccount>) = accounts
            .iter()
            .enumerate()
            .filter(|(_, a)| a.agency_id == agency && a.advertiser_id == advertiser)
            .map(|(i, a)| (i, a.clone()))
            .unzip();
        if accounts.is_empty() {
            return None;
        }
        let h = mix(seed ^ mix(advertiser as u64));
        let mut plan = Self {
            agency: agency.to_string(),
            advertiser: advertiser.to_string(),
            accounts,
            account_index,
            seeded_offset: data::id_offset(seed),
            legacy_off: h % 100_000_000,
            new_off: (h >> 32) % 1000,
            rows: 0,
            customer_prefix: Vec::new(),
            period_prefix: Vec::new(),
        };
        let mut buf = Vec::new();
        let mut sum = 0;
        plan.customer_prefix.push(0);
        for r in 0..plan.accounts.len() as u64 {
            buf.clear();
            plan.write_row(r, &mut buf);
            sum += buf.len() as u64;
            plan.customer_prefix.push(sum);
        }
        let period = BLOCK * plan.accounts.len() as u64;
        let first = plan.accounts.len() as u64;
        sum = 0;
        plan.period_prefix.push(0);
        for j in 0..period {
            buf.clear();
            plan.write_row(first + j, &mut buf);
            sum += buf.len() as u64;
            plan.period_prefix.push(sum);
        }
        plan.rows = match size {
            IdMappingSize::Rows(rows) => rows.min(plan.max_rows()),
            IdMappingSize::Bytes(bytes) => plan.rows_fitting(bytes),
        };
        Some(plan)
    }

    fn max_rows(&self) -> u64 {
        self.accounts.len() as u64 + MAX_CAMPAIGNS * BLOCK
    }

    /// Legacy campaign ID of campaign number `campaign` of the file.
    fn legacy_campaign(&self, campaign: u64) -> i64 {
        let n_acc = self.accounts.len() as u64;
        let (p, c) = (campaign % n_acc, campaign / n_acc);
        if c < data::CAMPAIGNS {
            data::campaign_id(self.seeded_offset, self.account_index[p as usize], c)
        } else {
            (71_700_000_000_000_000 + self.legacy_off * 100_000_000 + campaign) as i64
        }
    }

    /// Legacy ad group ID of ad group `k` (0..4) of campaign number `campaign`.
    fn legacy_ad_group(&self, campaign: u64, k: u64) -> i64 {
        let n_acc = self.accounts.len() as u64;
        let (p, c) = (campaign % n_acc, campaign / n_acc);
        if c < data::CAMPAIGNS && k < data::AD_GROUPS {
            data::ad_group_id(self.seeded_offset, self.account_index[p as usize], c, k)
        } else {
            (58_700_000_000_000_000
                + self.legacy_off * 100_000_000
                + campaign * AD_GROUPS_PER_CAMPAIGN
                + k) as i64
        }
    }

    /// New campaign ID of campaign number `campaign` of the file.
    fn new_campaign(&self, campaign: u64) -> i64 {
        (10_000_000_000 + self.new_off * 10_000_000 + campaign) as i64
    }

    /// New ad group ID of ad group `k` of campaign number `campaign`.
    fn new_ad_group(&self, campaign: u64, k: u64) -> i64 {
        (100_000_000_000 + self.new_off * 100_000_000 + campaign * AD_GROUPS_PER_CAMPAIGN + k)
            as i64
    }

    /// The campaign number in the file of seeded campaign `c` of configured account `a`.
    fn seeded_campaign_number(&self, a: usize, c: u64) -> Option<u64> {
        let p = self.account_index.iter().position(|&i| i == a)? as u64;
        (c < data::CAMPAIGNS).then(|| c * self.accounts.len() as u64 + p)
    }

    /// The new (campaign, ad group) IDs of seeded campaign `c`, ad group `g` of configured account
    /// `a`, as the file's rows give them (whether or not the file is long enough to hold them).
    pub(crate) fn seeded_new_ids(&self, a: usize, c: u64, g: u64) -> Option<(i64, i64)> {
        let campaign = self.seeded_campaign_number(a, c)?;
        (g < data::AD_GROUPS).then(|| (self.new_campaign(campaign), self.new_ad_group(campaign, g)))
    }

    /// The seeded (campaign `c`) that new campaign ID `id` names for configured account `a`.
    pub(crate) fn seeded_campaign_of_new(&self, a: usize, id: i64) -> Option<u64> {
        (0..data::CAMPAIGNS).find(|&c| {
            self.seeded_campaign_number(a, c)
                .is_some_and(|n| self.new_campaign(n) == id)
        })
    }

    /// The seeded (campaign `c`, ad group `g`) that new ad group ID `id` names for account `a`.
    pub(crate) fn seeded_ad_group_of_new(&self, a: usize, id: i64) -> Option<(u64, u64)> {
        (0..data::CAMPAIGNS)
            .flat_map(|c| (0..data::AD_GROUPS).map(move |g| (c, g)))
            .find(|&(c, g)| {
                self.seeded_campaign_number(a, c)
                    .is_some_and(|n| self.new_ad_group(n, g) == id)
            })
    }

    /// Data rows of the file.
    pub(crate) fn rows(&self) -> u64 {
        self.rows
    }

    /// The byte offset where data row `r` starts (the header included before it).
    pub(crate) fn offset_of_row(&self, r: u64) -> u64 {
        let n_acc = self.accounts.len() as u64;
        let head = HEADER.len() as u64;
        if r <= n_acc {
            return head + self.customer_prefix[r as usize];
        }
        let j = r - n_acc;
        let period = BLOCK * n_acc;
        let full = j / period;
        let rest = j % period;
        let period_len = *self.period_prefix.last().unwrap_or(&0);
        head + self.customer_prefix[n_acc as usize]
            + full * period_len
            + self.period_prefix[rest as usize]
    }

    /// The exact length of the file in bytes.
    pub(crate) fn total_len(&self) -> u64 {
        self.offset_of_row(self.rows)
    }

    /// The largest row number whose start offset is at most `bytes`.
    fn rows_fitting(&self, bytes: u64) -> u64 {
        let (mut lo, mut hi) = (0, self.max_rows());
        while lo < hi {
            let mid = lo + (hi - lo).div_ceil(2);
            if self.offset_of_row(mid) <= bytes {
                lo = mid;
            } else {
                hi = mid - 1;
            }
        }
        lo
    }

    /// Appends data row `r` (with its newline) to `out`.
    pub(crate) fn write_row(&self, r: u64, out: &mut Vec<u8>) {
        let n_acc = self.accounts.len() as u64;
        if r < n_acc {
            let account = &self.accounts[r as usize];
            out.extend_from_slice(b"CUSTOMER,");
            let mut cell = Cell::open(out);
            cell.text(b"agencyId", &self.agency);
            cell.text(b"advertiserId", &self.advertiser);
            cell.int(b"engineAccountId", account.engine_account_id);
            cell.close();
            out.push(b',');
            let mut cell = Cell::open(out);
            cell.text(b"customerId", &account.customer_id);
            cell.close();
            out.push(b'\n');
            return;
        }
        let j = r - n_acc;
        let campaign = j / BLOCK;
        let pos = j % BLOCK;
        let account = &self.accounts[(campaign % n_acc) as usize];
        let (kind, group, criterion): (&[u8], Option<u64>, Option<u64>) = match pos {
            0 => (b"CAMPAIGN,", None, None),
            1..=4 => (b"AD_GROUP,", Some(pos - 1), None),
            _ => {
                let k = pos - 5;
                (
                    b"CRITERION,",
                    Some(k / CRITERIA_PER_AD_GROUP),
                    Some(k % CRITERIA_PER_AD_GROUP),
                )
            }
        };
        let legacy = self.legacy_off * 100_000_000;
        let new = self.new_off;
        out.extend_from_slice(kind);
        let mut cell = Cell::open(out);
        cell.text(b"agencyId", &self.agency);
        cell.text(b"advertiserId", &self.advertiser);
        cell.int(b"engineAccountId", account.engine_account_id);
        if criterion.is_none() {
            cell.int(b"campaignId", self.legacy_campaign(campaign));
        }
        if let Some(k) = group {
            cell.int(b"adGroupId", self.legacy_ad_group(campaign, k));
        }
        if let Some(k) = criterion {
            let number = (campaign * AD_GROUPS_PER_CAMPAIGN + group.unwrap_or(0))
                * CRITERIA_PER_AD_GROUP
                + k;
            cell.num(b"criterionId", 43_700_000_000_000_000 + legacy + number);
        }
        cell.close();
        out.push(b',');
        let mut cell = Cell::open(out);
        cell.text(b"customerId", &account.customer_id);
        if criterion.is_none() {
            cell.int(b"campaignId", self.new_campaign(campaign));
        }
        if let Some(k) = group {
            cell.int(b"adGroupId", self.new_ad_group(campaign, k));
        }
        if let Some(k) = criterion {
            let number = (campaign * AD_GROUPS_PER_CAMPAIGN + group.unwrap_or(0))
                * CRITERIA_PER_AD_GROUP
                + k;
            cell.num(b"criterionId", 200_000_000_000 + new * 100_000_000 + number);
        }
        cell.close();
        out.push(b'\n');
    }
}

/// Streams a plan's rows (or a byte range of the file) in large chunks, generating them as it
/// goes.
pub(crate) struct CsvStream {
    plan: IdMappingPlan,
    next_row: u64,
    header_sent: bool,
    /// Bytes still to drop from the front of the generated output (a range starting inside a row).
    skip: u64,
    /// Bytes still to send.
    remaining: u64,
}

impl CsvStream {
    pub(crate) fn new(plan: IdMappingPlan) -> Self {
        let total = plan.total_len();
        Self::range(plan, 0, total)
    }

    /// The bytes `start..end` of the file (`end` at most its length).
    pub(crate) fn range(plan: IdMappingPlan, start: u64, end: u64) -> Self {
        let (next_row, header_sent, row_start) = if start < HEADER.len() as u64 {
            (0, false, 0)
        } else {
            let row = plan.rows_fitting(start).min(plan.rows);
            (row, true, plan.offset_of_row(row))
        };
        Self {
            next_row,
            header_sent,
            skip: start - row_start,
            remaining: end.saturating_sub(start),
            plan,
        }
    }
}

impl Stream for CsvStream {
    type Item = Result<Bytes, std::io::Error>;

    fn poll_next(mut self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = &mut *self;
        loop {
            if this.remaining == 0 || (this.header_sent && this.next_row >= this.plan.rows) {
                return Poll::Ready(None);
            }
            let mut out = Vec::with_capacity(CHUNK + 1024);
            if !this.header_sent {
                out.extend_from_slice(HEADER);
                this.header_sent = true;
            }
            while out.len() < CHUNK && this.next_row < this.plan.rows {
                this.plan.write_row(this.next_row, &mut out);
                this.next_row += 1;
            }
            let mut chunk = Bytes::from(out);
            let skip = usize::try_from(this.skip)
                .unwrap_or(usize::MAX)
                .min(chunk.len());
            this.skip -= skip as u64;
            let _ = chunk.split_to(skip);
            let keep = usize::try_from(this.remaining)
                .unwrap_or(usize::MAX)
                .min(chunk.len());
            chunk.truncate(keep);
            this.remaining -= keep as u64;
            if !chunk.is_empty() {
                return Poll::Ready(Some(Ok(chunk)));
            }
        }
    }
}

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

/// What a request's `Range` / `If-Range` ask for (RFC 9110, sections 13.1.5 and 14).
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum RangeAnswer {
    /// The whole file: no `Range`, an `If-Range` that does not match, a unit other than bytes, a
    /// malformed or multi-range set (which a server may ignore, RFC 9110 section 14.2).
    Full,
    /// Bytes `first..=last`.
    Partial { first: u64, last: u64 },
    /// A single range starting at or after the end (or a zero-length suffix): 416.
    Unsatisfiable,
}

pub(crate) fn requested_range(headers: &HeaderMap, etag: &str, total: u64) -> RangeAnswer {
    let Some(range) = headers.get(header::RANGE).and_then(|v| v.to_str().ok()) else {
        return RangeAnswer::Full;
    };
    if let Some(if_range) = headers.get(header::IF_RANGE) {
        // Strong comparison; a date never matches (the file has no Last-Modified).
        if if_range.to_str().ok().map(str::trim) != Some(etag) {
            return RangeAnswer::Full;
        }
    }
    let Some((unit, set)) = range.trim().split_once('=') else {
        return RangeAnswer::Full;
    };
    if !unit.trim().eq_ignore_ascii_case("bytes") || set.contains(',') {
        return RangeAnswer::Full;
    }
    let Some((first, last)) = set.trim().split_once('-') else {
        return RangeAnswer::Full;
    };
    let number = |s: &str| -> Option<u64> {
        (!s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()))
            .then(|| s.parse().ok())
            .flatten()
    };
    match (first.trim(), last.trim()) {
        ("", suffix) => match number(suffix) {
            None => RangeAnswer::Full,
            Some(0) => RangeAnswer::Unsatisfiable,
            Some(_) if total == 0 => RangeAnswer::Unsatisfiable,
            Some(n) => RangeAnswer::Partial {
                first: total.saturating_sub(n),
                last: total - 1,
            },
        },
        (first, last) => {
            let Some(first) = number(first) else {
                return RangeAnswer::Full;
            };
            let last = if last.is_empty() {
                None
            } else {
                match number(last) {
                    Some(l) if l >= first => Some(l),
                    _ => return RangeAnswer::Full,
                }
            };
            if first >= total {
                return RangeAnswer::Unsatisfiable;
            }
            RangeAnswer::Partial {
                first,
                last: last.map_or(total - 1, |l| l.min(total - 1)),
            }
        }
    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::search_ads::config::SearchAdsConfig;

    fn plan(size: IdMappingSize) -> IdMappingPlan {
        let cfg = SearchAdsConfig::default();
        let a = &cfg.accounts[0];
        IdMappingPlan::new(7, &cfg.accounts, a.agency_id, a.advertiser_id, size).unwrap()
    }

    #[test]
    fn computed_lengths_match_generated_rows() {
        let p = plan(IdMappingSize::Rows(500));
        let mut out = HEADER.to_vec();
        for r in 0..p.rows() {
            assert_eq!(p.offset_of_row(r), out.len() as u64, "row {r}");
            p.write_row(r, &mut out);
        }
        assert_eq!(p.total_len(), out.len() as u64);
        // Widths stay fixed for late campaigns too.
        let mut a = Vec::new();
        let mut b = Vec::new();
        p.write_row(2 + 21 * 2 + 7, &mut a);
        p.write_row(2 + 21 * 2_000_002 + 7, &mut b);
        assert_eq!(a.len(), b.len());
    }

    #[test]
    fn rows_are_valid_csv_with_json_cells() {
        let p = plan(IdMappingSize::Rows(50));
        let mut out = HEADER.to_vec();
        for r in 0..p.rows() {
            p.write_row(r, &mut out);
        }
        let text = String::from_utf8(out).unwrap();
        let mut lines = text.lines();
        assert_eq!(lines.next(), Some("Entity Type,Legacy IDs,New IDs"));
        let first = lines.next().unwrap();
        assert!(first.starts_with("CUSTOMER,\"{\"\"agencyId\"\":\"\"20700000000000125\"\""));
        let third = lines.nth(1).unwrap();
        assert!(third.starts_with("CAMPAIGN,"), "{third}");
    }

    #[test]
    fn byte_size_picks_whole_rows() {
        let p = plan(IdMappingSize::Bytes(100_000));
        assert!(p.total_len() <= 100_000);
        assert!(p.offset_of_row(p.rows() + 1) > 100_000);
    }

    fn collect(stream: CsvStream) -> Vec<u8> {
        // The stream never waits: every poll is ready.
        futures::FutureExt::now_or_never(futures::StreamExt::collect::<Vec<_>>(stream))
            .unwrap()
            .into_iter()
            .flat_map(|chunk| chunk.unwrap().to_vec())
            .collect()
    }

    #[test]
    fn every_byte_range_is_the_slice_of_the_whole_file() {
        let p = plan(IdMappingSize::Rows(3_000));
        let whole = collect(CsvStream::new(p.clone()));
        assert_eq!(whole.len() as u64, p.total_len());
        let total = whole.len() as u64;
        for (start, end) in [
            (0, 1),
            (0, 31),
            (5, 40),
            (31, 32),
            (100, 5_000),
            (p.offset_of_row(7), p.offset_of_row(9)),
            (p.offset_of_row(7) + 3, total),
            (300_000, total),
            (total - 1, total),
        ] {
            let part = collect(CsvStream::range(p.clone(), start, end));
            assert_eq!(part, &whole[start as usize..end as usize], "{start}..{end}");
        }
    }

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (name, value) in pairs {
            h.insert(*name, HeaderValue::from_str(value).unwrap());
        }
        h
    }

    #[test]
    fn range_headers_follow_rfc_9110() {
        let tag = "\"idm-1\"";
        let r = |pairs: &[(&'static str, &str)]| requested_range(&headers(pairs), tag, 1000);
        let part = |first, last| RangeAnswer::Partial { first, last };
        assert_eq!(r(&[]), RangeAnswer::Full);
        assert_eq!(r(&[("range", "bytes=0-99")]), part(0, 99));
        assert_eq!(r(&[("range", "bytes=990-")]), part(990, 999));
        assert_eq!(r(&[("range", "bytes=990-5000")]), part(990, 999));
        assert_eq!(r(&[("range", "bytes=-10")]), part(990, 999));
        assert_eq!(r(&[("range", "bytes=-5000")]), part(0, 999));
        assert_eq!(r(&[("range", "Bytes = 1-1")]), part(1, 1));
        assert_eq!(r(&[("range", "bytes=1000-")]), RangeAnswer::Unsatisfiable);
        assert_eq!(r(&[("range", "bytes=-0")]), RangeAnswer::Unsatisfiable);
        // Ignored: other units, malformed or reversed ranges, several ranges.
        for ignored in [
            "items=0-1",
            "bytes=5-1",
            "bytes=a-b",
            "bytes=0-1,5-6",
            "bytes=-",
            "bytes",
        ] {
            assert_eq!(r(&[("range", ignored)]), RangeAnswer::Full, "{ignored}");
        }
        // If-Range: only the current strong tag keeps the range; a date never does.
        assert_eq!(r(&[("range", "bytes=0-9"), ("if-range", tag)]), part(0, 9));
        assert_eq!(
            r(&[("range", "bytes=0-9"), ("if-range", "\"idm-2\"")]),
            RangeAnswer::Full
        );
        assert_eq!(
            r(&[("range", "bytes=0-9"), ("if-range", "W/\"idm-1\"")]),
            RangeAnswer::Full
        );
        assert_eq!(
            r(&[
                ("range", "bytes=0-9"),
                ("if-range", "Mon, 23 Nov 2026 10:00:00 GMT")
            ]),
            RangeAnswer::Full
        );
    }
}

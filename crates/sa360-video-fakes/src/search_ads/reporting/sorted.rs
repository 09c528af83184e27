//! Pages of a query whose ORDER BY is not the rows' stored order (GRAM: `ORDER BY field [ASC|DESC]
//! (, …)*`). The rows of the date range are read, sorted by the ORDER BY fields (a row without a
//! value sorts first ascending, last descending; ties keep the stored order, so every page of one
//! query sees one order) and a page is the slice after the rows already sent.
//!
//! At most [`MAX_SORTED_ROWS`] rows are sorted at once, so a request cannot make the fake hold
//! more: a larger result is `sizeLimitError: RESPONSE_SIZE_LIMIT_EXCEEDED` (a limit of the fake,
//! DECISIONS SR-16; the stored order has no such limit).

use std::borrow::Cow;
use std::cmp::Ordering;

use axum::http::StatusCode;

use super::failure::Failure;
use super::query::ConversionQuery;
use super::query::catalogue::{self, DataType};
use super::query::eval::Val;
use super::row::{AccountCells, Field, Row};
use super::rows;
use crate::search_ads::state::AppState;

/// Most rows one sorted query may hold.
pub(crate) const MAX_SORTED_ROWS: usize = 200_000;

fn owned(v: Val<'_>) -> Val<'static> {
    match v {
        Val::Int(n) => Val::Int(n),
        Val::Float(f) => Val::Float(f),
        Val::Bool(b) => Val::Bool(b),
        Val::Date(d) => Val::Date(d),
        Val::Str(s) => Val::Str(Cow::Owned(s.into_owned())),
    }
}

fn compare(a: &Option<Val<'_>>, b: &Option<Val<'_>>) -> Ordering {
    match (a, b) {
        (None, None) => Ordering::Equal,
        (None, Some(_)) => Ordering::Less,
        (Some(_), None) => Ordering::Greater,
        (Some(x), Some(y)) => x.cmp_to(y).unwrap_or(Ordering::Equal),
    }
}

/// Up to `want` rows of account `a` after the first `skip`, in the query's ORDER BY.
pub(crate) fn page(
    app: &AppState,
    a: usize,
    query: &ConversionQuery,
    skip: u64,
    want: usize,
) -> Result<Vec<Row>, Failure> {
    let rows = rows::rows_after(app, a, query, None, MAX_SORTED_ROWS + 1);
    if rows.len() > MAX_SORTED_ROWS {
        return Err(Failure::new(
            StatusCode::BAD_REQUEST,
            "sizeLimitError",
            "RESPONSE_SIZE_LIMIT_EXCEEDED",
            format!(
                "This ORDER BY sorts more than {MAX_SORTED_ROWS} rows; narrow the date range or order by conversion.conversion_date_time, conversion.id."
            ),
        ));
    }
    let account = &app.config.accounts[a];
    let cells = AccountCells {
        account,
        manager_id: &app.config.reporting.manager_customer_id,
    };
    let order: Vec<(Option<Field>, DataType, bool)> = query
        .order
        .iter()
        .map(|(name, desc)| {
            let t = catalogue::field(name).map_or(DataType::String, |f| f.data_type);
            (Field::parse(name), t, *desc)
        })
        .collect();
    let mut keyed: Vec<(Vec<Option<Val<'static>>>, Row)> = rows
        .into_iter()
        .map(|row| {
            let key = order
                .iter()
                .map(|(f, t, _)| f.and_then(|f| row.value(f, *t, &cells)).map(owned))
                .collect();
            (key, row)
        })
        .collect();
    keyed.sort_by(|(ka, ra), (kb, rb)| {
        for ((a, b), (_, _, desc)) in ka.iter().zip(kb).zip(&order) {
            let o = compare(a, b);
            let o = if *desc { o.reverse() } else { o };
            if o.is_ne() {
                return o;
            }
        }
        ra.key.cmp(&rb.key)
    });
    let skip = usize::try_from(skip).unwrap_or(usize::MAX);
    Ok(keyed
        .into_iter()
        .skip(skip)
        .take(want)
        .map(|(_, row)| row)
        .collect())
}

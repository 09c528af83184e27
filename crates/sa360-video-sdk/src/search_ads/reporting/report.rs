//! The conversion report's page source: one date shard, a `search` of [`conversion_query`] whose
//! rows are read with the generated `SearchAds360Row` and mapped to [`Conversion`]
//! ([`mapping`](super::mapping)); restarted after its last row when its page token expires.
//!
//! The report's order (conversion time, then `conversion.id`, SR-9) makes the restart exact:
//! the shard's query starts again on the `segments.date` of the last row yielded and the rows up
//! to and including it are dropped, so every row is yielded exactly once. Rows out of that order
//! fail the report (a restart could not be exact).

use std::sync::Arc;

use chrono::NaiveDate;
use sa360_reporting_client::types::SearchAds360Row;
use serde::{Deserialize, Deserializer};

use super::super::conversion::Conversion;
use super::super::error::Error;
use super::super::pages::{BoxFuture, Fetched, PageSource, Raw};
use super::mapping::{RowKey, conversion_from_row, parse_date};
use super::query::filters::{ReportFilters, conversion_query};
use super::rpc::OP_SEARCH;
use super::source::{SearchContext, decode_rows, fetch_page};

/// A row of the report: its key, its `segments.date` and its conversion.
pub(crate) struct ReportRow {
    key: RowKey,
    date: NaiveDate,
    pub conversion: Conversion,
}

impl<'de> Deserialize<'de> for ReportRow {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let mut row = SearchAds360Row::deserialize(d)?;
        let date = row.segments.as_ref().and_then(|s| s.date.as_deref());
        let date = date
            .and_then(parse_date)
            .ok_or_else(|| serde::de::Error::custom("segments.date is missing or not a date"))?;
        let (key, conversion) = conversion_from_row(&mut row).map_err(serde::de::Error::custom)?;
        Ok(Self {
            key,
            date,
            conversion,
        })
    }
}

/// One date shard of the report.
pub(crate) struct ConversionShard {
    ctx: Arc<SearchContext>,
    query: Arc<str>,
    end: NaiveDate,
    filters: Arc<ReportFilters>,
    /// After a restart: the last row yielded before it (rows up to it are dropped).
    after: Option<RowKey>,
    /// The shard's first day (a restart before any row starts there again).
    start: NaiveDate,
}

impl ConversionShard {
    pub(crate) fn new(
        ctx: Arc<SearchContext>,
        (start, end): (NaiveDate, NaiveDate),
        filters: Arc<ReportFilters>,
    ) -> Self {
        Self {
            query: conversion_query(start, end, &filters).to_string().into(),
            ctx,
            end,
            filters,
            after: None,
            start,
        }
    }
}

impl PageSource for ConversionShard {
    type Row = ReportRow;
    type Page = Raw;
    type Mark = (RowKey, NaiveDate);

    fn operation(&self) -> &'static str {
        OP_SEARCH
    }

    fn fetch(self: Arc<Self>, cursor: Option<String>) -> BoxFuture<Result<Fetched<Raw>, Error>> {
        Box::pin(async move { fetch_page(&self.ctx, &self.query, cursor.as_deref()).await })
    }

    fn decode(&self, raw: Raw) -> Result<Vec<ReportRow>, Error> {
        let mut rows = decode_rows::<ReportRow>(&raw, &[]).map_err(|e| match e {
            Error::RowType { detail, .. } => Error::unexpected(
                OP_SEARCH,
                Some(200),
                format!("a row of the report cannot be a Conversion: {detail}"),
            ),
            other => other,
        })?;
        if let Some(after) = self.after {
            rows.retain(|row| row.key > after);
        }
        Ok(rows)
    }

    fn mark(
        &self,
        rows: &[ReportRow],
        prev: Option<Self::Mark>,
    ) -> Result<Option<Self::Mark>, String> {
        let mut last = prev;
        for row in rows {
            if let Some((prev, _)) = last
                && row.key <= prev
            {
                return Err(format!(
                    "rows out of order: conversion {} at {} came after conversion {} at {}",
                    row.key.1, row.key.0, prev.1, prev.0
                ));
            }
            last = Some((row.key, row.date));
        }
        Ok(last)
    }

    fn resume(&self, after: Option<&Self::Mark>) -> Option<Self> {
        let start = after.map_or(self.start, |&(_, date)| date);
        Some(Self {
            ctx: self.ctx.clone(),
            query: conversion_query(start, self.end, &self.filters)
                .to_string()
                .into(),
            end: self.end,
            filters: self.filters.clone(),
            after: after.map(|&(key, _)| key).or(self.after),
            start: self.start,
        })
    }
}

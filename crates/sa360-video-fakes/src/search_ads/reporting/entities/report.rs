//! The rows of a `FROM customer | campaign | ad_group` query computed entity by entity from the
//! page token's cursor (DECISIONS SR-22 g): a row's key starts with its campaign and ad group, so
//! the rows of the query's entities one after the other, each entity's in key order, are all the
//! rows in key order (the order [`super::rows`] gives), and a page needs only the entities it
//! shows (plus the next row, to know whether there is one). The conversions of the seeded
//! campaigns are read once per request, and only when an entity needs them.

use std::cell::OnceCell;
use std::collections::BTreeMap;

use super::cells::{self, DEVICES, Place, Sums, Tally};
use super::cursor::EntityCursor;
use super::model::{Account, Dims, EntityRow, Key, entity_of, matches, order};
use crate::search_ads::data::{self, CAMPAIGNS};
use crate::search_ads::reporting::query::ConversionQuery;
use crate::search_ads::state::AppState;

/// The resources whose reports are computed entity by entity.
const SERVED: [&str; 3] = ["customer", "campaign", "ad_group"];

/// The rows of one `FROM customer | campaign | ad_group` query for one account, computed entity
/// by entity.
pub(crate) struct Report<'a> {
    app: &'a AppState,
    a: usize,
    query: &'a ConversionQuery,
    account: Account<'a>,
    dims: Dims,
    campaigns: u64,
    pub(super) conversions: OnceCell<Tally>,
}

impl<'a> Report<'a> {
    /// Whether the reports of `FROM from` are computed entity by entity (`customer`, `campaign`,
    /// `ad_group`).
    pub(crate) fn served(from: &str) -> bool {
        SERVED.contains(&from)
    }

    /// The report of `query` (its `from` one [`Report::served`]) for account `a`.
    pub(crate) fn new(app: &'a AppState, a: usize, query: &'a ConversionQuery) -> Self {
        debug_assert!(SERVED.contains(&query.from));
        Self {
            app,
            a,
            query,
            account: Account::new(app, a, query.from),
            dims: Dims::new(&query.select),
            campaigns: data::report_campaigns(&app.config),
            conversions: OnceCell::new(),
        }
    }

    /// The account the rows are of (to write them).
    pub(crate) fn account(&self) -> &Account<'a> {
        &self.account
    }

    fn first(&self) -> Option<(u64, u64)> {
        (self.campaigns > 0).then_some((0, 0))
    }

    /// The entity after `(c, g)` at the query's level.
    fn next(&self, (c, g): (u64, u64)) -> Option<(u64, u64)> {
        match self.query.from {
            "campaign" => (c + 1 < self.campaigns).then_some((c + 1, 0)),
            "ad_group" if g + 1 < data::ad_groups_of(c) => Some((c, g + 1)),
            "ad_group" => (c + 1 < self.campaigns).then_some((c + 1, 0)),
            _ => None,
        }
    }

    /// The ad groups whose cells entity `(c, g)` sums.
    fn ad_groups(&self, (c, g): (u64, u64)) -> Vec<(u64, u64)> {
        match self.query.from {
            "campaign" => (0..data::ad_groups_of(c)).map(|g| (c, g)).collect(),
            "ad_group" => vec![(c, g)],
            _ => (0..self.campaigns)
                .flat_map(|c| (0..data::ad_groups_of(c)).map(move |g| (c, g)))
                .collect(),
        }
    }

    /// Conversions of a cell of a seeded campaign (synthetic ones have none).
    fn conversions(&self, place: &Place) -> i64 {
        if place.0 >= CAMPAIGNS {
            return 0;
        }
        let tally = self
            .conversions
            .get_or_init(|| cells::conversions(self.app, self.a, self.query.start, self.query.end));
        tally.at(place).total
    }

    /// The rows of one entity, filtered, in key order.
    fn entity_rows(&self, entity: (u64, u64)) -> Vec<EntityRow> {
        let (query, dims) = (self.query, &self.dims);
        let groups = self.ad_groups(entity);
        let mut sums: BTreeMap<Key, Sums> = BTreeMap::new();
        if !dims.by_day() {
            // Every entity has a row (with zero metrics when no day is in range).
            for &(c, g) in &groups {
                for device in 0..DEVICES.len() {
                    let e = entity_of(query.from, c, g, 0);
                    sums.entry(dims.key(e, None, Some(device))).or_default();
                }
            }
        }
        let mut day = query.start;
        while day <= query.end {
            for &(c, g) in &groups {
                let e = entity_of(query.from, c, g, 0);
                for device in 0..DEVICES.len() {
                    let place = (c, g, day, device);
                    let n = self.conversions(&place);
                    let cell = cells::cell(self.app.config.seed, self.a, place, n);
                    sums.entry(dims.key(e, Some(day), Some(device)))
                        .or_default()
                        .add(cell);
                }
            }
            let Some(next) = day.succ_opt() else { break };
            day = next;
        }
        sums.into_iter()
            .map(|(key, sums)| EntityRow {
                key,
                sums,
                visit: None,
            })
            .filter(|row| matches(&self.account, query, row))
            .collect()
    }

    /// Up to `want` rows in key order from `from` (the first row when `None`), and where the page
    /// after them starts when a row follows.
    pub(crate) fn page(
        &self,
        from: Option<EntityCursor>,
        want: usize,
    ) -> (Vec<EntityRow>, Option<EntityCursor>) {
        let (mut entity, mut skip) = match from {
            Some(cursor) => (Some((cursor.c, cursor.g)), cursor.skip),
            None => (self.first(), 0),
        };
        let mut page = Vec::new();
        while let Some(e) = entity {
            let rows = self.entity_rows(e);
            for (i, row) in rows.into_iter().enumerate().skip(skip) {
                if page.len() == want {
                    let (c, g) = e;
                    return (page, Some(EntityCursor { c, g, skip: i }));
                }
                page.push(row);
            }
            skip = 0;
            entity = self.next(e);
        }
        (page, None)
    }

    /// How many rows the query has.
    pub(crate) fn count(&self) -> u64 {
        let mut n = 0;
        let mut entity = self.first();
        while let Some(e) = entity {
            n += self.entity_rows(e).len() as u64;
            entity = self.next(e);
        }
        n
    }

    /// Every row in the query's ORDER BY (ties in key order), or `None` when there are more than
    /// `max` (the fake sorts at most that many, SR-16).
    pub(crate) fn sorted(&self, max: usize) -> Option<Vec<EntityRow>> {
        let mut rows = Vec::new();
        let mut entity = self.first();
        while let Some(e) = entity {
            rows.extend(self.entity_rows(e));
            if rows.len() > max {
                return None;
            }
            entity = self.next(e);
        }
        order(&self.account, self.query, &mut rows);
        Some(rows)
    }
}

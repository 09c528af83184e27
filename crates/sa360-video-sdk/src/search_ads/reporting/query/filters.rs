//! The typed query builder over the `conversion` resource (SR-9, SR-13).
//!
//! The query text is assembled from fixed fragments and typed values only: ids are `i64`s printed
//! as digits, dates are [`NaiveDate`]s printed as `YYYY-MM-DD`, the status is an enum. The one
//! free-text filter, [`ReportFilters::advertiser_conversion_ids`], is quoted with every quote and
//! backslash escaped, and a value with a line break or another control character is refused before
//! anything is sent, so no input can add a condition, an `OR`, a comment or a clause.

use chrono::NaiveDate;

use super::super::super::error::Error;
use super::super::super::values::{AdGroupId, AdId, CampaignId, CriterionId};
use super::super::fields::{Field, Resource};
use super::builder::{Literal, Query};

/// Most values of one `IN` list (the service's `FILTER_HAS_TOO_MANY_VALUES` limit is not
/// documented; this bound keeps every query small).
pub const MAX_FILTER_VALUES: usize = 10_000;

/// Longest advertiser conversion id accepted in a filter (characters).
pub const MAX_FILTER_TEXT: usize = 1_000;

/// The fields every conversion report selects, in order. Every field a filter or the ordering
/// refers to is among them (the service refuses a WHERE or ORDER BY field that is not selected).
pub const SELECTED_FIELDS: &[&str] = &[
    "conversion.id",
    "conversion.advertiser_conversion_id",
    "conversion.conversion_date_time",
    "conversion.conversion_last_modified_date_time",
    "conversion.conversion_revenue_micros",
    "conversion.conversion_quantity",
    "conversion.status",
    "conversion.click_id",
    "conversion.floodlight_order_id",
    "conversion.ad_id",
    "conversion.criterion_id",
    "conversion.merchant_id",
    "conversion.product_id",
    "conversion.product_channel",
    "conversion.product_country_code",
    "conversion.product_language_code",
    "conversion.product_store_id",
    "segments.date",
    "customer.id",
    "customer.currency_code",
    "campaign.id",
    "ad_group.id",
];

/// `conversion.status` values a report can filter on.
///
/// `#[non_exhaustive]`: the Reporting API's enums grow; match with a wildcard arm
/// (or use [`as_str`](Self::as_str)).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ConversionStatus {
    /// `ENABLED` (v2 `state` `ACTIVE`).
    Enabled,
    /// `REMOVED` (v2 `state` `REMOVED` or `DELETED`).
    Removed,
}

impl ConversionStatus {
    /// The wire value.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Enabled => "ENABLED",
            Self::Removed => "REMOVED",
        }
    }
}

/// Filters of a conversion report. Empty lists filter nothing; several values of one list are
/// alternatives (`IN`), different lists must all hold (`AND`).
///
/// Campaign and ad-group ids are **new** Search Ads 360 ids (translate legacy ones with
/// [`IdLookup`](super::super::IdLookup)); ad and criterion ids are the same in both APIs (SR-12).
///
/// ```
/// use sa360_video_sdk::search_ads::AdId;
/// use sa360_video_sdk::search_ads::reporting::{ConversionStatus, ReportFilters};
/// let filters = ReportFilters::default()
///     .ad_ids([AdId::new(4_000_001), AdId::new(4_000_002)])
///     .statuses([ConversionStatus::Enabled])
///     .advertiser_conversion_ids(["order-1".to_owned()]);
/// assert_eq!(filters.ad_ids.len(), 2);
/// assert!(filters.campaign_ids.is_empty());
/// filters.validate()?;
/// # Ok::<(), sa360_video_sdk::search_ads::Error>(())
/// ```
///
/// `#[non_exhaustive]`: build it from [`ReportFilters::default`] and the
/// setters named after the fields; a struct literal does not compile outside this crate.
///
/// ```compile_fail,E0639
/// use sa360_video_sdk::search_ads::{ConversionStatus, ReportFilters};
/// let filters = ReportFilters { statuses: vec![ConversionStatus::Enabled], ..ReportFilters::default() };
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ReportFilters {
    /// `campaign.id`.
    pub campaign_ids: Vec<CampaignId>,
    /// `ad_group.id`.
    pub ad_group_ids: Vec<AdGroupId>,
    /// `conversion.ad_id`.
    pub ad_ids: Vec<AdId>,
    /// `conversion.criterion_id`.
    pub criterion_ids: Vec<CriterionId>,
    /// `conversion.status`.
    pub statuses: Vec<ConversionStatus>,
    /// `conversion.advertiser_conversion_id` (v2 `conversionId`): any text without line breaks or
    /// other control characters, up to [`MAX_FILTER_TEXT`] characters.
    pub advertiser_conversion_ids: Vec<String>,
}

crate::setters::field_setters!(ReportFilters {
    list {
        campaign_ids => campaign_ids: CampaignId,
        ad_group_ids => ad_group_ids: AdGroupId,
        ad_ids => ad_ids: AdId,
        criterion_ids => criterion_ids: CriterionId,
        statuses => statuses: ConversionStatus,
        advertiser_conversion_ids => advertiser_conversion_ids: String,
    }
});

impl ReportFilters {
    /// Checks the bounds and the text values (before any request).
    pub fn validate(&self) -> Result<(), Error> {
        let lists = [
            ("campaign_ids", self.campaign_ids.len()),
            ("ad_group_ids", self.ad_group_ids.len()),
            ("ad_ids", self.ad_ids.len()),
            ("criterion_ids", self.criterion_ids.len()),
            ("statuses", self.statuses.len()),
            (
                "advertiser_conversion_ids",
                self.advertiser_conversion_ids.len(),
            ),
        ];
        for (field, n) in lists {
            if n > MAX_FILTER_VALUES {
                return Err(Error::validation(
                    field,
                    None,
                    format!("has {n} values; at most {MAX_FILTER_VALUES} fit in one query"),
                ));
            }
        }
        for (i, text) in self.advertiser_conversion_ids.iter().enumerate() {
            check_text("advertiser_conversion_ids", i, text)?;
        }
        Ok(())
    }
}

fn check_text(field: &str, index: usize, text: &str) -> Result<(), Error> {
    if text.chars().count() > MAX_FILTER_TEXT {
        return Err(Error::validation(
            field,
            Some(index),
            format!("is longer than {MAX_FILTER_TEXT} characters"),
        ));
    }
    if let Some(c) = text.chars().find(|c| c.is_control()) {
        return Err(Error::validation(
            field,
            Some(index),
            format!(
                "contains the control character U+{:04X}; the query language does not allow \
                 line breaks or control characters in strings",
                u32::from(c)
            ),
        ));
    }
    Ok(())
}

/// The query of one date shard, built with [`Query`] (so its one escaper writes the text).
/// `filters` must have passed [`ReportFilters::validate`].
pub(crate) fn conversion_query(start: NaiveDate, end: NaiveDate, filters: &ReportFilters) -> Query {
    fn any<V: Into<Literal>>(query: Query, field: &'static str, mut values: Vec<V>) -> Query {
        match values.len() {
            0 => query,
            1 => query.where_(Field::new(field).eq(values.remove(0))),
            _ => query.where_(Field::new(field).in_(values)),
        }
    }
    let f = filters;
    let query = Query::select(SELECTED_FIELDS.iter().map(|name| Field::new(name)))
        .from(Resource::Conversion)
        .where_(Field::new("segments.date").between(start, end));
    let ids = |ids: &mut dyn Iterator<Item = i64>| ids.collect::<Vec<_>>();
    let query = any(
        query,
        "campaign.id",
        ids(&mut f.campaign_ids.iter().map(|v| v.get())),
    );
    let query = any(
        query,
        "ad_group.id",
        ids(&mut f.ad_group_ids.iter().map(|v| v.get())),
    );
    let query = any(
        query,
        "conversion.ad_id",
        ids(&mut f.ad_ids.iter().map(|v| v.get())),
    );
    let criteria = ids(&mut f.criterion_ids.iter().map(|v| v.get()));
    let query = any(query, "conversion.criterion_id", criteria);
    let statuses = f
        .statuses
        .iter()
        .map(|s| Literal::enum_value(s.as_str()))
        .collect();
    let query = any::<Literal>(query, "conversion.status", statuses);
    let texts = f.advertiser_conversion_ids.clone();
    any(query, "conversion.advertiser_conversion_id", texts)
        .order_by(Field::new("conversion.conversion_date_time"))
        .order_by(Field::new("conversion.id"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shard_query_escapes_text_with_the_one_escaper() {
        let f = ReportFilters::default()
            .campaign_ids([CampaignId::new(7)])
            .statuses([ConversionStatus::Enabled])
            .advertiser_conversion_ids([r"a'b\".to_owned()]);
        let day = NaiveDate::from_ymd_opt(2026, 11, 1).unwrap();
        let q = conversion_query(day, day, &f).to_string();
        assert!(
            q.contains(
                "WHERE segments.date BETWEEN '2026-11-01' AND '2026-11-01' AND campaign.id = 7"
            ),
            "{q}"
        );
        assert!(
            q.contains(
                r"conversion.status = ENABLED AND conversion.advertiser_conversion_id = 'a\'b\\' "
            ),
            "{q}"
        );
        assert!(
            q.ends_with("ORDER BY conversion.conversion_date_time ASC, conversion.id ASC"),
            "{q}"
        );
    }

    #[test]
    fn control_characters_are_refused() {
        let f = ReportFilters {
            advertiser_conversion_ids: vec!["ok".into(), "x\ny".into()],
            ..ReportFilters::default()
        };
        let e = f.validate().unwrap_err().to_string();
        assert!(e.contains("advertiser_conversion_ids"), "{e}");
        assert!(e.contains("index 1"), "{e}");
        assert!(e.contains("U+000A"), "{e}");
    }
}

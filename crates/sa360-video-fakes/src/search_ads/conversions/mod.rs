//! The conversion methods, one file per operation: `get` (`get`), `getByCustomerId`
//! (`get_by_customer_id`), `insert` (`insert`), `update` (`update`), `updateAvailability`
//! (`update_availability`) and `savedColumns.list` (`saved_columns`).
//!
//! What several operations share has a file of its own: query and path parameters (`params`),
//! the page both reads return (`page`), reading batch bodies into records (`parse`), the 400s of
//! a batch and the one that names rejected items (`batch`), the per-item checks of the writes (`checks`) and the batch loop of insert and
//! update (`write`).

mod batch;
mod checks;
mod get;
mod get_by_customer_id;
mod insert;
mod page;
mod params;
mod parse;
mod saved_columns;
mod update;
mod update_availability;
mod write;

#[cfg(test)]
mod tests;

pub(crate) use self::batch::{is_availability_field, is_conversion_field};
pub(crate) use self::get::get_conversions;
pub(crate) use self::get_by_customer_id::get_by_customer_id;
pub(crate) use self::insert::insert;
pub(crate) use self::params::forbidden;
#[cfg(test)]
pub(crate) use self::parse::record_from_value;
pub(crate) use self::saved_columns::saved_columns;
pub(crate) use self::update::update;
pub(crate) use self::update_availability::update_availability;

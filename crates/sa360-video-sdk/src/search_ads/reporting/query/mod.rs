//! The query of a report: [`Query`] (`builder.rs`: text, or built from the typed field constants;
//! its literals are the one escaper of query text), [`ReportFilters`] (`filters.rs`: the conversion
//! report's typed filters, which produce a `Query`), and the check against the field catalogue
//! before sending (`check.rs`, reading the clauses with `clauses.rs`).

pub(super) mod builder;
pub(super) mod check;
mod clauses;
pub(super) mod filters;
#[cfg(test)]
mod injection_tests;

//! The types the generated code names (`crate::context::ClientContext`,
//! `crate::context::I64String`): `search-ads-client`'s, shared with it. The
//! generated code names this module rather than the crate root, which
//! re-exports the generated code (no import cycle).

pub use search_ads_client::{ClientContext, I64String};

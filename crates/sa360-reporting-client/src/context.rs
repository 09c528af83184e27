//! The types the generated code names (`crate::context::ClientContext`,
//! `crate::context::I64String`): `sa360-v2-client`'s, shared with it. The
//! generated code names this module rather than the crate root, which
//! re-exports the generated code (no import cycle).

pub use sa360_v2_client::{ClientContext, I64String};

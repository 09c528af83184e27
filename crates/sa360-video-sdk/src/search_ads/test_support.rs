//! Test support shared by unit tests, in `test_support/tests.rs` with the tests (the module is
//! compiled only for them).

mod tests;
pub(crate) use tests::*;

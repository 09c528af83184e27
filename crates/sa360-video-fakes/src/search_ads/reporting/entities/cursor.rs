//! Where the next page of an entity report starts, kept in its page token (DECISIONS SR-22 g).

/// Where a page of a query in its natural order (no ORDER BY) starts: an entity of the query's
/// level (campaign `c`, ad group `g`; `(0, 0)` for the customer) and how many of its rows were
/// already sent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct EntityCursor {
    pub(super) c: u64,
    pub(super) g: u64,
    pub(super) skip: usize,
}

//! [`Paging`]: the page size and look-ahead of every paged read.

use super::super::error::Error;

/// Rows per page and how far a paged read runs ahead of the reader: the one paging option of
/// every paged read, held by the v2 listings' [`ListOptions`](crate::search_ads::ListOptions),
/// `search`'s [`SearchOptions`](crate::search_ads::reporting::SearchOptions) and the conversion
/// report's [`ReportOptions`](crate::search_ads::reporting::ReportOptions), whose defaults are each read's:
///
/// | read | `page_size` | `look_ahead` |
/// |---|---|---|
/// | v2 listing | `rowCount`, 1..=1 000, default 1 000 | pages in flight, 1..=32, default 4 (SA-30): the first page alone, then doubling |
/// | `search` | `pageSize`, 1..=10 000, default 10 000 | pages held ahead of the reader, 1..=16, default 2 |
/// | conversion report | `pageSize`, 1..=10 000, default 10 000 | shards in flight, 1..=16, default 4 |
///
/// Those holders and their requests have `page_size` and `look_ahead` setters too.
///
/// ```
/// use sa360_video_sdk::search_ads::ListOptions;
/// let options = ListOptions::default().page_size(500);
/// assert_eq!((options.paging.page_size, options.paging.look_ahead), (500, 4));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Paging {
    /// Rows per page.
    pub page_size: u32,
    /// How far the read runs ahead of the reader (see the table).
    pub look_ahead: usize,
}

crate::setters::field_setters!(Paging {
    value {
        page_size => page_size: u32,
        look_ahead => look_ahead: usize,
    }
});

impl Paging {
    /// A read's default paging.
    pub(crate) const fn new(page_size: u32, look_ahead: usize) -> Self {
        Self {
            page_size,
            look_ahead,
        }
    }

    /// Checks both against a read's largest page and look-ahead (before any request).
    pub(crate) fn check(&self, max_page_size: u32, max_look_ahead: usize) -> Result<(), Error> {
        Error::check_range("page_size", self.page_size, max_page_size)?;
        Error::check_range("look_ahead", self.look_ahead, max_look_ahead)
    }
}

/// `page_size` and `look_ahead` setters of a type holding `$path: Paging`.
macro_rules! paging_setters {
    ($($path:ident).+) => {
        /// Rows per page; see [`Paging`](crate::search_ads::Paging).
        pub fn page_size(mut self, page_size: u32) -> Self {
            self.$($path).+.page_size = page_size;
            self
        }

        /// How far the read runs ahead of the reader; see [`Paging`](crate::search_ads::Paging).
        pub fn look_ahead(mut self, look_ahead: usize) -> Self {
            self.$($path).+.look_ahead = look_ahead;
            self
        }
    };
}
pub(crate) use paging_setters;

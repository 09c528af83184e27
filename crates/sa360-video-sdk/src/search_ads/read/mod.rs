//! Reading conversions: a paged `Stream` that may read ahead of its reader.

use std::future::Future;
use std::sync::Arc;

use futures::future::BoxFuture;

use super::client::SearchAdsClient;
use super::conversion::Conversion;
use super::date_range::DateRange;
use super::engine_account::EngineAccount;
use super::error::Error;
use super::pages::{Budget, Fetched, PageSource, Pages, Paging, Rows, paging_setters};
use super::values::{
    AdGroupId, AdId, AdvertiserId, AgencyId, CampaignId, CriterionId, CustomerId, EngineAccountId,
};
use super::wire;
use crate::setters::field_setters;

mod page;

pub use page::MAX_PAGE_SIZE;

/// Most pages a listing has in flight ([`ListOptions::paging`]).
const MAX_LOOK_AHEAD: usize = 32;

/// Paging and filters of a conversion listing.
///
/// ```
/// use sa360_video_sdk::search_ads::{CampaignId, ListOptions};
/// let options = ListOptions::default()
///     .page_size(500)
///     .look_ahead(4)
///     .campaign_id(CampaignId::new(71700000001899732));
/// assert_eq!(options.campaign_id, Some(CampaignId::new(71700000001899732)));
/// assert_eq!(options.ad_group_id, None);
/// ```
///
/// `#[non_exhaustive]`: build it from [`ListOptions::default`] and the
/// setters named after the fields; a struct literal does not compile outside this crate.
///
/// ```compile_fail,E0639
/// use sa360_video_sdk::search_ads::ListOptions;
/// let options = ListOptions { campaign_id: None, ..ListOptions::default() };
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ListOptions {
    /// Conversions per request (`rowCount`, 1..=1 000, default 1 000) and pages in flight
    /// (1..=32, default 4, SA-30: enough to hide most of the wait for each answer, a few MB held
    /// ahead, at most three requests past the end). The first page is requested alone, and each
    /// full page doubles the pages in flight up to the look-ahead (1, 2, 4, ...), so a listing
    /// that fits in one page costs one request; pages are still yielded in order.
    pub paging: Paging,
    /// Only this campaign.
    pub campaign_id: Option<CampaignId>,
    /// Only this ad group.
    pub ad_group_id: Option<AdGroupId>,
    /// Only this ad.
    pub ad_id: Option<AdId>,
    /// Only this criterion.
    pub criterion_id: Option<CriterionId>,
    /// Only this customer ([`list_conversions`](super::SearchAdsClient::list_conversions) only).
    pub customer_id: Option<CustomerId>,
    /// Only this agency ([`list_conversions_by_customer`](super::SearchAdsClient::list_conversions_by_customer) only).
    pub agency_id: Option<AgencyId>,
    /// Only this advertiser (`list_conversions_by_customer` only).
    pub advertiser_id: Option<AdvertiserId>,
    /// Only this engine account (`list_conversions_by_customer` only).
    pub engine_account_id: Option<EngineAccountId>,
}

impl Default for ListOptions {
    fn default() -> Self {
        Self {
            paging: Paging::new(MAX_PAGE_SIZE, 4),
            campaign_id: None,
            ad_group_id: None,
            ad_id: None,
            criterion_id: None,
            customer_id: None,
            agency_id: None,
            advertiser_id: None,
            engine_account_id: None,
        }
    }
}

field_setters!(ListOptions {
    value {
        paging => paging: Paging,
    }
    some {
        campaign_id => campaign_id: CampaignId,
        ad_group_id => ad_group_id: AdGroupId,
        ad_id => ad_id: AdId,
        criterion_id => criterion_id: CriterionId,
        customer_id => customer_id: CustomerId,
        agency_id => agency_id: AgencyId,
        advertiser_id => advertiser_id: AdvertiserId,
        engine_account_id => engine_account_id: EngineAccountId,
    }
});

impl ListOptions {
    paging_setters!(paging);

    pub(crate) fn validate(&self, by_customer: bool) -> Result<(), Error> {
        let misplaced = if by_customer {
            self.customer_id.is_some().then_some("customerId")
        } else {
            [
                (self.agency_id.is_some(), "agencyId"),
                (self.advertiser_id.is_some(), "advertiserId"),
                (self.engine_account_id.is_some(), "engineAccountId"),
            ]
            .into_iter()
            .find_map(|(set, name)| set.then_some(name))
        };
        if let Some(field) = misplaced {
            let reason = if by_customer {
                "filter is not available when listing by customer (the customer is the scope)"
            } else {
                "filter is only available with list_conversions_by_customer (here it is part of the EngineAccount)"
            };
            return Err(Error::validation(field, None, reason));
        }
        self.paging.check(MAX_PAGE_SIZE, MAX_LOOK_AHEAD)
    }
}

/// The conversions of a listing, in the server's order (the engine's
/// [`Rows`](super::pages::Rows)): pages of `startRow`, [`ListOptions::paging`]'s look-ahead requested
/// at once. Paging stops at the first page shorter than the page size. An error ends the stream
/// after it is yielded; transient errors are retried per page before that. Dropping the stream
/// cancels the requests in flight.
pub type ConversionStream = Rows<Conversion>;

/// One page's request and decoding, from its start row.
type FetchPage =
    Arc<dyn Fn(u32) -> BoxFuture<'static, Result<Vec<Conversion>, Error>> + Send + Sync>;

/// One page of a listing: a source of the page engine with a single page.
struct ListingPage {
    operation: &'static str,
    fetch: FetchPage,
    page_size: u32,
    /// `None` past the API's last start row.
    start_row: Option<u32>,
}

impl PageSource for ListingPage {
    type Row = Conversion;
    type Page = Vec<Conversion>;
    type Mark = ();

    fn operation(&self) -> &'static str {
        self.operation
    }

    fn fetch(
        self: Arc<Self>,
        _: Option<String>,
    ) -> BoxFuture<'static, Result<Fetched<Self::Page>, Error>> {
        Box::pin(async move {
            let Some(start) = self.start_row else {
                return Err(Error::validation(
                    "startRow",
                    None,
                    "would pass 4294967295 (the API's limit): narrow the date range",
                ));
            };
            let page = (self.fetch)(start).await?;
            Ok(Fetched { page, next: None })
        })
    }

    fn decode(&self, page: Vec<Conversion>) -> Result<Vec<Conversion>, Error> {
        Ok(page)
    }

    fn ends_read(&self, rows: &[Conversion]) -> bool {
        rows.len() < self.page_size as usize
    }
}

/// The pages of `fetch(start_row)` with `page_size` rows each, up to `look_ahead` in flight (see
/// [`ListOptions::paging`]); at most `look_ahead - 1` requests go past the last page.
fn listing<F, Fut>(
    operation: &'static str,
    page_size: u32,
    look_ahead: usize,
    fetch: F,
) -> ConversionStream
where
    F: Fn(u32) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<Vec<Conversion>, Error>> + Send + 'static,
{
    let page_size = page_size.max(1);
    let fetch: FetchPage = Arc::new(move |start_row| Box::pin(fetch(start_row)));
    let pages = (0u64..).map(move |page| ListingPage {
        operation,
        fetch: fetch.clone(),
        page_size,
        start_row: u32::try_from(page * u64::from(page_size)).ok(),
    });
    let budget = Budget {
        page_rows: page_size,
        ahead: 1,
        lanes: look_ahead,
        ramp: true,
    };
    Rows::new(Pages::new(operation, pages, budget))
}

const OP_GET: &str = "conversion.get";
const OP_GET_BY_CUSTOMER: &str = "conversion.getByCustomerId";

/// The v2 reads (deprecated upstream): paged with `startRow`/`rowCount`.
impl SearchAdsClient {
    /// The conversions of an engine account in a date range: a
    /// [`ListConversionsRequest`] (paging and filters are its
    /// setters) whose [`stream`](ListConversionsRequest::stream) yields them.
    ///
    /// Bounds are checked before any request ([`DateRange`],
    /// [`ListOptions`]). Each page is retried on transient failures.
    #[deprecated(
        since = "0.1.0",
        note = "Google deprecated conversion.get (removal scheduled for Q3 2025): use \
                SearchAdsClient::conversion_report (a report on the `conversion` resource of the Search \
                Ads 360 Reporting API; IdLookup translates legacy ids); see the crate docs' migration section"
    )]
    pub fn list_conversions(
        &self,
        account: EngineAccount,
        dates: DateRange,
    ) -> ListConversionsRequest {
        ListConversionsRequest {
            client: self.clone(),
            scope: Scope::EngineAccount(account),
            dates,
            options: ListOptions::default(),
        }
    }

    /// The conversions of a customer of the new Search Ads 360 experience in a
    /// date range. Like [`list_conversions`](Self::list_conversions).
    #[deprecated(
        since = "0.1.0",
        note = "Google deprecated conversion.getByCustomerId (removal scheduled for Q3 2025): use \
                SearchAdsClient::conversion_report (a report on the `conversion` resource of the Search \
                Ads 360 Reporting API); see the crate docs' migration section"
    )]
    pub fn list_conversions_by_customer(
        &self,
        customer: CustomerId,
        dates: DateRange,
    ) -> ListConversionsRequest {
        ListConversionsRequest {
            client: self.clone(),
            scope: Scope::Customer(customer),
            dates,
            options: ListOptions::default(),
        }
    }

    /// The stream of a read: each page one call (retries, deadline, the status
    /// on the span) of [`page::fetch`], decoded straight into conversions.
    fn conversion_stream(
        &self,
        operation: &'static str,
        query: page::PageQuery,
        look_ahead: usize,
    ) -> ConversionStream {
        let inner = self.inner.clone();
        let page_size = query.row_count;
        let query = Arc::new(query);
        listing(operation, page_size, look_ahead, move |start_row| {
            let (inner, query) = (inner.clone(), query.clone());
            async move {
                let (api, page_query) = (&inner.api, &*query);
                let rows = inner
                    .calls
                    .run(operation, move |_| async move {
                        page::fetch(api, page_query, start_row)
                            .await
                            .map_err(|e| wire::map_error(operation, e))
                    })
                    .await?;
                rows.map_err(|detail| Error::unexpected(operation, Some(200), detail))
            }
        })
    }
}

/// Whose conversions a [`ListConversionsRequest`] reads.
#[derive(Debug, Clone)]
enum Scope {
    EngineAccount(EngineAccount),
    Customer(CustomerId),
}

/// A v2 conversion read, configured and not sent yet. Made by
/// [`SearchAdsClient::list_conversions`] and
/// [`SearchAdsClient::list_conversions_by_customer`]; nothing is sent before
/// its [`stream`](Self::stream) is polled.
///
/// ```no_run
/// use futures::TryStreamExt;
/// use sa360_video_sdk::search_ads::{CampaignId, DateRange, EngineAccount, SearchAdsClient};
/// # async fn run(client: SearchAdsClient, account: EngineAccount, dates: DateRange) -> Result<(), sa360_video_sdk::search_ads::Error> {
/// #[allow(deprecated)] // conversion.get is deprecated by Google, and still answers
/// let mut conversions = client
///     .list_conversions(account, dates)
///     .page_size(500)
///     .campaign_id(CampaignId::new(71700000001899732))
///     .stream();
/// while let Some(conversion) = conversions.try_next().await? {
///     println!("{:?}", conversion.conversion_id);
/// }
/// # Ok(()) }
/// ```
#[derive(Debug, Clone)]
#[must_use = "a read does nothing until its .stream() is polled"]
pub struct ListConversionsRequest {
    client: SearchAdsClient,
    scope: Scope,
    dates: DateRange,
    options: ListOptions,
}

/// Writes request setters that forward to the [`ListOptions`] setter of the same name.
macro_rules! forward_setters {
    ($($(#[$doc:meta])* $name:ident: $ty:ty),+ $(,)?) => {
        $(
            $(#[$doc])*
            pub fn $name(mut self, value: $ty) -> Self {
                self.options = self.options.$name(value);
                self
            }
        )+
    };
}

impl ListConversionsRequest {
    /// All options at once (replaces what the setters set before).
    pub fn options(mut self, options: ListOptions) -> Self {
        self.options = options;
        self
    }

    paging_setters!(options.paging);

    forward_setters! {
        /// Page size and pages in flight; see [`ListOptions::paging`].
        paging: Paging,
        /// Only this campaign.
        campaign_id: CampaignId,
        /// Only this ad group.
        ad_group_id: AdGroupId,
        /// Only this ad.
        ad_id: AdId,
        /// Only this criterion.
        criterion_id: CriterionId,
        /// Only this customer ([`list_conversions`](SearchAdsClient::list_conversions) only).
        customer_id: CustomerId,
        /// Only this agency ([`list_conversions_by_customer`](SearchAdsClient::list_conversions_by_customer) only).
        agency_id: AgencyId,
        /// Only this advertiser (`list_conversions_by_customer` only).
        advertiser_id: AdvertiserId,
        /// Only this engine account (`list_conversions_by_customer` only).
        engine_account_id: EngineAccountId,
    }

    /// The conversions, in the server's order. Invalid options are the
    /// stream's first and only item, before any request is sent.
    pub fn stream(self) -> ConversionStream {
        let Self {
            client,
            scope,
            dates,
            options,
        } = self;
        if let Err(error) = options.validate(matches!(scope, Scope::Customer(_))) {
            return Rows::refused(error);
        }
        let Paging {
            page_size,
            look_ahead,
        } = options.paging;
        let (operation, owner) = match scope {
            Scope::EngineAccount(a) => (
                OP_GET,
                page::Owner::EngineAccount {
                    agency_id: a.agency_id.get(),
                    advertiser_id: a.advertiser_id.get(),
                    engine_account_id: a.engine_account_id.get(),
                },
            ),
            Scope::Customer(c) => (
                OP_GET_BY_CUSTOMER,
                page::Owner::Customer(c.as_str().to_owned()),
            ),
        };
        let query = page::PageQuery {
            owner,
            dates: dates.wire(),
            row_count: page_size,
            filters: page::Filters {
                ad_group_id: options.ad_group_id.map(AdGroupId::get),
                ad_id: options.ad_id.map(AdId::get),
                advertiser_id: options.advertiser_id.map(AdvertiserId::get),
                agency_id: options.agency_id.map(AgencyId::get),
                campaign_id: options.campaign_id.map(CampaignId::get),
                criterion_id: options.criterion_id.map(CriterionId::get),
                customer_id: options.customer_id.map(|c| c.as_str().to_owned()),
                engine_account_id: options.engine_account_id.map(EngineAccountId::get),
            },
        };
        client.conversion_stream(operation, query, look_ahead)
    }
}

#[cfg(test)]
mod tests {

    use std::sync::Mutex;

    use std::sync::atomic::Ordering;

    use futures::{StreamExt, TryStreamExt};

    use super::*;

    fn fake_pages(
        total: u32,
        size: u32,
        calls: Arc<Mutex<Vec<u32>>>,
        fail_at: Option<u32>,
    ) -> ConversionStream {
        listing("conversion.get", size, 4, move |start| {
            calls.lock().unwrap().push(start);
            async move {
                if Some(start) == fail_at {
                    return Err(Error::unexpected("conversion.get", Some(500), "boom"));
                }
                let end = (start + size).min(total);
                Ok((start..end.max(start))
                    .map(|i| Conversion::new(format!("c{i}"), chrono::DateTime::UNIX_EPOCH))
                    .collect())
            }
        })
    }

    #[tokio::test]
    async fn pages_until_a_short_page_in_order() {
        for total in [0, 1, 9, 10, 11, 100, 105] {
            let calls = Arc::new(Mutex::new(Vec::new()));
            let got: Vec<_> = fake_pages(total, 10, calls.clone(), None)
                .try_collect()
                .await
                .unwrap();
            let ids: Vec<_> = got
                .iter()
                .map(|c| c.conversion_id.clone().unwrap())
                .collect();
            let want: Vec<_> = (0..total).map(|i| format!("c{i}")).collect();
            assert_eq!(ids, want, "total {total}");
            // Requests beyond the end are bounded by the look_ahead depth.
            let needed = total / 10 + 1;
            let made = calls.lock().unwrap().len() as u32;
            assert!(made >= needed && made <= needed + 3, "{total}: {made}");
        }
    }

    #[tokio::test]
    async fn a_listing_that_fits_in_one_page_costs_one_request() {
        for (total, want) in [(0, vec![0]), (9, vec![0]), (15, vec![0, 10, 20])] {
            let calls = Arc::new(Mutex::new(Vec::new()));
            let got: Vec<_> = fake_pages(total, 10, calls.clone(), None)
                .try_collect()
                .await
                .unwrap();
            assert_eq!(got.len(), total as usize);
            assert_eq!(*calls.lock().unwrap(), want, "total {total}");
        }
    }

    #[tokio::test]
    async fn pages_in_flight_start_at_one_and_double_up_to_the_look_ahead() {
        let in_flight = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let seen = Arc::new(Mutex::new(Vec::new()));
        let stream = {
            let (in_flight, seen) = (in_flight.clone(), seen.clone());
            listing("conversion.get", 10, 4, move |start| {
                let now = in_flight.fetch_add(1, Ordering::SeqCst) + 1;
                seen.lock().unwrap().push(now);
                let in_flight = in_flight.clone();
                async move {
                    tokio::task::yield_now().await;
                    in_flight.fetch_sub(1, Ordering::SeqCst);
                    let rows = if start < 200 { 10 } else { 0 };
                    Ok((0..rows)
                        .map(|i| {
                            Conversion::new(format!("c{start}-{i}"), chrono::DateTime::UNIX_EPOCH)
                        })
                        .collect())
                }
            })
        };
        let got: Vec<_> = stream.try_collect().await.unwrap();
        assert_eq!(got.len(), 200);
        let seen = seen.lock().unwrap();
        assert_eq!(seen[..3], [1, 1, 2], "{seen:?}");
        assert!(seen.iter().all(|&n| n <= 4), "{seen:?}");
        assert!(seen.len() <= 21 + 3, "{seen:?}");
    }

    #[tokio::test]
    async fn an_error_ends_the_stream_after_the_pages_before_it() {
        let calls = Arc::new(Mutex::new(Vec::new()));
        let items: Vec<_> = fake_pages(100, 10, calls, Some(30)).collect().await;
        assert_eq!(items.iter().filter(|r| r.is_ok()).count(), 30);
        assert!(items.last().unwrap().is_err());
        assert_eq!(items.len(), 31);
    }

    #[test]
    fn options_are_checked() {
        let ok = ListOptions::default();
        assert_eq!(ok.paging, Paging::new(MAX_PAGE_SIZE, 4));
        assert!(ok.validate(false).is_ok());
        for bad in [0, 1001] {
            let o = ListOptions::default().page_size(bad);
            let e = o.validate(false).unwrap_err();
            assert!(e.to_string().contains("page_size"), "{e}");
        }
        let o = ListOptions::default().look_ahead(0);
        assert!(o.validate(false).is_err());
        let o = ListOptions {
            agency_id: Some(AgencyId::new(1)),
            ..ListOptions::default()
        };
        assert!(o.validate(false).is_err());
        assert!(o.validate(true).is_ok());
        let o = ListOptions {
            customer_id: Some(CustomerId::new("1").unwrap()),
            ..ListOptions::default()
        };
        assert!(o.validate(true).is_err());
    }
}

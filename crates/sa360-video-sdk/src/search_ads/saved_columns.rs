//! `savedColumns.list`: the saved columns of an advertiser.

use super::client::SearchAdsClient;
use super::conversion::SavedColumn;
use super::error::Error;
use super::values::{AdvertiserId, AgencyId};
use super::wire;
use super::wire::send;

const OP_SAVED_COLUMNS: &str = "savedColumns.list";

impl SearchAdsClient {
    /// The saved columns of an advertiser: a [`SavedColumnsRequest`];
    /// [`send`](SavedColumnsRequest::send) it.
    pub fn saved_columns(
        &self,
        agency_id: impl Into<AgencyId>,
        advertiser_id: impl Into<AdvertiserId>,
    ) -> SavedColumnsRequest {
        SavedColumnsRequest {
            client: self.clone(),
            agency_id: agency_id.into(),
            advertiser_id: advertiser_id.into(),
        }
    }
}

/// `savedColumns.list`, not sent yet. Made by [`SearchAdsClient::saved_columns`].
///
/// ```no_run
/// use sa360_video_sdk::search_ads::{AdvertiserId, AgencyId, SearchAdsClient};
/// # async fn run(client: SearchAdsClient) -> Result<(), sa360_video_sdk::search_ads::Error> {
/// let columns = client
///     .saved_columns(AgencyId::new(20100000000000895), AdvertiserId::new(21700000000011523))
///     .send()
///     .await?;
/// for column in columns {
///     println!("{} ({:?})", column.name, column.column_type);
/// }
/// # Ok(()) }
/// ```
#[derive(Debug, Clone)]
#[must_use = "a request does nothing until .send()"]
pub struct SavedColumnsRequest {
    client: SearchAdsClient,
    agency_id: AgencyId,
    advertiser_id: AdvertiserId,
}

impl SavedColumnsRequest {
    /// Sends the request (retried on transient failures).
    pub async fn send(self) -> Result<Vec<SavedColumn>, Error> {
        let Self {
            client,
            agency_id,
            advertiser_id,
        } = self;
        let api = &client.inner.api;
        let list = client
            .inner
            .calls
            .run(OP_SAVED_COLUMNS, |_| async move {
                let call = api
                    .saved_columns_list()
                    .agency_id(agency_id.wire())
                    .advertiser_id(advertiser_id.wire())
                    .send();
                Ok(send(OP_SAVED_COLUMNS, call).await?.into_inner())
            })
            .await?;
        Ok(list
            .items
            .into_iter()
            .map(wire::saved_column_from_wire)
            .collect())
    }
}

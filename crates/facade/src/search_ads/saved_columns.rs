//! `savedColumns.list`: the saved columns of an advertiser.

use super::call::send;
use super::client::SearchAdsClient;
use super::conversion::SavedColumn;
use super::error::Error;
use super::values::{AdvertiserId, AgencyId};
use super::wire;

const OP_SAVED_COLUMNS: &str = "savedColumns.list";

impl SearchAdsClient {
    /// The saved columns of an advertiser.
    pub async fn saved_columns(
        &self,
        agency_id: AgencyId,
        advertiser_id: AdvertiserId,
    ) -> Result<Vec<SavedColumn>, Error> {
        let api = &self.inner.api;
        let list = self
            .inner
            .calls
            .run(OP_SAVED_COLUMNS, |_| async move {
                let call = api
                    .saved_columns_list()
                    .agency_id(agency_id)
                    .advertiser_id(advertiser_id)
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

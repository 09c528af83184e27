//! [`EngineAccount`]: the agency, advertiser and engine account that own conversions, shared
//! by the v2 read and the Reporting API's id lookup.

use super::values::{AdvertiserId, AgencyId, EngineAccountId};

/// An engine account, the scope of [`SearchAdsClient::list_conversions`](super::SearchAdsClient::list_conversions).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct EngineAccount {
    /// The agency.
    pub agency_id: AgencyId,
    /// The advertiser.
    pub advertiser_id: AdvertiserId,
    /// The engine account.
    pub engine_account_id: EngineAccountId,
}

impl EngineAccount {
    /// The engine account `engine_account_id` of `advertiser_id` in `agency_id`.
    pub fn new(
        agency_id: impl Into<AgencyId>,
        advertiser_id: impl Into<AdvertiserId>,
        engine_account_id: impl Into<EngineAccountId>,
    ) -> Self {
        Self {
            agency_id: agency_id.into(),
            advertiser_id: advertiser_id.into(),
            engine_account_id: engine_account_id.into(),
        }
    }
}

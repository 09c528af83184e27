//! The file's typed rows, and the buffers between the download, the parser and the reader.

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::search_ads::error::Error;
use crate::search_ads::values::{
    AdGroupId, AdId, AdvertiserId, AgencyId, CampaignId, CriterionId, CustomerId, EngineAccountId,
    EntityType,
};

/// Body chunks buffered between the download and the parser.
pub(crate) const CHUNKS_IN_FLIGHT: usize = 4;

/// Parsed rows buffered between the parser and the consumer (in the channel;
/// plus up to one batch of 64 being filled and one being consumed).
pub(crate) const ROWS_IN_FLIGHT: usize = 256;

/// Rows handed from the parser to the stream at once.
pub(crate) const ROW_BATCH: usize = 64;

/// Bytes csv reads from the chunks at once (its default is 8 KiB).
pub(crate) const CSV_BUFFER: usize = 64 * 1024;

/// A batch of parsed rows (an error is always the last item of its batch).
pub(crate) type RowBatch = Vec<Result<IdMappingRow, Error>>;

/// The header line of the file.
pub const HEADER: [&str; 3] = ["Entity Type", "Legacy IDs", "New IDs"];

/// A progress callback: bytes received so far, and the total when the server
/// announced it (`Content-Length`). Called from the download task after each
/// chunk; keep it cheap.
pub type ProgressFn = Arc<dyn Fn(u64, Option<u64>) + Send + Sync>;

/// One row of the ID-mapping file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IdMappingRow {
    /// The entity type (`CUSTOMER`, `CAMPAIGN`, `AD_GROUP`, `CRITERION`, or another).
    pub entity_type: EntityType,
    /// The ids in legacy Search Ads 360.
    pub legacy: EntityIds,
    /// The ids in the new Search Ads 360.
    pub new: EntityIds,
}

/// The ids of one ID cell (a JSON object with string values, SA-11).
///
/// Known keys become typed fields (the new platform's ids use the same types
/// as the legacy ones); any other key is kept in [`other`](Self::other).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct EntityIds {
    /// `agencyId`.
    pub agency_id: Option<AgencyId>,
    /// `advertiserId`.
    pub advertiser_id: Option<AdvertiserId>,
    /// `engineAccountId`.
    pub engine_account_id: Option<EngineAccountId>,
    /// `customerId`.
    pub customer_id: Option<CustomerId>,
    /// `campaignId`.
    pub campaign_id: Option<CampaignId>,
    /// `adGroupId`.
    pub ad_group_id: Option<AdGroupId>,
    /// `adId`.
    pub ad_id: Option<AdId>,
    /// `criterionId`.
    pub criterion_id: Option<CriterionId>,
    /// Keys this version does not know, with their values as text.
    pub other: BTreeMap<String, String>,
}

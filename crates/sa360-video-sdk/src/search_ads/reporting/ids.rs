//! Legacy → new ids, built from the ID-mapping file (SR-12), so a caller holding legacy ids can
//! ask the Reporting API.

use std::collections::HashMap;

use futures::{Stream, StreamExt};

use super::super::client::SearchAdsClient;
use super::super::engine_account::EngineAccount;
use super::super::error::Error;
use super::super::id_mapping::{IdMappingRequest, IdMappingRow, ProgressFn};
use super::super::read::ListOptions;
use super::super::values::{
    AdGroupId, AdvertiserId, AgencyId, CampaignId, CustomerId, EngineAccountId, EntityType,
};
use super::query::filters::ReportFilters;

/// A lookup from legacy (agency / advertiser / engine account / campaign / ad group) ids to the
/// new customer / campaign / ad-group ids, filled from the ID-mapping file's `CUSTOMER`,
/// `CAMPAIGN` and `AD_GROUP` rows. `CRITERION` rows are skipped: conversion criteria keep their ids
/// (SR-12). Memory: about 100 bytes per campaign or ad group.
///
/// ```
/// use sa360_video_sdk::search_ads::reporting::IdLookup;
/// use sa360_video_sdk::search_ads::{
///     AdvertiserId, AgencyId, CampaignId, CustomerId, EngineAccount, EntityIds, EntityType,
///     IdMappingRow, ListOptions,
/// };
/// let mut lookup = IdLookup::default();
/// let ids = |engine, campaign: Option<i64>| EntityIds {
///     agency_id: Some(AgencyId::new(1)),
///     advertiser_id: Some(AdvertiserId::new(2)),
///     engine_account_id: Some(engine),
///     campaign_id: campaign.map(CampaignId::new),
///     ..EntityIds::default()
/// };
/// let customer = CustomerId::new("2000012350")?;
/// let new = |campaign: Option<i64>| EntityIds {
///     customer_id: Some(customer.clone()),
///     campaign_id: campaign.map(CampaignId::new),
///     ..EntityIds::default()
/// };
/// lookup.add(&IdMappingRow { entity_type: EntityType::Customer, legacy: ids(3.into(), None), new: new(None) });
/// lookup.add(&IdMappingRow { entity_type: EntityType::Campaign, legacy: ids(3.into(), Some(717)), new: new(Some(14)) });
///
/// let account = EngineAccount::new(AgencyId::new(1), AdvertiserId::new(2), 3);
/// let options = ListOptions::default().campaign_id(CampaignId::new(717));
/// let (customer, filters) = lookup.translate(account, &options)?;
/// assert_eq!(customer.as_str(), "2000012350");
/// assert_eq!(filters.campaign_ids, vec![CampaignId::new(14)]);
///
/// let unknown = ListOptions::default().campaign_id(CampaignId::new(999));
/// let e = lookup.translate(account, &unknown).unwrap_err().to_string();
/// assert!(e.contains("campaign 999"), "{e}");
/// # Ok::<(), sa360_video_sdk::search_ads::Error>(())
/// ```
#[derive(Debug, Clone, Default)]
pub struct IdLookup {
    engine_accounts: HashMap<EngineAccountId, (AdvertiserId, CustomerId)>,
    campaigns: HashMap<CampaignId, (CustomerId, CampaignId)>,
    ad_groups: HashMap<AdGroupId, (CustomerId, AdGroupId)>,
}

impl IdLookup {
    /// Adds one row of the file (rows without the needed ids are ignored).
    pub fn add(&mut self, row: &IdMappingRow) {
        let Some(customer) = row.new.customer_id else {
            return;
        };
        match row.entity_type {
            EntityType::Customer => {
                if let (Some(engine), Some(advertiser)) =
                    (row.legacy.engine_account_id, row.legacy.advertiser_id)
                {
                    self.engine_accounts.insert(engine, (advertiser, customer));
                }
            }
            EntityType::Campaign => {
                if let (Some(old), Some(new)) = (row.legacy.campaign_id, row.new.campaign_id) {
                    self.campaigns.insert(old, (customer, new));
                }
            }
            EntityType::AdGroup => {
                if let (Some(old), Some(new)) = (row.legacy.ad_group_id, row.new.ad_group_id) {
                    self.ad_groups.insert(old, (customer, new));
                }
            }
            _ => {}
        }
    }

    /// Reads a whole ID-mapping stream ([`SearchAdsClient::id_mapping`]).
    pub async fn from_rows(
        mut rows: impl Stream<Item = Result<IdMappingRow, Error>> + Unpin,
    ) -> Result<Self, Error> {
        let mut lookup = Self::default();
        while let Some(row) = rows.next().await {
            lookup.add(&row?);
        }
        Ok(lookup)
    }

    /// The customer of a legacy engine account.
    pub fn customer(&self, engine_account: EngineAccountId) -> Option<&CustomerId> {
        self.engine_accounts.get(&engine_account).map(|(_, c)| c)
    }

    /// The new id of a legacy campaign.
    pub fn campaign(&self, legacy: CampaignId) -> Option<CampaignId> {
        self.campaigns.get(&legacy).map(|(_, c)| *c)
    }

    /// The new id of a legacy ad group.
    pub fn ad_group(&self, legacy: AdGroupId) -> Option<AdGroupId> {
        self.ad_groups.get(&legacy).map(|(_, g)| *g)
    }

    /// The customer and report filters that ask the Reporting API what
    /// [`list_conversions`](super::super::SearchAdsClient::list_conversions) with `account` and `options`
    /// asked v2. Every legacy id must be in the file and belong to the account's customer; the
    /// error names every one that is not. `options.customer_id` and `paging` have
    /// no v0 counterpart here and are ignored.
    pub fn translate(
        &self,
        account: EngineAccount,
        options: &ListOptions,
    ) -> Result<(CustomerId, ReportFilters), Error> {
        let mut unknown = Vec::new();
        let customer = match self.engine_accounts.get(&account.engine_account_id) {
            Some((advertiser, customer)) if *advertiser == account.advertiser_id => Some(*customer),
            _ => {
                unknown.push(format!(
                    "engine account {} of advertiser {}",
                    account.engine_account_id, account.advertiser_id
                ));
                None
            }
        };
        let mut filters = ReportFilters::default();
        let owned_by = |c: &CustomerId| customer.as_ref().is_none_or(|own| own == c);
        if let Some(id) = options.campaign_id {
            match self.campaigns.get(&id) {
                Some((c, new)) if owned_by(c) => filters.campaign_ids.push(*new),
                Some((c, _)) => unknown.push(format!("campaign {id} (it belongs to customer {c})")),
                None => unknown.push(format!("campaign {id}")),
            }
        }
        if let Some(id) = options.ad_group_id {
            match self.ad_groups.get(&id) {
                Some((c, new)) if owned_by(c) => filters.ad_group_ids.push(*new),
                Some((c, _)) => unknown.push(format!("ad group {id} (it belongs to customer {c})")),
                None => unknown.push(format!("ad group {id}")),
            }
        }
        filters.ad_ids.extend(options.ad_id);
        filters.criterion_ids.extend(options.criterion_id);
        match customer {
            Some(customer) if unknown.is_empty() => Ok((customer, filters)),
            _ => Err(Error::validation(
                "legacy ids",
                None,
                format!(
                    "not in the ID-mapping file: {}. Download a fresh file (SearchAdsClient::id_mapping) \
                     or use the new ids",
                    unknown.join(", ")
                ),
            )),
        }
    }
}

impl SearchAdsClient {
    /// Downloads the advertiser's ID-mapping file and builds the legacy → new [`IdLookup`]:
    /// an [`IdLookupRequest`]; [`send`](IdLookupRequest::send) it.
    pub fn id_lookup(
        &self,
        agency_id: impl Into<AgencyId>,
        advertiser_id: impl Into<AdvertiserId>,
    ) -> IdLookupRequest {
        IdLookupRequest {
            download: self.id_mapping(agency_id, advertiser_id),
        }
    }
}

/// The [`IdLookup`] of an advertiser, not downloaded yet. Made by
/// [`SearchAdsClient::id_lookup`].
///
/// ```no_run
/// use sa360_video_sdk::search_ads::{AdvertiserId, AgencyId, CampaignId, SearchAdsClient};
/// # async fn run(client: SearchAdsClient) -> Result<(), sa360_video_sdk::search_ads::Error> {
/// let lookup = client
///     .id_lookup(AgencyId::new(20100000000000895), AdvertiserId::new(21700000000011523))
///     .progress(|bytes, total| eprintln!("{bytes} of {total:?} bytes"))
///     .send()
///     .await?;
/// println!("{:?}", lookup.campaign(CampaignId::new(71700000001899732)));
/// # Ok(()) }
/// ```
#[derive(Debug, Clone)]
#[must_use = "a request does nothing until .send()"]
pub struct IdLookupRequest {
    download: IdMappingRequest,
}

impl IdLookupRequest {
    /// Calls `progress` with the bytes of the ID-mapping file received so far and the total
    /// when the server announced it.
    pub fn progress(mut self, progress: impl Fn(u64, Option<u64>) + Send + Sync + 'static) -> Self {
        self.download = self.download.progress(progress);
        self
    }

    /// Like [`progress`](Self::progress), with a shared callback.
    pub fn progress_shared(mut self, progress: ProgressFn) -> Self {
        self.download = self.download.progress_shared(progress);
        self
    }

    /// Downloads the file (in constant memory) and builds the lookup.
    pub async fn send(self) -> Result<IdLookup, Error> {
        IdLookup::from_rows(self.download.stream()).await
    }
}

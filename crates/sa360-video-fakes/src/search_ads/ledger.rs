//! The search ads fake's state and the ledger tests read it through.

use std::collections::BTreeMap;
use std::ops::Bound;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use serde_json::Value;

use crate::faults::{FaultInjector, FaultRecord};
use crate::search_ads::record::Record;

/// Who a conversion belongs to (SA-15): the advertiser, or the customer when the conversion
/// names no advertiser (and no click ID it could be attributed through).
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Owner {
    /// By `advertiserId`.
    Advertiser(i64),
    /// By `customerId` (a conversion without `advertiserId`).
    Customer(String),
}

/// An owner's conversion ID. A stored conversion's identity is this key *and* its timestamp
/// (SA-15: the pair (`conversionId`, `conversionTimestamp`) is unique per advertiser), so one key
/// may name several stored conversions with different timestamps.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ConversionKey {
    /// Its owner.
    pub owner: Owner,
    /// Its `conversionId`.
    pub conversion_id: String,
}

impl ConversionKey {
    /// A key for an advertiser's conversion.
    #[must_use]
    pub fn advertiser(advertiser_id: i64, conversion_id: impl Into<String>) -> Self {
        Self {
            owner: Owner::Advertiser(advertiser_id),
            conversion_id: conversion_id.into(),
        }
    }

    /// A key for a customer's conversion (one sent without `advertiserId`).
    #[must_use]
    pub fn customer(customer_id: impl Into<String>, conversion_id: impl Into<String>) -> Self {
        Self {
            owner: Owner::Customer(customer_id.into()),
            conversion_id: conversion_id.into(),
        }
    }
}

/// Where a stored conversion came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Origin {
    /// Stored by `insert`.
    Inserted,
    /// A seeded conversion that `update` changed (unchanged seeded conversions are never stored).
    SeededUpdated,
}

/// A conversion the fake stores, exactly once per ([`ConversionKey`], timestamp).
#[derive(Clone, Debug, PartialEq)]
pub struct StoredConversion {
    /// Its identity.
    pub key: ConversionKey,
    /// The conversion as the fake answers it (int64 values as strings, `dsConversionId` and
    /// `conversionModifiedTimestamp` filled in).
    pub conversion: Value,
    /// Where it came from.
    pub origin: Origin,
    /// Its `dsConversionId`.
    pub ds_conversion_id: i64,
    /// Its `conversionTimestamp` in epoch milliseconds.
    pub timestamp_ms: i64,
    /// The fake's request number that stored it (insert) or first changed it (seeded).
    pub request: u64,
    /// How many successful updates changed it.
    pub updates: u32,
    /// How many times it is stored: 1, more only when the fake runs without deduplication
    /// ([`SearchAdsConfig::deduplicate`](super::SearchAdsConfig::deduplicate)) and it was inserted
    /// again.
    pub copies: u32,
}

/// A stored conversion as the store keeps it (its key and timestamp are the store's key).
#[derive(Clone, Debug)]
pub(crate) struct Stored {
    /// The conversion as the fake answers it.
    pub record: Record,
    /// As [`StoredConversion::origin`].
    pub origin: Origin,
    /// As [`StoredConversion::ds_conversion_id`].
    pub ds_conversion_id: i64,
    /// As [`StoredConversion::request`].
    pub request: u64,
    /// As [`StoredConversion::updates`].
    pub updates: u32,
    /// As [`StoredConversion::copies`].
    pub copies: u32,
}

impl Stored {
    /// The ledger's view of it.
    fn to_public(&self, (key, timestamp_ms): &(ConversionKey, i64)) -> StoredConversion {
        StoredConversion {
            key: key.clone(),
            conversion: self.record.to_value(),
            origin: self.origin,
            ds_conversion_id: self.ds_conversion_id,
            timestamp_ms: *timestamp_ms,
            request: self.request,
            updates: self.updates,
            copies: self.copies,
        }
    }
}

/// [`SearchAdsCounts`] (one snapshot) and `Counters` (the live counters behind it), field for
/// field; `requests` is the fault layer's count.
macro_rules! counters {
    ($($(#[$doc:meta])* $name:ident,)*) => {
        /// Counters of the search ads fake, as one snapshot.
        #[derive(Clone, Debug, Default, PartialEq, Eq)]
        pub struct SearchAdsCounts {
            /// Every HTTP request the fake received (token endpoint included, faulted ones
            /// included).
            pub requests: u64,
            $($(#[$doc])* pub $name: u64,)*
        }

        #[derive(Default)]
        pub(crate) struct Counters {
            $(pub $name: AtomicU64,)*
        }

        impl Counters {
            fn snapshot(&self, requests: u64) -> SearchAdsCounts {
                let load = |a: &AtomicU64| a.load(Ordering::Relaxed);
                SearchAdsCounts { requests, $($name: load(&self.$name),)* }
            }
        }
    };
}

counters! {
    /// `insert` calls that reached the handler.
    insert_requests,
    /// `update` calls that reached the handler.
    update_requests,
    /// `get` and `getByCustomerId` calls that reached the handler.
    read_requests,
    /// `updateAvailability` calls that reached the handler.
    availability_requests,
    /// ID-mapping downloads started.
    id_mapping_downloads,
    /// `savedColumns.list` calls.
    saved_columns_requests,
    /// Conversions insert accepted (stored, or in the bench mode answered and not kept).
    conversions_inserted,
    /// Conversion updates applied.
    conversions_updated,
    /// Conversions rejected by insert or update (one per detail of a 400 answer).
    conversions_rejected,
    /// Access tokens issued by the token endpoint.
    tokens_issued,
    /// Requests refused with 401.
    unauthorized,
    /// Reporting API (v0) `searchAds360:search` requests that reached the handler.
    reporting_search_requests,
    /// Reporting API (v0) `searchAds360:searchStream` requests that reached the handler.
    reporting_stream_requests,
    /// Reporting API (v0) requests of the other methods that reached their handler.
    reporting_other_requests,
    /// Injected `RESOURCE_EXHAUSTED` answers of the Reporting API's search.
    reporting_quota_faults,
    /// Injected `EXPIRED_PAGE_TOKEN` answers of the Reporting API's search.
    reporting_expired_token_faults,
    /// Pages of the Reporting API's search answered with rows or an empty result (and batches
    /// of rows of its searchStream).
    reporting_pages,
}

impl Counters {
    pub(crate) fn bump(counter: &AtomicU64) {
        counter.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn add(counter: &AtomicU64, n: u64) {
        counter.fetch_add(n, Ordering::Relaxed);
    }
}

/// The mutable conversion store.
#[derive(Default)]
pub(crate) struct Store {
    /// By key and `conversionTimestamp` (SA-15).
    pub conversions: BTreeMap<(ConversionKey, i64), Stored>,
    /// Per account number: the inserted conversions that account's reads show, by timestamp.
    pub views: Vec<BTreeMap<(i64, String), (ConversionKey, i64)>>,
    /// Per account number: how many of its seeded conversions were updated.
    pub seeded_overrides: Vec<u64>,
    pub next_ds_id: i64,
    pub availabilities: Vec<Value>,
}

impl Store {
    /// The stored conversion of `key` with the earliest timestamp.
    pub(crate) fn first_of(&self, key: &ConversionKey) -> Option<(&(ConversionKey, i64), &Stored)> {
        self.conversions
            .range((
                Bound::Included((key.clone(), i64::MIN)),
                Bound::Included((key.clone(), i64::MAX)),
            ))
            .next()
    }
}

/// Shared state behind the fake and its ledger handle.
pub(crate) struct Shared {
    pub store: Mutex<Store>,
    pub counters: Counters,
    pub faults: Arc<FaultInjector>,
}

impl Shared {
    pub(crate) fn store(&self) -> MutexGuard<'_, Store> {
        self.store.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Read access to what the search ads fake stored and counted. Cheap to clone; every accessor
/// takes a snapshot at the moment it is called.
#[derive(Clone)]
pub struct SearchAdsLedger {
    pub(crate) shared: Arc<Shared>,
}

impl std::fmt::Debug for SearchAdsLedger {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SearchAdsLedger")
            .field("counts", &self.counts())
            .finish_non_exhaustive()
    }
}

impl SearchAdsLedger {
    /// The stored conversion with this key and the earliest timestamp, if any (a key names
    /// several conversions when its ID was inserted with different timestamps, SA-15).
    #[must_use]
    pub fn conversion(&self, key: &ConversionKey) -> Option<StoredConversion> {
        self.shared
            .store()
            .first_of(key)
            .map(|(key, stored)| stored.to_public(key))
    }

    /// The stored conversion with this key and this `conversionTimestamp` (epoch ms), if any.
    #[must_use]
    pub fn conversion_at(
        &self,
        key: &ConversionKey,
        timestamp_ms: i64,
    ) -> Option<StoredConversion> {
        let key = (key.clone(), timestamp_ms);
        self.shared
            .store()
            .conversions
            .get(&key)
            .map(|stored| stored.to_public(&key))
    }

    /// Whether a conversion with this key (any timestamp) is stored.
    #[must_use]
    pub fn contains(&self, key: &ConversionKey) -> bool {
        self.shared.store().first_of(key).is_some()
    }

    /// Every stored conversion (inserted ones and updated seeded ones), sorted by key, then
    /// timestamp.
    #[must_use]
    pub fn conversions(&self) -> Vec<StoredConversion> {
        self.shared
            .store()
            .conversions
            .iter()
            .map(|(key, stored)| stored.to_public(key))
            .collect()
    }

    /// Stored copies beyond the first, over every conversion: 0 unless the fake runs without
    /// deduplication and a conversion was inserted again.
    #[must_use]
    pub fn extra_copies(&self) -> u64 {
        self.shared
            .store()
            .conversions
            .values()
            .map(|c| u64::from(c.copies.saturating_sub(1)))
            .sum()
    }

    /// The number of stored conversions.
    #[must_use]
    pub fn stored_count(&self) -> usize {
        self.shared.store().conversions.len()
    }

    /// Every availability that `updateAvailability` recorded, in order, as answered.
    #[must_use]
    pub fn availabilities(&self) -> Vec<Value> {
        self.shared.store().availabilities.clone()
    }

    /// Every injected fault, in order.
    #[must_use]
    pub fn faults(&self) -> Vec<FaultRecord> {
        self.shared.faults.records()
    }

    /// All counters.
    #[must_use]
    pub fn counts(&self) -> SearchAdsCounts {
        self.shared.counters.snapshot(self.shared.faults.requests())
    }
}

//! Shared helpers of the `search_ads_*` integration tests (included with
//! `#[path]`; as a test target of its own it has no tests).

#![allow(dead_code)]

use std::time::Duration;

use sa360_video_fakes::{SearchAdsFake, SearchAdsFakeBuilder};
use sa360_video_sdk::search_ads::{
    AdvertiserId, AgencyId, EngineAccount, RetryPolicy, SearchAdsClient, StaticToken, WriteOptions,
};

/// A retry policy for tests: many attempts, millisecond backoff. (A
/// `Retry-After` from the fake still costs its full second.)
pub fn fast_retries(max_attempts: u32) -> RetryPolicy {
    RetryPolicy::default()
        .max_attempts(max_attempts)
        .base_delay(Duration::from_millis(2))
        .max_delay(Duration::from_millis(40))
        .max_retry_after(Duration::from_secs(5))
}

/// Starts a fake.
pub async fn start(builder: SearchAdsFakeBuilder) -> SearchAdsFake {
    builder.start().await.expect("the fake starts")
}

/// A client of `fake` with its development token.
pub fn client(fake: &SearchAdsFake, retry: RetryPolicy, write: WriteOptions) -> SearchAdsClient {
    SearchAdsClient::builder(StaticToken::new(fake.dev_token()))
        .base_url(fake.base_url())
        .retry_policy(retry)
        .write_options(write)
        .build()
        .expect("the client builds")
}

/// Engine account number `i` of the fake.
pub fn account(fake: &SearchAdsFake, i: usize) -> EngineAccount {
    let a = &fake.accounts()[i];
    EngineAccount::new(a.agency_id, a.advertiser_id, a.engine_account_id)
}

/// Agency and advertiser of account number `i`.
pub fn advertiser(fake: &SearchAdsFake, i: usize) -> (AgencyId, AdvertiserId) {
    let a = &fake.accounts()[i];
    (
        AgencyId::new(a.agency_id),
        AdvertiserId::new(a.advertiser_id),
    )
}

/// A valid conversion of the fake's first account: Floodlight activity
/// 551234, a transaction of 1 EUR + `n` micros at 2024-06-01T00:00:00Z + `n` s.
pub fn valid_conversion(
    fake: &SearchAdsFake,
    id: &str,
    n: i64,
) -> sa360_video_sdk::search_ads::Conversion {
    use sa360_video_sdk::search_ads::{Conversion, EngineAccountId, SegmentationId};
    use sa360_video_sdk::search_ads::{ConversionType, Micros};
    let a = &fake.accounts()[0];
    Conversion {
        agency_id: Some(AgencyId::new(a.agency_id)),
        advertiser_id: Some(AdvertiserId::new(a.advertiser_id)),
        engine_account_id: Some(EngineAccountId::new(a.engine_account_id)),
        segmentation_id: Some(SegmentationId::new(551_234)),
        conversion_type: Some(ConversionType::Transaction),
        revenue_micros: Some(Micros::new(1_000_000 + n)),
        currency_code: Some("EUR".into()),
        ..Conversion::new(
            id,
            chrono::DateTime::from_timestamp_millis(1_717_200_000_000 + n * 1000)
                .expect("a valid time"),
        )
    }
}

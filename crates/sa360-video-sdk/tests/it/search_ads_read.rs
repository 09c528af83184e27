//! Reading conversions against the fake: paging exactly once and in order,
//! with and without prefetch, with and without injected faults; bounds checked
//! before any request.

#![allow(deprecated)] // the read methods wrap Google's deprecated conversion.get

use crate::search_ads_support as support;

use std::time::Duration;

use chrono::NaiveDate;
use futures::TryStreamExt;
use sa360_video_fakes::{Faults, SearchAdsFake};
use sa360_video_sdk::search_ads::{
    CampaignId, CustomerId, DateRange, Error, ListOptions, RetryPolicy, WriteOptions,
};

const SEEDED: u64 = 50_000;

async fn fake_with(faults: Faults) -> SearchAdsFake {
    support::start(
        SearchAdsFake::builder()
            .conversions_per_account(SEEDED)
            .conversions_per_day(2_000)
            .start_date(day(2024, 1, 1))
            .faults(faults),
    )
    .await
}

fn day(y: i32, m: u32, d: u32) -> NaiveDate {
    NaiveDate::from_ymd_opt(y, m, d).expect("a valid date")
}

fn whole_year() -> DateRange {
    DateRange::new(day(2024, 1, 1), day(2024, 12, 31)).expect("a valid range")
}

/// 20% of read requests fail: 429 and 503 with `Retry-After` (1% each; each
/// costs a one-second wait), 500s, connections closed before the answer and
/// answers cut in the middle of the body.
fn twenty_percent(seed: u64) -> Faults {
    Faults::seeded(seed)
        .with_rate_limited(0.01)
        .with_unavailable(0.01)
        .with_internal_error(0.08)
        .with_drop_before_response(0.05)
        .with_drop_mid_body(0.05)
}

async fn read_all(fake: &SearchAdsFake, prefetch: usize, retry: RetryPolicy) -> Vec<String> {
    let client = support::client(fake, retry, WriteOptions::default());
    let options = ListOptions::default().page_size(1000).look_ahead(prefetch);
    let conversions: Vec<_> = client
        .list_conversions(support::account(fake, 0), whole_year())
        .options(options)
        .stream()
        .try_collect()
        .await
        .expect("the stream completes");
    conversions
        .into_iter()
        .map(|c| c.conversion_id.expect("every conversion has an id"))
        .collect()
}

fn expected_ids(fake: &SearchAdsFake) -> Vec<String> {
    (0..SEEDED)
        .map(|i| {
            fake.seeded_conversion_id(0, i)
                .expect("a seeded conversion")
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_conversion_once_in_order_with_and_without_prefetch() {
    let fake = fake_with(Faults::none()).await;
    let want = expected_ids(&fake);
    for prefetch in [1, 4] {
        let before = fake.ledger().counts().read_requests;
        let got = read_all(&fake, prefetch, RetryPolicy::no_retries()).await;
        assert_eq!(got.len(), want.len(), "prefetch {prefetch}");
        assert!(
            got == want,
            "prefetch {prefetch}: conversions differ or are out of order"
        );
        let requests = fake.ledger().counts().read_requests - before;
        // 50 full pages and one empty page; prefetch may add at most 3 more.
        let pages = SEEDED / 1000 + 1;
        assert!(
            requests >= pages && requests < pages + prefetch as u64,
            "prefetch {prefetch}: {requests} requests"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_conversion_once_in_order_under_twenty_percent_faults() {
    for (prefetch, seed) in [(1, 7), (4, 11)] {
        let fake = fake_with(twenty_percent(seed)).await;
        let want = expected_ids(&fake);
        let got = read_all(&fake, prefetch, support::fast_retries(12)).await;
        assert_eq!(got.len(), want.len(), "prefetch {prefetch}");
        assert!(
            got == want,
            "prefetch {prefetch}: conversions differ or are out of order"
        );
        let faults = fake.ledger().faults();
        assert!(
            faults.len() >= 5,
            "prefetch {prefetch}: only {} faults were injected",
            faults.len()
        );
        eprintln!(
            "prefetch {prefetch}: {} requests, {} faults",
            fake.ledger().counts().requests,
            faults.len()
        );
    }
}

#[tokio::test]
async fn reads_by_customer_see_the_same_conversions() {
    let fake = support::start(
        SearchAdsFake::builder()
            .conversions_per_account(2_500)
            .conversions_per_day(500)
            .start_date(day(2024, 1, 1)),
    )
    .await;
    let client = support::client(&fake, RetryPolicy::no_retries(), WriteOptions::default());
    let customer = CustomerId::new(fake.accounts()[0].customer_id.clone()).expect("an id");
    let options = ListOptions::default().page_size(700).look_ahead(2);
    let by_customer: Vec<_> = client
        .list_conversions_by_customer(customer, whole_year())
        .options(options.clone())
        .stream()
        .try_collect()
        .await
        .expect("the stream completes");
    let by_account: Vec<_> = client
        .list_conversions(support::account(&fake, 0), whole_year())
        .options(options)
        .stream()
        .try_collect()
        .await
        .expect("the stream completes");
    assert_eq!(by_customer.len(), 2_500);
    assert_eq!(by_customer, by_account);
    // The id as Google's UI shows it (`123-456-7890`) is the same customer: the digits are sent
    // (issue 38: a dashed id used to reach the service as typed and come back 403).
    let digits = fake.accounts()[0].customer_id.clone();
    let dashed = format!("{}-{}-{}", &digits[..3], &digits[3..6], &digits[6..]);
    let by_dashed: Vec<_> = client
        .list_conversions_by_customer(CustomerId::new(dashed).expect("a dashed id"), whole_year())
        .options(ListOptions::default().page_size(1000).look_ahead(2))
        .stream()
        .try_collect()
        .await
        .expect("the stream completes");
    assert_eq!(by_dashed, by_customer);
    // Typed values survived the trip.
    let first = &by_account[0];
    assert_eq!(
        first.conversion_id,
        fake.seeded_conversion_id(0, 0),
        "the first conversion"
    );
    assert!(first.conversion_timestamp.is_some());
    assert!(first.segmentation_type.is_some());
    // A date range narrows the listing: 500 conversions per day.
    let one_day: Vec<_> = client
        .list_conversions(
            support::account(&fake, 0),
            DateRange::day(day(2024, 1, 2)).expect("a valid day"),
        )
        .stream()
        .try_collect()
        .await
        .expect("the stream completes");
    assert_eq!(one_day.len(), 500);
    assert_eq!(one_day[0].conversion_id, fake.seeded_conversion_id(0, 500));
}

#[tokio::test]
async fn bounds_are_checked_before_any_request() {
    let fake = fake_with(Faults::none()).await;
    let client = support::client(&fake, RetryPolicy::no_retries(), WriteOptions::default());
    let account = support::account(&fake, 0);
    for page_size in [0, 1001] {
        let mut stream = client
            .list_conversions(account, whole_year())
            .page_size(page_size)
            .stream();
        let e = stream.try_next().await.expect_err("out of bounds");
        assert!(
            matches!(&e, Error::Validation { field, .. } if field == "page_size"),
            "{e}"
        );
        // The refusal is the stream's only item.
        assert!(stream.try_next().await.expect("no second error").is_none());
    }
    let e = client
        .list_conversions(account, whole_year())
        .options(ListOptions::default().look_ahead(0))
        .stream()
        .try_next()
        .await
        .expect_err("no look-ahead");
    assert!(e.to_string().contains("look_ahead"), "{e}");
    let e = DateRange::new(day(2009, 10, 31), day(2024, 1, 1)).expect_err("too early");
    assert!(e.to_string().contains("startDate"), "{e}");
    let e = DateRange::new(day(2024, 2, 1), day(2024, 1, 1)).expect_err("reversed");
    assert!(e.to_string().contains("after endDate"), "{e}");
    let e = client
        .list_conversions_by_customer(CustomerId::new("2000012350").expect("an id"), whole_year())
        .options(ListOptions::default().customer_id(CustomerId::new("1").expect("an id")))
        .stream()
        .try_next()
        .await
        .expect_err("customer filter on a customer listing");
    assert!(e.to_string().contains("customerId"), "{e}");
    assert_eq!(fake.ledger().counts().requests, 0, "nothing was sent");
}

#[tokio::test]
async fn filters_and_permission_errors() {
    let fake = fake_with(Faults::none()).await;
    let client = support::client(&fake, RetryPolicy::no_retries(), WriteOptions::default());
    // A campaign filter narrows the listing (to none, for an unknown campaign).
    let none: Vec<_> = client
        .list_conversions(support::account(&fake, 0), whole_year())
        .options(ListOptions::default().campaign_id(CampaignId::new(1)))
        .stream()
        .try_collect()
        .await
        .expect("the stream completes");
    assert!(none.is_empty());
    // An unknown engine account is a typed 403 that says what to check.
    let mut unknown = support::account(&fake, 0);
    unknown.engine_account_id = 1.into();
    let e = client
        .list_conversions(unknown, whole_year())
        .stream()
        .try_collect::<Vec<_>>()
        .await
        .expect_err("forbidden");
    match &e {
        Error::Api { status, reason, .. } => {
            assert_eq!(*status, 403);
            assert_eq!(reason.as_deref(), Some("insufficientPermissions"));
        }
        other => panic!("{other:?}"),
    }
    assert!(e.to_string().contains("permission"), "{e}");
    // Exhausted retries end the stream with the last error.
    fake.set_faults(Faults::seeded(1).with_internal_error(1.0))
        .expect("valid faults");
    let retry = RetryPolicy::default()
        .max_attempts(2)
        .base_delay(Duration::from_millis(1));
    let client = support::client(&fake, retry, WriteOptions::default());
    let e = client
        .list_conversions(support::account(&fake, 0), whole_year())
        .stream()
        .try_collect::<Vec<_>>()
        .await
        .expect_err("every attempt fails");
    assert_eq!(e.status(), Some(500));
    assert_eq!(
        fake.ledger().counts().requests,
        2 + 2,
        "two reads, then two attempts"
    );
}

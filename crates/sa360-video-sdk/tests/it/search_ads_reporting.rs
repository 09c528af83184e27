//! Conversion reports through the Reporting API against the fake: the same conversions as v2
//! after the id mapping (also for random ranges and filters), every row exactly once and in order
//! under 20 % injected faults, the window, `login-customer-id` and typed failures.

#![allow(deprecated)] // comparing with the deprecated v2 read is the point

use crate::search_ads_support as support;

use std::time::Duration;

use chrono::{Days, NaiveDate};
use futures::TryStreamExt;
use proptest::prelude::*;
use sa360_video_fakes::{Faults, ReportingFaults, SearchAdsFake, SearchAdsFakeBuilder};
use sa360_video_sdk::search_ads::{
    AdGroupId, AdId, CampaignId, Conversion, ConversionState, CriterionId, CustomerId, DateRange,
    Error, ListOptions, RetryPolicy, SearchAdsClient, SearchAdsClientBuilder, StaticToken,
    WriteOptions,
    reporting::{ConversionStatus, IdLookup, ReportFilters, ReportOptions},
};

/// Today on the fake's clock (it is not advanced in these tests).
fn today(fake: &SearchAdsFake) -> NaiveDate {
    fake.reporting_window().0
}

/// A fake whose seeded data ends today: `per_day` conversions a day for `days` days.
fn recent(days: u64, per_day: u64) -> SearchAdsFakeBuilder {
    let today = chrono::DateTime::<chrono::Utc>::from(std::time::SystemTime::now()).date_naive();
    SearchAdsFake::builder()
        .conversions_per_account(days * per_day)
        .conversions_per_day(per_day)
        .start_date(today - Days::new(days - 1))
}

fn client(fake: &SearchAdsFake, retry: RetryPolicy) -> SearchAdsClient {
    builder(fake)
        .retry_policy(retry)
        .build()
        .expect("the client builds")
}

fn builder(fake: &SearchAdsFake) -> SearchAdsClientBuilder {
    SearchAdsClient::builder(StaticToken::new(fake.dev_token()))
        .base_url(fake.base_url())
        .reporting_base_url(fake.reporting_url())
        .write_options(WriteOptions::default())
}

fn customer(fake: &SearchAdsFake, i: usize) -> CustomerId {
    CustomerId::new(fake.accounts()[i].customer_id.clone()).expect("digits")
}

/// A v2 conversion as the Reporting API can show it: the fields v0 has (mapping.rs), campaign
/// and ad group translated with the ID-mapping file.
fn as_reported(lookup: &IdLookup, c: &Conversion) -> Conversion {
    Conversion {
        conversion_id: c.conversion_id.clone(),
        conversion_timestamp: c.conversion_timestamp,
        conversion_modified_timestamp: c.conversion_modified_timestamp,
        ds_conversion_id: c.ds_conversion_id,
        state: c.state.clone().map(|s| match s {
            ConversionState::Active => ConversionState::Active,
            _ => ConversionState::Removed,
        }),
        revenue_micros: c.revenue_micros,
        currency_code: c.revenue_micros.and(c.currency_code.clone()),
        quantity_millis: c.quantity_millis.map(|q| q / 1000 * 1000),
        click_id: c.click_id.clone(),
        floodlight_order_id: c.floodlight_order_id.clone(),
        ad_id: c.ad_id,
        criterion_id: c.criterion_id,
        campaign_id: c.campaign_id.and_then(|id| lookup.campaign(id)),
        ad_group_id: c.ad_group_id.and_then(|id| lookup.ad_group(id)),
        customer_id: c.customer_id,
        inventory_account_id: c.inventory_account_id,
        product_id: c.product_id.clone(),
        product_country: c.product_country.clone(),
        product_language: c.product_language.clone(),
        store_id: c.store_id.clone(),
        channel: c.channel.clone(),
        ..Conversion::default()
    }
}

async fn v2(
    client: &SearchAdsClient,
    fake: &SearchAdsFake,
    dates: DateRange,
    options: ListOptions,
) -> Vec<Conversion> {
    client
        .list_conversions(support::account(fake, 0), dates)
        .options(options)
        .stream()
        .try_collect()
        .await
        .expect("v2 reads")
}

async fn report(
    client: &SearchAdsClient,
    fake: &SearchAdsFake,
    dates: DateRange,
    options: ReportOptions,
) -> Result<Vec<Conversion>, Error> {
    client
        .conversion_report(customer(fake, 0), dates)
        .options(options)
        .today(today(fake))
        .stream()
        .try_collect()
        .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_report_reads_the_same_conversions_as_v2() {
    let fake = support::start(recent(30, 200)).await;
    let client = client(&fake, support::fast_retries(4));
    let (agency, advertiser) = support::advertiser(&fake, 0);
    let lookup = client
        .id_lookup(agency, advertiser)
        .send()
        .await
        .expect("lookup");
    let t = today(&fake);
    let dates = DateRange::new(t - Days::new(20), t - Days::new(3)).expect("range");
    let old = v2(&client, &fake, dates, ListOptions::default()).await;
    assert_eq!(old.len(), 18 * 200);
    let expected: Vec<Conversion> = old.iter().map(|c| as_reported(&lookup, c)).collect();
    assert!(
        expected
            .iter()
            .all(|c| c.campaign_id.is_some() && c.ad_group_id.is_some())
    );
    let options = ReportOptions::default()
        .page_size(700)
        .shard_days(4)
        .look_ahead(3);
    let new = report(&client, &fake, dates, options)
        .await
        .expect("report");
    assert_eq!(new.len(), expected.len());
    for (i, (a, b)) in new.iter().zip(&expected).enumerate() {
        assert_eq!(a, b, "row {i}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn legacy_filters_translate_through_the_id_lookup() {
    let fake = support::start(recent(10, 120)).await;
    let client = client(&fake, support::fast_retries(4));
    let (agency, advertiser) = support::advertiser(&fake, 0);
    let lookup = client
        .id_lookup(agency, advertiser)
        .send()
        .await
        .expect("lookup");
    let t = today(&fake);
    let dates = DateRange::new(t - Days::new(9), t).expect("range");
    let sample = v2(&client, &fake, dates, ListOptions::default()).await;
    let mut legacy = ListOptions::default();
    legacy.campaign_id = sample[5].campaign_id;
    legacy.ad_group_id = sample[5].ad_group_id;
    let (cust, filters) = lookup
        .translate(support::account(&fake, 0), &legacy)
        .expect("known ids");
    assert_eq!(cust, customer(&fake, 0));
    let old = v2(&client, &fake, dates, legacy).await;
    assert!(!old.is_empty());
    let new = report(
        &client,
        &fake,
        dates,
        ReportOptions::default().filters(filters),
    )
    .await
    .expect("report");
    let expected: Vec<_> = old.iter().map(|c| as_reported(&lookup, c)).collect();
    assert_eq!(new, expected);

    let unknown = ListOptions::default()
        .campaign_id(CampaignId::new(1))
        .ad_group_id(AdGroupId::new(2));
    let e = lookup
        .translate(support::account(&fake, 0), &unknown)
        .unwrap_err()
        .to_string();
    assert!(e.contains("campaign 1") && e.contains("ad group 2"), "{e}");
}

#[derive(Debug, Clone)]
struct Case {
    from: u64,
    len: u64,
    campaign: Option<usize>,
    ad_group: Option<usize>,
    ad: Option<usize>,
    criterion: Option<usize>,
    status: Option<bool>,
}

fn cases() -> impl Strategy<Value = Case> {
    (
        0u64..20,
        0u64..12,
        proptest::option::of(0usize..40),
        proptest::option::of(0usize..40),
        proptest::option::of(0usize..40),
        proptest::option::of(0usize..40),
        proptest::option::of(any::<bool>()),
    )
        .prop_map(
            |(from, len, campaign, ad_group, ad, criterion, status)| Case {
                from,
                len,
                campaign,
                ad_group,
                ad,
                criterion,
                status,
            },
        )
}

/// Random ranges and filters (ids drawn from the data, so most filters match something, and
/// combinations that match nothing are compared too) give the same conversions through v2 and
/// through the Reporting API.
#[test]
fn random_ranges_and_filters_agree_with_v2() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let (fake, client, lookup, sample) = runtime.block_on(async {
        let fake = support::start(recent(20, 60)).await;
        let client = client(&fake, support::fast_retries(4));
        let (agency, advertiser) = support::advertiser(&fake, 0);
        let lookup = client
            .id_lookup(agency, advertiser)
            .send()
            .await
            .expect("lookup");
        let t = today(&fake);
        let all = DateRange::new(t - Days::new(19), t).expect("range");
        let sample = v2(&client, &fake, all, ListOptions::default()).await;
        (fake, client, lookup, sample)
    });
    let t = today(&fake);
    let mut runner = proptest::test_runner::TestRunner::new(ProptestConfig {
        cases: 40,
        ..ProptestConfig::default()
    });
    runner
        .run(&cases(), |case| {
            let start = t - Days::new(19 - case.from.min(19));
            let end = (start + Days::new(case.len)).min(t);
            let dates = DateRange::new(start, end).expect("range");
            let pick = |i: Option<usize>| i.map(|i| &sample[i * 7 % sample.len()]);
            let mut legacy = ListOptions::default();
            legacy.campaign_id = pick(case.campaign).and_then(|c| c.campaign_id);
            legacy.ad_group_id = pick(case.ad_group).and_then(|c| c.ad_group_id);
            legacy.ad_id = pick(case.ad).and_then(|c| c.ad_id);
            legacy.criterion_id = pick(case.criterion).and_then(|c| c.criterion_id);
            let (_, mut filters) = lookup
                .translate(support::account(&fake, 0), &legacy)
                .expect("ids of the data are in the file");
            if let Some(enabled) = case.status {
                filters.statuses = vec![if enabled {
                    ConversionStatus::Enabled
                } else {
                    ConversionStatus::Removed
                }];
            }
            let (old, new) = runtime.block_on(async {
                let old = v2(&client, &fake, dates, legacy).await;
                let options = ReportOptions::default()
                    .page_size(97)
                    .shard_days(3)
                    .look_ahead(2)
                    .filters(filters);
                (
                    old,
                    report(&client, &fake, dates, options)
                        .await
                        .expect("report"),
                )
            });
            let expected: Vec<Conversion> = old
                .iter()
                .map(|c| as_reported(&lookup, c))
                .filter(|c| match case.status {
                    None => true,
                    Some(true) => c.state == Some(ConversionState::Active),
                    Some(false) => c.state == Some(ConversionState::Removed),
                })
                .collect();
            prop_assert_eq!(new, expected);
            Ok(())
        })
        .expect("v2 and the Reporting API agree");
    runtime.block_on(fake.shutdown());
}

/// 50 000 rows, about 20 % of the search requests failing: quota errors with a retry delay
/// (7 %), expired page tokens (7 %), 500 and 503 from the front end (3 % each). Every row
/// arrives exactly once, in order.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fifty_thousand_rows_under_twenty_percent_faults_arrive_once_in_order() {
    let fake = support::start(
        recent(50, 1_000)
            .faults(Faults {
                internal_error: 0.03,
                unavailable: 0.03,
                retry_after: Duration::ZERO,
                ..Faults::seeded(11)
            })
            .reporting_faults(ReportingFaults {
                seed: 5,
                quota_exhausted: 0.07,
                expired_page_token: 0.07,
                retry_delay: Duration::from_millis(3),
            }),
    )
    .await;
    let retry = RetryPolicy::default()
        .max_attempts(12)
        .base_delay(Duration::from_millis(1))
        .max_delay(Duration::from_millis(5))
        .max_retry_after(Duration::from_secs(1));
    let client = client(&fake, retry);
    let t = today(&fake);
    let dates = DateRange::new(t - Days::new(49), t).expect("range");
    let options = ReportOptions::default()
        .page_size(250)
        .shard_days(5)
        .look_ahead(4);
    let rows = report(&client, &fake, dates, options)
        .await
        .expect("report");
    assert_eq!(rows.len(), 50_000);
    for (i, c) in rows.iter().enumerate() {
        let expected = fake.seeded_conversion(0, i as u64).expect("seeded");
        assert_eq!(
            c.ds_conversion_id.map(|d| d.get().to_string()),
            expected["dsConversionId"].as_str().map(str::to_owned),
            "row {i}"
        );
    }
    let counts = fake.ledger().counts();
    assert!(counts.reporting_quota_faults > 5, "{counts:?}");
    assert!(counts.reporting_expired_token_faults > 5, "{counts:?}");
    let records = fake.ledger().faults();
    assert!(records.len() > 5, "front-end faults were injected too");
}

#[tokio::test]
async fn a_start_before_the_window_is_refused_before_sending() {
    let fake = support::start(recent(5, 10)).await;
    let client = client(&fake, RetryPolicy::no_retries());
    let t = today(&fake);
    let dates = DateRange::new(t - Days::new(60), t).expect("range");
    let mut report = client
        .conversion_report(customer(&fake, 0), dates)
        .today(t)
        .stream();
    let e = report.try_next().await.unwrap_err();
    assert!(
        matches!(&e, Error::Validation { field, .. } if field == "startDate"),
        "{e}"
    );
    assert!(e.to_string().contains("60-day window"), "{e}");
    // The refusal is the stream's only item, and nothing was sent.
    assert!(report.try_next().await.expect("no second error").is_none());
    assert_eq!(fake.ledger().counts().reporting_search_requests, 0);
    // The fake enforces the same window (the SDK's check is not what makes it hold).
    let e = client
        .conversion_report(customer(&fake, 0), dates)
        .today(t - Days::new(1))
        .stream()
        .try_collect::<Vec<_>>()
        .await
        .unwrap_err();
    match e {
        Error::Reporting {
            status, failure, ..
        } => {
            assert_eq!(status, 400);
            assert!(failure.has_code("EARLIER_THAN_MINIMUM_DATE"), "{failure:?}");
        }
        other => panic!("{other}"),
    }
}

#[tokio::test]
async fn a_client_account_behind_the_manager_needs_login_customer_id() {
    let fake = support::start(recent(5, 10)).await;
    let client = client(&fake, RetryPolicy::no_retries());
    let t = today(&fake);
    let dates = DateRange::new(t - Days::new(4), t).expect("range");
    let behind_manager = customer(&fake, 1);
    let e = client
        .conversion_report(behind_manager, dates)
        .today(t)
        .stream()
        .try_collect::<Vec<_>>()
        .await
        .unwrap_err();
    let Error::Reporting {
        status, failure, ..
    } = &e
    else {
        panic!("{e}")
    };
    assert_eq!(*status, 403);
    assert_eq!(failure.rpc_status.as_deref(), Some("PERMISSION_DENIED"));
    assert_eq!(failure.errors[0].kind, "authorizationError");
    assert_eq!(failure.errors[0].code, "USER_PERMISSION_DENIED");
    assert!(failure.request_id.is_some());
    assert!(
        e.to_string()
            .contains("SearchAdsClientBuilder::login_customer_id"),
        "{e}"
    );
    assert!(!e.is_transient());

    let through = |manager| {
        let manager = CustomerId::new(manager).expect("id");
        let retry = RetryPolicy::no_retries();
        builder(&fake)
            .login_customer_id(manager)
            .retry_policy(retry)
            .build()
            .expect("builds")
    };
    let rows: Vec<_> = through("2000012300")
        .conversion_report(behind_manager, dates)
        .today(t)
        .stream()
        .try_collect()
        .await
        .expect("through the manager");
    assert_eq!(rows.len(), 50);

    // The id as Google's UI shows it: one rule, at construction, and the digits go out.
    let rows: Vec<_> = through("200-001-2300")
        .conversion_report(behind_manager, dates)
        .today(t)
        .stream()
        .try_collect()
        .await
        .expect("through the manager, dashed");
    assert_eq!(rows.len(), 50);
    let e = CustomerId::new("200-001-23OO").unwrap_err().to_string();
    assert!(
        e.contains("customerId") && e.contains("123-456-7890"),
        "{e}"
    );

    let customers = client
        .accessible_customers()
        .send()
        .await
        .expect("customers");
    assert!(customers.contains(&customer(&fake, 0)));
    assert!(!customers.contains(&customer(&fake, 1)));
}

#[tokio::test]
async fn a_quota_error_longer_than_the_policy_allows_is_a_typed_error() {
    let fake = support::start(recent(5, 10).reporting_faults(ReportingFaults {
        seed: 1,
        quota_exhausted: 1.0,
        expired_page_token: 0.0,
        retry_delay: Duration::from_secs(120),
    }))
    .await;
    let client = client(&fake, support::fast_retries(3));
    let t = today(&fake);
    let dates = DateRange::new(t - Days::new(4), t).expect("range");
    let e = client
        .conversion_report(customer(&fake, 0), dates)
        .today(t)
        .stream()
        .try_collect::<Vec<_>>()
        .await
        .unwrap_err();
    assert_eq!(e.retry_after(), Some(Duration::from_secs(120)));
    assert!(e.is_transient());
    let Error::Reporting { failure, .. } = &e else {
        panic!("{e}")
    };
    assert_eq!(failure.errors[0].code, "RESOURCE_EXHAUSTED");
    assert!(e.to_string().contains("retry in 120s"), "{e}");
    assert_eq!(
        fake.ledger().counts().reporting_quota_faults,
        1,
        "a delay beyond max_retry_after is not waited for"
    );
}

/// Requests the fake's ledger has counted for `searchAds360:search`.
fn searches(fake: &SearchAdsFake) -> u64 {
    fake.ledger().counts().reporting_search_requests
}

/// Polls `searches` until it reaches `n` or a minute passes (a generous deadline for a loaded
/// machine); returns the last count.
async fn wait_for_searches(fake: &SearchAdsFake, n: u64) -> u64 {
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    while searches(fake) < n && std::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    searches(fake)
}

/// Waits as long as `pages` pages took so far (at least 0.5 s): a report that had not stopped
/// fetching would show more pages afterwards, however slow the machine is.
async fn wait_as_long_as(started: std::time::Instant, fetched: u64, pages: u32) {
    let per_page = started.elapsed() / u32::try_from(fetched.max(1)).unwrap_or(u32::MAX);
    tokio::time::sleep((per_page * pages).max(Duration::from_millis(500))).await;
}

#[tokio::test]
async fn dropping_a_report_stops_its_shards() {
    // 40 one-day shards of 10 pages of 100 rows (400 pages); one shard in flight, so the
    // report's budget is 20 000 rows: at most 200 pages ahead of the reader, plus the front
    // shard's reserve of two pages and the page the reader took.
    let fake = support::start(recent(40, 1_000)).await;
    let client = client(&fake, RetryPolicy::no_retries());
    let t = today(&fake);
    let dates = DateRange::new(t - Days::new(39), t).expect("range");
    let options = ReportOptions::default()
        .page_size(100)
        .shard_days(1)
        .look_ahead(1);
    let mut report = client
        .conversion_report(customer(&fake, 0), dates)
        .options(options)
        .today(t)
        .stream();
    let first = report.try_next().await.expect("ok").expect("a row");
    assert!(first.ds_conversion_id.is_some());
    drop(report);
    tokio::time::sleep(Duration::from_millis(300)).await;
    let after_drop = searches(&fake);
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(searches(&fake), after_drop);
    assert!(after_drop <= 203, "{after_drop} of 400 pages fetched");
}

/// A reader that stops reading does not make the report pull the whole range: with one shard
/// in flight it fetches its budget of 20 000 rows (20 pages of 1 000; one lane has no reserve)
/// and the page the reader took, and then waits.
#[tokio::test]
async fn a_shard_runs_ahead_of_the_reader_only_so_far() {
    let fake = support::start(recent(40, 1_000)).await;
    let client = client(&fake, RetryPolicy::no_retries());
    let t = today(&fake);
    let dates = DateRange::new(t - Days::new(39), t).expect("range");
    let options = ReportOptions::default()
        .page_size(1_000)
        .shard_days(30)
        .look_ahead(1);
    let mut report = client
        .conversion_report(customer(&fake, 0), dates)
        .options(options)
        .today(t)
        .stream();
    let started = std::time::Instant::now();
    report.try_next().await.expect("ok").expect("a row");
    let fetched = wait_for_searches(&fake, 21).await;
    wait_as_long_as(started, fetched, 8).await;
    let ahead = searches(&fake);
    assert_eq!(ahead, 21, "{ahead} of 30 pages fetched");
    let rest: Vec<_> = report.try_collect().await.expect("the rest");
    assert_eq!(rest.len(), 40_000 - 1);
}

/// `concurrency` counts the shards that are fetching, not those the reader has yet to reach:
/// with one shard in flight, a shard that has its last page lets the next one start while the
/// reader is still on the first, so the requests of a page-by-page read overlap the reading.
#[tokio::test]
async fn a_shard_with_its_last_page_lets_the_next_start_before_the_reader_gets_there() {
    // Five one-day shards of one page each.
    let fake = support::start(recent(5, 1_000)).await;
    let client = client(&fake, RetryPolicy::no_retries());
    let t = today(&fake);
    let dates = DateRange::new(t - Days::new(4), t).expect("range");
    let options = ReportOptions::default()
        .page_size(1_000)
        .shard_days(1)
        .look_ahead(1);
    let mut report = client
        .conversion_report(customer(&fake, 0), dates)
        .options(options)
        .today(t)
        .stream();
    report.try_next().await.expect("ok").expect("a row");
    // The reader stays on the first shard (999 rows left in it): each row it takes lets the
    // next shard start once the one before has its page.
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    let mut read = 1;
    while searches(&fake) < 5 && read < 1_000 && std::time::Instant::now() < deadline {
        report.try_next().await.expect("ok").expect("a row");
        read += 1;
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(searches(&fake), 5, "after {read} rows of the first shard");
    assert!(read < 1_000, "the reader left the first shard");
    let rest: Vec<_> = report.try_collect().await.expect("the rest");
    assert_eq!(read + rest.len(), 5_000);
}

/// The shards ahead of the reader can spend the whole budget: two shards of five pages of
/// 10 000 rows in flight have a budget of 40 000 rows (four pages), which the second shard fills
/// while the reader is still on the first. The first goes on with its reserve of two pages, so
/// the report ends instead of waiting forever.
#[tokio::test]
async fn a_full_budget_never_stalls_the_shard_being_read() {
    let fake = support::start(recent(2, 50_000)).await;
    let client = client(&fake, RetryPolicy::no_retries());
    let t = today(&fake);
    let dates = DateRange::new(t - Days::new(1), t).expect("range");
    let options = ReportOptions::default()
        .page_size(10_000)
        .shard_days(1)
        .look_ahead(2);
    let report = client
        .conversion_report(customer(&fake, 0), dates)
        .options(options)
        .today(t)
        .stream();
    let rows = tokio::time::timeout(Duration::from_secs(120), report.try_collect::<Vec<_>>())
        .await
        .expect("the report stalled: the shard being read waited for budget held by the next")
        .expect("ok");
    assert_eq!(rows.len(), 100_000);
    assert_eq!(searches(&fake), 10);
}

/// A report never ends while shards are left: one shard in flight on a multi-threaded runtime,
/// where the reader can take a shard's last message before that shard's task has finished (and
/// stopped counting as fetching). Thirty one-page shards, twenty times over: every row, in order.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_report_reads_every_shard_however_its_tasks_finish() {
    let fake = support::start(recent(30, 20)).await;
    let client = client(&fake, RetryPolicy::no_retries());
    let t = today(&fake);
    let dates = DateRange::new(t - Days::new(29), t).expect("range");
    for run in 0..20 {
        let options = ReportOptions::default()
            .page_size(100)
            .shard_days(1)
            .look_ahead(1);
        let rows: Vec<_> = client
            .conversion_report(customer(&fake, 0), dates)
            .options(options)
            .today(t)
            .stream()
            .try_collect()
            .await
            .expect("ok");
        assert_eq!(rows.len(), 600, "run {run}");
    }
}

#[test]
fn bad_options_are_refused_naming_the_field() {
    for (options, field) in [
        (ReportOptions::default().page_size(0), "page_size"),
        (ReportOptions::default().look_ahead(17), "look_ahead"),
        (ReportOptions::default().shard_days(0), "shard_days"),
        (ReportOptions::default().shard_days(31), "shard_days"),
        (
            ReportOptions::default().filters(
                ReportFilters::default()
                    .ad_ids(vec![AdId::new(1); 10_001])
                    .criterion_ids(vec![CriterionId::new(1)]),
            ),
            "ad_ids",
        ),
    ] {
        let e = options.validate().unwrap_err();
        assert!(
            matches!(&e, Error::Validation { field: f, .. } if f == field),
            "{e}"
        );
    }
}

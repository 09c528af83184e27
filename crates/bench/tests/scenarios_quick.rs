//! Every scenario's baseline and SDK at tiny sizes against the in-process
//! fakes: they run, do the same work and agree on it. No timing assertions.

use std::time::Duration;

use bench::reporting;
use bench::sample::{self, ClientScenario, SampleSpec, Targets, Variant};
use bench::scenarios::{PAGE_SIZE, SearchAdsTarget, VideoTarget};
use sa360_video_fakes::search_ads::IdMappingSize;
use sa360_video_fakes::{Faults, SearchAdsFake, VideoSessionFake};

const ROWS: u64 = 2_500;

async fn search_ads(latency: Duration, forget_conversions: bool) -> SearchAdsFake {
    SearchAdsFake::builder()
        .forget_conversions(forget_conversions)
        .conversions_per_account(ROWS)
        // Inside the Reporting API's window (25 days from 55 days back).
        .conversions_per_day(100)
        .start_date(reporting::report_data_start(reporting::today_utc()))
        .id_mapping_size(IdMappingSize::Bytes(300_000))
        .faults(Faults::none().with_latency(latency, Duration::ZERO))
        .start()
        .await
        .unwrap()
}

fn targets(ads: &SearchAdsFake, video: &VideoSessionFake) -> Targets {
    let account = &ads.accounts()[0];
    let demo = video.demo();
    Targets {
        search_ads: SearchAdsTarget {
            base_url: ads.base_url().to_owned(),
            token: ads.dev_token().to_owned(),
            agency_id: account.agency_id,
            advertiser_id: account.advertiser_id,
            engine_account_id: account.engine_account_id,
            reporting_url: ads.reporting_url().to_owned(),
            customer_id: account.customer_id.clone(),
        },
        video: VideoTarget {
            base_url: video.base_url().to_owned(),
            secret_key: demo.secret_key.clone(),
            user_name: demo.user_name.clone(),
            password: demo.password.clone(),
            redis_url: None,
        },
    }
}

async fn run(
    targets: &Targets,
    scenario: ClientScenario,
    variant: Variant,
    count: u64,
) -> bench::scenarios::Measurement {
    let spec = SampleSpec {
        scenario,
        variant,
        count,
        tag: format!("test-{variant}"),
        look_ahead: None,
        block: None,
    };
    sample::run(&spec, targets)
        .await
        .unwrap_or_else(|e| panic!("{scenario} {variant}: {e:#}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_scenario_runs_both_variants_on_the_same_work() {
    let ads = search_ads(Duration::ZERO, false).await;
    let slow = search_ads(Duration::from_millis(2), false).await;
    let video = VideoSessionFake::start_default().await.unwrap();
    let plain = targets(&ads, &video);
    let latency = targets(&slow, &video);

    for scenario in [ClientScenario::Read, ClientScenario::ReadLatency] {
        let t = if scenario == ClientScenario::Read {
            &plain
        } else {
            &latency
        };
        let reads_before = if scenario == ClientScenario::Read {
            &ads
        } else {
            &slow
        }
        .ledger()
        .counts()
        .read_requests;
        let b = run(t, scenario, Variant::Baseline, 0).await;
        let f = run(t, scenario, Variant::Sdk, 0).await;
        assert_eq!((b.units, f.units), (ROWS, ROWS), "{scenario}");
        assert!(b.seconds > 0.0 && f.seconds > 0.0);
        // Both page with 1000 rows; the SDK's look-ahead may ask for up to
        // three pages past the end.
        let pages = ROWS / u64::from(PAGE_SIZE) + 1;
        let reads = if scenario == ClientScenario::Read {
            &ads
        } else {
            &slow
        }
        .ledger()
        .counts()
        .read_requests
            - reads_before;
        assert!(
            reads >= 2 * pages && reads <= 2 * pages + 3,
            "{scenario}: {reads} reads"
        );
    }

    // Reports: the same rows; without latency the SDK reads the very pages the baseline
    // reads (the nine 7-day queries of the 58-day range, one page each), with latency 7-day
    // shards against the baseline's 30-day queries.
    for scenario in [ClientScenario::Report, ClientScenario::ReportLatency] {
        let (t, fake) = if scenario == ClientScenario::Report {
            (&plain, &ads)
        } else {
            (&latency, &slow)
        };
        let searches = || fake.ledger().counts().reporting_search_requests;
        let before = searches();
        let b = run(t, scenario, Variant::Baseline, 0).await;
        let baseline_searches = searches() - before;
        let f = run(t, scenario, Variant::Sdk, 0).await;
        let sdk_searches = searches() - before - baseline_searches;
        assert_eq!((b.units, f.units), (ROWS, ROWS), "{scenario}");
        if scenario == ClientScenario::Report {
            assert_eq!((baseline_searches, sdk_searches), (9, 9));
        } else {
            // The 25 days of data (55 to 31 days back) lie in the first 30-day query: one
            // page of 10 000, then one empty answer for the second query.
            assert_eq!(baseline_searches, 2);
            // 25 days of 100 rows from 55 days back: the 7-day shards of the 58-day range
            // that hold data read 700 or fewer rows each (one page), the others an empty one.
            assert_eq!(sdk_searches, 9, "one search per shard");
        }
    }

    let before = slow.ledger().stored_count();
    let b = run(&latency, ClientScenario::Upload, Variant::Baseline, 350).await;
    let f = run(&latency, ClientScenario::Upload, Variant::Sdk, 350).await;
    assert_eq!((b.units, f.units), (350, 350));
    assert_eq!(slow.ledger().stored_count() - before, 700);
    // The loop sends one request of up to 1 000, and so does the SDK at its default batch of
    // 1 000 (SA-10).
    assert_eq!(slow.ledger().counts().insert_requests, 1 + 1);

    let before = ads.ledger().stored_count();
    let b = run(
        &plain,
        ClientScenario::UploadOverhead,
        Variant::Baseline,
        350,
    )
    .await;
    let f = run(&plain, ClientScenario::UploadOverhead, Variant::Sdk, 350).await;
    assert_eq!((b.units, f.units), (350, 350));
    assert_eq!(ads.ledger().stored_count() - before, 700);
    // Both send the default batch (1 000): one request each.
    assert_eq!(ads.ledger().counts().insert_requests, 1 + 1);

    // The journaled stream: the same path at two sizes, every row answered as stored by a fake of
    // its own in its bench mode, as the suite runs it (it keeps none: the ids repeat the other
    // uploads').
    let fresh = search_ads(Duration::ZERO, true).await;
    let own = targets(&fresh, &video);
    let b = run(
        &own,
        ClientScenario::UploadStreamJournal,
        Variant::Baseline,
        300,
    )
    .await;
    let f = run(
        &own,
        ClientScenario::UploadStreamJournal,
        Variant::Sdk,
        3_000,
    )
    .await;
    assert_eq!((b.units, f.units), (300, 3_000));
    let counts = fresh.ledger().counts();
    assert_eq!(
        (counts.conversions_inserted, counts.insert_requests),
        (3_300, 1 + 3)
    );
    assert_eq!(fresh.ledger().stored_count(), 0);

    let account = &ads.accounts()[0];
    let size = ads
        .id_mapping_len(account.agency_id, account.advertiser_id)
        .unwrap();
    let rows = ads
        .id_mapping_rows(account.agency_id, account.advertiser_id)
        .unwrap();
    let b = run(&plain, ClientScenario::IdMapping, Variant::Baseline, 0).await;
    let f = run(&plain, ClientScenario::IdMapping, Variant::Sdk, 0).await;
    assert_eq!((b.units, f.units), (size, size));
    assert_eq!(f.rows, rows);

    let b = run(&plain, ClientScenario::Logins, Variant::Baseline, 40).await;
    let f = run(&plain, ClientScenario::Logins, Variant::Sdk, 40).await;
    assert_eq!((b.units, f.units), (40, 40));
    assert_eq!(video.ledger().counts().logins_succeeded, 80);

    // The form the suite runs: both sides in one process, 250 each in blocks of 100 (100 + 100 +
    // 50), every login sent.
    let spec = SampleSpec {
        scenario: ClientScenario::Logins,
        variant: Variant::Paired,
        count: 250,
        tag: "test-paired".to_owned(),
        look_ahead: None,
        block: Some(100),
    };
    let paired = sample::run_paired(&spec, &plain).await.unwrap();
    assert_eq!((paired.baseline.units, paired.sdk.units), (250, 250));
    assert!(paired.baseline.seconds > 0.0 && paired.sdk.seconds > 0.0);
    assert_eq!(video.ledger().counts().logins_succeeded, 80 + 500);
    let refused = sample::run(&spec, &plain).await.unwrap_err();
    assert!(refused.to_string().contains("run_paired"), "{refused:#}");
}

/// `logins-redis`: the MemoryStore baseline and the RedisStore SDK both
/// log in every time, on a redis-server of the test's own (skipped, loudly,
/// without one unless `REQUIRE_REDIS=1`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn logins_redis_runs_both_variants() {
    let Some(redis) = test_support::RedisServer::start("logins_redis_runs_both_variants") else {
        return;
    };
    let ads = search_ads(Duration::ZERO, false).await;
    let video = VideoSessionFake::start_default().await.unwrap();
    let mut t = targets(&ads, &video);
    t.video.redis_url = Some(redis.url());
    let b = run(&t, ClientScenario::LoginsRedis, Variant::Baseline, 30).await;
    let f = run(&t, ClientScenario::LoginsRedis, Variant::Sdk, 30).await;
    drop(redis);
    assert_eq!((b.units, f.units), (30, 30));
    assert_eq!(video.ledger().counts().logins_succeeded, 60);
}

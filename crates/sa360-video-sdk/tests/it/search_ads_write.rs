//! Writing conversions against the fake: bulk insert under faults with the
//! ledger proving each conversion stored exactly once, per-conversion
//! rejections, updates, validation before sending, availability, saved
//! columns.

use crate::search_ads_support as support;

use std::collections::HashSet;
use std::sync::{Arc, Mutex};

use chrono::{DateTime, Utc};
use sa360_video_fakes::{ConversionKey, Faults, SearchAdsFake};
use sa360_video_sdk::search_ads::{
    AdvertiserId, Availability, Conversion, ConversionState, CustomMetric, Error, IssueCode,
    Micros, Outcome, RetryPolicy, SearchAdsClient, SegmentationId, StaticToken, WriteOptions,
    WriteProgress,
};

const BULK: usize = 20_000;

fn at(millis: i64) -> DateTime<Utc> {
    DateTime::from_timestamp_millis(millis).expect("a valid time")
}

fn key(fake: &SearchAdsFake, id: &str) -> ConversionKey {
    ConversionKey::advertiser(fake.accounts()[0].advertiser_id, id)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bulk_insert_under_faults_stores_each_conversion_exactly_once() {
    // 17% of requests fail: 500s and dropped connections after the fake
    // stored the batch (or not, at random), answers cut mid-body (always
    // stored), and a few 429/503s with Retry-After.
    let faults = Faults::seeded(2024)
        .with_internal_error(0.05)
        .with_drop_before_response(0.05)
        .with_drop_mid_body(0.05)
        .with_rate_limited(0.01)
        .with_unavailable(0.01);
    let fake = support::start(SearchAdsFake::builder().faults(faults)).await;
    let client = support::client(
        &fake,
        support::fast_retries(12),
        WriteOptions::default().batch_size(100).concurrency(8),
    );
    let input: Vec<Conversion> = (0..BULK)
        .map(|i| support::valid_conversion(&fake, &format!("bulk-{i:05}"), i as i64))
        .collect();

    let report = client.insert(&input).send().await.expect("valid input");

    // The report accounts for every input, in order, and all were stored.
    assert_eq!(report.len(), BULK);
    assert_eq!(report.batches(), BULK / 100);
    assert!(report.all_stored(), "{report}");
    assert_eq!(report.stored(), BULK);
    assert!(
        report.requests() > report.batches(),
        "faults forced retries: {report}"
    );

    // The ledger holds each conversion exactly once.
    let ledger = fake.ledger();
    let counts = ledger.counts();
    assert_eq!(ledger.stored_count(), BULK);
    assert_eq!(
        counts.conversions_inserted, BULK as u64,
        "no conversion was stored twice"
    );
    for c in &input {
        let id = c.conversion_id.as_deref().expect("an id");
        assert!(ledger.contains(&key(&fake, id)), "{id} is stored");
    }

    // A conversion is "stored earlier" exactly when the request that stored
    // it got no answer (a fault after the handler ran).
    let faulted: HashSet<u64> = ledger
        .faults()
        .iter()
        .filter(|f| f.processed && f.path.ends_with("/conversion"))
        .map(|f| f.request)
        .collect();
    assert!(!faulted.is_empty(), "some stored batches lost their answer");
    let mut earlier = 0;
    for (i, (c, outcome)) in input.iter().zip(report.outcomes()).enumerate() {
        let id = c.conversion_id.as_deref().expect("an id");
        let stored = ledger.conversion(&key(&fake, id)).expect("stored");
        let lost_answer = faulted.contains(&stored.request);
        match outcome {
            Outcome::StoredEarlier => {
                assert!(
                    lost_answer,
                    "{i}: reported stored-earlier but its answer arrived"
                );
                earlier += 1;
            }
            Outcome::Stored => assert!(!lost_answer, "{i}: its answer was lost"),
            other => panic!("{i}: {other:?}"),
        }
    }
    assert_eq!(report.stored_earlier(), earlier);
    assert!(earlier > 0);
    eprintln!("{report}; {} faults injected", ledger.faults().len());
}

#[tokio::test]
async fn rejections_carry_code_message_and_input_index() {
    let fake = support::start(SearchAdsFake::builder()).await;
    let client = support::client(
        &fake,
        RetryPolicy::no_retries(),
        WriteOptions::default().batch_size(3).concurrency(2),
    );
    // Stored before, so inserting it again is a genuine duplicate.
    let earlier = client
        .insert(&[support::valid_conversion(&fake, "dup-1", 0)])
        .send()
        .await
        .expect("valid input");
    assert!(earlier.all_stored());

    let unknown_activity = Conversion {
        segmentation_id: Some(SegmentationId::new(1)),
        ..support::valid_conversion(&fake, "r-2", 2)
    };
    let unknown_click = Conversion {
        click_id: Some("no-such-click".into()),
        ..support::valid_conversion(&fake, "r-4", 4)
    };
    let unknown_metric = Conversion {
        custom_metrics: vec![CustomMetric {
            name: "No Such Metric".into(),
            value: 1.0,
        }],
        ..support::valid_conversion(&fake, "r-5", 5)
    };
    let foreign = Conversion {
        advertiser_id: Some(AdvertiserId::new(99)),
        engine_account_id: None,
        ..support::valid_conversion(&fake, "r-6", 6)
    };
    let input = vec![
        support::valid_conversion(&fake, "r-0", 0),
        support::valid_conversion(&fake, "r-1", 1),
        unknown_activity,
        // The same (advertiser, id, timestamp) as the earlier insert (SA-15).
        support::valid_conversion(&fake, "dup-1", 0),
        unknown_click,
        unknown_metric,
        foreign,
        support::valid_conversion(&fake, "r-7", 7),
    ];
    let report = client.insert(&input).send().await.expect("valid input");
    assert_eq!(report.len(), 8);
    assert_eq!(report.batches(), 3);
    let codes: Vec<(usize, IssueCode)> = report
        .rejections()
        .map(|(i, issue)| (i, issue.code.expect("a coded detail")))
        .collect();
    assert_eq!(
        codes,
        vec![
            (2, IssueCode::FLOODLIGHT_ACTIVITY_NOT_FOUND),
            (3, IssueCode::DUPLICATE_CONVERSION_ID),
            (4, IssueCode::CLICK_ID_NOT_FOUND),
            (5, IssueCode::CUSTOM_METRIC_NOT_FOUND),
            (6, IssueCode::NO_PERMISSION),
        ]
    );
    for (i, issue) in report.rejections() {
        assert_eq!(issue.index, Some(i), "the index is the input index");
        assert!(!issue.message.is_empty());
        assert!(!issue.message.contains("index="), "{}", issue.message);
    }
    for i in [0, 1, 7] {
        assert!(matches!(report.outcomes()[i], Outcome::Stored), "{i}");
    }
    assert_eq!(report.stored(), 3);
    assert_eq!(report.rejected(), 5);
    let ledger = fake.ledger();
    assert!(ledger.contains(&key(&fake, "r-7")));
    assert!(!ledger.contains(&key(&fake, "r-2")));
    assert_eq!(ledger.stored_count(), 4);
}

#[tokio::test]
async fn updates_apply_and_unknown_conversions_are_rejected() {
    let fake = support::start(SearchAdsFake::builder()).await;
    let client = support::client(&fake, support::fast_retries(4), WriteOptions::default());
    let original = support::valid_conversion(&fake, "u-1", 1);
    assert!(
        client
            .insert(std::slice::from_ref(&original))
            .send()
            .await
            .expect("valid")
            .all_stored()
    );

    let changed = Conversion {
        revenue_micros: Some(Micros::new(42_000_000)),
        state: Some(ConversionState::Removed),
        ..original.clone()
    };
    let missing = support::valid_conversion(&fake, "u-404", 2);
    let report = client
        .update(&[changed, missing])
        .send()
        .await
        .expect("valid input");
    assert!(matches!(report.outcomes()[0], Outcome::Stored));
    match &report.outcomes()[1] {
        Outcome::Rejected(issue) => {
            assert_eq!(issue.code, Some(IssueCode::CONVERSION_ID_NOT_FOUND));
            assert_eq!(issue.index, Some(1));
        }
        other => panic!("{other:?}"),
    }
    let stored = fake
        .ledger()
        .conversion(&key(&fake, "u-1"))
        .expect("stored");
    assert_eq!(stored.updates, 1);
    assert_eq!(stored.conversion["revenueMicros"], "42000000");
    assert_eq!(stored.conversion["state"], "REMOVED");
}

#[tokio::test]
async fn invalid_conversions_are_refused_before_any_request() {
    let fake = support::start(SearchAdsFake::builder()).await;
    let client = support::client(&fake, RetryPolicy::no_retries(), WriteOptions::default());
    let ok = support::valid_conversion(&fake, "v-0", 0);
    let no_type = Conversion {
        segmentation_type: None,
        ..support::valid_conversion(&fake, "v-1", 1)
    };
    let no_time = Conversion {
        conversion_timestamp: None,
        ..support::valid_conversion(&fake, "v-2", 2)
    };
    let no_id = Conversion {
        conversion_id: None,
        ..support::valid_conversion(&fake, "v-3", 3)
    };
    match client.insert(Vec::<Conversion>::new()).send().await {
        Err(Error::Validation { field, index, .. }) => {
            assert_eq!((field.as_str(), index), ("conversions", None));
        }
        other => panic!("empty input: {other:?}"),
    }
    // Each invalid conversion is its own outcome; nothing is sent for it
    // (all-invalid input: nothing is sent at all).
    let cases: Vec<(Vec<Conversion>, &str, usize)> = vec![
        (vec![no_type], "segmentationType", 0),
        (vec![no_time], "conversionTimestamp", 0),
        (vec![no_id.clone(), no_id], "conversionId", 1),
        (
            vec![Conversion {
                conversion_id: Some("order\u{0}1".into()),
                ..ok.clone()
            }],
            "conversionId",
            0,
        ),
        (
            vec![Conversion {
                conversion_id: Some("x".repeat(1 << 20)),
                ..ok.clone()
            }],
            "conversionId",
            0,
        ),
    ];
    for (input, want_field, at) in cases {
        let report = client.insert(&input).send().await.expect("a report");
        assert_eq!(report.invalid(), input.len(), "{want_field}");
        match &report.outcomes()[at] {
            Outcome::Invalid(Error::Validation {
                field,
                index,
                reason,
            }) => {
                assert_eq!(field, want_field, "{reason}");
                assert_eq!(*index, Some(at), "{reason}");
            }
            other => panic!("{want_field}: {other:?}"),
        }
    }
    // The same (owner, id, timestamp) twice: the second is refused locally,
    // the first is sent.
    let report = client
        .insert([ok.clone(), ok.clone()])
        .send()
        .await
        .expect("a report");
    assert!(matches!(report.outcomes()[0], Outcome::Stored), "{report}");
    match &report.outcomes()[1] {
        Outcome::Invalid(Error::Validation { field, index, .. }) => {
            assert_eq!((field.as_str(), *index), ("conversionId", Some(1)));
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(report.requests(), 1);
    for batch_size in [0, 1001] {
        let e = client
            .insert(std::slice::from_ref(&ok))
            .options(
                WriteOptions::default()
                    .batch_size(batch_size)
                    .concurrency(1),
            )
            .send()
            .await
            .expect_err("batch size out of bounds");
        assert!(e.to_string().contains("batch_size"), "{e}");
    }
    assert!(
        SearchAdsClient::builder(StaticToken::new("t"))
            .write_options(WriteOptions::default().batch_size(5000).concurrency(1))
            .build()
            .is_err()
    );
    assert_eq!(
        fake.ledger().counts().insert_requests,
        1,
        "only the valid conversion was sent"
    );
}

#[tokio::test]
async fn a_refused_token_fails_every_conversion_without_sending_every_batch() {
    let fake = support::start(SearchAdsFake::builder()).await;
    let client = SearchAdsClient::builder(StaticToken::new("not-a-valid-token"))
        .base_url(fake.base_url())
        .write_options(WriteOptions::default().batch_size(2).concurrency(1))
        .build()
        .expect("builds");
    let input: Vec<_> = (0..10)
        .map(|i| support::valid_conversion(&fake, &format!("a-{i}"), i))
        .collect();
    let report = client.insert(&input).send().await.expect("valid input");
    assert_eq!(report.failed(), 10);
    assert_eq!(
        report.requests(),
        1,
        "the first 401 stops the other batches"
    );
    match &report.outcomes()[9] {
        Outcome::Failed {
            error,
            attempts,
            may_have_been_stored,
        } => {
            assert_eq!(*attempts, 0);
            assert!(!may_have_been_stored);
            assert_eq!(error.status(), Some(401));
            assert!(error.to_string().contains("credentials"), "{error}");
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(fake.ledger().stored_count(), 0);
}

#[tokio::test]
async fn progress_follows_the_batches_of_an_insert_and_an_update() {
    let fake = support::start(SearchAdsFake::builder()).await;
    let options = WriteOptions::default().batch_size(7).concurrency(3);
    let client = support::client(&fake, support::fast_retries(2), options);
    let mut input: Vec<_> = (0..50)
        .map(|i| support::valid_conversion(&fake, &format!("p-{i}"), i))
        .collect();
    input[3].segmentation_id = Some(SegmentationId::new(999_999)); // rejected
    let seen: Arc<Mutex<Vec<WriteProgress>>> = Arc::default();
    let sink = seen.clone();
    let report = client
        .insert(&input)
        .options(options)
        .progress(move |p| sink.lock().unwrap().push(p))
        .send()
        .await
        .expect("valid input");
    assert_eq!((report.stored(), report.rejected()), (49, 1));
    let seen = std::mem::take(&mut *seen.lock().unwrap());
    assert_eq!(seen.len(), 8, "one report per batch of 7");
    for (n, p) in seen.iter().enumerate() {
        assert_eq!(p.batches_done, n + 1);
        assert_eq!(p.conversions_total, Some(50));
    }
    assert!(
        seen.windows(2)
            .all(|w| w[0].conversions_done < w[1].conversions_done)
    );
    assert_eq!(seen[7].conversions_done, 50);

    let seen: Arc<Mutex<Vec<WriteProgress>>> = Arc::default();
    let sink = seen.clone();
    let report = client
        .update(&input[..10])
        .options(options)
        .progress_shared(Arc::new(move |p| sink.lock().unwrap().push(p)))
        .send()
        .await
        .expect("valid input");
    assert_eq!(report.len(), 10);
    let last = seen.lock().unwrap().last().copied().expect("reported");
    assert_eq!((last.conversions_done, last.batches_done), (10, 2));

    // Input refused before sending reports nothing.
    let seen: Arc<Mutex<Vec<WriteProgress>>> = Arc::default();
    let sink = seen.clone();
    let refused = client
        .insert(Vec::<Conversion>::new())
        .options(options)
        .progress(move |p| sink.lock().unwrap().push(p))
        .send()
        .await;
    assert!(refused.is_err());
    assert!(seen.lock().unwrap().is_empty());
}

#[tokio::test]
async fn availability_and_saved_columns() {
    let fake = support::start(SearchAdsFake::builder()).await;
    let client = support::client(&fake, support::fast_retries(4), WriteOptions::default());
    let (agency, advertiser) = support::advertiser(&fake, 0);
    let availability = Availability {
        segmentation_id: Some(SegmentationId::new(551_234)),
        ..Availability::new(agency, advertiser, at(1_717_200_000_000))
    };
    let echoed = client
        .update_availability(std::slice::from_ref(&availability).to_vec())
        .send()
        .await
        .expect("accepted");
    assert_eq!(echoed, vec![availability.clone()]);
    assert_eq!(fake.ledger().availabilities().len(), 1);

    let unknown = Availability {
        segmentation_id: Some(SegmentationId::new(1)),
        ..availability
    };
    let e = client
        .update_availability([unknown].to_vec())
        .send()
        .await
        .expect_err("unknown activity");
    match &e {
        Error::Api {
            status, details, ..
        } => {
            assert_eq!(*status, 400);
            assert_eq!(details.len(), 1);
            assert_eq!(
                details[0].code,
                Some(IssueCode::FLOODLIGHT_ACTIVITY_NOT_FOUND)
            );
            assert_eq!(details[0].index, Some(0));
        }
        other => panic!("{other:?}"),
    }
    assert!(
        client
            .update_availability([].to_vec())
            .send()
            .await
            .is_err()
    );

    let columns = client
        .saved_columns(agency, advertiser)
        .send()
        .await
        .expect("listed");
    let names: Vec<_> = columns.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(
        names,
        ["Revenue incl. tax", "Newsletter signups", "Campaign owner"]
    );
    assert_eq!(columns[0].column_type.as_deref(), Some("double"));
    let e = client
        .saved_columns(agency, AdvertiserId::new(1))
        .send()
        .await
        .expect_err("unknown advertiser");
    assert_eq!(e.status(), Some(403));
}

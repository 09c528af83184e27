//! `apictl ads` against the search ads fake: upload with rejected rows and
//! the rejected-rows file, a dry run that sends nothing, the ID mapping byte for
//! byte, listings, availability and saved columns.

use crate::common;

use common::{Apictl, sample_csv};
use sa360_video_fakes::{ConversionKey, FakeServices, SearchAdsFake};

const ADVERTISER: i64 = 21_700_000_012_345;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn upload_reports_rejected_rows_and_exits_3() {
    let services = FakeServices::start_default().await.expect("fakes");
    let apictl = Apictl::with_fakes(&services);
    let report = apictl.dir().join("rejected.csv");
    let csv = apictl.dir().join("sample.csv");
    std::fs::copy(sample_csv(), &csv).expect("copy");
    let run = apictl
        .run(&[
            "ads",
            "conversions",
            "upload",
            csv.to_str().unwrap(),
            "--batch-size",
            "3",
            "--rejected",
            report.to_str().unwrap(),
        ])
        .await;
    run.expect(3);
    assert!(
        run.stdout.contains("11 rows: 7 stored, 4 rejected"),
        "{}",
        run.stdout
    );
    let text = std::fs::read_to_string(&report).expect("report");
    let lines: Vec<&str> = text.lines().collect();
    // The report holds each rejected row with the input's columns, after
    // its line, code and reason.
    let sample_header = std::fs::read_to_string(sample_csv())
        .unwrap()
        .lines()
        .next()
        .unwrap()
        .to_owned();
    assert_eq!(lines[0], format!("line,code,reason,{sample_header}"));
    assert_eq!(lines.len(), 5, "{text}");
    assert!(lines[1].starts_with("7,0x0000011A,"), "{text}");
    assert!(lines[2].starts_with("8,0x0000010E,"), "{text}");
    assert!(lines[3].starts_with("9,local,"), "{text}");
    assert!(lines[4].starts_with("10,local,"), "{text}");
    assert!(
        lines[2].ends_with(",order-20240601-004,2024-06-01T13:05:12Z,FLOODLIGHT,999999,20700000000000125,21700000012345,700000000042205,TRANSACTION,25000000,USD,MOBILE"),
        "{text}"
    );

    // Fixed in place and uploaded again: the added columns are ignored.
    let fixed = apictl.dir().join("fixed.csv");
    std::fs::write(
        &fixed,
        text.replace(",999999,", ",551234,")
            .replace(",12.50,", ",12500000,"),
    )
    .unwrap();
    let run = apictl
        .run(&[
            "--json",
            "ads",
            "conversions",
            "upload",
            fixed.to_str().unwrap(),
        ])
        .await;
    run.expect(3);
    let json: serde_json::Value = serde_json::from_str(&run.stdout).expect("JSON");
    // Lines 8 and 10 fixed and stored; 7 and 9 are (owner, id, timestamp)s
    // already stored: conflicts, rejected again.
    assert_eq!(
        (json["stored"].as_u64(), json["rejected"].as_u64()),
        (Some(2), Some(2)),
        "{json}"
    );
    for now_stored in ["order-20240601-004", "order-20240601-005"] {
        assert!(
            services
                .search_ads
                .ledger()
                .contains(&ConversionKey::advertiser(ADVERTISER, now_stored)),
            "{now_stored}"
        );
    }

    let ledger = services.search_ads.ledger();
    for stored in [
        "order-20240601-001",
        "order-20240601-002",
        "signup-20240601-002",
    ] {
        assert!(
            ledger.contains(&ConversionKey::advertiser(ADVERTISER, stored)),
            "{stored}"
        );
    }
    // 11 rows in batches of 3 (the two refused locally keep their place,
    // unsent), then the fixed report's 4 rows in one batch.
    assert_eq!(ledger.counts().insert_requests, 5);

    // The same file again, with and without --resume: its upload finished,
    // so nothing is sent, one line says so, and the status is 0.
    let requests = services.search_ads.ledger().counts().insert_requests;
    for resume in [false, true] {
        let file = csv.to_str().unwrap();
        let mut args = vec!["ads", "conversions", "upload", file, "--rejected"];
        args.push(report.to_str().unwrap());
        if resume {
            args.push("--resume");
        }
        let run = apictl.run(&args).await;
        run.expect(0);
        assert_eq!(run.stdout.lines().count(), 1, "{}", run.stdout);
        assert!(
            run.stdout.contains("already uploaded at ")
                && run.stdout.contains("11 rows: 7 stored, 4 rejected")
                && run.stdout.contains("nothing sent"),
            "{}",
            run.stdout
        );
    }
    assert_eq!(
        services.search_ads.ledger().counts().insert_requests,
        requests,
        "a finished upload sends nothing"
    );

    // --restart uploads it again: everything is now rejected (already used or
    // local), nothing stored: exit 6.
    let run = apictl
        .run(&[
            "--json",
            "ads",
            "conversions",
            "upload",
            csv.to_str().unwrap(),
            "--restart",
        ])
        .await;
    run.expect(6);
    let json: serde_json::Value = serde_json::from_str(&run.stdout).expect("JSON");
    assert_eq!(json["stored"], 0);
    assert_eq!(json["rejected"], 11);
    let default_report = format!("{}.rejected.csv", csv.display());
    assert_eq!(json["report"], default_report.as_str());
    assert_eq!(
        std::fs::read_to_string(&default_report)
            .unwrap()
            .lines()
            .count(),
        12
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dry_run_sends_nothing() {
    let services = FakeServices::start_default().await.expect("fakes");
    let apictl = Apictl::with_fakes(&services);
    let report = apictl.dir().join("dry.csv");
    let csv = sample_csv();
    let run = apictl
        .run(&[
            "ads",
            "conversions",
            "upload",
            csv.to_str().unwrap(),
            "--dry-run",
            "--rejected",
            report.to_str().unwrap(),
        ])
        .await;
    run.expect(3);
    assert!(
        run.stdout
            .contains("dry run: 11 rows, 9 valid, 2 rejected; nothing was sent"),
        "{}",
        run.stdout
    );
    assert_eq!(std::fs::read_to_string(&report).unwrap().lines().count(), 3);
    // Without credentials too: a dry run needs none.
    let bare = Apictl::new();
    let run = bare
        .run(&[
            "ads",
            "conversions",
            "upload",
            csv.to_str().unwrap(),
            "--dry-run",
            "--rejected",
            "r.csv",
        ])
        .await;
    run.expect(3);
    let counts = services.search_ads.ledger().counts();
    assert_eq!(counts.requests, 0, "{counts:?}");
    assert_eq!(services.search_ads.ledger().stored_count(), 0);

    // A file whose rows are all valid: exit 0, no report.
    let good = apictl.dir().join("good.jsonl");
    std::fs::write(
        &good,
        "{\"conversionId\":\"j-1\",\"conversionTimestamp\":\"1717200000000\",\"segmentationType\":\"FLOODLIGHT\",\"segmentationId\":\"551234\",\"agencyId\":\"20700000000000125\",\"advertiserId\":\"21700000012345\"}\n",
    )
    .unwrap();
    let run = apictl
        .run(&[
            "ads",
            "conversions",
            "upload",
            good.to_str().unwrap(),
            "--dry-run",
        ])
        .await;
    run.expect(0);
    assert!(!apictl.dir().join("good.jsonl.rejected.jsonl").exists());
    assert_eq!(services.search_ads.ledger().counts().requests, 0);
    let run = apictl
        .run(&["ads", "conversions", "upload", good.to_str().unwrap()])
        .await;
    run.expect(0);
    assert!(run.stdout.contains("1 row: 1 stored"), "{}", run.stdout);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn update_mode_changes_stored_conversions() {
    let services = FakeServices::start_default().await.expect("fakes");
    let apictl = Apictl::with_fakes(&services);
    let file = apictl.dir().join("one.csv");
    std::fs::write(
        &file,
        "conversionId,conversionTimestamp,segmentationType,segmentationId,agencyId,advertiserId,type,revenueMicros,currencyCode\n\
         u-1,2024-06-01T09:00:00Z,FLOODLIGHT,551234,20700000000000125,21700000012345,TRANSACTION,1000000,USD\n",
    )
    .unwrap();
    apictl
        .run(&["ads", "conversions", "upload", file.to_str().unwrap()])
        .await
        .expect(0);
    std::fs::write(
        &file,
        "conversionId,conversionTimestamp,segmentationType,segmentationId,agencyId,advertiserId,type,revenueMicros,currencyCode\n\
         u-1,1717232400000,FLOODLIGHT,551234,20700000000000125,21700000012345,TRANSACTION,2500000,USD\n",
    )
    .unwrap();
    apictl
        .run(&[
            "ads",
            "conversions",
            "upload",
            file.to_str().unwrap(),
            "--update",
        ])
        .await
        .expect(0);
    let stored = services
        .search_ads
        .ledger()
        .conversion(&ConversionKey::advertiser(ADVERTISER, "u-1"))
        .expect("stored");
    assert_eq!(stored.updates, 1);
    assert_eq!(stored.conversion["revenueMicros"], "2500000");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn id_mapping_file_matches_the_fakes_bytes() {
    let services = FakeServices::builder()
        .search_ads(SearchAdsFake::builder().id_mapping_size(
            sa360_video_fakes::search_ads::IdMappingSize::Bytes(1_500_000),
        ))
        .start()
        .await
        .expect("fakes");
    let apictl = Apictl::with_fakes(&services);
    let out = apictl.dir().join("mapping.csv");
    let run = apictl
        .run(&["ads", "id-mapping", "-o", out.to_str().unwrap()])
        .await;
    run.expect(0);
    let saved = std::fs::read(&out).expect("file");
    assert!(!apictl.dir().join("mapping.csv.part").exists());

    let account = &services.search_ads.accounts()[0];
    let url = format!(
        "{}/agency/{}/advertiser/{}/idmapping?alt=media",
        services.search_ads.base_url(),
        account.agency_id,
        account.advertiser_id
    );
    let direct = sa360_video_client_support::http_client_builder()
        .build()
        .expect("client")
        .get(url)
        .bearer_auth(services.search_ads.dev_token())
        .send()
        .await
        .expect("response")
        .bytes()
        .await
        .expect("body");
    assert_eq!(
        Some(saved.len() as u64),
        services
            .search_ads
            .id_mapping_len(account.agency_id, account.advertiser_id)
    );
    assert!(
        saved == direct.as_ref(),
        "the saved file differs from the fake's bytes"
    );

    let run = apictl
        .run(&["--json", "ads", "id-mapping", "-o", out.to_str().unwrap()])
        .await;
    run.expect(0);
    let json: serde_json::Value = serde_json::from_str(&run.stdout).expect("JSON");
    assert_eq!(json["bytes"], saved.len() as u64);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn list_writes_jsonl_and_csv_that_upload_reads_back() {
    let services = FakeServices::start_default().await.expect("fakes");
    let apictl = Apictl::with_fakes(&services);

    let run = apictl
        .run(&[
            "ads",
            "conversions",
            "list",
            "--api",
            "v2",
            "--from",
            "2024-01-01",
            "--to",
            "2024-01-02",
            "--page-size",
            "70",
        ])
        .await;
    run.expect(0);
    let lines: Vec<&str> = run.stdout.lines().collect();
    assert_eq!(lines.len(), 200);
    let first: serde_json::Value = serde_json::from_str(lines[0]).expect("JSON line");
    assert_eq!(first["conversionId"], "ds-700000000042205-0");
    assert_eq!(first["agencyId"], "20700000000000125");

    let csv = apictl.dir().join("day.csv");
    let run = apictl
        .run(&[
            "ads",
            "conversions",
            "list",
            "--api",
            "v2",
            "--from",
            "2024-01-03",
            "--to",
            "2024-01-03",
            "--format",
            "csv",
            "-o",
            csv.to_str().unwrap(),
        ])
        .await;
    run.expect(0);
    assert!(
        run.stdout.contains("wrote 100 conversions"),
        "{}",
        run.stdout
    );
    // Every listed row parses; as an insert, each is already used by the server.
    let run = apictl
        .run(&[
            "--json",
            "ads",
            "conversions",
            "upload",
            csv.to_str().unwrap(),
            "--dry-run",
        ])
        .await;
    run.expect(0);
    let json: serde_json::Value = serde_json::from_str(&run.stdout).expect("JSON");
    assert_eq!(json["valid"], 100);

    // By customer when the engine account is not given.
    let run = Apictl::with_fakes(&services)
        .without("SEARCH_ADS_ENGINE_ACCOUNT_ID")
        .run(&[
            "ads",
            "conversions",
            "list",
            "--api",
            "v2",
            "--from",
            "2024-01-01",
            "--to",
            "2024-01-01",
            "--format",
            "csv",
        ])
        .await;
    run.expect(0);
    assert_eq!(run.stdout.lines().count(), 101);
}

/// `--api reporting` (the default with a customer id) agrees with `--api v2` on a recent range,
/// and `ads customers` lists the directly accessible customers.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reporting_and_v2_lists_agree() {
    let today = chrono::DateTime::<chrono::Utc>::from(std::time::SystemTime::now()).date_naive();
    let services = FakeServices::builder()
        .search_ads(
            sa360_video_fakes::SearchAdsFake::builder()
                .conversions_per_account(3_000)
                .conversions_per_day(100)
                .start_date(today - chrono::Days::new(29)),
        )
        .start()
        .await
        .expect("fakes");
    let from = (today - chrono::Days::new(9)).to_string();
    let to = today.to_string();
    let list = |api: Option<&'static str>| {
        let (from, to) = (from.clone(), to.clone());
        let apictl = Apictl::with_fakes(&services);
        async move {
            let mut args = vec!["ads", "conversions", "list", "--from", &from, "--to", &to];
            if let Some(api) = api {
                args.extend(["--api", api]);
            }
            let run = apictl.run(&args).await;
            run.expect(0);
            run.stdout
                .lines()
                .map(|l| serde_json::from_str::<serde_json::Value>(l).expect("JSON line"))
                .collect::<Vec<_>>()
        }
    };
    let v2 = list(Some("v2")).await;
    let reporting = list(None).await;
    assert_eq!(v2.len(), 1000);
    assert_eq!(reporting.len(), v2.len());
    for (old, new) in v2.iter().zip(&reporting) {
        for field in [
            "conversionId",
            "conversionTimestamp",
            "dsConversionId",
            "state",
            "adId",
        ] {
            assert_eq!(old[field], new[field], "{field}");
        }
        assert!(new.get("agencyId").is_none(), "v0 has no legacy hierarchy");
    }

    // What the help says: the v2 output reads back as an insert; the
    // Reporting API's cannot be inserted, for the reason the help names.
    let apictl = Apictl::with_fakes(&services);
    for (api, valid) in [("v2", 1000), ("reporting", 0)] {
        let file = apictl.dir().join(format!("{api}.jsonl"));
        let run = apictl
            .run(&[
                "ads",
                "conversions",
                "list",
                "--from",
                &from,
                "--to",
                &to,
                "--api",
                api,
                "-o",
                file.to_str().unwrap(),
            ])
            .await;
        run.expect(0);
        let run = apictl
            .run(&[
                "--json",
                "ads",
                "conversions",
                "upload",
                file.to_str().unwrap(),
                "--dry-run",
            ])
            .await;
        let json: serde_json::Value = serde_json::from_str(&run.stdout).expect("JSON");
        assert_eq!(json["rows"], 1000, "{api}");
        assert_eq!(json["valid"], valid, "{api}");
        if valid == 0 {
            let reason = json["rejections"][0]["reason"].as_str().unwrap_or_default();
            assert!(
                reason.contains("segmentationType is required for insert"),
                "{reason}"
            );
        }
    }
    let help = apictl.run(&["ads", "conversions", "list", "--help"]).await;
    assert!(
        help.stdout
            .contains("segmentationType is required for insert"),
        "{}",
        help.stdout
    );

    let run = Apictl::with_fakes(&services)
        .run(&["ads", "customers"])
        .await;
    run.expect(0);
    assert_eq!(run.stdout, "2000012300\n2000012350\n");

    // The window is checked before sending, with a hint naming flags that exist.
    let run = Apictl::with_fakes(&services)
        .run(&[
            "ads",
            "conversions",
            "list",
            "--from",
            "2024-01-01",
            "--to",
            &to,
        ])
        .await;
    run.expect(4);
    assert!(run.stderr.contains("60-day window"), "{}", run.stderr);
    assert!(run.stderr.contains("--api v2"), "{}", run.stderr);

    // The second customer sits behind the manager.
    let run = Apictl::with_fakes(&services)
        .env("SEARCH_ADS_CUSTOMER_ID", "2000012351")
        .run(&["ads", "conversions", "list", "--from", &from, "--to", &to])
        .await;
    run.expect(1);
    assert!(run.stderr.contains("--login-customer-id"), "{}", run.stderr);
    let run = Apictl::with_fakes(&services)
        .env("SEARCH_ADS_CUSTOMER_ID", "2000012351")
        .run(&[
            "ads",
            "conversions",
            "list",
            "--from",
            &from,
            "--to",
            &to,
            "--login-customer-id",
            "2000012300",
        ])
        .await;
    run.expect(0);
    assert_eq!(run.stdout.lines().count(), 1000);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn availability_and_saved_columns() {
    let services = FakeServices::start_default().await.expect("fakes");
    let apictl = Apictl::with_fakes(&services);
    let run = apictl
        .run(&[
            "ads",
            "availability",
            "--segmentation-id",
            "551234",
            "--segmentation-name",
            "Sign-up",
            "--until",
            "2024-06-02T00:00:00Z",
        ])
        .await;
    run.expect(0);
    assert_eq!(run.stdout.lines().count(), 2, "{}", run.stdout);
    assert!(
        run.stdout.contains("2024-06-02T00:00:00Z"),
        "{}",
        run.stdout
    );
    assert_eq!(services.search_ads.ledger().availabilities().len(), 2);

    let run = apictl.run(&["--json", "ads", "saved-columns"]).await;
    run.expect(0);
    let json: serde_json::Value = serde_json::from_str(&run.stdout).expect("JSON");
    assert_eq!(json["savedColumns"].as_array().map(Vec::len), Some(3));

    // Errors are one line and a hint.
    let run = apictl
        .run_with(&["ads", "saved-columns"], &[("SEARCH_ADS_TOKEN", "nope")])
        .await;
    run.expect(5);
    let lines: Vec<&str> = run.stderr.lines().collect();
    assert_eq!(lines.len(), 2, "{}", run.stderr);
    assert!(lines[0].starts_with("error: savedColumns.list failed with HTTP 401"));
    assert!(lines[1].starts_with("hint: check the credentials"));
    let run = Apictl::new().run(&["ads", "saved-columns"]).await;
    run.expect(4);
    assert!(
        run.stderr.contains("error: no agency and advertiser given"),
        "{}",
        run.stderr
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn config_file_fills_in_what_flags_and_environment_do_not() {
    let services = FakeServices::start_default().await.expect("fakes");
    let account = services.search_ads.accounts()[0].clone();
    let apictl = Apictl::new();
    let config = apictl.dir().join("home/.config/apictl/config.toml");
    std::fs::create_dir_all(config.parent().unwrap()).unwrap();
    std::fs::write(
        &config,
        format!(
            "[search_ads]\nurl = \"{}\"\ntoken = \"{}\"\nagency_id = {}\nadvertiser_id = \"{}\"\n",
            services.search_ads.base_url(),
            services.search_ads.dev_token(),
            account.agency_id,
            account.advertiser_id
        ),
    )
    .unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&config, std::fs::Permissions::from_mode(0o600)).unwrap();
    }
    let run = apictl.run(&["ads", "saved-columns"]).await;
    run.expect(0);
    assert!(run.stderr.is_empty(), "{}", run.stderr);
    // The environment beats the config file, a flag beats the environment.
    let run = apictl
        .run_with(
            &["ads", "saved-columns"],
            &[("SEARCH_ADS_ADVERTISER_ID", "1")],
        )
        .await;
    run.expect(1);
    let run = apictl
        .run_with(
            &[
                "ads",
                "saved-columns",
                "--advertiser-id",
                &account.advertiser_id.to_string(),
            ],
            &[("SEARCH_ADS_ADVERTISER_ID", "1")],
        )
        .await;
    run.expect(0);
    // A password in the config file is refused.
    std::fs::write(&config, "[video]\npassword = \"hunter2\"\n").unwrap();
    let run = apictl.run(&["video", "login"]).await;
    run.expect(4);
    assert!(run.stderr.contains("VIDEO_PASSWORD"), "{}", run.stderr);
    assert!(!run.stderr.contains("hunter2"), "{}", run.stderr);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_json_lines_report_is_fixed_and_uploaded_again() {
    let services = FakeServices::start_default().await.expect("fakes");
    let apictl = Apictl::with_fakes(&services);
    let input = apictl.dir().join("in.jsonl");
    let row = |id: &str, extra: &str| {
        format!(
            "{{\"conversionId\":\"{id}\",\"conversionTimestamp\":\"1717200000000\",{extra}\"segmentationId\":\"551234\",\"agencyId\":\"20700000000000125\",\"advertiserId\":\"21700000012345\"}}\n"
        )
    };
    std::fs::write(
        &input,
        row("jr-1", "\"segmentationType\":\"FLOODLIGHT\",") + &row("jr-2", ""),
    )
    .unwrap();
    let run = apictl
        .run(&["ads", "conversions", "upload", input.to_str().unwrap()])
        .await;
    run.expect(3);
    let report = apictl.dir().join("in.jsonl.rejected.jsonl");
    let text = std::fs::read_to_string(&report).unwrap();
    let line: serde_json::Value = serde_json::from_str(text.trim()).unwrap();
    assert_eq!(line["conversionId"], "jr-2");
    assert_eq!(line["_rejected"]["line"], 2);
    assert_eq!(line["_rejected"]["code"], "local");
    let fixed = apictl.dir().join("fixed.jsonl");
    std::fs::write(
        &fixed,
        text.replace(
            "\"conversionId\"",
            "\"segmentationType\":\"FLOODLIGHT\",\"conversionId\"",
        ),
    )
    .unwrap();
    let run = apictl
        .run(&["ads", "conversions", "upload", fixed.to_str().unwrap()])
        .await;
    run.expect(0);
    assert!(run.stdout.contains("1 row: 1 stored"), "{}", run.stdout);
    assert!(
        services
            .search_ads
            .ledger()
            .contains(&ConversionKey::advertiser(ADVERTISER, "jr-2"))
    );
}

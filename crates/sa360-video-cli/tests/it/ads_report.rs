//! `apictl ads report` and `apictl ads fields` against the search ads fake: a query's rows as
//! CSV, JSON lines and a table with the selected fields as columns (in the SELECT's order),
//! `--query-file`, a misspelt field refused before sending with the nearest name, a name newer
//! than the catalogue sent (issue 51), and the field catalogue with its `FROM` resources.

use crate::common;

use common::Apictl;
use sa360_video_fakes::{FakeServices, SearchAdsFake};

const QUERY: &str = "SELECT conversion.id, conversion.status, segments.date FROM conversion \
                     WHERE segments.date DURING LAST_7_DAYS";

async fn services() -> FakeServices {
    let today = chrono::DateTime::<chrono::Utc>::from(std::time::SystemTime::now()).date_naive();
    FakeServices::builder()
        .search_ads(
            SearchAdsFake::builder()
                .conversions_per_account(200)
                .conversions_per_day(20)
                .start_date(today - chrono::Days::new(9)),
        )
        .start()
        .await
        .expect("fakes")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_query_is_written_as_csv_jsonl_and_a_table() {
    let services = services().await;
    let apictl = Apictl::with_fakes(&services);
    let run = apictl.run(&["ads", "report", "--query", QUERY]).await;
    run.expect(0);
    let lines: Vec<&str> = run.stdout.lines().collect();
    assert_eq!(lines[0], "conversion.id,conversion.status,segments.date");
    assert_eq!(lines.len(), 1 + 7 * 20, "{}", run.stdout);
    assert!(
        lines[1..].iter().all(|l| l.split(',').count() == 3),
        "{}",
        run.stdout
    );

    let file = apictl.dir().join("query.txt");
    std::fs::write(&file, QUERY).expect("write");
    let out = apictl.dir().join("rows.jsonl");
    let run = apictl
        .run(&[
            "ads",
            "report",
            "--query-file",
            file.to_str().unwrap(),
            "--format",
            "jsonl",
            "--page-size",
            "30",
            "-o",
            out.to_str().unwrap(),
        ])
        .await;
    run.expect(0);
    let text = std::fs::read_to_string(&out).expect("output");
    let rows: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).expect("JSON line"))
        .collect();
    assert_eq!(rows.len(), 140);
    assert!(
        rows.iter()
            .all(|r| r["conversion.id"].is_string() && r["segments.date"].is_string())
    );

    let run = apictl
        .run(&["ads", "report", "--query", QUERY, "--format", "table"])
        .await;
    run.expect(0);
    assert!(run.stdout.starts_with("conversion.id"), "{}", run.stdout);
    assert_eq!(run.stdout.lines().count(), 141);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_misspelt_field_is_refused_before_sending_with_the_nearest_name() {
    let services = services().await;
    let apictl = Apictl::with_fakes(&services);
    let run = apictl
        .run(&[
            "ads",
            "report",
            "--query",
            "SELECT conversion.idd FROM conversion WHERE segments.date DURING LAST_7_DAYS",
        ])
        .await;
    assert_ne!(run.code, 0);
    assert!(run.stderr.contains("UNRECOGNIZED_FIELD"), "{}", run.stderr);
    assert!(run.stderr.contains("`conversion.id`"), "{}", run.stderr);
    assert!(run.stderr.contains("apictl ads fields"), "{}", run.stderr);
    assert_eq!(
        services
            .search_ads
            .ledger()
            .counts()
            .reporting_search_requests,
        0,
        "nothing was sent"
    );
}

/// The guide's first report through `ads report`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_guides_campaign_report_runs() {
    let services = services().await;
    let apictl = Apictl::with_fakes(&services);
    let run = apictl
        .run(&[
            "ads",
            "report",
            "--query",
            "SELECT campaign.id, campaign.name, segments.device, segments.date, metrics.impressions, \
             metrics.clicks FROM campaign WHERE segments.date DURING LAST_30_DAYS",
        ])
        .await;
    run.expect(0);
    let lines: Vec<&str> = run.stdout.lines().collect();
    assert_eq!(
        lines[0],
        "campaign.id,campaign.name,segments.device,segments.date,metrics.impressions,metrics.clicks"
    );
    assert!(lines.len() > 2, "{}", run.stdout);
    for line in &lines[1..] {
        let cells: Vec<&str> = line.split(',').collect();
        assert_eq!(cells.len(), 6, "{line}");
        let impressions: u64 = cells[4].parse().expect("impressions");
        let clicks: u64 = cells[5].parse().expect("clicks");
        assert!(impressions >= clicks, "{line}");
    }
}

#[tokio::test]
async fn fields_lists_the_catalogue() {
    let apictl = Apictl::new();
    let run = apictl.run(&["ads", "fields", "metrics.clicks"]).await;
    run.expect(0);
    assert!(run.stdout.lines().next().unwrap().starts_with("NAME"));
    assert!(
        run.stdout.lines().any(|l| l.starts_with("metrics.clicks ")
            && l.contains("METRIC")
            && l.contains("INT64")),
        "{}",
        run.stdout
    );
    let run = apictl
        .run(&["--json", "ads", "fields", "campaign.nam"])
        .await;
    run.expect(0);
    let json: serde_json::Value = serde_json::from_str(&run.stdout).expect("JSON");
    assert_eq!(json["fields"][0]["name"], "campaign.name");
    let run = apictl.run(&["ads", "fields", "campaign.nmae"]).await;
    assert_ne!(run.code, 0);
    assert!(run.stderr.contains("campaign.name"), "{}", run.stderr);
}

/// Issue 51's query: a segment revision 20260810 added, with the columns in the SELECT's order
/// in JSON lines (issue 50).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_postal_code_segment_is_reported_in_the_selects_order() {
    let services = services().await;
    let apictl = Apictl::with_fakes(&services);
    let run = apictl
        .run(&[
            "ads",
            "report",
            "--format",
            "jsonl",
            "--query",
            "SELECT campaign.id, segments.geo_target_postal_code, metrics.clicks FROM campaign \
             WHERE segments.date DURING LAST_7_DAYS",
        ])
        .await;
    run.expect(0);
    assert!(!run.stderr.contains("warning"), "{}", run.stderr);
    let lines: Vec<&str> = run.stdout.lines().collect();
    assert!(!lines.is_empty());
    for line in lines {
        let keys: Vec<&str> = line
            .match_indices("\":")
            .map(|(i, _)| {
                let start = line[..i].rfind('"').unwrap() + 1;
                &line[start..i]
            })
            .collect();
        assert_eq!(
            keys,
            [
                "campaign.id",
                "segments.geo_target_postal_code",
                "metrics.clicks"
            ],
            "{line}"
        );
        let row: serde_json::Value = serde_json::from_str(line).expect("JSON line");
        let code = row["segments.geo_target_postal_code"]
            .as_str()
            .expect("a postal code");
        assert!(code.starts_with("geoTargetConstants/"), "{line}");
    }
}

/// The default rule for names the catalogue does not have (SR-32): a typo of a known field is
/// refused before sending with the revision and the flag; a distant name is sent with a warning
/// (and judged by the service); `--send-unknown-fields` sends the near one too.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn names_newer_than_the_catalogue_follow_the_rule_or_the_flag() {
    let services = services().await;
    let apictl = Apictl::with_fakes(&services);
    let sent = || {
        services
            .search_ads
            .ledger()
            .counts()
            .reporting_search_requests
    };
    let report = |field: &'static str| {
        format!("SELECT campaign.id, {field} FROM campaign WHERE segments.date DURING LAST_7_DAYS")
    };
    let near = report("metrics.clickz");
    let run = apictl.run(&["ads", "report", "--query", &near]).await;
    assert_ne!(run.code, 0);
    for text in [
        "UNRECOGNIZED_FIELD",
        "did you mean `metrics.clicks`?",
        "(revision 20260810)",
        "--send-unknown-fields",
    ] {
        assert!(run.stderr.contains(text), "{text}: {}", run.stderr);
    }
    assert!(!run.stderr.contains("UnknownFields"), "{}", run.stderr);
    assert_eq!(sent(), 0, "nothing was sent");

    // Far from every known name: sent, with a warning; the fake (the service) refuses it.
    let far = report("segments.zz_invented_for_this_test");
    let run = apictl.run(&["ads", "report", "--query", &far]).await;
    assert_ne!(run.code, 0);
    assert!(
        run.stderr.contains(
            "warning: not in apictl's field catalogue (revision 20260810), sent as they are for \
             the service to judge: segments.zz_invented_for_this_test"
        ),
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains("UNRECOGNIZED_FIELD"), "{}", run.stderr);
    assert_eq!(sent(), 1, "the query reached the service");

    let run = apictl
        .run(&["ads", "report", "--send-unknown-fields", "--query", &near])
        .await;
    assert_ne!(run.code, 0);
    assert!(
        run.stderr
            .contains("warning: not in apictl's field catalogue"),
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains(": metrics.clickz"), "{}", run.stderr);
    assert_eq!(sent(), 2, "sent as it is");
}

#[tokio::test]
async fn fields_shows_and_filters_by_the_from_resources() {
    let apictl = Apictl::new();
    let run = apictl.run(&["ads", "fields", "ad_group.name"]).await;
    run.expect(0);
    let line = run
        .stdout
        .lines()
        .find(|l| l.starts_with("ad_group.name "))
        .expect("the field");
    let from = line.split_whitespace().last().unwrap();
    assert!(from.split(',').any(|r| r == "keyword_view"), "{line}");
    assert!(!from.split(',').any(|r| r == "campaign"), "{line}");
    let run = apictl
        .run(&["--json", "ads", "fields", "--from", "label", "metrics."])
        .await;
    assert_ne!(run.code, 0, "label takes no metrics: {}", run.stdout);
    let run = apictl
        .run(&[
            "--json",
            "ads",
            "fields",
            "--from",
            "campaign",
            "segments.geo_target_p",
        ])
        .await;
    run.expect(0);
    let json: serde_json::Value = serde_json::from_str(&run.stdout).expect("JSON");
    assert_eq!(json["fields"][0]["name"], "segments.geo_target_postal_code");
    assert!(
        json["fields"][0]["selectableWith"]
            .as_array()
            .unwrap()
            .contains(&"campaign".into())
    );
    let run = apictl.run(&["ads", "fields", "--from", "campaing"]).await;
    assert_ne!(run.code, 0);
    assert!(
        run.stderr.contains("did you mean `campaign`?"),
        "{}",
        run.stderr
    );
}

/// `apictl ads report … | head -1`: the reader goes after one line and the
/// command ends quietly with status 0 (issue 37), whatever the format.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_closed_stdout_ends_the_report_quietly() {
    use std::io::BufRead as _;
    // 14 000 rows, far more than a pipe's buffer holds: the writes after the
    // reader left do fail.
    let today = chrono::DateTime::<chrono::Utc>::from(std::time::SystemTime::now()).date_naive();
    let services = FakeServices::builder()
        .search_ads(
            SearchAdsFake::builder()
                .conversions_per_account(20_000)
                .conversions_per_day(2_000)
                .start_date(today - chrono::Days::new(9)),
        )
        .start()
        .await
        .expect("fakes");
    let apictl = Apictl::with_fakes(&services);
    for args in [
        &["ads", "report", "--query", QUERY][..],
        &["ads", "report", "--query", QUERY, "--format", "jsonl"],
    ] {
        let mut child = apictl
            .command(args)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("spawn");
        let mut first = String::new();
        std::io::BufReader::new(child.stdout.take().expect("stdout"))
            .read_line(&mut first)
            .expect("a line");
        assert!(!first.is_empty(), "{args:?}");
        // The reader is dropped here: stdout is closed.
        let output = tokio::task::spawn_blocking(move || child.wait_with_output())
            .await
            .expect("join")
            .expect("ends");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(0), "{args:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
    }
}

/// `apictl --json ads report` writes JSON lines (issue 37: `--json` is honoured by
/// every command); a named `--format` still wins.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn json_asks_for_json_lines() {
    let services = services().await;
    let apictl = Apictl::with_fakes(&services);
    let run = apictl
        .run(&["--json", "ads", "report", "--query", QUERY])
        .await;
    run.expect(0);
    let lines: Vec<&str> = run.stdout.lines().collect();
    assert_eq!(lines.len(), 7 * 20, "{}", run.stdout);
    for line in lines {
        let row: serde_json::Value = serde_json::from_str(line).expect("a JSON line");
        assert!(row["conversion.id"].is_string(), "{line}");
    }
    let run = apictl
        .run(&[
            "--json", "ads", "report", "--query", QUERY, "--format", "csv",
        ])
        .await;
    run.expect(0);
    assert!(
        run.stdout
            .starts_with("conversion.id,conversion.status,segments.date\n")
    );
}

/// `--count`, `--validate-only` and `--summary` (issue 49): the count of `returnTotalResultsCount`,
/// the service's check of `validateOnly`, and the summary row as the last CSV row, read with one
/// searchStream request.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn count_validate_only_and_summary_ask_the_service() {
    let services = services().await;
    let apictl = Apictl::with_fakes(&services);
    let run = apictl
        .run(&["ads", "report", "--query", QUERY, "--count"])
        .await;
    run.expect(0);
    assert_eq!(run.stdout.trim(), (7 * 20).to_string());
    let run = apictl
        .run(&["ads", "report", "--query", QUERY, "--validate-only"])
        .await;
    run.expect(0);
    assert!(run.stdout.is_empty(), "{}", run.stdout);
    let query = "SELECT campaign.id, metrics.clicks FROM campaign WHERE segments.date DURING \
                 LAST_7_DAYS";
    let run = apictl
        .run(&["ads", "report", "--query", query, "--summary"])
        .await;
    run.expect(0);
    let lines: Vec<&str> = run.stdout.lines().collect();
    let clicks = |l: &&str| l.split(',').nth(1).unwrap().parse::<u64>().unwrap_or(0);
    let (last, rows) = lines[1..].split_last().expect("rows and the summary");
    assert!(
        last.starts_with(','),
        "no campaign in the summary row: {last}"
    );
    assert_eq!(clicks(last), rows.iter().map(clicks).sum::<u64>());
    let counts = services.search_ads.ledger().counts();
    assert_eq!(
        (
            counts.reporting_search_requests,
            counts.reporting_stream_requests
        ),
        (2, 1)
    );
}

//! `apictl ads conversions upload` killed with `kill -9` at random moments,
//! then `--resume`d, against the search ads fake; and per-row input errors
//! with their line numbers.
//!
//! Two fakes: one that deduplicates as the service does (SA-15), where the
//! end state must be every row stored exactly once, none rejected, exit 0;
//! and one that does not (it stores a repeated insert again), so the test
//! sees every resend and cannot lean on the fake: a row the journal says is
//! settled must never be sent again. (A row in flight at the kill, stored
//! but not answered, is sent again by `--resume`: no client can know; the
//! service's deduplication turns it into "already stored". Without it, those
//! rows, and only those, get a second copy.)

use crate::common;

use std::collections::{BTreeMap, HashSet};
use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use common::Apictl;
use sa360_video_fakes::{FakeServices, Faults, SearchAdsFake};

const AGENCY: &str = "20700000000000125";
const ADVERTISER: i64 = 21_700_000_012_345;
const ROWS: usize = 20_000;
const KILLS: usize = 8;

/// A CSV of `ROWS` conversions; `bad(i)` rows carry an unknown Floodlight
/// activity (the server rejects them, 0x0000010E) or no timestamp (refused
/// locally).
fn write_csv(path: &Path, bad: impl Fn(usize) -> Option<&'static str>) {
    let mut text = String::from(
        "conversionId,conversionTimestamp,segmentationType,segmentationId,agencyId,advertiserId,type,revenueMicros,currencyCode\n",
    );
    for i in 0..ROWS {
        let ts = 1_717_200_000_000u64 + i as u64 * 1000;
        let (segment, ts) = match bad(i) {
            Some("server") => ("999999".to_owned(), ts.to_string()),
            Some(_) => ("551234".to_owned(), String::new()),
            None => ("551234".to_owned(), ts.to_string()),
        };
        text.push_str(&format!(
            "kill-{i},{ts},FLOODLIGHT,{segment},{AGENCY},{ADVERTISER},TRANSACTION,1000000,USD\n"
        ));
    }
    std::fs::write(path, text).expect("write csv");
}

/// The `done` lines of a journal: rows settled (not in a resend list).
fn settled_rows(journal: &Path) -> HashSet<u64> {
    let Ok(text) = std::fs::read_to_string(journal) else {
        return HashSet::new();
    };
    let range = |t: &str| -> (u64, u64) {
        let (a, b) = t.split_once('-').expect("range");
        (a.parse().expect("row"), b.parse().expect("row"))
    };
    let mut settled = HashSet::new();
    for line in text.split_inclusive('\n').filter(|l| l.ends_with('\n')) {
        let Some(rest) = line.trim_end().strip_prefix("done ") else {
            continue;
        };
        let parts: Vec<&str> = rest.split(' ').collect();
        let (first, last) = range(parts[0]);
        let resend = parts[4].strip_prefix("resend=").expect("resend");
        let mut skip = HashSet::new();
        if resend != "-" {
            for r in resend.split(',') {
                let (a, b) = range(r);
                skip.extend(a..=b);
            }
        }
        settled.extend((first..=last).filter(|n| !skip.contains(n)));
    }
    settled
}

/// Copies in the ledger, by conversion id.
fn copies(services: &FakeServices) -> BTreeMap<String, u32> {
    services
        .search_ads
        .ledger()
        .conversions()
        .into_iter()
        .filter(|c| c.key.conversion_id.starts_with("kill-"))
        .map(|c| (c.key.conversion_id.clone(), c.copies))
        .collect()
}

struct Killed {
    kills: usize,
    runs: usize,
    /// Row (1-based) → ledger copies when a kill found it settled.
    settled_at_kill: BTreeMap<u64, u32>,
    final_json: serde_json::Value,
    final_code: i32,
}

/// Uploads `csv`, killing the process at random moments until `KILLS` kills
/// interrupted a running upload, then resumes to the end.
async fn upload_with_kills(apictl: &Apictl, services: &FakeServices, csv: &Path) -> Killed {
    let seed = fastrand::u64(..);
    eprintln!("kill schedule seed {seed}");
    let mut rng = fastrand::Rng::with_seed(seed);
    let journal = {
        let mut p = csv.as_os_str().to_owned();
        p.push(".journal");
        std::path::PathBuf::from(p)
    };
    let file = csv.to_str().unwrap().to_owned();
    let mut out = Killed {
        kills: 0,
        runs: 0,
        settled_at_kill: BTreeMap::new(),
        final_json: serde_json::Value::Null,
        final_code: -1,
    };
    let args = |resume: bool| {
        let mut a = vec![
            "--json",
            "ads",
            "conversions",
            "upload",
            file.as_str(),
            "--batch-size",
            "50",
            "--concurrency",
            "4",
        ];
        if resume {
            a.push("--resume");
        }
        a
    };
    let mut resume = false;
    while out.kills < KILLS && out.runs < 60 {
        let mut child = apictl
            .command(&args(resume))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn apictl");
        out.runs += 1;
        // A random moment: once the journal has settled a random number of
        // further rows (so the kills spread over the whole file whatever the
        // machine's speed), plus a random delay of up to 30 ms.
        let target = settled_rows(&journal).len() + rng.usize(400..2500);
        let started = std::time::Instant::now();
        while child.try_wait().expect("try_wait").is_none()
            && settled_rows(&journal).len() < target
            && started.elapsed() < Duration::from_secs(60)
        {
            tokio::time::sleep(Duration::from_millis(3)).await;
        }
        tokio::time::sleep(Duration::from_millis(rng.u64(0..30))).await;
        let mut killed = false;
        if child.try_wait().expect("try_wait").is_none() {
            child.kill().expect("kill -9");
            killed = true;
        }
        let status = tokio::task::spawn_blocking(move || child.wait())
            .await
            .unwrap()
            .unwrap();
        let ledger = copies(services);
        let id_of = |row: u64| format!("kill-{}", row - 1);
        for row in settled_rows(&journal) {
            if let Some(&n) = ledger.get(&id_of(row)) {
                out.settled_at_kill.entry(row).or_insert(n);
            } else {
                out.settled_at_kill.entry(row).or_insert(0);
            }
        }
        if common::unfinished(&journal) {
            out.kills += usize::from(killed);
            resume = true;
        } else if killed && !status.success() && status.code() != Some(3) {
            // Killed before it wrote its journal: nothing was sent yet.
            resume = false;
        } else {
            // The run finished (before the kill, or between the check and it).
            assert!(status.success() || status.code() == Some(3), "{status:?}");
            break;
        }
    }
    // To the end, without kills.
    let run = if common::unfinished(&journal) {
        apictl.run(&args(true)).await
    } else {
        apictl.run(&args(false)).await
    };
    out.runs += 1;
    out.final_code = run.code;
    out.final_json = serde_json::from_str(&run.stdout).unwrap_or(serde_json::Value::Null);
    assert!(
        common::finished(&journal),
        "journal left after the last run: {}\n{}",
        run.stdout,
        run.stderr
    );
    out
}

async fn fake(deduplicate: bool) -> FakeServices {
    let faults = Faults {
        latency: Duration::from_millis(4),
        latency_jitter: Duration::from_millis(8),
        ..Faults::default()
    };
    FakeServices::builder()
        .search_ads(
            SearchAdsFake::builder()
                .deduplicate(deduplicate)
                .faults(faults),
        )
        .start()
        .await
        .expect("fakes")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kill_9_then_resume_stores_every_row_exactly_once() {
    let services = fake(true).await;
    let apictl = Apictl::with_fakes(&services);
    let csv = apictl.dir().join("kill.csv");
    write_csv(&csv, |_| None);
    let k = upload_with_kills(&apictl, &services, &csv).await;
    eprintln!(
        "deduplicating fake: {} kills in {} runs, {} rows settled at some kill; final run: {} stored ({} already stored), {} rejected, exit {}",
        k.kills,
        k.runs,
        k.settled_at_kill.len(),
        k.final_json["stored"],
        k.final_json["alreadyStored"],
        k.final_json["rejected"],
        k.final_code
    );
    assert!(k.kills >= KILLS, "only {} kills landed", k.kills);
    let json = &k.final_json;
    let counts = format!(
        "rows {} stored {} rejected {} failed {} (first rejections: {})",
        json["rows"],
        json["stored"],
        json["rejected"],
        json["failed"],
        json["rejections"].as_array().map_or(0, Vec::len).min(3)
    );
    assert_eq!(k.final_code, 0, "{counts}");
    assert_eq!(json["rows"], ROWS as u64, "{counts}");
    assert_eq!(json["stored"], ROWS as u64, "{counts}");
    assert_eq!(json["rejected"], 0, "{counts}");
    assert_eq!(json["failed"], 0, "{counts}");
    assert!(json["report"].is_null(), "{counts}");
    let ledger = copies(&services);
    assert_eq!(ledger.len(), ROWS, "rows missing from the ledger");
    assert!(ledger.values().all(|&n| n == 1));
    assert!(!csv.with_extension("csv.rejected.csv").exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kill_9_never_resends_a_settled_row_to_a_fake_without_deduplication() {
    let services = fake(false).await;
    let apictl = Apictl::with_fakes(&services);
    let csv = apictl.dir().join("blind.csv");
    let bad = |i: usize| match i % 97 {
        13 => Some("server"),
        71 => Some("local"),
        _ => None,
    };
    write_csv(&csv, bad);
    let k = upload_with_kills(&apictl, &services, &csv).await;
    let ledger = copies(&services);
    let extra: u32 = ledger.values().map(|n| n - 1).sum();
    eprintln!(
        "fake without deduplication: {} kills in {} runs, {} rows settled at some kill, {} extra copies (rows in flight at a kill); final run: {} stored, {} rejected, exit {}",
        k.kills,
        k.runs,
        k.settled_at_kill.len(),
        extra,
        k.final_json["stored"],
        k.final_json["rejected"],
        k.final_code
    );
    assert!(k.kills >= KILLS, "only {} kills landed", k.kills);
    assert_eq!(
        k.final_code, 3,
        "stored {} rejected {} failed {}",
        k.final_json["stored"], k.final_json["rejected"], k.final_json["failed"]
    );
    // Every settled row was in the ledger when the journal said so (or was
    // one of the bad rows), and was never sent again.
    for (&row, &then) in &k.settled_at_kill {
        let i = (row - 1) as usize;
        let id = format!("kill-{i}");
        let now = ledger.get(&id).copied().unwrap_or(0);
        if bad(i).is_some() {
            assert_eq!(now, 0, "bad row {id} stored");
        } else {
            assert!(then >= 1, "the journal settled {id} before it was stored");
            assert_eq!(
                now, then,
                "{id} was sent again after the journal settled it"
            );
        }
    }
    // Every valid row stored, no bad one.
    for i in 0..ROWS {
        let stored = ledger.contains_key(&format!("kill-{i}"));
        assert_eq!(stored, bad(i).is_none(), "kill-{i}");
    }
    // Each bad row is reported once, with its line.
    let report = std::fs::read_to_string(format!("{}.rejected.csv", csv.display())).unwrap();
    let mut lines: Vec<u64> = report
        .lines()
        .skip(1)
        .map(|l| l.split(',').next().unwrap().parse().unwrap())
        .collect();
    lines.sort_unstable();
    let expected: Vec<u64> = (0..ROWS)
        .filter(|&i| bad(i).is_some())
        .map(|i| i as u64 + 2)
        .collect();
    assert_eq!(lines, expected, "the report lists each bad row once");
    assert_eq!(k.final_json["rejected"], expected.len() as u64);
    assert_eq!(k.final_json["stored"], (ROWS - expected.len()) as u64);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_journal_is_refused_without_resume_and_bound_to_its_file() {
    let services = FakeServices::start_default().await.expect("fakes");
    let apictl = Apictl::with_fakes(&services);
    let csv = apictl.dir().join("j.csv");
    std::fs::write(&csv, "conversionId,conversionTimestamp,segmentationType,segmentationId,agencyId,advertiserId\nj-1,1717200000000,FLOODLIGHT,551234,20700000000000125,21700000012345\n").unwrap();
    let journal = apictl.dir().join("j.csv.journal");
    // A journal of another version of the file.
    std::fs::write(
        &journal,
        format!(
            "facade write journal 1\ninput 3 {} csv insert\nnote {}.rejected.csv\n",
            "0".repeat(64),
            csv.display()
        ),
    )
    .unwrap();
    let file = csv.to_str().unwrap();
    // Refused before sending: exit 4.
    let run = apictl.run(&["ads", "conversions", "upload", file]).await;
    run.expect(4);
    assert!(
        run.stderr.contains("--resume") && run.stderr.contains("--restart"),
        "{}",
        run.stderr
    );
    let run = apictl
        .run(&["ads", "conversions", "upload", file, "--resume"])
        .await;
    run.expect(4);
    assert!(run.stderr.contains("has changed"), "{}", run.stderr);
    assert!(run.stderr.contains("--restart"), "{}", run.stderr);
    assert_eq!(services.search_ads.ledger().counts().insert_requests, 0);
    let run = apictl
        .run(&["ads", "conversions", "upload", file, "--restart"])
        .await;
    run.expect(0);
    assert!(common::finished(&journal));
    let run = apictl
        .run(&["ads", "conversions", "upload", file, "--resume"])
        .await;
    run.expect(0);
    assert!(run.stdout.contains("already uploaded"), "{}", run.stdout);
    // A finished upload of another version of the file: this one is uploaded.
    let finished = std::fs::read_to_string(&journal).unwrap();
    std::fs::write(
        &csv,
        format!(
            "{}j-2,1717200000000,FLOODLIGHT,551234,20700000000000125,21700000012345\n",
            std::fs::read_to_string(&csv).unwrap()
        ),
    )
    .unwrap();
    let run = apictl.run(&["ads", "conversions", "upload", file]).await;
    // j-1 is stored already, from another upload as far as this one knows.
    run.expect(3);
    assert!(
        run.stdout.contains("2 rows: 1 stored, 1 rejected"),
        "{}",
        run.stdout
    );
    assert_ne!(std::fs::read_to_string(&journal).unwrap(), finished);
    assert!(common::finished(&journal));
    std::fs::remove_file(&journal).unwrap();
    let run = apictl
        .run(&["ads", "conversions", "upload", file, "--resume"])
        .await;
    run.expect(4);
    assert!(run.stderr.contains("no journal"), "{}", run.stderr);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_rows_are_rejected_with_their_line_and_the_rest_still_go() {
    let services = FakeServices::start_default().await.expect("fakes");
    let apictl = Apictl::with_fakes(&services);
    let head =
        "conversionId,conversionTimestamp,segmentationType,segmentationId,agencyId,advertiserId\n";
    let row = |id: &str| format!("{id},1717200000000,FLOODLIGHT,551234,{AGENCY},{ADVERTISER}\n");
    let mut bytes = head.as_bytes().to_vec();
    bytes.extend(row("in-1").as_bytes()); // line 2
    bytes.extend(
        row("in-\u{FF}")
            .as_bytes()
            .iter()
            .map(|&b| if b == 0xBF { 0xFF } else { b }),
    ); // line 3: invalid UTF-8
    bytes.extend(row("in-3").as_bytes()); // line 4
    bytes.extend(
        format!("\"in-4,1717200000000,FLOODLIGHT,551234,{AGENCY},{ADVERTISER}\n").as_bytes(),
    ); // line 5: unclosed quote
    bytes.extend(row("in-5").as_bytes()); // line 6
    bytes.extend(row("in-\u{1b}[31m").as_bytes()); // line 7: a control character
    bytes.extend(row(&"l".repeat(5000)).as_bytes()); // line 8: an over-long id
    bytes.extend(row("in-3").as_bytes()); // line 9: repeats line 4
    let csv = apictl.dir().join("bad.csv");
    std::fs::write(&csv, &bytes).unwrap();
    let run = apictl
        .run(&["ads", "conversions", "upload", csv.to_str().unwrap()])
        .await;
    run.expect(3);
    assert!(
        run.stdout.contains("8 rows: 3 stored, 5 rejected"),
        "{}",
        run.stdout
    );
    let report = std::fs::read_to_string(format!("{}.rejected.csv", csv.display())).unwrap();
    let rows: Vec<(u64, String)> = report
        .lines()
        .skip(1)
        .map(|l| {
            let (line, rest) = l.split_once(',').unwrap();
            (line.parse().unwrap(), rest.to_owned())
        })
        .collect();
    let lines: Vec<u64> = rows.iter().map(|r| r.0).collect();
    assert_eq!(lines, vec![3, 5, 7, 8, 9], "{report}");
    assert!(rows[0].1.contains("UTF-8"), "{report}");
    assert!(rows[1].1.contains("unclosed quote"), "{report}");
    for id in ["in-1", "in-3", "in-5"] {
        assert!(
            services
                .search_ads
                .ledger()
                .contains(&sa360_video_fakes::ConversionKey::advertiser(
                    ADVERTISER, id
                )),
            "{id}"
        );
    }
    // UTF-16: refused once, before anything is sent.
    let utf16: Vec<u8> = head.encode_utf16().flat_map(u16::to_le_bytes).collect();
    let wide = apictl.dir().join("wide.csv");
    std::fs::write(&wide, [&[0xFF, 0xFE][..], &utf16].concat()).unwrap();
    let run = apictl
        .run(&["ads", "conversions", "upload", wide.to_str().unwrap()])
        .await;
    run.expect(4);
    assert_eq!(run.stderr.matches("error:").count(), 1, "{}", run.stderr);
    assert!(run.stderr.contains("is UTF-16"), "{}", run.stderr);
    assert!(!apictl.dir().join("wide.csv.journal").exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rows_without_an_answer_stay_in_the_journal_until_resume_sends_them() {
    let services = FakeServices::start_default().await.expect("fakes");
    let apictl = Apictl::with_fakes(&services);
    let csv = apictl.dir().join("auth.csv");
    let mut text = String::from(
        "conversionId,conversionTimestamp,segmentationType,segmentationId,agencyId,advertiserId\n",
    );
    for i in 0..500 {
        text.push_str(&format!(
            "auth-{i},{},FLOODLIGHT,551234,{AGENCY},{ADVERTISER}\n",
            1_717_200_000_000u64 + i
        ));
    }
    std::fs::write(&csv, text).unwrap();
    let file = csv.to_str().unwrap();
    let journal = apictl.dir().join("auth.csv.journal");
    // A revoked token: every batch fails without being stored.
    let run = apictl
        .run_with(
            &["ads", "conversions", "upload", file, "--batch-size", "50"],
            &[("SEARCH_ADS_TOKEN", "revoked")],
        )
        .await;
    run.expect(1);
    assert!(run.stderr.contains("--resume"), "{}", run.stderr);
    assert!(journal.exists(), "the journal is kept for --resume");
    assert_eq!(services.search_ads.ledger().stored_count(), 0);
    let settled = settled_rows(&journal);
    assert!(
        settled.is_empty(),
        "no row has a definite outcome: {settled:?}"
    );
    // With the right token, --resume sends them all.
    let run = apictl
        .run(&["--json", "ads", "conversions", "upload", file, "--resume"])
        .await;
    run.expect(0);
    let json: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(json["stored"], 500, "{json}");
    assert_eq!(json["rejected"], 0, "{json}");
    assert!(common::finished(&journal));
    let ledger = services.search_ads.ledger();
    assert_eq!(
        ledger
            .conversions()
            .iter()
            .filter(|c| c.key.conversion_id.starts_with("auth-"))
            .count(),
        500
    );
    assert_eq!(ledger.extra_copies(), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unwritable_report_path_is_refused_before_any_row_is_sent() {
    let services = FakeServices::start_default().await.expect("fakes");
    let apictl = Apictl::with_fakes(&services);
    let csv = apictl.dir().join("out.csv");
    write_csv(&csv, |i| (i == 3).then_some("server"));
    let file = csv.to_str().unwrap();
    for bad in [
        apictl.dir().join("missing-dir").join("r.csv"),
        apictl.dir().to_path_buf(),
    ] {
        let run = apictl
            .run(&[
                "ads",
                "conversions",
                "upload",
                file,
                "--rejected",
                bad.to_str().unwrap(),
            ])
            .await;
        run.expect(4);
        assert!(run.stderr.contains("--rejected"), "{}", run.stderr);
        assert_eq!(services.search_ads.ledger().counts().insert_requests, 0);
        assert!(!apictl.dir().join("out.csv.journal").exists());
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_resume_may_move_a_report_nothing_was_written_to() {
    let services = fake(true).await;
    let apictl = Apictl::with_fakes(&services);
    let csv = apictl.dir().join("move.csv");
    // The only bad row is the last: nothing is rejected before it.
    write_csv(&csv, |i| (i == ROWS - 1).then_some("server"));
    let file = csv.to_str().unwrap();
    let journal = apictl.dir().join("move.csv.journal");
    let first = apictl.dir().join("first.csv");
    let child = apictl
        .command(&[
            "ads",
            "conversions",
            "upload",
            file,
            "--rejected",
            first.to_str().unwrap(),
            "--batch-size",
            "50",
            "--concurrency",
            "1",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn");
    let started = std::time::Instant::now();
    while settled_rows(&journal).len() < 200 && started.elapsed() < Duration::from_secs(60) {
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    let mut child = child;
    child.kill().expect("kill -9");
    child.wait().unwrap();
    assert!(journal.exists());
    let second = apictl.dir().join("second.csv");
    let run = apictl
        .run(&[
            "ads",
            "conversions",
            "upload",
            file,
            "--resume",
            "--rejected",
            second.to_str().unwrap(),
        ])
        .await;
    run.expect(3);
    let report = std::fs::read_to_string(&second).unwrap();
    assert!(report.contains(&format!("kill-{}", ROWS - 1)), "{report}");
    assert!(!first.exists());
    assert!(common::finished(&journal));
}

/// Runs an upload of `csv` (batches of 50, one in flight) and kills it with
/// `kill -9` once its journal has settled `rows` rows.
async fn killed_after(apictl: &Apictl, csv: &Path, rows: usize) {
    let journal = Path::new(&format!("{}.journal", csv.display())).to_owned();
    let file = csv.to_str().unwrap();
    let args = [
        "ads",
        "conversions",
        "upload",
        file,
        "--batch-size",
        "50",
        "--concurrency",
        "1",
    ];
    let mut child = apictl
        .command(&args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn");
    let started = std::time::Instant::now();
    while settled_rows(&journal).len() < rows && started.elapsed() < Duration::from_secs(60) {
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    child.kill().expect("kill -9");
    child.wait().unwrap();
    assert!(journal.exists(), "killed before its journal");
}

/// Two `--resume` runs of one interrupted upload started together (two
/// terminals, a retried cron job), as separate processes, several rounds:
/// one holds the input and gives every row the verdict of one uninterrupted
/// upload; the other is refused (exit 4) before it reads, sends or reports
/// anything. The fake's ledger judges "stored once, with its fields".
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_resumes_at_once_one_holds_the_upload_and_the_other_is_refused() {
    const ROUNDS: usize = 3;
    let bad = |i: usize| (i % 997 == 500).then_some("server");
    let expected: Vec<u64> = (0..ROWS)
        .filter(|&i| bad(i).is_some())
        .map(|i| i as u64 + 2)
        .collect();
    for round in 0..ROUNDS {
        let services = fake(true).await;
        let apictl = Apictl::with_fakes(&services);
        let csv = apictl.dir().join(format!("twice-{round}.csv"));
        write_csv(&csv, bad);
        let file = csv.to_str().unwrap();
        killed_after(&apictl, &csv, 1000 + round * 2000).await;
        let args = [
            "--json",
            "ads",
            "conversions",
            "upload",
            file,
            "--resume",
            "--batch-size",
            "50",
            "--concurrency",
            "2",
        ];
        let (a, b) = tokio::join!(apictl.run(&args), apictl.run(&args));
        let (won, refused) = if a.code == 4 { (b, a) } else { (a, b) };
        refused.expect(4);
        assert!(
            refused.stderr.contains("another upload of")
                && refused.stderr.contains("nothing was sent"),
            "{}",
            refused.stderr
        );
        assert!(refused.stdout.is_empty(), "{}", refused.stdout);
        won.expect(3);
        let json: serde_json::Value = serde_json::from_str(&won.stdout).unwrap();
        eprintln!(
            "round {round}: winner exit {}: {} rows, stored {} ({} already stored), rejected {}, failed {}; the other exit {}: {}",
            won.code,
            json["rows"],
            json["stored"],
            json["alreadyStored"],
            json["rejected"],
            json["failed"],
            refused.code,
            refused.stderr.lines().next().unwrap_or_default()
        );
        assert_eq!(json["rows"], ROWS as u64, "{json}");
        assert_eq!(json["stored"], (ROWS - expected.len()) as u64, "{json}");
        assert_eq!(json["rejected"], expected.len() as u64, "{json}");
        assert_eq!(json["failed"], 0, "{json}");
        // The report lists each rejected row once, and only those.
        let report = std::fs::read_to_string(format!("{file}.rejected.csv")).unwrap();
        let mut lines: Vec<u64> = report
            .lines()
            .skip(1)
            .map(|l| l.split(',').next().unwrap().parse().unwrap())
            .collect();
        lines.sort_unstable();
        assert_eq!(lines, expected, "round {round}");
        assert!(common::finished(Path::new(&format!("{file}.journal"))));
        // Every valid row stored once, with its fields; no bad one.
        let ledger = services.search_ads.ledger().conversions();
        assert_eq!(ledger.len(), ROWS - expected.len());
        for c in &ledger {
            let i: u64 = c.key.conversion_id["kill-".len()..].parse().unwrap();
            assert_eq!(c.copies, 1, "{}", c.key.conversion_id);
            assert_eq!(c.timestamp_ms, 1_717_200_000_000 + i as i64 * 1000);
            let revenue = c.conversion["revenueMicros"].to_string();
            assert_eq!(revenue.trim_matches('"'), "1000000", "{}", c.conversion);
            assert_eq!(c.conversion["currencyCode"], "USD", "{}", c.conversion);
        }
    }
}

/// A journal is data: an edited note never names the file a resume opens
/// or cuts; the report is never opened through a symlink; records that
/// overflow are refused as damaged with their line, never a panic.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_journal_never_names_a_file_and_a_damaged_one_is_refused_with_its_line() {
    let services = fake(true).await;
    let apictl = Apictl::with_fakes(&services);
    let csv = apictl.dir().join("named.csv");
    // Row 1 is rejected by the server: the report has a line before the kill.
    write_csv(&csv, |i| (i == 0).then_some("server"));
    let file = csv.to_str().unwrap();
    killed_after(&apictl, &csv, 300).await;
    let journal = apictl.dir().join("named.csv.journal");
    let report = apictl.dir().join("named.csv.rejected.csv");
    let original = std::fs::read_to_string(&journal).unwrap();
    // Without a line a kill may have torn.
    let original = original[..=original.rfind('\n').unwrap()].to_owned();
    let kept = std::fs::read(&report).unwrap();
    let victim = apictl.dir().join("victim.txt");
    let precious = "keep me\n".repeat(500);
    std::fs::write(&victim, &precious).unwrap();
    let resume = ["ads", "conversions", "upload", file, "--resume"];
    let requests = || services.search_ads.ledger().counts().insert_requests;
    let before = requests();

    // The note edited to name another file.
    let note = original.lines().find(|l| l.starts_with("note ")).unwrap();
    let edited = original.replace(note, &format!("note {}", victim.display()));
    std::fs::write(&journal, edited).unwrap();
    let run = apictl.run(&resume).await;
    run.expect(4);
    assert!(
        run.stderr.contains("wrote its rejected rows to") && run.stderr.contains("--rejected"),
        "{}",
        run.stderr
    );
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), precious);
    assert_eq!(std::fs::read(&report).unwrap(), kept);

    // The report replaced by a symlink to another file.
    std::fs::write(&journal, &original).unwrap();
    std::fs::remove_file(&report).unwrap();
    std::os::unix::fs::symlink(&victim, &report).unwrap();
    let run = apictl.run(&resume).await;
    run.expect(1);
    assert!(run.stderr.contains("symlink"), "{}", run.stderr);
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), precious);
    std::fs::remove_file(&report).unwrap();
    std::fs::write(&report, &kept).unwrap();

    // Counters that overflow on two lines.
    let max = u64::MAX;
    let done = format!("done 1-50 stored={max} rejected=0 mark=0 resend=- fp=0\n");
    std::fs::write(&journal, format!("{original}{done}{done}")).unwrap();
    let line = original.lines().count() + 1;
    let run = apictl.run(&resume).await;
    run.expect(4);
    assert!(
        run.stderr.contains(&format!("line {line}: ")) && run.stderr.contains("--restart"),
        "{}",
        run.stderr
    );
    assert!(!run.stderr.contains("panicked"), "{}", run.stderr);
    assert_eq!(requests(), before, "a refused resume sent nothing");

    // The journal as it was: the resume ends the upload.
    std::fs::write(&journal, &original).unwrap();
    apictl.run(&resume).await.expect(3);
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), precious);
}

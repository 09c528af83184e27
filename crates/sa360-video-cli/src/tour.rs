//! `apictl tour`: every feature, against fakes started in this process.

use std::path::Path;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;

use chrono::{DateTime, NaiveDate, Utc};
use futures::TryStreamExt as _;
use sa360_video_fakes::search_ads::IdMappingSize;
use sa360_video_fakes::{FakeServices, SearchAdsFake};
use sa360_video_sdk::http::BaseUrl;
use sa360_video_sdk::search_ads::{
    AdvertiserId, AgencyId, Conversion, DateRange, EngineAccount, ListOptions, SearchAdsClient,
    SegmentationId, StaticToken, WriteOptions, reporting::ReportOptions,
};
use sa360_video_sdk::video_session::{
    CallExperience, Camera, Credentials, Error as VideoError, Invitation, LockoutPolicy, Message,
    Microphone, MobileNumber, PlatformSupport, SessionId,
};

use crate::ads;
use crate::cli::ListFormat;
use crate::context::print_json;
use crate::error::{AppError, AppResult, io_error};
use crate::progress;
use crate::records::WriteMode;
use crate::state::StateDir;
use crate::video;

/// The sample upload: 11 rows, 4 of which are rejected (two by the server,
/// two before sending).
pub const SAMPLE_CSV: &str = include_str!("../data/sample-conversions.csv");
/// Rows of [`SAMPLE_CSV`] that are rejected.
const SAMPLE_REJECTED: u64 = 4;
/// Seeded conversions of the tour's engine account.
const CONVERSIONS: u64 = 5_000;
/// Size of the tour's ID-mapping file.
const ID_MAPPING_BYTES: u64 = 4_000_000;
const STEPS: usize = 9;

/// Everything the steps share.
struct Fixture {
    services: FakeServices,
    dir: tempfile::TempDir,
    state: StateDir,
    video_base: BaseUrl,
    ads: SearchAdsClient,
    account: EngineAccount,
}

fn fake_error(e: sa360_video_fakes::FakeError) -> AppError {
    AppError::new(format!("could not start the fakes: {e}"))
        .hint("the fakes listen on 127.0.0.1 with free ports; check that loopback networking works")
}

/// The lines the running step has said so far (a step's functions call
/// [`ok`] and [`say`]; [`Report::step`] takes them when it ends).
static LINES: Mutex<Vec<String>> = Mutex::new(Vec::new());

fn push(line: String) {
    LINES
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .push(line);
}

fn take_lines() -> Vec<String> {
    std::mem::take(&mut *LINES.lock().unwrap_or_else(PoisonError::into_inner))
}

fn ok(line: impl AsRef<str>) {
    push(format!("\u{2713} {}", line.as_ref()));
}

fn say(line: impl AsRef<str>) {
    push(line.as_ref().to_owned());
}

/// The tour's output: in text, each step as it ends; with `--json`, one
/// document at the end (`{"ok", "intro", "steps": [{"step", "title",
/// "explain", "lines", "ok", "error"}], "seconds"}`).
struct Report {
    json: bool,
    intro: Vec<String>,
    steps: Vec<serde_json::Value>,
}

impl Report {
    fn intro(&mut self, title: &str) -> AppResult<()> {
        self.intro = take_lines();
        if !self.json {
            crate::output::sayln!("{title}")?;
            for line in &self.intro {
                crate::output::sayln!("      {line}")?;
            }
        }
        Ok(())
    }

    fn step(
        &mut self,
        n: usize,
        title: &str,
        explain: &[&str],
        failed: Option<&AppError>,
    ) -> AppResult<()> {
        let lines = take_lines();
        if self.json {
            self.steps.push(serde_json::json!({
                "step": n,
                "title": title,
                "explain": explain,
                "lines": lines,
                "ok": failed.is_none(),
                "error": failed.map(|e| e.message.clone()),
            }));
            return Ok(());
        }
        crate::output::sayln!()?;
        crate::output::sayln!("[{n}/{STEPS}] {title}")?;
        for line in explain
            .iter()
            .copied()
            .chain(lines.iter().map(String::as_str))
        {
            crate::output::sayln!("      {line}")?;
        }
        if let Some(e) = failed {
            crate::output::sayln!("      \u{2717} failed: {}", e.message)?;
        }
        Ok(())
    }

    /// The JSON document (with `--json`), once every step ran or one failed.
    fn finish(&self, ok: bool, seconds: f64) -> AppResult<()> {
        if self.json {
            print_json(&serde_json::json!({
                "ok": ok,
                "intro": self.intro,
                "steps": self.steps,
                "seconds": seconds,
            }))?;
        }
        Ok(())
    }
}

fn check(condition: bool, what: impl Into<String>) -> AppResult<()> {
    if condition {
        Ok(())
    } else {
        Err(AppError::new(what).hint("this is a bug in apictl or the fakes; please report it"))
    }
}

/// Runs the tour; returns the exit status (0 when every step worked). With
/// `json`, prints one JSON document instead of text.
pub async fn run(json: bool) -> AppResult<u8> {
    let started = Instant::now();
    let fixture = setup().await?;
    let mut report = Report {
        json,
        intro: Vec::new(),
        steps: Vec::new(),
    };
    say(format!(
        "search ads fake:    {}",
        fixture.services.search_ads.base_url()
    ));
    say(format!("video session fake: {}", fixture.video_base));
    say(format!(
        "files of this tour: {} (removed at the end)",
        fixture.dir.path().display()
    ));
    report.intro(
        "apictl tour: every feature against local fakes of both services; no account needed.",
    )?;

    let steps: [&str; STEPS] = [
        "Log in to the video session service",
        "The lockout guard refuses a risky login",
        "Invite a guest by SMS, WhatsApp and e-mail",
        "Stream conversions",
        "Upload a CSV of conversions",
        "Mark a Floodlight activity as uploaded",
        "List saved columns",
        "Download the ID-mapping file",
        "Read the same conversions through the Reporting API",
    ];
    let mut n = 0;
    macro_rules! step {
        ($explain:expr, $body:expr) => {{
            n += 1;
            let result = $body.await;
            report.step(n, steps[n - 1], $explain, result.as_ref().err())?;
            match result {
                Ok(value) => value,
                Err(e) => {
                    report.finish(false, started.elapsed().as_secs_f64())?;
                    let mut e = e.context(format!("tour step {n} ({}) failed", steps[n - 1]));
                    if e.hint.is_none() {
                        e = e.hint("run `apictl -vv tour` to see the requests");
                    }
                    return Err(e);
                }
            }
        }};
    }

    step!(
        &[
            "The password goes to the service once; the session token it returns is kept in a",
            "file only you can read (0600) and is never printed.",
        ],
        login(&fixture)
    );
    step!(
        &[
            "The service blocks an account for 10 minutes after more than 5 failed logins in",
            "10 minutes. apictl counts failures per account in its state directory, across",
            "runs, and does not send a login whose failure could start a block.",
        ],
        lockout(&fixture)
    );
    step!(
        &[
            "One invitation per channel. The call-experience flags (--mic, --camera, --observer,",
            "--platform) become the query string of the guest's link.",
        ],
        invitations(&fixture)
    );
    step!(
        &[
            "Pages of conversions are fetched 4 at a time and written as JSON lines as they",
            "arrive (`apictl ads conversions list`; Google deprecated this read method).",
        ],
        stream(&fixture)
    );
    step!(
        &[
            "`apictl ads conversions upload` checks each row, sends the valid ones in batches",
            "and writes every rejected row with its line, code and reason to a rejected-rows file.",
        ],
        upload(&fixture)
    );
    step!(
        &["Tells Search Ads 360 that every conversion of an activity up to a time is in."],
        availability(&fixture)
    );
    step!(
        &["The advertiser's saved columns, by name and type."],
        saved_columns(&fixture)
    );
    step!(
        &[
            "The legacy-to-new ID mapping is one CSV per advertiser, streamed to a file and",
            "renamed into place only when complete.",
        ],
        id_mapping(&fixture)
    );
    step!(
        &[
            "Google deprecated the v2 read; its replacement is a report on the `conversion`",
            "resource of the Search Ads 360 Reporting API, which keeps the last 60 days. The",
            "ID-mapping file gives the account's customer id and the new campaign and ad-group",
            "ids; the report (pages of 500, 7-day shards 2 at a time) yields the same conversions.",
        ],
        both_apis(&fixture)
    );

    let elapsed = started.elapsed();
    fixture.services.shutdown().await;
    report.finish(true, elapsed.as_secs_f64())?;
    if !json {
        crate::output::sayln!()?;
        crate::output::sayln!(
            "All {STEPS} steps worked in {:.1} s.",
            elapsed.as_secs_f64()
        )?;
        crate::output::sayln!(
            "Next: `apictl sandbox` runs these fakes in the foreground so you can try each command;"
        )?;
        crate::output::sayln!("`apictl --help` lists them.")?;
    }
    Ok(0)
}

async fn setup() -> AppResult<Fixture> {
    let services = FakeServices::builder()
        .search_ads(
            SearchAdsFake::builder()
                .conversions_per_account(crate::sandbox::conversions_until_today())
                .conversions_per_day(100)
                .id_mapping_size(IdMappingSize::Bytes(ID_MAPPING_BYTES)),
        )
        .start()
        .await
        .map_err(fake_error)?;
    let dir = tempfile::Builder::new()
        .prefix("apictl-tour-")
        .tempdir()
        .map_err(|e| {
            io_error(
                "cannot create a temporary directory in",
                &std::env::temp_dir(),
                &e,
            )
        })?;
    let state = StateDir::new(dir.path().join("state"));
    let video_base = BaseUrl::parse(services.video.base_url())?;
    let ads = SearchAdsClient::builder(StaticToken::new(services.search_ads.dev_token()))
        .base_url(services.search_ads.base_url())
        .reporting_base_url(services.search_ads.reporting_url())
        .build()?;
    let first = services
        .search_ads
        .accounts()
        .first()
        .cloned()
        .ok_or_else(|| AppError::new("the search ads fake has no account"))?;
    let account = EngineAccount::new(
        first.agency_id,
        first.advertiser_id,
        first.engine_account_id,
    );
    Ok(Fixture {
        services,
        dir,
        state,
        video_base,
        ads,
        account,
    })
}

async fn login(f: &Fixture) -> AppResult<()> {
    let demo = f.services.video.demo();
    let credentials = Credentials::new(
        demo.secret_key.clone(),
        demo.user_name.clone(),
        demo.password.clone(),
    )?;
    let (session, path) = video::login(
        f.video_base.clone(),
        &credentials,
        &f.state,
        Arc::new(f.state.lockout_store()),
        &sa360_video_sdk::http::HttpOptions::default(),
    )
    .await?;
    ok(format!(
        "logged in as {}",
        video::describe_user(&session, &demo.user_name)
    ));
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&path)
            .map_err(|e| io_error("cannot inspect", &path, &e))?
            .permissions()
            .mode()
            & 0o777;
        check(
            mode == 0o600,
            format!("{} has mode {mode:o}, not 600", path.display()),
        )?;
    }
    ok(format!("token saved to {} (mode 0600)", short(f, &path)));
    Ok(())
}

/// A path relative to the tour's directory, for shorter lines.
fn short(f: &Fixture, path: &Path) -> String {
    path.strip_prefix(f.dir.path())
        .map(|p| format!("<tour>/{}", p.display()))
        .unwrap_or_else(|_| path.display().to_string())
}

async fn lockout(f: &Fixture) -> AppResult<()> {
    let demo = f.services.video.demo();
    let config = f.services.video.config();
    let other = config
        .users
        .iter()
        .find(|u| u.domain_id == demo.domain_id && u.user_name != demo.user_name)
        .ok_or_else(|| AppError::new("the video fake has no second user"))?;
    say(format!(
        "Trying user {} with a wrong password:",
        other.user_name
    ));
    let client = video::client(
        f.video_base.clone(),
        Arc::new(f.state.lockout_store()),
        &sa360_video_sdk::http::HttpOptions::default(),
    )?;
    let credentials = Credentials::new(
        demo.secret_key.clone(),
        other.user_name.clone(),
        "not-the-password".to_owned(),
    )?;
    // The SDK's policy is the seed's rule; the tour shows it, it does not restate it.
    let allowed = LockoutPolicy::SEED.max_failures;
    for attempt in 1..=allowed {
        match client.login(&credentials).send().await {
            Err(VideoError::InvalidCredentials {
                remaining_attempts, ..
            }) => say(format!(
                "  attempt {attempt}: sent; wrong user name or password ({remaining_attempts} more allowed)"
            )),
            Err(other) => return Err(other.into()),
            Ok(_) => return Err(AppError::new("a wrong password was accepted")),
        }
    }
    match client.login(&credentials).send().await {
        Err(refused @ VideoError::LockoutRefused { .. }) => {
            say(format!("  attempt {}: NOT sent; {refused}", allowed + 1));
        }
        Err(other) => return Err(other.into()),
        Ok(_) => return Err(AppError::new("a wrong password was accepted")),
    }
    let key = sa360_video_fakes::DomainUser::new(other.domain_id, other.user_name.clone());
    let stats = f.services.video.ledger().account(&key).unwrap_or_default();
    check(
        u64::from(allowed) == stats.failures_total && stats.blocks_started == 0,
        format!(
            "the fake counted {} failures and {} blocks, expected {allowed} and 0",
            stats.failures_total, stats.blocks_started
        ),
    )?;
    ok(format!(
        "the fake saw {} failed logins and started {} blocks: attempt {} never reached it",
        stats.failures_total,
        stats.blocks_started,
        allowed + 1
    ));
    Ok(())
}

async fn invitations(f: &Fixture) -> AppResult<()> {
    let session_id = SessionId::new(f.services.video.demo().session_id.clone())?;
    let invitations = [
        (
            Invitation::Sms {
                to: MobileNumber::new("US".parse()?, "+1 201 555 0123")?,
                message: Some(Message::new("Your video consultation is ready")?),
            },
            CallExperience::new()
                .microphone(Microphone::On)
                .camera(Camera::Front),
            "apictl video invite --sms '+1 201 555 0123' --country US --mic on --camera front",
        ),
        (
            Invitation::WhatsApp {
                to: MobileNumber::new("IN".parse()?, "+91 98000 00001")?,
            },
            CallExperience::new()
                .silent_observer()
                .platform_support(PlatformSupport::AskUser),
            "apictl video invite --whatsapp '+91 98000 00001' --country IN --observer --platform ask-user",
        ),
        (
            Invitation::Email {
                to: "guest@example.com".parse()?,
                message: Some(Message::new("Join from your browser")?),
            },
            CallExperience::new()
                .microphone(Microphone::Off)
                .camera(Camera::Off)
                .platform_support(PlatformSupport::BrowserOnly),
            "apictl video invite --email guest@example.com --mic off --camera off --platform browser-only",
        ),
    ];
    for (invitation, experience, command) in &invitations {
        say(format!("$ {command}"));
        let receipt = video::invite(
            &f.state,
            None,
            &session_id,
            invitation,
            experience,
            &sa360_video_sdk::http::HttpOptions::default(),
        )
        .await?;
        ok(video::describe_receipt(invitation, &session_id, &receipt));
    }
    let outbox = f.services.video.outbox().entries();
    check(
        outbox.len() == invitations.len(),
        format!(
            "the fake's outbox has {} invitations, expected 3",
            outbox.len()
        ),
    )?;
    say("The fake's outbox (what a real service would deliver):");
    for entry in &outbox {
        let channel = match entry.invitation_type {
            1 => "SMS",
            2 => "WhatsApp",
            3 => "e-mail",
            _ => "other",
        };
        say(format!(
            "  #{} {channel} to {}: {:?}",
            entry.seq,
            entry.recipient.as_deref().unwrap_or("-"),
            entry.message
        ));
        say(format!("     link {}", entry.link));
    }
    Ok(())
}

async fn stream(f: &Fixture) -> AppResult<()> {
    let day = |m, d| NaiveDate::from_ymd_opt(2024, m, d).ok_or_else(|| AppError::new("bad date"));
    // 100 conversions a day from 2024-01-01: the first 50 days hold CONVERSIONS.
    let dates = DateRange::new(day(1, 1)?, day(2, 19)?)?;
    let options = ListOptions::default().page_size(500).look_ahead(4);
    #[allow(deprecated)] // conversion.get is deprecated by Google, and still answers
    let stream = f
        .ads
        .list_conversions(f.account, dates)
        .options(options)
        .stream();
    let path = f.dir.path().join("conversions.jsonl");
    let file = std::fs::File::create(&path).map_err(|e| io_error("cannot create", &path, &e))?;
    say(format!(
        "$ apictl ads conversions list --api v2 --from 2024-01-01 --to 2024-02-19 -o {}",
        short(f, &path)
    ));
    let bar = progress::items(CONVERSIONS, "conversions");
    let started = Instant::now();
    let count = ads::write_conversions(stream, file, ListFormat::Jsonl, || bar.inc(1)).await;
    bar.finish_and_clear();
    let count = count?;
    check(
        count == CONVERSIONS,
        format!("streamed {count} conversions, expected {CONVERSIONS}"),
    )?;
    ok(format!(
        "{count} conversions in {:.2} s, 500 per request",
        started.elapsed().as_secs_f64()
    ));
    let text = std::fs::read_to_string(&path).map_err(|e| io_error("cannot read", &path, &e))?;
    if let Some(first) = text.lines().next() {
        let cut: String = first.chars().take(96).collect();
        say(format!("first line: {cut}\u{2026}"));
    }
    Ok(())
}

async fn both_apis(f: &Fixture) -> AppResult<()> {
    let today = chrono::DateTime::<chrono::Utc>::from(std::time::SystemTime::now()).date_naive();
    let back = |n| today - chrono::Days::new(n);
    let dates = DateRange::new(back(13), back(1))?;
    let (from, to) = (dates.start(), dates.end());
    say(format!(
        "$ apictl ads conversions list --api v2 --from {from} --to {to}"
    ));
    #[allow(deprecated)] // the point: compare with the deprecated read
    let old: Vec<Conversion> = f
        .ads
        .list_conversions(f.account, dates)
        .stream()
        .try_collect()
        .await?;
    let lookup = f
        .ads
        .id_lookup(f.account.agency_id, f.account.advertiser_id)
        .send()
        .await?;
    let (customer, _) = lookup.translate(f.account, &ListOptions::default())?;
    say(format!(
        "$ apictl ads conversions list --api reporting --customer-id {customer} --from {from} --to {to}"
    ));
    let options = ReportOptions::default()
        .page_size(500)
        .shard_days(7)
        .look_ahead(2);
    let new: Vec<Conversion> = f
        .ads
        .conversion_report(customer, dates)
        .options(options)
        .stream()
        .try_collect()
        .await?;
    check(
        !old.is_empty() && new.len() == old.len(),
        format!(
            "v2 read {} conversions, the report {}",
            old.len(),
            new.len()
        ),
    )?;
    for (i, (o, n)) in old.iter().zip(&new).enumerate() {
        let same = n.conversion_id == o.conversion_id
            && n.conversion_timestamp == o.conversion_timestamp
            && n.ds_conversion_id == o.ds_conversion_id
            && n.revenue_micros == o.revenue_micros
            && n.state == o.state
            && n.click_id == o.click_id
            && n.floodlight_order_id == o.floodlight_order_id
            && n.ad_id == o.ad_id
            && n.criterion_id == o.criterion_id
            && n.campaign_id == o.campaign_id.and_then(|c| lookup.campaign(c))
            && n.ad_group_id == o.ad_group_id.and_then(|g| lookup.ad_group(g));
        check(same, format!("row {i} differs: v2 {o:?}, report {n:?}"))?;
    }
    ok(format!(
        "{} conversions through both APIs: the same ids, times, revenue, states, click and order ids, in the same order",
        new.len()
    ));
    if let (Some(o), Some(n)) = (old.first(), new.first()) {
        say(format!(
            "campaign {} (legacy) is {} (new) for customer {customer}",
            o.campaign_id.map(|c| c.to_string()).unwrap_or_default(),
            n.campaign_id.map(|c| c.to_string()).unwrap_or_default()
        ));
    }
    Ok(())
}

async fn upload(f: &Fixture) -> AppResult<()> {
    let path = f.dir.path().join("sample-conversions.csv");
    std::fs::write(&path, SAMPLE_CSV).map_err(|e| io_error("cannot write", &path, &e))?;
    say(format!(
        "$ apictl ads conversions upload {}   (the sample from crates/sa360-video-cli/data)",
        short(f, &path)
    ));
    let options = WriteOptions::default().batch_size(5).concurrency(2);
    let plan = ads::UploadPlan {
        file: path.clone(),
        format: None,
        mode: WriteMode::Insert,
        options,
        report: None,
        journal: ads::JournalMode::Off,
        journal_path: None,
        live: None,
    };
    let bar = progress::file(SAMPLE_CSV.len() as u64, "inserting");
    let mut lines = Vec::new();
    let mut keep = |r: &ads::RejectedRow| lines.push(r.clone());
    let result = ads::upload_file(Some(&f.ads), &plan, &bar, &mut keep).await;
    bar.finish_and_clear();
    let summary = result?;
    let report = ads::default_rejected_path(&path, crate::cli::InputFormat::Csv);
    for r in &lines {
        say(format!(
            "  line {:<3} {:<22} {:<10} {}",
            r.line, r.conversion_id, r.code, r.reason
        ));
    }
    check(
        summary.failed == 0
            && summary.rejected == SAMPLE_REJECTED
            && summary.stored == summary.rows - SAMPLE_REJECTED,
        format!(
            "{} stored, {} rejected, {} failed; expected {} stored and {SAMPLE_REJECTED} rejected",
            summary.stored,
            summary.rejected,
            summary.failed,
            summary.rows - SAMPLE_REJECTED
        ),
    )?;
    ok(format!(
        "{} rows: {} stored, {} rejected (2 by the server, 2 before sending); rejected rows in {}",
        summary.rows,
        summary.stored,
        summary.rejected,
        short(f, &report)
    ));
    say(format!(
        "As a command, this upload exits with status {}: some rows were stored and others rejected.",
        crate::exit::EXIT_REJECTED
    ));
    Ok(())
}

async fn availability(f: &Fixture) -> AppResult<()> {
    let until = DateTime::<Utc>::from_timestamp(1_717_286_400, 0)
        .ok_or_else(|| AppError::new("bad time"))?;
    say("$ apictl ads availability --segmentation-id 551234 --until 2024-06-02T00:00:00Z");
    let wanted = ads::availabilities(
        f.account.agency_id,
        f.account.advertiser_id,
        until,
        &[SegmentationId::new(551_234)],
        &[],
    );
    let echo = f.ads.update_availability(wanted.to_vec()).send().await?;
    check(!echo.is_empty(), "the service echoed no availability")?;
    for a in &echo {
        ok(ads::describe_availability(a));
    }
    Ok(())
}

async fn saved_columns(f: &Fixture) -> AppResult<()> {
    say("$ apictl ads saved-columns");
    let columns = f
        .ads
        .saved_columns(f.account.agency_id, f.account.advertiser_id)
        .send()
        .await?;
    check(!columns.is_empty(), "the advertiser has no saved columns")?;
    for c in &columns {
        ok(format!(
            "{:<20} {}",
            c.name,
            c.column_type.as_deref().unwrap_or("-")
        ));
    }
    Ok(())
}

async fn id_mapping(f: &Fixture) -> AppResult<()> {
    let (agency, advertiser): (AgencyId, AdvertiserId) =
        (f.account.agency_id, f.account.advertiser_id);
    let path = f.dir.path().join("id-mapping.csv");
    say(format!("$ apictl ads id-mapping -o {}", short(f, &path)));
    let bar = progress::bytes("id mapping");
    let started = Instant::now();
    let result = f
        .ads
        .id_mapping(agency, advertiser)
        .progress_shared(ads::byte_progress(&bar))
        .save(&path)
        .await;
    bar.finish_and_clear();
    let bytes = result?;
    let expected = f
        .services
        .search_ads
        .id_mapping_len(agency.get(), advertiser.get());
    check(
        expected == Some(bytes),
        format!("saved {bytes} bytes, the fake's file has {expected:?}"),
    )?;
    let rows = f
        .services
        .search_ads
        .id_mapping_rows(agency.get(), advertiser.get())
        .unwrap_or_default();
    ok(format!(
        "{:.1} MB, {rows} rows, in {:.2} s; the size matches the fake's file",
        bytes as f64 / 1_000_000.0,
        started.elapsed().as_secs_f64()
    ));
    let file = std::fs::File::open(&path).map_err(|e| io_error("cannot read", &path, &e))?;
    for line in std::io::BufRead::lines(std::io::BufReader::new(file)).take(2) {
        let line = line.map_err(|e| io_error("cannot read", &path, &e))?;
        let cut: String = line.chars().take(100).collect();
        say(format!("  {cut}"));
    }
    Ok(())
}

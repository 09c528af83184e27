//! `apictl ads ...`: conversions, availability, ID mapping, saved columns.

use std::io::{BufWriter, IsTerminal as _, Write};
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use chrono::{DateTime, NaiveDate, Utc};
use facade::http::HttpOptions;
use facade::search_ads::{
    AdGroupId, AdvertiserId, AgencyId, Availability, CampaignId, Conversion, CustomerId, DateRange,
    EngineAccount, EngineAccountId, ListOptions, Outcome, ProgressFn, ReportFilters, ReportOptions,
    SearchAds, SegmentationId, ServiceAccount, StaticToken, WriteOptions, WriteProgress,
    WriteProgressFn,
};
use futures::{Stream, TryStreamExt as _};
use indicatif::ProgressBar;
use serde_json::json;

use crate::cli::{
    AdsArgs, AdsCommand, AdsConnArgs, AvailabilityArgs, ConversionsCommand, IdMappingArgs,
    InputFormat, ListArgs, ListFormat, ReadApi, UploadArgs,
};
use crate::config::{IdValue, SearchAdsSection};
use crate::context::{Ctx, print_json};
use crate::error::{AppError, AppResult, EXIT_REJECTED, io_error};
use crate::progress;
use crate::records::{self, InputRow, WriteMode};

/// Runs an `ads` command.
pub async fn run(ctx: &Ctx, args: &AdsArgs) -> AppResult<u8> {
    let conn = Conn {
        args: &args.conn,
        file: &ctx.config.search_ads,
    };
    match &args.command {
        AdsCommand::Conversions(ConversionsCommand::List(list)) => run_list(ctx, &conn, list).await,
        AdsCommand::Conversions(ConversionsCommand::Upload(upload)) => {
            run_upload(ctx, &conn, upload).await
        }
        AdsCommand::Availability(a) => run_availability(ctx, &conn, a).await,
        AdsCommand::IdMapping(m) => run_id_mapping(ctx, &conn, m).await,
        AdsCommand::SavedColumns => run_saved_columns(ctx, &conn).await,
        AdsCommand::Customers => run_customers(ctx, &conn).await,
    }
}

/// Connection settings: flags and environment first, then the config file.
struct Conn<'a> {
    args: &'a AdsConnArgs,
    file: &'a SearchAdsSection,
}

fn parse_id<T: FromStr>(flag: &str, text: &str) -> AppResult<T> {
    text.trim().parse().map_err(|_| {
        AppError::new(format!("--{flag} {text:?} is not an id"))
            .hint("ids are decimal digits, e.g. 20700000000000125")
    })
}

impl Conn<'_> {
    fn id<T: FromStr>(
        &self,
        flag: &str,
        cli: &Option<String>,
        file: &Option<IdValue>,
    ) -> AppResult<Option<T>> {
        match (cli, file) {
            (Some(text), _) => parse_id(flag, text).map(Some),
            (None, Some(v)) => parse_id(flag, &v.to_string()).map(Some),
            (None, None) => Ok(None),
        }
    }

    fn agency(&self) -> AppResult<Option<AgencyId>> {
        self.id("agency-id", &self.args.agency_id, &self.file.agency_id)
    }

    fn advertiser(&self) -> AppResult<Option<AdvertiserId>> {
        self.id(
            "advertiser-id",
            &self.args.advertiser_id,
            &self.file.advertiser_id,
        )
    }

    fn engine_account(&self) -> AppResult<Option<EngineAccountId>> {
        self.id(
            "engine-account-id",
            &self.args.engine_account_id,
            &self.file.engine_account_id,
        )
    }

    fn customer(&self) -> AppResult<Option<CustomerId>> {
        let text = match (&self.args.customer_id, &self.file.customer_id) {
            (Some(t), _) => t.clone(),
            (None, Some(v)) => v.to_string(),
            (None, None) => return Ok(None),
        };
        CustomerId::new(text.trim()).map(Some).map_err(|_| {
            AppError::new(format!("--customer-id {text:?} is not a customer id"))
                .hint("a customer id is digits, e.g. 2000012350")
        })
    }

    fn login_customer(&self) -> AppResult<Option<CustomerId>> {
        let text = match (&self.args.login_customer_id, &self.file.login_customer_id) {
            (Some(t), _) => t.clone(),
            (None, Some(v)) => v.to_string(),
            (None, None) => return Ok(None),
        };
        CustomerId::new(text.trim()).map(Some).map_err(|_| {
            AppError::new(format!("--login-customer-id {text:?} is not a customer id"))
                .hint("the manager's id is digits without dashes, e.g. 2000012300")
        })
    }

    /// The agency and advertiser every advertiser-level command needs.
    fn advertiser_scope(&self) -> AppResult<(AgencyId, AdvertiserId)> {
        match (self.agency()?, self.advertiser()?) {
            (Some(a), Some(b)) => Ok((a, b)),
            _ => Err(AppError::new("no agency and advertiser given").hint(
                "pass --agency-id and --advertiser-id, set SEARCH_ADS_AGENCY_ID and SEARCH_ADS_ADVERTISER_ID, or add agency_id and advertiser_id to [search_ads] in the config file",
            )),
        }
    }

    /// A client with the configured URL and credentials.
    fn client(&self, write: WriteOptions) -> AppResult<SearchAds> {
        let url = self.args.url.clone().or_else(|| self.file.url.clone());
        let both = || {
            AppError::new("both a token and a service-account key file are set").hint(
                "keep one: unset SEARCH_ADS_TOKEN / drop --token, or unset SEARCH_ADS_KEY_FILE / drop --key-file",
            )
        };
        let builder = match (&self.args.token, &self.args.key_file) {
            (Some(_), Some(_)) => return Err(both()),
            (Some(token), None) => SearchAds::builder(StaticToken::new(token.clone())),
            (None, Some(path)) => SearchAds::builder(
                ServiceAccount::from_file(path)?.with_http_options(&self.http_options()?)?,
            ),
            (None, None) => match (&self.file.token, &self.file.key_file) {
                (Some(_), Some(_)) => return Err(both()),
                (Some(token), None) => SearchAds::builder(StaticToken::new(token.clone())),
                (None, Some(path)) => SearchAds::builder(
                    ServiceAccount::from_file(path)?.with_http_options(&self.http_options()?)?,
                ),
                (None, None) => {
                    return Err(AppError::new("no search ads credentials").hint(
                        "set SEARCH_ADS_TOKEN (a bearer token) or SEARCH_ADS_KEY_FILE (a service-account JSON key), pass --token or --key-file, or add token or key_file to [search_ads] in the config file",
                    ));
                }
            },
        };
        let builder = match url {
            Some(url) => builder.base_url(&url)?,
            None => builder,
        };
        let reporting_url = self
            .args
            .reporting_url
            .clone()
            .or_else(|| self.file.reporting_url.clone());
        let builder = match reporting_url {
            Some(url) => builder.reporting_base_url(&url)?,
            None => builder,
        };
        Ok(builder
            .write_options(write)
            .http_options(self.http_options()?)
            .build()?)
    }

    /// The transport limits of `--timeout`, `--deadline`, `--stall-timeout`,
    /// `--max-body` and `--max-download` over the facade's defaults.
    fn http_options(&self) -> AppResult<HttpOptions> {
        let mut options = HttpOptions::default();
        let (seconds, bytes) = (crate::limits::seconds, crate::limits::bytes);
        if let Some(v) = self.args.timeout {
            options.timeout = seconds("--timeout", v)?;
        }
        if let Some(v) = self.args.stall_timeout {
            options.read_timeout = seconds("--stall-timeout", v)?;
        }
        // transport: the overall deadline of one call (issue 12).
        if let Some(v) = self.args.deadline {
            options.deadline = Some(seconds("--deadline", v)?);
        }
        if let Some(v) = self.args.max_body {
            options.max_body_bytes = bytes("--max-body", v)?;
        }
        if let Some(v) = self.args.max_download {
            options.max_download_bytes = bytes("--max-download", v)?;
        }
        Ok(options)
    }
}

// ------------------------------------------------------------ customers

async fn run_customers(ctx: &Ctx, conn: &Conn<'_>) -> AppResult<u8> {
    let client = conn.client(WriteOptions::default())?;
    let customers = client.list_accessible_customers().await?;
    if ctx.json {
        let ids: Vec<&str> = customers.iter().map(CustomerId::as_str).collect();
        print_json(&json!({ "customers": ids }))?;
    } else if customers.is_empty() {
        println!("the credentials reach no customer directly");
    } else {
        for c in &customers {
            println!("{c}");
        }
    }
    Ok(0)
}

// ----------------------------------------------------------------- list

fn filter<T: FromStr>(flag: &str, value: &Option<String>) -> AppResult<Option<T>> {
    value.as_deref().map(|t| parse_id(flag, t)).transpose()
}

fn parse_date(flag: &str, text: &str) -> AppResult<NaiveDate> {
    NaiveDate::parse_from_str(text.trim(), "%Y-%m-%d")
        .or_else(|_| NaiveDate::parse_from_str(text.trim(), "%Y%m%d"))
        .map_err(|_| {
            AppError::new(format!("--{flag} {text:?} is not a date"))
                .hint("write dates as YYYY-MM-DD, e.g. 2024-01-31")
        })
}

/// Writes a conversion stream as JSON lines or CSV; `on_row` is called after
/// each row. Returns the number of rows.
pub async fn write_conversions<W: Write>(
    mut stream: impl Stream<Item = Result<Conversion, facade::search_ads::Error>> + Unpin,
    out: W,
    format: ListFormat,
    mut on_row: impl FnMut(),
) -> AppResult<u64> {
    let write_error = |e: &dyn std::fmt::Display| AppError::new(format!("cannot write: {e}"));
    let mut count = 0u64;
    match format {
        ListFormat::Jsonl => {
            let mut out = BufWriter::new(out);
            while let Some(c) = stream.try_next().await? {
                serde_json::to_writer(&mut out, &c).map_err(|e| write_error(&e))?;
                out.write_all(b"\n").map_err(|e| write_error(&e))?;
                count += 1;
                on_row();
            }
            out.flush().map_err(|e| write_error(&e))?;
        }
        ListFormat::Csv => {
            let mut out = csv::Writer::from_writer(out);
            out.write_record(Conversion::FIELDS)
                .map_err(|e| write_error(&e))?;
            while let Some(c) = stream.try_next().await? {
                let cells = records::to_csv_cells(&c).map_err(|e| write_error(&e))?;
                out.write_record(cells).map_err(|e| write_error(&e))?;
                count += 1;
                on_row();
            }
            out.flush().map_err(|e| write_error(&e))?;
        }
    }
    Ok(count)
}

/// A conversion stream of either API.
pub type AnyConversions =
    std::pin::Pin<Box<dyn Stream<Item = Result<Conversion, facade::search_ads::Error>> + Send>>;

/// Opens a v2 listing: the engine account when its three ids are known, else the customer.
#[allow(deprecated)] // conversion.get is deprecated by Google, and still answers
fn open_listing(
    client: &SearchAds,
    conn: &Conn<'_>,
    dates: DateRange,
    options: ListOptions,
) -> AppResult<AnyConversions> {
    if let (Some(agency), Some(advertiser), Some(engine)) =
        (conn.agency()?, conn.advertiser()?, conn.engine_account()?)
    {
        let account = EngineAccount::new(agency, advertiser, engine);
        return Ok(Box::pin(client.list_conversions(account, dates, options)?));
    }
    if let Some(customer) = conn.customer()? {
        return Ok(Box::pin(
            client.list_conversions_by_customer(customer, dates, options)?,
        ));
    }
    Err(AppError::new("no account to list").hint(
        "pass --agency-id, --advertiser-id and --engine-account-id (or --customer-id), or set SEARCH_ADS_AGENCY_ID, SEARCH_ADS_ADVERTISER_ID and SEARCH_ADS_ENGINE_ACCOUNT_ID",
    ))
}

/// Opens a report through the Reporting API for the customer.
fn open_report(
    client: &SearchAds,
    conn: &Conn<'_>,
    dates: DateRange,
    args: &ListArgs,
) -> AppResult<AnyConversions> {
    let Some(customer) = conn.customer()? else {
        return Err(AppError::new("no customer to report on").hint(
            "pass --customer-id (or set SEARCH_ADS_CUSTOMER_ID), or read an engine account with --api v2",
        ));
    };
    let filters = ReportFilters {
        campaign_ids: filter::<CampaignId>("campaign-id", &args.campaign_id)?
            .into_iter()
            .collect(),
        ad_group_ids: filter::<AdGroupId>("ad-group-id", &args.ad_group_id)?
            .into_iter()
            .collect(),
        ad_ids: filter("ad-id", &args.ad_id)?.into_iter().collect(),
        criterion_ids: filter("criterion-id", &args.criterion_id)?
            .into_iter()
            .collect(),
        ..ReportFilters::default()
    };
    let options = ReportOptions {
        page_size: args
            .page_size
            .unwrap_or(facade::search_ads::reporting::MAX_REPORT_PAGE_SIZE),
        shard_days: args.shard_days,
        concurrency: args.prefetch,
        login_customer_id: conn.login_customer()?,
        filters,
    };
    let report = client
        .conversion_report(customer, dates, options)
        .map_err(|e| match &e {
            facade::search_ads::Error::Validation { field, .. } if field == "page_size" => {
                AppError::from(e).hint("use --page-size 1 to 10000 with --api reporting")
            }
            facade::search_ads::Error::Validation { field, .. } if field == "concurrency" => {
                AppError::from(e).hint("use --prefetch 1 to 16 with --api reporting")
            }
            facade::search_ads::Error::Validation { field, .. } if field == "shard_days" => {
                AppError::from(e).hint("use --shard-days 1 to 30 with --api reporting")
            }
            _ => AppError::from(e),
        })?;
    Ok(Box::pin(report))
}

/// The API a listing reads: `--api`, else reporting when a customer id is known.
fn read_api(conn: &Conn<'_>, args: &ListArgs) -> AppResult<ReadApi> {
    Ok(match args.api {
        Some(api) => api,
        None if conn.customer()?.is_some() => ReadApi::Reporting,
        None => ReadApi::V2,
    })
}

async fn run_list(ctx: &Ctx, conn: &Conn<'_>, args: &ListArgs) -> AppResult<u8> {
    let dates = DateRange::new(parse_date("from", &args.from)?, parse_date("to", &args.to)?)?;
    let client = conn.client(WriteOptions::default())?;
    let stream = match read_api(conn, args)? {
        ReadApi::Reporting => open_report(&client, conn, dates, args)?,
        ReadApi::V2 => {
            let options = ListOptions {
                page_size: args.page_size.unwrap_or(1000),
                prefetch: args.prefetch,
                campaign_id: filter("campaign-id", &args.campaign_id)?,
                ad_group_id: filter("ad-group-id", &args.ad_group_id)?,
                ad_id: filter("ad-id", &args.ad_id)?,
                criterion_id: filter("criterion-id", &args.criterion_id)?,
                ..ListOptions::default()
            };
            open_listing(&client, conn, dates, options)?
        }
    };
    match &args.output {
        Some(path) => {
            // Written to FILE.part and renamed once complete, so FILE is never half a listing
            // (transport: facade::fs::PartFile owns the rule).
            let mut part = facade::fs::PartFile::create(path)
                .map_err(|e| io_error("cannot create (as FILE.part)", path, &e))?;
            let bar = progress::counter("conversions");
            let count = write_conversions(stream, &mut part, args.format, || bar.inc(1)).await;
            bar.finish_and_clear();
            // On an error `part` is dropped, which removes FILE.part.
            let count = count.map_err(|e| e.context(path.display()))?;
            part.commit()
                .map_err(|e| io_error("cannot rename to", path, &e))?;
            if ctx.json {
                print_json(&json!({"conversions": count, "output": path.display().to_string()}))?;
            } else {
                println!("wrote {count} conversions to {}", path.display());
            }
        }
        None => {
            // Rows go to stdout; a counter on stderr only when stdout is not the terminal.
            let bar = if std::io::stdout().is_terminal() {
                ProgressBar::hidden()
            } else {
                progress::counter("conversions")
            };
            let closed = Arc::new(AtomicBool::new(false));
            let out = PipeAware {
                inner: std::io::stdout().lock(),
                closed: closed.clone(),
            };
            let result = write_conversions(stream, out, args.format, || bar.inc(1)).await;
            bar.finish_and_clear();
            match result {
                // `apictl ... | head` closes stdout early: not an error.
                Err(_) if closed.load(Ordering::Relaxed) => {}
                other => {
                    other?;
                }
            }
        }
    }
    Ok(0)
}

/// A writer that remembers when the reader went away (`EPIPE`).
struct PipeAware<W> {
    inner: W,
    closed: Arc<AtomicBool>,
}

impl<W: Write> PipeAware<W> {
    fn note<T>(&self, result: std::io::Result<T>) -> std::io::Result<T> {
        if let Err(e) = &result
            && e.kind() == std::io::ErrorKind::BrokenPipe
        {
            self.closed.store(true, Ordering::Relaxed);
        }
        result
    }
}

impl<W: Write> Write for PipeAware<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let result = self.inner.write(buf);
        self.note(result)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        let result = self.inner.flush();
        self.note(result)
    }
}

// --------------------------------------------------------------- upload

/// A row of the rejected-rows report.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReportRow {
    /// The line of the input file where the row starts.
    pub line: u64,
    /// The row's conversionId, if it has one.
    pub conversion_id: String,
    /// `local` (refused before sending), the server's code (`0x0000010E`),
    /// `server` (a rejection without code) or `failed` (no definite answer).
    pub code: String,
    /// Why.
    pub reason: String,
}

/// What an upload did.
#[derive(Debug, Default)]
pub struct UploadSummary {
    /// Rows in the file.
    pub rows: usize,
    /// Rows sent (or, on a dry run, that would be sent).
    pub sent: usize,
    /// Rows stored.
    pub stored: usize,
    /// Rows rejected, locally or by the server.
    pub rejected: usize,
    /// Rows without a definite answer.
    pub failed: usize,
    /// The first error of a failed row.
    pub first_failure: Option<String>,
    /// transport: the CLI's hint for the first failure (it names the flag to
    /// change, e.g. `--max-body`).
    pub first_failure_hint: Option<String>,
    /// Rejected and failed rows, by line.
    pub report: Vec<ReportRow>,
}

/// Reads an upload file into rows.
pub fn read_rows(path: &Path, format: Option<InputFormat>) -> AppResult<Vec<InputRow>> {
    let text = std::fs::read_to_string(path).map_err(|e| io_error("cannot read", path, &e))?;
    parse_rows(&text, format, path)
}

/// Parses rows from text; the format comes from `format`, the file name, or
/// the first character.
pub fn parse_rows(
    text: &str,
    format: Option<InputFormat>,
    path: &Path,
) -> AppResult<Vec<InputRow>> {
    let ext = path
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase);
    let format = format.unwrap_or(match ext.as_deref() {
        Some("jsonl" | "ndjson" | "json") => InputFormat::Jsonl,
        Some("csv") => InputFormat::Csv,
        _ if text.trim_start().starts_with('{') => InputFormat::Jsonl,
        _ => InputFormat::Csv,
    });
    let rows = match format {
        InputFormat::Csv => records::read_csv(text.as_bytes()).map_err(|e| {
            AppError::new(format!("{}: {e}", path.display()))
                .hint("the first line must name Conversion JSON fields, e.g. conversionId,conversionTimestamp,segmentationType,segmentationId,agencyId,advertiserId")
        })?,
        InputFormat::Jsonl => records::read_jsonl(text),
    };
    if rows.is_empty() {
        return Err(AppError::new(format!("{} has no rows", path.display()))
            .hint("give a file with at least one conversion"));
    }
    Ok(rows)
}

/// Checks the rows and, unless `dry_run`, sends the valid ones; `bar` moves
/// as each batch is answered.
///
/// The rows go to the facade in chunks of `concurrency` batches: when every
/// row of a chunk fails (the service is down or refuses us), the rest of the
/// file is not sent but reported as failed, instead of being retried batch
/// after batch.
pub async fn upload(
    client: Option<&SearchAds>,
    rows: &[InputRow],
    mode: WriteMode,
    options: WriteOptions,
    bar: &ProgressBar,
) -> AppResult<UploadSummary> {
    let (send, local) = records::check_rows(rows, mode);
    let id_of = |i: usize| rows[i].conversion_id.clone().unwrap_or_default();
    let mut summary = UploadSummary {
        rows: rows.len(),
        sent: send.len(),
        rejected: local.len(),
        ..UploadSummary::default()
    };
    for r in &local {
        summary.report.push(ReportRow {
            line: rows[r.row].line,
            conversion_id: id_of(r.row),
            code: "local".to_owned(),
            reason: r.reason.clone(),
        });
    }
    let Some(client) = client else {
        summary.report.sort_by_key(|r| r.line);
        return Ok(summary);
    };
    bar.set_length(send.len() as u64);
    let chunk_size = options
        .batch_size
        .saturating_mul(options.concurrency)
        .max(1);
    let mut stop: Option<String> = None;
    let mut finished = 0u64;
    for chunk in send.chunks(chunk_size) {
        if let Some(reason) = &stop {
            for &i in chunk {
                summary.failed += 1;
                summary.report.push(ReportRow {
                    line: rows[i].line,
                    conversion_id: id_of(i),
                    code: "failed".to_owned(),
                    reason: format!("not sent: {reason}"),
                });
            }
            continue;
        }
        let conversions: Vec<_> = chunk
            .iter()
            .filter_map(|&i| rows[i].parsed.as_ref().ok().cloned())
            .collect();
        let progress: WriteProgressFn = {
            let bar = bar.clone();
            Arc::new(move |p: WriteProgress| bar.set_position(finished + p.conversions_done as u64))
        };
        let report = match mode {
            WriteMode::Insert => {
                client
                    .insert_with_progress(&conversions, options, progress)
                    .await?
            }
            WriteMode::Update => {
                client
                    .update_with_progress(&conversions, options, progress)
                    .await?
            }
        };
        finished += chunk.len() as u64;
        for (&i, outcome) in chunk.iter().zip(report.outcomes()) {
            let (code, reason) = match outcome {
                Outcome::Stored | Outcome::StoredEarlier => {
                    summary.stored += 1;
                    continue;
                }
                Outcome::Rejected(issue) => {
                    summary.rejected += 1;
                    let code = issue
                        .code
                        .map_or_else(|| "server".to_owned(), |c| c.to_string());
                    (code, issue.message.clone())
                }
                Outcome::Failed {
                    error,
                    may_have_been_stored,
                    ..
                } => {
                    summary.failed += 1;
                    // transport: the CLI's own words (flags, not HttpOptions fields).
                    let shown = crate::error::AppError::from(error.clone());
                    if summary.first_failure.is_none() {
                        summary.first_failure = Some(shown.message.clone());
                        summary.first_failure_hint = shown.hint.clone();
                    }
                    let note = if *may_have_been_stored {
                        " (it may have been stored; sending it again is safe)"
                    } else {
                        ""
                    };
                    ("failed".to_owned(), format!("{}{note}", shown.message))
                }
            };
            summary.report.push(ReportRow {
                line: rows[i].line,
                conversion_id: id_of(i),
                code,
                reason,
            });
        }
        bar.set_position(finished);
        if report.failed() == report.len() {
            stop = summary
                .first_failure
                .clone()
                .or_else(|| Some("an earlier batch failed".to_owned()));
        }
    }
    summary.report.sort_by_key(|r| r.line);
    Ok(summary)
}

/// Writes the report as CSV: `line,conversionId,code,reason`.
pub fn write_report(path: &Path, rows: &[ReportRow]) -> AppResult<()> {
    let mut out = csv::Writer::from_path(path).map_err(|e| {
        AppError::new(format!("cannot create the report {}: {e}", path.display())).hint(
            "check that the directory exists and is writable, or choose another --rejected path",
        )
    })?;
    let fail =
        |e: csv::Error| AppError::new(format!("cannot write the report {}: {e}", path.display()));
    out.write_record(["line", "conversionId", "code", "reason"])
        .map_err(fail)?;
    for r in rows {
        out.write_record([
            r.line.to_string().as_str(),
            r.conversion_id.as_str(),
            r.code.as_str(),
            r.reason.as_str(),
        ])
        .map_err(fail)?;
    }
    out.flush()
        .map_err(|e| AppError::new(format!("cannot write the report {}: {e}", path.display())))
}

/// `FILE.rejected.csv`.
pub fn default_report_path(input: &Path) -> PathBuf {
    let mut name = input.as_os_str().to_owned();
    name.push(".rejected.csv");
    PathBuf::from(name)
}

async fn run_upload(ctx: &Ctx, conn: &Conn<'_>, args: &UploadArgs) -> AppResult<u8> {
    let options = WriteOptions {
        batch_size: args.batch_size,
        concurrency: args.concurrency,
    };
    // The facade owns the bounds; check them before reading the file.
    options.validate()?;
    let mode = if args.update {
        WriteMode::Update
    } else {
        WriteMode::Insert
    };
    let rows = read_rows(&args.file, args.format)?;
    let client = if args.dry_run {
        None
    } else {
        Some(conn.client(options)?)
    };
    let bar = progress::items(0, if args.update { "updating" } else { "inserting" });
    let result = upload(client.as_ref(), &rows, mode, options, &bar).await;
    bar.finish_and_clear();
    let summary = result?;
    let report_path = args
        .rejected
        .clone()
        .unwrap_or_else(|| default_report_path(&args.file));
    let wrote_report = !summary.report.is_empty();
    if wrote_report {
        write_report(&report_path, &summary.report)?;
    }
    if ctx.json {
        let rejections: Vec<_> = summary
            .report
            .iter()
            .map(|r| json!({"line": r.line, "conversionId": r.conversion_id, "code": r.code, "reason": r.reason}))
            .collect();
        print_json(&json!({
            "dryRun": args.dry_run,
            "mode": if args.update { "update" } else { "insert" },
            "rows": summary.rows,
            "valid": summary.sent,
            "stored": summary.stored,
            "rejected": summary.rejected,
            "failed": summary.failed,
            "report": wrote_report.then(|| report_path.display().to_string()),
            "rejections": rejections,
        }))?;
    } else {
        print_upload(
            &summary,
            args.dry_run,
            wrote_report.then_some(report_path.as_path()),
        );
    }
    if summary.failed > 0 {
        let first = summary.first_failure.clone().unwrap_or_default();
        return Err(AppError::new(format!(
            "{} of {} rows got no definite answer: {first}",
            summary.failed, summary.rows
        ))
        .hint(format!(
            "{}they are in the report; sending the same file again is safe (rows already stored come back as 0x0000011A, conversion id already used)",
            summary
                .first_failure_hint
                .as_ref()
                .map(|h| format!("{h}; "))
                .unwrap_or_default()
        )));
    }
    Ok(if summary.rejected > 0 {
        EXIT_REJECTED
    } else {
        0
    })
}

/// Prints the per-row report and the summary.
pub fn print_upload(summary: &UploadSummary, dry_run: bool, report: Option<&Path>) {
    for r in &summary.report {
        let id = if r.conversion_id.is_empty() {
            "-"
        } else {
            r.conversion_id.as_str()
        };
        println!(
            "  line {:<4} {:<24} {:<10} {}",
            r.line, id, r.code, r.reason
        );
    }
    if dry_run {
        println!(
            "dry run: {}, {} valid, {} rejected; nothing was sent",
            rows_text(summary.rows),
            summary.sent,
            summary.rejected
        );
    } else {
        println!(
            "{}: {} stored, {} rejected, {} without answer",
            rows_text(summary.rows),
            summary.stored,
            summary.rejected,
            summary.failed
        );
    }
    if let Some(path) = report {
        println!("rejected rows written to {}", path.display());
    }
}

// --------------------------------------------------------- availability

fn parse_time(text: &str) -> AppResult<DateTime<Utc>> {
    let t = text.trim();
    let parsed = if !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit()) {
        t.parse::<i64>()
            .ok()
            .and_then(DateTime::from_timestamp_millis)
    } else {
        DateTime::parse_from_rfc3339(t)
            .ok()
            .map(|d| d.with_timezone(&Utc))
    };
    parsed.ok_or_else(|| {
        AppError::new(format!("--until {text:?} is not a time"))
            .hint("use RFC 3339 (2024-06-01T10:00:00Z) or epoch milliseconds")
    })
}

/// Availabilities for the given activities, all at `until`.
pub fn availabilities(
    agency: AgencyId,
    advertiser: AdvertiserId,
    until: DateTime<Utc>,
    ids: &[SegmentationId],
    names: &[String],
) -> Vec<Availability> {
    let base = Availability::new(agency, advertiser, until);
    ids.iter()
        .map(|id| Availability {
            segmentation_id: Some(*id),
            ..base.clone()
        })
        .chain(names.iter().map(|name| Availability {
            segmentation_name: Some(name.clone()),
            ..base.clone()
        }))
        .collect()
}

/// One line per availability: `FLOODLIGHT 551234 uploaded up to 2024-...`.
pub fn describe_availability(a: &Availability) -> String {
    let activity = match (&a.segmentation_id, &a.segmentation_name) {
        (Some(id), Some(name)) => format!("{id} ({name})"),
        (Some(id), None) => id.to_string(),
        (None, Some(name)) => format!("{name:?}"),
        (None, None) => "(no activity)".to_owned(),
    };
    format!(
        "{} activity {activity}: all conversions up to {} marked uploaded",
        a.segmentation_type,
        a.availability_timestamp
            .to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
    )
}

async fn run_availability(ctx: &Ctx, conn: &Conn<'_>, args: &AvailabilityArgs) -> AppResult<u8> {
    let (agency, advertiser) = conn.advertiser_scope()?;
    let until = match &args.until {
        Some(t) => parse_time(t)?,
        None => DateTime::<Utc>::from(std::time::SystemTime::now()),
    };
    let ids = args
        .segmentation_id
        .iter()
        .map(|t| parse_id("segmentation-id", t))
        .collect::<AppResult<Vec<SegmentationId>>>()?;
    let wanted = availabilities(agency, advertiser, until, &ids, &args.segmentation_name);
    let client = conn.client(WriteOptions::default())?;
    let echo = client.update_availability(&wanted).await?;
    if ctx.json {
        print_json(&json!({ "availabilities": echo }))?;
    } else {
        for a in &echo {
            println!("{}", describe_availability(a));
        }
    }
    Ok(0)
}

// ----------------------------------------------------------- id mapping

/// A progress callback that moves a byte bar.
pub fn byte_progress(bar: &ProgressBar) -> ProgressFn {
    let bar = bar.clone();
    Arc::new(move |bytes, total| {
        if let Some(total) = total
            && bar.length() != Some(total)
        {
            bar.set_length(total);
        }
        bar.set_position(bytes);
    })
}

async fn run_id_mapping(ctx: &Ctx, conn: &Conn<'_>, args: &IdMappingArgs) -> AppResult<u8> {
    let (agency, advertiser) = conn.advertiser_scope()?;
    let client = conn.client(WriteOptions::default())?;
    let bar = progress::bytes("id mapping");
    let result = client
        .save_id_mapping(agency, advertiser, &args.output, Some(byte_progress(&bar)))
        .await;
    bar.finish_and_clear();
    let bytes = result?;
    if ctx.json {
        print_json(&json!({"output": args.output.display().to_string(), "bytes": bytes}))?;
    } else {
        println!(
            "wrote the ID mapping of advertiser {advertiser} ({bytes} bytes) to {}",
            args.output.display()
        );
    }
    Ok(0)
}

// -------------------------------------------------------- saved columns

async fn run_saved_columns(ctx: &Ctx, conn: &Conn<'_>) -> AppResult<u8> {
    let (agency, advertiser) = conn.advertiser_scope()?;
    let client = conn.client(WriteOptions::default())?;
    let columns = client.saved_columns(agency, advertiser).await?;
    if ctx.json {
        let items: Vec<_> = columns
            .iter()
            .map(|c| json!({"name": c.name, "type": c.column_type}))
            .collect();
        print_json(&json!({ "savedColumns": items }))?;
    } else if columns.is_empty() {
        println!("advertiser {advertiser} has no saved columns");
    } else {
        let width = columns.iter().map(|c| c.name.len()).max().unwrap_or(0);
        for c in &columns {
            println!(
                "{:<width$}  {}",
                c.name,
                c.column_type.as_deref().unwrap_or("-")
            );
        }
    }
    Ok(0)
}

/// "1 row", "2 rows".
fn rows_text(n: usize) -> String {
    if n == 1 {
        "1 row".to_owned()
    } else {
        format!("{n} rows")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_take_both_spellings() {
        assert_eq!(
            parse_date("from", "2024-01-31").unwrap(),
            NaiveDate::from_ymd_opt(2024, 1, 31).unwrap()
        );
        assert_eq!(
            parse_date("from", "20240131").unwrap(),
            NaiveDate::from_ymd_opt(2024, 1, 31).unwrap()
        );
        assert!(parse_date("from", "31/01/2024").is_err());
    }

    #[test]
    fn report_path_sits_beside_the_input() {
        assert_eq!(
            default_report_path(Path::new("dir/in.csv")),
            PathBuf::from("dir/in.csv.rejected.csv")
        );
    }
}

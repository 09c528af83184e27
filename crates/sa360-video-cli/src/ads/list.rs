//! `apictl ads conversions list`: a date range of conversions as JSON lines
//! or CSV, on stdout or into a file.

use std::io::{BufWriter, IsTerminal as _, Write};
use std::path::Path;
use std::str::FromStr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use chrono::NaiveDate;
use futures::{Stream, TryStreamExt as _};
use indicatif::ProgressBar;
use sa360_video_sdk::search_ads::{
    AdGroupId, CampaignId, Conversion, DateRange, EngineAccount, ListOptions, SearchAdsClient,
    WriteOptions,
    reporting::{ReportFilters, ReportOptions},
};
use serde_json::json;

use super::conn::{Conn, parse_id};
use crate::cli::{ListArgs, ListFormat, ReadApi};
use crate::context::{Ctx, Source, print_json};
use crate::error::{AppError, AppResult, io_error};
use crate::progress;
use crate::records;

fn filter<T: FromStr>(flag: &str, value: &Option<String>) -> AppResult<Option<T>> {
    value.as_deref().map(|t| parse_id(flag, t)).transpose()
}

fn parse_date(flag: &str, text: &str) -> AppResult<NaiveDate> {
    NaiveDate::parse_from_str(text.trim(), "%Y-%m-%d")
        .or_else(|_| NaiveDate::parse_from_str(text.trim(), "%Y%m%d"))
        .map_err(|_| {
            AppError::refused(format!("--{flag} {text:?} is not a date"))
                .hint("write dates as YYYY-MM-DD, e.g. 2024-01-31")
        })
}

/// Writes a conversion stream as JSON lines or CSV; `on_row` is called after
/// each row. Returns the number of rows.
pub async fn write_conversions<W: Write>(
    mut stream: impl Stream<Item = Result<Conversion, sa360_video_sdk::search_ads::Error>> + Unpin,
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
pub type AnyConversions = std::pin::Pin<
    Box<dyn Stream<Item = Result<Conversion, sa360_video_sdk::search_ads::Error>> + Send>,
>;

/// Opens a v2 listing: the engine account when its three ids are known, else the customer.
#[allow(deprecated)] // conversion.get is deprecated by Google, and still answers
fn open_listing(
    client: &SearchAdsClient,
    ctx: &Ctx,
    conn: &Conn<'_>,
    dates: DateRange,
    options: ListOptions,
) -> AppResult<AnyConversions> {
    let engine = match (conn.agency()?, conn.advertiser()?, conn.engine_account()?) {
        (Some(agency), Some(advertiser), Some(engine)) => {
            Some(EngineAccount::new(agency, advertiser, engine))
        }
        _ => None,
    };
    let customer = conn.customer()?;
    if let (Some(_), Some(by_customer)) = (&engine, &customer) {
        // Both name an account: the one set more directly wins (a flag over
        // the environment over the config file); two flags are a conflict.
        let engine_source = ["agency_id", "advertiser_id", "engine_account_id"]
            .into_iter()
            .map(|id| ctx.source(id))
            .max()
            .unwrap_or(Source::File);
        let customer_source = ctx.source("customer_id");
        if engine_source == Source::Flag && customer_source == Source::Flag {
            return Err(AppError::refused(
                "--customer-id and --engine-account-id (with --agency-id and --advertiser-id) both name an account to list",
            )
            .hint("pass one of them: --customer-id reads the customer, the other three the engine account"));
        }
        if customer_source > engine_source {
            return Ok(Box::pin(
                client
                    .list_conversions_by_customer(*by_customer, dates)
                    .options(options)
                    .stream(),
            ));
        }
    }
    if let Some(account) = engine {
        return Ok(Box::pin(
            client
                .list_conversions(account, dates)
                .options(options)
                .stream(),
        ));
    }
    if let Some(customer) = customer {
        return Ok(Box::pin(
            client
                .list_conversions_by_customer(customer, dates)
                .options(options)
                .stream(),
        ));
    }
    Err(AppError::refused("no account to list").hint(
        "pass --agency-id, --advertiser-id and --engine-account-id (or --customer-id), or set SEARCH_ADS_AGENCY_ID, SEARCH_ADS_ADVERTISER_ID and SEARCH_ADS_ENGINE_ACCOUNT_ID",
    ))
}

/// Opens a report through the Reporting API for the customer.
fn open_report(
    client: &SearchAdsClient,
    conn: &Conn<'_>,
    dates: DateRange,
    args: &ListArgs,
) -> AppResult<AnyConversions> {
    let Some(customer) = conn.customer()? else {
        return Err(AppError::refused("no customer to report on").hint(
            "pass --customer-id (or set SEARCH_ADS_CUSTOMER_ID), or read an engine account with --api v2",
        ));
    };
    let filters = ReportFilters::default()
        .campaign_ids(filter::<CampaignId>("campaign-id", &args.campaign_id)?)
        .ad_group_ids(filter::<AdGroupId>("ad-group-id", &args.ad_group_id)?)
        .ad_ids(filter("ad-id", &args.ad_id)?)
        .criterion_ids(filter("criterion-id", &args.criterion_id)?);
    let options = ReportOptions::default()
        .page_size(
            args.page_size
                .unwrap_or(sa360_video_sdk::search_ads::reporting::MAX_REPORT_PAGE_SIZE),
        )
        .shard_days(args.shard_days)
        .look_ahead(args.look_ahead)
        .filters(filters);
    // Checked here too (the report checks again) to hint at the flag before any output.
    options.validate().map_err(|e| match &e {
        sa360_video_sdk::search_ads::Error::Validation { field, .. } if field == "page_size" => {
            AppError::from(e).hint("use --page-size 1 to 10000 with --api reporting")
        }
        sa360_video_sdk::search_ads::Error::Validation { field, .. } if field == "look_ahead" => {
            AppError::from(e).hint("use --look-ahead 1 to 16 with --api reporting")
        }
        sa360_video_sdk::search_ads::Error::Validation { field, .. } if field == "shard_days" => {
            AppError::from(e).hint("use --shard-days 1 to 30 with --api reporting")
        }
        _ => AppError::from(e),
    })?;
    let report = client
        .conversion_report(customer, dates)
        .options(options)
        .stream();
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

/// Runs `apictl ads conversions list`.
pub(super) async fn run_list(ctx: &Ctx, conn: &Conn<'_>, args: &ListArgs) -> AppResult<u8> {
    let dates = DateRange::new(parse_date("from", &args.from)?, parse_date("to", &args.to)?)?;
    let client = conn.client(WriteOptions::default())?;
    let stream = match read_api(conn, args)? {
        ReadApi::Reporting => open_report(&client, conn, dates, args)?,
        ReadApi::V2 => {
            let mut options = ListOptions::default()
                .page_size(args.page_size.unwrap_or(1000))
                .look_ahead(args.look_ahead);
            options.campaign_id = filter("campaign-id", &args.campaign_id)?;
            options.ad_group_id = filter("ad-group-id", &args.ad_group_id)?;
            options.ad_id = filter("ad-id", &args.ad_id)?;
            options.criterion_id = filter("criterion-id", &args.criterion_id)?;
            open_listing(&client, ctx, conn, dates, options)?
        }
    };
    match &args.output {
        Some(path) => {
            // Written to a new temporary file beside FILE and renamed once complete, so FILE is
            // never half a listing; dropping it on an error removes it.
            let mut part = create_beside(path)
                .map_err(|e| io_error("cannot create a temporary file beside", path, &e))?;
            let bar = progress::counter("conversions");
            let count = write_conversions(stream, &mut part, args.format, || bar.inc(1)).await;
            bar.finish_and_clear();
            let count = count.map_err(|e| e.context(path.display()))?;
            commit(part, path).map_err(|e| io_error("cannot rename to", path, &e))?;
            if ctx.json {
                print_json(&json!({"conversions": count, "output": path.display().to_string()}))?;
            } else {
                crate::output::sayln!("wrote {count} conversions to {}", path.display())?;
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

/// A new file beside `path` (`.FILE.XXXXXX.part`): a random name created with `O_EXCL`, so
/// nothing planted there (a symlink) is followed; mode 0666 less the umask, as a plain create.
pub(super) fn create_beside(path: &Path) -> std::io::Result<tempfile::NamedTempFile> {
    let prefix = format!(
        ".{}.",
        path.file_name().unwrap_or_default().to_string_lossy()
    );
    let mut builder = tempfile::Builder::new();
    builder.prefix(&prefix).suffix(".part");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        builder.permissions(std::fs::Permissions::from_mode(0o666));
    }
    builder.tempfile_in(parent_dir(path))
}

/// Syncs `part`, renames it onto `path` (replacing the directory entry, never following a
/// symlink there) and syncs the directory, so after a crash `path` is the old file or the whole
/// new one.
pub(super) fn commit(part: tempfile::NamedTempFile, path: &Path) -> std::io::Result<()> {
    part.as_file().sync_all()?;
    part.persist(path).map_err(|e| e.error)?;
    std::fs::File::open(parent_dir(path))?.sync_all()
}

/// The directory `path` is in (`.` for a bare file name).
fn parent_dir(path: &Path) -> &Path {
    path.parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
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
    fn the_output_appears_whole_and_a_dropped_one_leaves_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out.csv");
        std::fs::write(&path, "old").unwrap();
        let mut part = create_beside(&path).unwrap();
        part.write_all(b"new").unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "old");
        commit(part, &path).unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "new");
        let mut failed = create_beside(&dir.path().join("failed.csv")).unwrap();
        failed.write_all(b"half").unwrap();
        drop(failed);
        let names: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, ["out.csv"]);
    }

    #[cfg(unix)]
    #[test]
    fn a_symlink_planted_at_the_output_is_replaced_not_followed() {
        let dir = tempfile::tempdir().unwrap();
        let victim = dir.path().join("victim");
        std::fs::write(&victim, "keep me").unwrap();
        let path = dir.path().join("out.csv");
        std::os::unix::fs::symlink(&victim, &path).unwrap();
        let mut part = create_beside(&path).unwrap();
        part.write_all(b"rows").unwrap();
        commit(part, &path).unwrap();
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep me");
        assert!(
            !std::fs::symlink_metadata(&path)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "rows");
    }
}

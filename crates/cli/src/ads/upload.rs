//! `apictl ads conversions upload`: conversions from a CSV or JSON-lines file.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use facade::search_ads::{Outcome, SearchAds, WriteOptions, WriteProgress, WriteProgressFn};
use indicatif::ProgressBar;
use serde_json::json;

use super::conn::Conn;
use crate::cli::{InputFormat, UploadArgs};
use crate::context::{Ctx, print_json};
use crate::error::{AppError, AppResult, EXIT_REJECTED, io_error};
use crate::progress;
use crate::records::{self, InputRow, WriteMode};

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
        let request = match mode {
            WriteMode::Insert => client.insert(&conversions),
            WriteMode::Update => client.update(&conversions),
        };
        let report = request
            .options(options)
            .progress_shared(progress)
            .send()
            .await?;
        finished += chunk.len() as u64;
        for (&i, outcome) in chunk.iter().zip(report.outcomes()) {
            let (code, reason) = match outcome {
                Outcome::Stored | Outcome::StoredEarlier | Outcome::AlreadyStored => {
                    summary.stored += 1;
                    continue;
                }
                // `check_rows` removed what the facade would refuse locally.
                Outcome::Invalid(error) => {
                    summary.rejected += 1;
                    ("local".to_owned(), error.to_string())
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
                    summary
                        .first_failure
                        .get_or_insert_with(|| error.to_string());
                    let note = if *may_have_been_stored {
                        " (it may have been stored; sending it again is safe)"
                    } else {
                        ""
                    };
                    ("failed".to_owned(), format!("{error}{note}"))
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

/// Runs `apictl ads conversions upload`.
pub(super) async fn run_upload(ctx: &Ctx, conn: &Conn<'_>, args: &UploadArgs) -> AppResult<u8> {
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
        .hint("they are in the report; sending the same file again is safe (rows already stored come back as 0x0000011A, conversion id already used)"));
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
    fn report_path_sits_beside_the_input() {
        assert_eq!(
            default_report_path(Path::new("dir/in.csv")),
            PathBuf::from("dir/in.csv.rejected.csv")
        );
    }
}

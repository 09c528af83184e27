//! `apictl ads conversions upload`: conversions from a CSV or JSON-lines file,
//! through the upload engine; prints the first [`PRINTED_ROWS`] rejected rows
//! as their batches finish (the report file has them all) and the summary at
//! the end.

use serde_json::json;

use super::conn::Conn;
use std::sync::Arc;

use super::engine::{
    FAILED_BATCHES_BEFORE_STOP, JournalMode, LiveCounts, UploadPlan, UploadSummary, upload_file,
};
use super::rejected::RejectedRow;
use crate::cli::UploadArgs;
use crate::context::{Ctx, print_json};
use crate::error::{AppError, AppResult, EXIT_INTERRUPTED, EXIT_REJECTED};
use crate::exit::EXIT_NONE_STORED;
use crate::progress;
use crate::records::WriteMode;
use sa360_video_sdk::search_ads::WriteOptions;

/// Rejected or failed rows printed on stdout, one line each; the rest are
/// counted in one line (the report file has every rejected row).
pub const PRINTED_ROWS: u64 = 20;

/// The rows printed and those left out, by kind.
#[derive(Debug, Default)]
struct Printed {
    shown: u64,
    more_rejected: u64,
    more_failed: u64,
}

/// Runs `apictl ads conversions upload`.
pub(super) async fn run_upload(ctx: &Ctx, conn: &Conn<'_>, args: &UploadArgs) -> AppResult<u8> {
    let options = WriteOptions::default()
        .batch_size(args.batch_size)
        .concurrency(args.concurrency);
    // The SDK owns the bounds; check them before reading the file.
    options.validate()?;
    let mode = if args.update {
        WriteMode::Update
    } else {
        WriteMode::Insert
    };
    let client = if args.dry_run {
        None
    } else {
        Some(conn.client(options)?)
    };
    let live = Arc::new(LiveCounts::default());
    let plan = UploadPlan {
        live: Some(live.clone()),
        file: args.file.clone(),
        format: args.format,
        mode,
        options,
        report: args.rejected.clone(),
        journal_path: args.journal.clone(),
        journal: if args.dry_run {
            JournalMode::Off
        } else if args.resume {
            JournalMode::Resume
        } else if args.restart {
            JournalMode::Restart
        } else {
            JournalMode::Fresh
        },
    };
    let size = std::fs::metadata(&args.file).map_or(0, |m| m.len());
    let bar = progress::file(size, if args.update { "updating" } else { "inserting" });
    let json = ctx.json;
    let mut printed = Printed::default();
    let mut print = |r: &RejectedRow| {
        if json {
            return;
        }
        if printed.shown < PRINTED_ROWS {
            printed.shown += 1;
            bar.suspend(|| print_row(r));
        } else if r.code == "failed" {
            printed.more_failed += 1;
        } else {
            printed.more_rejected += 1;
        }
    };
    let result = tokio::select! {
        result = upload_file(client.as_ref(), &plan, &bar, &mut print) => result,
        Ok(()) = tokio::signal::ctrl_c() => {
            // The upload's future is dropped here: nothing more is sent, and
            // the journal holds every outcome it recorded.
            bar.finish_and_clear();
            crate::output::tell!("{}", interrupted_line(&plan.journal_path(), args.dry_run, &live));
            return Ok(EXIT_INTERRUPTED);
        }
    };
    bar.finish_and_clear();
    let summary = result?;
    if let Some(at) = summary.finished_earlier {
        return finished_earlier(ctx, &args.file, &summary, at);
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
            "alreadyStored": summary.already_stored,
            "rejected": summary.rejected,
            "failed": summary.failed,
            "skipped": summary.skipped,
            "report": summary.report_path.as_ref().map(|p| p.display().to_string()),
            "journal": summary.journal.as_ref().map(|p| p.display().to_string()),
            "finished": summary.finished,
            "rejections": rejections,
        }))?;
    } else {
        print_more(&printed, summary.report_path.as_deref());
        print_summary(&summary, args.dry_run);
    }
    if summary.failed > 0 || summary.stopped {
        let first = summary.first_failure.clone().unwrap_or_default();
        let what = if summary.stopped {
            format!(
                "the upload stopped after {FAILED_BATCHES_BEFORE_STOP} batches in a row got no answer; {} rows read so far, {} without a definite outcome: {first}",
                summary.rows, summary.failed
            )
        } else {
            format!(
                "{} of {} rows got no definite answer: {first}",
                summary.failed, summary.rows
            )
        };
        return Err(AppError::new(what).hint(format!(
            "{}run the same command with --resume: it sends only the rows without a definite outcome (a row stored after all then counts as already stored)",
            summary
                .first_failure_hint
                .as_ref()
                .map(|h| format!("{h}; then "))
                .unwrap_or_default()
        )));
    }
    Ok(exit_status(&summary, args.dry_run))
}

/// 0 when no row was rejected; 3 when some were and others stored (on a dry
/// run: valid); 6 when none was.
fn exit_status(summary: &UploadSummary, dry_run: bool) -> u8 {
    let kept = if dry_run {
        summary.sent
    } else {
        summary.stored
    };
    match (summary.rejected, kept) {
        (0, _) => 0,
        (_, 0) => EXIT_NONE_STORED,
        _ => EXIT_REJECTED,
    }
}

/// The one line (or JSON document) of a file whose upload finished in an
/// earlier run: nothing was sent; exit status 0.
fn finished_earlier(
    ctx: &Ctx,
    file: &std::path::Path,
    summary: &UploadSummary,
    at: std::time::SystemTime,
) -> AppResult<u8> {
    let at = chrono::DateTime::<chrono::Utc>::from(at)
        .to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
    if ctx.json {
        print_json(&json!({
            "finishedEarlier": at,
            "rows": summary.rows,
            "stored": summary.stored,
            "rejected": summary.rejected,
            "report": summary.report_path.as_ref().map(|p| p.display().to_string()),
            "journal": summary.journal.as_ref().map(|p| p.display().to_string()),
        }))?;
        return Ok(0);
    }
    let report = summary
        .report_path
        .as_ref()
        .map(|p| format!(" (rejected rows in {})", p.display()))
        .unwrap_or_default();
    let journal = summary
        .journal
        .as_ref()
        .map_or_else(String::new, |p| p.display().to_string());
    let _ = crate::output::sayln!(
        "{}: already uploaded at {at}: {}: {} stored, {} rejected{report}; nothing sent (recorded in {journal}; --restart uploads it again)",
        file.display(),
        rows_text(summary.rows),
        summary.stored,
        summary.rejected,
    );
    Ok(0)
}

/// The line after the printed rows: how many more there are and where.
fn print_more(printed: &Printed, report: Option<&std::path::Path>) {
    if printed.more_rejected > 0 {
        let _ = crate::output::sayln!(
            "  …and {} more rejected rows in {}",
            printed.more_rejected,
            report.map_or_else(|| "the report".to_owned(), |p| p.display().to_string())
        );
    }
    if printed.more_failed > 0 {
        let _ = crate::output::sayln!(
            "  …and {} more rows without an answer (the journal keeps them for --resume)",
            printed.more_failed
        );
    }
}

/// The line printed when Ctrl-C stops an upload: what was done and the exact
/// command that continues it.
fn interrupted_line(journal: &std::path::Path, dry_run: bool, live: &LiveCounts) -> String {
    use std::sync::atomic::Ordering::Relaxed;
    if dry_run {
        return "interrupted (Ctrl-C): dry run, nothing was sent".to_owned();
    }
    let (stored, rejected) = (live.stored.load(Relaxed), live.rejected.load(Relaxed));
    if !journal.exists() {
        return format!(
            "interrupted (Ctrl-C) before any row was sent; run the same command again: {}",
            resume_command(false)
        );
    }
    format!(
        "interrupted (Ctrl-C): {stored} rows stored, {rejected} rejected so far, recorded in {}; continue with: {}",
        journal.display(),
        resume_command(true)
    )
}

/// This process's command line, shell-quoted, with `--restart` dropped and,
/// when `resume`, `--resume` added (once).
fn resume_command(resume: bool) -> String {
    let mut args: Vec<String> = std::env::args().filter(|a| a != "--restart").collect();
    if resume && !args.iter().any(|a| a == "--resume") {
        args.push("--resume".to_owned());
    }
    let quoted: Vec<_> = args
        .iter()
        .map(|a| sa360_video_client_support::sh_quote(a))
        .collect();
    quoted.join(" ")
}

/// One rejected or failed row, as its batch finishes: the file's and the
/// server's text escaped.
fn print_row(r: &RejectedRow) {
    let id = if r.conversion_id.is_empty() {
        "-"
    } else {
        r.conversion_id.as_str()
    };
    let _ = crate::output::sayln!("{}", row_line(r.line, id, &r.code, &r.reason));
}

fn row_line(line: u64, id: &str, code: &str, reason: &str) -> String {
    use sa360_video_client_support::printable;
    format!(
        "  line {line:<4} {:<24} {:<10} {}",
        printable(id),
        printable(code),
        printable(reason)
    )
}

/// The summary lines.
pub fn print_summary(summary: &UploadSummary, dry_run: bool) {
    if dry_run {
        let _ = crate::output::sayln!(
            "dry run: {}, {} valid, {} rejected; nothing was sent",
            rows_text(summary.rows),
            summary.sent,
            summary.rejected
        );
    } else {
        let already = if summary.already_stored > 0 {
            format!(" ({} already stored)", summary.already_stored)
        } else {
            String::new()
        };
        let _ = crate::output::sayln!(
            "{}: {} stored{already}, {} rejected, {} without answer",
            rows_text(summary.rows),
            summary.stored,
            summary.rejected,
            summary.failed
        );
        if summary.skipped > 0 {
            let _ = crate::output::sayln!(
                "resumed: {} rows had their outcome from the earlier run and were not sent again",
                summary.skipped
            );
        }
    }
    if let Some(path) = &summary.report_path {
        let _ = crate::output::sayln!("rejected rows written to {}", path.display());
    }
    match &summary.journal {
        Some(path) if summary.finished => {
            let _ = crate::output::sayln!(
                "finished; recorded in {} (a rerun sends nothing; --restart uploads it again)",
                path.display()
            );
        }
        Some(path) => {
            let _ = crate::output::sayln!("journal kept in {} for --resume", path.display());
        }
        None => {}
    }
}

/// "1 row", "2 rows".
fn rows_text(n: u64) -> String {
    if n == 1 {
        "1 row".to_owned()
    } else {
        format!("{n} rows")
    }
}

#[cfg(test)]
mod tests {
    use super::row_line;
    use sa360_video_client_support::sh_quote as shell_quote;

    #[test]
    fn a_rows_text_from_the_file_or_the_server_is_escaped() {
        let line = row_line(
            7,
            "id\u{1b}[31m",
            "0x0000010E",
            "\u{1b}]0;x\u{7}\u{1b}[2J\u{9b}1m",
        );
        assert_eq!(
            line,
            "  line 7    id\\u{1b}[31m             0x0000010E \\u{1b}]0;x\\u{7}\\u{1b}[2J\\u{9b}1m"
        );
    }

    #[test]
    fn arguments_are_quoted_for_a_posix_shell() {
        assert_eq!(shell_quote("--batch-size"), "--batch-size");
        assert_eq!(shell_quote("/tmp/a b.csv"), "'/tmp/a b.csv'");
        assert_eq!(shell_quote("it's"), "'it'\\''s'");
        assert_eq!(shell_quote(""), "''");
    }
}

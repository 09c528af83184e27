//! `apictl ads conversions upload`: conversions from a CSV or JSON-lines file,
//! through the upload engine; prints each rejected row as its batch finishes
//! and the summary at the end.

use serde_json::json;

use super::conn::Conn;
use std::sync::Arc;

use super::engine::{
    FAILED_BATCHES_BEFORE_STOP, JournalMode, LiveCounts, UploadPlan, UploadSummary, upload_file,
};
use super::journal::default_journal_path;
use super::rejected::RejectedRow;
use crate::cli::UploadArgs;
use crate::context::{Ctx, print_json};
use crate::error::{AppError, AppResult, EXIT_INTERRUPTED, EXIT_REJECTED};
use crate::progress;
use crate::records::WriteMode;
use sa360_video_sdk::search_ads::WriteOptions;

/// Runs `apictl ads conversions upload`.
pub(super) async fn run_upload(ctx: &Ctx, conn: &Conn<'_>, args: &UploadArgs) -> AppResult<u8> {
    let options = WriteOptions::default()
        .batch_size(args.batch_size)
        .concurrency(args.concurrency);
    // The facade owns the bounds; check them before reading the file.
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
    let bar = progress::counter(if args.update { "updating" } else { "inserting" });
    let json = ctx.json;
    let mut print = |r: &RejectedRow| {
        if !json {
            bar.suspend(|| print_row(r));
        }
    };
    let result = tokio::select! {
        result = upload_file(client.as_ref(), &plan, &bar, &mut print) => result,
        Ok(()) = tokio::signal::ctrl_c() => {
            // The upload's future is dropped here: nothing more is sent, and
            // the journal holds every outcome it recorded.
            bar.finish_and_clear();
            crate::output::tell!("{}", interrupted_line(&args.file, args.dry_run, &live));
            return Ok(EXIT_INTERRUPTED);
        }
    };
    bar.finish_and_clear();
    let summary = result?;
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
            "rejections": rejections,
        }))?;
    } else {
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
    Ok(if summary.rejected > 0 {
        EXIT_REJECTED
    } else {
        0
    })
}

/// The line printed when Ctrl-C stops an upload: what was done and the exact
/// command that continues it.
fn interrupted_line(file: &std::path::Path, dry_run: bool, live: &LiveCounts) -> String {
    use std::sync::atomic::Ordering::Relaxed;
    if dry_run {
        return "interrupted (Ctrl-C): dry run, nothing was sent".to_owned();
    }
    let (stored, rejected) = (live.stored.load(Relaxed), live.rejected.load(Relaxed));
    let journal = default_journal_path(file);
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
    args.iter()
        .map(|a| shell_quote(a))
        .collect::<Vec<_>>()
        .join(" ")
}

/// `arg` as a POSIX shell reads it back: bare when it holds only safe
/// characters, else in single quotes.
fn shell_quote(arg: &str) -> String {
    let safe = |c: char| c.is_ascii_alphanumeric() || "_-./,:=@%+".contains(c);
    if !arg.is_empty() && arg.chars().all(safe) {
        arg.to_owned()
    } else {
        format!("'{}'", arg.replace('\'', "'\\''"))
    }
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
    if let Some(path) = &summary.journal {
        let _ = crate::output::sayln!("journal kept in {} for --resume", path.display());
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
    use super::{row_line, shell_quote};

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

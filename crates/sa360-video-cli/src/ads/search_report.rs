//! `apictl ads report --query '…'` (or `--query-file`): a report of any resource through the
//! Reporting API, written as CSV, JSON lines or a table. The columns are the fields as selected
//! (`campaign.id`, `metrics.clicks`, `custom_columns.id[7]`), as Google's clients name them; the
//! query is checked by the SDK before anything is sent.

use std::io::{BufWriter, IsTerminal as _, Read as _, Write};

use futures::{Stream, StreamExt as _, TryStreamExt as _};
use sa360_video_client_support::printable;
use sa360_video_sdk::search_ads::reporting::{
    MAX_QUERY_CHARS, Query, SearchOptions, SummaryRow, UnknownFields, fields,
};
use sa360_video_sdk::search_ads::{Error as SaError, WriteOptions};
use serde::ser::{SerializeMap as _, Serializer as _};
use serde_json::{Value, json};

use super::conn::Conn;
use super::list::{commit, create_beside};
use crate::cli::{ReportFormat, ReportQueryArgs};
use crate::context::{Ctx, print_json};
use crate::error::{AppError, AppResult, io_error};

/// Most rows `--format table` holds to size its columns.
pub const MAX_TABLE_ROWS: usize = 10_000;

/// The query text of `--query` or `--query-file`, bounded.
fn query_text(args: &ReportQueryArgs) -> AppResult<String> {
    if let Some(q) = &args.query {
        return Ok(q.clone());
    }
    let Some(path) = &args.query_file else {
        return Err(AppError::refused("no query").hint("pass --query '…' or --query-file FILE"));
    };
    // A query is text of at most MAX_QUERY_CHARS characters (4 bytes each at most).
    let limit = u64::try_from(MAX_QUERY_CHARS * 4).unwrap_or(u64::MAX);
    let mut bytes = Vec::new();
    let read = if path.as_os_str() == "-" {
        std::io::stdin()
            .lock()
            .take(limit + 1)
            .read_to_end(&mut bytes)
    } else {
        std::fs::File::open(path).and_then(|f| f.take(limit + 1).read_to_end(&mut bytes))
    };
    read.map_err(|e| io_error("cannot read the query file", path, &e))?;
    if bytes.len() as u64 > limit {
        return Err(AppError::refused(format!(
            "the query file {} is larger than {limit} bytes",
            path.display()
        ))
        .hint("a query is at most 100000 characters; check --query-file names the query"));
    }
    String::from_utf8(bytes).map_err(|_| {
        AppError::refused(format!(
            "the query file {} is not UTF-8 text",
            path.display()
        ))
        .hint("save the query as UTF-8 text")
    })
}

/// A refused query with a hint that names the command listing the fields (and, for a name taken
/// for a typo, the flag that sends it as it is).
fn query_error(e: SaError) -> AppError {
    match &e {
        SaError::Query {
            code,
            field,
            reason,
            suggestion: Some(near),
            typo: true,
            ..
        } => AppError::refused(format!(
            "query refused: {code}: `{field}` {reason}; did you mean `{near}`? (nothing was sent)"
        ))
        .hint(
            "fix the query (`apictl ads fields PATTERN` lists the fields), or if it is a field \
             newer than apictl's catalogue, pass --send-unknown-fields to send it as it is",
        ),
        SaError::Query { .. } => AppError::refused(e.to_string())
            .hint("fix the query; `apictl ads fields PATTERN` lists the fields and where each may be used"),
        SaError::Validation { field, .. } if field == "page_size" => {
            AppError::from(e).hint("use --page-size 1 to 10000")
        }
        SaError::Validation { field, .. } if field == "look_ahead" => {
            AppError::from(e).hint("use --look-ahead 1 to 16")
        }
        _ => AppError::from(e),
    }
}

/// The JSON members of a selected field: `ad_group.cost_micros` → `adGroup`, `costMicros`.
fn members(column: &str) -> Vec<String> {
    column
        .split('.')
        .map(|part| {
            let mut out = String::with_capacity(part.len());
            let mut upper = false;
            for c in part.chars() {
                if c == '_' {
                    upper = true;
                } else if upper {
                    out.push(c.to_ascii_uppercase());
                    upper = false;
                } else {
                    out.push(c);
                }
            }
            out
        })
        .collect()
}

/// Where each column's value sits in a row.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Path {
    Members(Vec<String>),
    /// The n-th selected custom column (`customColumns[n]`).
    CustomColumn(usize),
}

fn paths(columns: &[String]) -> Vec<Path> {
    let mut custom = 0;
    columns
        .iter()
        .map(|c| {
            if c.starts_with("custom_columns.") {
                custom += 1;
                Path::CustomColumn(custom - 1)
            } else {
                Path::Members(members(c))
            }
        })
        .collect()
}

/// A column's value in a row (`Null` when the row does not have it).
fn value<'r>(row: &'r Value, path: &Path) -> &'r Value {
    match path {
        Path::Members(members) => members
            .iter()
            .try_fold(row, |v, m| v.get(m))
            .unwrap_or(&Value::Null),
        // A custom column's value is a `Value` object with one member set (`int64Value`, ...).
        Path::CustomColumn(n) => row
            .get("customColumns")
            .and_then(|c| c.get(*n))
            .and_then(|v| v.as_object()?.values().next())
            .unwrap_or(&Value::Null),
    }
}

/// A value as a CSV or table cell: text as it is, other scalars printed, lists and objects as
/// JSON, absent as empty; escaped for a terminal (`printable`) when `escape`.
fn cell(v: &Value, escape: bool) -> String {
    let text = match v {
        Value::Null => String::new(),
        Value::String(s) => s.clone(),
        Value::Bool(_) | Value::Number(_) | Value::Array(_) | Value::Object(_) => v.to_string(),
    };
    match escape {
        true => printable(&text).into_owned(),
        false => text,
    }
}

/// `v` with every text in it escaped for a terminal (`printable`).
fn escaped(v: &Value) -> Value {
    match v {
        Value::String(s) => Value::String(printable(s).into_owned()),
        Value::Array(a) => a.iter().map(escaped).collect(),
        Value::Object(o) => o
            .iter()
            .map(|(k, v)| (printable(k).into_owned(), escaped(v)))
            .collect(),
        other => other.clone(),
    }
}

/// Writes the rows of `stream`; returns how many. The server's text is escaped for a terminal
/// in a table, and in every format when `terminal` (stdout is one); a file gets it as it is.
pub async fn write_report<W: Write>(
    mut stream: impl Stream<Item = Result<Value, SaError>> + Unpin,
    out: W,
    columns: &[String],
    format: ReportFormat,
    to: Option<&std::path::Path>,
    terminal: bool,
) -> AppResult<u64> {
    // A closed stdout (`apictl ads report … | head`) ends the command quietly.
    let io_error = |e: std::io::Error| crate::output::write_error(Some(e.kind()), &e, to);
    let csv_error = |e: csv::Error| {
        let kind = match e.kind() {
            csv::ErrorKind::Io(io) => Some(io.kind()),
            _ => None,
        };
        crate::output::write_error(kind, &e, to)
    };
    let json_error = |e: serde_json::Error| crate::output::write_error(e.io_error_kind(), &e, to);
    let paths = paths(columns);
    // Nothing is written before the first answer: a refused query leaves no header behind.
    let first = stream.try_next().await?;
    let mut stream = futures::stream::iter(first.map(Ok)).chain(stream);
    let mut count = 0u64;
    match format {
        ReportFormat::Csv => {
            let mut out = csv::Writer::from_writer(out);
            out.write_record(columns).map_err(csv_error)?;
            while let Some(row) = stream.try_next().await? {
                out.write_record(paths.iter().map(|p| cell(value(&row, p), terminal)))
                    .map_err(csv_error)?;
                count += 1;
            }
            out.flush().map_err(io_error)?;
        }
        ReportFormat::Jsonl => {
            let mut out = BufWriter::new(out);
            while let Some(row) = stream.try_next().await? {
                // Members in the SELECT's order (a `Map` would sort them by name).
                let mut serializer = serde_json::Serializer::new(&mut out);
                let mut object = serializer
                    .serialize_map(Some(columns.len()))
                    .map_err(json_error)?;
                for (c, p) in columns.iter().zip(&paths) {
                    let v = value(&row, p);
                    match terminal {
                        true => object.serialize_entry(c, &escaped(v)),
                        false => object.serialize_entry(c, v),
                    }
                    .map_err(json_error)?;
                }
                object.end().map_err(json_error)?;
                out.write_all(b"\n").map_err(io_error)?;
                count += 1;
            }
            out.flush().map_err(io_error)?;
        }
        ReportFormat::Table => {
            let mut rows: Vec<Vec<String>> = Vec::new();
            while let Some(row) = stream.try_next().await? {
                if rows.len() >= MAX_TABLE_ROWS {
                    return Err(AppError::new(format!(
                        "the report has more than {MAX_TABLE_ROWS} rows, too many for a table"
                    ))
                    .hint("use --format csv or --format jsonl, or add a LIMIT to the query"));
                }
                rows.push(paths.iter().map(|p| cell(value(&row, p), true)).collect());
            }
            let mut widths: Vec<usize> = columns.iter().map(|c| c.chars().count()).collect();
            for row in &rows {
                for (w, c) in widths.iter_mut().zip(row) {
                    *w = (*w).max(c.chars().count());
                }
            }
            let mut out = BufWriter::new(out);
            let mut line = |cells: &[String]| -> std::io::Result<()> {
                let text: Vec<String> = cells
                    .iter()
                    .zip(&widths)
                    .map(|(c, w)| format!("{c:<w$}"))
                    .collect();
                writeln!(out, "{}", text.join("  ").trim_end())
            };
            line(columns).map_err(io_error)?;
            for row in &rows {
                line(row).map_err(io_error)?;
            }
            count = rows.len() as u64;
            out.flush().map_err(io_error)?;
        }
    }
    Ok(count)
}

/// Runs `apictl ads report`.
pub(super) async fn run_report(
    ctx: &Ctx,
    conn: &Conn<'_>,
    args: &ReportQueryArgs,
) -> AppResult<u8> {
    let query = Query::text(query_text(args)?.trim().to_owned());
    let Some(customer) = conn.customer()? else {
        return Err(AppError::refused("no customer to report on")
            .hint("pass --customer-id (or set SEARCH_ADS_CUSTOMER_ID)"));
    };
    let options = SearchOptions::default()
        .page_size(
            args.page_size
                .unwrap_or(sa360_video_sdk::search_ads::reporting::MAX_REPORT_PAGE_SIZE),
        )
        .look_ahead(args.look_ahead)
        .unknown_fields(match args.send_unknown_fields {
            true => UnknownFields::Send,
            false => UnknownFields::RefuseTypos,
        });
    options.validate().map_err(query_error)?;
    let client = conn.client(WriteOptions::default())?;
    let request = client.search(customer, query).options(options);
    // The same checks the stream makes, before any output (nothing is sent).
    let checked = request.checked_query().map_err(query_error)?;
    if !checked.unknown.is_empty() {
        crate::output::tell!(
            "warning: not in apictl's field catalogue (revision {}), sent as they are for the \
             service to judge: {}",
            fields::REVISION,
            checked.unknown.join(", ")
        );
    }
    let columns = checked.columns;
    if args.validate_only {
        let checked = request.validate().await?;
        match ctx.json {
            true => print_json(&json!({"valid": true, "query": checked.text}))?,
            false => crate::output::note!("the service accepts the query"),
        }
        return Ok(0);
    }
    if args.count {
        let rows = request.total_results_count().await?;
        match ctx.json {
            true => print_json(&json!({"rows": rows}))?,
            false => crate::output::outln!("{rows}")?,
        }
        return Ok(0);
    }
    let stream = match args.summary {
        // The summary row comes after every row, in the last batch of one searchStream answer.
        true => {
            let report = request
                .summary_row(SummaryRow::WithRows)
                .send::<Value>()
                .await?;
            futures::stream::iter(report.rows.into_iter().chain(report.summary_row).map(Ok)).boxed()
        }
        false => request.stream::<Value>().boxed(),
    };
    // `--json` asks for JSON on stdout: JSON lines unless a format was named.
    let format = args.format.unwrap_or(if ctx.json {
        ReportFormat::Jsonl
    } else {
        ReportFormat::Csv
    });
    match &args.output {
        Some(path) => {
            // Written to a new temporary file beside FILE and renamed once complete (as
            // `conversions list` writes), so FILE is never half a report.
            let mut part = create_beside(path)
                .map_err(|e| io_error("cannot create a temporary file beside", path, &e))?;
            let count = write_report(stream, &mut part, &columns, format, Some(path), false)
                .await
                .map_err(|e| e.context(path.display()))?;
            commit(part, path).map_err(|e| io_error("cannot rename to", path, &e))?;
            if ctx.json {
                print_json(&json!({"rows": count, "output": path.display().to_string()}))?;
            } else {
                crate::output::note!("wrote {count} rows to {}", path.display());
            }
        }
        None => {
            let terminal = std::io::stdout().is_terminal();
            let out = std::io::stdout().lock();
            write_report(stream, out, &columns, format, None, terminal).await?;
        }
    }
    Ok(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_are_found_under_their_camel_case_members() {
        let row = json!({
            "campaign": {"id": "1", "name": "a, \"b\""},
            "adGroupCriterion": {"keyword": {"text": "shoes"}},
            "metrics": {"costMicros": "1200", "ctr": 0.5},
            "customColumns": [{"int64Value": "7"}, {"stringValue": "x"}],
        });
        let columns: Vec<String> = [
            "campaign.id",
            "campaign.name",
            "ad_group_criterion.keyword.text",
            "metrics.cost_micros",
            "metrics.ctr",
            "metrics.clicks",
            "custom_columns.id[3]",
            "custom_columns.id[4]",
        ]
        .map(str::to_owned)
        .to_vec();
        let cells: Vec<String> = paths(&columns)
            .iter()
            .map(|p| cell(value(&row, p), false))
            .collect();
        assert_eq!(
            cells,
            ["1", "a, \"b\"", "shoes", "1200", "0.5", "", "7", "x"]
        );
    }

    #[tokio::test]
    async fn each_format_writes_the_selected_columns() {
        let rows = || {
            futures::stream::iter(vec![
                Ok(json!({"campaign": {"id": "1", "name": "a"}, "metrics": {"clicks": "10"}})),
                Ok(json!({"campaign": {"id": "22", "name": "b,c"}})),
            ])
        };
        let columns: Vec<String> = ["campaign.id", "campaign.name", "metrics.clicks"]
            .map(str::to_owned)
            .to_vec();
        let mut csv = Vec::new();
        assert_eq!(
            write_report(rows(), &mut csv, &columns, ReportFormat::Csv, None, false)
                .await
                .unwrap(),
            2
        );
        assert_eq!(
            String::from_utf8(csv).unwrap(),
            "campaign.id,campaign.name,metrics.clicks\n1,a,10\n22,\"b,c\",\n"
        );
        let mut jsonl = Vec::new();
        write_report(
            rows(),
            &mut jsonl,
            &columns,
            ReportFormat::Jsonl,
            None,
            false,
        )
        .await
        .unwrap();
        assert_eq!(
            String::from_utf8(jsonl).unwrap(),
            "{\"campaign.id\":\"1\",\"campaign.name\":\"a\",\"metrics.clicks\":\"10\"}\n\
             {\"campaign.id\":\"22\",\"campaign.name\":\"b,c\",\"metrics.clicks\":null}\n"
        );
        // Keys in the SELECT's order, not by name.
        let columns: Vec<String> = ["metrics.clicks", "campaign.name", "campaign.id"]
            .map(str::to_owned)
            .to_vec();
        let mut jsonl = Vec::new();
        write_report(
            rows(),
            &mut jsonl,
            &columns,
            ReportFormat::Jsonl,
            None,
            true,
        )
        .await
        .unwrap();
        assert_eq!(
            String::from_utf8(jsonl).unwrap(),
            "{\"metrics.clicks\":\"10\",\"campaign.name\":\"a\",\"campaign.id\":\"1\"}\n\
             {\"metrics.clicks\":null,\"campaign.name\":\"b,c\",\"campaign.id\":\"22\"}\n"
        );
        let columns: Vec<String> = ["campaign.id", "campaign.name", "metrics.clicks"]
            .map(str::to_owned)
            .to_vec();
        let mut table = Vec::new();
        write_report(
            rows(),
            &mut table,
            &columns,
            ReportFormat::Table,
            None,
            false,
        )
        .await
        .unwrap();
        assert_eq!(
            String::from_utf8(table).unwrap(),
            "campaign.id  campaign.name  metrics.clicks\n1            a              10\n22           b,c\n"
        );
    }

    #[tokio::test]
    async fn the_servers_text_reaches_a_terminal_escaped_and_a_file_as_it_is() {
        let name = "\u{1b}]0;pwned\u{7}\u{1b}[2J\u{9b}31m";
        let shown = "\\u{1b}]0;pwned\\u{7}\\u{1b}[2J\\u{9b}31m";
        let rows = &|| futures::stream::iter(vec![Ok(json!({"campaign": {"name": name}}))]);
        let columns = &["campaign.name".to_owned()];
        let write = |format, terminal| async move {
            let mut out = Vec::new();
            write_report(rows(), &mut out, columns, format, None, terminal)
                .await
                .unwrap();
            String::from_utf8(out).unwrap()
        };
        let table = write(ReportFormat::Table, false).await;
        assert_eq!(table, format!("campaign.name\n{shown}\n"));
        let csv = write(ReportFormat::Csv, true).await;
        assert_eq!(csv, format!("campaign.name\n{shown}\n"));
        let jsonl = write(ReportFormat::Jsonl, true).await;
        let value: Value = serde_json::from_str(jsonl.trim_end()).unwrap();
        assert_eq!(value["campaign.name"], shown);
        // Not a terminal: the data as it is.
        let csv = write(ReportFormat::Csv, false).await;
        assert_eq!(csv, format!("campaign.name\n{name}\n"));
    }
}

//! Reading an upload file one row at a time, never the whole file.
//!
//! The file is read as bytes, line by line, with at most [`MAX_ROW_BYTES`]
//! kept per row. What is wrong with one row is that row's rejection, with its
//! line number, and the rows after it are still read:
//!
//! - a row that is not valid UTF-8 (the row, not the file);
//! - a CSV row with an unclosed quote: a field opened with `"` and not closed
//!   before the end of the file or within [`MAX_ROW_BYTES`]; the lines after
//!   its first are read again as rows of their own;
//! - a CSV row with another number of fields than the header;
//! - a JSON line that is not JSON, or not an object;
//! - a row longer than [`MAX_ROW_BYTES`].
//!
//! What makes every row unreadable refuses the file once, before any row:
//! a UTF-16 file (a UTF-16 byte-order mark, or NUL bytes in its first block),
//! and a CSV header that is not UTF-8 or names an unknown field. A UTF-8
//! byte-order mark is skipped.
//!
//! Control characters and over-long ids are the SDK's check (it refuses
//! them per conversion before sending); the rows here only need to be read.

use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};

use crate::cli::InputFormat;
use crate::error::{AppError, AppResult, io_error};
use crate::records::{self, InputRow, Raw};

/// The most bytes a row may have (a CSV record with its quoted line breaks,
/// or a JSON line). A conversion is a few hundred bytes; 1 MiB leaves room for
/// long custom dimensions and keeps one broken row from holding the file.
pub const MAX_ROW_BYTES: usize = 1 << 20;

/// Bytes looked at to recognise UTF-16 (NUL bytes) and the format.
const SNIFF_BYTES: usize = 64 * 1024;

/// The rows of an upload file, read as they are needed.
pub struct Input<R> {
    lines: Lines<R>,
    format: InputFormat,
    headers: Vec<String>,
    path: PathBuf,
}

impl Input<BufReader<File>> {
    /// Opens `path`; the format comes from `format`, the file name, or the
    /// first character. Refuses a UTF-16 file and a bad CSV header.
    pub fn open(path: &Path, format: Option<InputFormat>) -> AppResult<Self> {
        let file = File::open(path).map_err(|e| io_error("cannot read", path, &e))?;
        Self::new(BufReader::with_capacity(SNIFF_BYTES, file), format, path)
    }
}

impl<R: BufRead> Input<R> {
    /// Reads from `reader`; `path` names the file in messages and its
    /// extension picks the format when `format` is `None`.
    pub fn new(mut reader: R, format: Option<InputFormat>, path: &Path) -> AppResult<Self> {
        let head = reader
            .fill_buf()
            .map_err(|e| io_error("cannot read", path, &e))?;
        if let Some(problem) = encoding_problem(head) {
            return Err(AppError::refused(format!("{} {problem}", path.display())).hint(
                "save the file as UTF-8 (e.g. `iconv -f UTF-16 -t UTF-8 in.csv > out.csv`) and upload that",
            ));
        }
        let bom = if head.starts_with(b"\xEF\xBB\xBF") {
            3
        } else {
            0
        };
        let starts_with_brace = head[bom..]
            .iter()
            .find(|b| !b.is_ascii_whitespace())
            .is_some_and(|&b| b == b'{');
        reader.consume(bom);
        let ext = path
            .extension()
            .and_then(|e| e.to_str())
            .map(str::to_ascii_lowercase);
        let format = format.unwrap_or(match ext.as_deref() {
            Some("jsonl" | "ndjson" | "json") => InputFormat::Jsonl,
            Some("csv") => InputFormat::Csv,
            _ if starts_with_brace => InputFormat::Jsonl,
            _ => InputFormat::Csv,
        });
        let mut input = Self {
            lines: Lines::new(reader),
            format,
            headers: Vec::new(),
            path: path.to_owned(),
        };
        if format == InputFormat::Csv {
            input.read_header()?;
        }
        Ok(input)
    }

    /// The format the rows are read as.
    pub fn format(&self) -> InputFormat {
        self.format
    }

    /// Bytes of the file read so far, for a progress bar.
    pub fn bytes_read(&self) -> u64 {
        self.lines.bytes
    }

    /// The CSV header's column names (empty for JSON lines).
    pub fn headers(&self) -> &[String] {
        &self.headers
    }

    fn header_error(&self, problem: impl std::fmt::Display) -> AppError {
        AppError::refused(format!("{}: {problem}", self.path.display())).hint(
            "the first line must name Conversion JSON fields, e.g. conversionId,conversionTimestamp,segmentationType,segmentationId,agencyId,advertiserId",
        )
    }

    fn read_header(&mut self) -> AppResult<()> {
        let record = loop {
            match self.next_record()? {
                None => return Err(self.header_error("the file is empty: no CSV header")),
                Some(r) if r.is_blank() => {}
                Some(r) => break r,
            }
        };
        if let Some(problem) = record.problem {
            return Err(self.header_error(format!("the CSV header {problem}")));
        }
        let fields = parse_csv(&record.bytes).map_err(|e| self.header_error(e))?;
        let mut names = Vec::with_capacity(fields.len());
        for field in fields.iter() {
            let name = std::str::from_utf8(field)
                .map_err(|_| self.header_error("the CSV header is not valid UTF-8"))?;
            names.push(name.to_owned());
        }
        records::check_csv_header(&mut names).map_err(|e| self.header_error(e))?;
        self.headers = names;
        Ok(())
    }

    /// The next CSV record: one line, or several while a quoted field is
    /// open.
    fn next_record(&mut self) -> AppResult<Option<Record>> {
        let Some(first) = self.lines.next().map_err(|e| self.read_error(&e))? else {
            return Ok(None);
        };
        if first.overflow {
            return Ok(Some(Record::refused(first.number, too_long())));
        }
        let mut state = Quote::scan(Quote::FieldStart, &first.bytes);
        if state != Quote::Open {
            return Ok(Some(Record {
                line: first.number,
                bytes: first.bytes,
                problem: None,
                rest: Vec::new(),
            }));
        }
        let number = first.number;
        let mut bytes = first.bytes.clone();
        let mut taken = vec![first];
        loop {
            let next = self.lines.next().map_err(|e| self.read_error(&e))?;
            let cause = match next {
                None => {
                    "has an unclosed quote: a field opened with \" is not closed before the end of the file"
                }
                Some(line)
                    if line.overflow || bytes.len() + 1 + line.bytes.len() > MAX_ROW_BYTES =>
                {
                    self.lines.push_front(line);
                    "has an unclosed quote: a field opened with \" is not closed within 1 MiB"
                }
                Some(line) => {
                    bytes.push(b'\n');
                    bytes.extend_from_slice(&line.bytes);
                    state = Quote::scan(state, &line.bytes);
                    taken.push(line);
                    if state != Quote::Open {
                        taken.remove(0);
                        return Ok(Some(Record {
                            line: number,
                            bytes,
                            problem: None,
                            rest: taken,
                        }));
                    }
                    continue;
                }
            };
            // The lines after the first are read again as rows of their own.
            self.lines.put_back(taken.drain(1..));
            return Ok(Some(Record::refused(number, cause)));
        }
    }

    fn read_error(&self, e: &std::io::Error) -> AppError {
        io_error("cannot read", &self.path, e)
    }

    /// The next row, or `None` at the end of the file. An error is an I/O
    /// error: a bad row is an [`InputRow`] with its problem.
    pub fn next_row(&mut self) -> AppResult<Option<InputRow>> {
        match self.format {
            InputFormat::Csv => loop {
                let Some(record) = self.next_record()? else {
                    return Ok(None);
                };
                if record.is_blank() {
                    continue;
                }
                return Ok(Some(self.csv_row(record)));
            },
            InputFormat::Jsonl => loop {
                let Some(line) = self.lines.next().map_err(|e| self.read_error(&e))? else {
                    return Ok(None);
                };
                if line.overflow {
                    return Ok(Some(InputRow::refused(line.number, too_long())));
                }
                let text = match std::str::from_utf8(&line.bytes) {
                    Ok(text) => text.trim(),
                    Err(e) => {
                        return Ok(Some(InputRow::refused(
                            line.number,
                            format!(
                                "is not valid UTF-8 (byte {} of the line)",
                                e.valid_up_to() + 1
                            ),
                        )));
                    }
                };
                if text.is_empty() {
                    continue;
                }
                let mut row = records::row_from_json(line.number, text);
                row.raw = Raw::Json(text.to_owned());
                return Ok(Some(row));
            },
        }
    }

    fn csv_row(&mut self, mut record: Record) -> InputRow {
        if let Some(problem) = record.problem {
            return InputRow::refused(record.line, problem);
        }
        let fields = match parse_csv(&record.bytes) {
            Ok(fields) => fields,
            Err(e) => return InputRow::refused(record.line, e),
        };
        if fields.len() != self.headers.len() && !record.rest.is_empty() {
            // A quote opened by mistake ran into the next lines: refuse the
            // first line alone and read the others again as rows.
            let last = record.rest.last().map_or(record.line, |l| l.number);
            self.lines.put_back(record.rest.drain(..));
            return InputRow::refused(
                record.line,
                format!(
                    "has an unclosed quote: the quoted field runs on to line {last} and the row then has {} fields, the header {}",
                    fields.len(),
                    self.headers.len()
                ),
            );
        }
        if fields.len() != self.headers.len() {
            return InputRow::refused(
                record.line,
                format!(
                    "has {} fields, the header has {}",
                    fields.len(),
                    self.headers.len()
                ),
            );
        }
        let mut cells = Vec::with_capacity(fields.len());
        for (name, field) in self.headers.iter().zip(fields.iter()) {
            match std::str::from_utf8(field) {
                Ok(cell) => cells.push(cell),
                Err(e) => {
                    return InputRow::refused(
                        record.line,
                        format!(
                            "is not valid UTF-8 (the {name} cell, byte {})",
                            e.valid_up_to() + 1
                        ),
                    );
                }
            }
        }
        let mut row = records::row_from_cells(record.line, &self.headers, cells.iter().copied());
        row.raw = Raw::Cells(cells.into_iter().map(str::to_owned).collect());
        row
    }
}

impl<R: BufRead> Iterator for Input<R> {
    type Item = AppResult<InputRow>;

    fn next(&mut self) -> Option<Self::Item> {
        self.next_row().transpose()
    }
}

fn too_long() -> String {
    format!(
        "is longer than {} MiB: a row may have at most {MAX_ROW_BYTES} bytes",
        MAX_ROW_BYTES >> 20
    )
}

/// Why the first block of a file shows it is not UTF-8 text, if it does.
fn encoding_problem(head: &[u8]) -> Option<String> {
    if head.starts_with(b"\xFF\xFE") || head.starts_with(b"\xFE\xFF") {
        return Some(
            "is UTF-16 (it starts with a UTF-16 byte-order mark); apictl reads UTF-8 only"
                .to_owned(),
        );
    }
    let window = &head[..head.len().min(SNIFF_BYTES)];
    window.iter().position(|&b| b == 0).map(|at| {
        format!(
            "has a NUL byte at offset {at}: it looks like UTF-16 without a byte-order mark (or not text); apictl reads UTF-8 only"
        )
    })
}

/// One CSV record's fields, through the csv crate.
fn parse_csv(bytes: &[u8]) -> Result<csv::ByteRecord, String> {
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .buffer_capacity(bytes.len().clamp(64, 8 * 1024))
        .from_reader(bytes);
    let mut record = csv::ByteRecord::new();
    match reader.read_byte_record(&mut record) {
        Ok(_) => Ok(record),
        Err(e) => Err(format!("cannot be read as CSV: {e}")),
    }
}

/// A CSV record: the bytes of its lines, joined by `\n`.
struct Record {
    line: u64,
    bytes: Vec<u8>,
    problem: Option<String>,
    /// The lines after the first of a record with a quoted line break.
    rest: Vec<Line>,
}

impl Record {
    fn refused(line: u64, problem: impl Into<String>) -> Self {
        Self {
            line,
            bytes: Vec::new(),
            problem: Some(problem.into()),
            rest: Vec::new(),
        }
    }

    /// An empty line (the csv crate skips them too).
    fn is_blank(&self) -> bool {
        self.problem.is_none() && self.bytes.iter().all(|&b| b == b'\r')
    }
}

/// Where a CSV scan is, as the csv crate reads quotes: a `"` opens a quoted
/// field only at the start of a field, `""` inside one is a quote.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Quote {
    FieldStart,
    Unquoted,
    Open,
    /// A `"` inside a quoted field: closed, unless another `"` follows.
    MaybeClosed,
}

impl Quote {
    fn scan(mut state: Quote, line: &[u8]) -> Quote {
        for &b in line {
            state = match (state, b) {
                (Quote::FieldStart, b'"') => Quote::Open,
                (Quote::FieldStart | Quote::Unquoted | Quote::MaybeClosed, b',') => {
                    Quote::FieldStart
                }
                (Quote::Open, b'"') => Quote::MaybeClosed,
                (Quote::Open, _) => Quote::Open,
                (Quote::MaybeClosed, b'"') => Quote::Open,
                _ => Quote::Unquoted,
            };
        }
        // A line break ends the record unless a quoted field is open.
        state
    }
}

/// A line of the file without its `\n`, at most [`MAX_ROW_BYTES`] of it.
struct Line {
    number: u64,
    bytes: Vec<u8>,
    /// The line was longer than [`MAX_ROW_BYTES`]; the rest was skipped.
    overflow: bool,
}

/// Lines read with a bounded buffer, and lines put back to read again.
struct Lines<R> {
    inner: R,
    read: u64,
    /// Bytes taken from `inner`.
    bytes: u64,
    again: std::collections::VecDeque<Line>,
}

impl<R: BufRead> Lines<R> {
    fn new(inner: R) -> Self {
        Self {
            inner,
            read: 0,
            bytes: 0,
            again: std::collections::VecDeque::new(),
        }
    }

    /// Puts a line back: it is the next one read.
    fn push_front(&mut self, line: Line) {
        self.again.push_front(line);
    }

    /// Puts lines back, in their order, before any line put back earlier.
    fn put_back(&mut self, lines: impl DoubleEndedIterator<Item = Line>) {
        for line in lines.rev() {
            self.again.push_front(line);
        }
    }

    fn next(&mut self) -> std::io::Result<Option<Line>> {
        if let Some(line) = self.again.pop_front() {
            return Ok(Some(line));
        }
        let mut bytes = Vec::new();
        let mut overflow = false;
        let mut any = false;
        loop {
            let buf = match self.inner.fill_buf() {
                Ok(buf) => buf,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            if buf.is_empty() {
                break;
            }
            any = true;
            let (part, used, end) = match buf.iter().position(|&b| b == b'\n') {
                Some(i) => (&buf[..i], i + 1, true),
                None => (buf, buf.len(), false),
            };
            let room = MAX_ROW_BYTES.saturating_sub(bytes.len());
            if part.len() > room {
                overflow = true;
            }
            bytes.extend_from_slice(&part[..part.len().min(room)]);
            self.inner.consume(used);
            self.bytes += used as u64;
            if end {
                break;
            }
        }
        if !any {
            return Ok(None);
        }
        self.read += 1;
        if overflow {
            bytes = Vec::new();
        }
        Ok(Some(Line {
            number: self.read,
            bytes,
            overflow,
        }))
    }
}

#[cfg(test)]
mod tests {
    use chrono::DateTime;
    use sa360_video_sdk::search_ads::{Conversion, Micros};

    use super::*;

    fn read(bytes: &[u8], name: &str) -> AppResult<Vec<InputRow>> {
        Input::new(bytes, None, Path::new(name))?.collect()
    }

    fn problems(rows: &[InputRow]) -> Vec<(u64, String)> {
        rows.iter()
            .filter_map(|r| r.parsed.as_ref().err().map(|e| (r.line, e.clone())))
            .collect()
    }

    // Attributed through a click (SA-17), so no agency or advertiser column is needed.
    const CSV: &str = "conversionId,conversionTimestamp,segmentationType,segmentationId,revenueMicros,customDimension,clickId\n\
        a-1,1717200000000,FLOODLIGHT,551234,19990000,\"[{\"\"name\"\":\"\"Store Region\"\",\"\"value\"\":\"\"North\"\"}]\",c\n\
        a-2,2024-06-01T10:00:00Z,FLOODLIGHT,,,,c\n\
        a-3,yesterday,FLOODLIGHT,,,,c\n\
        a-5,1717200000000,FLOODLIGHT,12x,,,c\n";

    #[test]
    fn csv_rows_are_read_one_by_one() {
        let rows = read(CSV.as_bytes(), "in.csv").unwrap();
        assert_eq!(rows.len(), 4);
        assert_eq!(rows[0].line, 2);
        let first = rows[0].parsed.as_ref().unwrap();
        assert_eq!(first.revenue_micros, Some(Micros::new(19_990_000)));
        assert_eq!(first.custom_dimensions[0].value, "North");
        assert_eq!(
            rows[1].parsed.as_ref().unwrap().conversion_timestamp,
            DateTime::from_timestamp_millis(1_717_236_000_000)
        );
        let p = problems(&rows);
        assert_eq!(p.len(), 2, "{p:?}");
        assert_eq!(p[0].0, 4);
        assert!(p[0].1.contains("conversionTimestamp"), "{p:?}");
        assert!(p[1].1.contains("segmentationId"), "{p:?}");
    }

    #[test]
    fn an_invalid_utf8_row_is_refused_alone_with_its_line() {
        let mut bytes =
            b"conversionId,conversionTimestamp\nok-1,1\nbad-\xFF\xFE,2\nok-2,3\n".to_vec();
        bytes.extend_from_slice(b"{\"x\":1}\n");
        let rows = read(&bytes, "in.csv").unwrap();
        assert_eq!(rows.len(), 4);
        assert!(rows[0].parsed.is_ok());
        assert_eq!(rows[1].line, 3);
        let e = rows[1].parsed.as_ref().unwrap_err();
        assert!(
            e.contains("not valid UTF-8") && e.contains("conversionId"),
            "{e}"
        );
        assert!(rows[2].parsed.is_ok());
        assert_eq!(rows[2].line, 4);

        let jsonl = b"{\"conversionId\":\"j-1\"}\n{\"conversionId\":\"\xC3\x28\"}\n{\"conversionId\":\"j-3\"}\n";
        let rows = read(jsonl, "in.jsonl").unwrap();
        assert_eq!(rows.len(), 3);
        assert_eq!(problems(&rows).len(), 1);
        assert_eq!(problems(&rows)[0].0, 2);
        assert!(problems(&rows)[0].1.contains("UTF-8"));
        assert_eq!(rows[2].conversion_id.as_deref(), Some("j-3"));
    }

    #[test]
    fn an_unclosed_quote_refuses_its_row_and_the_rest_still_goes() {
        let text = "conversionId,conversionTimestamp\nq-1,1\n\"q-2,2\nq-3,3\nq-4,4\n";
        let rows = read(text.as_bytes(), "in.csv").unwrap();
        let ids: Vec<_> = rows
            .iter()
            .map(|r| (r.line, r.conversion_id.clone()))
            .collect();
        assert_eq!(
            ids,
            vec![
                (2, Some("q-1".into())),
                (3, None),
                (4, Some("q-3".into())),
                (5, Some("q-4".into()))
            ]
        );
        assert!(
            problems(&rows)[0].1.contains("unclosed quote"),
            "{:?}",
            problems(&rows)
        );
        // A quote that closes lines later with the wrong number of fields.
        let text = "conversionId,conversionTimestamp\n\"q-1,1\nq-2,2\nq-3\",3,x\nq-4,4\n";
        let rows = read(text.as_bytes(), "in.csv").unwrap();
        let p = problems(&rows);
        assert_eq!(p[0].0, 2);
        assert!(
            p[0].1.contains("unclosed quote") && p[0].1.contains("line 4"),
            "{p:?}"
        );
        let ok: Vec<_> = rows
            .iter()
            .filter(|r| r.parsed.is_ok())
            .map(|r| r.line)
            .collect();
        assert_eq!(ok, vec![3, 5]);
        // A quoted line break that closes properly is one row.
        let text = "conversionId,conversionTimestamp,clickId\n\"m-1\",1,\"two\nlines\"\nm-2,2,c\n";
        let rows = read(text.as_bytes(), "in.csv").unwrap();
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[1].line, 4);
        assert_eq!(
            rows[0].parsed.as_ref().unwrap().click_id.as_deref(),
            Some("two\nlines")
        );
    }

    #[test]
    fn utf16_is_refused_once_and_a_utf8_bom_is_skipped() {
        let utf16: Vec<u8> = "conversionId\nx\n"
            .encode_utf16()
            .flat_map(u16::to_le_bytes)
            .collect();
        let mut with_bom = vec![0xFF, 0xFE];
        with_bom.extend_from_slice(&utf16);
        for bytes in [&with_bom, &utf16] {
            let e = read(bytes, "in.csv").expect_err("refused");
            assert!(e.message.contains("UTF-16"), "{e}");
            assert!(e.hint.as_deref().unwrap().contains("UTF-8"));
        }
        let rows = read(
            b"\xEF\xBB\xBFconversionId,conversionTimestamp\nb-1,1\n",
            "in.csv",
        )
        .unwrap();
        assert_eq!(rows[0].conversion_id.as_deref(), Some("b-1"));
    }

    #[test]
    fn json_lines_accept_numbers_and_report_bad_lines() {
        let text = "{\"conversionId\":\"j-1\",\"conversionTimestamp\":1717200000000,\"segmentationType\":\"FLOODLIGHT\",\"agencyId\":20700000000000125,\"customMetric\":[{\"name\":\"Basket Size\",\"value\":3.5}]}\n\n[1]\n{\"conversionId\":\n";
        let rows = read(text.as_bytes(), "in.jsonl").unwrap();
        assert_eq!(rows.len(), 3);
        let p = problems(&rows);
        assert_eq!(p[0].0, 3);
        assert!(p[0].1.contains("not a JSON object"));
        assert_eq!(p[1].0, 4);
        assert!(p[1].1.contains("not valid JSON"));
        let c = rows[0].parsed.as_ref().unwrap();
        let json = serde_json::to_value(c).unwrap();
        assert_eq!(json["agencyId"], "20700000000000125");
        let again = read(json.to_string().as_bytes(), "x.jsonl").unwrap();
        assert_eq!(again[0].parsed.as_ref().unwrap(), c);
        let cells = records::to_csv_cells(c).unwrap();
        assert_eq!(cells.len(), Conversion::FIELDS.len());
    }

    #[test]
    fn an_overlong_row_is_refused_without_being_held() {
        let mut text = b"conversionId,conversionTimestamp\n".to_vec();
        text.extend(std::iter::repeat_n(b'x', MAX_ROW_BYTES + 10));
        text.extend_from_slice(b",1\nok,2\n");
        let rows = read(&text, "in.csv").unwrap();
        assert_eq!(rows.len(), 2);
        assert!(problems(&rows)[0].1.contains("longer than 1 MiB"));
        assert_eq!(rows[1].line, 3);
    }

    #[test]
    fn unknown_columns_refuse_the_file() {
        let e = read(b"conversionId,colour\nx,red\n", "in.csv")
            .err()
            .unwrap();
        assert!(e.message.contains("colour"));
        let e = read(b"", "in.csv").unwrap_err();
        assert!(e.message.contains("empty"));
        // A report's own columns pass only all three together.
        let e = read(b"line,conversionId\n2,x\n", "in.csv").err().unwrap();
        assert!(e.message.contains("\"line\""), "{}", e.message);
    }

    #[test]
    fn a_rejected_rows_report_reads_back_without_its_added_columns() {
        let rows = read(
            b"line,code,reason,conversionId,conversionTimestamp,clickId\n\
              7,local,\"conversionTimestamp, missing\",a-1,1717200000000,gclid\n",
            "in.rejected.csv",
        )
        .unwrap();
        let c = rows[0].parsed.as_ref().unwrap();
        assert_eq!(c.conversion_id.as_deref(), Some("a-1"));
        assert_eq!(rows[0].line, 2);
        assert_eq!(
            rows[0].raw,
            Raw::Cells(
                [
                    "7",
                    "local",
                    "conversionTimestamp, missing",
                    "a-1",
                    "1717200000000",
                    "gclid"
                ]
                .map(String::from)
                .to_vec()
            )
        );
    }
}

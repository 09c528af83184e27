//! Conversions as rows, read from CSV or JSON lines and written as either.
//!
//! A row is the facade's JSON form of a conversion (`Conversion` implements
//! `Serialize` and `Deserialize` as the API's Conversion resource): the field
//! names of [`Conversion::FIELDS`], ids and micros as digits, timestamps as
//! epoch milliseconds, so a listing can be uploaded again. On input, ids and
//! numbers may be JSON strings or numbers (the facade reads both) and
//! timestamps may also be RFC 3339, which is turned into epoch milliseconds
//! here. A CSV header names the fields and a row is the JSON object of its
//! non-empty cells; the `customDimension` and `customMetric` cells hold JSON
//! text (arrays of `{"name", "value"}`).

use std::io::Read;

use chrono::DateTime;
use facade::search_ads::{Conversion, SearchAds};
use serde_json::{Map, Value};

/// CSV columns whose cells are JSON text rather than a value.
const JSON_COLUMNS: [&str; 2] = ["customDimension", "customMetric"];

/// Fields that take RFC 3339 as well as epoch milliseconds on input.
const TIMESTAMPS: [&str; 2] = ["conversionTimestamp", "conversionModifiedTimestamp"];

/// One input row: where it starts in the file and what it holds.
#[derive(Debug)]
pub struct InputRow {
    /// The 1-based line of the file where the row starts (a CSV header is line 1).
    pub line: u64,
    /// The conversion, or why the row cannot be one.
    pub parsed: Result<Conversion, String>,
    /// The row's `conversionId` as written, when it has one (for reports).
    pub conversion_id: Option<String>,
}

/// Reads CSV rows. A header that names an unknown field is an error for the
/// whole file (every row would lose that column).
pub fn read_csv(input: impl Read) -> Result<Vec<InputRow>, String> {
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(true)
        .flexible(false)
        .from_reader(input);
    let headers: Vec<String> = reader
        .headers()
        .map_err(|e| format!("cannot read the CSV header: {e}"))?
        .iter()
        .map(|h| h.trim().trim_start_matches('\u{feff}').to_owned())
        .collect();
    for h in &headers {
        if !Conversion::FIELDS.contains(&h.as_str()) {
            return Err(format!(
                "the CSV header names an unknown field {h:?}; the columns are Conversion JSON field names such as conversionId, conversionTimestamp, segmentationType"
            ));
        }
    }
    if !headers.iter().any(|h| h == "conversionId") {
        return Err("the CSV header has no conversionId column".to_owned());
    }
    let mut rows = Vec::new();
    let mut record = csv::StringRecord::new();
    loop {
        let line = reader.position().line();
        match reader.read_record(&mut record) {
            Ok(false) => break,
            Ok(true) => {
                let line = record.position().map_or(line, |p| p.line());
                let mut object = Map::new();
                let mut problem = None;
                for (name, cell) in headers.iter().zip(record.iter()) {
                    let cell = cell.trim();
                    if cell.is_empty() {
                        continue;
                    }
                    let value = if JSON_COLUMNS.contains(&name.as_str()) {
                        match serde_json::from_str(cell) {
                            Ok(value) => value,
                            Err(e) => {
                                problem.get_or_insert_with(|| {
                                    format!(
                                        "{name} is not JSON ({e}): write an array of {{\"name\", \"value\"}} objects"
                                    )
                                });
                                continue;
                            }
                        }
                    } else {
                        Value::String(cell.to_owned())
                    };
                    object.insert(name.clone(), value);
                }
                rows.push(row_from_object(line, object, problem));
            }
            Err(e) => {
                let line = e.position().map_or(line, |p| p.line());
                match e.kind() {
                    // A row with the wrong number of fields is that row's problem.
                    csv::ErrorKind::UnequalLengths { len, .. } => rows.push(InputRow {
                        line,
                        parsed: Err(format!(
                            "has {len} fields, the header has {}",
                            headers.len()
                        )),
                        conversion_id: None,
                    }),
                    _ => return Err(format!("cannot read the CSV at line {line}: {e}")),
                }
            }
        }
    }
    Ok(rows)
}

/// Reads JSON lines: one Conversion object per line; blank lines are skipped.
pub fn read_jsonl(text: &str) -> Vec<InputRow> {
    let mut rows = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line = i as u64 + 1;
        let raw = raw.trim();
        if raw.is_empty() {
            continue;
        }
        let problem = match serde_json::from_str::<Value>(raw) {
            Ok(Value::Object(object)) => {
                rows.push(row_from_object(line, object, None));
                continue;
            }
            Ok(_) => "is not a JSON object".to_owned(),
            Err(e) => format!("is not valid JSON ({e})"),
        };
        rows.push(InputRow {
            line,
            parsed: Err(problem),
            conversion_id: None,
        });
    }
    rows
}

fn row_from_object(line: u64, object: Map<String, Value>, problem: Option<String>) -> InputRow {
    let conversion_id = match object.get("conversionId") {
        Some(Value::String(s)) => Some(s.clone()),
        Some(Value::Number(n)) => Some(n.to_string()),
        _ => None,
    };
    let parsed = match problem {
        Some(problem) => Err(problem),
        None => conversion_from_object(object),
    };
    InputRow {
        line,
        parsed,
        conversion_id,
    }
}

/// The facade reads the object; RFC 3339 timestamps become epoch milliseconds first.
fn conversion_from_object(mut object: Map<String, Value>) -> Result<Conversion, String> {
    for name in TIMESTAMPS {
        let digits = |t: &str| !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit());
        if let Some(Value::String(text)) = object.get_mut(name)
            && !digits(text)
        {
            let millis = DateTime::parse_from_rfc3339(text).map_err(|_| {
                format!(
                    "{name} {text:?} is not a time: use epoch milliseconds or RFC 3339 (2024-06-01T10:00:00Z)"
                )
            })?;
            *text = millis.timestamp_millis().to_string();
        }
    }
    serde_json::from_value(Value::Object(object)).map_err(|e| e.to_string())
}

/// What an upload sends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WriteMode {
    /// `conversion.insert`.
    Insert,
    /// `conversion.update`.
    Update,
}

/// A row refused before sending.
#[derive(Debug, Clone)]
pub struct LocalRejection {
    /// Index of the row in the input.
    pub row: usize,
    /// Why.
    pub reason: String,
}

/// Asks the facade which parsed rows an insert or update would refuse (what
/// the API requires per method, SA-7, and no conversionId twice) and returns
/// the indices of the rows to send and the local rejections, in row order.
/// Checking per row keeps one bad row from refusing the whole upload.
pub fn check_rows(rows: &[InputRow], mode: WriteMode) -> (Vec<usize>, Vec<LocalRejection>) {
    let mut rejected = Vec::new();
    let mut parsed_rows = Vec::new();
    let mut conversions = Vec::new();
    for (i, row) in rows.iter().enumerate() {
        match &row.parsed {
            Ok(c) => {
                parsed_rows.push(i);
                conversions.push(c);
            }
            Err(reason) => rejected.push(LocalRejection {
                row: i,
                reason: reason.clone(),
            }),
        }
    }
    let problems = match mode {
        WriteMode::Insert => SearchAds::insert_problems(conversions.iter().copied()),
        WriteMode::Update => SearchAds::update_problems(conversions.iter().copied()),
    };
    let mut refused = vec![false; conversions.len()];
    for problem in problems {
        let facade::search_ads::Error::Validation {
            field,
            index: Some(k),
            reason,
        } = problem
        else {
            continue;
        };
        let Some(&row) = parsed_rows.get(k) else {
            continue;
        };
        refused[k] = true;
        // The facade names the earlier conversion by its index among the
        // parsed rows; a person reading a file wants its line.
        let earlier = (field == "conversionId")
            .then(|| conversions[k].conversion_id.as_deref().map(str::trim))
            .flatten()
            .and_then(|id| {
                conversions[..k]
                    .iter()
                    .position(|c| {
                        c.conversion_id.as_deref().map(str::trim) == Some(id)
                            && c.conversion_timestamp == conversions[k].conversion_timestamp
                    })
                    .map(|first| (id, rows[parsed_rows[first]].line))
            });
        let reason = match earlier {
            Some((id, line)) => format!("conversionId {id:?} repeats the row at line {line}"),
            None => format!("{field} {reason}"),
        };
        rejected.push(LocalRejection { row, reason });
    }
    rejected.sort_by_key(|r| r.row);
    let send = parsed_rows
        .iter()
        .zip(&refused)
        .filter(|&(_, refused)| !refused)
        .map(|(&row, _)| row)
        .collect();
    (send, rejected)
}

/// A conversion as CSV cells in [`Conversion::FIELDS`] order: the values of
/// its JSON form, custom dimensions and metrics as JSON text, empty when absent.
pub fn to_csv_cells(c: &Conversion) -> Result<Vec<String>, serde_json::Error> {
    let object = match serde_json::to_value(c)? {
        Value::Object(object) => object,
        _ => Map::new(),
    };
    Ok(Conversion::FIELDS
        .iter()
        .map(|f| match object.get(*f) {
            None => String::new(),
            Some(Value::String(s)) => s.clone(),
            Some(other) => other.to_string(),
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use facade::search_ads::Micros;

    use super::*;

    // Attributed through a click (SA-17), so no agency or advertiser column is needed.
    const CSV: &str = "conversionId,conversionTimestamp,segmentationType,segmentationId,revenueMicros,customDimension,clickId\n\
        a-1,1717200000000,FLOODLIGHT,551234,19990000,\"[{\"\"name\"\":\"\"Store Region\"\",\"\"value\"\":\"\"North\"\"}]\",c\n\
        a-2,2024-06-01T10:00:00Z,FLOODLIGHT,,,,c\n\
        a-1,1717200000000,FLOODLIGHT,,,,c\n\
        a-3,yesterday,FLOODLIGHT,,,,c\n\
        a-4,1717200000000,,,,,c\n\
        a-5,1717200000000,FLOODLIGHT,12x,,,c\n";

    #[test]
    fn csv_rows_are_read_and_checked_per_row() {
        let rows = read_csv(CSV.as_bytes()).unwrap();
        assert_eq!(rows.len(), 6);
        assert_eq!(rows[0].line, 2);
        let first = rows[0].parsed.as_ref().unwrap();
        assert_eq!(first.revenue_micros, Some(Micros::new(19_990_000)));
        assert_eq!(first.custom_dimensions[0].value, "North");
        assert_eq!(
            rows[1].parsed.as_ref().unwrap().conversion_timestamp,
            DateTime::from_timestamp_millis(1_717_236_000_000)
        );
        let (send, rejected) = check_rows(&rows, WriteMode::Insert);
        assert_eq!(send, vec![0, 1]);
        let reasons: Vec<_> = rejected
            .iter()
            .map(|r| (r.row, r.reason.as_str()))
            .collect();
        assert_eq!(reasons[0].0, 2);
        assert!(
            reasons[0].1.contains("repeats the row at line 2"),
            "{reasons:?}"
        );
        assert!(reasons[1].1.contains("conversionTimestamp"), "{reasons:?}");
        assert!(reasons[2].1.contains("segmentationType"), "{reasons:?}");
        assert!(
            reasons[3].1.contains("segmentationId \"12x\""),
            "{reasons:?}"
        );
        // An update needs no segmentationType.
        let (send, _) = check_rows(&rows, WriteMode::Update);
        assert_eq!(send, vec![0, 1, 4]);
    }

    #[test]
    fn unknown_csv_columns_refuse_the_file() {
        let e = read_csv("conversionId,colour\nx,red\n".as_bytes()).unwrap_err();
        assert!(e.contains("colour"));
    }

    #[test]
    fn json_lines_accept_numbers_and_round_trip() {
        let text = "{\"conversionId\":\"j-1\",\"conversionTimestamp\":1717200000000,\"segmentationType\":\"FLOODLIGHT\",\"agencyId\":20700000000000125,\"customMetric\":[{\"name\":\"Basket Size\",\"value\":3.5}]}\n\n[1]\n{\"conversionId\":true}\n";
        let rows = read_jsonl(text);
        assert_eq!(rows.len(), 3);
        assert_eq!(rows[1].line, 3);
        assert!(rows[1].parsed.is_err());
        assert!(rows[2].parsed.is_err());
        let c = rows[0].parsed.as_ref().unwrap();
        let json = serde_json::to_value(c).unwrap();
        assert_eq!(json["agencyId"], "20700000000000125");
        assert_eq!(json["conversionTimestamp"], "1717200000000");
        assert_eq!(json["customMetric"][0]["value"], 3.5);
        let again = read_jsonl(&json.to_string());
        assert_eq!(again[0].parsed.as_ref().unwrap(), c);
        let cells = to_csv_cells(c).unwrap();
        assert_eq!(cells.len(), Conversion::FIELDS.len());
        assert_eq!(cells[0], "j-1");
    }
}

//! Conversions as rows, read from CSV or JSON lines and written as either.
//!
//! A row is the SDK's JSON form of a conversion (`Conversion` implements
//! `Serialize` and `Deserialize` as the API's Conversion resource): the field
//! names of [`Conversion::FIELDS`], ids and micros as digits, timestamps as
//! epoch milliseconds, so a listing can be uploaded again. On input, ids and
//! numbers may be JSON strings or numbers (the SDK reads both) and
//! timestamps may also be RFC 3339, which is turned into epoch milliseconds
//! here. A CSV header names the fields and a row is the JSON object of its
//! non-empty cells; the `customDimension` and `customMetric` cells hold JSON
//! text (arrays of `{"name", "value"}`).

use chrono::DateTime;
use sa360_video_sdk::search_ads::Conversion;
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
    /// The row as written, for the rejected-rows report.
    pub raw: Raw,
}

/// A row as the file holds it, so a rejected row can be written back with
/// its own columns and values and uploaded again once fixed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Raw {
    /// Not available (the row could not be split into its cells).
    #[default]
    None,
    /// A CSV row's cells, one per header column.
    Cells(Vec<String>),
    /// A JSON line's text.
    Json(String),
}

/// The columns a rejected-rows report adds before the input's own (CSV), or
/// the member it adds (JSON lines: `_rejected`, an object of the three).
/// Reading a file back, a CSV header that has all three ignores them.
pub const REJECTED_COLUMNS: [&str; 3] = ["line", "code", "reason"];

/// Checks a CSV header: every name is a Conversion JSON field and
/// `conversionId` is there. A header that names an unknown field refuses the
/// whole file (every row would lose that column). A UTF-8 byte-order mark
/// before the first name is dropped.
pub fn check_csv_header(names: &mut [String]) -> Result<(), String> {
    for h in names.iter_mut() {
        *h = h.trim().trim_start_matches('\u{feff}').to_owned();
    }
    // A rejected-rows report read back: its own three columns are ignored.
    let report = REJECTED_COLUMNS
        .iter()
        .all(|c| names.iter().any(|h| h == c));
    for h in names.iter() {
        if report && REJECTED_COLUMNS.contains(&h.as_str()) {
            continue;
        }
        if !Conversion::FIELDS.contains(&h.as_str()) {
            return Err(format!(
                "the CSV header names an unknown field {h:?}; the columns are Conversion JSON field names such as conversionId, conversionTimestamp, segmentationType"
            ));
        }
    }
    if !names.iter().any(|h| h == "conversionId") {
        return Err("the CSV header has no conversionId column".to_owned());
    }
    Ok(())
}

/// One CSV row from its cells (as many as `headers`): the JSON object of its
/// non-empty cells, read by the SDK.
pub fn row_from_cells<'a>(
    line: u64,
    headers: &[String],
    cells: impl IntoIterator<Item = &'a str>,
) -> InputRow {
    let mut object = Map::new();
    let mut problem = None;
    for (name, cell) in headers.iter().zip(cells) {
        let cell = cell.trim();
        // Only a report's own columns pass the header check unknown.
        if cell.is_empty() || !Conversion::FIELDS.contains(&name.as_str()) {
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
    row_from_object(line, object, problem)
}

/// One JSON line (already known to be UTF-8 and not blank): a Conversion object.
pub fn row_from_json(line: u64, text: &str) -> InputRow {
    let problem = match serde_json::from_str::<Value>(text) {
        Ok(Value::Object(object)) => return row_from_object(line, object, None),
        Ok(_) => "is not a JSON object".to_owned(),
        Err(e) => format!("is not valid JSON ({e})"),
    };
    InputRow::refused(line, problem)
}

impl InputRow {
    /// A row that cannot be read, with why.
    pub fn refused(line: u64, problem: impl Into<String>) -> Self {
        Self {
            line,
            parsed: Err(problem.into()),
            conversion_id: None,
            raw: Raw::None,
        }
    }
}

fn row_from_object(line: u64, mut object: Map<String, Value>, problem: Option<String>) -> InputRow {
    // A rejected-rows report read back: the members it added are not the row's.
    object.remove("_rejected");
    object.remove("_text");
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
        raw: Raw::None,
    }
}

/// The SDK reads the object; RFC 3339 timestamps become epoch milliseconds first.
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

//! Query and path parameters of the read methods and `savedColumns.list`, checked as Google checks
//! them (a 400 `requestValidation` naming the parameter), and the 403 of an account the caller
//! cannot see.

use std::collections::HashMap;

use axum::http::StatusCode;
use axum::response::Response;

use crate::errors::{GoogleErrorItem, google_error, google_simple};

pub(super) fn param_error(name: &str, message: String) -> Response {
    google_error(
        StatusCode::BAD_REQUEST,
        &message,
        &[GoogleErrorItem::new("requestValidation", message.clone()).at(name, "parameter")],
    )
}

fn missing_param(name: &str) -> Response {
    let message = format!("Required parameter: {name}");
    google_error(
        StatusCode::BAD_REQUEST,
        &message,
        &[GoogleErrorItem::new("required", message.clone()).at(name, "parameter")],
    )
}

fn range_error(name: &str, raw: &str, min: i64, max: i64) -> Response {
    param_error(
        name,
        format!("Invalid value '{raw}'. Values must be within the range: [{min}, {max}]"),
    )
}

pub(super) fn int_param(
    query: &HashMap<String, String>,
    name: &str,
    min: i64,
    max: i64,
) -> Result<i64, Response> {
    let raw = query.get(name).ok_or_else(|| missing_param(name))?;
    let value: i64 = raw.trim().parse().map_err(|_| {
        param_error(
            name,
            format!("Invalid value '{raw}' for parameter {name}: not an integer"),
        )
    })?;
    if value < min || value > max {
        return Err(range_error(name, raw, min, max));
    }
    Ok(value)
}

pub(super) fn int64_param(
    query: &HashMap<String, String>,
    name: &str,
) -> Result<Option<i64>, Response> {
    match query.get(name) {
        None => Ok(None),
        Some(raw) => raw.trim().parse::<i64>().map(Some).map_err(|_| {
            param_error(
                name,
                format!("Invalid value '{raw}' for parameter {name}: not a 64-bit integer"),
            )
        }),
    }
}

pub(super) fn parse_path_id(name: &str, raw: &str) -> Result<i64, Response> {
    raw.parse::<i64>().map_err(|_| {
        param_error(
            name,
            format!("Invalid value '{raw}' for path parameter {name}: not a 64-bit integer"),
        )
    })
}

/// A 403 `insufficientPermissions`: the caller cannot see `what`.
pub(crate) fn forbidden(what: &str) -> Response {
    google_simple(
        StatusCode::FORBIDDEN,
        "insufficientPermissions",
        &format!("The caller does not have permission to access {what}."),
    )
}

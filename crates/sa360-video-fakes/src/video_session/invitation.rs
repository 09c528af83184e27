//! `POST /api/session/{SessionId}/invitation` with the rules of VS-5, VS-6 and VS-7.

use axum::Extension;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use bytes::Bytes;
use serde::Serialize;
use serde_json::{Map, Value};

use super::ledger::{Channel, OutboxEntry};
use super::login::{parse_closed_object, validation};
use super::state::VideoState;
use crate::errors::{api_error, json_response};
use crate::faults::RequestSeq;

const FIELDS: &[&str] = &[
    "InvitationType",
    "IsoCode",
    "MobileNo",
    "EmailAddress",
    "Message",
    "QueryStringParameter",
];

#[derive(Serialize)]
#[serde(rename_all = "PascalCase")]
struct InvitationResponse<'a> {
    invitation_type: i32,
    iso_code: Option<&'a str>,
    mobile_no: Option<&'a str>,
    email_address: Option<&'a str>,
    message: Option<&'a str>,
    query_string_parameter: Option<&'a str>,
}

fn optional_string<'a>(
    map: &'a Map<String, Value>,
    field: &str,
) -> Result<Option<&'a str>, Response> {
    match map.get(field) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(_) => Err(validation(
            Some(field),
            &format!("{field} must be a string or null."),
        )),
    }
}

/// `MobileNo`: 6 to 15 digits, optionally after a leading `+` (VS-6).
pub(crate) fn valid_mobile(s: &str) -> bool {
    let digits = s.strip_prefix('+').unwrap_or(s);
    (6..=15).contains(&digits.len()) && digits.bytes().all(|b| b.is_ascii_digit())
}

/// `IsoCode`: two ASCII upper-case letters (VS-9).
pub(crate) fn valid_iso_code(s: &str) -> bool {
    s.len() == 2 && s.bytes().all(|b| b.is_ascii_uppercase())
}

/// `EmailAddress`: at most 255 characters shaped like `local@domain.tld` (VS-6).
pub(crate) fn valid_email(s: &str) -> bool {
    if s.chars().count() > 255 {
        return false;
    }
    let Some((local, domain)) = s.split_once('@') else {
        return false;
    };
    let local_ok = !local.is_empty()
        && local.len() <= 64
        && !local.starts_with('.')
        && !local.ends_with('.')
        && !local.contains("..")
        && local
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-/=?^_`{|}~.".contains(&b));
    let labels: Vec<&str> = domain.split('.').collect();
    let domain_ok = labels.len() >= 2
        && labels.iter().all(|l| {
            !l.is_empty()
                && l.len() <= 63
                && !l.starts_with('-')
                && !l.ends_with('-')
                && l.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
        })
        && labels
            .last()
            .is_some_and(|tld| tld.len() >= 2 && tld.bytes().all(|b| b.is_ascii_alphabetic()));
    local_ok && domain_ok
}

/// `QueryStringParameter`: `?` then `key=value` pairs joined by `&`, keys among `m`, `c`, `o`, `s`
/// in that order, each at most once, with the seed's values (VS-7). The empty string means none.
pub(crate) fn check_query_string(s: &str) -> Result<(), String> {
    let Some(rest) = s.strip_prefix('?') else {
        return Err("QueryStringParameter must start with '?'.".to_owned());
    };
    if rest.is_empty() {
        return Err("QueryStringParameter has no parameters after '?'.".to_owned());
    }
    const KEYS: [(&str, &[&str]); 4] = [
        ("m", &["0", "1"]),
        ("c", &["0", "1", "2"]),
        ("o", &["0", "1"]),
        ("s", &["1", "2", "3", "4"]),
    ];
    let mut next_allowed = 0;
    for pair in rest.split('&') {
        let Some((key, value)) = pair.split_once('=') else {
            return Err(format!("'{pair}' is not a key=value pair."));
        };
        let Some(position) = KEYS.iter().position(|(k, _)| *k == key) else {
            return Err(format!("Unknown key '{key}'; allowed keys are m, c, o, s."));
        };
        if position < next_allowed {
            return Err(format!(
                "Key '{key}' is repeated or out of order; keys go m, c, o, s, each at most once."
            ));
        }
        if !KEYS[position].1.contains(&value) {
            return Err(format!("Value '{value}' is not allowed for key '{key}'."));
        }
        next_allowed = position + 1;
    }
    Ok(())
}

/// The validated request.
struct Invitation<'a> {
    invitation_type: i32,
    iso_code: Option<&'a str>,
    mobile_no: Option<&'a str>,
    email_address: Option<&'a str>,
    message: Option<&'a str>,
    query_string: Option<&'a str>,
}

fn validate(map: &Map<String, Value>) -> Result<Invitation<'_>, Response> {
    let invitation_type = match map.get("InvitationType") {
        None | Some(Value::Null) => {
            return Err(validation(
                Some("InvitationType"),
                "InvitationType is required.",
            ));
        }
        Some(Value::Number(n)) => n
            .as_i64()
            .and_then(|n| i32::try_from(n).ok())
            .filter(|n| (1..=6).contains(n))
            .ok_or_else(|| {
                validation(
                    Some("InvitationType"),
                    "InvitationType must be one of 1 (SMS), 2 (WhatsApp), 3 (e-mail).",
                )
            })?,
        Some(_) => {
            return Err(validation(
                Some("InvitationType"),
                "InvitationType must be an integer.",
            ));
        }
    };
    if invitation_type == 6 {
        return Err(validation(
            Some("InvitationType"),
            "InvitationType 6 is above the declared maximum of 5.",
        ));
    }
    let iso_code = optional_string(map, "IsoCode")?;
    let mobile_no = optional_string(map, "MobileNo")?;
    let email_address = optional_string(map, "EmailAddress")?;
    let message = optional_string(map, "Message")?;
    let query_string = optional_string(map, "QueryStringParameter")?.filter(|q| !q.is_empty());

    let channel_name = match invitation_type {
        1 => "an SMS",
        2 => "a WhatsApp",
        3 => "an e-mail",
        _ => "this",
    };
    let forbid = |field: &str, value: Option<&str>| -> Result<(), Response> {
        if value.is_some() {
            Err(validation(
                Some(field),
                &format!("{field} is not allowed for {channel_name} invitation."),
            ))
        } else {
            Ok(())
        }
    };
    let require = |field: &str, value: Option<&str>| -> Result<(), Response> {
        if value.is_none() {
            Err(validation(
                Some(field),
                &format!("{field} is required for {channel_name} invitation."),
            ))
        } else {
            Ok(())
        }
    };
    match invitation_type {
        1 | 2 => {
            forbid("EmailAddress", email_address)?;
            require("MobileNo", mobile_no)?;
            require("IsoCode", iso_code)?;
        }
        3 => {
            forbid("MobileNo", mobile_no)?;
            forbid("IsoCode", iso_code)?;
            require("EmailAddress", email_address)?;
        }
        _ => {}
    }
    if let Some(m) = mobile_no
        && !valid_mobile(m)
    {
        return Err(validation(
            Some("MobileNo"),
            "MobileNo must be 6 to 15 digits, optionally after a leading '+'.",
        ));
    }
    if let Some(c) = iso_code
        && !valid_iso_code(c)
    {
        return Err(validation(
            Some("IsoCode"),
            "IsoCode must be two upper-case letters, e.g. US.",
        ));
    }
    if let Some(e) = email_address
        && !valid_email(e)
    {
        return Err(validation(
            Some("EmailAddress"),
            "EmailAddress must be an address like name@example.com of at most 255 characters.",
        ));
    }
    // WhatsApp's text is fixed: a caller's Message is ignored, not checked.
    let message = if invitation_type == 2 { None } else { message };
    if let Some(m) = message
        && m.chars().count() > 100
    {
        return Err(validation(
            Some("Message"),
            "Message must be at most 100 characters.",
        ));
    }
    if let Some(q) = query_string {
        check_query_string(q).map_err(|e| validation(Some("QueryStringParameter"), &e))?;
    }
    Ok(Invitation {
        invitation_type,
        iso_code,
        mobile_no,
        email_address,
        message,
        query_string,
    })
}

/// `POST /api/session/{SessionId}/invitation`.
pub(crate) async fn send_invitation(
    State(app): State<VideoState>,
    Path(session_id): Path<String>,
    seq: Option<Extension<RequestSeq>>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let request = seq.map_or(0, |Extension(RequestSeq(n))| n);
    app.shared.state().counts.invitation_requests += 1;
    let token = headers
        .get("UserToken")
        .and_then(|v| v.to_str().ok())
        .map(str::trim)
        .filter(|t| !t.is_empty());
    let sender = token.and_then(|t| app.shared.state().tokens.get(t).cloned());
    let Some(sender) = sender else {
        app.shared.state().counts.unauthorized += 1;
        let message = if token.is_none() {
            "The UserToken header is missing."
        } else {
            "The UserToken is not valid; log in again."
        };
        return api_error(
            StatusCode::UNAUTHORIZED,
            "Unauthorized",
            message,
            None,
            None,
        );
    };
    if !app.shared.state().sessions.contains(&session_id) {
        return api_error(
            StatusCode::NOT_FOUND,
            "SessionNotFound",
            &format!("Session '{session_id}' was not found."),
            None,
            None,
        );
    }
    let map = match parse_closed_object(&body, FIELDS) {
        Ok(map) => map,
        Err(response) => return response,
    };
    let invitation = match validate(&map) {
        Ok(i) => i,
        Err(response) => return response,
    };
    let channel = match invitation.invitation_type {
        1 => Channel::Sms,
        2 => Channel::WhatsApp,
        3 => Channel::Email,
        n => Channel::Undocumented(n),
    };
    let sent_message = match channel {
        Channel::WhatsApp => app.config.whatsapp_text.clone(),
        _ => invitation
            .message
            .map_or_else(|| app.config.default_message.clone(), str::to_owned),
    };
    let recipient = match channel {
        Channel::Email => invitation.email_address,
        Channel::Sms | Channel::WhatsApp => invitation.mobile_no,
        Channel::Undocumented(_) => invitation.mobile_no.or(invitation.email_address),
    };
    let link = format!(
        "{}/join/{session_id}{}",
        app.base_url,
        invitation.query_string.unwrap_or("")
    );
    {
        let mut state = app.shared.state();
        state.outbox_seq += 1;
        let seq = state.outbox_seq;
        state.counts.invitations_sent += 1;
        state.outbox.push(OutboxEntry {
            seq,
            request,
            session_id: session_id.clone(),
            invitation_type: invitation.invitation_type,
            channel,
            recipient: recipient.map(str::to_owned),
            iso_code: invitation.iso_code.map(str::to_owned),
            message: sent_message.clone(),
            link,
            query_string: invitation.query_string.map(str::to_owned),
            domain_id: sender.domain_id,
            sent_by: sender.user_name.clone(),
        });
    }
    let echoed_message = match channel {
        Channel::WhatsApp => Some(sent_message.as_str()),
        _ => invitation.message,
    };
    json_response(
        StatusCode::OK,
        &InvitationResponse {
            invitation_type: invitation.invitation_type,
            iso_code: invitation.iso_code,
            mobile_no: invitation.mobile_no,
            email_address: invitation.email_address,
            message: echoed_message,
            query_string_parameter: invitation.query_string,
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mobile_numbers() {
        assert!(valid_mobile("+15551234567"));
        assert!(valid_mobile("123456"));
        assert!(!valid_mobile("12345"));
        assert!(!valid_mobile("+1234567890123456"));
        assert!(!valid_mobile("555-1234"));
        assert!(!valid_mobile("++123456"));
    }

    #[test]
    fn iso_codes() {
        assert!(valid_iso_code("US"));
        assert!(valid_iso_code("UK"));
        assert!(!valid_iso_code("us"));
        assert!(!valid_iso_code("USA"));
        assert!(!valid_iso_code("ÜS"));
    }

    #[test]
    fn emails() {
        assert!(valid_email("guest@example.com"));
        assert!(valid_email("first.last+tag@mail.example.co"));
        assert!(!valid_email("guest@example"));
        assert!(!valid_email("guest.example.com"));
        assert!(!valid_email("a@b@example.com"));
        assert!(!valid_email(".guest@example.com"));
        assert!(!valid_email("guest@-example.com"));
        assert!(!valid_email("guest@example.c0m"));
        let long = format!("{}@example.com", "a".repeat(250));
        assert!(!valid_email(&long));
    }

    #[test]
    fn query_strings() {
        assert!(check_query_string("?m=1&c=2&o=0&s=1").is_ok());
        assert!(check_query_string("?c=0").is_ok());
        assert!(check_query_string("?m=1&s=4").is_ok());
        assert!(check_query_string("m=1").is_err());
        assert!(check_query_string("?").is_err());
        assert!(check_query_string("?x=1").is_err());
        assert!(check_query_string("?m=2").is_err());
        assert!(check_query_string("?c=1&m=1").is_err());
        assert!(check_query_string("?m=1&m=0").is_err());
        assert!(check_query_string("?s=5").is_err());
        assert!(check_query_string("?m").is_err());
        assert!(check_query_string("?m=1&").is_err());
    }
}

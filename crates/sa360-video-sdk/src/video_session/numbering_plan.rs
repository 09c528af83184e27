//! A mobile number checked against its country's numbering plan (VS-21), with
//! libphonenumber's data (the `phonenumber` crate, cargo feature
//! `phone-numbers`).
//!
//! A number written with `+` must belong to the country by its calling code
//! and its digits (`+44 7400 123456` is refused for `US`); a number without it
//! is read as the country's national number (`201-555-0123` for `US`; a
//! national prefix such as the UK's leading `0` is dropped). Either way it must
//! be a valid number of the country, and it is sent in E.164 (`+12015550123`).

use phonenumber::{Mode, PhoneNumber, country, metadata::DATABASE};

use super::error::Error;

/// The ISO code libphonenumber files the country under: the service's `UK`
/// is ISO's `GB` (VS-9).
fn plan_code(country: &str) -> &str {
    if country == "UK" { "GB" } else { country }
}

/// `number` (digits, a leading `+` allowed) as E.164, when it is a valid
/// number of `country`; else the [`Error::Validation`] of `MobileNo`, saying
/// what a number of the country looks like.
pub(crate) fn checked(country: &str, number: &str) -> Result<String, Error> {
    let plan = plan_code(country);
    let id = plan.parse::<country::Id>().ok();
    let Some((id, meta)) = id.zip(DATABASE.by_id(plan)) else {
        return Err(Error::invalid(
            "MobileNo",
            format!(
                "cannot be checked: no numbering plan is known for {country}; give the number \
                 with the country whose plan it belongs to"
            ),
        ));
    };
    if let Ok(parsed) = phonenumber::parse(Some(id), number) {
        let code = parsed.code().value();
        let belongs = code == meta.country_code() && parsed.country().id() == Some(id);
        if belongs && parsed.is_valid() {
            return Ok(parsed.format().mode(Mode::E164).to_string());
        }
        // Another calling code (`+44` for `US`), or another country of a shared one (a
        // Canadian area code for `US`).
        if code != meta.country_code() || parsed.is_valid() {
            let other = parsed
                .country()
                .id()
                .map(|c| c.as_ref().to_owned())
                .or_else(|| {
                    DATABASE
                        .region(&code)
                        .and_then(|r| r.first().map(|r| (*r).to_owned()))
                })
                .unwrap_or_else(|| "another country".to_owned());
            return Err(Error::invalid(
                "MobileNo",
                format!(
                    "is a number of {other} (+{code}), not of {country}: {}",
                    looks_like(country, id)
                ),
            ));
        }
    }
    Err(Error::invalid(
        "MobileNo",
        format!(
            "is not a valid number of {country}: {}",
            looks_like(country, id)
        ),
    ))
}

/// `a US mobile number looks like +1 201-555-0123, or (201) 555-0123 within US`:
/// libphonenumber's example number of the country.
fn looks_like(country: &str, id: country::Id) -> String {
    let example = DATABASE
        .by_id(id.as_ref())
        .and_then(|m| m.descriptors().mobile().or(m.descriptors().fixed_line()))
        .and_then(|d| d.example())
        .and_then(|digits| phonenumber::parse(Some(id), digits).ok());
    match example {
        Some(example) => format!(
            "a {country} mobile number looks like {}, or {} within {country}",
            formatted(&example, Mode::International),
            formatted(&example, Mode::National)
        ),
        None => format!("give a number of {country}'s numbering plan"),
    }
}

fn formatted(number: &PhoneNumber, mode: Mode) -> String {
    number.format().mode(mode).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reason(country: &str, number: &str) -> String {
        let e = checked(country, number).unwrap_err();
        let v = e.as_validation().unwrap();
        assert_eq!(v.field, "MobileNo");
        v.reason.clone()
    }

    #[test]
    fn valid_numbers_are_sent_in_e164() {
        assert_eq!(checked("US", "+12015550123").unwrap(), "+12015550123");
        assert_eq!(checked("US", "2015550123").unwrap(), "+12015550123");
        // The service's UK is ISO's GB; the national prefix 0 is dropped.
        assert_eq!(checked("UK", "07400123456").unwrap(), "+447400123456");
        assert_eq!(checked("GB", "+447400123456").unwrap(), "+447400123456");
        assert_eq!(checked("IN", "+919800000001").unwrap(), "+919800000001");
    }

    /// Issue 50: `--sms '+44 7700 900123' --country US` went out as a US number, and
    /// `555-0199 --country US` as `5550199 (US)`.
    #[test]
    fn numbers_that_cannot_be_the_countrys_are_refused_with_an_example() {
        let other = reason("US", "+447400123456");
        assert!(other.contains("GB (+44), not of US"), "{other}");
        assert!(reason("US", "+447700900123").contains("(+44), not of US"));
        assert!(other.contains("+1 201-555-0123"), "{other}");
        let short = reason("US", "5550199");
        assert!(short.starts_with("is not a valid number of US"), "{short}");
        assert!(short.contains("+1 201-555-0123"), "{short}");
        // Ofcom's drama range is not a number anyone can be reached at.
        assert!(reason("UK", "+447700900123").contains("a UK mobile number looks like +44"));
        // A Canadian area code is not a US number although both are +1.
        assert!(reason("US", "+14165550123").contains("CA (+1), not of US"));
        assert!(reason("AQ", "+6721012345").contains("no numbering plan is known for AQ"));
    }
}

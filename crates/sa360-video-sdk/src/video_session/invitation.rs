//! Session invitations: one variant per delivery channel, validated fields.

use std::fmt;
use std::str::FromStr;

use super::call_experience::CallExperience;
use super::error::Error;

/// `Display` (the text as sent) and `FromStr` (through `new`'s checks) of the checked texts.
macro_rules! checked_text {
    ($($name:ident),*) => {$(
        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl FromStr for $name {
            type Err = Error;
            fn from_str(s: &str) -> Result<Self, Self::Err> {
                Self::new(s)
            }
        }
    )*};
}

checked_text!(SessionId, CountryCode, EmailAddress, Message);

/// The session an invitation is for (an opaque, non-empty string, VS-11).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct SessionId(String);

impl SessionId {
    /// Checks a session ID: not empty, no whitespace or control characters.
    pub fn new(id: impl Into<String>) -> Result<Self, Error> {
        let id = id.into();
        if id.is_empty() {
            return Err(Error::invalid("SessionId", "must not be empty"));
        }
        if id.chars().any(|c| c.is_whitespace() || c.is_control()) {
            return Err(Error::invalid(
                "SessionId",
                "must not contain whitespace or control characters",
            ));
        }
        Ok(Self(id))
    }

    /// The ID.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// The country ISO code of a mobile number (`IsoCode`): two ASCII letters,
/// stored upper-case, naming an officially assigned ISO 3166-1 alpha-2 country
/// (`US`, `GB`, `IN`), or `UK` as the service's document uses it (VS-9, VS-9a).
/// It is passed directly, as the service's document allows when the country is
/// fixed; the country list API is not described.
///
/// ```
/// use sa360_video_sdk::video_session::CountryCode;
///
/// assert_eq!(CountryCode::new("uk")?.as_str(), "UK");
/// let e = CountryCode::new("ZZ").unwrap_err();
/// assert_eq!(e.as_validation().map(|v| v.field), Some("IsoCode"));
/// # Ok::<(), sa360_video_sdk::video_session::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct CountryCode([u8; 2]);

impl CountryCode {
    /// Checks and upper-cases a code.
    pub fn new(code: &str) -> Result<Self, Error> {
        let code = match code.as_bytes() {
            [a, b] if a.is_ascii_alphabetic() && b.is_ascii_alphabetic() => {
                Self([a.to_ascii_uppercase(), b.to_ascii_uppercase()])
            }
            _ => {
                return Err(Error::invalid(
                    "IsoCode",
                    "must be two ASCII letters, e.g. US, UK or IN",
                ));
            }
        };
        if !super::country_list::is_country(code.as_str()) {
            return Err(Error::invalid(
                "IsoCode",
                format!(
                    "must be an ISO 3166-1 country code (e.g. US, UK or IN), not {}",
                    code.as_str()
                ),
            ));
        }
        Ok(code)
    }

    /// The code, upper-case.
    pub fn as_str(&self) -> &str {
        // Both bytes are ASCII letters by construction.
        std::str::from_utf8(&self.0).unwrap_or("??")
    }
}

/// A guest's mobile number (`MobileNo`) with its country (`IsoCode`).
///
/// The number is 6 to 15 digits, optionally after a leading `+` (VS-6); spaces
/// and hyphens between digits are accepted and removed. With the cargo feature
/// `phone-numbers` (on by default) it must also be a valid number of the
/// country by libphonenumber's numbering plans (VS-21; `UK` is checked as ISO's
/// `GB`): a number with `+` must carry the country's calling code, one without
/// is read as the country's national number, and it is sent in E.164. A refusal
/// says what a number of the country looks like.
///
/// ```
/// use sa360_video_sdk::video_session::MobileNumber;
///
/// let to = MobileNumber::new("us".parse()?, "201-555-0123")?;
/// assert_eq!((to.country().as_str(), to.number()), ("US", "+12015550123"));
/// let e = MobileNumber::new("IN".parse()?, "12345").unwrap_err();
/// assert_eq!(e.as_validation().map(|v| v.field), Some("MobileNo"));
/// # #[cfg(feature = "phone-numbers")]
/// # {
/// // A UK number is not a US number, and a US number has an area code.
/// let e = MobileNumber::new("US".parse()?, "+44 7400 123456").unwrap_err();
/// assert!(e.to_string().contains("+1 201-555-0123"), "{e}");
/// assert!(MobileNumber::new("US".parse()?, "555-0199").is_err());
/// # }
/// # Ok::<(), sa360_video_sdk::video_session::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct MobileNumber {
    country: CountryCode,
    number: String,
}

impl MobileNumber {
    /// Checks and normalizes `number` for `country`.
    pub fn new(country: CountryCode, number: &str) -> Result<Self, Error> {
        let compact: String = number.chars().filter(|c| *c != ' ' && *c != '-').collect();
        let digits = compact.strip_prefix('+').unwrap_or(&compact);
        if !digits.bytes().all(|b| b.is_ascii_digit()) {
            return Err(Error::invalid(
                "MobileNo",
                "must be digits, optionally after a leading '+' (spaces and hyphens are allowed between digits)",
            ));
        }
        if !(6..=15).contains(&digits.len()) {
            return Err(Error::invalid(
                "MobileNo",
                format!("must have 6 to 15 digits, not {}", digits.len()),
            ));
        }
        #[cfg(feature = "phone-numbers")]
        let compact = super::numbering_plan::checked(country.as_str(), &compact)?;
        Ok(Self {
            country,
            number: compact,
        })
    }

    /// The country.
    pub fn country(&self) -> CountryCode {
        self.country
    }

    /// The number as sent: E.164 (`+` and the country's calling code) with the
    /// feature `phone-numbers`; without it the digits as given, with the
    /// leading `+` if one was given.
    pub fn number(&self) -> &str {
        &self.number
    }
}

/// Longest `EmailAddress`, in characters.
pub const EMAIL_MAX_CHARS: usize = 255;

/// A guest's e-mail address (`EmailAddress`): at most 255 characters, shaped like
/// `local@domain.tld` (VS-6).
///
/// The check is the shape the project's service model accepts (VS-6), not
/// deliverability: one `@`; before it 1 to 64 ASCII letters, digits or
/// ``!#$%&'*+-/=?^_`{|}~.`` without leading, trailing or repeated dots; after it
/// at least two dot-separated labels of ASCII letters, digits and inner hyphens
/// (at most 63 each), the last one two or more letters. International domains
/// are written in their `xn--` form.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct EmailAddress(String);

impl EmailAddress {
    /// Checks an address.
    pub fn new(address: impl Into<String>) -> Result<Self, Error> {
        let address = address.into();
        let bad = |reason: &str| Err(Error::invalid("EmailAddress", reason));
        let chars = address.chars().count();
        if chars > EMAIL_MAX_CHARS {
            return Err(Error::invalid(
                "EmailAddress",
                format!("must be at most {EMAIL_MAX_CHARS} characters, not {chars}"),
            ));
        }
        if address.chars().any(|c| c.is_whitespace() || c.is_control()) {
            return bad("must not contain whitespace or control characters");
        }
        let Some((local, domain)) = address.split_once('@') else {
            return bad("must look like local@domain.tld (no '@' found)");
        };
        if domain.contains('@') {
            return bad("must contain exactly one '@'");
        }
        if local.is_empty() {
            return bad("must have a name before the '@'");
        }
        if local.len() > 64 {
            return bad("must have at most 64 characters before the '@'");
        }
        if local.starts_with('.') || local.ends_with('.') || local.contains("..") {
            return bad("must not start or end the name with a dot, or repeat dots");
        }
        if !local
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-/=?^_`{|}~.".contains(&b))
        {
            return bad(
                "may use only ASCII letters, digits and !#$%&'*+-/=?^_`{|}~. before the '@'",
            );
        }
        let labels: Vec<&str> = domain.split('.').collect();
        if labels.len() < 2 {
            return bad("must have a domain with a dot after the '@', like example.com");
        }
        let label_ok = |l: &str| {
            !l.is_empty()
                && l.len() <= 63
                && !l.starts_with('-')
                && !l.ends_with('-')
                && l.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
        };
        if !labels.iter().all(|l| label_ok(l)) {
            return bad(
                "has an invalid domain: labels of ASCII letters, digits and inner hyphens (at most 63 each) separated by single dots; write international domains in their xn-- form",
            );
        }
        if !labels
            .last()
            .is_some_and(|tld| tld.len() >= 2 && tld.bytes().all(|b| b.is_ascii_alphabetic()))
        {
            return bad("must end in a top-level domain of at least two letters");
        }
        Ok(Self(address))
    }

    /// The address.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// Longest `Message`, in characters (not bytes).
pub const MESSAGE_MAX_CHARS: usize = 100;

/// The text sent with an SMS or e-mail invitation (`Message`): at most 100
/// characters, counted as Unicode scalar values (so `"é"` is one, not two).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Message(String);

impl Message {
    /// Checks a message.
    pub fn new(text: impl Into<String>) -> Result<Self, Error> {
        let text = text.into();
        let chars = text.chars().count();
        if chars > MESSAGE_MAX_CHARS {
            return Err(Error::invalid(
                "Message",
                format!("must be at most {MESSAGE_MAX_CHARS} characters, not {chars}"),
            ));
        }
        Ok(Self(text))
    }

    /// The text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// An `InvitationType` the service's document enumerates but never explains (VS-5).
///
/// Exhaustive on purpose: these are the service document's undocumented values 4 to 6, a
/// closed list; a type the service's document does not enumerate is not sent at all.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum UndocumentedType {
    /// `InvitationType` 4.
    Four,
    /// `InvitationType` 5.
    Five,
    /// `InvitationType` 6: above the service document's declared maximum of 5; the service may
    /// (and the project's fake does) reject it with 400 `ValidationFailed`.
    Six,
}

impl UndocumentedType {
    /// The wire value (4, 5 or 6).
    pub const fn code(self) -> i64 {
        match self {
            UndocumentedType::Four => 4,
            UndocumentedType::Five => 5,
            UndocumentedType::Six => 6,
        }
    }
}

impl TryFrom<i64> for UndocumentedType {
    type Error = Error;
    fn try_from(code: i64) -> Result<Self, Self::Error> {
        match code {
            4 => Ok(Self::Four),
            5 => Ok(Self::Five),
            6 => Ok(Self::Six),
            _ => Err(Error::invalid(
                "InvitationType",
                "must be 4, 5 or 6 (the undocumented types); use Invitation::sms, whatsapp or email for 1 to 3",
            )),
        }
    }
}

/// An invitation of an undocumented type (4, 5 or 6), sent deliberately.
///
/// The service's document enumerates these values without saying what they do or which fields
/// they need, so the SDK sends exactly the fields set here, each validated
/// like its documented counterpart, and leaves the meaning to the service. Build
/// one with [`UndocumentedInvitation::new`] and send it as
/// [`Invitation::Undocumented`]; nothing else produces types 4 to 6.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UndocumentedInvitation {
    /// The type sent.
    pub invitation_type: UndocumentedType,
    /// `MobileNo` and `IsoCode`, if set.
    pub mobile: Option<MobileNumber>,
    /// `EmailAddress`, if set.
    pub email: Option<EmailAddress>,
    /// `Message`, if set.
    pub message: Option<Message>,
}

impl UndocumentedInvitation {
    /// An undocumented invitation with no fields set.
    pub fn new(invitation_type: UndocumentedType) -> Self {
        Self {
            invitation_type,
            mobile: None,
            email: None,
            message: None,
        }
    }

    /// Sets `MobileNo` and `IsoCode`.
    pub fn mobile(mut self, mobile: MobileNumber) -> Self {
        self.mobile = Some(mobile);
        self
    }

    /// Sets `EmailAddress`.
    pub fn email(mut self, email: EmailAddress) -> Self {
        self.email = Some(email);
        self
    }

    /// Sets `Message`.
    pub fn message(mut self, message: Message) -> Self {
        self.message = Some(message);
        self
    }
}

/// A session invitation: exactly one delivery channel, with that channel's fields.
///
/// SMS (type 1) and WhatsApp (2) go to a [`MobileNumber`], e-mail (3) to an
/// [`EmailAddress`]. WhatsApp takes no message because its text is fixed. Fields
/// of another channel cannot be set, so one invitation never names two channels.
/// Types 4 to 6 are undocumented; they are sent only as
/// [`Invitation::Undocumented`].
///
/// ```
/// use sa360_video_sdk::video_session::{Invitation, Message, MobileNumber};
///
/// let sms = Invitation::Sms {
///     to: MobileNumber::new("IN".parse()?, "+919800000001")?,
///     message: Some(Message::new("Join your video consultation")?),
/// };
/// assert_eq!(sms.invitation_type(), 1);
/// let mail = Invitation::Email { to: "guest@example.com".parse()?, message: None };
/// assert_eq!(mail.channel(), "e-mail");
/// # Ok::<(), sa360_video_sdk::video_session::Error>(())
/// ```
///
/// `#[non_exhaustive]`: the service may add channels. Read an invitation with
/// [`channel`](Self::channel) and [`invitation_type`](Self::invitation_type), or
/// give a `match` a wildcard arm.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Invitation {
    /// `InvitationType` 1.
    Sms {
        /// The guest's mobile number.
        to: MobileNumber,
        /// Optional text.
        message: Option<Message>,
    },
    /// `InvitationType` 2; the text is fixed by the service.
    WhatsApp {
        /// The guest's mobile number.
        to: MobileNumber,
    },
    /// `InvitationType` 3.
    Email {
        /// The guest's address.
        to: EmailAddress,
        /// Optional text.
        message: Option<Message>,
    },
    /// `InvitationType` 4, 5 or 6, whose meaning is not documented.
    Undocumented(UndocumentedInvitation),
}

impl Invitation {
    /// The `InvitationType` sent.
    pub fn invitation_type(&self) -> i64 {
        match self {
            Invitation::Sms { .. } => 1,
            Invitation::WhatsApp { .. } => 2,
            Invitation::Email { .. } => 3,
            Invitation::Undocumented(u) => u.invitation_type.code(),
        }
    }

    /// A short name of the channel, for messages and logs.
    pub fn channel(&self) -> &'static str {
        match self {
            Invitation::Sms { .. } => "SMS",
            Invitation::WhatsApp { .. } => "WhatsApp",
            Invitation::Email { .. } => "e-mail",
            Invitation::Undocumented(_) => "undocumented",
        }
    }

    /// The request body fields, plain (converted to the generated type by the client).
    pub(crate) fn to_wire(&self, experience: &CallExperience) -> WireInvitation {
        let mut wire = WireInvitation {
            invitation_type: self.invitation_type(),
            query_string_parameter: experience.render(),
            ..WireInvitation::default()
        };
        let set_mobile = |wire: &mut WireInvitation, m: &MobileNumber| {
            wire.iso_code = Some(m.country().as_str().to_owned());
            wire.mobile_no = Some(m.number().to_owned());
        };
        match self {
            Invitation::Sms { to, message } => {
                set_mobile(&mut wire, to);
                wire.message = message.as_ref().map(|m| m.as_str().to_owned());
            }
            Invitation::WhatsApp { to } => set_mobile(&mut wire, to),
            Invitation::Email { to, message } => {
                wire.email_address = Some(to.as_str().to_owned());
                wire.message = message.as_ref().map(|m| m.as_str().to_owned());
            }
            Invitation::Undocumented(u) => {
                if let Some(m) = &u.mobile {
                    set_mobile(&mut wire, m);
                }
                wire.email_address = u.email.as_ref().map(|e| e.as_str().to_owned());
                wire.message = u.message.as_ref().map(|m| m.as_str().to_owned());
            }
        }
        wire
    }
}

/// The fields of an invitation request, before conversion to the generated type.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct WireInvitation {
    pub(crate) invitation_type: i64,
    pub(crate) iso_code: Option<String>,
    pub(crate) mobile_no: Option<String>,
    pub(crate) email_address: Option<String>,
    pub(crate) message: Option<String>,
    pub(crate) query_string_parameter: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn email_rules() {
        for ok in [
            "a@b.co",
            "first.last+tag@sub.example.org",
            "x@xn--bcher-kva.de",
        ] {
            assert!(EmailAddress::new(ok).is_ok(), "{ok}");
        }
        for bad in [
            "",
            "plain",
            "@example.com",
            "a@b",
            "a@b..com",
            "a@-b.com",
            "a@b.123",
            "a b@c.de",
            "a@b@c.de",
            "ü@bücher.de",
            ".a@b.de",
            "a..b@c.de",
            "a@b.c",
        ] {
            let e = EmailAddress::new(bad).unwrap_err();
            assert_eq!(e.as_validation().unwrap().field, "EmailAddress", "{bad}");
        }
        let long = format!("{}@{}.example.com", "a".repeat(64), "b".repeat(178));
        assert_eq!(long.chars().count(), 255);
        assert!(EmailAddress::new(long.clone()).is_err(), "label over 63");
        let long = format!(
            "{}@{}.{}.{}.com",
            "a".repeat(64),
            "b".repeat(61),
            "c".repeat(61),
            "d".repeat(62)
        );
        assert_eq!(long.chars().count(), 255);
        assert!(EmailAddress::new(long.clone()).is_ok());
        let e = EmailAddress::new(format!("{long}m")).unwrap_err();
        assert!(
            e.as_validation().unwrap().reason.contains("at most 255"),
            "{e}"
        );
    }

    #[test]
    fn message_counts_characters_not_bytes() {
        assert!(Message::new("é".repeat(100)).is_ok());
        let e = Message::new("é".repeat(101)).unwrap_err();
        assert_eq!(e.as_validation().unwrap().field, "Message");
        assert!(e.as_validation().unwrap().reason.contains("101"));
    }

    #[test]
    fn country_and_mobile() {
        assert_eq!(CountryCode::new("uk").unwrap().as_str(), "UK");
        for bad in ["U", "USA", "1A", "ÜS", "ZZ", "xx"] {
            assert_eq!(
                CountryCode::new(bad)
                    .unwrap_err()
                    .as_validation()
                    .unwrap()
                    .field,
                "IsoCode"
            );
        }
        let us = CountryCode::new("US").unwrap();
        // Worded as the search ads client's validation errors (issue 46).
        assert_eq!(
            MobileNumber::new(us, "12345").unwrap_err().to_string(),
            "invalid input: `MobileNo` must have 6 to 15 digits, not 5 (nothing was sent)"
        );
        assert_eq!(
            CountryCode::new("ZZ").unwrap_err().to_string(),
            "invalid input: `IsoCode` must be an ISO 3166-1 country code (e.g. US, UK or IN), not ZZ \
             (nothing was sent)"
        );
        assert_eq!(
            MobileNumber::new(us, "201 555 0123").unwrap().number(),
            if cfg!(feature = "phone-numbers") {
                "+12015550123"
            } else {
                "2015550123"
            }
        );
        for bad in [
            "12345",
            "1234567890123456",
            "+",
            "++123456",
            "12a4567",
            "12345+6",
        ] {
            assert_eq!(
                MobileNumber::new(us, bad)
                    .unwrap_err()
                    .as_validation()
                    .unwrap()
                    .field,
                "MobileNo",
                "{bad}"
            );
        }
    }

    #[test]
    fn wire_fields_per_channel() {
        let to = MobileNumber::new(CountryCode::new("IN").unwrap(), "+919800000001").unwrap();
        let w = Invitation::WhatsApp { to: to.clone() }.to_wire(&CallExperience::new());
        assert_eq!(
            w,
            WireInvitation {
                invitation_type: 2,
                iso_code: Some("IN".into()),
                mobile_no: Some("+919800000001".into()),
                ..WireInvitation::default()
            }
        );
        let u = UndocumentedInvitation::new(UndocumentedType::try_from(5).unwrap())
            .mobile(to)
            .message(Message::new("hi").unwrap());
        let w = Invitation::Undocumented(u).to_wire(&CallExperience::new().silent_observer());
        assert_eq!(w.invitation_type, 5);
        assert_eq!(w.query_string_parameter.as_deref(), Some("?o=1"));
        assert_eq!(w.message.as_deref(), Some("hi"));
        assert!(UndocumentedType::try_from(3).is_err());
        assert!(SessionId::new("").is_err());
        assert!(SessionId::new("a b").is_err());
    }
}

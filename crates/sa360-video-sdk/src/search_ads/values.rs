//! Typed values and their wire forms.
//!
//! The wire carries int64 ids as JSON strings of digits, dates as the number
//! `yyyymmdd`, timestamps as epoch milliseconds in a string, money in micros
//! and value sets as open strings (SA-4..SA-6). This module holds the typed side
//! and the conversions; nothing here talks to the network.

use std::fmt;
use std::str::FromStr;

use chrono::{DateTime, Datelike, NaiveDate, Utc};

use super::error::Error;

/// Why a text could not be read as an id.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{text:?} is not a valid {kind}: expected a 64-bit integer in decimal digits")]
pub struct IdParseError {
    kind: &'static str,
    field: &'static str,
    text: String,
}

impl IdParseError {
    /// The field the text was meant for, in the API's spelling (`agencyId`, `campaignId`, ...).
    pub fn field(&self) -> &'static str {
        self.field
    }
}

/// `?` on an id's `from_str` in a function that returns [`Error`]: an
/// [`Error::Validation`] naming the id's field.
///
/// ```
/// use sa360_video_sdk::search_ads::{AgencyId, Error};
/// fn agency(text: &str) -> Result<AgencyId, Error> {
///     Ok(text.parse::<AgencyId>()?)
/// }
/// let error = agency("12a").unwrap_err();
/// assert!(matches!(&error, Error::Validation { field, .. } if field == "agencyId"), "{error}");
/// ```
impl From<IdParseError> for Error {
    fn from(error: IdParseError) -> Self {
        Error::invalid(
            error.field,
            format!(
                "is {:?}, not a valid {}: expected a 64-bit integer in decimal digits",
                error.text, error.kind
            ),
        )
    }
}

macro_rules! int64_ids {
    ($($(#[$doc:meta])* $name:ident, $label:literal, $field:literal;)*) => {$(
        $(#[$doc])*
        ///
        /// An `i64` on the Rust side; on the wire it travels as a JSON string of
        /// digits (SA-4).
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub struct $name(i64);

        impl $name {
            /// Wraps a numeric id.
            pub const fn new(value: i64) -> Self {
                Self(value)
            }

            /// The numeric id.
            pub const fn get(self) -> i64 {
                self.0
            }
        }

        impl From<i64> for $name {
            fn from(value: i64) -> Self {
                Self(value)
            }
        }

        impl From<$name> for i64 {
            fn from(id: $name) -> i64 {
                id.0
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                fmt::Display::fmt(&self.0, f)
            }
        }

        impl FromStr for $name {
            type Err = IdParseError;

            fn from_str(s: &str) -> Result<Self, Self::Err> {
                s.trim().parse::<i64>().map(Self).map_err(|_| IdParseError {
                    kind: $label,
                    field: $field,
                    text: s.to_owned(),
                })
            }
        }

        impl $name {
            /// The id as the generated client's wire type (crate-private: the
            /// generated crate stays out of the public API).
            #[allow(dead_code)]
            pub(crate) fn wire(self) -> sa360_v2_client::I64String {
                sa360_v2_client::I64String::from(self.0)
            }

            /// The id from the generated client's wire type.
            #[allow(dead_code)]
            pub(crate) fn from_wire(value: &sa360_v2_client::I64String) -> Self {
                Self(i64::from(*value))
            }
        }
    )*};
}

int64_ids! {
    /// The id of an agency (legacy SA360).
    AgencyId, "agency id", "agencyId";
    /// The id of an advertiser (legacy SA360).
    AdvertiserId, "advertiser id", "advertiserId";
    /// The id of an engine account.
    EngineAccountId, "engine account id", "engineAccountId";
    /// The id of a campaign.
    CampaignId, "campaign id", "campaignId";
    /// The id of an ad group.
    AdGroupId, "ad group id", "adGroupId";
    /// The id of an ad.
    AdId, "ad id", "adId";
    /// The id of a criterion (keyword).
    CriterionId, "criterion id", "criterionId";
    /// A numeric segmentation id, such as a Floodlight activity id.
    SegmentationId, "segmentation id", "segmentationId";
    /// The id that Search Ads 360 generates for a conversion (deprecated for
    /// edits since Q3 2025; edit by `conversionId`).
    DsConversionId, "DS conversion id", "dsConversionId";
    /// The id of an inventory account.
    InventoryAccountId, "inventory account id", "inventoryAccountId";
    /// The id of a product group.
    ProductGroupId, "product group id", "productGroupId";
}

/// The customer id of an account in the new Search Ads 360 experience (a client
/// or a manager account), as both APIs take it: its digits.
///
/// One rule, applied here and nowhere else: 1 to [`MAX_CUSTOMER_ID_DIGITS`]
/// ASCII digits, written either plainly or in groups separated by single dashes
/// as Google's UI shows them (`123-456-7890`); the dashes are dropped, so the
/// id is always the digits the API wants (Google's login-customer-id page,
/// `specs/SOURCES.md`). Anything else is refused with the rule.
///
/// ```
/// use sa360_video_sdk::search_ads::CustomerId;
/// let id = CustomerId::new("123-456-7890")?;
/// assert_eq!(id.as_str(), "1234567890");
/// assert_eq!(CustomerId::new("200001235")?.as_str(), "200001235");
/// for bad in ["", "abc", "123--456", "-123", "12 3", "123-"] {
///     assert!(CustomerId::new(bad).is_err(), "{bad}");
/// }
/// # Ok::<(), sa360_video_sdk::search_ads::Error>(())
/// ```
/// It is `Copy`, like the other ids: pass it to as many calls as you like.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct CustomerId {
    /// The ASCII digits, then zeros.
    digits: [u8; MAX_CUSTOMER_ID_DIGITS],
    /// How many of `digits` are the id's.
    len: u8,
}

/// The most digits a [`CustomerId`] may have (Google's ids have 10; an int64 has at most 19).
pub const MAX_CUSTOMER_ID_DIGITS: usize = 19;

impl CustomerId {
    /// Checks a customer id against the rule above and keeps its digits.
    pub fn new(id: impl AsRef<str>) -> Result<Self, Error> {
        let id = id.as_ref();
        let groups_ok = id
            .split('-')
            .all(|g| !g.is_empty() && g.bytes().all(|b| b.is_ascii_digit()));
        let count = id.bytes().filter(u8::is_ascii_digit).count();
        if !groups_ok || count == 0 || count > MAX_CUSTOMER_ID_DIGITS {
            return Err(Error::invalid(
                "customerId",
                format!(
                    "is {id:?}: a customer id is 1 to {MAX_CUSTOMER_ID_DIGITS} digits, plain \
                     (\"1234567890\") or dashed as Google's UI shows it (\"123-456-7890\")"
                ),
            ));
        }
        let mut digits = [0; MAX_CUSTOMER_ID_DIGITS];
        for (slot, digit) in digits.iter_mut().zip(id.bytes().filter(u8::is_ascii_digit)) {
            *slot = digit;
        }
        Ok(Self {
            digits,
            len: count as u8, // at most MAX_CUSTOMER_ID_DIGITS
        })
    }

    /// The id as text.
    pub fn as_str(&self) -> &str {
        // Only ASCII digits are ever stored, so this is always valid UTF-8.
        std::str::from_utf8(&self.digits[..usize::from(self.len)]).unwrap_or_default()
    }
}

impl fmt::Debug for CustomerId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("CustomerId").field(&self.as_str()).finish()
    }
}

impl fmt::Display for CustomerId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for CustomerId {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::new(s.trim())
    }
}

// ---------------------------------------------------------------- dates

/// First date the API accepts in a date range (SA-12).
pub const MIN_DATE: NaiveDate = match NaiveDate::from_ymd_opt(2009, 11, 1) {
    Some(d) => d,
    None => NaiveDate::MIN,
};

/// Last date the API accepts in a date range (SA-12).
pub const MAX_DATE: NaiveDate = match NaiveDate::from_ymd_opt(9999, 12, 31) {
    Some(d) => d,
    None => NaiveDate::MAX,
};

/// A date as the number `yyyymmdd` the API uses (`2024-03-05` → `20240305`).
///
/// Years outside 0..=9999 do not fit the format; they are clamped into it,
/// which the range check of [`DateRange`](super::DateRange) then refuses.
///
/// ```
/// use chrono::NaiveDate;
/// use sa360_video_sdk::search_ads::{from_yyyymmdd, to_yyyymmdd};
/// let d = NaiveDate::from_ymd_opt(2024, 3, 5).unwrap();
/// assert_eq!(to_yyyymmdd(d), 20240305);
/// assert_eq!(from_yyyymmdd(20240305), Some(d));
/// assert_eq!(from_yyyymmdd(20240230), None);
/// ```
pub fn to_yyyymmdd(date: NaiveDate) -> i32 {
    let year = date.year().clamp(0, 9999);
    year * 10_000 + date.month() as i32 * 100 + date.day() as i32
}

/// Reads the number `yyyymmdd` as a date; `None` when it is no calendar date.
pub fn from_yyyymmdd(value: i32) -> Option<NaiveDate> {
    if value < 0 {
        return None;
    }
    let year = value / 10_000;
    let month = u32::try_from(value / 100 % 100).ok()?;
    let day = u32::try_from(value % 100).ok()?;
    NaiveDate::from_ymd_opt(year, month, day)
}

// ----------------------------------------------------------- timestamps

/// A time as epoch milliseconds (UTC), the API's timestamp unit.
///
/// Sub-millisecond precision is dropped (rounded toward the past).
///
/// ```
/// use chrono::DateTime;
/// use sa360_video_sdk::search_ads::{from_epoch_millis, to_epoch_millis};
/// let t = DateTime::from_timestamp_millis(1_700_000_000_123).unwrap();
/// assert_eq!(to_epoch_millis(t), 1_700_000_000_123);
/// assert_eq!(from_epoch_millis(1_700_000_000_123), Some(t));
/// ```
pub fn to_epoch_millis(time: DateTime<Utc>) -> i64 {
    time.timestamp_millis()
}

/// Reads epoch milliseconds as a time; `None` when out of chrono's range.
pub fn from_epoch_millis(millis: i64) -> Option<DateTime<Utc>> {
    DateTime::from_timestamp_millis(millis)
}

/// Reads a wire timestamp (`"1700000000123"`) as a time.
pub(crate) fn parse_epoch_millis(text: &str) -> Option<DateTime<Utc>> {
    text.trim().parse::<i64>().ok().and_then(from_epoch_millis)
}

// ---------------------------------------------------------------- money

/// An amount of money in micros: the value times 1 000 000, as the API's
/// `revenueMicros` (a revenue of 10 is `Micros(10_000_000)`).
///
/// ```
/// use sa360_video_sdk::search_ads::Micros;
/// let m: Micros = "12.34".parse()?;
/// assert_eq!(m.get(), 12_340_000);
/// assert_eq!(m.to_string(), "12.34");
/// assert_eq!(Micros::from_units(10), Some(Micros::new(10_000_000)));
/// # Ok::<(), sa360_video_sdk::search_ads::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Micros(i64);

impl Micros {
    /// Wraps an amount already in micros.
    pub const fn new(micros: i64) -> Self {
        Self(micros)
    }

    /// Whole currency units (`from_units(10)` is 10 000 000 micros); `None`
    /// on overflow.
    pub fn from_units(units: i64) -> Option<Self> {
        units.checked_mul(1_000_000).map(Self)
    }

    /// The amount in micros.
    pub const fn get(self) -> i64 {
        self.0
    }
}

impl fmt::Display for Micros {
    /// Decimal units without trailing zeros: `12.34`, `10`, `-0.000001`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let sign = if self.0 < 0 { "-" } else { "" };
        let abs = self.0.unsigned_abs();
        let (units, frac) = (abs / 1_000_000, abs % 1_000_000);
        if frac == 0 {
            write!(f, "{sign}{units}")
        } else {
            let digits = format!("{frac:06}");
            write!(f, "{sign}{units}.{}", digits.trim_end_matches('0'))
        }
    }
}

impl FromStr for Micros {
    type Err = Error;

    /// Reads a decimal amount with at most six decimals (`"12.34"`, `"-5"`).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let bad = || {
            Error::invalid(
                "revenueMicros",
                format!(
                    "{s:?} is not an amount: write a decimal number with at most 6 decimals, e.g. 12.34"
                ),
            )
        };
        let text = s.trim();
        let (negative, text) = match text.strip_prefix('-') {
            Some(rest) => (true, rest),
            None => (false, text),
        };
        let (units, frac) = text.split_once('.').unwrap_or((text, ""));
        let digits_only = |t: &str| t.bytes().all(|b| b.is_ascii_digit());
        if units.is_empty() || !digits_only(units) || !digits_only(frac) || frac.len() > 6 {
            return Err(bad());
        }
        let units: i128 = units.parse().map_err(|_| bad())?;
        let frac: i128 = if frac.is_empty() {
            0
        } else {
            format!("{frac:0<6}").parse().map_err(|_| bad())?
        };
        let micros = units
            .checked_mul(1_000_000)
            .and_then(|m| m.checked_add(frac))
            .ok_or_else(bad)?;
        let micros = if negative { -micros } else { micros };
        i64::try_from(micros).map(Self).map_err(|_| bad())
    }
}

// ----------------------------------------------------------- open enums

macro_rules! open_enum {
    (
        $(#[$doc:meta])*
        $name:ident {
            $( $(#[$vdoc:meta])* $variant:ident = $wire:literal, )+
        }
    ) => {
        $(#[$doc])*
        ///
        /// Open: a value this version does not know arrives as `Other` instead of
        /// failing, and `Other` is sent as given (SA-6). `#[non_exhaustive]`: a
        /// later version may name a value that arrives as `Other` today, so a
        /// `match` needs a wildcard arm.
        #[derive(Debug, Clone, PartialEq, Eq, Hash)]
        #[non_exhaustive]
        pub enum $name {
            $( $(#[$vdoc])* $variant, )+
            /// A value not known to this version, kept verbatim.
            Other(String),
        }

        impl $name {
            /// The wire value.
            pub fn as_str(&self) -> &str {
                match self {
                    $( Self::$variant => $wire, )+
                    Self::Other(s) => s,
                }
            }

            /// Reads a wire value; unknown values become `Other`.
            pub fn from_wire(value: &str) -> Self {
                match value {
                    $( $wire => Self::$variant, )+
                    other => Self::Other(other.to_owned()),
                }
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl From<&str> for $name {
            fn from(value: &str) -> Self {
                Self::from_wire(value)
            }
        }

        impl From<String> for $name {
            fn from(value: String) -> Self {
                Self::from_wire(&value)
            }
        }

        impl FromStr for $name {
            type Err = std::convert::Infallible;

            fn from_str(s: &str) -> Result<Self, Self::Err> {
                Ok(Self::from_wire(s))
            }
        }
    };
}

open_enum!(
    /// The type of a conversion (`type` on the wire).
    ConversionType {
        /// No monetary value, e.g. an e-mail list signup (`ACTION`).
        Action = "ACTION",
        /// Has a value, e.g. a purchase (`TRANSACTION`).
        Transaction = "TRANSACTION",
    }
);

open_enum!(
    /// The state of a conversion.
    ConversionState {
        /// `ACTIVE`.
        Active = "ACTIVE",
        /// `REMOVED`.
        Removed = "REMOVED",
        /// `DELETED` (deprecated by Google; use `Removed`).
        Deleted = "DELETED",
    }
);

open_enum!(
    /// The segmentation type of a conversion or availability.
    SegmentationType {
        /// `FLOODLIGHT`, the only documented value.
        Floodlight = "FLOODLIGHT",
    }
);

open_enum!(
    /// The sales channel of a product conversion.
    Channel {
        /// `local`: a physical store.
        Local = "local",
        /// `online`: an online store.
        Online = "online",
    }
);

open_enum!(
    /// The device on which a conversion happened (`deviceType`).
    DeviceType {
        /// `DESKTOP`.
        Desktop = "DESKTOP",
        /// `MOBILE`.
        Mobile = "MOBILE",
        /// `TABLET`.
        Tablet = "TABLET",
    }
);

open_enum!(
    /// Consent for core platform services (`adUserDataConsent`).
    Consent {
        /// `UNKNOWN`: not specified.
        Unknown = "UNKNOWN",
        /// `GRANTED`.
        Granted = "GRANTED",
        /// `DENIED`.
        Denied = "DENIED",
    }
);

open_enum!(
    /// The entity type of an ID-mapping row (SA-11).
    EntityType {
        /// `CUSTOMER`: a legacy advertiser or engine account.
        Customer = "CUSTOMER",
        /// `CAMPAIGN`.
        Campaign = "CAMPAIGN",
        /// `AD_GROUP`.
        AdGroup = "AD_GROUP",
        /// `CRITERION`.
        Criterion = "CRITERION",
    }
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn yyyymmdd_round_trips_and_rejects_non_dates() {
        for (y, m, d) in [(2009, 11, 1), (2024, 2, 29), (9999, 12, 31), (2000, 1, 1)] {
            let date = NaiveDate::from_ymd_opt(y, m, d).unwrap();
            let n = to_yyyymmdd(date);
            assert_eq!(n, y * 10_000 + m as i32 * 100 + d as i32);
            assert_eq!(from_yyyymmdd(n), Some(date));
        }
        for bad in [20230229, 20241301, 20240100, 20240132, -1, 0] {
            assert_eq!(from_yyyymmdd(bad), None, "{bad}");
        }
        assert_eq!(to_yyyymmdd(MIN_DATE), 20091101);
        assert_eq!(to_yyyymmdd(MAX_DATE), 99991231);
    }

    #[test]
    fn epoch_millis_round_trip_and_truncate() {
        let t = from_epoch_millis(1_700_000_000_123).unwrap();
        assert_eq!(to_epoch_millis(t), 1_700_000_000_123);
        let with_nanos = t + chrono::Duration::nanoseconds(999_999);
        assert_eq!(to_epoch_millis(with_nanos), 1_700_000_000_123);
        assert_eq!(parse_epoch_millis(" 1700000000123 "), Some(t));
        assert_eq!(parse_epoch_millis("17e11"), None);
        assert_eq!(parse_epoch_millis(""), None);
    }

    #[test]
    fn micros_parse_and_print() {
        let cases = [
            ("10", 10_000_000, "10"),
            ("12.34", 12_340_000, "12.34"),
            ("0.000001", 1, "0.000001"),
            ("-5.5", -5_500_000, "-5.5"),
            ("0", 0, "0"),
        ];
        for (text, micros, shown) in cases {
            let m: Micros = text.parse().unwrap();
            assert_eq!(m.get(), micros, "{text}");
            assert_eq!(m.to_string(), shown);
        }
        for bad in [
            "",
            ".5",
            "1.1234567",
            "1e3",
            "abc",
            "--1",
            "99999999999999999",
        ] {
            assert!(bad.parse::<Micros>().is_err(), "{bad}");
        }
        assert_eq!(Micros::from_units(i64::MAX), None);
    }

    proptest::proptest! {
        #[test]
        fn any_date_in_range_round_trips(days in 0i64..2_914_000) {
            let date = MIN_DATE + chrono::Duration::days(days);
            proptest::prop_assume!(date <= MAX_DATE);
            let n = to_yyyymmdd(date);
            proptest::prop_assert!((20091101..=99991231).contains(&n));
            proptest::prop_assert_eq!(from_yyyymmdd(n), Some(date));
        }

        #[test]
        fn any_amount_round_trips_through_text(micros in proptest::num::i64::ANY) {
            let m = Micros::new(micros);
            proptest::prop_assert_eq!(m.to_string().parse::<Micros>().ok(), Some(m));
        }

        #[test]
        fn any_millisecond_round_trips(millis in -8_000_000_000_000i64..250_000_000_000_000) {
            let t = from_epoch_millis(millis).ok_or("in range").map_err(proptest::test_runner::TestCaseError::fail)?;
            proptest::prop_assert_eq!(to_epoch_millis(t), millis);
            proptest::prop_assert_eq!(parse_epoch_millis(&millis.to_string()), Some(t));
        }
    }

    #[test]
    fn ids_parse_and_print() {
        let id: AdvertiserId = "2170000012345".parse().unwrap();
        assert_eq!(id.get(), 2_170_000_012_345);
        assert_eq!(id.to_string(), "2170000012345");
        let err = "12x".parse::<CampaignId>().unwrap_err();
        assert!(err.to_string().contains("campaign id"), "{err}");
    }

    #[test]
    fn open_enums_keep_unknown_values() {
        assert_eq!(ConversionType::from_wire("ACTION"), ConversionType::Action);
        assert_eq!(
            ConversionType::from_wire("PHONE_CALL"),
            ConversionType::Other("PHONE_CALL".into())
        );
        assert_eq!(ConversionType::Other("X".into()).as_str(), "X");
        assert_eq!(Channel::Online.as_str(), "online");
        assert_eq!(Channel::from("local"), Channel::Local);
        assert_eq!(ConversionState::from("DELETED"), ConversionState::Deleted);
        assert_eq!(Consent::Granted.to_string(), "GRANTED");
        assert_eq!(EntityType::from("AD_GROUP"), EntityType::AdGroup);
        assert_eq!(DeviceType::from("WATCH"), DeviceType::Other("WATCH".into()));
        assert_eq!(
            SegmentationType::from("FLOODLIGHT"),
            SegmentationType::Floodlight
        );
    }

    #[test]
    fn customer_ids_are_checked_and_normalized() {
        assert_eq!(
            CustomerId::new("123-456-7890").unwrap().as_str(),
            "1234567890"
        );
        assert_eq!(
            CustomerId::new("1234567890").unwrap().as_str(),
            "1234567890"
        );
        assert_eq!(
            " 123-456-7890 ".parse::<CustomerId>().unwrap().as_str(),
            "1234567890"
        );
        assert_eq!(
            CustomerId::new("9".repeat(19)).unwrap().as_str(),
            "9".repeat(19)
        );
        for bad in [
            "",
            "abc",
            "12 3",
            "1/2",
            "a?b",
            "-1",
            "1-",
            "1--2",
            "-",
            "12a",
            "１２",
            &"9".repeat(20),
        ] {
            let e = CustomerId::new(bad).unwrap_err().to_string();
            assert!(
                e.contains("customerId") && e.contains("123-456-7890"),
                "{bad}: {e}"
            );
        }
    }
}

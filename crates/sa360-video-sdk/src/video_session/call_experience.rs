//! The guest's call experience, sent as `QueryStringParameter` (VS-7).

use std::fmt;
use std::str::FromStr;

use super::error::{Error, ValidationError};

/// Microphone at connect (`m`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Microphone {
    /// `m=0`.
    Off,
    /// `m=1`.
    On,
}

/// Camera at connect (`c`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Camera {
    /// `c=0`.
    Off,
    /// `c=1`: back camera on.
    Back,
    /// `c=2`: front camera on.
    Front,
}

/// How the guest joins (`o`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum JoinAs {
    /// `o=0`: as a guest.
    Guest,
    /// `o=1`: as a silent observer.
    SilentObserver,
}

/// Default platform support option (`s`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PlatformSupport {
    /// `s=1`: browser first.
    BrowserFirst,
    /// `s=2`: app only.
    AppOnly,
    /// `s=3`: browser only.
    BrowserOnly,
    /// `s=4`: ask the user.
    AskUser,
}

macro_rules! wire_values {
    ($ty:ident, $key:literal, $expected:literal, $($variant:ident = $value:literal),+) => {
        impl $ty {
            /// The value on the wire.
            pub const fn wire_value(self) -> u8 {
                match self { $($ty::$variant => $value),+ }
            }

            fn from_wire(text: &str) -> Result<Self, CallExperienceParseError> {
                match text {
                    $(_ if text == stringify!($value) => Ok($ty::$variant),)+
                    _ => Err(CallExperienceParseError::InvalidValue {
                        key: $key,
                        value: text.to_owned(),
                        expected: $expected,
                    }),
                }
            }
        }
    };
}

wire_values!(Microphone, 'm', "0 (off) or 1 (on)", Off = 0, On = 1);
wire_values!(
    Camera,
    'c',
    "0 (off), 1 (back) or 2 (front)",
    Off = 0,
    Back = 1,
    Front = 2
);
wire_values!(
    JoinAs,
    'o',
    "0 (guest) or 1 (silent observer)",
    Guest = 0,
    SilentObserver = 1
);
wire_values!(
    PlatformSupport,
    's',
    "1 (browser first), 2 (app only), 3 (browser only) or 4 (ask user)",
    BrowserFirst = 1,
    AppOnly = 2,
    BrowserOnly = 3,
    AskUser = 4
);

/// The guest's call experience; every part is optional and an omitted part
/// takes its default from the service's call experience settings.
///
/// Rendered as `?m=..&c=..&o=..&s=..` with the parts in that order and omitted
/// parts left out; an empty experience is sent as no `QueryStringParameter` at
/// all. Parsing accepts the parts in any order, each at most once.
///
/// ```
/// use sa360_video_sdk::video_session::{CallExperience, Camera, Microphone, PlatformSupport};
///
/// let exp = CallExperience::new()
///     .microphone(Microphone::On)
///     .camera(Camera::Front)
///     .platform_support(PlatformSupport::AskUser);
/// assert_eq!(exp.to_string(), "?m=1&c=2&s=4");
/// assert_eq!("?m=1&c=2&s=4".parse::<CallExperience>()?, exp);
/// assert!(CallExperience::new().render().is_none());
/// assert!("?m=2".parse::<CallExperience>().is_err());
/// # Ok::<(), sa360_video_sdk::video_session::CallExperienceParseError>(())
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct CallExperience {
    /// `m`, or `None` for the default.
    pub microphone: Option<Microphone>,
    /// `c`, or `None` for the default.
    pub camera: Option<Camera>,
    /// `o`, or `None` for the default.
    pub join_as: Option<JoinAs>,
    /// `s`, or `None` for the default.
    pub platform_support: Option<PlatformSupport>,
}

impl CallExperience {
    /// An empty experience: every part takes the service's default.
    pub const fn new() -> Self {
        Self {
            microphone: None,
            camera: None,
            join_as: None,
            platform_support: None,
        }
    }

    /// Sets the microphone (`m`).
    pub const fn microphone(mut self, value: Microphone) -> Self {
        self.microphone = Some(value);
        self
    }

    /// Sets the camera (`c`).
    pub const fn camera(mut self, value: Camera) -> Self {
        self.camera = Some(value);
        self
    }

    /// Sets how the guest joins (`o`).
    pub const fn join_as(mut self, value: JoinAs) -> Self {
        self.join_as = Some(value);
        self
    }

    /// Shorthand for `join_as(JoinAs::SilentObserver)`.
    pub const fn silent_observer(self) -> Self {
        self.join_as(JoinAs::SilentObserver)
    }

    /// Sets the platform support option (`s`).
    pub const fn platform_support(mut self, value: PlatformSupport) -> Self {
        self.platform_support = Some(value);
        self
    }

    /// True when no part is set.
    pub const fn is_empty(&self) -> bool {
        self.microphone.is_none()
            && self.camera.is_none()
            && self.join_as.is_none()
            && self.platform_support.is_none()
    }

    /// The `QueryStringParameter` value, or `None` when the experience is empty.
    pub fn render(&self) -> Option<String> {
        (!self.is_empty()).then(|| self.to_string())
    }
}

impl fmt::Display for CallExperience {
    /// The query string (`?m=1&c=2`), or the empty string when nothing is set.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let parts = [
            ('m', self.microphone.map(Microphone::wire_value)),
            ('c', self.camera.map(Camera::wire_value)),
            ('o', self.join_as.map(JoinAs::wire_value)),
            ('s', self.platform_support.map(PlatformSupport::wire_value)),
        ];
        let mut first = true;
        for (key, value) in parts {
            if let Some(value) = value {
                f.write_str(if first { "?" } else { "&" })?;
                write!(f, "{key}={value}")?;
                first = false;
            }
        }
        Ok(())
    }
}

/// Why a `QueryStringParameter` text did not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum CallExperienceParseError {
    /// A non-empty text must start with `?`.
    #[error("must start with '?' (for example \"?m=1&c=2\")")]
    MissingQuestionMark,
    /// Two `&` in a row, or a trailing `&`.
    #[error("empty part at position {position} (parts are separated by a single '&')")]
    EmptyPart {
        /// 1-based index of the part.
        position: usize,
    },
    /// A part without `=`.
    #[error("part {part:?} has no '=' (expected key=value)")]
    MissingValue {
        /// The part as given.
        part: String,
    },
    /// A key other than `m`, `c`, `o`, `s`.
    #[error("unknown key {key:?} (known keys: m, c, o, s)")]
    UnknownKey {
        /// The key as given.
        key: String,
    },
    /// A key given twice.
    #[error("key '{key}' is given more than once")]
    RepeatedKey {
        /// The key.
        key: char,
    },
    /// A value out of range.
    #[error("'{key}' must be {expected}, not {value:?}")]
    InvalidValue {
        /// The key.
        key: char,
        /// The value as given.
        value: String,
        /// The values allowed.
        expected: &'static str,
    },
}

impl From<CallExperienceParseError> for ValidationError {
    fn from(e: CallExperienceParseError) -> Self {
        ValidationError::new("QueryStringParameter", e.to_string())
    }
}

impl From<CallExperienceParseError> for Error {
    fn from(e: CallExperienceParseError) -> Self {
        Error::Validation(e.into())
    }
}

impl FromStr for CallExperience {
    type Err = CallExperienceParseError;

    /// Parses `?m=1&c=2&o=0&s=1` (any subset, any order). `""` and `"?"` are the
    /// empty experience.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        if s.is_empty() {
            return Ok(Self::new());
        }
        let body = s
            .strip_prefix('?')
            .ok_or(CallExperienceParseError::MissingQuestionMark)?;
        let mut out = Self::new();
        if body.is_empty() {
            return Ok(out);
        }
        for (i, part) in body.split('&').enumerate() {
            if part.is_empty() {
                return Err(CallExperienceParseError::EmptyPart { position: i + 1 });
            }
            let (key, value) =
                part.split_once('=')
                    .ok_or_else(|| CallExperienceParseError::MissingValue {
                        part: part.to_owned(),
                    })?;
            let repeated = |key| CallExperienceParseError::RepeatedKey { key };
            match key {
                "m" if out.microphone.is_some() => return Err(repeated('m')),
                "m" => out.microphone = Some(Microphone::from_wire(value)?),
                "c" if out.camera.is_some() => return Err(repeated('c')),
                "c" => out.camera = Some(Camera::from_wire(value)?),
                "o" if out.join_as.is_some() => return Err(repeated('o')),
                "o" => out.join_as = Some(JoinAs::from_wire(value)?),
                "s" if out.platform_support.is_some() => return Err(repeated('s')),
                "s" => out.platform_support = Some(PlatformSupport::from_wire(value)?),
                other => {
                    return Err(CallExperienceParseError::UnknownKey {
                        key: other.to_owned(),
                    });
                }
            }
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_parse_error_converts_into_the_service_error() {
        let e: Error = "m=1".parse::<CallExperience>().unwrap_err().into();
        assert!(
            matches!(&e, Error::Validation(v) if v.field == "QueryStringParameter"),
            "{e:?}"
        );
    }

    #[test]
    fn renders_in_order_and_skips_omitted_parts() {
        let all = CallExperience::new()
            .platform_support(PlatformSupport::BrowserFirst)
            .silent_observer()
            .camera(Camera::Off)
            .microphone(Microphone::Off);
        assert_eq!(all.to_string(), "?m=0&c=0&o=1&s=1");
        assert_eq!(
            CallExperience::new()
                .join_as(JoinAs::Guest)
                .render()
                .as_deref(),
            Some("?o=0")
        );
        assert_eq!(CallExperience::new().to_string(), "");
    }

    #[test]
    fn parse_errors_are_specific() {
        use CallExperienceParseError as E;
        let p = |s: &str| s.parse::<CallExperience>();
        assert_eq!(p("m=1"), Err(E::MissingQuestionMark));
        assert_eq!(p("?m=1&&c=1"), Err(E::EmptyPart { position: 2 }));
        assert_eq!(p("?m=1&"), Err(E::EmptyPart { position: 2 }));
        assert_eq!(p("?m"), Err(E::MissingValue { part: "m".into() }));
        assert_eq!(p("?x=1"), Err(E::UnknownKey { key: "x".into() }));
        assert_eq!(p("?c=1&c=2"), Err(E::RepeatedKey { key: 'c' }));
        assert!(matches!(p("?s=5"), Err(E::InvalidValue { key: 's', .. })));
        assert!(matches!(p("?m=01"), Err(E::InvalidValue { key: 'm', .. })));
        assert_eq!(p("?s=2&m=1").unwrap().to_string(), "?m=1&s=2");
        assert_eq!(p("?").unwrap(), CallExperience::new());
        let v: ValidationError = p("?m=9").unwrap_err().into();
        assert_eq!(v.field, "QueryStringParameter");
    }
}

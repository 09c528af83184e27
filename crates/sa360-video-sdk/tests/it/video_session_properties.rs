//! Property tests for the video session builders and validators.

use proptest::prelude::*;
use sa360_video_sdk::video_session::{
    CallExperience, Camera, CountryCode, Credentials, EmailAddress, JoinAs, Message, Microphone,
    MobileNumber, PlatformSupport,
};

fn experience() -> impl Strategy<Value = CallExperience> {
    (
        prop::option::of(prop_oneof![Just(Microphone::Off), Just(Microphone::On)]),
        prop::option::of(prop_oneof![
            Just(Camera::Off),
            Just(Camera::Back),
            Just(Camera::Front)
        ]),
        prop::option::of(prop_oneof![
            Just(JoinAs::Guest),
            Just(JoinAs::SilentObserver)
        ]),
        prop::option::of(prop_oneof![
            Just(PlatformSupport::BrowserFirst),
            Just(PlatformSupport::AppOnly),
            Just(PlatformSupport::BrowserOnly),
            Just(PlatformSupport::AskUser)
        ]),
    )
        .prop_map(|(m, c, o, s)| CallExperience {
            microphone: m,
            camera: c,
            join_as: o,
            platform_support: s,
        })
}

proptest! {
    /// Render then parse gives the same experience, and the rendering follows
    /// VS-7: `?` then `key=digit` pairs in the order m, c, o, s; nothing when empty.
    #[test]
    fn call_experience_round_trips(exp in experience()) {
        let text = exp.to_string();
        prop_assert_eq!(text.parse::<CallExperience>().unwrap(), exp);
        prop_assert_eq!(exp.render().is_none(), exp.is_empty());
        if !exp.is_empty() {
            let body = text.strip_prefix('?').unwrap();
            let keys: String = body.split('&').map(|p| {
                let (k, v) = p.split_once('=').unwrap();
                assert_eq!(v.len(), 1);
                assert!(v.as_bytes()[0].is_ascii_digit());
                k.to_owned()
            }).collect();
            prop_assert!(is_subsequence(&keys, "mcos"), "{}", keys);
        }
    }

    /// Parsing accepts any order of the parts and renders them canonically.
    #[test]
    fn call_experience_parse_ignores_order(exp in experience(), seed in any::<u64>()) {
        let text = exp.to_string();
        if let Some(body) = text.strip_prefix('?') {
            let mut parts: Vec<&str> = body.split('&').collect();
            let n = parts.len();
            parts.rotate_left((seed as usize) % n);
            let shuffled = format!("?{}", parts.join("&"));
            prop_assert_eq!(shuffled.parse::<CallExperience>().unwrap(), exp);
        }
    }

    /// Arbitrary text never panics the parser, and whatever parses renders back
    /// to text that parses to the same value.
    #[test]
    fn call_experience_parse_is_total(text in "\\??[mcos=0-9&x]{0,16}") {
        if let Ok(exp) = text.parse::<CallExperience>() {
            prop_assert_eq!(exp.to_string().parse::<CallExperience>().unwrap(), exp);
        }
    }

    /// Messages: accepted exactly when at most 100 characters (not bytes).
    #[test]
    fn message_length_is_counted_in_characters(text in "\\PC{0,140}") {
        let chars = text.chars().count();
        match Message::new(text.clone()) {
            Ok(m) => { prop_assert!(chars <= 100); prop_assert_eq!(m.as_str(), text.as_str()); }
            Err(e) => { prop_assert!(chars > 100); prop_assert_eq!(e.as_validation().unwrap().field, "Message"); }
        }
    }

    /// Well-formed addresses are accepted exactly when at most 255 characters.
    #[test]
    fn email_length_limit(local in "[a-z0-9_+-]{1,64}", labels in prop::collection::vec("[a-z0-9]{1,63}", 1..5), tld in "[a-z]{2,6}") {
        let address = format!("{local}@{}.{tld}", labels.join("."));
        let chars = address.chars().count();
        match EmailAddress::new(address.clone()) {
            Ok(e) => { prop_assert!(chars <= 255); prop_assert_eq!(e.as_str(), address.as_str()); }
            Err(e) => { prop_assert!(chars > 255, "{}", e); prop_assert_eq!(e.as_validation().unwrap().field, "EmailAddress"); }
        }
    }

    /// Text without exactly one '@' is never an address.
    #[test]
    fn email_needs_one_at(text in "[a-z.@]{0,30}") {
        if text.matches('@').count() != 1 {
            prop_assert_eq!(EmailAddress::new(text).unwrap_err().as_validation().unwrap().field, "EmailAddress");
        }
    }

    /// Mobile numbers: 6 to 15 digits after an optional '+' (VS-6), and with the feature
    /// `phone-numbers` a valid number of the country, sent in E.164 (VS-21).
    #[test]
    fn mobile_digit_count(plus in any::<bool>(), digits in "[0-9]{0,20}") {
        let text = format!("{}{digits}", if plus { "+" } else { "" });
        let us = CountryCode::new("US").unwrap();
        match MobileNumber::new(us, &text) {
            Ok(m) => {
                prop_assert!((6..=15).contains(&digits.len()));
                if cfg!(feature = "phone-numbers") {
                    prop_assert!(m.number().starts_with("+1") && m.number().len() == 12, "{}", m.number());
                } else {
                    prop_assert_eq!(m.number(), text.as_str());
                }
            }
            Err(e) => {
                prop_assert!(!(6..=15).contains(&digits.len()) || cfg!(feature = "phone-numbers"));
                prop_assert_eq!(e.as_validation().unwrap().field, "MobileNo");
            }
        }
    }

    /// Every spelling of one US number (with or without +1, spaces, hyphens) is sent as
    /// the same E.164 number.
    #[cfg(feature = "phone-numbers")]
    #[test]
    fn spellings_of_one_number_are_sent_alike(plus_one in any::<bool>(), sep in "[ -]?") {
        let text = format!("{}201{sep}555{sep}0123", if plus_one { "+1 " } else { "" });
        let m = MobileNumber::new(CountryCode::new("US").unwrap(), &text).unwrap();
        prop_assert_eq!(m.number(), "+12015550123");
    }

    /// Country codes: two ASCII letters, stored upper-case; anything else refused.
    #[test]
    fn country_code(text in "[a-zA-Z0-9]{0,3}") {
        match CountryCode::new(&text) {
            Ok(c) => {
                prop_assert!(text.len() == 2 && text.bytes().all(|b| b.is_ascii_alphabetic()));
                prop_assert_eq!(c.as_str(), text.to_ascii_uppercase());
            }
            Err(e) => prop_assert_eq!(e.as_validation().unwrap().field, "IsoCode"),
        }
    }

    /// Neither `Debug` of credentials nor the account key shows the secret key or
    /// the password; the key is stable and distinguishes accounts.
    #[test]
    fn credentials_never_print_secrets(key in "[A-Za-z0-9]{8,40}", user in "[a-z]{1,12}", pw in "[A-Za-z0-9!#%]{8,40}") {
        let creds = Credentials::new(key.clone(), user.clone(), pw.clone()).unwrap();
        let shown = format!("{creds:?} {creds:#?}");
        prop_assert!(!shown.contains(&key));
        prop_assert!(!shown.contains(&pw));
        let account = creds.account_key();
        prop_assert!(!account.to_string().contains(&key));
        prop_assert_eq!(account.to_string().parse::<sa360_video_sdk::video_session::AccountKey>().unwrap(), account);
        let same = Credentials::new(key.clone(), user.to_uppercase(), "other-password").unwrap();
        prop_assert_eq!(same.account_key(), account);
        let other = Credentials::new(format!("{key}x"), user, pw).unwrap();
        prop_assert_ne!(other.account_key(), account);
    }
}

fn is_subsequence(needle: &str, hay: &str) -> bool {
    let mut it = hay.chars();
    needle.chars().all(|c| it.any(|h| h == c))
}

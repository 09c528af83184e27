//! Login credentials, the account key the lockout guard counts by, and the session.

use std::fmt;
use std::str::FromStr;

use secrecy::{ExposeSecret, SecretString};

use super::error::Error;

/// What a user logs in with: the domain secret key, a user name and a password.
///
/// The secret key and the password are [`SecretString`]s: zeroized on drop, never
/// shown by `Debug` (which prints `[REDACTED]`), never serialized, never put in an
/// error or a log line. There is deliberately no `Display`.
///
/// ```
/// use sa360_video_sdk::video_session::Credentials;
///
/// let creds = Credentials::new("sk-live-1234", "alice", "correct horse")?;
/// let shown = format!("{creds:?}");
/// assert!(shown.contains("alice") && shown.contains("[REDACTED]"));
/// assert!(!shown.contains("sk-live-1234") && !shown.contains("correct horse"));
/// # Ok::<(), sa360_video_sdk::video_session::Error>(())
/// ```
pub struct Credentials {
    secret_key: SecretString,
    user_name: String,
    password: SecretString,
    /// Derived once (a SHA-256 over the secret key and the user name), not at every login.
    account_key: AccountKey,
}

impl Credentials {
    /// Checks and wraps the three parts.
    ///
    /// Refused (naming the wire field): an empty `SecretKey`, a `UserName` that is
    /// empty, has surrounding whitespace or control characters, an empty `Password`.
    /// The secrets are moved into [`SecretString`]s straight away; pass an owned
    /// `String` (not a copy) so no other copy stays behind.
    pub fn new(
        secret_key: impl Into<SecretString>,
        user_name: impl Into<String>,
        password: impl Into<SecretString>,
    ) -> Result<Self, Error> {
        let secret_key = secret_key.into();
        let password = password.into();
        let user_name = user_name.into();
        if secret_key.expose_secret().is_empty() {
            return Err(Error::invalid("SecretKey", "must not be empty"));
        }
        if user_name.trim().is_empty() {
            return Err(Error::invalid("UserName", "must not be empty"));
        }
        if user_name.trim() != user_name {
            return Err(Error::invalid(
                "UserName",
                "must not start or end with whitespace",
            ));
        }
        if user_name.chars().any(char::is_control) {
            return Err(Error::invalid(
                "UserName",
                "must not contain control characters",
            ));
        }
        if password.expose_secret().is_empty() {
            return Err(Error::invalid("Password", "must not be empty"));
        }
        let account_key = AccountKey::derive(secret_key.expose_secret(), &user_name);
        Ok(Self {
            secret_key,
            user_name,
            password,
            account_key,
        })
    }

    /// The user name (not a secret).
    pub fn user_name(&self) -> &str {
        &self.user_name
    }

    /// The key the lockout guard counts failures by; see [`AccountKey`].
    pub fn account_key(&self) -> AccountKey {
        self.account_key
    }

    pub(crate) fn secret_key(&self) -> &SecretString {
        &self.secret_key
    }

    pub(crate) fn password(&self) -> &SecretString {
        &self.password
    }
}

impl fmt::Debug for Credentials {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Credentials")
            .field("secret_key", &"[REDACTED]")
            .field("user_name", &self.user_name)
            .field("password", &"[REDACTED]")
            .finish()
    }
}

/// Identifies an account (domain + user) without revealing the secret key.
///
/// The key is SHA-256 over a fixed label, the secret key (length-prefixed) and
/// the user name in lower case:
/// `SHA-256("facade/video-session/account/v1\0" || u64be(len(secret_key)) || secret_key || lowercase(user_name))`.
///
/// The secret key stands for the domain (the service identifies the domain by
/// it). The user name is lower-cased so that a service that compares user names
/// case-insensitively can never see more failures than the SDK counts (two
/// spellings share one count, which only errs on the safe side). Stores keep only
/// this hash, shown as 64 lower-case hex digits; it cannot be turned back into the
/// secret key, whose entropy makes guessing impractical.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct AccountKey([u8; 32]);

impl std::hash::Hash for AccountKey {
    /// Hashes the first 8 bytes only: the key is already a SHA-256 digest, so they are as
    /// evenly spread as all 32 (and a keyed hasher still hides them), while feeding all 32
    /// (plus a length prefix) cost the guard's maps about 1 000 instructions per login.
    /// Equal keys have equal first bytes, so this agrees with `Eq`.
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        let mut first = [0u8; 8];
        first.copy_from_slice(&self.0[..8]);
        state.write_u64(u64::from_le_bytes(first));
    }
}

impl AccountKey {
    const LABEL: &'static [u8] = b"facade/video-session/account/v1\0";

    fn derive(secret_key: &str, user_name: &str) -> Self {
        let mut ctx = ring::digest::Context::new(&ring::digest::SHA256);
        ctx.update(Self::LABEL);
        ctx.update(&(secret_key.len() as u64).to_be_bytes());
        ctx.update(secret_key.as_bytes());
        ctx.update(user_name.to_lowercase().as_bytes());
        let digest = ctx.finish();
        let mut out = [0u8; 32];
        out.copy_from_slice(digest.as_ref());
        Self(out)
    }

    /// The raw 32 bytes.
    pub fn as_bytes(&self) -> &[u8; 32] {
        &self.0
    }

    /// The first 12 hex digits, enough to tell accounts apart in logs.
    pub fn short(&self) -> String {
        // The first 12 hex digits of `Display`, without formatting all 64
        // (this runs on every login, for its log fields).
        const HEX: &[u8; 16] = b"0123456789abcdef";
        let mut out = String::with_capacity(12);
        for b in &self.0[..6] {
            out.push(char::from(HEX[usize::from(b >> 4)]));
            out.push(char::from(HEX[usize::from(b & 0xf)]));
        }
        out
    }
}

impl fmt::Display for AccountKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for b in self.0 {
            write!(f, "{b:02x}")?;
        }
        Ok(())
    }
}

impl fmt::Debug for AccountKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "AccountKey({})", self.short())
    }
}

impl FromStr for AccountKey {
    type Err = Error;

    /// Parses exactly 64 lower-case hex digits (as written by `Display`); any
    /// other spelling is refused, so a store never holds two names for one
    /// account.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let bad = || Error::invalid("AccountKey", "must be 64 lower-case hexadecimal digits");
        if s.len() != 64 || !s.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')) {
            return Err(bad());
        }
        let mut out = [0u8; 32];
        for (i, byte) in out.iter_mut().enumerate() {
            *byte = u8::from_str_radix(&s[2 * i..2 * i + 2], 16).map_err(|_| bad())?;
        }
        Ok(Self(out))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_is_the_start_of_the_full_hex() {
        for (key, user) in [("sk", "alice"), ("sk-live-1234", "Bob"), ("x", "y")] {
            let k = Credentials::new(key, user, "pw").unwrap().account_key();
            assert_eq!(k.short(), k.to_string()[..12]);
        }
    }

    #[test]
    fn validation_names_the_field() {
        let e = Credentials::new("", "a", "p").unwrap_err();
        assert_eq!(e.as_validation().unwrap().field, "SecretKey");
        assert_eq!(
            Credentials::new("k", " ", "p")
                .unwrap_err()
                .as_validation()
                .unwrap()
                .field,
            "UserName"
        );
        assert_eq!(
            Credentials::new("k", " a", "p")
                .unwrap_err()
                .as_validation()
                .unwrap()
                .field,
            "UserName"
        );
        assert_eq!(
            Credentials::new("k", "a", "")
                .unwrap_err()
                .as_validation()
                .unwrap()
                .field,
            "Password"
        );
    }

    #[test]
    fn account_key_depends_on_key_and_lowercased_user() {
        let a = Credentials::new("k1", "Alice", "p").unwrap().account_key();
        let b = Credentials::new("k1", "alice", "other")
            .unwrap()
            .account_key();
        let c = Credentials::new("k2", "alice", "p").unwrap().account_key();
        // Length prefix: ("k1a", "lice") differs from ("k1", "alice").
        let d = Credentials::new("k1a", "lice", "p").unwrap().account_key();
        assert_eq!(a, b);
        assert_ne!(a, c);
        assert_ne!(a, d);
        let text = a.to_string();
        assert_eq!(text.len(), 64);
        assert_eq!(text.parse::<AccountKey>().unwrap(), a);
        assert!(!text.contains("k1"));
        assert!("xyz".parse::<AccountKey>().is_err());
        assert!(text.to_uppercase().parse::<AccountKey>().is_err());
    }
}

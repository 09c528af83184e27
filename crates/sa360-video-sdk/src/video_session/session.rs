//! The result of a successful login: user details and tokens.

use std::fmt;

use secrecy::SecretString;

/// The user details a login returns (everything but the tokens).
///
/// Optional fields are the ones the service may leave out or send as `null`.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct UserDetails {
    /// The user's ID.
    pub user_id: uuid::Uuid,
    /// ID of the user's domain.
    pub domain_id: i64,
    /// ID of this login.
    pub login_id: i64,
    /// First name.
    pub first_name: Option<String>,
    /// Last name.
    pub last_name: Option<String>,
    /// Address or name of the profile image.
    pub profile_image: Option<String>,
    /// The user's country code.
    pub country_code: Option<String>,
    /// The user's phone number.
    pub phone_no: Option<String>,
    /// The user's job role.
    pub job_role: Option<String>,
    /// Name of the user's domain.
    pub domain_name: Option<String>,
    /// The user name.
    pub user_name: Option<String>,
    /// Address for notifications.
    pub notification_email: Option<String>,
    /// The user's role.
    pub role_code: Option<String>,
}

impl UserDetails {
    /// Details with only the required IDs set.
    pub fn new(user_id: uuid::Uuid, domain_id: i64, login_id: i64) -> Self {
        Self {
            user_id,
            domain_id,
            login_id,
            first_name: None,
            last_name: None,
            profile_image: None,
            country_code: None,
            phone_no: None,
            job_role: None,
            domain_name: None,
            user_name: None,
            notification_email: None,
            role_code: None,
        }
    }
}

/// A logged-in user: details and tokens.
///
/// The `UserToken` (sent with every invitation) and the `RefreshToken` are
/// secrets: `Debug` prints `[REDACTED]`, they are zeroized on drop, and they are
/// read only through [`secrecy::ExposeSecret`]. The token's lifetime is not
/// documented (VS-8): when an invitation answers
/// [`Error::Unauthorized`](super::Error::Unauthorized), log in again.
///
/// A CLI that keeps a session between runs stores the token itself (somewhere
/// only the user can read) and rebuilds the session with [`Session::new`].
pub struct Session {
    user: UserDetails,
    user_token: SecretString,
    refresh_token: Option<SecretString>,
}

impl Session {
    /// A session from its parts (for example a token saved by a CLI).
    pub fn new(
        user: UserDetails,
        user_token: SecretString,
        refresh_token: Option<SecretString>,
    ) -> Self {
        Self {
            user,
            user_token,
            refresh_token,
        }
    }

    /// The user details.
    pub fn user(&self) -> &UserDetails {
        &self.user
    }

    /// The `UserToken` sent in the header of that name.
    pub fn user_token(&self) -> &SecretString {
        &self.user_token
    }

    /// The `RefreshToken`, when the service sent one (its use is not documented).
    pub fn refresh_token(&self) -> Option<&SecretString> {
        self.refresh_token.as_ref()
    }
}

impl fmt::Debug for Session {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Session")
            .field("user", &self.user)
            .field("user_token", &"[REDACTED]")
            .field(
                "refresh_token",
                &self.refresh_token.as_ref().map(|_| "[REDACTED]"),
            )
            .finish()
    }
}

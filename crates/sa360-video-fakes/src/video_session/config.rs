//! Configuration and seeded demo data of the video session fake.

use uuid::Uuid;

use crate::faults::Faults;
use crate::util::{hash3, mix};

/// A domain (tenant) of the video service.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Domain {
    /// `DomainId` of the login response.
    pub id: i64,
    /// `DomainName` of the login response.
    pub name: String,
    /// The secret key logins must present.
    pub secret_key: String,
    /// Logins to an inactive domain fail with 403 `DomainInactive`.
    pub active: bool,
}

/// A user of a domain.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct User {
    /// The user's domain.
    pub domain_id: i64,
    /// The login name (case-sensitive).
    pub user_name: String,
    /// The password.
    pub password: String,
    /// `UserId`.
    pub user_id: Uuid,
    /// `FirstName`.
    pub first_name: Option<String>,
    /// `LastName`.
    pub last_name: Option<String>,
    /// `ProfileImage`.
    pub profile_image: Option<String>,
    /// `CountryCode`.
    pub country_code: Option<String>,
    /// `PhoneNo`.
    pub phone_no: Option<String>,
    /// `JobRole`.
    pub job_role: Option<String>,
    /// `NotificationEmail`.
    pub notification_email: Option<String>,
    /// `RoleCode`.
    pub role_code: Option<String>,
}

/// Everything the video session fake is started with. [`VideoSessionConfig::seeded`] derives demo
/// data from a seed; the default uses seed 42.
#[derive(Clone, Debug)]
pub struct VideoSessionConfig {
    /// Seed of generated values (tokens, login IDs) and of the demo data.
    pub seed: u64,
    /// The domains.
    pub domains: Vec<Domain>,
    /// The users.
    pub users: Vec<User>,
    /// Open session IDs that invitations may name.
    pub sessions: Vec<String>,
    /// The fixed WhatsApp invitation text (at most 100 characters).
    pub whatsapp_text: String,
    /// The text sent when an SMS or e-mail invitation has no `Message`.
    pub default_message: String,
    /// Initial fault configuration.
    pub faults: Faults,
    /// Port to listen on (on 127.0.0.1); 0 picks a free one.
    pub port: u16,
}

impl Default for VideoSessionConfig {
    fn default() -> Self {
        Self::seeded(42)
    }
}

fn uuid_from(seed: u64, n: u64) -> Uuid {
    let a = hash3(seed, n, 0x0000_55E4);
    let b = hash3(seed, n, 0x0000_55E5);
    let mut bytes = [0u8; 16];
    bytes[..8].copy_from_slice(&a.to_be_bytes());
    bytes[8..].copy_from_slice(&b.to_be_bytes());
    uuid::Builder::from_random_bytes(bytes).into_uuid()
}

impl VideoSessionConfig {
    /// Demo data derived from `seed`: an active domain 1001 with users `demo.user` and
    /// `second.user`, an inactive domain 1002 with user `idle.user`, and two open sessions.
    #[must_use]
    pub fn seeded(seed: u64) -> Self {
        let h = |n: u64| mix(seed ^ mix(n));
        let user = |n: u64, domain_id: i64, name: &str, first: &str, last: &str, role: &str| User {
            domain_id,
            user_name: name.to_owned(),
            password: format!("Pw!{:010x}", h(100 + n) & 0xFF_FFFF_FFFF),
            user_id: uuid_from(seed, n),
            first_name: Some(first.to_owned()),
            last_name: Some(last.to_owned()),
            profile_image: Some(format!(
                "https://cdn.video-session.example.com/profiles/{}.png",
                uuid_from(seed, n)
            )),
            country_code: Some("US".to_owned()),
            phone_no: Some(format!("+1555{:07}", h(200 + n) % 10_000_000)),
            job_role: Some(role.to_owned()),
            notification_email: Some(format!("{name}@clinic.example.com")),
            role_code: Some(if n == 1 { "ADMIN" } else { "AGENT" }.to_owned()),
        };
        Self {
            seed,
            domains: vec![
                Domain {
                    id: 1001,
                    name: "Demo Clinic".to_owned(),
                    secret_key: format!("sk-demo-{:016x}", h(1)),
                    active: true,
                },
                Domain {
                    id: 1002,
                    name: "Dormant Practice".to_owned(),
                    secret_key: format!("sk-inactive-{:016x}", h(2)),
                    active: false,
                },
            ],
            users: vec![
                user(1, 1001, "demo.user", "Dana", "Demo", "Care Coordinator"),
                user(2, 1001, "second.user", "Sam", "Second", "Physician"),
                user(3, 1002, "idle.user", "Ira", "Idle", "Receptionist"),
            ],
            sessions: vec![
                format!("sess-{:012x}", h(10) & 0xFFFF_FFFF_FFFF),
                format!("sess-{:012x}", h(11) & 0xFFFF_FFFF_FFFF),
            ],
            whatsapp_text: "You are invited to a video session. Tap the link to join.".to_owned(),
            default_message: "You are invited to join a video session.".to_owned(),
            faults: Faults::none(),
            port: 0,
        }
    }

    /// Checks the configuration.
    ///
    /// # Errors
    /// A readable description of the first problem.
    pub fn validate(&self) -> Result<(), String> {
        if self.whatsapp_text.chars().count() > 100 || self.default_message.chars().count() > 100 {
            return Err("invitation texts must be at most 100 characters".to_owned());
        }
        for user in &self.users {
            if !self.domains.iter().any(|d| d.id == user.domain_id) {
                return Err(format!(
                    "user {} names unknown domain {}",
                    user.user_name, user.domain_id
                ));
            }
        }
        for (i, d) in self.domains.iter().enumerate() {
            if self.domains[..i]
                .iter()
                .any(|e| e.id == d.id || e.secret_key == d.secret_key)
            {
                return Err(format!("duplicate domain ID or secret key: {}", d.id));
            }
        }
        self.faults.validate()
    }
}

/// The demo credentials of a fake: what the SDK tests and the CLI need to log in and invite.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DemoCredentials {
    /// Secret key of the first active domain.
    pub secret_key: String,
    /// `DomainId` of that domain.
    pub domain_id: i64,
    /// The first user of that domain.
    pub user_name: String,
    /// That user's password.
    pub password: String,
    /// The first open session.
    pub session_id: String,
    /// Secret key of the first inactive domain (logins get 403 `DomainInactive`), if any.
    pub inactive_secret_key: Option<String>,
    /// A user of the inactive domain, if any.
    pub inactive_user_name: Option<String>,
    /// That user's password.
    pub inactive_password: Option<String>,
}

impl DemoCredentials {
    pub(crate) fn from_config(config: &VideoSessionConfig) -> Option<Self> {
        let (domain, user) = config.domains.iter().filter(|d| d.active).find_map(|d| {
            config
                .users
                .iter()
                .find(|u| u.domain_id == d.id)
                .map(|u| (d, u))
        })?;
        let inactive = config.domains.iter().find(|d| !d.active);
        let inactive_user =
            inactive.and_then(|d| config.users.iter().find(|u| u.domain_id == d.id));
        Some(Self {
            secret_key: domain.secret_key.clone(),
            domain_id: domain.id,
            user_name: user.user_name.clone(),
            password: user.password.clone(),
            session_id: config.sessions.first()?.clone(),
            inactive_secret_key: inactive.map(|d| d.secret_key.clone()),
            inactive_user_name: inactive_user.map(|u| u.user_name.clone()),
            inactive_password: inactive_user.map(|u| u.password.clone()),
        })
    }
}

//! Files in the state directory: the video session (and the tour's lockout count).
//!
//! Both are written only by their owner's user through [`private_file`]: the
//! directory is created 0700, the files 0600, written to a temporary file and
//! renamed into place; a file others can read or a directory others can change
//! is refused with a `chmod` hint.

use std::path::{Path, PathBuf};

#[cfg(feature = "fakes")]
use sa360_video_sdk::video_session::FileStore;
use sa360_video_sdk::video_session::{Session, UserDetails};
use secrecy::{ExposeSecret as _, SecretString};
use serde::{Deserialize, Serialize};

use crate::error::{AppError, AppResult};
use sa360_video_private_file::{self as private_file, PrivateFileError};

const SESSION_FORMAT: &str = "apictl.video.session/1";

/// The state directory and the files in it.
#[derive(Debug, Clone)]
pub struct StateDir {
    dir: PathBuf,
}

impl StateDir {
    /// The state directory at `dir` (created on first write).
    pub fn new(dir: PathBuf) -> Self {
        Self { dir }
    }

    /// The directory.
    pub fn path(&self) -> &Path {
        &self.dir
    }

    /// A video login lockout store in this directory (the SDK's
    /// [`FileStore`]: 0600, hashed account keys, a lock file beside it). Only
    /// the tour uses it, in its temporary directory; the commands use the
    /// per-user default every application shares ([`FileStore::per_user`]).
    #[cfg(feature = "fakes")]
    pub fn lockout_store(&self) -> FileStore {
        FileStore::new(self.dir.join("video-lockout.json"))
    }

    /// The file of the saved video session.
    pub fn session_path(&self) -> PathBuf {
        self.dir.join("video-session.json")
    }

    /// Saves a session after a login.
    pub fn save_session(&self, base_url: &str, session: &Session) -> AppResult<PathBuf> {
        let user = session.user();
        let file = SessionFile {
            format: SESSION_FORMAT.to_owned(),
            base_url: base_url.to_owned(),
            user_token: session.user_token().expose_secret().to_owned(),
            refresh_token: session
                .refresh_token()
                .map(|t| t.expose_secret().to_owned()),
            user_id: user.user_id.to_string(),
            domain_id: user.domain_id,
            login_id: user.login_id,
            user_name: user.user_name.clone(),
            first_name: user.first_name.clone(),
            last_name: user.last_name.clone(),
            domain_name: user.domain_name.clone(),
        };
        let text = serde_json::to_string_pretty(&file)
            .map_err(|e| AppError::new(format!("cannot encode the session: {e}")))?;
        let path = self.session_path();
        write_private(&path, text.as_bytes())?;
        Ok(path)
    }

    /// Loads the saved session: its service URL and the session.
    pub fn load_session(&self) -> AppResult<(String, Session)> {
        let path = self.session_path();
        let Some(bytes) = private_file::read(&path, MAX_SESSION_BYTES).map_err(private_error)?
        else {
            return Err(AppError::auth(format!(
                "not logged in: no saved session in {}",
                self.dir.display()
            ))
            .hint("run `apictl video login` first (with the same --state-dir)"));
        };
        let text = String::from_utf8_lossy(&bytes);
        let broken = || {
            AppError::auth(format!("{} is not a saved session", path.display()))
                .hint("run `apictl video login` again to replace it")
        };
        let file: SessionFile = serde_json::from_str(&text).map_err(|_| broken())?;
        if file.format != SESSION_FORMAT {
            return Err(broken());
        }
        let user_id = uuid::Uuid::parse_str(&file.user_id).map_err(|_| broken())?;
        let mut user = UserDetails::new(user_id, file.domain_id, file.login_id);
        user.user_name = file.user_name;
        user.first_name = file.first_name;
        user.last_name = file.last_name;
        user.domain_name = file.domain_name;
        let session = Session::new(
            user,
            SecretString::from(file.user_token),
            file.refresh_token.map(SecretString::from),
        );
        Ok((file.base_url, session))
    }

    /// Removes the saved session (after the service refused its token).
    pub fn forget_session(&self) {
        let _ = std::fs::remove_file(self.session_path());
    }
}

/// What `video-session.json` holds. The token is the only secret; the file is 0600.
#[derive(Serialize, Deserialize)]
struct SessionFile {
    format: String,
    base_url: String,
    user_token: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    refresh_token: Option<String>,
    user_id: String,
    domain_id: i64,
    login_id: i64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    user_name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    first_name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    last_name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    domain_name: Option<String>,
}

/// Writes `bytes` to `path` through [`private_file`] (0600 file renamed into
/// place, 0700 directory, refused when others can change the directory).
pub fn write_private(path: &Path, bytes: &[u8]) -> AppResult<()> {
    private_file::write(path, bytes).map_err(private_error)
}

/// A private-file error as an `error:` line with a hint that names the fix.
fn private_error(e: PrivateFileError) -> AppError {
    let hint = match &e {
        PrivateFileError::TooOpen { .. } => {
            "the state directory holds your session token and login count: only you may read or change it"
        }
        PrivateFileError::Io { .. } => {
            "check the state directory (--state-dir or APICTL_STATE_DIR) exists and is yours"
        }
    };
    AppError::new(e.to_string()).hint(hint)
}

/// The largest session file read.
const MAX_SESSION_BYTES: u64 = 64 * 1024;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn session_round_trips_through_a_private_file() {
        let dir = tempfile::tempdir().unwrap();
        let state = StateDir::new(dir.path().join("nested"));
        let mut user = UserDetails::new(uuid::Uuid::nil(), 1001, 7);
        user.user_name = Some("demo.user".into());
        let session = Session::new(user, SecretString::from("tok-123"), None);
        let path = state.save_session("http://127.0.0.1:9", &session).unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&path).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
            let mode = std::fs::metadata(state.path())
                .unwrap()
                .permissions()
                .mode();
            assert_eq!(mode & 0o777, 0o700);
        }
        let (url, loaded) = state.load_session().unwrap();
        assert_eq!(url, "http://127.0.0.1:9");
        assert_eq!(loaded.user_token().expose_secret(), "tok-123");
        assert_eq!(loaded.user().user_name.as_deref(), Some("demo.user"));
        state.forget_session();
        assert!(
            state
                .load_session()
                .unwrap_err()
                .message
                .contains("not logged in")
        );
    }

    #[cfg(unix)]
    #[test]
    fn a_session_file_others_can_read_is_refused() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let state = StateDir::new(dir.path().join("s"));
        let user = UserDetails::new(uuid::Uuid::nil(), 1, 2);
        let session = Session::new(user, SecretString::from("tok"), None);
        let path = state.save_session("http://127.0.0.1:9", &session).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        let e = state.load_session().unwrap_err();
        assert!(e.message.contains("0644"), "{}", e.message);
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
        std::fs::set_permissions(state.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
        let e = state.load_session().unwrap_err();
        assert!(e.message.contains("0777"), "{}", e.message);
    }
}

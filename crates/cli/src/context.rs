//! What every command needs: output mode, the config file, the state directory.

use std::io::Write as _;
use std::path::PathBuf;

use crate::cli::GlobalArgs;
use crate::config::{ConfigFile, state_dir};
use crate::error::{AppError, AppResult};
use crate::state::StateDir;

/// Settings shared by all commands.
#[derive(Debug)]
pub struct Ctx {
    /// `--json`: machine output on stdout.
    pub json: bool,
    /// The config file (empty when there is none).
    pub config: ConfigFile,
    state_dir: Option<PathBuf>,
}

impl Ctx {
    /// Reads the config file named by the global options (or the default one).
    pub fn load(global: &GlobalArgs) -> AppResult<Self> {
        Ok(Self {
            json: global.json,
            config: ConfigFile::load(global.config.as_deref())?,
            state_dir: global.state_dir.clone(),
        })
    }

    /// The state directory.
    pub fn state(&self) -> AppResult<StateDir> {
        Ok(StateDir::new(state_dir(self.state_dir.as_deref())?))
    }
}

/// Prints one JSON value on stdout.
pub fn print_json(value: &serde_json::Value) -> AppResult<()> {
    let mut out = std::io::stdout().lock();
    serde_json::to_writer_pretty(&mut out, value)
        .map_err(|e| AppError::new(format!("cannot write to stdout: {e}")))?;
    writeln!(out).map_err(|e| AppError::new(format!("cannot write to stdout: {e}")))
}

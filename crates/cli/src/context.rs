//! What every command needs: output mode, the config file, the state directory.

use std::collections::BTreeSet;
use std::io::Write as _;
use std::path::PathBuf;

use clap::parser::ValueSource;

use crate::cli::GlobalArgs;
use crate::config::{ConfigFile, state_dir};
use crate::error::AppResult;
use crate::state::StateDir;

/// Settings shared by all commands.
#[derive(Debug)]
pub struct Ctx {
    /// `--json`: machine output on stdout.
    pub json: bool,
    /// The config file (empty when there is none).
    pub config: ConfigFile,
    state_dir: Option<PathBuf>,
    /// The ids of the options typed on the command line (not taken from the
    /// environment or a default), e.g. `customer_id`.
    typed: BTreeSet<String>,
}

impl Ctx {
    /// Reads the config file named by the global options (or the default
    /// one); `matches` tells which options were typed on the command line.
    pub fn load(global: &GlobalArgs, matches: &clap::ArgMatches) -> AppResult<Self> {
        Ok(Self {
            json: global.json,
            config: ConfigFile::load(global.config.as_deref())?,
            state_dir: global.state_dir.clone(),
            typed: typed_options(matches),
        })
    }

    /// Whether the option `id` (its field name, e.g. `customer_id`) was typed
    /// on the command line, rather than set by the environment.
    pub fn typed(&self, id: &str) -> bool {
        self.typed.contains(id)
    }

    /// The state directory.
    pub fn state(&self) -> AppResult<StateDir> {
        Ok(StateDir::new(state_dir(self.state_dir.as_deref())?))
    }
}

/// The options typed on the command line, from the top command down to the
/// one that runs (global options are seen at every level).
fn typed_options(matches: &clap::ArgMatches) -> BTreeSet<String> {
    let mut typed = BTreeSet::new();
    let mut level = Some(matches);
    while let Some(m) = level {
        for id in m.ids() {
            if m.value_source(id.as_str()) == Some(ValueSource::CommandLine) {
                typed.insert(id.as_str().to_owned());
            }
        }
        level = m.subcommand().map(|(_, sub)| sub);
    }
    typed
}

/// Prints one JSON value on stdout (`--quiet` or not: it is the result).
pub fn print_json(value: &serde_json::Value) -> AppResult<()> {
    let mut out = std::io::stdout().lock();
    serde_json::to_writer_pretty(&mut out, value).map_err(|e| {
        crate::output::write_error(e.io_error_kind(), &e, None)
    })?;
    writeln!(out)
        .and_then(|()| out.flush())
        .map_err(|e| crate::output::stdout_error(&e))
}

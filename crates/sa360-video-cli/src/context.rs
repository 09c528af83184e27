//! What every command needs: output mode, the config file, the state directory.

use std::collections::BTreeMap;
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
    /// Where each option given a value got it: its id (field name, e.g.
    /// `customer_id`) and whether it was typed on the command line (`true`)
    /// or read from the environment (`false`).
    sources: BTreeMap<String, bool>,
}

/// Where a setting's value came from, weakest first: the config file (or
/// nowhere), the environment, the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Source {
    /// The config file, a default, or not set.
    File,
    /// An environment variable.
    Env,
    /// A flag typed on the command line.
    Flag,
}

impl Ctx {
    /// Reads the config file named by the global options (or the default
    /// one); `matches` tells which options were typed on the command line.
    pub fn load(global: &GlobalArgs, matches: &clap::ArgMatches) -> AppResult<Self> {
        Ok(Self {
            json: global.json,
            config: ConfigFile::load(global.config.as_deref())?,
            state_dir: global.state_dir.clone(),
            sources: option_sources(matches),
        })
    }

    /// Where the option `id` (its field name, e.g. `customer_id`) got its value.
    pub fn source(&self, id: &str) -> Source {
        match self.sources.get(id) {
            Some(true) => Source::Flag,
            Some(false) => Source::Env,
            None => Source::File,
        }
    }

    /// The state directory.
    pub fn state(&self) -> AppResult<StateDir> {
        Ok(StateDir::new(state_dir(self.state_dir.as_deref())?))
    }
}

/// The options given on the command line or by the environment, from the top
/// command down to the one that runs (global options are seen at every level).
fn option_sources(matches: &clap::ArgMatches) -> BTreeMap<String, bool> {
    let mut sources = BTreeMap::new();
    let mut level = Some(matches);
    while let Some(m) = level {
        for id in m.ids() {
            // A global option shows in the ids of levels that do not define it.
            if m.try_contains_id(id.as_str()).is_err() {
                continue;
            }
            match m.value_source(id.as_str()) {
                Some(ValueSource::CommandLine) => {
                    sources.insert(id.as_str().to_owned(), true);
                }
                Some(ValueSource::EnvVariable) => {
                    sources.entry(id.as_str().to_owned()).or_insert(false);
                }
                _ => {}
            }
        }
        level = m.subcommand().map(|(_, sub)| sub);
    }
    sources
}

/// Prints one JSON value on stdout (`--quiet` or not: it is the result).
pub fn print_json(value: &serde_json::Value) -> AppResult<()> {
    let mut out = std::io::stdout().lock();
    serde_json::to_writer_pretty(&mut out, value)
        .map_err(|e| crate::output::write_error(e.io_error_kind(), &e, None))?;
    writeln!(out)
        .and_then(|()| out.flush())
        .map_err(|e| crate::output::stdout_error(&e))
}

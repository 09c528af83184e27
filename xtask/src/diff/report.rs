//! What `cargo xtask diff` found: per spec its changes and what they do to the
//! generated Rust API ([`SpecDiff`]), the whole [`Report`], and the gate that
//! turns it into an exit status ([`FailOn`]). Rendering it is `render.rs`'s job.

use std::collections::{BTreeMap, BTreeSet};

use super::compare::Change;
use super::rules::Class;
use super::rust_api::ApiChange;
use crate::openapi::Warning;

/// Which verdict makes `diff` exit with status 1.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum FailOn {
    /// A change breaking clients or servers on the wire.
    #[default]
    Wire,
    /// A change breaking clients on the wire.
    WireClients,
    /// A change breaking servers on the wire.
    WireServers,
    /// A change breaking the generated Rust API (code using the generated
    /// crate stops compiling), or a spec that could not be generated.
    RustApi,
    /// Either verdict.
    Any,
}

impl FailOn {
    /// Whether a change of wire class `class` counts.
    pub fn counts(self, class: Class) -> bool {
        match self {
            FailOn::Wire | FailOn::Any => class.is_breaking(),
            FailOn::WireClients => matches!(class, Class::Clients | Class::ClientsAndServers),
            FailOn::WireServers => matches!(class, Class::Servers | Class::ClientsAndServers),
            FailOn::RustApi => false,
        }
    }

    /// Whether a Rust API break counts.
    pub fn counts_rust_api(self) -> bool {
        matches!(self, FailOn::RustApi | FailOn::Any)
    }

    /// What the gate enforces, for the report (`the wire verdict`).
    pub fn describe(self) -> &'static str {
        match self {
            FailOn::Wire => "the wire verdict (clients or servers)",
            FailOn::WireClients => "the wire verdict for clients",
            FailOn::WireServers => "the wire verdict for servers",
            FailOn::RustApi => "the rust-api verdict",
            FailOn::Any => "the wire and rust-api verdicts",
        }
    }
}

/// The generated Rust API changes of one spec, or which side progenitor
/// could not generate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RustApi {
    /// Both sides generated; the changed items.
    Changes(Vec<ApiChange>),
    /// A side could not be generated (or parsed): the base if it fails,
    /// else the new side; and why. When only the new side fails, every
    /// program using the base crate breaks (there is no new crate); when the
    /// base fails, no crate was ever generated from it, so nothing breaks
    /// ([`SpecDiff::rust_api_breaks`]).
    Unavailable {
        /// The side that does not generate.
        side: Side,
        /// progenitor's reason, naming the operations.
        why: String,
    },
}

/// Everything `diff` found for one spec.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpecDiff {
    /// Spec name (`search-ads`).
    pub name: String,
    /// Workspace-relative spec path.
    pub path: String,
    /// Name of the generated crate (`sa360-v2-client`).
    pub krate: String,
    /// Whether the spec exists at the base / in the working tree.
    pub present: (bool, bool),
    /// The spec changes.
    pub changes: Vec<Change>,
    /// The generated Rust API changes.
    pub rust_api: RustApi,
    /// The rust-api verdict of each change (parallel to `changes`): the
    /// breaking generated-API changes it causes (empty: `none`).
    pub rust_api_by_change: Vec<Vec<ApiChange>>,
    /// Breaking generated-API changes no spec change claims.
    pub rust_api_unattributed: Vec<ApiChange>,
    /// Component schema → the operations that use it (directly or through
    /// other components), in the new spec or, for schemas only in the base,
    /// in the base.
    pub schema_users: BTreeMap<String, BTreeSet<String>>,
    /// What the reader could not understand in the base (`true`) or the new
    /// (`false`) document and left out of the comparison.
    pub warnings: Vec<(Side, Warning)>,
}

/// Which document of a pair.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    /// The base (old) document.
    Base,
    /// The new document.
    New,
}

impl Side {
    /// `base` or `new`.
    pub fn id(self) -> &'static str {
        match self {
            Side::Base => "base",
            Side::New => "new",
        }
    }
}

impl SpecDiff {
    /// Whether any change breaks clients or servers on the wire.
    pub fn is_breaking(&self) -> bool {
        self.changes.iter().any(|c| c.class().is_breaking())
    }

    /// The rust-api verdict of the spec: whether code using the base crate
    /// may stop compiling. A new spec that progenitor cannot generate breaks
    /// every such program (if a base crate existed); a base that cannot be
    /// generated had no crate, so nothing breaks. The ground-truth test
    /// checks this against progenitor and rustc for every fixture.
    pub fn rust_api_breaks(&self) -> bool {
        match &self.rust_api {
            RustApi::Changes(list) => list.iter().any(|c| c.breaks),
            RustApi::Unavailable {
                side: Side::New, ..
            } => self.present.0,
            RustApi::Unavailable {
                side: Side::Base, ..
            } => false,
        }
    }

    /// The rust-api verdict of change `i` (empty: none).
    pub fn rust_api_of(&self, i: usize) -> &[ApiChange] {
        self.rust_api_by_change.get(i).map_or(&[], Vec::as_slice)
    }
}

/// The whole result of `diff`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Report {
    /// What the working tree was compared with, for the header
    /// (`merge base with main (1a2b3c4)`).
    pub base: String,
    /// One entry per compared spec.
    pub specs: Vec<SpecDiff>,
}

impl Report {
    /// Whether any change breaks clients or servers.
    pub fn is_breaking(&self) -> bool {
        self.specs.iter().any(SpecDiff::is_breaking)
    }

    /// Whether the generated Rust API of any spec breaks
    /// ([`SpecDiff::rust_api_breaks`]).
    pub fn is_rust_api_breaking(&self) -> bool {
        self.specs.iter().any(SpecDiff::rust_api_breaks)
    }

    /// The process exit status: 1 when a verdict counted by `fail_on` is
    /// breaking and breaking changes are not allowed, else 0.
    pub fn exit_status(&self, fail_on: FailOn, allow_breaking: bool) -> u8 {
        let wire = self
            .specs
            .iter()
            .flat_map(|s| &s.changes)
            .any(|c| fail_on.counts(c.class()));
        let rust = fail_on.counts_rust_api() && self.is_rust_api_breaking();
        u8::from((wire || rust) && !allow_breaking)
    }
}

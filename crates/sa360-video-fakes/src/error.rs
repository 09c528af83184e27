//! The one error type of the fakes' builders: a configuration they cannot serve, or I/O.

/// Why a fake could not start or take a setting.
#[derive(Debug, thiserror::Error)]
pub enum FakeError {
    /// The configuration cannot be served.
    #[error("invalid fake configuration: {0}")]
    Config(String),
    /// Binding or reading the listener failed.
    #[error("fake server I/O error: {0}")]
    Io(#[from] std::io::Error),
}

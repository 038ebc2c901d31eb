//! [`CliError`]: why a command failed, printed as one `error: …` line.

use capture::grpc::ServeError;
use capture::read::ReadError;
use capture::time::TimeError;
use capture::{RemoteError, RuntimeError, SelectorError, StoreError};

/// Why a command failed: the library's error as it is, or the command line's own
/// one-line message.
#[derive(Debug, thiserror::Error)]
pub enum CliError {
    /// Files could not be read or added up.
    #[error(transparent)]
    Read(#[from] ReadError),
    /// A store could not be opened.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// A time or duration could not be parsed.
    #[error(transparent)]
    Time(#[from] TimeError),
    /// A server could not listen or stopped.
    #[error(transparent)]
    Serve(#[from] ServeError),
    /// The network runtime could not be started.
    #[error(transparent)]
    Runtime(#[from] RuntimeError),
    /// The window could not be opened.
    #[error(transparent)]
    Window(#[from] crate::gui::WindowError),
    /// A selector, profile type or matcher could not be read.
    #[error(transparent)]
    Selector(#[from] SelectorError),
    /// A server's address or client options could not be used.
    #[error(transparent)]
    Remote(#[from] RemoteError),
    /// What the command asked for cannot be done, in the command line's words.
    #[error("{0}")]
    Message(String),
}

impl From<String> for CliError {
    fn from(message: String) -> Self {
        Self::Message(message)
    }
}

impl From<&str> for CliError {
    fn from(message: &str) -> Self {
        Self::Message(message.to_string())
    }
}

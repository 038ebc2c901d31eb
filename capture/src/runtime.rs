//! The tokio runtimes flint runs its requests on ([`runtime`]).

use crate::threads;

/// What a runtime is for: it names its threads and its errors.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RuntimeUse {
    /// The requests of one command (two threads named [`threads::NETWORK`], which
    /// the recorder counts as its own when it pushes).
    Network,
    /// The window's queries (one thread, [`threads::QUERY`]).
    Query,
}

impl RuntimeUse {
    fn name(self) -> &'static str {
        match self {
            Self::Network => "network",
            Self::Query => "query",
        }
    }
}

/// A runtime could not be started.
#[derive(Debug, thiserror::Error)]
#[error("cannot start the {} runtime: {source}", what.name())]
pub struct RuntimeError {
    what: RuntimeUse,
    source: std::io::Error,
}

/// The message, for callers that carry errors as text.
impl From<RuntimeError> for String {
    fn from(e: RuntimeError) -> Self {
        e.to_string()
    }
}

/// A multi-threaded runtime for `what`, its threads named for it.
pub fn runtime(what: RuntimeUse) -> Result<tokio::runtime::Runtime, RuntimeError> {
    let (workers, name) = match what {
        RuntimeUse::Network => (2, threads::NETWORK),
        RuntimeUse::Query => (1, threads::QUERY),
    };
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(workers)
        .thread_name(name)
        .enable_all()
        .build()
        .map_err(|source| RuntimeError { what, source })
}

//! flint's gRPC layer: Parca's query and profile store API, served over any
//! [`ProfileSource`](crate::ProfileSource) by [`serve`] and consumed by
//! [`RemoteSource`].

pub mod convert;
pub mod proto;
pub mod query_options;
pub mod remote;
pub mod report;
pub mod reports;
pub mod server;
pub mod url;

pub use remote::{RemoteError, RemoteOptions, RemoteSource};
pub use server::{
    AgentSeen, DEFAULT_MAX_MESSAGE_BYTES, MAX_AGENTS_TOLD, ServeError, ServerOptions, TlsIdentity,
    VERSION_HEADER, bind, serve,
};
pub use url::{ServerUrl, UrlError};

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
pub use server::{DEFAULT_MAX_MESSAGE_BYTES, ServeError, ServerOptions, TlsIdentity, bind, serve};
pub use url::{ServerUrl, UrlError};

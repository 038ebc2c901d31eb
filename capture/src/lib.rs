//! Where flint's profiles come from, in five parts:
//!
//! - [`sources`]: the [`ProfileSource`] interface every source implements, Parca's
//!   selector language, times, what a path names ([`PathKind`]), and the local
//!   sources: profile files and folders ([`FileSource`]) and flint's on-disk store
//!   ([`Store`]), both answering from one index;
//! - [`read`]: reading profile files, and the one place where many are read and added
//!   up on all cores ([`read::Files::read`]), for the CLI, the window and `push`;
//! - [`grpc`]: Parca's gRPC API, a server over any source and [`RemoteSource`], a
//!   client of it;
//! - [`live`]: the live recorder's user-space half, and symbolization;
//! - [`symbolize`]: naming the addresses of profiles made elsewhere, from binaries,
//!   debug files and perf maps on this machine; [`perfdata`]: perf.data files made
//!   pprof, which [`read`] does as it reads them.
//!
//! Beside them: the names of the threads flint starts ([`threads`]), the runtime its
//! requests run on ([`runtime()`]), and the memory a server may hold ([`memory`]).

pub mod grpc;
pub mod live;
pub mod memory;
pub mod perfdata;
pub mod read;
mod runtime;
pub mod sources;
pub mod symbolize;
pub mod threads;

// The modules of each part, also by their short names (`capture::time`,
// `capture::recorder`), as the window and the tests name them.
pub use live::{recorder, symbols};
pub use sources::{files, index, selector, source, store, time};

pub use files::FileSource;
pub use grpc::{RemoteError, RemoteOptions, RemoteSource, ServerOptions, ServerUrl, UrlError};
pub use runtime::{RuntimeError, RuntimeUse, runtime};
pub use selector::{Matcher, ProfileType, Selector, SelectorError};
pub use source::{
    Labels, Point, ProfileSink, ProfileSource, Progress, QueryTime, Series, SourceError, TimeRange,
    shown_type,
};
pub use sources::path_kind::PathKind;
pub use store::{Store, StoreError, StoreOptions, StoreStats};

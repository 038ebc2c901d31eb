//! Where flint's profiles come from: the [`ProfileSource`] interface every source
//! implements, Parca's selector language, the file source, flint's on-disk store
//! ([`store`]), the gRPC layer ([`grpc`]): a Parca-compatible server over any source
//! and [`RemoteSource`], a client of Parca's query API; and the live recorder's
//! user-space half ([`symbols`], [`recorder`]).

pub mod files;
pub mod grpc;
pub mod index;
pub mod recorder;
pub mod selector;
pub mod source;
pub mod store;
pub mod symbols;
pub mod time;

pub use files::FileSource;
pub use grpc::{RemoteOptions, RemoteSource, ServerOptions, ServerUrl};
pub use selector::{Matcher, ProfileType, Selector};
pub use source::{
    Labels, Point, ProfileSink, ProfileSource, Progress, QueryTime, Series, SourceError, TimeRange,
};
pub use store::{Store, StoreOptions, StoreStats};

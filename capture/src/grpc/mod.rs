//! flint's gRPC layer: Parca's query and profile store API, served over any
//! [`ProfileSource`](crate::ProfileSource) and consumed by [`RemoteSource`].

pub mod proto;

//! Where profiles come from, behind one interface: [`source`] (the
//! [`ProfileSource`](source::ProfileSource) trait, time ranges, series, progress),
//! [`selector`] (Parca's selector language), [`time`] (times as people type them),
//! [`path_kind`] (what a path names), and the local sources: [`files`] (profile files
//! and folders), [`store`] (flint's on-disk store) and the [`index`] both answer from.
//! The remote source is [`crate::grpc`]'s, the live one [`crate::live`]'s.

pub mod files;
pub mod index;
pub mod path_kind;
pub mod selector;
pub mod source;
pub mod store;
pub mod time;

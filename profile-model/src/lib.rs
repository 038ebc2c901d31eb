//! flint's profile model: the pprof codec, an interned columnar profile, and the
//! aggregations the viewer shows (top table, call tree, flame graph layout, folded
//! stacks, merge), all as pure functions with no UI and no I/O beyond bytes.
//!
//! ```
//! use profile_model::{ViewOptions, View, codec, units};
//! # let bytes = profile_model::codec::encode(&profile_model::Profile::default());
//! // `bytes` is a .pb.gz or raw pprof file read from disk.
//! let profile = codec::decode(&bytes)?;
//! let view = View::new(&profile, &ViewOptions::default());
//! let sample_type = profile.default_sample_index();
//! let top = view.top(&profile, sample_type);
//! for row in top.rows.iter().take(10) {
//!     let unit = profile.sample_types.get(sample_type).map_or("", |t| profile.str(t.unit));
//!     println!("{:>10} {}", units::readable(row.flat, unit), view.frames.get(row.frame).name);
//! }
//! # Ok::<(), profile_model::ProfileError>(())
//! ```

mod call_edges;
pub mod calltree;
pub mod codec;
pub mod diff;
pub mod error;
pub mod explain;
pub mod export;
pub mod filter;
pub mod fold;
pub mod formats;
pub mod frames;
pub mod group_by;
mod gzip;
pub mod interner;
mod known_calls;
pub mod layout;
mod location_index;
pub mod merge;
pub mod names;
pub mod noise;
pub mod normalize;
pub mod peek;
pub mod profile;
pub mod prune;
pub mod restack;
mod sample_table;
pub mod sandwich;
mod slot_table;
pub mod source_listing;
pub mod stack_index;
mod string_index;
pub mod synthetic;
pub mod time_slices;
pub mod top;
pub mod topsum;
pub mod units;
pub mod view;
mod wire;

/// The pprof wire types, generated from `proto/profile.proto`.
#[allow(missing_docs, reason = "generated code; the .proto file documents it")]
pub mod proto {
    include!(concat!(env!("OUT_DIR"), "/perftools.profiles.rs"));
}

pub use calltree::{CallTree, NodeId};
pub use error::ProfileError;
pub use filter::{Filters, TagFilter};
pub use frames::{Frame, FrameId, FrameTable, Granularity};
pub use profile::Profile;
pub use view::{View, ViewOptions};

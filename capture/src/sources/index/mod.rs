//! The index every local source answers from: per profile its time, duration, profile
//! types and the value sums of each label set ("group"), and the questions of
//! [`crate::ProfileSource`] answered over it. [`crate::FileSource`] locates a profile's
//! bytes by file path, [`crate::store::Store`] by record; the rest is shared.
//!
//! - [`entry`]: what the index keeps of one profile ([`Entry`], [`Group`]);
//! - [`labels`]: series labels from sample labels, and the shared copies of label sets
//!   and type lists ([`Interner`]);
//! - [`queries`]: the [`Index`] and the source questions answered over it;
//! - `merge`: a query's merge of the selected entries, read from their bytes.

pub mod entry;
pub mod labels;
mod merge;
pub mod queries;

pub use entry::{Entry, Group, gives_rate, profile_gives_rate};
pub use labels::{Interner, SampleLabels, groups_of, labels_over, set_labels};
pub(crate) use merge::{each_time, merge};
pub use queries::{Index, query_range_of};

/// The one reader of profile files, where the window's loader finds it.
pub use crate::read::read_into;

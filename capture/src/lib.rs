//! Where flint's profiles come from: the [`ProfileSource`] interface every source
//! implements, Parca's selector language, the file source and flint's on-disk store.

pub mod files;
pub mod index;
pub mod selector;
pub mod source;
pub mod store;
pub mod time;

pub use files::FileSource;
pub use selector::{Matcher, ProfileType, Selector};
pub use source::{
    Labels, Point, ProfileSink, ProfileSource, Progress, QueryTime, Series, SourceError, TimeRange,
};
pub use store::{Store, StoreOptions, StoreStats};

//! Where flint's profiles come from: the [`ProfileSource`] interface every source
//! implements, Parca's selector language, and the file source.

pub mod files;
pub mod grpc;
pub mod selector;
pub mod source;
pub mod time;

pub use files::FileSource;
pub use selector::{Matcher, ProfileType, Selector};
pub use source::{
    Labels, Point, ProfileSink, ProfileSource, Progress, QueryTime, Series, SourceError, TimeRange,
};

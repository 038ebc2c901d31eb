//! Errors of decoding and combining profiles.

/// Why bytes could not be turned into a [`crate::Profile`], or profiles not combined.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ProfileError {
    /// The input holds no bytes at all.
    #[error("the file is empty")]
    Empty,
    /// The gzip stream is corrupt or cut short.
    #[error("corrupt or truncated gzip data: {0}")]
    Gzip(String),
    /// Decompressing would exceed the configured cap.
    #[error(
        "decompressed size exceeds the limit of {} (raise it with --max-decompressed)",
        crate::units::readable(i64::try_from(*limit_bytes).unwrap_or(i64::MAX), "bytes")
    )]
    TooLarge {
        /// The cap that was hit.
        limit_bytes: u64,
    },
    /// The bytes are not a pprof protobuf message.
    #[error("not a pprof profile: {0}")]
    Protobuf(String),
    /// A file in another profiler's format that could not be read.
    #[error(transparent)]
    Format(#[from] crate::formats::FormatError),
    /// A reference inside the profile points nowhere.
    #[error("invalid profile: {0}")]
    Invalid(String),
    /// A merge has grown past what one merged profile can hold.
    #[error("{0}")]
    MergeTooLarge(String),
    /// Two profiles that cannot be merged because their sample types differ.
    #[error(
        "cannot merge {first} ({first_types}) with {second} ({second_types}): different sample types"
    )]
    IncompatibleSampleTypes {
        /// Name of the profile already merged.
        first: String,
        /// Its sample types, as `type/unit` list.
        first_types: String,
        /// Name of the profile being added.
        second: String,
        /// Its sample types.
        second_types: String,
    },
}

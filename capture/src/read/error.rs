//! [`ReadError`]: why profile files could not be read, each message one line naming
//! the file.

use std::path::PathBuf;

use profile_model::{ProfileError, units};

/// Why files could not be read, listed, or added up.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    /// A file or a folder could not be opened, listed or read.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file or folder.
        path: PathBuf,
        /// What the system said.
        source: std::io::Error,
    },
    /// No such file, and the path looks like the URL of a server in a scheme flint
    /// does not speak (`ftp://host`).
    #[error(
        "{}: no such file, and {scheme}:// names no server flint reads \
         (grpc://HOST:PORT or https://HOST)",
        path.display()
    )]
    UnknownScheme {
        /// The path as given.
        path: PathBuf,
        /// Its scheme.
        scheme: String,
    },
    /// A file larger than the decompressed-size cap.
    #[error(
        "{}: {} exceeds the limit of {} (raise it with --max-decompressed)",
        path.display(),
        size.map_or_else(|| "the file".to_string(), |s| format!("the file's size, {},", readable(s))),
        readable(*limit)
    )]
    TooLarge {
        /// The file.
        path: PathBuf,
        /// Its size, when the system tells it (a pipe's is found past the cap).
        size: Option<u64>,
        /// The cap.
        limit: u64,
    },
    /// A file (or a store record) that is not a valid profile, or cannot be added to
    /// those before it.
    #[error("{name}: {source}")]
    Profile {
        /// The file's path, or what else names the profile.
        name: String,
        /// What is wrong with it.
        source: Box<ProfileError>,
    },
    /// A perf.data file that could not be read.
    #[error("{}: {source}", path.display())]
    PerfData {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        source: crate::perfdata::PerfDataError,
    },
    /// Every file found in a folder failed: the folder holds no profile.
    #[error("{}: {} a pprof profile ({first})", dir.display(), none_of(*files))]
    NoneInFolder {
        /// The folder.
        dir: PathBuf,
        /// How many files it holds.
        files: usize,
        /// Why the first of them failed.
        first: String,
    },
    /// Nothing was read.
    #[error("no profiles found in {}", names(paths))]
    NoProfiles {
        /// The paths given.
        paths: Vec<PathBuf>,
    },
    /// Profiles that cannot be added together.
    #[error(transparent)]
    Merge(Box<ProfileError>),
    /// A later profile whose sample types differ from the first's, with the query that
    /// takes one type of a folder's profiles when it was found in one.
    #[error("{error}{}", hint.as_ref().map_or_else(String::new, |q| format!(
        " (to merge the profiles of one type in a folder: --query, e.g. -q '{q}')"
    )))]
    SampleTypesDiffer {
        /// The error naming both profiles' types.
        error: Box<ProfileError>,
        /// The first profile's type, as `--query` takes it.
        hint: Option<String>,
    },
    /// A profile without sample types, where one is to be chosen.
    #[error("the profile has no sample types")]
    NoSampleTypes,
    /// A sample type asked for that the profile does not have.
    #[error("no sample type {spec:?} in the profile (it has: {})", has.join(", "))]
    NoSuchSampleType {
        /// The name or index asked for.
        spec: String,
        /// The profile's sample types.
        has: Vec<String>,
    },
    /// The read was cancelled.
    #[error("cancelled")]
    Cancelled,
}

impl ReadError {
    /// A profile error of the file or record `name`.
    pub fn profile(name: impl Into<String>, source: ProfileError) -> Self {
        Self::Profile {
            name: name.into(),
            source: Box::new(source),
        }
    }

    /// Profiles that cannot be added together.
    pub fn merge(e: ProfileError) -> Self {
        Self::Merge(Box::new(e))
    }
}

/// The message, for callers that carry errors as text.
impl From<ReadError> for String {
    fn from(e: ReadError) -> Self {
        e.to_string()
    }
}

fn readable(bytes: u64) -> String {
    units::readable(i64::try_from(bytes).unwrap_or(i64::MAX), "bytes")
}

/// "none of its N files is", as a folder of `files` files says it.
fn none_of(files: usize) -> String {
    match files {
        1 => "its one file is not".to_string(),
        2 => "neither of its 2 files is".to_string(),
        _ => format!("none of its {files} files is"),
    }
}

/// The paths, comma-separated.
pub(crate) fn names(paths: &[PathBuf]) -> String {
    let names: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
    names.join(", ")
}

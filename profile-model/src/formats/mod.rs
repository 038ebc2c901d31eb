//! Other profilers' formats, read by content into a [`Profile`] (or straight into
//! pprof bytes, [`to_pprof`], where [`crate::codec::message_bytes`] hands every
//! reader its message): folded stacks, V8's `.cpuprofile` and speedscope's JSON; and
//! a view written as speedscope JSON ([`speedscope::encode`]).

pub(crate) mod builder;
mod cpuprofile;
pub mod detect;
pub mod folded;
pub mod speedscope;

pub use detect::{Format, detect};

use crate::profile::Profile;

/// What the count of a folded-stacks line measures (`--folded-unit`): the sample type
/// the profile gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum FoldedUnit {
    /// Samples (`samples/count`), as `stackcollapse-*`, inferno and py-spy count.
    #[default]
    Samples,
    /// CPU time in nanoseconds (`cpu/nanoseconds`), as async-profiler's `--total`.
    Nanoseconds,
    /// CPU time in microseconds (`cpu/microseconds`).
    Microseconds,
    /// CPU time in milliseconds (`cpu/milliseconds`).
    Milliseconds,
    /// CPU time in seconds (`cpu/seconds`).
    Seconds,
    /// Bytes (`space/bytes`), as allocation profiles count.
    Bytes,
}

impl std::str::FromStr for FoldedUnit {
    type Err = String;

    /// `samples`, `nanoseconds`, `microseconds`, `milliseconds`, `seconds` or `bytes`.
    fn from_str(name: &str) -> Result<Self, String> {
        Ok(match name {
            "samples" => Self::Samples,
            "nanoseconds" => Self::Nanoseconds,
            "microseconds" => Self::Microseconds,
            "milliseconds" => Self::Milliseconds,
            "seconds" => Self::Seconds,
            "bytes" => Self::Bytes,
            _ => {
                return Err(format!(
                    "{name:?} is none of samples, nanoseconds, microseconds, milliseconds, seconds, bytes"
                ));
            }
        })
    }
}

impl FoldedUnit {
    /// The (type, unit) of the profile's one sample type.
    pub fn sample_type(self) -> (&'static str, &'static str) {
        match self {
            Self::Samples => ("samples", "count"),
            Self::Nanoseconds => ("cpu", "nanoseconds"),
            Self::Microseconds => ("cpu", "microseconds"),
            Self::Milliseconds => ("cpu", "milliseconds"),
            Self::Seconds => ("cpu", "seconds"),
            Self::Bytes => ("space", "bytes"),
        }
    }
}

/// Why a file in another profiler's format could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FormatError {
    /// A folded-stacks line that is not `frames COUNT` (line 0: the whole file).
    #[error("folded stacks{}: {message}", if *line == 0 { String::new() } else { format!(", line {line}") })]
    Folded {
        /// The 1-based line, 0 for the file as a whole.
        line: usize,
        /// What is wrong with it.
        message: String,
    },
    /// Text whose first line of content is not folded stacks.
    #[error("not a pprof profile nor folded stacks (line {line}: {message})")]
    NotAProfile {
        /// The 1-based line.
        line: usize,
        /// What is wrong with it.
        message: String,
    },
    /// A V8 `.cpuprofile` whose parts do not fit together.
    #[error("V8 .cpuprofile: {0}")]
    CpuProfile(String),
    /// A speedscope file whose parts do not fit together.
    #[error("speedscope file: {0}")]
    Speedscope(String),
    /// Text that is not JSON, or JSON that is not of the shape its format has.
    #[error("malformed JSON ({0})")]
    Json(String),
    /// JSON of no format flint reads.
    #[error(
        "JSON that is neither a V8 .cpuprofile (nodes, samples, timeDeltas) nor a speedscope file (shared.frames, profiles)"
    )]
    UnknownJson,
    /// Stacks too many or too deep for the size of the file.
    #[error("stacks too deep for the size of the file (more than 4 frames per byte)")]
    TooDeep,
    /// Text that is not UTF-8.
    #[error("text that is not UTF-8 (at byte {0})")]
    NotUtf8(usize),
}

/// The profile in `bytes`, text that [`detect`] found to be in `format`: folded
/// stacks, else JSON.
fn decode_text(bytes: &[u8], format: Format, unit: FoldedUnit) -> Result<Profile, FormatError> {
    let text = std::str::from_utf8(bytes).map_err(|e| FormatError::NotUtf8(e.valid_up_to()))?;
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    match format {
        Format::Folded => folded::decode(text, unit),
        Format::Json | Format::Pprof => decode_json(text),
    }
}

/// Reads JSON as the format its top-level keys say: `profiles` a speedscope file,
/// `nodes` a `.cpuprofile`.
fn decode_json(text: &str) -> Result<Profile, FormatError> {
    #[derive(serde::Deserialize)]
    struct Keys {
        profiles: Option<serde::de::IgnoredAny>,
        nodes: Option<serde::de::IgnoredAny>,
    }
    let json = |e: serde_json::Error| FormatError::Json(e.to_string());
    let keys: Keys = serde_json::from_str(text).map_err(|e| match e.classify() {
        serde_json::error::Category::Data => FormatError::UnknownJson,
        _ => json(e),
    })?;
    if keys.profiles.is_some() {
        speedscope::decode(serde_json::from_str(text).map_err(json)?, text.len())
    } else if keys.nodes.is_some() {
        cpuprofile::decode(serde_json::from_str(text).map_err(json)?, text.len())
    } else {
        Err(FormatError::UnknownJson)
    }
}

/// The pprof message of `bytes` when they are in another profiler's format (`None`
/// for pprof): what [`crate::codec::message_bytes`] hands on in their place.
pub fn to_pprof(bytes: &[u8], unit: FoldedUnit) -> Option<Result<Vec<u8>, FormatError>> {
    match detect(bytes) {
        Format::Pprof => None,
        format => Some(decode_text(bytes, format, unit).map(|p| crate::codec::encode(&p))),
    }
}

//! Files merged into one profile, as `go tool pprof` merges the files it is given
//! ([`read_merged`]), and the difference of two sets of them ([`read_diff`]): for
//! `flint fold` and the window.

use std::path::PathBuf;

use profile_model::merge::{Merger, Selection};
use profile_model::{Profile, ProfileError};

use super::error::names;
use super::{FileBytes, FileRef, Files, Fold, NotAdded, ReadError, ReadOptions, read_profile};
use profile_model::codec::DecodeOptions;

/// Several inputs merged into one profile, and what could not be read.
#[derive(Debug)]
pub struct Merged {
    /// The sum of every profile read.
    pub profile: Profile,
    /// One line per file found in a directory that was skipped, with the reason.
    pub skipped: Vec<String>,
    /// The sum of the profiles' durations, the duration `go tool pprof` reports for
    /// them (the merged profile's own is the span they cover).
    pub summed_duration_nanos: i64,
}

/// Reads files and directories (searched recursively, in name order; a file named in
/// `paths` must be a valid profile, a broken file found in a directory is skipped and
/// named in [`Merged::skipped`]) and merges every profile, as `go tool pprof` merges
/// the files it is given: on all cores, straight from each file's bytes
/// ([`Merger::add_pprof`]), in file order ([`Files::read`]). A single profile is kept
/// as it is (its comments and frame regexes too, which a merge leaves out).
pub fn read_merged(paths: &[PathBuf], decode: DecodeOptions) -> Result<Merged, ReadError> {
    let files = Files::list(&[paths])?;
    if let Some(lone) = files.read_lone(decode) {
        let (profile, skipped) = lone?;
        let summed_duration_nanos = profile.duration_nanos;
        return Ok(Merged {
            profile,
            skipped,
            summed_duration_nanos,
        });
    }
    let read = files.read(&MergeFiles, ReadOptions::new(decode))?;
    let summed_duration_nanos = read.folded.summed_duration();
    let profile = match read.added[..] {
        [] => {
            return Err(ReadError::NoProfiles {
                paths: paths.to_vec(),
            });
        }
        // The others skipped: the one read is kept as it is, as a lone input is.
        [only] => read_profile(files.file(only).path, decode)?,
        _ => read.folded.finish(),
    };
    Ok(Merged {
        profile,
        skipped: read.skipped,
        summed_duration_nanos,
    })
}

/// `files` minus `base` (each merged first), as `go tool pprof -diff_base BASE FILES`.
pub fn read_diff(
    base: &[PathBuf],
    files: &[PathBuf],
    decode: DecodeOptions,
) -> Result<Merged, ReadError> {
    let base_profile = read_merged(base, decode)?;
    let profile = read_merged(files, decode)?;
    let mut merger = Merger::new();
    merger
        .add(&names(files), &profile.profile)
        .map_err(ReadError::merge)?;
    merger
        .add_base(&names(base), &base_profile.profile)
        .map_err(ReadError::merge)?;
    let mut skipped = base_profile.skipped;
    skipped.extend(profile.skipped);
    let durations = base_profile.summed_duration_nanos;
    Ok(Merged {
        profile: merger.finish(),
        skipped,
        summed_duration_nanos: durations.saturating_add(profile.summed_duration_nanos),
    })
}

/// Every file merged straight from its bytes.
struct MergeFiles;

impl Fold for MergeFiles {
    type Run = Merger;

    fn run(&self) -> Merger {
        Merger::new()
    }

    fn add(
        &self,
        merger: &mut Merger,
        file: FileRef<'_>,
        mut bytes: FileBytes<'_>,
    ) -> Result<(), NotAdded> {
        let name = file.path.display().to_string();
        let body = bytes.body().map_err(|e| file.broken(e))?;
        merger
            .add_pprof(&name, body, Selection::default())
            .map_err(|e| match e {
                // Profiles of other sample types than the first's are never summed,
                // nor skipped as broken (the answer would then depend on which came
                // first).
                ProfileError::IncompatibleSampleTypes { .. } => {
                    NotAdded::Stop(ReadError::profile(name, e))
                }
                e => file.broken(e),
            })
    }

    fn absorb(&self, merger: &mut Merger, later: Merger) -> Result<(), ReadError> {
        merger.absorb(later).map_err(ReadError::merge)
    }
}

//! Reading profiles from disk for both the CLI and the window: single files, several
//! files merged, directories searched recursively, and differences.

use std::path::{Path, PathBuf};

use std::sync::{Mutex, PoisonError};

use profile_model::codec::{DecodeOptions, message_bytes};
use profile_model::merge::{Merger, Selection};
use profile_model::{Profile, ProfileError};

use capture::files::Inputs;
pub use capture::files::read_profile;

/// Several inputs merged into one profile, and what could not be read.
#[derive(Debug)]
pub struct Merged {
    /// The sum of every profile read.
    pub profile: Profile,
    /// One line per file found in a directory that was skipped, with the reason.
    pub skipped: Vec<String>,
}

/// Reads files and directories (searched recursively, in name order; a file named in
/// `paths` must be a valid profile, a broken file found in a directory is skipped and
/// named in [`Merged::skipped`]) and merges every profile, as `go tool pprof` merges
/// the files it is given: on all cores, straight from each
/// file's bytes ([`Merger::add_pprof`]), in file order. A single profile is kept as it
/// is (its comments and frame regexes too, which a merge leaves out).
pub fn read_merged(paths: &[PathBuf], options: DecodeOptions) -> Result<Merged, String> {
    let inputs = Inputs::list(paths)?;
    if let [(path, _)] = &inputs.files[..] {
        return read_lone(&inputs, path, options);
    }
    let failed = Mutex::new(Vec::new());
    let merger = capture::index::merge_in_runs(
        inputs.files.len(),
        |merger, buf, i| {
            let (file, dir) = &inputs.files[i];
            let name = file.display().to_string();
            // Profiles of other sample types than the first's are never summed, nor
            // skipped as broken (the answer would then depend on which came first).
            let mut other_types = false;
            let merged = capture::index::read_into(file, &mut buf.stored, options).and_then(|()| {
                message_bytes(&buf.stored, options, &mut buf.body)
                    .and_then(|body| merger.add_pprof(&name, body, Selection::default()))
                    .map_err(|e| {
                        other_types = matches!(e, ProfileError::IncompatibleSampleTypes { .. });
                        format!("{name}: {e}")
                    })
            });
            match (merged, dir) {
                (Ok(()), _) => Ok(()),
                (Err(e), None) => Err(e),
                (Err(e), Some(_)) if other_types => Err(e),
                (Err(e), Some(_)) => {
                    failed
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner)
                        .push((i, e));
                    Ok(())
                }
            }
        },
        |e| e.to_string(),
    )?;
    let mut failed = failed.into_inner().unwrap_or_else(PoisonError::into_inner);
    failed.sort();
    let read: Vec<usize> = (0..inputs.files.len())
        .filter(|i| failed.binary_search_by_key(i, |(f, _)| *f).is_err())
        .collect();
    let skipped = inputs.judge(failed)?;
    let profile = match read[..] {
        [] => {
            let names: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
            return Err(format!("no profiles found in {}", names.join(", ")));
        }
        // The others skipped: the one read is kept as it is, as a lone input is.
        [only] => read_profile(&inputs.files[only].0, options)?,
        _ => merger.finish(),
    };
    Ok(Merged { profile, skipped })
}

/// The one file `inputs` list, decoded whole from its bytes as read once (a pipe,
/// `/dev/stdin` or `<(…)`, gives its bytes only once), kept as it is: its comments and
/// frame regexes too, which a merge leaves out. A file that cannot be read is judged
/// by [`Inputs::judge`], as any other: named, it is the error; found in a folder, the
/// folder without a profile is.
fn read_lone(inputs: &Inputs, path: &Path, options: DecodeOptions) -> Result<Merged, String> {
    let mut bytes = Vec::new();
    let read = capture::index::read_into(path, &mut bytes, options).and_then(|()| {
        profile_model::codec::decode_with(&bytes, options)
            .map_err(|e| format!("{}: {e}", path.display()))
    });
    match read {
        Ok(profile) => Ok(Merged {
            profile,
            skipped: inputs.judge(Vec::new())?,
        }),
        Err(e) => Err(inputs.judge(vec![(0, e.clone())]).err().unwrap_or(e)),
    }
}

/// `files` minus `base` (each merged first), as `go tool pprof -diff_base BASE FILES`.
pub fn read_diff(
    base: &[PathBuf],
    files: &[PathBuf],
    options: DecodeOptions,
) -> Result<Merged, String> {
    let base_profile = read_merged(base, options)?;
    let profile = read_merged(files, options)?;
    let names = |paths: &[PathBuf]| -> String {
        let names: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
        names.join(", ")
    };
    let mut merger = Merger::new();
    merger
        .add(&names(files), &profile.profile)
        .map_err(|e| e.to_string())?;
    merger
        .add_base(&names(base), &base_profile.profile)
        .map_err(|e| e.to_string())?;
    let mut skipped = base_profile.skipped;
    skipped.extend(profile.skipped);
    Ok(Merged {
        profile: merger.finish(),
        skipped,
    })
}

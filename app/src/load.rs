//! Reading profiles from disk for both the CLI and the window: single files, several
//! files merged, directories searched recursively, and differences.

use std::path::{Path, PathBuf};

use profile_model::Profile;
use profile_model::codec::DecodeOptions;
use profile_model::merge::Merger;

pub use capture::files::read_profile;

/// Several inputs merged into one profile, and what could not be read.
#[derive(Debug)]
pub struct Merged {
    /// The sum of every profile read.
    pub profile: Profile,
    /// One line per file found in a directory that was skipped, with the reason.
    pub skipped: Vec<String>,
}

/// Reads files and directories (searched recursively, in name order) and merges every
/// profile, one at a time, as `go tool pprof` merges the files it is given. A file named
/// on the command line must be a valid profile; a broken file found in a directory is
/// skipped and reported in [`Merged::skipped`].
pub fn read_merged(paths: &[PathBuf], options: DecodeOptions) -> Result<Merged, String> {
    let mut sum = Sum::default();
    let mut skipped = Vec::new();
    for path in paths {
        if path.is_dir() {
            let files = capture::files::files_under(path)?;
            let before = skipped.len();
            for file in &files {
                match read_profile(file, options) {
                    Ok(profile) => sum.add(file, profile)?,
                    Err(e) => skipped.push(e),
                }
            }
            if !files.is_empty() && skipped.len() - before == files.len() {
                return Err(format!(
                    "{}: none of its {} files is a pprof profile ({})",
                    path.display(),
                    files.len(),
                    skipped[before]
                ));
            }
        } else {
            sum.add(path, read_profile(path, options)?)?;
        }
    }
    let Some(profile) = sum.finish() else {
        let names: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
        return Err(format!("no profiles found in {}", names.join(", ")));
    };
    Ok(Merged { profile, skipped })
}

/// A running sum of profiles: a single profile is kept as it is, merging starts with
/// the second.
#[derive(Default)]
enum Sum {
    #[default]
    Empty,
    One(PathBuf, Box<Profile>),
    Many(Box<Merger>),
}

impl Sum {
    fn add(&mut self, path: &Path, profile: Profile) -> Result<(), String> {
        let merge = |merger: &mut Merger, path: &Path, profile: &Profile| {
            merger
                .add(&path.display().to_string(), profile)
                .map_err(|e| e.to_string())
        };
        *self = match std::mem::take(self) {
            Sum::Empty => Sum::One(path.to_path_buf(), Box::new(profile)),
            Sum::One(first_path, first) => {
                let mut merger = Box::new(Merger::new());
                merge(&mut merger, &first_path, &first)?;
                merge(&mut merger, path, &profile)?;
                Sum::Many(merger)
            }
            Sum::Many(mut merger) => {
                merge(&mut merger, path, &profile)?;
                Sum::Many(merger)
            }
        };
        Ok(())
    }

    fn finish(self) -> Option<Profile> {
        match self {
            Sum::Empty => None,
            Sum::One(_, profile) => Some(*profile),
            Sum::Many(merger) => Some(merger.finish()),
        }
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

//! What paths name: the files below a folder ([`files_under`]), the files of several
//! paths each once ([`Inputs`]), and which of those that could not be read are errors
//! ([`Inputs::judge`]).

use std::collections::{HashMap, HashSet, hash_map};
use std::path::{Path, PathBuf};

use super::ReadError;

/// What [`files_under`] found below a folder.
#[derive(Debug, Default)]
pub struct Listing {
    /// Every regular file, sorted by path.
    pub files: Vec<PathBuf>,
    /// One line per folder below it that could not be read (`PATH: why`), passed over
    /// as a broken file is.
    pub unreadable: Vec<String>,
}

/// Every regular file below `dir` (hidden ones left out), sorted by path. Symbolic
/// links are followed, but every folder and file is taken once: a link back to a
/// folder above it (a loop) or to something found another way is passed over, so that
/// no profile is counted twice. Of two paths to one file, the one without links wins.
/// A folder below `dir` that cannot be read is named in the listing and passed over;
/// `dir` itself must be readable.
pub fn files_under(dir: &Path) -> Result<Listing, ReadError> {
    let io = |path: &Path, source| ReadError::Io {
        path: path.to_path_buf(),
        source,
    };
    let canonical = |p: &Path| std::fs::canonicalize(p).map_err(|e| io(p, e));
    // Every file by what it is (links resolved): whether its path goes through a
    // link, and the path.
    let mut files: HashMap<PathBuf, (bool, PathBuf)> = HashMap::new();
    let mut seen_dirs = HashSet::new();
    // Folders reached through links wait until every other folder is read.
    let mut pending = vec![(dir.to_path_buf(), canonical(dir)?, false)];
    let mut linked = Vec::new();
    let mut unreadable = Vec::new();
    while let Some((d, real, via_link)) = pending.pop().or_else(|| linked.pop()) {
        if !seen_dirs.insert(real.clone()) {
            continue;
        }
        let top = d == dir;
        let mut failed = |e: std::io::Error| -> Result<(), ReadError> {
            let e = io(&d, e);
            if top {
                return Err(e);
            }
            unreadable.push(e.to_string());
            Ok(())
        };
        let entries = match std::fs::read_dir(&d) {
            Ok(entries) => entries,
            Err(e) => {
                failed(e)?;
                continue;
            }
        };
        for entry in entries {
            let entry = match entry {
                Ok(entry) => entry,
                Err(e) => {
                    failed(e)?;
                    break;
                }
            };
            let name = entry.file_name();
            if name.to_string_lossy().starts_with('.') {
                continue;
            }
            let path = entry.path();
            // The entry's type comes with the directory listing (no call per file);
            // a symbolic link is followed to what it names (a dangling one is passed
            // over).
            let kind = entry.file_type().map_err(|e| io(&path, e))?;
            let link = kind.is_symlink();
            let (is_dir, is_file, real) = if link {
                match std::fs::canonicalize(&path) {
                    Ok(target) => (target.is_dir(), target.is_file(), target),
                    Err(_) => continue,
                }
            } else {
                (kind.is_dir(), kind.is_file(), real.join(&name))
            };
            let via_link = via_link || link;
            if is_dir {
                let queue = if via_link { &mut linked } else { &mut pending };
                queue.push((path, real, via_link));
            } else if is_file {
                let candidate = (via_link, path);
                match files.entry(real) {
                    hash_map::Entry::Occupied(mut kept) if candidate < *kept.get() => {
                        kept.insert(candidate);
                    }
                    hash_map::Entry::Occupied(_) => {}
                    hash_map::Entry::Vacant(new) => {
                        new.insert(candidate);
                    }
                }
            }
        }
    }
    let mut files: Vec<PathBuf> = files.into_values().map(|(_, path)| path).collect();
    files.sort();
    unreadable.sort();
    Ok(Listing { files, unreadable })
}

/// The files some paths name: files as they are, folders searched ([`files_under`],
/// in name order), each file once however many of the paths reach it (named twice, or
/// named beside a folder that holds it: the first path counts).
#[derive(Debug, Default)]
pub struct Inputs {
    /// Every file, with the index in `dirs` of the folder it was found in (`None` for
    /// a file named as it is).
    pub files: Vec<(PathBuf, Option<usize>)>,
    /// Every folder named.
    pub dirs: Vec<PathBuf>,
    /// One line per folder below them that could not be read.
    pub unreadable: Vec<String>,
}

impl Inputs {
    /// Lists the files of `paths`.
    pub fn list(paths: &[PathBuf]) -> Result<Self, ReadError> {
        let mut inputs = Self::default();
        for path in paths {
            if path.is_dir() {
                let found = files_under(path)?;
                let dir = Some(inputs.dirs.len());
                inputs.dirs.push(path.clone());
                inputs
                    .files
                    .extend(found.files.into_iter().map(|f| (f, dir)));
                inputs.unreadable.extend(found.unreadable);
            } else {
                inputs.files.push((path.clone(), None));
            }
        }
        // One folder lists each file once already.
        if paths.len() > 1 {
            let mut seen = HashSet::new();
            // A path that cannot be resolved is kept: reading it says why.
            inputs
                .files
                .retain(|(f, _)| std::fs::canonicalize(f).map_or(true, |real| seen.insert(real)));
        }
        Ok(inputs)
    }

    /// Judges the files that could not be read, given as (index in `files`, why) in
    /// index order: a file named as it is must be a profile (its error is returned),
    /// and so must one file of each folder; else the skipped folders and files, a
    /// line each ([`Inputs::skipped`]).
    pub fn judge(&self, failed: Vec<(usize, ReadError)>) -> Result<Vec<String>, ReadError> {
        let mut failed = failed;
        if let Some(named) = failed.iter().position(|(i, _)| self.files[*i].1.is_none()) {
            return Err(failed.swap_remove(named).1);
        }
        let mut found = vec![0usize; self.dirs.len()];
        for (_, d) in &self.files {
            if let Some(d) = d {
                found[*d] += 1;
            }
        }
        let mut bad = vec![0usize; self.dirs.len()];
        for (i, _) in &failed {
            if let Some(d) = self.files[*i].1 {
                bad[d] += 1;
            }
        }
        if let Some((d, size)) = found
            .iter()
            .zip(&bad)
            .enumerate()
            .find_map(|(d, (size, bad))| (*size > 0 && bad == size).then_some((d, *size)))
        {
            let first = failed
                .iter()
                .find(|(i, _)| self.files[*i].1 == Some(d))
                .map_or_else(String::new, |(_, e)| e.to_string());
            return Err(ReadError::NoneInFolder {
                dir: self.dirs[d].clone(),
                files: size,
                first,
            });
        }
        Ok(self.skipped(failed))
    }

    /// The folders that could not be read and the files that failed, a line each,
    /// none of them judged an error.
    pub fn skipped(&self, failed: Vec<(usize, ReadError)>) -> Vec<String> {
        let failed = failed.into_iter().map(|(_, e)| e.to_string());
        self.unreadable.iter().cloned().chain(failed).collect()
    }
}

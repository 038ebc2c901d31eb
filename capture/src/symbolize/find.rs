//! Where a mapping's symbols are found on this machine, in the order: the
//! binaries given (by build id, else by file name), the symbol directories, the
//! mapping's own path (if its build id matches), then the debug directories by build id.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use super::{Source, SymbolSources};
use crate::symbols::elf::{self, ElfSymbols, build_id_path};

/// A binary or debug file that names a mapping's code, and where it was found.
pub(super) struct Found {
    /// Its symbols.
    pub elf: ElfSymbols,
    /// Which source it came from.
    pub source: Source,
}

/// Looks up mappings' symbol files, collecting warnings about files passed over.
pub(super) struct Finder<'a> {
    sources: &'a SymbolSources,
    /// Given binaries with their build ids.
    given: Vec<(PathBuf, String)>,
    /// Where separate debug files are looked for: the debug and symbol directories.
    roots: Vec<PathBuf>,
    /// What was passed over and why, each said once.
    pub warnings: BTreeSet<String>,
}

impl<'a> Finder<'a> {
    /// A finder over `sources`, reading the build ids of the binaries given.
    pub(super) fn new(sources: &'a SymbolSources) -> Self {
        let mut warnings = BTreeSet::new();
        let given = sources
            .binaries
            .iter()
            .filter_map(|b| match elf::build_id_of(b) {
                Ok(id) => Some((b.clone(), id)),
                Err(e) => {
                    warnings.insert(format!("not a binary flint can read: {e}"));
                    None
                }
            })
            .collect();
        let roots = sources
            .debug_dirs
            .iter()
            .chain(&sources.symbol_dirs)
            .cloned()
            .collect();
        Self {
            sources,
            given,
            roots,
            warnings,
        }
    }

    /// The symbols of the binary at `path` with build id `build_id` (either may be
    /// empty), from the first candidate that names code.
    pub(super) fn find(&mut self, path: &str, build_id: &str) -> Option<Found> {
        let candidates = self.candidates(path, build_id);
        candidates
            .into_iter()
            .find_map(|(file, source)| self.open(&file, source, build_id))
    }

    /// Opens `file` as the symbols of a binary with build id `build_id`, when it is one
    /// and names anything.
    pub(super) fn open(&mut self, file: &Path, source: Source, build_id: &str) -> Option<Found> {
        if !file.is_file() {
            return None;
        }
        let elf = match ElfSymbols::open_with_debug_roots(file, &self.roots) {
            Ok(elf) => elf,
            Err(e) => {
                self.warnings
                    .insert(format!("not a binary flint can read: {e}"));
                return None;
            }
        };
        for d in &elf.mismatched_debug_files {
            self.warnings.insert(format!(
                "{}: not the debug file of {} (another build id, or unreadable)",
                d.display(),
                file.display()
            ));
        }
        if !build_id.is_empty() && elf.build_id != build_id {
            self.warnings.insert(format!(
                "{}: build id {} is not the profile's {build_id}; not used",
                file.display(),
                if elf.build_id.is_empty() {
                    "(none)"
                } else {
                    &elf.build_id
                },
            ));
            return None;
        }
        if !elf.has_names {
            return None;
        }
        let source = if elf.debug_file.is_some() && source != Source::Debuginfod {
            Source::DebugDir
        } else {
            source
        };
        Some(Found { elf, source })
    }

    /// Where the binary may be, in order of preference.
    fn candidates(&self, path: &str, build_id: &str) -> Vec<(PathBuf, Source)> {
        let base = path.rsplit('/').next().unwrap_or(path);
        let mut out: Vec<(PathBuf, Source)> = Vec::new();
        if !build_id.is_empty() {
            out.extend(
                self.given
                    .iter()
                    .filter(|(_, id)| id == build_id)
                    .map(|(b, _)| (b.clone(), Source::Binary)),
            );
        }
        out.extend(
            self.given
                .iter()
                .filter(|(b, _)| !base.is_empty() && b.file_name().is_some_and(|n| n == base))
                .map(|(b, _)| (b.clone(), Source::Binary)),
        );
        for dir in &self.sources.symbol_dirs {
            if !build_id.is_empty() {
                out.push((dir.join(build_id).join(base), Source::Binary));
                out.push((build_id_path(dir, build_id, ""), Source::Binary));
            }
            if !base.is_empty() {
                out.push((dir.join(base), Source::Binary));
            }
        }
        // The mapping's own path only for a build id to check it by: a file of the same
        // name on this machine is not the profile's binary otherwise.
        if path.starts_with('/') && !build_id.is_empty() {
            out.push((PathBuf::from(path), Source::LocalPath));
        }
        if build_id.len() > 2 {
            out.extend(
                self.sources
                    .debug_dirs
                    .iter()
                    .map(|root| (build_id_path(root, build_id, ".debug"), Source::DebugDir)),
            );
        }
        out
    }
}

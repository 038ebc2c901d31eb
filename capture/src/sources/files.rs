//! The file source: profiles in files and directories, each placed at its pprof
//! `time_nanos` (the file's modification time when absent), answering the
//! [`ProfileSource`] questions from an index built once when opened.

use std::collections::{HashMap, HashSet, hash_map};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use profile_model::codec::{self, DecodeOptions};
use profile_model::merge::LabelValue;
use profile_model::stack_index::{
    self, Cancelled, MergeInput, ProfileStacks, StackIndex, StackIndexBuilder,
};
use profile_model::{Profile, ProfileError};

use crate::index::{
    self, Entry, Index, Interner, SampleLabels, groups_of, labels_over, load_in_order,
};
use crate::selector::{ProfileType, Selector};
use crate::source::{
    Labels, ProfileSource, Progress, QueryTime, Series, SourceError, SourceFuture, TimeRange,
};

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
pub fn files_under(dir: &Path) -> Result<Listing, String> {
    let canonical =
        |p: &Path| std::fs::canonicalize(p).map_err(|e| format!("{}: {e}", p.display()));
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
        let mut failed = |e: std::io::Error| -> Result<(), String> {
            let line = format!("{}: {e}", d.display());
            if top {
                return Err(line);
            }
            unreadable.push(line);
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
            let kind = entry
                .file_type()
                .map_err(|e| format!("{}: {e}", path.display()))?;
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
    pub fn list(paths: &[PathBuf]) -> Result<Self, String> {
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
    /// line each.
    pub fn judge(&self, failed: Vec<(usize, String)>) -> Result<Vec<String>, String> {
        if let Some((_, e)) = failed.iter().find(|(i, _)| self.files[*i].1.is_none()) {
            return Err(e.clone());
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
            .find_map(|(d, (size, bad))| (*size > 0 && bad == size).then_some((d, size)))
        {
            let first = failed
                .iter()
                .find(|(i, _)| self.files[*i].1 == Some(d))
                .map_or("", |(_, e)| e.as_str());
            let none = match size {
                1 => "its one file is not".to_string(),
                2 => "neither of its 2 files is".to_string(),
                _ => format!("none of its {size} files is"),
            };
            return Err(format!(
                "{}: {none} a pprof profile ({first})",
                self.dirs[d].display()
            ));
        }
        let failed = failed.into_iter().map(|(_, e)| e);
        Ok(self.unreadable.iter().cloned().chain(failed).collect())
    }
}

/// Reads and decodes one pprof file; errors name the file.
pub fn read_profile(path: &Path, options: DecodeOptions) -> Result<Profile, String> {
    read_with(path, options, |bytes| codec::decode_with(bytes, options))
}

/// Reads one pprof file ([`index::read_into`]: none larger than `options` allow) and
/// decodes it with `decode`; errors name the file.
fn read_with(
    path: &Path,
    options: DecodeOptions,
    decode: impl FnOnce(&[u8]) -> Result<Profile, ProfileError>,
) -> Result<Profile, String> {
    let mut bytes = Vec::new();
    index::read_into(path, &mut bytes, options)?;
    decode(&bytes).map_err(|e| format!("{}: {e}", path.display()))
}

/// The name Parca gives a scraped profile of this kind: `process_cpu` for CPU
/// profiles, `memory` for heap profiles, else the period type (or first sample type).
pub fn default_profile_name(p: &Profile) -> String {
    match p.str(p.period_type.kind) {
        "cpu" => "process_cpu".to_string(),
        "space" => "memory".to_string(),
        "" => p
            .sample_types
            .first()
            .map_or_else(|| "profile".to_string(), |t| p.str(t.kind).to_string()),
        other => other.to_string(),
    }
}

/// The profile types of a profile, one per sample type, named as Parca names scraped
/// profiles (see [`default_profile_name`]).
pub fn profile_types_of(p: &Profile) -> Vec<ProfileType> {
    profile_types_named(p, &default_profile_name(p))
}

/// The profile types of a profile under the profile name `name` (a `__name__` label),
/// one per sample type; delta unless the sample type is an in-use one.
pub fn profile_types_named(p: &Profile, name: &str) -> Vec<ProfileType> {
    let period_kind = p.str(p.period_type.kind);
    p.sample_types
        .iter()
        .map(|t| {
            let kind = p.str(t.kind);
            let (period_type, period_unit) = if period_kind.is_empty() {
                (kind, p.str(t.unit))
            } else {
                (period_kind, p.str(p.period_type.unit))
            };
            ProfileType {
                name: name.to_string(),
                sample_type: kind.to_string(),
                sample_unit: p.str(t.unit).to_string(),
                period_type: period_type.to_string(),
                period_unit: period_unit.to_string(),
                delta: !kind.starts_with("inuse"),
            }
        })
        .collect()
}

/// The index entry of one file: its groups hold only their sample labels, shared with
/// every file's groups with the same ones through `interner`, and its path and binary
/// are its base labels.
fn entry(interner: &mut Interner, path: &Path, profile: &Profile) -> Entry<PathBuf> {
    let time_nanos = if profile.time_nanos != 0 {
        profile.time_nanos
    } else {
        modified_nanos(path)
    };
    let mut file_labels = Labels::new();
    file_labels.insert("path".into(), path.display().to_string());
    if let Some(binary) = profile
        .mappings
        .first()
        .map(|m| profile.str(m.filename))
        .filter(|f| !f.is_empty())
    {
        let base = binary.rsplit('/').next().unwrap_or(binary);
        file_labels.insert("binary".into(), base.to_string());
    }
    Entry {
        locator: path.to_path_buf(),
        time_nanos,
        duration_nanos: profile.duration_nanos,
        types: interner.types(profile_types_of(profile)),
        groups: interner.groups(groups_of(profile, &Labels::new(), SampleLabels::All)),
        base_labels: Arc::new(file_labels),
        groups_over_base: true,
    }
}

fn modified_nanos(path: &Path) -> i64 {
    std::fs::metadata(path)
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .and_then(|d| i64::try_from(d.as_nanos()).ok())
        .unwrap_or(0)
}

/// Profiles in files, indexed by time, type and labels.
#[derive(Debug, Clone)]
pub struct FileSource {
    index: Arc<Index<PathBuf>>,
    decode: DecodeOptions,
    /// The files' samples, when kept as they were indexed: merges of the files kept
    /// are sums of them.
    stacks: Option<Arc<KeptStacks>>,
}

/// The samples kept of the files of a [`FileSource`] as they were indexed.
struct KeptStacks {
    index: StackIndex,
    of: HashMap<PathBuf, ProfileStacks>,
}

impl std::fmt::Debug for KeptStacks {
    /// Its size, not every file's samples.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KeptStacks")
            .field("index", &self.index)
            .field("files", &self.of.len())
            .finish()
    }
}

impl FileSource {
    /// Indexes files and directories (searched recursively). Returns the source and
    /// one line per file that could not be read, which is skipped. Files are read on
    /// all cores, without their stacks; `progress` counts them.
    pub fn open(
        paths: &[PathBuf],
        decode: DecodeOptions,
        progress: &Progress,
    ) -> Result<(Self, Vec<String>), String> {
        Self::open_with(paths, decode, None, progress)
    }

    /// [`FileSource::open`], keeping the files' samples as they are read, up to about
    /// `budget` bytes of them ([`StackIndexBuilder`]): a merge of files whose samples
    /// are kept adds them up instead of reading the files again, several times
    /// faster. For a window, which merges again and again what it indexed once.
    pub fn open_keeping_stacks(
        paths: &[PathBuf],
        decode: DecodeOptions,
        budget: usize,
        progress: &Progress,
    ) -> Result<(Self, Vec<String>), String> {
        Self::open_with(
            paths,
            decode,
            Some(StackIndexBuilder::new(budget)),
            progress,
        )
    }

    fn open_with(
        paths: &[PathBuf],
        decode: DecodeOptions,
        builder: Option<StackIndexBuilder>,
        progress: &Progress,
    ) -> Result<(Self, Vec<String>), String> {
        let inputs = Inputs::list(paths)?;
        let files: Vec<PathBuf> = inputs.files.iter().map(|(f, _)| f.clone()).collect();
        let mut failed = Vec::new();
        progress.set_total(files.len());
        let mut entries = Vec::new();
        let mut kept = HashMap::new();
        let mut interner = Interner::default();
        // The index needs each file's header, labels and values, not its stacks,
        // unless they are kept.
        let read = |i: usize| {
            let mut stacks = None;
            let decoded = read_with(&files[i], decode, |bytes| match &builder {
                Some(builder) => {
                    stack_index::decode_keeping_stacks(bytes, decode, builder).map(|(p, s)| {
                        stacks = s;
                        p
                    })
                }
                None => codec::decode_without_stacks(bytes, decode),
            });
            (decoded, stacks)
        };
        load_in_order(files.len(), read, |i, (decoded, stacks)| {
            if progress.is_cancelled() {
                return Err("cancelled".to_string());
            }
            progress.step();
            match decoded {
                Ok(p) => {
                    entries.push(entry(&mut interner, &files[i], &p));
                    if let Some(stacks) = stacks {
                        kept.insert(files[i].clone(), stacks);
                    }
                }
                Err(e) => failed.push((i, e)),
            }
            Ok(())
        })?;
        let skipped = inputs.judge(failed)?;
        if entries.is_empty() {
            let names: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
            return Err(format!("no profiles found in {}", names.join(", ")));
        }
        Ok((
            Self {
                index: Arc::new(Index::new(entries, SampleLabels::All)),
                decode,
                stacks: builder.map(|b| {
                    Arc::new(KeptStacks {
                        index: b.finish(),
                        of: kept,
                    })
                }),
            },
            skipped,
        ))
    }

    /// The merge of `entries` from their kept samples: `None` when one of them has
    /// none kept, or their sample types differ (a merge that reads them says so).
    fn merge_kept(
        &self,
        entries: &[&Entry<PathBuf>],
        selector: &Selector,
        progress: &Progress,
    ) -> Option<Result<Profile, SourceError>> {
        let stacks = self.stacks.as_ref()?;
        let profiles: Vec<&ProfileStacks> = entries
            .iter()
            .map(|e| stacks.of.get(&e.locator))
            .collect::<Option<_>>()?;
        if profiles.is_empty() {
            return Some(Err(SourceError::NoData));
        }
        progress.set_total(profiles.len());
        let mut keep = |i: usize, labels: &[(&str, LabelValue<'_>)]| {
            selector.matchers.is_empty() || {
                let labels = labels_over(
                    &entries[i].base_labels,
                    labels.iter().copied(),
                    SampleLabels::All,
                );
                selector.matches(|name| labels.get(name).map(String::as_str))
            }
        };
        let merged = stacks.index.merge(MergeInput {
            profiles: &profiles,
            keep: &mut keep,
            cancelled: &|| progress.is_cancelled(),
            step: &|| progress.step(),
        });
        match merged {
            Ok(Some(p)) => Some(Ok(p)),
            Ok(None) => None,
            Err(Cancelled) => Some(Err(SourceError::Cancelled)),
        }
    }

    /// Number of profiles indexed.
    pub fn len(&self) -> usize {
        self.index.len()
    }

    /// Whether no profile is indexed.
    pub fn is_empty(&self) -> bool {
        self.index.is_empty()
    }

    /// The time span of all profiles, start of the first to end of the last.
    pub fn span(&self) -> TimeRange {
        self.index.span()
    }

    /// The time span of the profiles of type `t` ([`Index::span_of`]).
    pub fn span_of(&self, t: &ProfileType) -> TimeRange {
        self.index.span_of(t)
    }
}

impl ProfileSource for FileSource {
    fn profile_types(&self, range: TimeRange) -> SourceFuture<'_, Vec<ProfileType>> {
        Box::pin(async move { Ok(self.index.profile_types(range)) })
    }

    fn labels(&self, selector: Selector, range: TimeRange) -> SourceFuture<'_, Vec<String>> {
        Box::pin(async move { Ok(self.index.labels(&selector, range)) })
    }

    fn values(
        &self,
        name: String,
        selector: Selector,
        range: TimeRange,
    ) -> SourceFuture<'_, Vec<String>> {
        Box::pin(async move { Ok(self.index.values(&name, &selector, range)) })
    }

    fn query_range(
        &self,
        selector: Selector,
        range: TimeRange,
        step_nanos: i64,
        sum_by: Option<Vec<String>>,
    ) -> SourceFuture<'_, Vec<Series>> {
        Box::pin(async move {
            self.index
                .query_range(&selector, range, step_nanos, sum_by.as_deref())
        })
    }

    fn query(
        &self,
        selector: Selector,
        time: QueryTime,
        progress: Progress,
    ) -> SourceFuture<'_, Profile> {
        Box::pin(async move {
            let entries = self.index.to_merge(&selector, time);
            if let Some(merged) = self.merge_kept(&entries, &selector, &progress) {
                return merged;
            }
            index::merge(
                &entries,
                &selector,
                SampleLabels::All,
                false,
                self.decode,
                &progress,
                |path| path.display().to_string(),
                |path, buf| index::read_into(path, buf, self.decode).map(|()| 0),
            )
        })
    }
}

//! The file source: profiles in files and directories, each placed at its pprof
//! `time_nanos` (when absent, the file's modification time less its duration), answering the
//! [`ProfileSource`] questions from an index built once when opened. A perf.data file
//! is a profile per time slice of its recording ([`crate::perfdata::slices`]), so that
//! it is a series over time where another file is one point.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use profile_model::Profile;
use profile_model::codec::{self, DecodeOptions, decode_without_stacks};
use profile_model::merge::LabelValue;
use profile_model::stack_index::{
    Cancelled, MergeInput, ProfileStacks, StackIndex, StackIndexBuilder, decode_keeping_stacks,
};

use crate::index::{self, Entry, Index, Interner, SampleLabels, groups_of, labels_over};
use crate::perfdata::slices::{Slice, slice_of, slices};
use crate::read::{FileBytes, FileRef, Files, Fold, NotAdded, ReadError, ReadOptions, read_into};
use crate::selector::{ProfileType, Selector};
use crate::source::{
    Labels, ProfileSource, Progress, QueryTime, Series, SourceError, SourceFuture, TimeRange,
};

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
/// one per sample type; delta iff the profile has a duration (Parca's rule at ingest,
/// so that a file, the store and a Parca server name the same data alike).
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
                delta: p.duration_nanos != 0,
            }
        })
        .collect()
}

/// Where a profile of a [`FileSource`] is: a file, or a time slice of a perf.data file.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct FilePart {
    /// The file.
    pub path: PathBuf,
    /// The time slice of a perf.data file; `None`: the whole file.
    pub slice: Option<Slice>,
}

impl FilePart {
    /// The part's name in messages: its path, with the slice's offset.
    fn name(&self) -> String {
        match &self.slice {
            None => self.path.display().to_string(),
            Some(s) => format!(
                "{} (at +{} ms)",
                self.path.display(),
                s.offset_nanos / 1_000_000
            ),
        }
    }

    /// Reads the part's pprof bytes into `buf`: the file's, or its slice's (of the
    /// file as `whole` keeps it decoded).
    fn read(
        &self,
        buf: &mut Vec<u8>,
        decode: DecodeOptions,
        whole: &WholeFiles,
    ) -> Result<(), String> {
        match &self.slice {
            None => read_into(&self.path, buf, decode).map_err(|e| e.to_string()),
            Some(slice) => {
                let file = whole.get(&self.path, decode)?;
                *buf = codec::encode(&slice_of(&file, slice));
                Ok(())
            }
        }
    }
}

/// The files whose slices were read last, decoded whole, so that a merge of a file's
/// slices reads (and converts, and symbolizes) the file once, not once a slice.
#[derive(Debug, Default)]
struct WholeFiles(Mutex<Vec<(PathBuf, Arc<Profile>)>>);

/// How many files [`WholeFiles`] keeps: a merge reads a file's slices one after
/// another, on up to four threads.
const WHOLE_FILES_KEPT: usize = 2;

impl WholeFiles {
    /// The file at `path`, decoded whole: kept, or read now (the others wait, as they
    /// mostly want the same file).
    fn get(&self, path: &Path, decode: DecodeOptions) -> Result<Arc<Profile>, String> {
        let mut kept = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some((_, p)) = kept.iter().find(|(p, _)| p == path) {
            return Ok(Arc::clone(p));
        }
        let mut buf = Vec::new();
        read_into(path, &mut buf, decode).map_err(|e| e.to_string())?;
        let profile = codec::decode_with(&buf, decode)
            .map(Arc::new)
            .map_err(|e| format!("{}: {e}", path.display()))?;
        kept.insert(0, (path.to_path_buf(), Arc::clone(&profile)));
        kept.truncate(WHOLE_FILES_KEPT);
        Ok(profile)
    }
}

/// The index entry of one file or slice: its groups hold only their sample labels,
/// shared with every file's groups with the same ones through `interner`, and its path
/// and binary are its base labels.
fn entry(interner: &Mutex<Interner>, part: FilePart, profile: &Profile) -> Entry<FilePart> {
    let path = part.path.as_path();
    // A file without a time (folded stacks, a .cpuprofile) was written as its profile
    // ended: it began its duration before.
    let time_nanos = if profile.time_nanos != 0 {
        profile.time_nanos
    } else {
        modified_nanos(path).saturating_sub(profile.duration_nanos)
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
    let types = profile_types_of(profile);
    let groups = groups_of(profile, &Labels::new(), SampleLabels::All);
    let mut interner = interner.lock().unwrap_or_else(PoisonError::into_inner);
    Entry {
        locator: part,
        time_nanos,
        duration_nanos: profile.duration_nanos,
        period: profile.period,
        types: interner.types(types),
        default_type: profile.default_sample_index(),
        rated: index::profile_gives_rate(profile),
        groups: interner.groups(groups),
        base_labels: Arc::new(file_labels),
        groups_over_base: true,
    }
}

/// `profile` with its start from the file's modification time when it has none (a
/// .cpuprofile): its time slices are then placed from there.
fn timed(mut profile: Profile, path: &Path) -> Profile {
    if profile.time_nanos == 0 {
        profile.time_nanos = modified_nanos(path).saturating_sub(profile.duration_nanos);
    }
    profile
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
    index: Arc<Index<FilePart>>,
    decode: DecodeOptions,
    /// The files' samples, when kept as they were indexed: merges of the files kept
    /// are sums of them.
    stacks: Option<Arc<KeptStacks>>,
    /// The perf.data files last read for their slices.
    whole: Arc<WholeFiles>,
}

/// The samples kept of the files of a [`FileSource`] as they were indexed.
struct KeptStacks {
    index: StackIndex,
    of: HashMap<FilePart, ProfileStacks>,
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
    /// all cores ([`Files::read`]), without their stacks; `progress` counts them.
    pub fn open(
        paths: &[PathBuf],
        decode: DecodeOptions,
        progress: &Progress,
    ) -> Result<(Self, Vec<String>), ReadError> {
        Self::open_with(paths, decode, None, progress)
    }

    /// [`FileSource::open`], keeping the files' samples as they are read, up to about
    /// `budget` bytes of them ([`StackIndexBuilder`]): a merge of files whose samples
    /// are kept adds them up instead of reading the files again, several times
    /// faster. For a window, which merges again and again what it indexed once (and
    /// keeps its errors as text).
    pub fn open_keeping_stacks(
        paths: &[PathBuf],
        decode: DecodeOptions,
        budget: usize,
        progress: &Progress,
    ) -> Result<(Self, Vec<String>), ReadError> {
        let builder = StackIndexBuilder::new(budget);
        Self::open_with(paths, decode, Some(builder), progress)
    }

    fn open_with(
        paths: &[PathBuf],
        decode: DecodeOptions,
        builder: Option<StackIndexBuilder>,
        progress: &Progress,
    ) -> Result<(Self, Vec<String>), ReadError> {
        let files = Files::list(&[paths])?;
        let fold = IndexFiles {
            builder: builder.as_ref(),
            interner: Mutex::new(Interner::default()),
        };
        let options = ReadOptions {
            progress: Some(progress),
            ..ReadOptions::new(decode)
        };
        let read = files.read(&fold, options)?;
        let (entries, kept) = read.folded;
        if entries.is_empty() {
            return Err(ReadError::NoProfiles {
                paths: paths.to_vec(),
            });
        }
        Ok((
            Self {
                index: Arc::new(Index::new(entries, SampleLabels::All)),
                decode,
                whole: Arc::default(),
                stacks: builder.map(|b| {
                    Arc::new(KeptStacks {
                        index: b.finish(),
                        of: kept,
                    })
                }),
            },
            read.skipped,
        ))
    }

    /// The merge of `entries` from their kept samples: `None` when one of them has
    /// none kept, or their sample types differ (a merge that reads them says so).
    fn merge_kept(
        &self,
        entries: &[&Entry<FilePart>],
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

    /// The merge of `entries`' selected samples: from their kept samples when there are
    /// some, else read again from their files.
    fn merge_entries(
        &self,
        entries: &[&Entry<FilePart>],
        selector: &Selector,
        progress: &Progress,
    ) -> Result<Profile, SourceError> {
        if let Some(merged) = self.merge_kept(entries, selector, progress) {
            return merged;
        }
        index::merge(
            entries,
            selector,
            SampleLabels::All,
            false,
            self.decode,
            progress,
            FilePart::name,
            |part, buf| part.read(buf, self.decode, &self.whole).map(|()| 0),
        )
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

    fn default_type(&self, range: TimeRange) -> SourceFuture<'_, Option<ProfileType>> {
        Box::pin(async move { Ok(self.index.default_type(range)) })
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
            self.merge_entries(&entries, &selector, &progress)
        })
    }

    fn query_each(
        &self,
        selector: Selector,
        range: TimeRange,
        progress: Progress,
    ) -> SourceFuture<'_, Vec<Profile>> {
        Box::pin(async move {
            let entries = self.index.to_merge(&selector, QueryTime::Merge(range));
            index::each_time(
                entries,
                |e| e.time_nanos,
                |at_once| self.merge_entries(at_once, &selector, &progress),
            )
        })
    }
}

/// [`FileSource::open`]'s fold: each file's index entry (its samples kept by
/// `builder`, when there is one).
struct IndexFiles<'a> {
    builder: Option<&'a StackIndexBuilder>,
    /// Shared by every thread: entries with the same label sets share one copy.
    interner: Mutex<Interner>,
}

impl Fold for IndexFiles<'_> {
    type Run = (Vec<Entry<FilePart>>, HashMap<FilePart, ProfileStacks>);

    fn run(&self) -> Self::Run {
        Self::Run::default()
    }

    fn add(
        &self,
        (entries, kept): &mut Self::Run,
        file: FileRef<'_>,
        bytes: FileBytes<'_>,
    ) -> Result<(), NotAdded> {
        // The index needs each file's header, labels and values, not its stacks,
        // unless they are kept.
        let decode = bytes.decode_options();
        let whole = FilePart {
            path: file.path.to_path_buf(),
            slice: None,
        };
        let (profile, stacks) = match self.builder {
            Some(builder) => decode_keeping_stacks(bytes.stored, decode, builder),
            None => decode_without_stacks(bytes.stored, decode).map(|p| (p, None)),
        }
        .map_err(|e| file.broken(e))?;
        let Some(slices) = slices(&timed(profile.clone(), file.path)) else {
            if let Some(stacks) = stacks {
                kept.insert(whole.clone(), stacks);
            }
            entries.push(entry(&self.interner, whole, &profile));
            return Ok(());
        };
        // A perf.data file: an entry (and kept samples) per time slice.
        let full = match self.builder {
            Some(_) => Some(timed(
                bytes.profile().map_err(|e| file.broken(e))?,
                file.path,
            )),
            None => None,
        };
        let profile = timed(profile, file.path);
        for slice in slices {
            let part = FilePart {
                slice: Some(slice),
                ..whole.clone()
            };
            match (self.builder, &full) {
                (Some(builder), Some(full)) => {
                    let bytes = codec::encode(&slice_of(full, &slice));
                    let (sliced, stacks) = decode_keeping_stacks(&bytes, decode, builder)
                        .map_err(|e| file.broken(e))?;
                    if let Some(stacks) = stacks {
                        kept.insert(part.clone(), stacks);
                    }
                    entries.push(entry(&self.interner, part, &sliced));
                }
                _ => entries.push(entry(&self.interner, part, &slice_of(&profile, &slice))),
            }
        }
        Ok(())
    }

    fn absorb(&self, (entries, kept): &mut Self::Run, later: Self::Run) -> Result<(), ReadError> {
        entries.extend(later.0);
        kept.extend(later.1);
        Ok(())
    }
}

//! The file source: profiles in files and directories, each placed at its pprof
//! `time_nanos` (the file's modification time when absent), answering the
//! [`ProfileSource`] questions from an index built once when opened.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, mpsc};

use profile_model::Profile;
use profile_model::codec::{self, DecodeOptions};
use profile_model::merge::Merger;

use crate::selector::{ProfileType, Selector};
use crate::source::{
    Labels, Point, ProfileSource, Progress, QueryTime, Series, SourceError, SourceFuture, TimeRange,
};

/// Every regular file below `dir` (hidden ones left out), sorted by path.
pub fn files_under(dir: &Path) -> Result<Vec<PathBuf>, String> {
    let mut files = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(d) = pending.pop() {
        let entries = std::fs::read_dir(&d).map_err(|e| format!("{}: {e}", d.display()))?;
        for entry in entries {
            let entry = entry.map_err(|e| format!("{}: {e}", d.display()))?;
            if entry.file_name().to_string_lossy().starts_with('.') {
                continue;
            }
            let path = entry.path();
            if path.is_dir() {
                pending.push(path);
            } else if path.is_file() {
                files.push(path);
            }
        }
    }
    files.sort();
    Ok(files)
}

/// Reads and decodes one pprof file; errors name the file.
pub fn read_profile(path: &Path, options: DecodeOptions) -> Result<Profile, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
    codec::decode_with(&bytes, options).map_err(|e| format!("{}: {e}", path.display()))
}

/// Decodes `files` on all cores and calls `each(index, result)` in file order, while
/// later files are being decoded. An error from `each` stops the decoding and is
/// returned.
pub fn decode_in_order<E>(
    files: &[PathBuf],
    options: DecodeOptions,
    mut each: impl FnMut(usize, Result<Profile, String>) -> Result<(), E>,
) -> Result<(), E> {
    let next = AtomicUsize::new(0);
    let stop = AtomicBool::new(false);
    let workers = std::thread::available_parallelism()
        .map_or(2, usize::from)
        .clamp(1, 4);
    std::thread::scope(|scope| {
        let (tx, rx) = mpsc::sync_channel::<(usize, Result<Profile, String>)>(2 * workers);
        for _ in 0..workers {
            let tx = tx.clone();
            let (next, stop) = (&next, &stop);
            scope.spawn(move || {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    if i >= files.len() || stop.load(Ordering::Relaxed) {
                        break;
                    }
                    if tx.send((i, read_profile(&files[i], options))).is_err() {
                        break;
                    }
                }
            });
        }
        drop(tx);
        // Results arrive out of order: hand them on in file order.
        let mut pending = BTreeMap::new();
        let mut expected = 0;
        let mut result = Ok(());
        'receive: for (i, decoded) in rx.iter() {
            pending.insert(i, decoded);
            while let Some(decoded) = pending.remove(&expected) {
                expected += 1;
                if let Err(e) = each(expected - 1, decoded) {
                    result = Err(e);
                    break 'receive;
                }
            }
        }
        stop.store(true, Ordering::Relaxed);
        // Unblock workers waiting to send, so the scope can end.
        drop(rx);
        result
    })
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

/// The samples of one label set of one file, summed per sample type.
#[derive(Debug, Clone)]
struct Group {
    labels: Labels,
    values: Vec<i64>,
}

/// What the index keeps of one file.
#[derive(Debug, Clone)]
struct Entry {
    path: PathBuf,
    time_nanos: i64,
    duration_nanos: i64,
    types: Vec<ProfileType>,
    /// Labels every sample of the file has: its path and main binary.
    file_labels: Labels,
    groups: Vec<Group>,
}

impl Entry {
    fn new(path: &Path, profile: &Profile) -> Self {
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
        let mut by_set: BTreeMap<u32, Vec<i64>> = BTreeMap::new();
        for i in 0..profile.samples.len() {
            let sums = by_set
                .entry(profile.samples.label_set[i])
                .or_insert_with(|| vec![0; profile.sample_types.len()]);
            for (sum, column) in sums.iter_mut().zip(&profile.samples.values) {
                *sum += column[i];
            }
        }
        let groups = by_set
            .into_iter()
            .map(|(set, values)| Group {
                labels: set_labels(profile, set, &file_labels),
                values,
            })
            .collect();
        Self {
            path: path.to_path_buf(),
            time_nanos,
            duration_nanos: profile.duration_nanos,
            types: profile_types_of(profile),
            file_labels,
            groups,
        }
    }

    fn type_index(&self, t: &ProfileType) -> Option<usize> {
        self.types.iter().position(|x| x == t)
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
    entries: Arc<Vec<Entry>>,
    decode: DecodeOptions,
}

impl FileSource {
    /// Indexes files and directories (searched recursively). Returns the source and
    /// one line per file that could not be read, which is skipped. Files are decoded on
    /// all cores; `progress` counts them.
    pub fn open(
        paths: &[PathBuf],
        decode: DecodeOptions,
        progress: &Progress,
    ) -> Result<(Self, Vec<String>), String> {
        let mut files = Vec::new();
        for path in paths {
            if path.is_dir() {
                files.extend(files_under(path)?);
            } else {
                files.push(path.clone());
            }
        }
        progress.set_total(files.len());
        let mut entries = Vec::new();
        let mut skipped = Vec::new();
        decode_in_order(&files, decode, |i, decoded| {
            if progress.is_cancelled() {
                return Err("cancelled".to_string());
            }
            progress.step();
            match decoded {
                Ok(p) => entries.push(Entry::new(&files[i], &p)),
                Err(e) => skipped.push(e),
            }
            Ok(())
        })?;
        if entries.is_empty() {
            let names: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
            return Err(match skipped.first() {
                Some(first) => format!("no readable profiles in {} ({first})", names.join(", ")),
                None => format!("no profiles found in {}", names.join(", ")),
            });
        }
        entries.sort_by(|a, b| (a.time_nanos, &a.path).cmp(&(b.time_nanos, &b.path)));
        Ok((
            Self {
                entries: Arc::new(entries),
                decode,
            },
            skipped,
        ))
    }

    /// Number of profiles indexed.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether no profile is indexed.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The time span of all profiles, start of the first to end of the last.
    pub fn span(&self) -> TimeRange {
        let start = self.entries.first().map_or(0, |e| e.time_nanos);
        let end = self
            .entries
            .iter()
            .map(|e| e.time_nanos + e.duration_nanos.max(1))
            .max()
            .unwrap_or(start);
        TimeRange {
            start_nanos: start,
            end_nanos: end,
        }
    }

    /// The groups (label sets) of every file in range that the selector selects, with
    /// the index of the selected sample type.
    fn selected<'a>(
        &'a self,
        selector: &'a Selector,
        range: TimeRange,
    ) -> impl Iterator<Item = (&'a Entry, usize, &'a Group)> + 'a {
        self.entries
            .iter()
            .filter(move |e| range.contains(e.time_nanos))
            .filter_map(move |e| e.type_index(&selector.profile_type).map(|t| (e, t)))
            .flat_map(|(e, t)| e.groups.iter().map(move |g| (e, t, g)))
            .filter(move |(_, _, g)| {
                selector.matches(|name| g.labels.get(name).map(String::as_str))
            })
    }

    /// The selected samples of the files chosen by `time`, merged.
    fn merged(
        &self,
        selector: &Selector,
        time: QueryTime,
        progress: &Progress,
    ) -> Result<Profile, SourceError> {
        let range = match time {
            QueryTime::Single(t) => TimeRange {
                start_nanos: t,
                end_nanos: t.saturating_add(1),
            },
            QueryTime::Merge(range) => range,
        };
        let files: BTreeSet<usize> = self
            .entries
            .iter()
            .enumerate()
            .filter(|(_, e)| range.contains(e.time_nanos))
            .filter(|(_, e)| e.type_index(&selector.profile_type).is_some())
            .filter(|(_, e)| {
                e.groups
                    .iter()
                    .any(|g| selector.matches(|name| g.labels.get(name).map(String::as_str)))
            })
            .map(|(i, _)| i)
            .collect();
        if files.is_empty() {
            return Err(SourceError::NoData);
        }
        progress.set_total(files.len());
        let files: Vec<&Entry> = files.into_iter().map(|i| &self.entries[i]).collect();
        let paths: Vec<PathBuf> = files.iter().map(|e| e.path.clone()).collect();
        let mut merger = Merger::new();
        decode_in_order(&paths, self.decode, |i, decoded| {
            if progress.is_cancelled() {
                return Err(SourceError::Cancelled);
            }
            let entry = files[i];
            let profile = decoded.map_err(SourceError::Failed)?;
            let kept = select_samples(&profile, selector, &entry.file_labels);
            merger
                .add(&entry.path.display().to_string(), &kept)
                .map_err(|e| SourceError::Failed(e.to_string()))?;
            progress.step();
            Ok(())
        })?;
        Ok(merger.finish())
    }
}

/// The labels of a label set of `profile`, with the file's labels underneath.
fn set_labels(profile: &Profile, set: u32, file_labels: &Labels) -> Labels {
    let mut labels = file_labels.clone();
    for l in &profile.label_sets[set as usize] {
        labels.insert(profile.str(l.key).to_string(), profile.label_value(l));
    }
    labels
}

/// The samples of `profile` whose labels (with the file's) the selector selects.
fn select_samples(profile: &Profile, selector: &Selector, file_labels: &Labels) -> Profile {
    if selector.matchers.is_empty() {
        return profile.clone();
    }
    // The same labels the index groups by, so that what the plot selects is what merges.
    let set_selected: Vec<bool> = (0..profile.label_sets.len() as u32)
        .map(|set| {
            let labels = set_labels(profile, set, file_labels);
            selector.matches(|name| labels.get(name).map(String::as_str))
        })
        .collect();
    profile.retain_samples(|p, i| set_selected[p.samples.label_set[i] as usize])
}

impl ProfileSource for FileSource {
    fn profile_types(&self, range: TimeRange) -> SourceFuture<'_, Vec<ProfileType>> {
        Box::pin(async move {
            let types: BTreeSet<ProfileType> = self
                .entries
                .iter()
                .filter(|e| range.contains(e.time_nanos))
                .flat_map(|e| e.types.iter().cloned())
                .collect();
            Ok(types.into_iter().collect())
        })
    }

    fn labels(&self, selector: Selector, range: TimeRange) -> SourceFuture<'_, Vec<String>> {
        Box::pin(async move {
            let names: BTreeSet<String> = self
                .selected(&selector, range)
                .flat_map(|(_, _, g)| g.labels.keys().cloned())
                .collect();
            Ok(names.into_iter().collect())
        })
    }

    fn values(
        &self,
        name: String,
        selector: Selector,
        range: TimeRange,
    ) -> SourceFuture<'_, Vec<String>> {
        Box::pin(async move {
            let values: BTreeSet<String> = self
                .selected(&selector, range)
                .filter_map(|(_, _, g)| g.labels.get(&name).cloned())
                .collect();
            Ok(values.into_iter().collect())
        })
    }

    fn query_range(
        &self,
        selector: Selector,
        range: TimeRange,
        step_nanos: i64,
        sum_by: Option<Vec<String>>,
    ) -> SourceFuture<'_, Vec<Series>> {
        Box::pin(async move {
            if step_nanos <= 0 {
                return Err(SourceError::InvalidArgument(
                    "the step must be positive".into(),
                ));
            }
            // series labels → bucket start → (value, profiled nanoseconds)
            let mut series: BTreeMap<Labels, BTreeMap<i64, (i64, i64)>> = BTreeMap::new();
            let mut this_file: BTreeMap<Labels, i64> = BTreeMap::new();
            let mut current: Option<&Entry> = None;
            let mut flush = |entry: &Entry, this_file: &mut BTreeMap<Labels, i64>| {
                let bucket = entry.time_nanos - entry.time_nanos.rem_euclid(step_nanos);
                for (labels, value) in std::mem::take(this_file) {
                    let point = series
                        .entry(labels)
                        .or_default()
                        .entry(bucket)
                        .or_insert((0, 0));
                    point.0 += value;
                    point.1 += entry.duration_nanos;
                }
            };
            for (entry, t, group) in self.selected(&selector, range) {
                // The groups of one file come together: flush the previous file's.
                if let Some(c) = current.filter(|c| !std::ptr::eq(*c, entry)) {
                    flush(c, &mut this_file);
                }
                current = Some(entry);
                let key: Labels = match &sum_by {
                    None => group.labels.clone(),
                    Some(names) => names
                        .iter()
                        .filter_map(|k| group.labels.get(k).map(|v| (k.clone(), v.clone())))
                        .collect(),
                };
                *this_file.entry(key).or_insert(0) += group.values[t];
            }
            if let Some(c) = current {
                flush(c, &mut this_file);
            }
            if series.is_empty() {
                return Err(SourceError::NoData);
            }
            Ok(series
                .into_iter()
                .map(|(labels, points)| Series {
                    labels,
                    points: points
                        .into_iter()
                        .map(|(time_nanos, (value, duration_nanos))| {
                            let seconds = if duration_nanos > 0 {
                                duration_nanos as f64 / 1e9
                            } else {
                                step_nanos as f64 / 1e9
                            };
                            Point {
                                time_nanos,
                                value,
                                value_per_second: value as f64 / seconds,
                                duration_nanos,
                            }
                        })
                        .collect(),
                })
                .collect())
        })
    }

    fn query(
        &self,
        selector: Selector,
        time: QueryTime,
        progress: Progress,
    ) -> SourceFuture<'_, Profile> {
        Box::pin(async move { self.merged(&selector, time, &progress) })
    }
}

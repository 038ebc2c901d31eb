//! The index every local source answers from: per profile its time, duration, profile
//! types and the value sums of each label set ("group"), and the questions of
//! [`crate::ProfileSource`] answered over it. [`crate::FileSource`] locates a profile's
//! bytes by file path, [`crate::store::Store`] by record; the rest is shared.

use std::collections::{BTreeMap, BTreeSet};
use std::ops::ControlFlow;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};

use profile_model::Profile;
use profile_model::merge::Merger;

use crate::selector::{ProfileType, Selector};
use crate::source::{Labels, Point, Progress, QueryTime, Series, SourceError, TimeRange};

/// Which pprof sample labels become series labels.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SampleLabels {
    /// String and numeric labels (numbers in decimal): how flint reads files.
    All,
    /// String labels only, as Parca's `LabelNamesFromSamples` at ingest.
    StringsOnly,
}

/// The samples of one label set of one profile, summed per profile type.
#[derive(Debug, Clone, PartialEq)]
pub struct Group {
    /// The series labels: the profile's labels with the sample labels over them.
    pub labels: Arc<Labels>,
    /// One sum per profile type of the entry.
    pub values: Vec<i64>,
}

/// What the index keeps of one profile; `L` says where its bytes are.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry<L> {
    /// Where the profile's bytes are.
    pub locator: L,
    /// Start of the profile.
    pub time_nanos: i64,
    /// Profiled time, 0 when unknown.
    pub duration_nanos: i64,
    /// One profile type per pprof sample type, in pprof order.
    pub types: Arc<[ProfileType]>,
    /// Labels every sample of the profile has (a file's path, a write's labels).
    pub base_labels: Arc<Labels>,
    /// Value sums per distinct series label set.
    pub groups: Vec<Group>,
}

impl<L> Entry<L> {
    /// Index of profile type `t` among the entry's types.
    pub fn type_index(&self, t: &ProfileType) -> Option<usize> {
        self.types.iter().position(|x| x == t)
    }

    /// Whether the selector selects any group of this entry.
    fn any_selected(&self, selector: &Selector) -> bool {
        self.type_index(&selector.profile_type).is_some()
            && self
                .groups
                .iter()
                .any(|g| selector.matches(|name| g.labels.get(name).map(String::as_str)))
    }
}

/// The labels of label set `set` of `profile`, with `base` underneath.
pub fn set_labels(profile: &Profile, set: u32, base: &Labels, rule: SampleLabels) -> Labels {
    let mut labels = base.clone();
    for l in profile.label_sets.get(set as usize).into_iter().flatten() {
        if rule == SampleLabels::StringsOnly && l.str == 0 {
            continue;
        }
        labels.insert(profile.str(l.key).to_string(), profile.label_value(l));
    }
    labels
}

/// The value sums of `profile` per series label set, in label order.
pub fn groups_of(profile: &Profile, base: &Labels, rule: SampleLabels) -> Vec<Group> {
    let set_labels: Vec<Labels> = (0..profile.label_sets.len() as u32)
        .map(|set| set_labels(profile, set, base, rule))
        .collect();
    let mut by_labels: BTreeMap<&Labels, Vec<i64>> = BTreeMap::new();
    for i in 0..profile.samples.len() {
        let Some(labels) = set_labels.get(profile.samples.label_set[i] as usize) else {
            continue;
        };
        let sums = by_labels
            .entry(labels)
            .or_insert_with(|| vec![0; profile.sample_types.len()]);
        for (sum, column) in sums.iter_mut().zip(&profile.samples.values) {
            *sum += column[i];
        }
    }
    by_labels
        .into_iter()
        .map(|(labels, values)| Group {
            labels: Arc::new(labels.clone()),
            values,
        })
        .collect()
}

/// The samples of `profile` whose labels (over `base`) the selector selects: the same
/// labels the index groups by, so that what the plot selects is what merges.
pub fn select_samples(
    profile: Profile,
    selector: &Selector,
    base: &Labels,
    rule: SampleLabels,
) -> Profile {
    if selector.matchers.is_empty() {
        return profile;
    }
    let set_selected: Vec<bool> = (0..profile.label_sets.len() as u32)
        .map(|set| {
            let labels = set_labels(&profile, set, base, rule);
            selector.matches(|name| labels.get(name).map(String::as_str))
        })
        .collect();
    // Often every label set is selected (the matchers name written labels): no copy.
    let used = |set: &u32| set_selected.get(*set as usize).copied().unwrap_or(false);
    if profile.samples.label_set.iter().all(used) {
        return profile;
    }
    profile.retain_samples(|p, i| {
        set_selected
            .get(p.samples.label_set[i] as usize)
            .copied()
            .unwrap_or(false)
    })
}

/// Calls `load(i)` for `0..count` on up to four threads and hands the results to
/// `each(i, result)` in order, while later ones are being loaded. An error from `each`
/// stops the loading and is returned.
pub fn load_in_order<T: Send, E>(
    count: usize,
    load: impl Fn(usize) -> T + Sync,
    mut each: impl FnMut(usize, T) -> Result<(), E>,
) -> Result<(), E> {
    let next = AtomicUsize::new(0);
    let stop = AtomicBool::new(false);
    let workers = worker_count();
    std::thread::scope(|scope| {
        let (tx, rx) = mpsc::sync_channel::<(usize, T)>(2 * workers);
        for _ in 0..workers {
            let tx = tx.clone();
            let (next, stop, load) = (&next, &stop, &load);
            scope.spawn(move || {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    if i >= count || stop.load(Ordering::Relaxed) {
                        break;
                    }
                    if tx.send((i, load(i))).is_err() {
                        break;
                    }
                }
            });
        }
        drop(tx);
        // Results arrive out of order: hand them on in order.
        let mut pending = BTreeMap::new();
        let mut expected = 0;
        let mut result = Ok(());
        'receive: for (i, loaded) in rx.iter() {
            pending.insert(i, loaded);
            while let Some(loaded) = pending.remove(&expected) {
                expected += 1;
                if let Err(e) = each(expected - 1, loaded) {
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

/// How many threads load profiles: the cores, at most four.
fn worker_count() -> usize {
    std::thread::available_parallelism()
        .map_or(2, usize::from)
        .clamp(1, 4)
}

/// Runs `step(state, i)` for `0..count` on up to four threads, each folding into a
/// state of its own made by `init`, and returns the states. Indices are taken in
/// increasing order, and once a step breaks no thread takes a new one: every index
/// below the one that broke has been stepped.
pub fn fold_in_parallel<S: Send>(
    count: usize,
    init: impl Fn() -> S + Sync,
    step: impl Fn(&mut S, usize) -> ControlFlow<()> + Sync,
) -> Vec<S> {
    let next = AtomicUsize::new(0);
    let stop = AtomicBool::new(false);
    std::thread::scope(|scope| {
        let workers: Vec<_> = (0..worker_count().min(count.max(1)))
            .map(|_| {
                let (next, stop, init, step) = (&next, &stop, &init, &step);
                scope.spawn(move || {
                    let mut state = init();
                    while !stop.load(Ordering::Relaxed) {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        if i >= count {
                            break;
                        }
                        if step(&mut state, i).is_break() {
                            stop.store(true, Ordering::Relaxed);
                        }
                    }
                    state
                })
            })
            .collect();
        workers
            .into_iter()
            .map(|w| {
                w.join()
                    .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
            })
            .collect()
    })
}

/// The range a [`QueryTime`] covers.
pub fn query_range_of(time: QueryTime) -> TimeRange {
    match time {
        QueryTime::Single(t) => TimeRange {
            start_nanos: t,
            end_nanos: t.saturating_add(1),
        },
        QueryTime::Merge(range) => range,
    }
}

/// Entries sorted by (time, locator), and the answers to the source questions.
#[derive(Debug, Clone)]
pub struct Index<L> {
    entries: Vec<Entry<L>>,
    rule: SampleLabels,
}

impl<L: Ord> Index<L> {
    /// An index of `entries` (any order) whose groups were built with `rule`.
    pub fn new(mut entries: Vec<Entry<L>>, rule: SampleLabels) -> Self {
        entries.sort_by(|a, b| (a.time_nanos, &a.locator).cmp(&(b.time_nanos, &b.locator)));
        Self { entries, rule }
    }

    /// Adds an entry in its place.
    pub fn insert(&mut self, entry: Entry<L>) {
        let at = self
            .entries
            .partition_point(|e| (e.time_nanos, &e.locator) <= (entry.time_nanos, &entry.locator));
        self.entries.insert(at, entry);
    }

    /// Keeps only the entries for which `keep` is true.
    pub fn retain(&mut self, keep: impl FnMut(&Entry<L>) -> bool) {
        self.entries.retain(keep);
    }
}

impl<L> Index<L> {
    /// All entries, in time order.
    pub fn entries(&self) -> &[Entry<L>] {
        &self.entries
    }

    /// How sample labels became series labels.
    pub fn rule(&self) -> SampleLabels {
        self.rule
    }

    /// Number of entries.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether there are no entries.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The entries whose time lies in `range`.
    pub fn in_range(&self, range: TimeRange) -> &[Entry<L>] {
        let start = self
            .entries
            .partition_point(|e| e.time_nanos < range.start_nanos);
        let end = self
            .entries
            .partition_point(|e| e.time_nanos < range.end_nanos);
        self.entries.get(start..end.max(start)).unwrap_or(&[])
    }

    /// The time span of all entries, start of the first to end of the last.
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

    /// The groups of every entry in range that the selector selects, with the index of
    /// the selected profile type.
    fn selected<'a>(
        &'a self,
        selector: &'a Selector,
        range: TimeRange,
    ) -> impl Iterator<Item = (&'a Entry<L>, usize, &'a Group)> + 'a {
        self.in_range(range)
            .iter()
            .filter_map(move |e| e.type_index(&selector.profile_type).map(|t| (e, t)))
            .flat_map(|(e, t)| e.groups.iter().map(move |g| (e, t, g)))
            .filter(move |(_, _, g)| {
                selector.matches(|name| g.labels.get(name).map(String::as_str))
            })
    }

    /// The profile types with data in the range, sorted.
    pub fn profile_types(&self, range: TimeRange) -> Vec<ProfileType> {
        let types: BTreeSet<&ProfileType> = self
            .in_range(range)
            .iter()
            .flat_map(|e| e.types.iter())
            .collect();
        types.into_iter().cloned().collect()
    }

    /// Label names of the selected series in the range, sorted.
    pub fn labels(&self, selector: &Selector, range: TimeRange) -> Vec<String> {
        let names: BTreeSet<&String> = self
            .selected(selector, range)
            .flat_map(|(_, _, g)| g.labels.keys())
            .collect();
        names.into_iter().cloned().collect()
    }

    /// Values of label `name` among the selected series in the range, sorted.
    pub fn values(&self, name: &str, selector: &Selector, range: TimeRange) -> Vec<String> {
        let values: BTreeSet<&String> = self
            .selected(selector, range)
            .filter_map(|(_, _, g)| g.labels.get(name))
            .collect();
        values.into_iter().cloned().collect()
    }

    /// The selected series per step, summed by `sum_by`; see
    /// [`crate::ProfileSource::query_range`].
    pub fn query_range(
        &self,
        selector: &Selector,
        range: TimeRange,
        step_nanos: i64,
        sum_by: Option<&[String]>,
    ) -> Result<Vec<Series>, SourceError> {
        if step_nanos <= 0 {
            return Err(SourceError::InvalidArgument(
                "the step must be positive".into(),
            ));
        }
        // series labels → bucket start → (value, profiled nanoseconds)
        let mut series: BTreeMap<Labels, BTreeMap<i64, (i64, i64)>> = BTreeMap::new();
        let mut this_entry: BTreeMap<Labels, i64> = BTreeMap::new();
        let mut current: Option<&Entry<L>> = None;
        let mut flush = |entry: &Entry<L>, this_entry: &mut BTreeMap<Labels, i64>| {
            let bucket = entry.time_nanos - entry.time_nanos.rem_euclid(step_nanos);
            for (labels, value) in std::mem::take(this_entry) {
                let point = series
                    .entry(labels)
                    .or_default()
                    .entry(bucket)
                    .or_insert((0, 0));
                point.0 += value;
                point.1 += entry.duration_nanos;
            }
        };
        for (entry, t, group) in self.selected(selector, range) {
            // The groups of one entry come together: flush the previous entry's.
            if let Some(c) = current.filter(|c| !std::ptr::eq(*c, entry)) {
                flush(c, &mut this_entry);
            }
            current = Some(entry);
            let value = group.values.get(t).copied().unwrap_or(0);
            match sum_by {
                None => match this_entry.get_mut(group.labels.as_ref()) {
                    Some(sum) => *sum += value,
                    None => {
                        this_entry.insert(group.labels.as_ref().clone(), value);
                    }
                },
                Some(names) => {
                    let key: Labels = names
                        .iter()
                        .filter_map(|k| group.labels.get(k).map(|v| (k.clone(), v.clone())))
                        .collect();
                    *this_entry.entry(key).or_insert(0) += value;
                }
            }
        }
        if let Some(c) = current {
            flush(c, &mut this_entry);
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
    }

    /// The entries a query for `time` reads: those in its range with a selected group.
    pub fn to_merge(&self, selector: &Selector, time: QueryTime) -> Vec<&Entry<L>> {
        self.in_range(query_range_of(time))
            .iter()
            .filter(|e| e.any_selected(selector))
            .collect()
    }
}

/// Merges the selected samples of `entries`, loading each with `load` (in parallel);
/// `name` names an entry in errors. With `one_type`, each profile is first cut to the
/// selected profile type (as Parca answers). [`SourceError::NoData`] when `entries` is
/// empty.
pub fn merge<L: Sync>(
    entries: &[&Entry<L>],
    selector: &Selector,
    rule: SampleLabels,
    one_type: bool,
    progress: &Progress,
    name: impl Fn(&L) -> String,
    load: impl Fn(&L) -> Result<Profile, String> + Sync,
) -> Result<Profile, SourceError> {
    if entries.is_empty() {
        return Err(SourceError::NoData);
    }
    progress.set_total(entries.len());
    let mut merger = Merger::new();
    // Profiles merged go back to the loading threads to be freed there: freeing one
    // (thousands of strings and vectors) took a sixth of the merging thread, which
    // the others wait for.
    let (merged_tx, merged_rx) = mpsc::channel::<Profile>();
    let merged_rx = Mutex::new(merged_rx);
    load_in_order(
        entries.len(),
        |i| {
            if let Ok(merged) = merged_rx.try_lock() {
                merged.try_iter().for_each(drop);
            }
            load(&entries[i].locator)
        },
        |i, loaded| {
            if progress.is_cancelled() {
                return Err(SourceError::Cancelled);
            }
            let entry = entries[i];
            let profile = loaded.map_err(SourceError::Failed)?;
            let mut kept = select_samples(profile, selector, &entry.base_labels, rule);
            if one_type {
                let t = entry.type_index(&selector.profile_type).unwrap_or(0);
                kept = kept.only_sample_type(t).ok_or_else(|| {
                    SourceError::Failed(format!("{}: no sample type {t}", name(&entry.locator)))
                })?;
            }
            merger
                .add(&name(&entry.locator), &kept)
                .map_err(|e| SourceError::Failed(e.to_string()))?;
            let _ = merged_tx.send(kept);
            progress.step();
            Ok(())
        },
    )?;
    Ok(merger.finish())
}

//! The index every local source answers from: per profile its time, duration, profile
//! types and the value sums of each label set ("group"), and the questions of
//! [`crate::ProfileSource`] answered over it. [`crate::FileSource`] locates a profile's
//! bytes by file path, [`crate::store::Store`] by record; the rest is shared.

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};
use std::ops::ControlFlow;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex, PoisonError};

use profile_model::codec::{DecodeOptions, message_bytes};
use profile_model::merge::{KeepLabels, LabelValue, Merger, Selection};
use profile_model::{Profile, ProfileError, units};

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
    /// The series labels, or only the sample labels when the entry's groups are over
    /// its base labels ([`Entry::groups_over_base`]); [`Entry::label`] reads them.
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
    /// Whether the groups hold only their sample labels, the series labels being the
    /// base labels with those over them: a file's, so that the groups of every file
    /// with the same sample labels share one copy (a file's base labels name its
    /// path). Else the groups hold the series labels whole (a store's).
    pub groups_over_base: bool,
}

impl<L> Entry<L> {
    /// Index of profile type `t` among the entry's types.
    pub fn type_index(&self, t: &ProfileType) -> Option<usize> {
        self.types.iter().position(|x| x == t)
    }

    /// Series label `name` of `group` (one of this entry's groups).
    pub fn label<'a>(&'a self, group: &'a Group, name: &str) -> Option<&'a String> {
        let own = group.labels.get(name);
        if self.groups_over_base {
            own.or_else(|| self.base_labels.get(name))
        } else {
            own
        }
    }

    /// Series label names of `group` (one of this entry's groups), perhaps repeated.
    fn label_names<'a>(&'a self, group: &'a Group) -> impl Iterator<Item = &'a String> + 'a {
        let base = self.groups_over_base.then(|| self.base_labels.keys());
        group.labels.keys().chain(base.into_iter().flatten())
    }

    /// The series labels of `group` (one of this entry's groups).
    pub fn series_labels<'a>(&'a self, group: &'a Group) -> Cow<'a, Labels> {
        if !self.groups_over_base {
            return Cow::Borrowed(&group.labels);
        }
        let mut labels = self.base_labels.as_ref().clone();
        labels.extend(group.labels.iter().map(|(k, v)| (k.clone(), v.clone())));
        Cow::Owned(labels)
    }

    /// Whether the selector selects `group` (one of this entry's groups).
    fn selects(&self, selector: &Selector, group: &Group) -> bool {
        selector.matches(|name| self.label(group, name).map(String::as_str))
    }

    /// Whether the selector selects any group of this entry.
    fn any_selected(&self, selector: &Selector) -> bool {
        self.type_index(&selector.profile_type).is_some()
            && self.groups.iter().any(|g| self.selects(selector, g))
    }
}

/// One copy of each distinct label set and type list, shared by the entries of an
/// index.
#[derive(Debug, Default)]
pub struct Interner {
    labels: BTreeSet<Arc<Labels>>,
    types: BTreeSet<Arc<[ProfileType]>>,
}

impl Interner {
    /// The shared copy of `labels`.
    pub fn labels(&mut self, labels: Labels) -> Arc<Labels> {
        if let Some(l) = self.labels.get(&labels) {
            return l.clone();
        }
        let l = Arc::new(labels);
        self.labels.insert(l.clone());
        l
    }

    /// Groups of an entry from (labels, value sums), the labels shared.
    pub fn groups(&mut self, groups: Vec<(Labels, Vec<i64>)>) -> Vec<Group> {
        groups
            .into_iter()
            .map(|(labels, values)| Group {
                labels: self.labels(labels),
                values,
            })
            .collect()
    }

    /// The shared copy of `types`.
    pub fn types(&mut self, types: Vec<ProfileType>) -> Arc<[ProfileType]> {
        if let Some(t) = self.types.get(types.as_slice()) {
            return t.clone();
        }
        let t: Arc<[ProfileType]> = types.into();
        self.types.insert(t.clone());
        t
    }
}

/// The labels of label set `set` of `profile`, with `base` underneath.
pub fn set_labels(profile: &Profile, set: u32, base: &Labels, rule: SampleLabels) -> Labels {
    let set = profile.label_sets.get(set as usize).into_iter().flatten();
    labels_over(
        base,
        set.map(|l| {
            let value = match l.str {
                0 => LabelValue::Num(l.num),
                s => LabelValue::Str(profile.str(s)),
            };
            (profile.str(l.key), value)
        }),
        rule,
    )
}

/// Sample labels as series labels, with `base` underneath: numbers in decimal, or left
/// out when `rule` takes strings only.
pub(crate) fn labels_over<'a>(
    base: &Labels,
    sample_labels: impl Iterator<Item = (&'a str, LabelValue<'a>)>,
    rule: SampleLabels,
) -> Labels {
    let mut labels = base.clone();
    for (key, value) in sample_labels {
        let value = match value {
            LabelValue::Str(s) => s.to_string(),
            LabelValue::Num(_) if rule == SampleLabels::StringsOnly => continue,
            LabelValue::Num(n) => n.to_string(),
        };
        labels.insert(key.to_string(), value);
    }
    labels
}

/// The value sums of `profile` per series label set (`base` with the sample labels
/// over it), in label order: what [`Interner::groups`] makes an entry's groups of.
pub fn groups_of(profile: &Profile, base: &Labels, rule: SampleLabels) -> Vec<(Labels, Vec<i64>)> {
    // Summed by label set first: comparing series labels per sample cost more than
    // reading the samples.
    let n_types = profile.sample_types.len();
    let mut set_sums = vec![None::<Vec<i64>>; profile.label_sets.len()];
    for i in 0..profile.samples.len() {
        let Some(sums) = set_sums.get_mut(profile.samples.label_set[i] as usize) else {
            continue;
        };
        let sums = sums.get_or_insert_with(|| vec![0; n_types]);
        for (sum, column) in sums.iter_mut().zip(&profile.samples.values) {
            *sum = sum.wrapping_add(column[i]);
        }
    }
    let mut by_labels: BTreeMap<Labels, Vec<i64>> = BTreeMap::new();
    for (set, sums) in set_sums.into_iter().enumerate() {
        let Some(sums) = sums else { continue };
        let labels = set_labels(profile, set as u32, base, rule);
        match by_labels.get_mut(&labels) {
            Some(total) => total
                .iter_mut()
                .zip(sums)
                .for_each(|(t, s)| *t = t.wrapping_add(s)),
            None => {
                by_labels.insert(labels, sums);
            }
        }
    }
    by_labels.into_iter().collect()
}

/// Reads the file at `path` into `buf`, replacing its contents; errors name the file.
/// A file larger than `options`' decompressed-size cap is refused before it is read
/// (no profile that large, compressed or not, fits under the cap), so that a huge
/// file is never held in memory whole.
pub fn read_into(path: &Path, buf: &mut Vec<u8>, options: DecodeOptions) -> Result<(), String> {
    use std::io::Read as _;
    let limit = options.max_decompressed_bytes;
    let readable = |n: u64| units::readable(i64::try_from(n).unwrap_or(i64::MAX), "bytes");
    let too_large = |size: Option<u64>| {
        let what = match size {
            Some(size) => format!("the file's size, {},", readable(size)),
            None => "the file".to_string(),
        };
        format!(
            "{}: {what} exceeds the limit of {} (raise it with --max-decompressed)",
            path.display(),
            readable(limit)
        )
    };
    buf.clear();
    let failed = |e: std::io::Error| format!("{}: {e}", path.display());
    let file = std::fs::File::open(path).map_err(|e| {
        // "ftp://host" or "http://host:7070": meant as a server, in a scheme flint
        // does not speak.
        match path.to_str().and_then(|p| p.split_once("://")) {
            Some((scheme, _)) if e.kind() == std::io::ErrorKind::NotFound => format!(
                "{}: no such file, and {scheme}:// names no server flint reads \
                 (grpc://HOST:PORT or https://HOST)",
                path.display()
            ),
            _ => failed(e),
        }
    })?;
    let metadata = file.metadata().map_err(failed)?;
    let size = metadata.len();
    if size > limit {
        return Err(too_large(Some(size)));
    }
    if metadata.is_file() {
        // Read at the size the system gives (the fewest calls).
        let mut file = file;
        file.read_to_end(buf).map_err(failed)?;
    } else {
        // A device or a pipe has no size: it is cut at the cap.
        file.take(limit.saturating_add(1))
            .read_to_end(buf)
            .map_err(failed)?;
    }
    match buf.len() as u64 {
        n if n > limit => Err(too_large(None)),
        _ => Ok(()),
    }
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
        span_over(self.entries.iter())
    }

    /// The time span of the entries with profile type `t`, start of the first to end
    /// of the last: what a plot of that type shows whole (a folder's heap snapshot
    /// taken a year apart from its CPU profiles does not squeeze them into a sliver).
    /// The span of all entries when none has it.
    pub fn span_of(&self, t: &ProfileType) -> TimeRange {
        let mut of_type = self
            .entries
            .iter()
            .filter(|e| e.types.contains(t))
            .peekable();
        if of_type.peek().is_none() {
            return self.span();
        }
        span_over(of_type)
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
            .filter(move |(e, _, g)| e.selects(selector, g))
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
            .flat_map(|(e, _, g)| e.label_names(g))
            .collect();
        names.into_iter().cloned().collect()
    }

    /// Values of label `name` among the selected series in the range, sorted.
    pub fn values(&self, name: &str, selector: &Selector, range: TimeRange) -> Vec<String> {
        let values: BTreeSet<&String> = self
            .selected(selector, range)
            .filter_map(|(e, _, g)| e.label(g, name))
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
            let bucket = entry
                .time_nanos
                .saturating_sub(entry.time_nanos.rem_euclid(step_nanos));
            for (labels, value) in std::mem::take(this_entry) {
                let point = series
                    .entry(labels)
                    .or_default()
                    .entry(bucket)
                    .or_insert((0, 0));
                point.0 = point.0.wrapping_add(value);
                point.1 = point.1.saturating_add(entry.duration_nanos);
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
                None => {
                    let labels = entry.series_labels(group);
                    match this_entry.get_mut(labels.as_ref()) {
                        Some(sum) => *sum = sum.wrapping_add(value),
                        None => {
                            this_entry.insert(labels.into_owned(), value);
                        }
                    }
                }
                Some(names) => {
                    let key: Labels = names
                        .iter()
                        .filter_map(|k| entry.label(group, k).map(|v| (k.clone(), v.clone())))
                        .collect();
                    let sum = this_entry.entry(key).or_insert(0);
                    *sum = sum.wrapping_add(value);
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

/// From the start of the first of `entries` (sorted by time) to the latest end.
fn span_over<'e, L: 'e>(mut entries: impl Iterator<Item = &'e Entry<L>>) -> TimeRange {
    let Some(first) = entries.next() else {
        return TimeRange {
            start_nanos: 0,
            end_nanos: 0,
        };
    };
    let end_of = |e: &Entry<L>| e.time_nanos.saturating_add(e.duration_nanos.max(1));
    TimeRange {
        start_nanos: first.time_nanos,
        end_nanos: entries.map(end_of).fold(end_of(first), i64::max),
    }
}

/// Merges the selected samples of `entries`, each loaded by `load(locator, buffer)`
/// into a reused buffer (replacing its contents), which returns where in it the pprof
/// bytes start (gzipped or not, inflated with `decode`'s cap); `name` names an entry in
/// errors.
/// With `one_type`, only the selected profile type is merged (as Parca answers). The
/// entries are merged straight from their bytes ([`Merger::add_pprof`]), never decoded
/// into profiles: each thread merges a run of consecutive entries, and the runs are
/// merged in order, so the result is the same as merging one entry after another.
/// [`SourceError::NoData`] when `entries` is empty.
#[allow(
    clippy::too_many_arguments,
    reason = "one call site per source, each naming every part"
)]
pub fn merge<L: Sync>(
    entries: &[&Entry<L>],
    selector: &Selector,
    rule: SampleLabels,
    one_type: bool,
    decode: DecodeOptions,
    progress: &Progress,
    name: impl Fn(&L) -> String + Sync,
    load: impl Fn(&L, &mut Vec<u8>) -> Result<usize, String> + Sync,
) -> Result<Profile, SourceError> {
    if entries.is_empty() {
        return Err(SourceError::NoData);
    }
    progress.set_total(entries.len());
    let skipped = std::sync::Mutex::new(Vec::new());
    let merged = merge_in_runs(
        entries.len(),
        |merger, buf, i| {
            if progress.is_cancelled() {
                return Err(SourceError::Cancelled);
            }
            let entry = entries[i];
            match merge_entry(
                merger, buf, entry, selector, rule, one_type, decode, &name, &load,
            ) {
                Ok(()) => {}
                // Gone or broken since it was indexed: merged without it, and said.
                Err(EntryError::Skip(why)) => {
                    if let Ok(mut skipped) = skipped.lock() {
                        skipped.push((i, why));
                    }
                }
                Err(EntryError::Stop(e)) => return Err(e),
            }
            progress.step();
            Ok(())
        },
        |e| SourceError::Failed(e.to_string()),
    )?;
    let mut skipped = skipped.into_inner().unwrap_or_default();
    skipped.sort_by_key(|(i, _)| *i);
    if skipped.len() == entries.len()
        && let Some((_, first)) = skipped.first().cloned()
    {
        // Nothing was left to merge: the first entry's reason is the answer.
        return Err(SourceError::Failed(first));
    }
    for (_, why) in skipped {
        progress.skip(why);
    }
    Ok(merged.finish())
}

/// Why an entry was not merged.
enum EntryError {
    /// The entry alone: it could not be read or is not a valid profile (nothing of it
    /// was added), so the merge goes on without it.
    Skip(String),
    /// The whole merge: cancelled, or profiles that cannot be merged together.
    Stop(SourceError),
}

/// Merges items `0..count` on up to four threads: each thread merges a run of
/// consecutive items into a [`Merger`] of its own with `add(merger, buffers, i)` (the
/// thread's [`RunBuffers`]), and the runs are absorbed in order, so the
/// result is the one of adding every item in order to one merger. A thread done with
/// its run takes the second half of what is left of the largest run as a new run, so
/// that the threads finish together however the work lies. Once an item fails, no
/// thread starts another; the error returned is that of the earliest item that failed.
/// `absorb_error` turns an error of absorbing one run into another into `E`.
pub fn merge_in_runs<E: Send>(
    count: usize,
    add: impl Fn(&mut Merger, &mut RunBuffers, usize) -> Result<(), E> + Sync,
    absorb_error: impl Fn(ProfileError) -> E,
) -> Result<Merger, E> {
    let size = count.div_ceil(worker_count()).max(1);
    let first_runs: Vec<_> = (0..count)
        .step_by(size)
        .map(|s| s..(s + size).min(count))
        .collect();
    let threads = first_runs.len();
    let runs = Runs {
        left: Mutex::new(first_runs),
        failed: AtomicBool::new(false),
    };
    let merged: Vec<RunsMerged<E>> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads)
            .map(|thread| {
                let (runs, add) = (&runs, &add);
                scope.spawn(move || runs.work(thread, add))
            })
            .collect();
        workers
            .into_iter()
            .map(|t| {
                t.join()
                    .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
            })
            .collect()
    });
    let mut all: Vec<(usize, Merger)> = Vec::new();
    let mut first_error: Option<(usize, E)> = None;
    for result in merged {
        match result {
            Ok(done) => all.extend(done),
            Err((at, e)) => {
                if first_error.as_ref().is_none_or(|(first, _)| at < *first) {
                    first_error = Some((at, e));
                }
            }
        }
    }
    if let Some((_, e)) = first_error {
        return Err(e);
    }
    all.sort_by_key(|(start, _)| *start);
    let mut merger = Merger::new();
    for (_, run) in all {
        merger.absorb(run).map_err(&absorb_error)?;
    }
    Ok(merger)
}

/// Buffers a thread of [`merge_in_runs`] reuses from item to item: one for an item's
/// bytes as stored, one for them inflated. Reused, so that a day of files is not a
/// day of large allocations, each mapped and unmapped again.
#[derive(Debug, Default)]
pub struct RunBuffers {
    /// The item's bytes as read.
    pub stored: Vec<u8>,
    /// The item's pprof message, inflated.
    pub body: Vec<u8>,
}

/// What one thread of [`merge_in_runs`] did: (first item, merger) of each run it
/// merged, or the item that failed and its error.
type RunsMerged<E> = Result<Vec<(usize, Merger)>, (usize, E)>;

/// The runs of [`merge_in_runs`] not yet merged: what is left of each.
struct Runs {
    left: Mutex<Vec<std::ops::Range<usize>>>,
    failed: AtomicBool,
}

impl Runs {
    /// Merges run `run` and then runs taken from others, until none is left: the
    /// (first item, merger) of each, or the failing item and its error.
    fn work<E>(
        &self,
        mut run: usize,
        add: &impl Fn(&mut Merger, &mut RunBuffers, usize) -> Result<(), E>,
    ) -> RunsMerged<E> {
        let mut buf = RunBuffers::default();
        let mut done = Vec::new();
        loop {
            let mut merger = Merger::new();
            let start = self.lock()[run].start;
            while let Some(i) = self.next(run) {
                if let Err(e) = add(&mut merger, &mut buf, i) {
                    self.failed.store(true, Ordering::Relaxed);
                    return Err((i, e));
                }
            }
            done.push((start, merger));
            match self.take() {
                Some(taken) => run = taken,
                None => return Ok(done),
            }
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<std::ops::Range<usize>>> {
        self.left.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The next item of run `run`, `None` when it is done or a run failed.
    fn next(&self, run: usize) -> Option<usize> {
        if self.failed.load(Ordering::Relaxed) {
            return None;
        }
        let mut left = self.lock();
        let r = &mut left[run];
        r.next()
    }

    /// A new run: the second half of what is left of the largest run (if it is worth
    /// taking), which keeps the first half.
    fn take(&self) -> Option<usize> {
        if self.failed.load(Ordering::Relaxed) {
            return None;
        }
        let mut left = self.lock();
        let (largest, r) = left
            .iter()
            .enumerate()
            .max_by_key(|(_, r)| r.len())
            .map(|(i, r)| (i, r.clone()))?;
        if r.len() < 4 {
            return None;
        }
        let middle = r.start + r.len() / 2;
        left[largest].end = middle;
        left.push(middle..r.end);
        Some(left.len() - 1)
    }
}

/// Loads one entry's bytes and merges its selected samples into `merger`.
#[allow(
    clippy::too_many_arguments,
    reason = "the parts of one merge, passed down"
)]
fn merge_entry<L>(
    merger: &mut Merger,
    buf: &mut RunBuffers,
    entry: &Entry<L>,
    selector: &Selector,
    rule: SampleLabels,
    one_type: bool,
    decode: DecodeOptions,
    name: &impl Fn(&L) -> String,
    load: &impl Fn(&L, &mut Vec<u8>) -> Result<usize, String>,
) -> Result<(), EntryError> {
    let start = load(&entry.locator, &mut buf.stored).map_err(EntryError::Skip)?;
    let who = name(&entry.locator);
    // `Merger::add_pprof` adds nothing of a profile it finds invalid.
    let failed = |e: ProfileError| match e {
        ProfileError::IncompatibleSampleTypes { .. } | ProfileError::MergeTooLarge(_) => {
            EntryError::Stop(SourceError::Failed(e.to_string()))
        }
        e => EntryError::Skip(format!("{who}: {e}")),
    };
    let stored = buf.stored.get(start..).unwrap_or_default();
    let body = message_bytes(stored, decode, &mut buf.body).map_err(failed)?;
    let mut keep = |labels: &[(&str, LabelValue<'_>)]| {
        let labels = labels_over(&entry.base_labels, labels.iter().copied(), rule);
        selector.matches(|name| labels.get(name).map(String::as_str))
    };
    let selection = Selection {
        sample_type: one_type.then(|| entry.type_index(&selector.profile_type).unwrap_or(0)),
        keep: (!selector.matchers.is_empty()).then_some(&mut keep as &mut KeepLabels<'_>),
    };
    merger.add_pprof(&who, body, selection).map_err(failed)
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;
    use std::time::Duration;

    use profile_model::codec;

    use super::*;

    fn fixture(name: &str) -> Vec<u8> {
        let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/go");
        std::fs::read(path.join(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
    }

    fn go_cpu() -> Vec<Vec<u8>> {
        ["cpu.pb.gz", "cpu-1.pb.gz", "cpu-2.pb.gz", "cpu-3.pb.gz"]
            .map(fixture)
            .into()
    }

    /// Item `i` of the test merges: a Go CPU profile, the slow ones taking longer.
    fn add_item(
        files: &[Vec<u8>],
        slow: impl Fn(usize) -> bool + Sync,
    ) -> impl Fn(&mut Merger, &mut RunBuffers, usize) -> Result<(), String> + Sync {
        move |merger, buf, i| {
            if slow(i) {
                std::thread::sleep(Duration::from_millis(3));
            }
            let bytes = &files[i % files.len()];
            let body = message_bytes(bytes, DecodeOptions::default(), &mut buf.body)
                .map_err(|e| e.to_string())?;
            merger
                .add_pprof(&format!("item {i}"), body, Selection::default())
                .map_err(|e| e.to_string())
        }
    }

    #[test]
    fn runs_taken_from_slower_threads_merge_as_one_merger_in_order() {
        let files = go_cpu();
        let mut expected = Merger::new();
        for i in 0..40 {
            let p = codec::decode(&files[i % files.len()]).expect("fixture");
            expected.add(&format!("item {i}"), &p).expect("same types");
        }
        let expected = expected.finish();
        // The first run is slow: the other threads take parts of it.
        for slow_until in [0, 20, 35] {
            let add = add_item(&files, |i| i < slow_until);
            let merged = merge_in_runs(40, add, |e| e.to_string()).expect("valid");
            assert_eq!(merged.inputs(), 40);
            assert_eq!(merged.finish(), expected, "slow until {slow_until}");
        }
        // Fewer items than threads.
        for count in 1..=3 {
            let mut expected = Merger::new();
            for (i, bytes) in files.iter().enumerate().take(count) {
                let p = codec::decode(bytes).expect("fixture");
                expected.add(&format!("item {i}"), &p).expect("same types");
            }
            let merged = merge_in_runs(count, add_item(&files, |_| false), |e| e.to_string());
            assert_eq!(
                merged.expect("valid").finish(),
                expected.finish(),
                "{count} items"
            );
        }
    }

    #[test]
    fn a_failing_item_is_the_error_and_no_item_after_it_is_needed() {
        let files = go_cpu();
        let add = add_item(&files, |_| false);
        let failing = |merger: &mut Merger, buf: &mut RunBuffers, i: usize| {
            if i == 13 {
                return Err("item 13 is broken".to_string());
            }
            add(merger, buf, i)
        };
        let err = merge_in_runs(40, failing, |e| e.to_string()).expect_err("item 13 fails");
        assert_eq!(err, "item 13 is broken");
        let empty = merge_in_runs(0, add_item(&files, |_| false), |e| e.to_string());
        assert_eq!(empty.expect("nothing to merge").inputs(), 0);
    }
}

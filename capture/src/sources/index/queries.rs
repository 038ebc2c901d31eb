//! The index itself: entries sorted by time, and the questions of
//! [`crate::ProfileSource`] answered over them.

use std::collections::{BTreeMap, BTreeSet};

use super::entry::{Entry, Group};
use super::labels::SampleLabels;
use crate::selector::{ProfileType, Selector};
use crate::source::{Labels, Point, QueryTime, Series, SourceError, TimeRange};

/// The range a [`QueryTime`] covers: a single profile is matched to the millisecond,
/// as Parca (which keeps times in milliseconds) matches it.
pub fn query_range_of(time: QueryTime) -> TimeRange {
    match time {
        QueryTime::Single(t) => {
            let start = t.div_euclid(1_000_000).saturating_mul(1_000_000);
            TimeRange {
                start_nanos: start,
                end_nanos: start.saturating_add(1_000_000),
            }
        }
        QueryTime::Merge(range) => range,
    }
}

/// Entries sorted by (time, locator), and the answers to the source questions.
#[derive(Debug, Clone)]
pub struct Index<L> {
    entries: Vec<Entry<L>>,
    rule: SampleLabels,
    /// The entries' [`Entry::heap_bytes`], summed.
    bytes: u64,
}

impl<L: Ord> Index<L> {
    /// An index of `entries` (any order) whose groups were built with `rule`.
    pub fn new(mut entries: Vec<Entry<L>>, rule: SampleLabels) -> Self {
        entries.sort_by(|a, b| (a.time_nanos, &a.locator).cmp(&(b.time_nanos, &b.locator)));
        let bytes = entries.iter().map(Entry::heap_bytes).sum();
        Self {
            entries,
            rule,
            bytes,
        }
    }

    /// Adds an entry in its place.
    pub fn insert(&mut self, entry: Entry<L>) {
        let at = self
            .entries
            .partition_point(|e| (e.time_nanos, &e.locator) <= (entry.time_nanos, &entry.locator));
        self.bytes += entry.heap_bytes();
        self.entries.insert(at, entry);
    }

    /// Keeps only the entries for which `keep` is true.
    pub fn retain(&mut self, keep: impl FnMut(&Entry<L>) -> bool) {
        self.entries.retain(keep);
        self.bytes = self.entries.iter().map(Entry::heap_bytes).sum();
    }
}

impl<L> Index<L> {
    /// The heap bytes the entries hold, near enough to budget the index's memory.
    pub fn heap_bytes(&self) -> u64 {
        let spare = self.entries.capacity() - self.entries.len();
        self.bytes + (spare * std::mem::size_of::<Entry<L>>()) as u64
    }

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

    /// The type the profiles in the range show by default, the most common one among
    /// their default types (ties go to the type first in order); `None` when the
    /// range has no profiles.
    pub fn default_type(&self, range: TimeRange) -> Option<ProfileType> {
        let mut counts: BTreeMap<&ProfileType, usize> = BTreeMap::new();
        for t in self
            .in_range(range)
            .iter()
            .filter_map(|e| e.types.get(e.default_type))
        {
            *counts.entry(t).or_default() += 1;
        }
        let most = counts.values().copied().max()?;
        counts
            .into_iter()
            .find(|&(_, n)| n == most)
            .map(|(t, _)| t.clone())
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
        // A snapshot (bytes in use) is a level, not a count over the profiled time: as
        // Parca, it is not summed over a step, each step shows its first profile.
        let delta = selector.profile_type.delta;
        let by_period = selector.profile_type.ranged_by_period();
        // series labels → bucket start (a level's own time) → point
        let mut series: BTreeMap<Labels, BTreeMap<i64, Bucket>> = BTreeMap::new();
        let mut this_entry: BTreeMap<Labels, i64> = BTreeMap::new();
        let mut current: Option<&Entry<L>> = None;
        let mut flush = |entry: &Entry<L>, this_entry: &mut BTreeMap<Labels, i64>| {
            let bucket = if delta {
                (entry.time_nanos).saturating_sub(entry.time_nanos.rem_euclid(step_nanos))
            } else {
                entry.time_nanos
            };
            for (labels, value) in std::mem::take(this_entry) {
                let point = series.entry(labels).or_default().entry(bucket).or_default();
                point.value = point.value.wrapping_add(value);
                point.count = if delta { point.count + 1 } else { 1 };
                point.duration_nanos = point.duration_nanos.saturating_add(entry.duration_nanos);
                if entry.rated {
                    point.rated_value = point.rated_value.wrapping_add(value);
                    point.rated_nanos = point.rated_nanos.saturating_add(entry.duration_nanos);
                }
            }
        };
        for (entry, t, group) in self.selected(selector, range) {
            // The groups of one entry come together: flush the previous entry's.
            if let Some(c) = current.filter(|c| !std::ptr::eq(*c, entry)) {
                flush(c, &mut this_entry);
            }
            current = Some(entry);
            let value = group.values.get(t).copied().unwrap_or(0);
            // As Parca: a CPU sample stands for one period of CPU time.
            let value = match by_period && entry.period > 0 {
                true => value.wrapping_mul(entry.period),
                false => value,
            };
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
            .map(|(labels, points)| {
                let points = points.into_iter().map(|(time_nanos, b)| Point {
                    time_nanos,
                    value: b.value,
                    value_per_second: (delta && b.rated_nanos > 0)
                        .then(|| b.rated_value as f64 / (b.rated_nanos as f64 / 1e9)),
                    duration_nanos: b.duration_nanos,
                    count: b.count,
                });
                let points = match delta {
                    true => points.collect(),
                    false => first_per_step(points, step_nanos),
                };
                Series { labels, points }
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

/// One point of a series as its profiles are summed: all of them, and those that give
/// a rate ([`Entry::rated`]). A step's rate is that of its profiles that give one: a
/// profile of 1 ns beside one of 10 s adds its value to the step's, not a rate of
/// billions per second; a step of none of them has no rate.
#[derive(Debug, Default)]
struct Bucket {
    value: i64,
    count: u32,
    duration_nanos: i64,
    rated_value: i64,
    rated_nanos: i64,
}

/// Of `points` (by time), the first of each step, counting the others of its step.
fn first_per_step(points: impl Iterator<Item = Point>, step_nanos: i64) -> Vec<Point> {
    let mut kept: Vec<Point> = Vec::new();
    for p in points {
        match kept.last_mut() {
            Some(first)
                if first.time_nanos.div_euclid(step_nanos)
                    == p.time_nanos.div_euclid(step_nanos) =>
            {
                first.count = first.count.saturating_add(1);
            }
            _ => kept.push(p),
        }
    }
    kept
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

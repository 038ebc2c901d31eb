//! Merging profiles one at a time into one aggregate, as `go tool pprof` merges the
//! files it is given: strings, functions, mappings and locations are re-interned, and
//! samples with the same stack and labels are summed.
//!
//! A profile is added either decoded ([`Merger::add`]) or straight from its pprof
//! bytes ([`Merger::add_pprof`]), which reads the tables borrowed from the message and
//! merges each sample as it is read, never building the profile: what merging a day of
//! files costs is then mostly inflating them and finding each sample's merged twin.

use rustc_hash::FxHashMap;

use crate::error::ProfileError;
use crate::location_index::{LocationIndex, Parts};
use crate::profile::{
    Function, Label, LabelSetId, Line, Location, LocationId, Mapping, Profile, StrId, ValueType,
};
use crate::sample_table::{Batch, SampleTable, hash_of};
use crate::string_index::StringIndex;
use crate::wire::tables::{RawTables, ReadSamples, Tables};

/// The label pprof puts on the samples of a `-diff_base` profile.
pub const BASE_LABEL: &str = "pprof::base";

/// A sample label's value, as [`Merger::add_pprof`]'s selection sees it: pprof's
/// string value, or its number when the string is empty.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LabelValue<'a> {
    /// A string label.
    Str(&'a str),
    /// A numeric label.
    Num(i64),
}

/// Which samples of a pprof message [`Merger::add_pprof`] merges, and which column;
/// the default merges every sample and column.
#[derive(Default)]
pub struct Selection<'k> {
    /// The one sample type merged (the merged profile then has that column only, as
    /// [`Profile::only_sample_type`]), or `None` for every column.
    pub sample_type: Option<usize>,
    /// Whether the samples with these labels are merged; asked once per distinct
    /// label set of the profile. `None` keeps every sample.
    pub keep: Option<&'k mut KeepLabels<'k>>,
}

/// A sample selection by labels: see [`Selection::keep`].
pub type KeepLabels<'k> = dyn FnMut(&[(&str, LabelValue<'_>)]) -> bool + 'k;

/// What [`Merger::intern_tables`] made of a profile's ids: by its own id, the merged
/// id of each of its strings, locations and label sets.
#[derive(Debug, Clone, Default)]
pub struct Interned {
    /// The merged id of each string.
    pub strings: Vec<StrId>,
    /// The merged id of each location.
    pub locations: Vec<LocationId>,
    /// The merged id of each label set.
    pub label_sets: Vec<LabelSetId>,
}

/// Accumulates profiles; memory grows with distinct stacks, not with the number of inputs.
#[derive(Debug, Default)]
pub struct Merger {
    out: Profile,
    first_name: String,
    strings: StringIndex,
    functions: FxHashMap<Function, u32>,
    mappings: FxHashMap<Mapping, u32>,
    locations: LocationIndex,
    label_sets: FxHashMap<Vec<Label>, LabelSetId>,
    samples: SampleTable,
    inputs: usize,
    /// The sum of the added profiles' durations: the duration pprof's merge gives.
    durations: i64,
    scratch: Scratch,
}

/// Buffers reused from one added profile to the next.
#[derive(Debug, Default)]
struct Scratch {
    strings: Vec<StrId>,
    mappings: Vec<u32>,
    functions: Vec<u32>,
    locations: Vec<LocationId>,
    /// The lines of every location of the profile being added (merged ids).
    lines: Vec<Line>,
    /// Its locations' merged parts and hashes, before they are interned.
    parts: Vec<PendingLocation>,
    batch: Batch,
    labels: Vec<Label>,
    /// The samples of the profile being added, read and checked before any is merged.
    read: ReadSamples,
    raw: RawTables,
    /// What of its tables the samples a selection keeps reach.
    reached: Reached,
}

/// The entries of a profile's tables that the samples a selection keeps reach, by
/// their index there: when a selection keeps only some samples, only these are
/// interned (as pprof maps a profile's tables lazily, from its samples).
#[derive(Debug, Default)]
struct Reached {
    strings: Vec<bool>,
    functions: Vec<bool>,
    locations: Vec<bool>,
}

/// The merged id given to a table entry no kept sample reaches (never looked up).
const UNREACHED: u32 = u32::MAX;

/// Whether entry `i` of a table is interned: every entry without `reached`, else
/// those it marks.
fn is_reached(reached: Option<&[bool]>, i: usize) -> bool {
    reached.is_none_or(|r| r.get(i).copied().unwrap_or(false))
}

/// A location of the profile being added, its parts merged, before it is interned.
#[derive(Debug, Clone, Copy)]
struct PendingLocation {
    mapping: Option<u32>,
    address: u64,
    is_folded: bool,
    /// `Scratch::lines[start..end]`.
    lines: (usize, usize),
    hash: u64,
    /// Whether a kept sample reaches it (else it is not interned).
    reached: bool,
}

/// Locations (and strings) whose index slots are read together before they are
/// interned.
const TOUCHED_TOGETHER: usize = 32;

/// Widens the time span of merged profile `out` to a profile's, `time` and `duration`
/// (the first profile's start is the merge's, else the earliest non-zero start; the
/// duration reaches the latest end): how a merge's span is made of its profiles'.
pub(crate) fn widen_span(out: &mut Profile, first: bool, time: i64, duration: i64) {
    let end_of = |p: &Profile| p.time_nanos.saturating_add(p.duration_nanos);
    let end = time.saturating_add(duration);
    if first {
        out.time_nanos = time;
    } else if time != 0 && (out.time_nanos == 0 || time < out.time_nanos) {
        out.duration_nanos = end_of(out).max(end).saturating_sub(time);
        out.time_nanos = time;
    }
    let end = end_of(out).max(end);
    if out.time_nanos != 0 {
        out.duration_nanos = end.saturating_sub(out.time_nanos);
    }
}

/// The id of `item` in `table` (its index), appended when new.
fn intern<T: Clone + Eq + std::hash::Hash>(
    ids: &mut FxHashMap<T, u32>,
    table: &mut Vec<T>,
    item: T,
) -> u32 {
    let next = table.len() as u32;
    *ids.entry(item).or_insert_with_key(|item| {
        table.push(item.clone());
        next
    })
}

/// Whether `keep` keeps the samples with `labels` (the profile's string ids); every
/// sample is kept without one.
fn keeps(tables: &Tables<'_>, labels: &[Label], keep: &mut Option<&mut KeepLabels<'_>>) -> bool {
    let Some(keep) = keep else {
        return true;
    };
    let text: Vec<(&str, LabelValue<'_>)> = labels
        .iter()
        .map(|l| {
            let value = match l.str {
                0 => LabelValue::Num(l.num),
                s => LabelValue::Str(tables.str(s)),
            };
            (tables.str(l.key), value)
        })
        .collect();
    keep(&text)
}

impl Reached {
    /// Marks what the samples of `read` whose local label set `kept` keeps reach in
    /// `tables`: their locations, those locations' functions, the strings of those
    /// functions and of their label sets, and every mapping's strings (each mapping
    /// is interned).
    fn mark(&mut self, tables: &Tables<'_>, read: &ReadSamples, kept: &[bool]) {
        let samples = &read.samples;
        let fill = |v: &mut Vec<bool>, n: usize| {
            v.clear();
            v.resize(n, false);
        };
        fill(&mut self.locations, tables.locations.len());
        fill(&mut self.functions, tables.functions.len());
        fill(&mut self.strings, tables.strings.len());
        let set = |v: &mut Vec<bool>, i: usize| {
            if let Some(b) = v.get_mut(i) {
                *b = true;
            }
        };
        for (i, &local_set) in samples.label_set.iter().enumerate() {
            if kept.get(local_set as usize).copied().unwrap_or(false) {
                for &l in samples.stack(i) {
                    set(&mut self.locations, l as usize);
                }
            }
        }
        for (loc, _) in (tables.locations.iter().zip(&self.locations)).filter(|(_, r)| **r) {
            for line in tables.lines_of(loc) {
                set(&mut self.functions, line.function as usize);
            }
        }
        let functions = tables.functions.iter().zip(&self.functions);
        for (f, _) in functions.filter(|(_, r)| **r) {
            for id in [f.name, f.system_name, f.filename] {
                set(&mut self.strings, id as usize);
            }
        }
        for m in &tables.mappings {
            for id in [m.filename, m.build_id] {
                set(&mut self.strings, id as usize);
            }
        }
        for (labels, _) in (read.label_sets.iter().zip(kept)).filter(|(_, k)| **k) {
            for l in labels {
                for id in [l.key, l.str, l.num_unit] {
                    set(&mut self.strings, id as usize);
                }
            }
        }
    }
}

/// How [`Merger::add_as_column`] adds one sample type of a profile among others.
#[derive(Debug, Clone, Copy)]
pub struct AsColumn<'a> {
    /// The merge's sample types, (kind, unit).
    pub types: &'a [(&'a str, &'a str)],
    /// The kind of the merge's default sample type.
    pub default_type: &'a str,
    /// The profile's sample type added...
    pub column: usize,
    /// ...as this one of `types`.
    pub slot: usize,
}

/// What merging needs of a profile's header, from a [`Profile`] or from [`Tables`].
struct Header<'a> {
    sample_types: Vec<(&'a str, &'a str)>,
    period_type: (&'a str, &'a str),
    period: i64,
    time_nanos: i64,
    duration_nanos: i64,
    default_sample_type: &'a str,
    doc_url: &'a str,
}

impl<'a> Header<'a> {
    /// The header of a decoded profile.
    fn of(p: &'a Profile) -> Self {
        Header {
            sample_types: p
                .sample_types
                .iter()
                .map(|t| (p.str(t.kind), p.str(t.unit)))
                .collect(),
            period_type: (p.str(p.period_type.kind), p.str(p.period_type.unit)),
            period: p.period,
            time_nanos: p.time_nanos,
            duration_nanos: p.duration_nanos,
            default_sample_type: p.str(p.default_sample_type),
            doc_url: &p.doc_url,
        }
    }

    fn sample_type_names(&self) -> Vec<String> {
        self.sample_types
            .iter()
            .map(|(kind, unit)| format!("{kind}/{unit}"))
            .collect()
    }
}

impl Merger {
    /// An empty merger.
    pub fn new() -> Self {
        Self::default()
    }

    /// Number of profiles merged so far.
    pub fn inputs(&self) -> usize {
        self.inputs
    }

    fn string(&mut self, s: &str) -> StrId {
        self.string_hashed(StringIndex::hash(s), s)
    }

    /// [`Merger::string`] of `s`, whose hash is `hash`.
    fn string_hashed(&mut self, hash: u64, s: &str) -> StrId {
        if let Some(id) = self.strings.find(hash, s, &self.out.strings) {
            return id;
        }
        let id = self.out.strings.len() as StrId;
        self.strings.insert(hash, s, id);
        self.out.strings.push(s.to_string());
        id
    }

    /// Adds one profile; `name` identifies it in errors (e.g. its file name).
    pub fn add(&mut self, name: &str, p: &Profile) -> Result<(), ProfileError> {
        self.add_scaled(name, p, 1, None)
    }

    /// Adds the values of one of `p`'s sample types as one value of the merge's own
    /// sample types, the others 0 (the sides of a comparison,
    /// [`crate::diff::combine`]): the same result as [`Merger::add`] of a copy of `p`
    /// with those sample types, without the copy (which a merged day as one side made
    /// a third copy of its samples).
    pub fn add_as_column(
        &mut self,
        name: &str,
        p: &Profile,
        layout: &AsColumn<'_>,
    ) -> Result<(), ProfileError> {
        let (Some(column), true) = (
            p.samples.values.get(layout.column),
            layout.slot < layout.types.len(),
        ) else {
            return Err(ProfileError::Invalid(format!(
                "{name} has no sample type {} to add as value {} of {}",
                layout.column,
                layout.slot,
                layout.types.len()
            )));
        };
        let header = Header {
            sample_types: layout.types.to_vec(),
            default_sample_type: layout.default_type,
            ..Header::of(p)
        };
        let label_set_ids = self.add_tables(name, p, &header, None)?;
        let n = layout.types.len();
        self.add_samples(p, &label_set_ids, 1, |i| {
            let v = column.get(i).copied().unwrap_or(0);
            (0..n).map(move |k| if k == layout.slot { v } else { 0 })
        })
    }

    /// Adds a base profile for a difference, as pprof's `-diff_base`: its values are
    /// negated, and its samples carry the label [`BASE_LABEL`]` = "true"`, so they are
    /// never summed with the other profile's samples.
    pub fn add_base(&mut self, name: &str, p: &Profile) -> Result<(), ProfileError> {
        self.add_scaled(name, p, -1, Some(BASE_LABEL))
    }

    /// Adds everything `other` merged (on another thread): the same result as adding
    /// `other`'s inputs here one by one, in their order, after this merger's own.
    pub fn absorb(&mut self, other: Merger) -> Result<(), ProfileError> {
        if other.inputs == 0 {
            return Ok(());
        }
        if self.inputs == 0 {
            *self = other;
            return Ok(());
        }
        let Merger {
            out,
            first_name,
            samples,
            inputs,
            durations,
            ..
        } = other;
        let before = self.durations;
        let label_set_ids = self.add_tables(&first_name, &out, &Header::of(&out), None)?;
        self.durations = before.saturating_add(durations);
        // Each of `other`'s chunks of records is freed once added here: the two tables
        // are never held whole at once.
        samples
            .drain(|r| self.add_sample(r.stack, label_set_ids[r.labels as usize], r.values(), 1))?;
        self.inputs += inputs - 1;
        self.flush()
    }

    /// Takes a profile's header: the first one's sample types, period type and start
    /// become the merge's; later ones must have the same sample types and widen the
    /// merge's time span.
    fn header(&mut self, name: &str, h: &Header<'_>) -> Result<(), ProfileError> {
        self.durations = self.durations.saturating_add(h.duration_nanos);
        if self.inputs == 0 {
            self.string("");
            self.first_name = name.to_string();
            self.out.sample_types = h
                .sample_types
                .iter()
                .map(|(kind, unit)| ValueType {
                    kind: self.string(kind),
                    unit: self.string(unit),
                })
                .collect();
            self.samples = SampleTable::new(h.sample_types.len());
            self.out.label_sets = vec![Vec::new()];
            self.label_sets.insert(Vec::new(), 0);
            self.out.period_type = ValueType {
                kind: self.string(h.period_type.0),
                unit: self.string(h.period_type.1),
            };
            self.out.period = h.period;
            self.out.time_nanos = h.time_nanos;
            self.out.default_sample_type = self.string(h.default_sample_type);
            self.out.doc_url = h.doc_url.to_string();
        } else {
            let mine: Vec<String> = self.out.sample_type_names();
            let theirs = h.sample_type_names();
            if mine != theirs {
                return Err(ProfileError::IncompatibleSampleTypes {
                    first: self.first_name.clone(),
                    first_types: mine.join(", "),
                    second: name.to_string(),
                    second_types: theirs.join(", "),
                });
            }
            self.out.period = self.out.period.max(h.period);
        }
        widen_span(
            &mut self.out,
            self.inputs == 0,
            h.time_nanos,
            h.duration_nanos,
        );
        self.inputs += 1;
        Ok(())
    }

    /// Interns a profile's string table into `scratch.strings`: every string, or
    /// with `reached` those it marks (the others get [`UNREACHED`]).
    fn map_strings<'s>(
        &mut self,
        strings: impl ExactSizeIterator<Item = &'s str>,
        reached: Option<&[bool]>,
    ) {
        let mut ids = std::mem::take(&mut self.scratch.strings);
        ids.clear();
        ids.resize(strings.len(), UNREACHED);
        let mut run: Vec<(usize, &str, u64)> = Vec::with_capacity(TOUCHED_TOGETHER);
        let mut hashes = Vec::with_capacity(TOUCHED_TOGETHER);
        let mut strings = strings
            .enumerate()
            .filter(|&(i, _)| is_reached(reached, i))
            .peekable();
        while strings.peek().is_some() {
            run.clear();
            run.extend(
                strings
                    .by_ref()
                    .take(TOUCHED_TOGETHER)
                    .map(|(i, s)| (i, s, StringIndex::hash(s))),
            );
            hashes.clear();
            hashes.extend(run.iter().map(|&(_, _, h)| h));
            self.strings.touch(&hashes, &self.out.strings);
            for &(i, s, h) in &run {
                ids[i] = self.string_hashed(h, s);
            }
        }
        self.scratch.strings = ids;
    }

    /// Interns a profile's mappings (with its strings mapped) into `scratch.mappings`.
    fn map_mappings(&mut self, mappings: &[Mapping]) {
        let s = &self.scratch.strings;
        self.scratch.mappings.clear();
        for m in mappings {
            let m = Mapping {
                filename: s[m.filename as usize],
                build_id: s[m.build_id as usize],
                ..m.clone()
            };
            let id = intern(&mut self.mappings, &mut self.out.mappings, m);
            self.scratch.mappings.push(id);
        }
    }

    /// Interns a profile's functions into `scratch.functions`: every one, or with
    /// `reached` those it marks (the others get [`UNREACHED`]).
    fn map_functions(&mut self, functions: &[Function], reached: Option<&[bool]>) {
        let s = &self.scratch.strings;
        self.scratch.functions.clear();
        for (i, f) in functions.iter().enumerate() {
            if !is_reached(reached, i) {
                self.scratch.functions.push(UNREACHED);
                continue;
            }
            let f = Function {
                name: s[f.name as usize],
                system_name: s[f.system_name as usize],
                filename: s[f.filename as usize],
                start_line: f.start_line,
            };
            let id = intern(&mut self.functions, &mut self.out.functions, f);
            self.scratch.functions.push(id);
        }
    }

    /// Interns the locations `(mapping, address, is_folded, lines)` of a profile, its
    /// mappings and functions already mapped, into `scratch.locations`: every one, or
    /// with `reached` those it marks (the others get [`UNREACHED`]).
    ///
    /// Each location is first given its merged parts and their hash; the index's slots
    /// of a run of them are then read together, so that their cache misses overlap,
    /// before each is found (or added) in turn.
    fn map_locations<'l>(
        &mut self,
        locations: impl Iterator<Item = (Option<u32>, u64, bool, &'l [Line])>,
        reached: Option<&[bool]>,
    ) {
        let s = &mut self.scratch;
        s.lines.clear();
        s.parts.clear();
        for (i, (mapping, address, is_folded, lines)) in locations.enumerate() {
            if !is_reached(reached, i) {
                s.parts.push(PendingLocation {
                    mapping: None,
                    address,
                    is_folded,
                    lines: (0, 0),
                    hash: 0,
                    reached: false,
                });
                continue;
            }
            let mapping = mapping.map(|m| s.mappings[m as usize]);
            let start = s.lines.len();
            let functions = &s.functions;
            s.lines.extend(lines.iter().map(|ln| Line {
                function: functions[ln.function as usize],
                ..*ln
            }));
            let hash = hash_of((mapping, address, is_folded, &s.lines[start..]));
            s.parts.push(PendingLocation {
                mapping,
                address,
                is_folded,
                lines: (start, s.lines.len()),
                hash,
                reached: true,
            });
        }
        let mut ids = std::mem::take(&mut self.scratch.locations);
        ids.clear();
        for run in self.scratch.parts.chunks(TOUCHED_TOGETHER) {
            self.locations
                .touch(run.iter().filter(|p| p.reached).map(|p| p.hash));
            for p in run {
                if !p.reached {
                    ids.push(UNREACHED);
                    continue;
                }
                let lines = &self.scratch.lines[p.lines.0..p.lines.1];
                let parts = Parts {
                    mapping: p.mapping,
                    address: p.address,
                    is_folded: p.is_folded,
                    lines,
                };
                let found = self.locations.find(p.hash, parts, &self.out.locations);
                let id = found.unwrap_or_else(|| {
                    let id = self.out.locations.len() as LocationId;
                    self.locations.insert(p.hash, parts, id);
                    self.out.locations.push(Location {
                        mapping: p.mapping,
                        address: p.address,
                        lines: lines.to_vec(),
                        is_folded: p.is_folded,
                    });
                    id
                });
                ids.push(id);
            }
        }
        self.scratch.locations = ids;
    }

    /// Interns a label set whose strings are merged ids.
    fn label_set(&mut self, set: &[Label]) -> LabelSetId {
        if let Some(id) = self.label_sets.get(set) {
            return *id;
        }
        let id = self.out.label_sets.len() as LabelSetId;
        self.out.label_sets.push(set.to_vec());
        self.label_sets.insert(set.to_vec(), id);
        id
    }

    /// Adds `factor` times `values` to the merged sample with `stack` (the current
    /// profile's location indices) and `labels` (merged), made with zero values when
    /// new. Samples are added in batches: [`Merger::flush`] adds what is left.
    #[inline]
    fn add_sample(
        &mut self,
        stack: &[LocationId],
        labels: LabelSetId,
        values: impl Iterator<Item = i64>,
        factor: i64,
    ) -> Result<(), ProfileError> {
        let locations = &self.scratch.locations;
        let batch = &mut self.scratch.batch;
        for l in stack {
            batch.push_location(locations[*l as usize]);
        }
        batch.end_sample(labels, values.map(|v| v.wrapping_mul(factor)));
        if batch.len() >= Batch::FULL {
            self.flush()?;
        }
        Ok(())
    }

    /// Adds the samples batched so far.
    fn flush(&mut self) -> Result<(), ProfileError> {
        let added = self.samples.add_batch(&self.scratch.batch);
        self.scratch.batch.clear();
        added
    }

    fn add_scaled(
        &mut self,
        name: &str,
        p: &Profile,
        factor: i64,
        tag: Option<&str>,
    ) -> Result<(), ProfileError> {
        let label_set_ids = self.add_tables(name, p, &Header::of(p), tag)?;
        self.add_samples(p, &label_set_ids, factor, |i| {
            p.samples.values.iter().map(move |c| c[i])
        })
    }

    /// Adds every sample of `p` (whose tables are added, its label sets' merged ids
    /// `label_set_ids`), sample `i` with the values `values(i)`, `factor` times.
    fn add_samples<I: Iterator<Item = i64>>(
        &mut self,
        p: &Profile,
        label_set_ids: &[LabelSetId],
        factor: i64,
        values: impl Fn(usize) -> I,
    ) -> Result<(), ProfileError> {
        for i in 0..p.samples.len() {
            let labels = label_set_ids[p.samples.label_set[i] as usize];
            self.add_sample(p.samples.stack(i), labels, values(i), factor)?;
        }
        self.flush()
    }

    /// Interns the tables of `p` (strings, mappings, functions, locations and label
    /// sets) as [`Merger::add`] does, without its header or samples: what a stack of
    /// `p` and its label set are in the merged tables ([`Merger::tables`]).
    pub fn intern_tables(&mut self, p: &Profile) -> Interned {
        self.intern_parts(
            p.strings.iter().map(String::as_str),
            &p.mappings,
            &p.functions,
            p.locations
                .iter()
                .map(|l| (l.mapping, l.address, l.is_folded, l.lines.as_slice())),
            &p.label_sets,
        )
    }

    /// [`Merger::intern_tables`] of a message's tables and the label sets of its
    /// samples as read.
    pub(crate) fn intern_read(&mut self, tables: &Tables<'_>, read: &ReadSamples) -> Interned {
        self.intern_parts(
            tables.strings.iter().copied(),
            &tables.mappings,
            &tables.functions,
            tables
                .locations
                .iter()
                .map(|l| (l.mapping, l.address, l.is_folded, tables.lines_of(l))),
            &read.label_sets,
        )
    }

    fn intern_parts<'s>(
        &mut self,
        strings: impl ExactSizeIterator<Item = &'s str>,
        mappings: &[Mapping],
        functions: &[Function],
        locations: impl Iterator<Item = (Option<u32>, u64, bool, &'s [Line])>,
        label_sets: &[Vec<Label>],
    ) -> Interned {
        if self.out.strings.is_empty() {
            self.string("");
            self.out.label_sets = vec![Vec::new()];
            self.label_sets.insert(Vec::new(), 0);
        }
        self.map_strings(strings, None);
        self.map_mappings(mappings);
        self.map_functions(functions, None);
        self.map_locations(locations, None);
        let label_sets = label_sets
            .iter()
            .map(|set| self.merged_label_set(set))
            .collect();
        Interned {
            strings: self.scratch.strings.clone(),
            locations: self.scratch.locations.clone(),
            label_sets,
        }
    }

    /// The merged tables (strings, mappings, functions, locations, label sets); the
    /// samples are made by [`Merger::finish`].
    pub fn tables(&self) -> &Profile {
        &self.out
    }

    /// Takes `header` (`p`'s, or what it is added as) and the tables of `p` (its label
    /// sets with `tag` added): the merged id of each of its label sets.
    fn add_tables(
        &mut self,
        name: &str,
        p: &Profile,
        header: &Header<'_>,
        tag: Option<&str>,
    ) -> Result<Vec<LabelSetId>, ProfileError> {
        self.header(name, header)?;
        self.map_strings(p.strings.iter().map(String::as_str), None);
        self.map_mappings(&p.mappings);
        self.map_functions(&p.functions, None);
        self.map_locations(
            p.locations
                .iter()
                .map(|l| (l.mapping, l.address, l.is_folded, l.lines.as_slice())),
            None,
        );
        let tag = tag.map(|key| Label {
            key: self.string(key),
            str: self.string("true"),
            ..Label::default()
        });
        let mut labels = std::mem::take(&mut self.scratch.labels);
        let label_set_ids = p
            .label_sets
            .iter()
            .map(|set| {
                let s = &self.scratch.strings;
                labels.clear();
                labels.extend(set.iter().map(|l| Label {
                    key: s[l.key as usize],
                    str: s[l.str as usize],
                    num: l.num,
                    num_unit: s[l.num_unit as usize],
                }));
                labels.extend(tag);
                self.label_set(&labels)
            })
            .collect();
        self.scratch.labels = labels;
        Ok(label_set_ids)
    }

    /// Adds the samples `selection` keeps of the uncompressed pprof message `body`
    /// (`name` identifies it in errors): the same result as [`Merger::add`] of the
    /// decoded profile cut to those samples (and to the selected sample type), and the
    /// same errors as decoding it. Nothing is added when `body` is not a valid profile
    /// or cannot be merged (its sample types, a stack too deep to hold); only
    /// [`ProfileError::MergeTooLarge`] comes once some of it was added.
    pub fn add_pprof(
        &mut self,
        name: &str,
        body: &[u8],
        selection: Selection<'_>,
    ) -> Result<(), ProfileError> {
        let mut spare = Vec::new();
        let (tables, body) = Tables::parse_lossy(body, &mut self.scratch.raw, &mut spare)?;
        // Every sample is read and checked before anything is merged, so that a
        // profile broken half-way adds nothing.
        let mut read = std::mem::take(&mut self.scratch.read);
        let result = tables
            .read_samples(body, &mut read, true)
            .and_then(|()| self.add_read(name, &tables, &read, selection));
        self.scratch.read = read;
        result
    }

    /// The header, tables and samples `read` of one profile, into the merge.
    fn add_read(
        &mut self,
        name: &str,
        tables: &Tables<'_>,
        read: &ReadSamples,
        selection: Selection<'_>,
    ) -> Result<(), ProfileError> {
        let column = match selection.sample_type {
            Some(t) if t >= tables.sample_types.len() => {
                return Err(ProfileError::Invalid(format!("no sample type {t}")));
            }
            column => column,
        };
        // Every check on the profile alone comes before anything is added.
        let n_types = column.map_or(tables.sample_types.len(), |_| 1);
        let samples = &read.samples;
        let deepest = samples
            .stack_offsets
            .windows(2)
            .map(|w| w[1].wrapping_sub(w[0]))
            .max()
            .unwrap_or(0) as usize;
        if deepest > crate::sample_table::max_stack(n_types) {
            return Err(crate::sample_table::too_deep(deepest));
        }
        let str_pair = |t: &ValueType| (tables.str(t.kind), tables.str(t.unit));
        let sample_types = match column {
            Some(t) => vec![str_pair(&tables.sample_types[t])],
            None => tables.sample_types.iter().map(str_pair).collect(),
        };
        self.header(
            name,
            &Header {
                sample_types,
                period_type: str_pair(&tables.period_type),
                period: tables.period,
                time_nanos: tables.time_nanos,
                duration_nanos: tables.duration_nanos,
                default_sample_type: match column {
                    Some(_) => "",
                    None => tables.str(tables.default_sample_type),
                },
                doc_url: tables.doc_url,
            },
        )?;
        let mut keep = selection.keep;
        let kept: Vec<bool> = read
            .label_sets
            .iter()
            .map(|labels| keeps(tables, labels, &mut keep))
            .collect();
        let mut reached = std::mem::take(&mut self.scratch.reached);
        let filtered = !kept.iter().all(|&k| k);
        if filtered {
            reached.mark(tables, read, &kept);
        }
        self.map_strings(
            tables.strings.iter().copied(),
            filtered.then_some(reached.strings.as_slice()),
        );
        self.map_mappings(&tables.mappings);
        self.map_functions(
            &tables.functions,
            filtered.then_some(reached.functions.as_slice()),
        );
        self.map_locations(
            tables
                .locations
                .iter()
                .map(|l| (l.mapping, l.address, l.is_folded, tables.lines_of(l))),
            filtered.then_some(reached.locations.as_slice()),
        );
        self.scratch.reached = reached;
        let sets: Vec<Option<LabelSetId>> = (read.label_sets.iter().zip(&kept))
            .map(|(labels, &k)| k.then(|| self.merged_label_set(labels)))
            .collect();
        for (i, &local_set) in samples.label_set.iter().enumerate() {
            let Some(set) = sets[local_set as usize] else {
                continue;
            };
            let values = samples.values.iter().map(|c| c[i]);
            match column {
                Some(t) => self.add_sample(samples.stack(i), set, values.skip(t).take(1), 1)?,
                None => self.add_sample(samples.stack(i), set, values, 1)?,
            }
        }
        self.flush()
    }

    /// The merged label set of a sample's labels (the profile's string ids, mapped
    /// into `scratch.strings`).
    fn merged_label_set(&mut self, labels: &[Label]) -> LabelSetId {
        let s = &self.scratch.strings;
        let merged: Vec<Label> = labels
            .iter()
            .map(|l| Label {
                key: s[l.key as usize],
                str: s[l.str as usize],
                num: l.num,
                num_unit: s[l.num_unit as usize],
            })
            .collect();
        self.label_set(&merged)
    }

    /// The sum of the merged profiles' durations, as `go tool pprof` reports a merge's
    /// duration (the merged profile's own is the span they cover).
    pub fn summed_duration(&self) -> i64 {
        self.durations
    }

    /// The merged profile; an empty profile when nothing was added.
    pub fn finish(mut self) -> Profile {
        if self.inputs > 0 {
            self.out.samples = self.samples.into_samples();
        }
        self.out
    }
}

//! Merging profiles one at a time into one aggregate, as `go tool pprof` merges the
//! files it is given: strings, functions, mappings and locations are re-interned, and
//! samples with the same stack and labels are summed.

use std::hash::{Hash as _, Hasher as _};

use rustc_hash::{FxHashMap, FxHasher};

use crate::error::ProfileError;
use crate::profile::{
    Function, Label, LabelSetId, Line, Location, Mapping, Profile, Samples, StrId, ValueType,
};

/// The label pprof puts on the samples of a `-diff_base` profile.
pub const BASE_LABEL: &str = "pprof::base";

/// Accumulates profiles; memory grows with distinct stacks, not with the number of inputs.
#[derive(Debug, Default)]
pub struct Merger {
    out: Profile,
    first_name: String,
    strings: FxHashMap<String, StrId>,
    functions: FxHashMap<Function, u32>,
    mappings: FxHashMap<Mapping, u32>,
    locations: FxHashMap<Location, u32>,
    label_sets: FxHashMap<Vec<Label>, LabelSetId>,
    samples: SampleIndex,
    inputs: usize,
}

/// Finds the merged sample with a given stack and label set, without building a key:
/// samples are chained by the hash of (stack, labels) and compared in place.
#[derive(Debug, Default)]
struct SampleIndex {
    /// Hash → the last merged sample with that hash.
    heads: FxHashMap<u64, u32>,
    /// For each merged sample, the previous one with the same hash (`u32::MAX`: none).
    previous: Vec<u32>,
}

impl SampleIndex {
    /// The index of the merged sample with this stack and label set, appended with
    /// zero values when new.
    fn find_or_insert(&mut self, out: &mut Samples, stack: &[u32], labels: LabelSetId) -> usize {
        let mut hasher = FxHasher::default();
        stack.hash(&mut hasher);
        labels.hash(&mut hasher);
        let hash = hasher.finish();
        let head = self.heads.get(&hash).copied().unwrap_or(u32::MAX);
        let mut cursor = head;
        while cursor != u32::MAX {
            let i = cursor as usize;
            if out.label_set[i] == labels && out.stack(i) == stack {
                return i;
            }
            cursor = self.previous[i];
        }
        out.stack_locations.extend_from_slice(stack);
        out.stack_offsets.push(out.stack_locations.len() as u32);
        out.label_set.push(labels);
        for column in &mut out.values {
            column.push(0);
        }
        let index = out.label_set.len() - 1;
        self.previous.push(head);
        self.heads.insert(hash, index as u32);
        index
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
        if let Some(id) = self.strings.get(s) {
            return *id;
        }
        let id = self.out.strings.len() as StrId;
        self.out.strings.push(s.to_string());
        self.strings.insert(s.to_string(), id);
        id
    }

    /// Adds one profile; `name` identifies it in errors (e.g. its file name).
    pub fn add(&mut self, name: &str, p: &Profile) -> Result<(), ProfileError> {
        self.add_scaled(name, p, 1, None)
    }

    /// Adds a base profile for a difference, as pprof's `-diff_base`: its values are
    /// negated, and its samples carry the label [`BASE_LABEL`]` = "true"`, so they are
    /// never summed with the other profile's samples.
    pub fn add_base(&mut self, name: &str, p: &Profile) -> Result<(), ProfileError> {
        self.add_scaled(name, p, -1, Some(BASE_LABEL))
    }

    fn add_scaled(
        &mut self,
        name: &str,
        p: &Profile,
        factor: i64,
        tag: Option<&str>,
    ) -> Result<(), ProfileError> {
        if self.inputs == 0 {
            self.string("");
            self.first_name = name.to_string();
            self.out.sample_types = p
                .sample_types
                .iter()
                .map(|t| ValueType {
                    kind: self.string(p.str(t.kind)),
                    unit: self.string(p.str(t.unit)),
                })
                .collect();
            self.out.samples.values = vec![Vec::new(); p.sample_types.len()];
            self.out.samples.stack_offsets = vec![0];
            self.out.label_sets = vec![Vec::new()];
            self.label_sets.insert(Vec::new(), 0);
            self.out.period_type = ValueType {
                kind: self.string(p.str(p.period_type.kind)),
                unit: self.string(p.str(p.period_type.unit)),
            };
            self.out.period = p.period;
            self.out.time_nanos = p.time_nanos;
            self.out.default_sample_type = self.string(p.str(p.default_sample_type));
            self.out.doc_url = p.doc_url.clone();
        } else {
            let mine: Vec<String> = self.out.sample_type_names();
            let theirs = p.sample_type_names();
            if mine != theirs {
                return Err(ProfileError::IncompatibleSampleTypes {
                    first: self.first_name.clone(),
                    first_types: mine.join(", "),
                    second: name.to_string(),
                    second_types: theirs.join(", "),
                });
            }
            self.out.period = self.out.period.max(p.period);
            if p.time_nanos != 0 && (self.out.time_nanos == 0 || p.time_nanos < self.out.time_nanos)
            {
                let end = self.end_nanos().max(p.time_nanos + p.duration_nanos);
                self.out.time_nanos = p.time_nanos;
                self.out.duration_nanos = end - p.time_nanos;
            }
        }
        let end = self.end_nanos().max(p.time_nanos + p.duration_nanos);
        if self.out.time_nanos != 0 {
            self.out.duration_nanos = end - self.out.time_nanos;
        }
        self.inputs += 1;

        let strings: Vec<StrId> = p.strings.iter().map(|s| self.string(s)).collect();
        let s = |id: StrId| strings[id as usize];
        let mapping_ids: Vec<u32> = p
            .mappings
            .iter()
            .map(|m| {
                let m = Mapping {
                    filename: s(m.filename),
                    build_id: s(m.build_id),
                    ..m.clone()
                };
                let next = self.out.mappings.len() as u32;
                *self.mappings.entry(m.clone()).or_insert_with(|| {
                    self.out.mappings.push(m);
                    next
                })
            })
            .collect();
        let function_ids: Vec<u32> = p
            .functions
            .iter()
            .map(|f| {
                let f = Function {
                    name: s(f.name),
                    system_name: s(f.system_name),
                    filename: s(f.filename),
                    start_line: f.start_line,
                };
                let next = self.out.functions.len() as u32;
                *self.functions.entry(f).or_insert_with(|| {
                    self.out.functions.push(f);
                    next
                })
            })
            .collect();
        let location_ids: Vec<u32> = p
            .locations
            .iter()
            .map(|l| {
                let l = Location {
                    mapping: l.mapping.map(|m| mapping_ids[m as usize]),
                    address: l.address,
                    lines: l
                        .lines
                        .iter()
                        .map(|ln| Line {
                            function: function_ids[ln.function as usize],
                            ..*ln
                        })
                        .collect(),
                    is_folded: l.is_folded,
                };
                if let Some(id) = self.locations.get(&l) {
                    return *id;
                }
                let id = self.out.locations.len() as u32;
                self.out.locations.push(l.clone());
                self.locations.insert(l, id);
                id
            })
            .collect();
        let tag = tag.map(|key| Label {
            key: self.string(key),
            str: self.string("true"),
            ..Label::default()
        });
        let label_set_ids: Vec<LabelSetId> = p
            .label_sets
            .iter()
            .map(|set| {
                let set: Vec<Label> = set
                    .iter()
                    .map(|l| Label {
                        key: s(l.key),
                        str: s(l.str),
                        num: l.num,
                        num_unit: s(l.num_unit),
                    })
                    .chain(tag)
                    .collect();
                let next = self.out.label_sets.len() as LabelSetId;
                *self.label_sets.entry(set.clone()).or_insert_with(|| {
                    self.out.label_sets.push(set);
                    next
                })
            })
            .collect();

        let mut stack: Vec<u32> = Vec::new();
        for i in 0..p.samples.len() {
            stack.clear();
            stack.extend(p.samples.stack(i).iter().map(|l| location_ids[*l as usize]));
            let labels = label_set_ids[p.samples.label_set[i] as usize];
            let out = &mut self.out.samples;
            let index = self.samples.find_or_insert(out, &stack, labels);
            for (column, source) in out.values.iter_mut().zip(&p.samples.values) {
                column[index] += factor * source[i];
            }
        }
        Ok(())
    }

    fn end_nanos(&self) -> i64 {
        self.out.time_nanos + self.out.duration_nanos
    }

    /// The merged profile; an empty profile when nothing was added.
    pub fn finish(self) -> Profile {
        self.out
    }
}

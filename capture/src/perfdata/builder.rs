//! `Builder`: the pprof profile of a perf.data file as its records are walked: strings,
//! mappings and locations interned, equal (stack, label set) samples added up.

use std::collections::HashMap;

use profile_model::Profile;
use profile_model::interner::Interner;
use profile_model::profile::{
    Function, Label, LabelSetId, Line, Location, LocationId, Mapping, MappingId, StrId,
};

/// A binary mapped into a process, as the file's MMAP records and build ids say it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(super) struct MappedFile {
    /// First address.
    pub start: u64,
    /// One past the last address.
    pub limit: u64,
    /// File offset of `start`.
    pub offset: u64,
    /// Path as recorded.
    pub path: String,
    /// Build id, lowercase hexadecimal, empty when unknown.
    pub build_id: String,
}

/// Builds the profile; see the module documentation.
#[derive(Debug)]
pub(super) struct Builder {
    profile: Profile,
    interner: Interner,
    mappings: HashMap<MappedFile, MappingId>,
    /// (mapping or none, address) → location.
    locations: HashMap<(Option<MappingId>, u64), LocationId>,
    functions: HashMap<StrId, u32>,
    /// (stack, label set) → sample index.
    samples: HashMap<(Vec<LocationId>, LabelSetId), usize>,
}

impl Builder {
    /// A profile with these sample types (`(type, unit)`), the period measured in the
    /// last of them.
    pub fn new(sample_types: &[(&str, &str)], period: i64) -> Self {
        let (profile, interner) = Interner::start(sample_types, period);
        Self {
            profile,
            interner,
            mappings: HashMap::new(),
            locations: HashMap::new(),
            functions: HashMap::new(),
            samples: HashMap::new(),
        }
    }

    fn string(&mut self, s: &str) -> StrId {
        self.interner.string(&mut self.profile, s)
    }

    /// The mapping of `file`, made on first use.
    pub fn mapping(&mut self, file: &MappedFile) -> MappingId {
        if let Some(&id) = self.mappings.get(file) {
            return id;
        }
        let id = self.profile.mappings.len() as MappingId;
        let (filename, build_id) = (self.string(&file.path), self.string(&file.build_id));
        self.profile.mappings.push(Mapping {
            memory_start: file.start,
            memory_limit: file.limit,
            file_offset: file.offset,
            filename,
            build_id,
            flags: 0,
        });
        self.mappings.insert(file.clone(), id);
        id
    }

    /// The location of `address` in `mapping`, made on first use; `name` names it
    /// when it is made (the kernel's frames), else it is left to the symbolizer.
    pub fn location(
        &mut self,
        mapping: Option<MappingId>,
        address: u64,
        name: impl FnOnce() -> Option<String>,
    ) -> LocationId {
        if let Some(&id) = self.locations.get(&(mapping, address)) {
            return id;
        }
        let lines = match name() {
            Some(name) => {
                let name = self.string(&name);
                let next = self.profile.functions.len() as u32;
                let function = *self.functions.entry(name).or_insert(next);
                if function == next {
                    self.profile.functions.push(Function {
                        name,
                        system_name: name,
                        filename: 0,
                        start_line: 0,
                    });
                }
                vec![Line {
                    function,
                    line: 0,
                    column: 0,
                }]
            }
            None => Vec::new(),
        };
        let id = self.profile.locations.len() as LocationId;
        self.profile.locations.push(Location {
            mapping,
            address,
            lines,
            is_folded: false,
        });
        self.locations.insert((mapping, address), id);
        id
    }

    /// The label set of these string labels and numeric ones (key, value, unit), made
    /// on first use.
    pub fn label_set(
        &mut self,
        labels: &[(&str, &str)],
        numbers: &[(&str, i64, &str)],
    ) -> LabelSetId {
        let mut set = self.interner.string_labels(&mut self.profile, labels);
        for (k, num, unit) in numbers {
            set.push(Label {
                key: self.string(k),
                str: 0,
                num: *num,
                num_unit: self.string(unit),
            });
        }
        self.interner.label_set(&mut self.profile, set)
    }

    /// Adds `values` (one per sample type) to the sample of this stack (leaf first)
    /// and label set.
    pub fn add(&mut self, leaf_first: Vec<LocationId>, label_set: LabelSetId, values: &[i64]) {
        let s = &mut self.profile.samples;
        let next = s.label_set.len();
        let index = *self
            .samples
            .entry((leaf_first, label_set))
            .or_insert_with_key(|(stack, _)| {
                s.stack_locations.extend_from_slice(stack);
                s.stack_offsets.push(s.stack_locations.len() as u32);
                for column in &mut s.values {
                    column.push(0);
                }
                s.label_set.push(label_set);
                next
            });
        for (column, v) in s.values.iter_mut().zip(values) {
            if let Some(slot) = column.get_mut(index) {
                *slot = slot.saturating_add(*v);
            }
        }
    }

    /// The profile built, starting at `time_nanos` and `duration_nanos` long.
    pub fn finish(mut self, time_nanos: i64, duration_nanos: i64) -> Profile {
        self.profile.time_nanos = time_nanos;
        self.profile.duration_nanos = duration_nanos;
        self.profile
    }
}

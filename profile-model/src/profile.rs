//! The in-memory profile: interned, columnar tables that aggregation walks by index.
//!
//! Every cross reference is a dense index into a table of this struct, checked once
//! when the profile is built ([`crate::codec::decode`]), so later passes never fail
//! and never hash strings.

/// Index into [`Profile::strings`]; 0 is the empty string.
pub type StrId = u32;
/// Index into [`Profile::functions`].
pub type FunctionId = u32;
/// Index into [`Profile::mappings`].
pub type MappingId = u32;
/// Index into [`Profile::locations`].
pub type LocationId = u32;
/// Index into [`Profile::label_sets`]; 0 is the empty set.
pub type LabelSetId = u32;

/// A kind of sample value and its unit, e.g. `cpu`/`nanoseconds`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ValueType {
    /// What is measured, e.g. `cpu`, `alloc_space`.
    pub kind: StrId,
    /// Its unit, e.g. `nanoseconds`, `bytes`, `count`.
    pub unit: StrId,
}

/// A binary mapped into memory.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct Mapping {
    /// First address of the mapping.
    pub memory_start: u64,
    /// One past the last address.
    pub memory_limit: u64,
    /// Offset in the file of `memory_start`.
    pub file_offset: u64,
    /// Path of the binary.
    pub filename: StrId,
    /// Build id of the binary, if known.
    pub build_id: StrId,
    /// pprof's symbolization flags, bit 0..3 = functions, filenames, line numbers, inline frames.
    pub flags: u8,
}

/// A source function.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Function {
    /// Readable name, e.g. `main.hashLoop`.
    pub name: StrId,
    /// Mangled or system name.
    pub system_name: StrId,
    /// Source file.
    pub filename: StrId,
    /// First line of the function in its file.
    pub start_line: i64,
}

/// A source line inside a location.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Line {
    /// The function the line belongs to.
    pub function: FunctionId,
    /// Line number, 0 when unknown.
    pub line: i64,
    /// Column, 0 when unknown.
    pub column: i64,
}

/// A program address, with the source lines it stands for.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct Location {
    /// The binary it lies in, if known.
    pub mapping: Option<MappingId>,
    /// The instruction address.
    pub address: u64,
    /// Lines, innermost (inlined callee) first; empty when not symbolized.
    pub lines: Vec<Line>,
    /// pprof's `is_folded` flag.
    pub is_folded: bool,
}

/// A sample label: a key with a string or numeric value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Label {
    /// The key.
    pub key: StrId,
    /// String value, 0 when numeric.
    pub str: StrId,
    /// Numeric value.
    pub num: i64,
    /// Unit of the numeric value.
    pub num_unit: StrId,
}

/// All samples, as columns: the stack of sample `i` is
/// `stack_locations[stack_offsets[i]..stack_offsets[i + 1]]` (leaf first).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Samples {
    /// `len() + 1` offsets into `stack_locations`.
    pub stack_offsets: Vec<u32>,
    /// Location ids of all stacks, leaf first, one after another.
    pub stack_locations: Vec<LocationId>,
    /// One column per sample type, each with one value per sample.
    pub values: Vec<Vec<i64>>,
    /// The label set of each sample.
    pub label_set: Vec<LabelSetId>,
}

impl Samples {
    /// No samples, with `columns` value columns.
    pub fn with_columns(columns: usize) -> Self {
        Self {
            stack_offsets: vec![0],
            values: vec![Vec::new(); columns],
            ..Self::default()
        }
    }

    /// Number of samples.
    pub fn len(&self) -> usize {
        self.label_set.len()
    }

    /// Whether there are no samples.
    pub fn is_empty(&self) -> bool {
        self.label_set.is_empty()
    }

    /// The stack of sample `i`, leaf first.
    pub fn stack(&self, i: usize) -> &[LocationId] {
        let start = self.stack_offsets[i] as usize;
        let end = self.stack_offsets[i + 1] as usize;
        &self.stack_locations[start..end]
    }
}

/// A decoded profile; see the module documentation.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Profile {
    /// The string table; entry 0 is `""`.
    pub strings: Vec<String>,
    /// Sample types, one per value column.
    pub sample_types: Vec<ValueType>,
    /// pprof's preferred sample type, 0 when unset.
    pub default_sample_type: StrId,
    /// What one period measures.
    pub period_type: ValueType,
    /// Sampling period in `period_type` units.
    pub period: i64,
    /// Start of the profile, nanoseconds since the Unix epoch, 0 when unknown.
    pub time_nanos: i64,
    /// Length of the profile in nanoseconds, 0 when unknown.
    pub duration_nanos: i64,
    /// Regex of frames to drop (pprof's `drop_frames`).
    pub drop_frames: StrId,
    /// Regex of frames to keep (pprof's `keep_frames`).
    pub keep_frames: StrId,
    /// Free-form comments.
    pub comments: Vec<StrId>,
    /// Documentation link of the profile type.
    pub doc_url: String,
    /// Binaries.
    pub mappings: Vec<Mapping>,
    /// Functions.
    pub functions: Vec<Function>,
    /// Locations.
    pub locations: Vec<Location>,
    /// Distinct label sets; entry 0 is the empty set.
    pub label_sets: Vec<Vec<Label>>,
    /// The samples.
    pub samples: Samples,
}

impl Profile {
    /// The string with id `id`; ids are validated when the profile is built.
    pub fn str(&self, id: StrId) -> &str {
        self.strings.get(id as usize).map_or("", String::as_str)
    }

    /// `type/unit` of every sample type, e.g. `["samples/count", "cpu/nanoseconds"]`.
    pub fn sample_type_names(&self) -> Vec<String> {
        self.sample_types
            .iter()
            .map(|t| format!("{}/{}", self.str(t.kind), self.str(t.unit)))
            .collect()
    }

    /// The index of the sample type pprof shows by default: `default_sample_type` if set,
    /// else the last one.
    pub fn default_sample_index(&self) -> usize {
        if self.default_sample_type != 0
            && let Some(i) = self
                .sample_types
                .iter()
                .position(|t| t.kind == self.default_sample_type)
        {
            return i;
        }
        self.sample_types.len().saturating_sub(1)
    }

    /// Finds a sample type by index (`"1"`) or by type name (`"cpu"`, `"alloc_space"`).
    pub fn find_sample_type(&self, spec: &str) -> Option<usize> {
        if let Ok(i) = spec.parse::<usize>() {
            return (i < self.sample_types.len()).then_some(i);
        }
        self.sample_types
            .iter()
            .position(|t| self.str(t.kind) == spec)
            .or_else(|| {
                self.sample_type_names()
                    .iter()
                    .position(|n| n.as_str() == spec)
            })
    }

    /// The profile with only sample type `sample_type` (as Parca answers a query for one
    /// profile type): its column kept, the other columns dropped, samples kept as they
    /// are. `None` when there is no such sample type.
    pub fn only_sample_type(mut self, sample_type: usize) -> Option<Profile> {
        if sample_type >= self.sample_types.len() {
            return None;
        }
        let column = self.samples.values.swap_remove(sample_type);
        self.samples.values = vec![column];
        self.sample_types = vec![self.sample_types[sample_type]];
        self.default_sample_type = 0;
        Some(self)
    }

    /// The labels of sample `i` as (key, value) text, numeric values in decimal.
    pub fn sample_labels(&self, i: usize) -> impl Iterator<Item = (&str, String)> {
        let set = self.samples.label_set.get(i).copied().unwrap_or(0);
        self.label_sets[set as usize]
            .iter()
            .map(|l| (self.str(l.key), self.label_value(l)))
    }

    /// A label's value as text: the string, or the number in decimal.
    pub fn label_value(&self, label: &Label) -> String {
        if label.str != 0 {
            self.str(label.str).to_string()
        } else {
            label.num.to_string()
        }
    }

    /// Sum of column `sample_type` over all samples.
    pub fn total(&self, sample_type: usize) -> i64 {
        self.samples
            .values
            .get(sample_type)
            .map_or(0, |c| c.iter().fold(0, |sum, v| sum.wrapping_add(*v)))
    }
}

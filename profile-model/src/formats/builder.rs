//! `Builder`: a profile made up from frame names, as the text and JSON formats give
//! them: one function and one location per distinct (name, file, line), one label set
//! per distinct list of labels, one sample per stack pushed.

use std::collections::HashMap;

use super::FormatError;
use crate::profile::{
    Function, Label, LabelSetId, Line, Location, LocationId, Profile, Samples, StrId, ValueType,
};

/// A frame as the formats name it: function name, source file and line (0: unknown).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct FrameName<'a> {
    /// The function's name, shown as it is.
    pub name: &'a str,
    /// Its source file, empty when unknown.
    pub file: &'a str,
    /// Its line, 0 when unknown.
    pub line: i64,
}

impl<'a> FrameName<'a> {
    /// A frame known by its name alone (folded stacks).
    pub fn named(name: &'a str) -> Self {
        Self {
            name,
            file: "",
            line: 0,
        }
    }
}

/// Frames a builder may push or walk for each byte of its input, and at least: stacks
/// the input does not spell out (a `.cpuprofile`'s paths, an evented profile's open
/// frames) could otherwise grow with the square of its size.
const FRAMES_PER_BYTE: u64 = 4;
const MIN_FRAMES: u64 = 1 << 26;

/// Builds a [`Profile`] sample by sample; see the module documentation.
#[derive(Debug)]
pub(crate) struct Builder {
    profile: Profile,
    /// Frames that may still be pushed or walked.
    budget: u64,
    strings: HashMap<String, StrId>,
    locations: HashMap<(StrId, StrId, i64), LocationId>,
    label_sets: HashMap<Vec<Label>, LabelSetId>,
}

impl Builder {
    /// A profile with these sample types (`(type, unit)`), the period measured in the
    /// last of them, read from `input_len` bytes.
    pub fn new(sample_types: &[(&str, &str)], period: i64, input_len: usize) -> Self {
        let mut b = Self {
            budget: (input_len as u64)
                .saturating_mul(FRAMES_PER_BYTE)
                .max(MIN_FRAMES),
            profile: Profile {
                strings: vec![String::new()],
                label_sets: vec![Vec::new()],
                samples: Samples::with_columns(sample_types.len()),
                period,
                ..Profile::default()
            },
            strings: HashMap::from([(String::new(), 0)]),
            locations: HashMap::new(),
            label_sets: HashMap::from([(Vec::new(), 0)]),
        };
        for (kind, unit) in sample_types {
            let t = ValueType {
                kind: b.intern(kind),
                unit: b.intern(unit),
            };
            b.profile.sample_types.push(t);
            b.profile.period_type = t;
        }
        b
    }

    /// Sets the profile's start and length, in nanoseconds (0: unknown).
    pub fn set_time(&mut self, time_nanos: i64, duration_nanos: i64) {
        self.profile.time_nanos = time_nanos;
        self.profile.duration_nanos = duration_nanos;
    }

    fn intern(&mut self, s: &str) -> StrId {
        if let Some(id) = self.strings.get(s) {
            return *id;
        }
        let id = self.profile.strings.len() as StrId;
        self.profile.strings.push(s.to_string());
        self.strings.insert(s.to_string(), id);
        id
    }

    /// The location of `frame`, made on first use.
    pub fn location(&mut self, frame: FrameName<'_>) -> LocationId {
        let key = (self.intern(frame.name), self.intern(frame.file), frame.line);
        if let Some(id) = self.locations.get(&key) {
            return *id;
        }
        let p = &mut self.profile;
        p.functions.push(Function {
            name: key.0,
            system_name: 0,
            filename: key.1,
            start_line: frame.line,
        });
        p.locations.push(Location {
            mapping: None,
            address: 0,
            lines: vec![Line {
                function: p.functions.len() as u32 - 1,
                line: frame.line,
                column: 0,
            }],
            is_folded: false,
        });
        let id = p.locations.len() as LocationId - 1;
        self.locations.insert(key, id);
        id
    }

    /// The label set of these string labels, made on first use.
    pub fn label_set(&mut self, labels: &[(&str, &str)]) -> LabelSetId {
        let set: Vec<Label> = labels
            .iter()
            .map(|(k, v)| Label {
                key: self.intern(k),
                str: self.intern(v),
                num: 0,
                num_unit: 0,
            })
            .collect();
        if let Some(id) = self.label_sets.get(&set) {
            return *id;
        }
        let id = self.profile.label_sets.len() as LabelSetId;
        self.profile.label_sets.push(set.clone());
        self.label_sets.insert(set, id);
        id
    }

    /// Takes `frames` from the budget of frames pushed or walked: an error once it is
    /// spent, so that no input takes more time or memory than a few times its size.
    pub fn spend(&mut self, frames: usize) -> Result<(), FormatError> {
        self.budget = self
            .budget
            .checked_sub(frames as u64)
            .ok_or(FormatError::TooDeep)?;
        Ok(())
    }

    /// Adds a sample: its stack leaf first, a value per sample type, its label set.
    pub fn push(
        &mut self,
        leaf_first: &[LocationId],
        values: &[i64],
        label_set: LabelSetId,
    ) -> Result<(), FormatError> {
        self.spend(leaf_first.len())?;
        let s = &mut self.profile.samples;
        s.stack_locations.extend_from_slice(leaf_first);
        s.stack_offsets.push(s.stack_locations.len() as u32);
        for (column, v) in s.values.iter_mut().zip(values) {
            column.push(*v);
        }
        s.label_set.push(label_set);
        Ok(())
    }

    /// The profile built.
    pub fn finish(self) -> Profile {
        self.profile
    }
}

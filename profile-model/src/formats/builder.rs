//! `Builder`: a profile made up from frame names, as the text and JSON formats give
//! them: one function and one location per distinct (name, file, line), one label set
//! per distinct list of labels, one sample per stack pushed.

use std::collections::HashMap;

use super::FormatError;
use crate::interner::Interner;
use crate::profile::{Function, Label, LabelSetId, Line, Location, LocationId, Profile, StrId};

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
    interner: Interner,
    locations: HashMap<(StrId, StrId, i64), LocationId>,
}

impl Builder {
    /// A profile with these sample types (`(type, unit)`), the period measured in the
    /// last of them, read from `input_len` bytes.
    pub fn new(sample_types: &[(&str, &str)], period: i64, input_len: usize) -> Self {
        let (profile, interner) = Interner::start(sample_types, period);
        Self {
            budget: (input_len as u64)
                .saturating_mul(FRAMES_PER_BYTE)
                .max(MIN_FRAMES),
            profile,
            interner,
            locations: HashMap::new(),
        }
    }

    /// Sets the profile's start and length, in nanoseconds (0: unknown).
    pub fn set_time(&mut self, time_nanos: i64, duration_nanos: i64) {
        self.profile.time_nanos = time_nanos;
        self.profile.duration_nanos = duration_nanos;
    }

    fn intern(&mut self, s: &str) -> StrId {
        self.interner.string(&mut self.profile, s)
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
        let set = self.interner.string_labels(&mut self.profile, labels);
        self.interner.label_set(&mut self.profile, set)
    }

    /// The label set holding only the time slice starting `offset_nanos` after the
    /// profile's start ([`crate::time_slices::TIME_LABEL`]), made on first use.
    pub fn time_slice(&mut self, offset_nanos: i64) -> LabelSetId {
        let label = Label {
            key: self
                .interner
                .string(&mut self.profile, crate::time_slices::TIME_LABEL),
            str: 0,
            num: offset_nanos,
            num_unit: self.interner.string(&mut self.profile, "nanoseconds"),
        };
        self.interner.label_set(&mut self.profile, vec![label])
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

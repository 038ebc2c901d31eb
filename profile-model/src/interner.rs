//! `Interner`: the strings and label sets of a profile being built, each stored once,
//! as every reader of another profiler's format (text and JSON formats, perf.data)
//! needs them.

use std::collections::HashMap;

use crate::profile::{Label, LabelSetId, Profile, Samples, StrId, ValueType};

/// Interns strings and label sets into one profile's tables.
#[derive(Debug)]
pub struct Interner {
    strings: HashMap<String, StrId>,
    label_sets: HashMap<Vec<Label>, LabelSetId>,
}

impl Interner {
    /// A profile with no samples, these sample types (`(type, unit)`) and the period
    /// measured in the last of them, and its interner.
    pub fn start(sample_types: &[(&str, &str)], period: i64) -> (Profile, Self) {
        let mut profile = Profile {
            strings: vec![String::new()],
            label_sets: vec![Vec::new()],
            samples: Samples::with_columns(sample_types.len()),
            period,
            ..Profile::default()
        };
        let mut interner = Self {
            strings: HashMap::from([(String::new(), 0)]),
            label_sets: HashMap::from([(Vec::new(), 0)]),
        };
        for (kind, unit) in sample_types {
            let t = ValueType {
                kind: interner.string(&mut profile, kind),
                unit: interner.string(&mut profile, unit),
            };
            profile.sample_types.push(t);
            profile.period_type = t;
        }
        (profile, interner)
    }

    /// The id of `s` in `profile`'s strings, added on first use.
    pub fn string(&mut self, profile: &mut Profile, s: &str) -> StrId {
        if let Some(&id) = self.strings.get(s) {
            return id;
        }
        let id = profile.strings.len() as StrId;
        profile.strings.push(s.to_string());
        self.strings.insert(s.to_string(), id);
        id
    }

    /// The label set of these string labels, made on first use.
    pub fn string_labels(&mut self, profile: &mut Profile, labels: &[(&str, &str)]) -> Vec<Label> {
        labels
            .iter()
            .map(|(k, v)| Label {
                key: self.string(profile, k),
                str: self.string(profile, v),
                num: 0,
                num_unit: 0,
            })
            .collect()
    }

    /// The id of label set `set` in `profile`, added on first use.
    pub fn label_set(&mut self, profile: &mut Profile, set: Vec<Label>) -> LabelSetId {
        if let Some(&id) = self.label_sets.get(&set) {
            return id;
        }
        let id = profile.label_sets.len() as LabelSetId;
        profile.label_sets.push(set.clone());
        self.label_sets.insert(set, id);
        id
    }
}

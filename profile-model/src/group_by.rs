//! Parca's group by labels: the values of chosen sample labels made the first levels
//! of every stack (`comm=api-server`, then `pid=42` under it), so that a flame graph,
//! a diff or folded stacks are split by them.

use std::collections::{BTreeSet, HashMap};

use crate::profile::{Function, Line, Location, LocationId, Profile, StrId};

/// The label keys `profile`'s samples carry, sorted and each once.
pub fn label_keys(profile: &Profile) -> Vec<String> {
    let keys: BTreeSet<&str> = profile
        .label_sets
        .iter()
        .flatten()
        .map(|label| profile.str(label.key))
        .collect();
    keys.into_iter().map(str::to_string).collect()
}

/// `profile` with, above every sample's root, one frame per key of `keys` that the
/// sample's labels have, named `key=value`, the first key outermost. Samples without a
/// key get no level for it. Existing ids are kept: the new strings, functions and
/// locations come after the old ones.
pub fn group_by_labels(profile: &Profile, keys: &[String]) -> Profile {
    let mut grouped = profile.clone();
    if keys.is_empty() {
        return grouped;
    }
    // The root frames of each label set, leaf first (the last key's level first).
    let mut levels_of_set: Vec<Vec<LocationId>> = Vec::with_capacity(profile.label_sets.len());
    let mut location_of: HashMap<String, LocationId> = HashMap::new();
    for set in &profile.label_sets {
        let mut levels = Vec::with_capacity(keys.len());
        for key in keys.iter().rev() {
            let Some(label) = set.iter().find(|l| profile.str(l.key) == key) else {
                continue;
            };
            let name = format!("{key}={}", profile.label_value(label));
            let location = *location_of
                .entry(name)
                .or_insert_with_key(|name| add_frame(&mut grouped, name));
            levels.push(location);
        }
        levels_of_set.push(levels);
    }
    let label_sets = &profile.samples.label_set;
    grouped.samples.restack(|i, stack, out| {
        out.extend_from_slice(stack);
        let set = label_sets.get(i).copied().unwrap_or(0) as usize;
        out.extend(levels_of_set.get(set).into_iter().flatten());
        true
    });
    grouped
}

/// Adds a location whose one line is a function named `name`; returns its id.
fn add_frame(profile: &mut Profile, name: &str) -> LocationId {
    profile.strings.push(name.to_string());
    let name = (profile.strings.len() - 1) as StrId;
    profile.functions.push(Function {
        name,
        system_name: name,
        ..Function::default()
    });
    let function = (profile.functions.len() - 1) as u32;
    profile.locations.push(Location {
        lines: vec![Line {
            function,
            ..Line::default()
        }],
        ..Location::default()
    });
    (profile.locations.len() - 1) as LocationId
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fold::folded;
    use crate::profile::Label;
    use crate::{View, ViewOptions};

    /// Two functions `main` → `work`; three samples of 1, 2, 4 with labels
    /// {comm=api, pid=1}, {comm=api, pid=2}, {pid=1}.
    fn labelled() -> Profile {
        let strings = ["", "main", "work", "comm", "pid", "api", "cpu", "ns"];
        let label = |key, str| Label {
            key,
            str,
            ..Label::default()
        };
        let pid = |num| Label {
            key: 4,
            num,
            ..Label::default()
        };
        let location = |function| Location {
            lines: vec![Line {
                function,
                ..Line::default()
            }],
            ..Location::default()
        };
        Profile {
            strings: strings.iter().map(|s| s.to_string()).collect(),
            sample_types: vec![crate::profile::ValueType { kind: 6, unit: 7 }],
            functions: vec![
                Function {
                    name: 1,
                    ..Function::default()
                },
                Function {
                    name: 2,
                    ..Function::default()
                },
            ],
            locations: vec![location(0), location(1)],
            label_sets: vec![
                vec![],
                vec![label(3, 5), pid(1)],
                vec![label(3, 5), pid(2)],
                vec![pid(1)],
            ],
            samples: crate::profile::Samples {
                stack_offsets: vec![0, 2, 4, 6],
                stack_locations: vec![1, 0, 1, 0, 1, 0],
                values: vec![vec![1, 2, 4]],
                label_set: vec![1, 2, 3],
            },
            ..Profile::default()
        }
    }

    fn folded_of(profile: &Profile) -> String {
        let view = View::new(profile, &ViewOptions::default());
        folded(&view.call_tree(profile), &view.frames, 0)
    }

    #[test]
    fn label_keys_are_sorted_and_distinct() {
        assert_eq!(label_keys(&labelled()), ["comm", "pid"]);
    }

    #[test]
    fn one_key_is_the_root_and_samples_without_it_keep_their_stack() {
        let grouped = group_by_labels(&labelled(), &["comm".to_string()]);
        assert_eq!(folded_of(&grouped), "comm=api;main;work 3\nmain;work 4\n");
    }

    #[test]
    fn several_keys_nest_in_their_order() {
        let p = labelled();
        let keys = ["pid".to_string(), "comm".to_string()];
        assert_eq!(
            folded_of(&group_by_labels(&p, &keys)),
            "pid=1;comm=api;main;work 1\npid=1;main;work 4\npid=2;comm=api;main;work 2\n"
        );
        assert_eq!(folded_of(&group_by_labels(&p, &[])), "main;work 7\n");
    }

    #[test]
    fn old_ids_are_kept() {
        let p = labelled();
        let grouped = group_by_labels(&p, &["comm".to_string()]);
        assert_eq!(grouped.strings[..p.strings.len()], p.strings[..]);
        assert_eq!(grouped.locations[..p.locations.len()], p.locations[..]);
        assert_eq!(grouped.label_sets, p.label_sets);
    }
}

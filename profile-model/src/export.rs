//! A filtered view back to pprof: one function and location per frame, one sample per
//! distinct stack with the values of every sample type.

use std::collections::HashMap;

use crate::calltree::{CallTree, NodeId};
use crate::frames::{FrameId, FrameTable};
use crate::profile::{Function, Line, Location, Mapping, Profile, Samples, StrId, ValueType};

/// Builds a profile holding exactly what `tree` shows; sample types, period and times
/// are taken from `source`.
pub fn to_profile(tree: &CallTree, frames: &FrameTable, source: &Profile) -> Profile {
    let mut strings: Vec<String> = vec![String::new()];
    let mut string_ids: HashMap<String, StrId> = HashMap::from([(String::new(), 0)]);
    let mut intern = |s: &str| -> StrId {
        if let Some(id) = string_ids.get(s) {
            return *id;
        }
        let id = strings.len() as StrId;
        strings.push(s.to_string());
        string_ids.insert(s.to_string(), id);
        id
    };
    let value_type = |t: &ValueType, intern: &mut dyn FnMut(&str) -> StrId| ValueType {
        kind: intern(source.str(t.kind)),
        unit: intern(source.str(t.unit)),
    };
    let sample_types: Vec<ValueType> = source
        .sample_types
        .iter()
        .map(|t| value_type(t, &mut intern))
        .collect();
    let period_type = value_type(&source.period_type, &mut intern);
    let default_sample_type = intern(source.str(source.default_sample_type));

    let mut mappings: Vec<Mapping> = Vec::new();
    let mut mapping_ids: HashMap<String, u32> = HashMap::new();
    let mut functions = Vec::with_capacity(frames.len());
    let mut function_ids: HashMap<Function, u32> = HashMap::new();
    let mut locations = Vec::with_capacity(frames.len());
    for frame in &frames.frames {
        let mapping = (!frame.binary.is_empty()).then(|| {
            *mapping_ids.entry(frame.binary.clone()).or_insert_with(|| {
                mappings.push(Mapping {
                    filename: intern(&frame.binary),
                    ..Mapping::default()
                });
                mappings.len() as u32 - 1
            })
        });
        let function = Function {
            name: intern(&frame.function),
            system_name: intern(&frame.function),
            filename: intern(&frame.file),
            start_line: 0,
        };
        let function = *function_ids.entry(function).or_insert_with(|| {
            functions.push(function);
            functions.len() as u32 - 1
        });
        locations.push(Location {
            mapping,
            address: frame.address,
            lines: vec![Line {
                function,
                line: frame.line,
                column: 0,
            }],
            is_folded: false,
        });
    }

    let mut samples = Samples::with_columns(tree.sample_types());
    for node in 1..tree.len() as NodeId {
        let values = tree.self_values_of(node);
        if values.iter().all(|v| *v == 0) {
            continue;
        }
        let mut cursor = node;
        while cursor != CallTree::ROOT {
            let frame: FrameId = tree.frame(cursor);
            samples.stack_locations.push(frame);
            cursor = tree.parent(cursor);
        }
        samples
            .stack_offsets
            .push(samples.stack_locations.len() as u32);
        for (column, v) in samples.values.iter_mut().zip(values) {
            column.push(*v);
        }
        samples.label_set.push(0);
    }

    Profile {
        strings,
        sample_types,
        default_sample_type,
        period_type,
        period: source.period,
        time_nanos: source.time_nanos,
        duration_nanos: source.duration_nanos,
        mappings,
        functions,
        locations,
        label_sets: vec![Vec::new()],
        samples,
        ..Profile::default()
    }
}

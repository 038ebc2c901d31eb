//! A merge of samples kept when indexed equals merging the profiles themselves.

use profile_model::codec::{DecodeOptions, encode, message_bytes};
use profile_model::merge::{KeepLabels, LabelValue, Merger, Selection};
use profile_model::stack_index::{
    Cancelled, KeepOf, MergeInput, ProfileStacks, StackIndex, StackIndexBuilder,
    decode_keeping_stacks,
};
use profile_model::{Profile, proto};

use crate::{fixture, fixture_bytes, profile};

/// A location as its content: binary, address, folded, and each line's function and
/// place.
type LocationKey = (
    String,
    u64,
    bool,
    Vec<(String, String, String, i64, i64, i64)>,
);
/// A label as its content: key, string, number, unit.
type LabelKey = (String, String, i64, String);
/// A profile's header as strings, and its samples as content, sorted.
type Canonical = (
    Vec<String>,
    String,
    i64,
    i64,
    i64,
    String,
    Vec<(Vec<LocationKey>, Vec<LabelKey>, Vec<i64>)>,
);

/// What a profile says, whatever the order of its tables and samples.
fn canonical(p: &Profile) -> Canonical {
    let location = |l: u32| -> LocationKey {
        let loc = &p.locations[l as usize];
        let binary = loc.mapping.map_or(String::new(), |m| {
            let m = &p.mappings[m as usize];
            format!(
                "{}@{:x}-{:x}+{:x}",
                p.str(m.filename),
                m.memory_start,
                m.memory_limit,
                m.file_offset
            )
        });
        let lines = loc
            .lines
            .iter()
            .map(|line| {
                let f = &p.functions[line.function as usize];
                (
                    p.str(f.name).to_string(),
                    p.str(f.system_name).to_string(),
                    p.str(f.filename).to_string(),
                    f.start_line,
                    line.line,
                    line.column,
                )
            })
            .collect();
        (binary, loc.address, loc.is_folded, lines)
    };
    let mut samples: Vec<_> = (0..p.samples.len())
        .map(|i| {
            let stack = p.samples.stack(i).iter().map(|&l| location(l)).collect();
            let mut labels: Vec<LabelKey> = p.label_sets[p.samples.label_set[i] as usize]
                .iter()
                .map(|l| {
                    (
                        p.str(l.key).to_string(),
                        p.str(l.str).to_string(),
                        l.num,
                        p.str(l.num_unit).to_string(),
                    )
                })
                .collect();
            labels.sort();
            let values = p.samples.values.iter().map(|c| c[i]).collect();
            (stack, labels, values)
        })
        .collect();
    samples.sort();
    let types = p
        .sample_types
        .iter()
        .map(|t| format!("{}/{}", p.str(t.kind), p.str(t.unit)))
        .collect();
    (
        types,
        format!(
            "{}/{}",
            p.str(p.period_type.kind),
            p.str(p.period_type.unit)
        ),
        p.period,
        p.time_nanos,
        p.duration_nanos,
        p.str(p.default_sample_type).to_string(),
        samples,
    )
}

/// Each of `inputs` (pprof bytes) kept in one index.
fn kept(inputs: &[Vec<u8>], budget: usize) -> (StackIndex, Vec<Option<ProfileStacks>>) {
    let builder = StackIndexBuilder::new(budget);
    let stacks = inputs
        .iter()
        .map(|bytes| {
            decode_keeping_stacks(bytes, DecodeOptions::default(), &builder)
                .expect("decodes")
                .1
        })
        .collect();
    (builder.finish(), stacks)
}

/// The merge of `profiles` of `index`, keeping what `keep` keeps.
fn merge_kept(
    index: &StackIndex,
    profiles: &[&ProfileStacks],
    keep: &mut KeepOf<'_>,
) -> Option<Profile> {
    index
        .merge(MergeInput {
            profiles,
            keep,
            cancelled: &|| false,
            step: &|| {},
        })
        .expect("not cancelled")
}

fn keep_all(_: usize, _: &[(&str, LabelValue<'_>)]) -> bool {
    true
}

/// `Merger::add_pprof` of `inputs`, with `keep` as its selection.
fn merged_by_merger(inputs: &[Vec<u8>], keep: &mut KeepLabels<'_>) -> Profile {
    let mut merger = Merger::new();
    for (i, bytes) in inputs.iter().enumerate() {
        let mut body = Vec::new();
        let body = message_bytes(bytes, DecodeOptions::default(), &mut body).expect("inflates");
        let selection = Selection {
            sample_type: None,
            keep: Some(&mut *keep),
        };
        merger
            .add_pprof(&format!("input {i}"), body, selection)
            .expect("merges");
    }
    merger.finish()
}

#[test]
fn a_merge_of_kept_go_cpu_profiles_equals_merging_them() {
    let inputs: Vec<Vec<u8>> = ["cpu.pb.gz", "cpu-1.pb.gz", "cpu-2.pb.gz", "cpu-3.pb.gz"]
        .iter()
        .map(|n| fixture_bytes(n))
        .collect();
    let (index, stacks) = kept(&inputs, usize::MAX);
    let profiles: Vec<&ProfileStacks> = stacks.iter().map(|s| s.as_ref().expect("kept")).collect();
    let summed = merge_kept(&index, &profiles, &mut keep_all).expect("one sample type");
    let merged = merged_by_merger(&inputs, &mut |_| true);
    assert!(summed.samples.len() > 100, "{}", summed.samples.len());
    assert_eq!(canonical(&summed), canonical(&merged));
    // Every location, function and string the merge holds is one its samples reach.
    assert_eq!(summed.locations.len(), merged.locations.len());
}

#[test]
fn a_heap_profile_whose_types_are_not_in_proportion_merges_alike() {
    let inputs = vec![fixture_bytes("heap.pb.gz"), fixture_bytes("heap.pb.gz")];
    let (index, stacks) = kept(&inputs, usize::MAX);
    let profiles: Vec<&ProfileStacks> = stacks.iter().map(|s| s.as_ref().expect("kept")).collect();
    let summed = merge_kept(&index, &profiles, &mut keep_all).expect("one sample type");
    let heap = fixture("heap.pb.gz");
    assert_eq!(summed.samples.values.len(), 4);
    assert_eq!(
        canonical(&summed),
        canonical(&merged_by_merger(&inputs, &mut |_| true))
    );
    let total: i64 = heap.samples.values[1].iter().sum();
    assert_eq!(summed.samples.values[1].iter().sum::<i64>(), 2 * total);
}

/// A profile of the stacks `b` (called by `a`) and `a` alone, with numeric and
/// string labels, and two sample types: (leaf first location ids, values, comm, pid)
/// per sample.
fn labelled(values: &[(&[u64], i64, i64, &str, i64)]) -> Vec<u8> {
    let mut p = profile(&[("a;b", 1, None)]);
    let key = p.strings.len() as u32;
    p.strings
        .extend(["pid".to_string(), "comm".to_string(), "bytes".to_string()]);
    let mut proto = profile_model::codec::to_proto(&p);
    proto.sample_type.push(proto::ValueType {
        r#type: i64::from(key) + 2,
        unit: i64::from(key) + 2,
    });
    proto.sample.clear();
    for (stack, a, b, comm, pid) in values {
        let comm_id = proto.string_table.len() as i64;
        proto.string_table.push((*comm).to_string());
        proto.sample.push(proto::Sample {
            location_id: stack.to_vec(),
            value: vec![*a, *b],
            label: vec![
                proto::Label {
                    key: i64::from(key),
                    num: *pid,
                    ..proto::Label::default()
                },
                proto::Label {
                    key: i64::from(key) + 1,
                    str: comm_id,
                    ..proto::Label::default()
                },
            ],
        });
    }
    let mut bytes = Vec::new();
    prost::Message::encode(&proto, &mut bytes).expect("encodes");
    bytes
}

#[test]
fn labels_numbers_and_negative_values_are_kept_and_a_selection_by_labels_applies() {
    let inputs = vec![
        labelled(&[
            (&[1, 2], 3, 30, "api", 7),
            (&[2], -2, -20, "db", 8),
            (&[2], 1, 11, "api", 7),
        ]),
        labelled(&[(&[1, 2], 5, 50, "api", 7), (&[2], 4, 40, "api", 9)]),
    ];
    let (index, stacks) = kept(&inputs, usize::MAX);
    let profiles: Vec<&ProfileStacks> = stacks.iter().map(|s| s.as_ref().expect("kept")).collect();
    let summed = merge_kept(&index, &profiles, &mut keep_all).expect("one sample type");
    assert_eq!(
        canonical(&summed),
        canonical(&merged_by_merger(&inputs, &mut |_| true))
    );
    let api =
        |labels: &[(&str, LabelValue<'_>)]| labels.contains(&("comm", LabelValue::Str("api")));
    let only_api = merge_kept(&index, &profiles, &mut |_, labels| api(labels)).expect("one type");
    let merged_api = merged_by_merger(&inputs, &mut |labels| api(labels));
    assert_eq!(canonical(&only_api), canonical(&merged_api));
    assert_eq!(
        only_api.samples.values[0].iter().sum::<i64>(),
        3 + 1 + 5 + 4
    );
    // The selection is asked of each profile apart: here the second one alone.
    let second = merge_kept(&index, &profiles, &mut |i, _| i == 1).expect("one type");
    assert_eq!(second.samples.values[0].iter().sum::<i64>(), 9);
}

#[test]
fn a_merge_of_some_profiles_holds_only_the_tables_their_samples_reach() {
    let inputs = vec![
        encode(&profile(&[("main;work;hash", 3, None)])),
        encode(&profile(&[("main;idle", 2, Some("x"))])),
    ];
    let (index, stacks) = kept(&inputs, usize::MAX);
    let second = stacks[1].as_ref().expect("kept");
    let merged = merge_kept(&index, &[second], &mut keep_all).expect("one type");
    assert_eq!(
        canonical(&merged),
        canonical(&merged_by_merger(&inputs[1..], &mut |_| true))
    );
    assert_eq!(merged.locations.len(), 2);
    assert_eq!(merged.functions.len(), 2);
    assert!(
        !merged.strings.iter().any(|s| s == "hash" || s == "work"),
        "{:?}",
        merged.strings
    );
}

#[test]
fn profiles_of_different_sample_types_are_left_to_a_merge_that_names_them() {
    let inputs = vec![fixture_bytes("cpu.pb.gz"), fixture_bytes("heap.pb.gz")];
    let (index, stacks) = kept(&inputs, usize::MAX);
    let profiles: Vec<&ProfileStacks> = stacks.iter().map(|s| s.as_ref().expect("kept")).collect();
    assert!(merge_kept(&index, &profiles, &mut keep_all).is_none());
}

#[test]
fn once_the_budget_is_spent_no_more_profiles_are_kept() {
    let inputs = vec![fixture_bytes("cpu-1.pb.gz"), fixture_bytes("cpu-2.pb.gz")];
    let (_, stacks) = kept(&inputs, 1);
    assert!(stacks[0].is_some());
    assert!(stacks[1].is_none());
}

#[test]
fn a_cancelled_merge_says_so() {
    let inputs = vec![fixture_bytes("cpu-1.pb.gz")];
    let (index, stacks) = kept(&inputs, usize::MAX);
    let profiles: Vec<&ProfileStacks> = stacks.iter().map(|s| s.as_ref().expect("kept")).collect();
    let merged = index.merge(MergeInput {
        profiles: &profiles,
        keep: &mut keep_all,
        cancelled: &|| true,
        step: &|| {},
    });
    assert_eq!(merged.err(), Some(Cancelled));
}

#[test]
fn values_in_proportion_merge_alike_whether_their_factors_agree_or_not() {
    // Each profile's second values are its first times one factor: 10 in both (the
    // merge sums the first and multiplies), or 10 and 20 (it sums both).
    for second_factor in [10, 20] {
        let inputs = vec![
            labelled(&[(&[1, 2], 3, 30, "api", 7), (&[2], -1, -10, "api", 7)]),
            labelled(&[
                (&[1, 2], 5, 5 * second_factor, "api", 7),
                (&[2], 4, 4 * second_factor, "db", 8),
            ]),
        ];
        let (index, stacks) = kept(&inputs, usize::MAX);
        let profiles: Vec<&ProfileStacks> =
            stacks.iter().map(|s| s.as_ref().expect("kept")).collect();
        let summed = merge_kept(&index, &profiles, &mut keep_all).expect("one sample type");
        assert_eq!(
            canonical(&summed),
            canonical(&merged_by_merger(&inputs, &mut |_| true)),
            "factors 10 and {second_factor}"
        );
        assert_eq!(
            summed.samples.values[1].iter().sum::<i64>(),
            30 - 10 + 9 * second_factor
        );
    }
}

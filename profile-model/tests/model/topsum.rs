//! The top table summed straight from pprof bytes equals the one summed from decoded
//! profiles, and the bytes it refuses are exactly those decoding refuses.

use profile_model::codec::{DecodeOptions, decode, encode, from_proto, message_bytes};
use profile_model::filter::{Filters, TagFilter, compile_regex};
use profile_model::frames::Granularity;
use profile_model::merge::Merger;
use profile_model::topsum::{NamedRow, TopSum};
use profile_model::{Profile, View, ViewOptions, proto};

use super::{fixture, fixture_bytes};

/// The uncompressed message of a fixture.
fn body(name: &str) -> Vec<u8> {
    let mut buf = Vec::new();
    message_bytes(&fixture_bytes(name), DecodeOptions::default(), &mut buf).expect("fixture");
    buf
}

/// The summed top table of `profiles` (sign -1 for a base), from decoded profiles.
fn decoded_sum(profiles: &[(&Profile, i64)], sample_type: usize) -> (Vec<NamedRow>, i64) {
    decoded_view_sum(profiles, sample_type, &ViewOptions::default())
}

/// The same seen through `options`.
fn decoded_view_sum(
    profiles: &[(&Profile, i64)],
    sample_type: usize,
    options: &ViewOptions,
) -> (Vec<NamedRow>, i64) {
    let mut sum = TopSum::new();
    for (p, sign) in profiles {
        let view = View::new(p, options);
        sum.add(&view.top(p, sample_type), &view.frames, *sign);
    }
    sum.finish()
}

/// The same from the profiles' encoded bytes.
fn wire_sum(bodies: &[(&[u8], i64)], sample_type: usize) -> (Vec<NamedRow>, i64) {
    wire_view_sum(bodies, sample_type, &ViewOptions::default())
}

/// The same seen through `options`.
fn wire_view_sum(
    bodies: &[(&[u8], i64)],
    sample_type: usize,
    options: &ViewOptions,
) -> (Vec<NamedRow>, i64) {
    let mut sum = TopSum::for_view(options);
    for (b, sign) in bodies {
        sum.add_pprof(b, sample_type, *sign).expect("valid profile");
    }
    sum.finish()
}

/// Each granularity without filters, and with each kind of filter built from
/// `regexes` (focus, ignore and hide, each alone) and `tags`.
fn views(regexes: &[&str], tags: &[&str]) -> Vec<(String, ViewOptions)> {
    let regex = |r: &str| compile_regex("test", r).expect("valid regex");
    let mut filters = vec![("no filter".to_string(), Filters::default())];
    for r in regexes {
        let f = Filters::default;
        filters.push((
            format!("focus {r}"),
            Filters {
                focus: regex(r),
                ..f()
            },
        ));
        filters.push((
            format!("ignore {r}"),
            Filters {
                ignore: regex(r),
                ..f()
            },
        ));
        filters.push((
            format!("hide {r}"),
            Filters {
                hide: regex(r),
                ..f()
            },
        ));
    }
    for t in tags {
        let tags = vec![TagFilter::parse(t).expect("valid tag filter")];
        filters.push((
            format!("tag {t}"),
            Filters {
                tags,
                ..Filters::default()
            },
        ));
    }
    Granularity::ALL
        .into_iter()
        .flat_map(|granularity| {
            filters.iter().map(move |(what, filters)| {
                let options = ViewOptions {
                    granularity,
                    filters: filters.clone(),
                };
                (format!("{granularity:?}, {what}"), options)
            })
        })
        .collect()
}

/// Asserts that `bodies` sum alike from their bytes and decoded as `profiles`, in
/// every view of `views`, and that each filter changes the unfiltered table (so that a
/// filter left out would be seen).
fn assert_views_sum_alike(
    profiles: &[(&Profile, i64)],
    bodies: &[(&[u8], i64)],
    sample_type: usize,
    views: &[(String, ViewOptions)],
) {
    let mut unfiltered = None;
    for (what, options) in views {
        let expected = decoded_view_sum(profiles, sample_type, options);
        if options.filters.is_empty() {
            assert!(!expected.0.is_empty(), "{what}");
            unfiltered = Some(expected.clone());
        } else {
            assert_ne!(
                unfiltered.as_ref(),
                Some(&expected),
                "{what} filters nothing"
            );
        }
        assert_eq!(
            wire_view_sum(bodies, sample_type, options),
            expected,
            "{what}"
        );
    }
}

#[test]
fn every_go_fixture_and_sample_type_sums_alike() {
    for name in ["cpu.pb.gz", "cpu-1.pb.gz", "heap.pb.gz"] {
        let p = fixture(name);
        let b = body(name);
        for t in 0..p.sample_types.len() {
            let expected = decoded_sum(&[(&p, 1)], t);
            assert!(!expected.0.is_empty(), "{name} type {t}");
            assert_eq!(wire_sum(&[(&b, 1)], t), expected, "{name} type {t}");
        }
    }
}

#[test]
fn every_granularity_and_filter_sums_alike() {
    let cpu_views = views(&["^runtime\\.|gc", "sha256|flate"], &["endpoint=/api/hash"]);
    for name in ["cpu.pb.gz", "cpu-1.pb.gz"] {
        let p = fixture(name);
        assert_views_sum_alike(&[(&p, 1)], &[(&body(name), 1)], 1, &cpu_views);
        // Go writes each sample's values before its locations, so its labels are read
        // one by one; encoded as prost lays samples out, repeated labels are found by
        // their bytes (label runs) instead, which the tag filter must see alike.
        assert_views_sum_alike(&[(&p, 1)], &[(&encode(&p), 1)], 1, &cpu_views);
    }
    // A numeric tag filter: the heap profile's `bytes` labels.
    let heap = fixture("heap.pb.gz");
    let label = heap.label_sets.iter().flatten().find(|l| l.str == 0);
    let label = label.expect("the heap profile has numeric labels");
    let tag = format!("{}={}", heap.str(label.key), label.num);
    let views = views(&["json"], &[&tag]);
    assert_views_sum_alike(&[(&heap, 1)], &[(&body("heap.pb.gz"), 1)], 1, &views);
}

#[test]
fn string_tag_filters_sum_alike() {
    let p = super::profile(&[
        ("main;serve;parse", 5, Some("/api")),
        ("main;serve;render", 7, Some("/home")),
        ("main;serve;parse", 11, Some("/api/v2")),
        ("main;idle", 3, None),
    ]);
    let bytes = encode(&p);
    let views = views(&["parse"], &["endpoint=^/api", "endpoint=home", "other=x"]);
    assert_views_sum_alike(&[(&p, 1)], &[(&bytes, 1)], 0, &views);
}

#[test]
fn sums_and_differences_of_several_files_sum_alike() {
    let names = ["cpu-1.pb.gz", "cpu-2.pb.gz", "cpu-3.pb.gz"];
    let profiles: Vec<Profile> = names.iter().map(|n| fixture(n)).collect();
    let bodies: Vec<Vec<u8>> = names.iter().map(|n| body(n)).collect();
    let signs = [1, 1, -1];
    let decoded: Vec<(&Profile, i64)> = profiles.iter().zip(signs).collect();
    let wire: Vec<(&[u8], i64)> = bodies.iter().map(Vec::as_slice).zip(signs).collect();
    let expected = decoded_sum(&decoded, 1);
    assert!(expected.0.iter().any(|r| r.flat < 0), "the base subtracts");
    assert_eq!(wire_sum(&wire, 1), expected);
    assert_views_sum_alike(&decoded, &wire, 1, &views(&["sha256|flate"], &[]));

    // Split over two sums (two threads) and absorbed: the same.
    let mut first = TopSum::new();
    let mut second = TopSum::new();
    first.add_pprof(&bodies[0], 1, 1).expect("valid");
    second.add_pprof(&bodies[1], 1, 1).expect("valid");
    second.add_pprof(&bodies[2], 1, -1).expect("valid");
    first.absorb(second);
    assert_eq!(first.finish(), expected);
}

#[test]
fn a_merged_difference_counts_its_base_total() {
    let mut merger = Merger::new();
    merger.add("new", &fixture("cpu-2.pb.gz")).expect("merge");
    merger
        .add_base("old", &fixture("cpu-1.pb.gz"))
        .expect("merge");
    let diff = merger.finish();
    let expected = decoded_sum(&[(&diff, 1)], 1);
    let base_only = decoded_sum(&[(&fixture("cpu-1.pb.gz"), 1)], 1);
    assert_eq!(expected.1, base_only.1, "100% is the base's total");
    assert_eq!(wire_sum(&[(&encode(&diff), 1)], 1), expected);
}

/// Samples of one value each, of the given location ids, without labels.
fn samples<const N: usize>(stacks: [(Vec<u64>, i64); N]) -> Vec<proto::Sample> {
    (stacks.into_iter())
        .map(|(location_id, v)| proto::Sample {
            location_id,
            value: vec![v],
            label: Vec::new(),
        })
        .collect()
}

/// `p`'s bytes, and the profile decoded from them.
fn encoded(p: &proto::Profile) -> (Vec<u8>, Profile) {
    let bytes = prost::Message::encode_to_vec(p);
    let decoded = decode(&bytes).expect("valid");
    (bytes, decoded)
}

#[test]
fn unsymbolized_inlined_and_unnamed_frames_sum_alike() {
    let strings = [
        "",
        "samples",
        "count",
        "/usr/lib/libc.so.6",
        "main",
        "inlined",
    ];
    let line = |function_id| proto::Line {
        function_id,
        ..Default::default()
    };
    let p = proto::Profile {
        sample_type: vec![proto::ValueType { r#type: 1, unit: 2 }],
        mapping: vec![proto::Mapping {
            id: 1,
            memory_start: 0x1000,
            memory_limit: 0x9000,
            file_offset: 0x200,
            filename: 3,
            ..Default::default()
        }],
        function: vec![
            proto::Function {
                id: 1,
                name: 4,
                ..Default::default()
            },
            proto::Function {
                id: 2,
                name: 5,
                ..Default::default()
            },
            // A function without a name: named by its binary.
            proto::Function {
                id: 3,
                ..Default::default()
            },
        ],
        location: vec![
            // No lines: `[libc.so.6]`.
            proto::Location {
                id: 1,
                mapping_id: 1,
                address: 0x1234,
                ..Default::default()
            },
            // `inlined` inlined into `main`.
            proto::Location {
                id: 2,
                mapping_id: 1,
                address: 0x2000,
                line: vec![line(2), line(1)],
                ..Default::default()
            },
            proto::Location {
                id: 3,
                mapping_id: 1,
                address: 0x3000,
                line: vec![line(3)],
                ..Default::default()
            },
            // No mapping and no lines: `<unknown>`.
            proto::Location {
                id: 4,
                address: 0x4000,
                ..Default::default()
            },
            proto::Location {
                id: 5,
                line: vec![line(1)],
                ..Default::default()
            },
        ],
        sample: samples([
            (vec![1, 2, 5], 5),
            (vec![3, 2], 7),
            (vec![4, 5, 5], 11),
            (vec![2], 0),
            (vec![5, 1], -2),
        ]),
        string_table: strings.iter().map(|s| (*s).to_string()).collect(),
        ..Default::default()
    };
    let (bytes, decoded) = encoded(&p);
    let views = views(&["libc", "^inlined$"], &[]);
    assert_views_sum_alike(&[(&decoded, 1)], &[(&bytes, 1)], 0, &views);
    let expected = decoded_sum(&[(&decoded, 1)], 0);
    let names: Vec<&str> = expected.0.iter().map(|r| r.name.as_str()).collect();
    // As pprof names them: the unsymbolized location and the nameless function by
    // their binary, the location without a mapping `<unknown>`.
    assert_eq!(names.len(), 4, "{names:?}");
    for name in ["[libc.so.6]", "<unknown>", "main", "inlined"] {
        assert!(names.contains(&name), "{name} in {names:?}");
    }
    assert_eq!(wire_sum(&[(&bytes, 1)], 0), expected);
}

#[test]
fn what_decoding_refuses_the_wire_sum_refuses_alike() {
    // In every view: filters and granularities read the same damaged bytes.
    let views = views(&["main"], &["endpoint=a", "bytes=1"]);
    super::for_each_damaged(|bytes, decoded| {
        let error = decoded.err();
        for (what, options) in &views {
            let summed = TopSum::for_view(options).add_pprof(bytes, 0, 1);
            assert_eq!(error, summed.err(), "{what}: bytes {bytes:?}");
        }
    });
}

#[test]
fn a_profile_refused_halfway_adds_nothing_to_the_sum() {
    // The damaged profile's stacks ("a;b;c", "a;d", "a;b") reach c and d by calls, which
    // the good one never does: a refused profile must leave no value and no mark.
    let good = encode(&super::profile(&[("d;b", 5, Some("x")), ("c", 1, None)]));
    let good_alone = wire_sum(&[(&good, 1)], 0);
    assert!(
        good_alone
            .0
            .iter()
            .all(|r| !r.reached.called || r.name == "b")
    );
    let mut refused = 0;
    super::for_each_damaged(|bytes, decoded| {
        if decoded.is_ok() {
            return;
        }
        for sign in [1, -1] {
            let mut sum = TopSum::new();
            sum.add_pprof(&good, 0, 1).expect("valid profile");
            assert!(sum.add_pprof(bytes, 0, sign).is_err(), "bytes {bytes:?}");
            assert_eq!(sum.finish(), good_alone, "sign {sign}, bytes {bytes:?}");
        }
        refused += 1;
    });
    assert!(refused > 100, "{refused}");
}

#[test]
fn a_sum_whose_frames_grow_past_4096_sums_alike() {
    use profile_model::synthetic::{SeriesParams, Universe, UniverseParams, series_profile};
    // The first profiles name fewer than 4,096 frames, the later ones more: the set of
    // called edges grows with them, and every mark must survive.
    let universe = Universe::new(&UniverseParams {
        locations: 40_000,
        functions: 20_000,
        binaries: 4,
        min_depth: 8,
        max_depth: 30,
        seed: 7,
    })
    .expect("universe");
    let series = SeriesParams {
        samples: 3_000,
        start_nanos: 0,
        step_secs: 10,
        seed: 3,
    };
    let profiles: Vec<Profile> = (0..10)
        .map(|i| from_proto(series_profile(&universe, &series, i)).expect("valid profile"))
        .collect();
    let bodies: Vec<Vec<u8>> = profiles.iter().map(encode).collect();
    let decoded: Vec<(&Profile, i64)> = profiles.iter().map(|p| (p, 1)).collect();
    let wire: Vec<(&[u8], i64)> = bodies.iter().map(|b| (b.as_slice(), 1)).collect();
    let first = wire_sum(&wire[..1], 0);
    let expected = decoded_sum(&decoded, 0);
    assert!(
        first.0.len() < 4_096 && expected.0.len() > 4_096,
        "{}",
        first.0.len()
    );
    assert!(
        expected
            .0
            .iter()
            .any(|r| r.reached.inlined && r.reached.called)
    );
    assert!(
        expected
            .0
            .iter()
            .any(|r| r.reached.inlined && !r.reached.called)
    );
    assert_eq!(wire_sum(&wire, 0), expected);
}

/// A profile of two functions, (name, file) string ids of `strings`, each at line 7
/// of a location of its own, with one sample of each location worth `values`.
fn two_functions(strings: &[&str], functions: [(i64, i64); 2], values: [i64; 2]) -> proto::Profile {
    let function = |id: u64| proto::Function {
        id,
        name: functions[id as usize - 1].0,
        filename: functions[id as usize - 1].1,
        ..Default::default()
    };
    let location = |id: u64| proto::Location {
        id,
        line: vec![proto::Line {
            function_id: id,
            line: 7,
            ..Default::default()
        }],
        ..Default::default()
    };
    proto::Profile {
        sample_type: vec![proto::ValueType { r#type: 1, unit: 2 }],
        function: vec![function(1), function(2)],
        location: vec![location(1), location(2)],
        sample: samples([(vec![1], values[0]), (vec![2], values[1])]),
        string_table: strings.iter().map(|s| (*s).to_string()).collect(),
        ..Default::default()
    }
}

#[test]
fn functions_told_apart_by_name_and_file_stay_apart_whatever_they_hold() {
    // `a\0b` in `c` and `a` in `b\0c`: one string if name and file were joined by a NUL.
    let strings = ["", "samples", "count", "a\0b", "c", "a", "b\0c"];
    let p = two_functions(&strings, [(3, 4), (5, 6)], [3, 5]);
    let (bytes, decoded) = encoded(&p);
    for granularity in [Granularity::FunctionLine, Granularity::Address] {
        let options = ViewOptions {
            granularity,
            ..ViewOptions::default()
        };
        let expected = decoded_view_sum(&[(&decoded, 1)], 0, &options);
        assert_eq!(expected.0.len(), 2, "{granularity:?}: {:?}", expected.0);
        // Twice: the second profile finds both functions named already.
        let twice = wire_view_sum(&[(&bytes, 1), (&bytes, 1)], 0, &options);
        let once = wire_view_sum(&[(&bytes, 1)], 0, &options);
        assert_eq!(once, expected, "{granularity:?}");
        assert_eq!(twice.0.len(), 2, "{granularity:?}");
    }
}

#[test]
fn one_name_in_two_files_stays_two_functions_whatever_ids_the_files_get() {
    // The files swap string ids from one profile to the next.
    let profile = |strings: [&str; 6], files: [i64; 2], values: [i64; 2]| {
        encoded(&two_functions(
            &strings,
            [(3, files[0]), (3, files[1])],
            values,
        ))
    };
    let (a, decoded_a) = profile(
        ["", "samples", "count", "work", "x.go", "y.go"],
        [4, 5],
        [3, 5],
    );
    let (b, decoded_b) = profile(
        ["", "samples", "count", "work", "y.go", "x.go"],
        [5, 4],
        [7, 11],
    );
    for granularity in [Granularity::FunctionLine, Granularity::Address] {
        let options = ViewOptions {
            granularity,
            ..ViewOptions::default()
        };
        let expected = decoded_view_sum(&[(&decoded_a, 1), (&decoded_b, 1)], 0, &options);
        let flats: Vec<i64> = expected.0.iter().map(|r| r.flat).collect();
        assert_eq!(flats, [16, 10], "{granularity:?}: {:?}", expected.0);
        let wire = wire_view_sum(&[(&a, 1), (&b, 1)], 0, &options);
        assert_eq!(wire, expected, "{granularity:?}");
    }
    // Filters on the file: what they said of a string id holds for one profile only.
    for (what, options) in views(&[r"x\.go"], &[]) {
        let expected = decoded_view_sum(&[(&decoded_a, 1), (&decoded_b, 1)], 0, &options);
        let wire = wire_view_sum(&[(&a, 1), (&b, 1)], 0, &options);
        assert_eq!(wire, expected, "{what}");
    }
}

#[test]
fn a_name_shown_demangled_only_where_it_is_the_system_name_sums_alike() {
    // pprof demangles a name equal to the system name, and keeps any other as it is:
    // the same name is two functions when one profile sets it as both and one not.
    let mangled = "_ZN3foo3barEi";
    let profile = |system_name: i64, value: i64| {
        encoded(&proto::Profile {
            sample_type: vec![proto::ValueType { r#type: 1, unit: 2 }],
            function: vec![proto::Function {
                id: 1,
                name: 3,
                system_name,
                filename: 4,
                ..Default::default()
            }],
            location: vec![proto::Location {
                id: 1,
                line: vec![proto::Line {
                    function_id: 1,
                    line: 7,
                    ..Default::default()
                }],
                ..Default::default()
            }],
            sample: samples([(vec![1], value)]),
            string_table: ["", "samples", "count", mangled, "foo.cc"]
                .iter()
                .map(|s| (*s).to_string())
                .collect(),
            ..Default::default()
        })
    };
    let (both, decoded_both) = profile(3, 3);
    let (name_only, decoded_name_only) = profile(0, 5);
    for options in views(&["bar"], &[]) {
        let (what, options) = options;
        for order in [[0, 1], [1, 0]] {
            let decoded = [(&decoded_both, 1), (&decoded_name_only, 1)];
            let wire = [(both.as_slice(), 1), (name_only.as_slice(), 1)];
            let decoded = order.map(|i| decoded[i]);
            let wire = order.map(|i| wire[i]);
            let expected = decoded_view_sum(&decoded, 0, &options);
            assert_eq!(
                wire_view_sum(&wire, 0, &options),
                expected,
                "{what}, {order:?}"
            );
        }
    }
    let names: Vec<String> = decoded_sum(&[(&decoded_both, 1), (&decoded_name_only, 1)], 0)
        .0
        .into_iter()
        .map(|r| r.name)
        .collect();
    assert_eq!(names, [mangled, "foo::bar"]);
}

#[test]
fn a_frame_inlined_into_a_few_callers_or_many_is_marked_as_pprof_marks_it() {
    // `h` inlined into each of `callers` callers; `called_by` of them also call it.
    let profile = |callers: u64, called_by: u64| {
        let mut strings: Vec<String> = ["", "samples", "count", "main", "h"]
            .map(String::from)
            .into();
        strings.extend((0..callers).map(|i| format!("c{i}")));
        let function = |id: u64, name: u64| proto::Function {
            id,
            name: name as i64,
            ..Default::default()
        };
        let line = |function_id| proto::Line {
            function_id,
            ..Default::default()
        };
        let location = |id, functions: &[u64]| proto::Location {
            id,
            line: functions.iter().map(|&f| line(f)).collect(),
            ..Default::default()
        };
        let mut functions = vec![function(1, 3), function(2, 4)];
        let mut locations = vec![location(1, &[1]), location(300, &[2])];
        let mut sample = Vec::new();
        for i in 0..callers {
            functions.push(function(10 + i, 5 + i));
            locations.push(location(100 + i, &[2, 10 + i]));
            locations.push(location(200 + i, &[10 + i]));
            sample.push((vec![100 + i, 1], 1));
            if i < called_by {
                sample.push((vec![300, 200 + i, 1], 1));
            }
        }
        encoded(&proto::Profile {
            sample_type: vec![proto::ValueType { r#type: 1, unit: 2 }],
            sample: (sample.into_iter())
                .map(|(location_id, v)| proto::Sample {
                    location_id,
                    value: vec![v],
                    label: Vec::new(),
                })
                .collect(),
            location: locations,
            function: functions,
            string_table: strings,
            ..Default::default()
        })
    };
    // A few callers are listed per frame, more are looked up: both as pprof marks.
    for callers in [3, 12] {
        for (called_by, inlined, called) in
            [(callers, false, true), (1, true, true), (0, true, false)]
        {
            let (bytes, decoded) = profile(callers, called_by);
            let alone = decoded_sum(&[(&decoded, 1)], 0);
            let h = alone.0.iter().find(|r| r.name == "h").expect("h has a row");
            let what = format!("{callers} callers, {called_by} call");
            assert_eq!(
                (h.reached.inlined, h.reached.called),
                (inlined, called),
                "{what}"
            );
            assert_eq!(wire_sum(&[(&bytes, 1)], 0), alone, "{what}");
        }
    }
}

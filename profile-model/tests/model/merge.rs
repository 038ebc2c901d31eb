//! Merging straight from pprof bytes ([`Merger::add_pprof`]) against merging the
//! decoded profiles ([`Merger::add`]), and a merge split across mergers
//! ([`Merger::absorb`]) against one merger.

use profile_model::codec::{DecodeOptions, encode, message_bytes};
use profile_model::filter::{Filters, TagFilter};
use profile_model::merge::{AsColumn, LabelValue, Merger, Selection};
use profile_model::profile::ValueType;
use profile_model::view::{View, ViewOptions};
use profile_model::{Profile, ProfileError};

use crate::{fixture, fixture_bytes, profile, profile_typed};

const GO_CPU: [&str; 4] = ["cpu.pb.gz", "cpu-1.pb.gz", "cpu-2.pb.gz", "cpu-3.pb.gz"];

/// The uncompressed pprof message of `bytes`.
fn body(bytes: &[u8]) -> Vec<u8> {
    let mut buf = Vec::new();
    let body = message_bytes(bytes, DecodeOptions::default(), &mut buf).expect("valid profile");
    body.to_vec()
}

fn merged_decoded(names: &[&str]) -> Profile {
    let mut merger = Merger::new();
    for name in names {
        merger.add(name, &fixture(name)).expect("same types");
    }
    merger.finish()
}

#[test]
fn merging_bytes_equals_merging_decoded_profiles() {
    let mut merger = Merger::new();
    for name in GO_CPU {
        let body = body(&fixture_bytes(name));
        merger
            .add_pprof(name, &body, Selection::default())
            .expect("same types");
    }
    assert_eq!(merger.inputs(), 4);
    let merged = merger.finish();
    assert_eq!(merged, merged_decoded(&GO_CPU));
    assert!(
        merged.samples.len() > 100,
        "{} samples",
        merged.samples.len()
    );
}

#[test]
fn absorbing_runs_equals_merging_in_one() {
    let one = merged_decoded(&GO_CPU);
    for split in 0..=GO_CPU.len() {
        let (first, second) = GO_CPU.split_at(split);
        let mut a = Merger::new();
        let mut b = Merger::new();
        for name in first {
            a.add_pprof(name, &body(&fixture_bytes(name)), Selection::default())
                .expect("same types");
        }
        for name in second {
            b.add(name, &fixture(name)).expect("same types");
        }
        a.absorb(b).expect("same types");
        assert_eq!(a.inputs(), 4);
        assert_eq!(a.finish(), one, "split after {split}");
    }
}

#[test]
fn a_selection_keeps_the_chosen_samples_and_column() {
    let p = profile(&[
        ("main;a", 1, Some("/x")),
        ("main;b", 2, Some("/y")),
        ("main;a", 4, None),
    ]);
    let bytes = encode(&p);
    let mut seen = Vec::new();
    let mut keep = |labels: &[(&str, LabelValue<'_>)]| {
        seen.push(format!("{labels:?}"));
        labels.contains(&("endpoint", LabelValue::Str("/x")))
    };
    let mut merger = Merger::new();
    let selection = Selection {
        sample_type: Some(0),
        keep: Some(&mut keep),
    };
    merger
        .add_pprof("p", &body(&bytes), selection)
        .expect("valid");
    let merged = merger.finish();
    assert_eq!(merged.total(0), 1);
    assert_eq!(merged.samples.len(), 1);
    // Asked once per distinct label set, not per sample.
    assert_eq!(seen.len(), 3, "{seen:?}");

    let heap = fixture("heap.pb.gz");
    let mut merger = Merger::new();
    let selection = Selection {
        sample_type: Some(1),
        keep: None,
    };
    merger
        .add_pprof("heap", &body(&fixture_bytes("heap.pb.gz")), selection)
        .expect("valid");
    let merged = merger.finish();
    assert_eq!(merged.sample_types.len(), 1);
    assert_eq!(merged.total(0), heap.total(1));
    assert_eq!(
        merged.sample_type_names(),
        [heap.sample_type_names()[1].clone()]
    );

    let mut merger = Merger::new();
    let selection = Selection {
        sample_type: Some(4),
        keep: None,
    };
    let err = merger
        .add_pprof("heap", &body(&fixture_bytes("heap.pb.gz")), selection)
        .expect_err("heap profiles have four sample types");
    assert!(err.to_string().contains("no sample type 4"), "{err}");
}

/// The top table of `p` through `options`: (name, flat, cum) of every row counted.
fn top_rows(p: &Profile, options: &ViewOptions) -> (i64, Vec<(String, i64, i64)>) {
    let view = View::new(p, options);
    let top = view.top(p, 0);
    let rows = (top.rows.iter())
        .filter(|r| r.flat != 0 || r.cum != 0)
        .map(|r| (view.frames.get(r.frame).name.clone(), r.flat, r.cum))
        .collect();
    (top.kept, rows)
}

#[test]
fn a_selection_by_labels_interns_only_what_its_samples_reach() {
    let mut merger = Merger::new();
    for name in GO_CPU {
        let mut keep = |labels: &[(&str, LabelValue<'_>)]| {
            labels.contains(&("endpoint", LabelValue::Str("/api/fib")))
        };
        let selection = Selection {
            sample_type: None,
            keep: Some(&mut keep),
        };
        merger
            .add_pprof(name, &body(&fixture_bytes(name)), selection)
            .expect("same types");
    }
    let fib = merger.finish();
    // The same samples as the whole merge seen through pprof's -tagfocus.
    let all = merged_decoded(&GO_CPU);
    let tagged = ViewOptions {
        filters: Filters {
            tags: vec![TagFilter::parse("endpoint=/api/fib").expect("tag")],
            ..Filters::default()
        },
        ..ViewOptions::default()
    };
    let (kept, rows) = top_rows(&fib, &ViewOptions::default());
    assert!(kept > 0 && rows.len() > 3, "{kept}, {rows:?}");
    assert_eq!((kept, rows), top_rows(&all, &tagged));
    // Its tables hold what those samples reach, nothing more.
    let mut reached = vec![false; fib.locations.len()];
    for i in 0..fib.samples.len() {
        for &l in fib.samples.stack(i) {
            reached[l as usize] = true;
        }
    }
    assert!(reached.iter().all(|&r| r), "a location no sample reaches");
    let mut named = vec![false; fib.functions.len()];
    for line in fib.locations.iter().flat_map(|l| &l.lines) {
        named[line.function as usize] = true;
    }
    assert!(named.iter().all(|&n| n), "a function no location names");
    assert!(fib.locations.len() < all.locations.len());
    assert_eq!(fib.sample_type_names(), all.sample_type_names());
}

#[test]
fn a_profile_broken_half_way_adds_nothing() {
    let good = body(&fixture_bytes("cpu-1.pb.gz"));
    let other = body(&fixture_bytes("cpu-2.pb.gz"));
    let mut expected = Merger::new();
    expected
        .add_pprof("good", &good, Selection::default())
        .expect("valid");
    let expected = expected.finish();
    // Cut the second profile inside its samples, and give one of its later samples
    // a location id that names no location (two-byte varints, so the size stays).
    let mut damaged = other.clone();
    let ids = two_byte_location_ids(&other);
    assert!(ids.len() > 10, "{} location ids of two bytes", ids.len());
    let at = ids[ids.len() / 2];
    damaged[at..at + 2].copy_from_slice(&[0xff, 0x7f]);
    assert!(profile_model::codec::decode(&damaged).is_err());
    for broken in [&other[..other.len() / 3], &damaged[..]] {
        let mut merger = Merger::new();
        merger
            .add_pprof("good", &good, Selection::default())
            .expect("valid");
        let err = merger.add_pprof("broken", broken, Selection::default());
        assert!(err.is_err(), "a broken profile is an error");
        assert_eq!(merger.inputs(), 1);
        assert_eq!(merger.finish(), expected);
    }
}

#[test]
fn bytes_of_another_sample_type_are_refused_naming_both() {
    let mut merger = Merger::new();
    merger
        .add_pprof(
            "cpu.pb.gz",
            &body(&fixture_bytes("cpu.pb.gz")),
            Selection::default(),
        )
        .expect("first");
    let err = merger
        .add_pprof(
            "heap.pb.gz",
            &body(&fixture_bytes("heap.pb.gz")),
            Selection::default(),
        )
        .expect_err("other sample types");
    assert!(matches!(err, ProfileError::IncompatibleSampleTypes { .. }));
    let text = err.to_string();
    assert!(
        text.contains("cpu.pb.gz") && text.contains("heap.pb.gz"),
        "{text}"
    );
    let alloc = encode(&profile_typed("alloc_space", &[("main", 1, None)]));
    assert!(
        merger
            .add_pprof("alloc", &body(&alloc), Selection::default())
            .is_err()
    );
}

/// Reads a varint at `*pos`.
fn varint(b: &[u8], pos: &mut usize) -> u64 {
    let mut v = 0;
    for shift in (0..64).step_by(7) {
        let byte = b[*pos];
        *pos += 1;
        v |= u64::from(byte & 0x7f) << shift;
        if byte < 0x80 {
            break;
        }
    }
    v
}

/// Where each packed location id of two bytes starts in the sample at `sample`.
fn packed_location_ids(body: &[u8], sample: std::ops::Range<usize>) -> Vec<usize> {
    let mut found = Vec::new();
    let mut pos = sample.start;
    while pos < sample.end {
        let key = varint(body, &mut pos);
        let len = match key & 7 {
            0 => {
                varint(body, &mut pos);
                continue;
            }
            _ => varint(body, &mut pos) as usize,
        };
        if key == 0x0a {
            let mut at = pos;
            while at < pos + len {
                let start = at;
                varint(body, &mut at);
                if at - start == 2 {
                    found.push(start);
                }
            }
        }
        pos += len;
    }
    found
}

/// Where each location id of two bytes starts in the samples of a pprof message.
fn two_byte_location_ids(body: &[u8]) -> Vec<usize> {
    let mut found = Vec::new();
    let mut pos = 0;
    while pos < body.len() {
        let key = varint(body, &mut pos);
        match key & 7 {
            0 => {
                varint(body, &mut pos);
            }
            2 => {
                let len = varint(body, &mut pos) as usize;
                if key >> 3 == 2 {
                    found.extend(packed_location_ids(body, pos..pos + len));
                }
                pos += len;
            }
            other => panic!("wire type {other} in a pprof message"),
        }
    }
    found
}

#[test]
fn damaged_bytes_merge_exactly_when_they_decode_and_as_they_decode() {
    crate::for_each_damaged(|bytes, decoded| {
        let mut from_bytes = Merger::new();
        let merged = from_bytes.add_pprof("p", bytes, Selection::default());
        assert_eq!(
            decoded.as_ref().err(),
            merged.as_ref().err(),
            "bytes {bytes:?}"
        );
        match decoded {
            Ok(p) => {
                let mut from_profile = Merger::new();
                from_profile.add("p", &p).expect("decoded");
                assert_eq!(
                    from_bytes.finish(),
                    from_profile.finish(),
                    "bytes {bytes:?}"
                );
            }
            Err(_) => assert_eq!(from_bytes.inputs(), 0),
        }
    });
}

#[test]
fn a_profile_with_a_stack_too_deep_to_hold_adds_nothing() {
    let good = body(&fixture_bytes("cpu-1.pb.gz"));
    let mut expected = Merger::new();
    expected
        .add_pprof("good", &good, Selection::default())
        .expect("valid");
    let expected = expected.finish();
    // Shallow samples first, then one whose stack outgrows a record of the merge.
    let mut deep = profile(&[("a;b", 1, None), ("a;c", 2, None)]);
    let leaf = *deep.samples.stack(0).first().expect("a frame");
    let first = deep.samples.stack_locations.len();
    deep.samples
        .stack_locations
        .extend(std::iter::repeat_n(leaf, 1 << 20));
    deep.samples.stack_offsets.push((first + (1 << 20)) as u32);
    for column in &mut deep.samples.values {
        column.push(3);
    }
    deep.samples.label_set.push(0);
    let deep = encode(&deep);
    let mut merger = Merger::new();
    merger
        .add_pprof("good", &good, Selection::default())
        .expect("valid");
    let err = merger
        .add_pprof("deep", &deep, Selection::default())
        .expect_err("too deep");
    assert!(err.to_string().contains("too deep"), "{err}");
    assert_eq!(merger.inputs(), 1);
    assert_eq!(merger.finish(), expected, "nothing of it was added");
}

/// `p` with its sample type `column` as value `slot` of the sample types `a/UNIT` and
/// `b/UNIT`, the other value 0: what [`Merger::add_as_column`] adds, made by hand.
fn as_column(p: &Profile, column: usize, slot: usize) -> Profile {
    let mut copy = p.clone();
    let unit = p.sample_types[column].unit;
    let kind_a = copy.strings.len() as u32;
    copy.strings.push("a".into());
    copy.strings.push("b".into());
    copy.sample_types = vec![
        ValueType { kind: kind_a, unit },
        ValueType {
            kind: kind_a + 1,
            unit,
        },
    ];
    copy.default_sample_type = kind_a + 1;
    let values = p.samples.values[column].clone();
    let zeros = vec![0; values.len()];
    copy.samples.values = if slot == 0 {
        vec![values, zeros]
    } else {
        vec![zeros, values]
    };
    copy
}

#[test]
fn a_sample_type_added_as_a_column_equals_adding_a_copy_that_has_it_there() {
    let (a, b) = (fixture("cpu-1.pb.gz"), fixture("cpu-3.pb.gz"));
    let cpu = a.find_sample_type("cpu").expect("cpu");
    let unit = a.str(a.sample_types[cpu].unit).to_string();
    let types = [("a", unit.as_str()), ("b", unit.as_str())];
    let side = |slot| AsColumn {
        types: &types,
        default_type: "b",
        column: cpu,
        slot,
    };
    let mut merger = Merger::new();
    merger.add_as_column("A", &a, &side(0)).expect("added");
    merger.add_as_column("B", &b, &side(1)).expect("added");
    let mut expected = Merger::new();
    expected.add("A", &as_column(&a, cpu, 0)).expect("added");
    expected.add("B", &as_column(&b, cpu, 1)).expect("added");
    let (got, expected) = (merger.finish(), expected.finish());
    assert_eq!(got, expected);
    assert_eq!((got.total(0), got.total(1)), (a.total(cpu), b.total(cpu)));

    let mut merger = Merger::new();
    let err = merger
        .add_as_column(
            "A",
            &a,
            &AsColumn {
                column: 9,
                ..side(0)
            },
        )
        .expect_err("no sample type 9");
    assert!(err.to_string().contains("no sample type 9"), "{err}");
}

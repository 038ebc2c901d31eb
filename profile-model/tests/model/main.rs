//! Tests of the model on real profiles written by Go's runtime/pprof, and on bad input.

#![allow(
    clippy::expect_used,
    clippy::unwrap_used,
    reason = "a test fails loudly on a broken fixture"
)]

mod bad_input;
mod codec;
mod diff;
mod inline;
mod layout;
mod merge;
mod peek;
mod stack_index;
mod topsum;
mod tree;

use std::path::PathBuf;

use profile_model::codec::{decode, encode, from_proto};
use profile_model::{Profile, ProfileError, proto};

/// Every profile under `tests/fixtures/go/`.
pub const GO_PROFILES: [&str; 5] = [
    "cpu.pb.gz",
    "heap.pb.gz",
    "cpu-1.pb.gz",
    "cpu-2.pb.gz",
    "cpu-3.pb.gz",
];

/// Path of a file under `tests/fixtures/go/`.
pub fn fixture_path(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/fixtures/go")
        .join(name)
}

/// Bytes of a fixture.
pub fn fixture_bytes(name: &str) -> Vec<u8> {
    std::fs::read(fixture_path(name)).unwrap_or_else(|e| panic!("fixture {name}: {e}"))
}

/// A decoded fixture.
pub fn fixture(name: &str) -> Profile {
    decode(&fixture_bytes(name)).unwrap_or_else(|e| panic!("fixture {name}: {e}"))
}

/// Every cut of a small valid profile, and copies of it with one byte damaged (bits
/// flipped), each with what decoding makes of it, handed to `check`: for tests that
/// another reader refuses the same inputs alike. Most of the copies are refused.
pub fn for_each_damaged(mut check: impl FnMut(&[u8], Result<Profile, ProfileError>)) {
    // The third sample repeats the first's labels: read by the readers' fast paths.
    let valid = encode(&profile(&[
        ("a;b;c", 3, Some("x")),
        ("a;d", 2, None),
        ("a;b", 1, Some("x")),
    ]));
    let mut cases: Vec<Vec<u8>> = (1..valid.len()).map(|cut| valid[..cut].to_vec()).collect();
    for at in 0..valid.len() {
        for flip in [0x01, 0x80, 0xff] {
            let mut bad = valid.clone();
            bad[at] ^= flip;
            cases.push(bad);
        }
    }
    let mut refused = 0;
    for bytes in &cases {
        let decoded = decode(bytes);
        refused += usize::from(decoded.is_err());
        check(bytes, decoded);
    }
    assert!(refused > cases.len() / 2, "{refused} of {}", cases.len());
}

/// A profile of `samples/count` from folded stacks (`root;…;leaf`), each with an
/// optional `endpoint` label.
pub fn profile(stacks: &[(&str, i64, Option<&str>)]) -> Profile {
    profile_typed("samples", stacks)
}

/// A profile of one sample type `kind/count` from folded stacks with optional
/// `endpoint` labels.
pub fn profile_typed(kind: &str, stacks: &[(&str, i64, Option<&str>)]) -> Profile {
    let mut strings = vec![
        String::new(),
        kind.to_string(),
        "count".into(),
        "endpoint".into(),
    ];
    let mut p = proto::Profile {
        sample_type: vec![proto::ValueType { r#type: 1, unit: 2 }],
        ..proto::Profile::default()
    };
    let string = |s: &str, strings: &mut Vec<String>| -> i64 {
        if let Some(i) = strings.iter().position(|x| x == s) {
            return i as i64;
        }
        strings.push(s.to_string());
        strings.len() as i64 - 1
    };
    for (stack, value, endpoint) in stacks {
        let mut ids = Vec::new();
        for name in stack.split(';').rev() {
            let name_id = string(name, &mut strings);
            let id = match p.function.iter().position(|f| f.name == name_id) {
                Some(i) => i as u64 + 1,
                None => {
                    let id = p.function.len() as u64 + 1;
                    p.function.push(proto::Function {
                        id,
                        name: name_id,
                        ..Default::default()
                    });
                    p.location.push(proto::Location {
                        id,
                        line: vec![proto::Line {
                            function_id: id,
                            ..Default::default()
                        }],
                        ..Default::default()
                    });
                    id
                }
            };
            ids.push(id);
        }
        let label = endpoint
            .map(|e| proto::Label {
                key: 3,
                str: string(e, &mut strings),
                ..Default::default()
            })
            .into_iter()
            .collect();
        p.sample.push(proto::Sample {
            location_id: ids,
            value: vec![*value],
            label,
        });
    }
    p.string_table = strings;
    from_proto(p).expect("valid test profile")
}

/// Functions (ids 1.., named `names`), one location per entry of `locations` (its
/// functions innermost first; location ids 1..), and samples (location ids, leaf
/// first), value 1 each.
pub fn profile_with_locations(names: &[&str], locations: &[&[u64]], samples: &[&[u64]]) -> Vec<u8> {
    let mut strings = vec![String::new(), "samples".into(), "count".into()];
    strings.extend(names.iter().map(|n| (*n).to_string()));
    let p = proto::Profile {
        sample_type: vec![proto::ValueType { r#type: 1, unit: 2 }],
        function: (1..=names.len() as u64)
            .map(|id| proto::Function {
                id,
                name: id as i64 + 2,
                system_name: id as i64 + 2,
                ..Default::default()
            })
            .collect(),
        location: (locations.iter().enumerate())
            .map(|(i, functions)| proto::Location {
                id: i as u64 + 1,
                line: (functions.iter())
                    .map(|f| proto::Line {
                        function_id: *f,
                        ..Default::default()
                    })
                    .collect(),
                ..Default::default()
            })
            .collect(),
        sample: (samples.iter())
            .map(|s| proto::Sample {
                location_id: s.to_vec(),
                value: vec![1],
                label: Vec::new(),
            })
            .collect(),
        string_table: strings,
        ..Default::default()
    };
    prost::Message::encode_to_vec(&p)
}

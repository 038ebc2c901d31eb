//! Every kind of broken input gets an error naming the problem, never a panic.

use proptest::prelude::*;
use prost::Message as _;

use profile_model::codec::{DecodeOptions, decode, decode_with, gzip, to_proto};
use profile_model::{ProfileError, proto};

use super::{fixture, fixture_bytes};

fn valid_message() -> proto::Profile {
    to_proto(&fixture("cpu.pb.gz"))
}

/// The encoded fixture, made once for all proptest cases.
fn valid_bytes() -> &'static [u8] {
    static BYTES: std::sync::OnceLock<Vec<u8>> = std::sync::OnceLock::new();
    BYTES.get_or_init(|| valid_message().encode_to_vec())
}

fn error_of(message: &proto::Profile) -> String {
    match decode(&message.encode_to_vec()) {
        Ok(_) => panic!("expected an error"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn empty_file() {
    assert_eq!(decode(&[]), Err(ProfileError::Empty));
}

#[test]
fn random_bytes() {
    // Fixed bytes that are not a protobuf message (wire type 7 is invalid).
    let bytes: Vec<u8> = (0u32..4096)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8 | 0x07)
        .collect();
    assert!(matches!(decode(&bytes), Err(ProfileError::Protobuf(_))));
}

#[test]
fn truncated_gzip() {
    let gz = fixture_bytes("cpu.pb.gz");
    let err = decode(&gz[..gz.len() / 2]).expect_err("truncated");
    assert!(matches!(err, ProfileError::Gzip(_)), "{err}");
}

#[test]
fn every_cut_and_every_damaged_byte_of_a_gzip_file_is_an_error() {
    let gz = gzip(valid_bytes());
    for cut in 1..gz.len() {
        assert!(decode(&gz[..cut]).is_err(), "cut at {cut}");
    }
    // The trailer: a damaged CRC-32 or size is caught.
    for at in gz.len() - 8..gz.len() {
        let mut bad = gz.clone();
        bad[at] ^= 0x55;
        let err = decode(&bad).expect_err("damaged trailer");
        assert!(matches!(err, ProfileError::Gzip(_)), "{err}");
    }
}

#[test]
fn gzip_members_and_header_fields_are_read() {
    use std::io::Write as _;
    let raw = valid_bytes();
    let (head, tail) = raw.split_at(raw.len() / 3);
    // Two members, the first with a file name, a comment and extra data.
    let mut named = flate2::GzBuilder::new()
        .filename("profile.pb")
        .comment("made by a test")
        .extra(vec![1, 2, 3])
        .write(Vec::new(), flate2::Compression::best());
    named.write_all(head).expect("in memory");
    let mut two = named.finish().expect("in memory");
    two.extend_from_slice(&gzip(tail));
    assert_eq!(decode(&two), decode(raw));
    // Exactly at the cap is accepted, one byte under is refused.
    let at = |limit: usize| {
        decode_with(
            &two,
            DecodeOptions {
                max_decompressed_bytes: limit as u64,
                ..DecodeOptions::default()
            },
        )
    };
    assert!(at(raw.len()).is_ok());
    assert_eq!(
        at(raw.len() - 1),
        Err(ProfileError::TooLarge {
            limit_bytes: raw.len() as u64 - 1
        })
    );
    // Bytes after the last member that are not another member.
    let mut trailing = gzip(raw);
    trailing.extend_from_slice(b"junk");
    let err = decode(&trailing).expect_err("trailing junk");
    assert!(matches!(err, ProfileError::Gzip(_)), "{err}");
}

#[test]
fn a_first_member_larger_than_the_last_trailer_says_is_read_whole() {
    use profile_model::codec::message_bytes;
    // The last trailer (10 bytes) is the only size hint: the 1 MiB first member
    // needs the output to grow past it.
    let data: Vec<u8> = (0u32..1 << 20)
        .map(|i| ((i % 251) ^ (i >> 9)) as u8)
        .collect();
    let (head, tail) = data.split_at(data.len() - 10);
    let mut two = gzip(head);
    two.extend_from_slice(&gzip(tail));
    let mut buf = Vec::new();
    let body = message_bytes(&two, DecodeOptions::default(), &mut buf).expect("valid gzip");
    assert!(body == data, "the two members inflate to the data");
}

#[test]
fn a_damaged_trailer_is_named() {
    let mut gz = gzip(valid_bytes());
    let crc = gz.len() - 8;
    gz[crc] ^= 1;
    let err = decode(&gz).expect_err("damaged CRC-32").to_string();
    assert!(err.contains("CRC-32 mismatch"), "{err}");
    let mut gz = gzip(valid_bytes());
    let size = gz.len() - 1;
    gz[size] ^= 1;
    let err = decode(&gz).expect_err("damaged size").to_string();
    assert!(err.contains("size mismatch"), "{err}");
}

#[test]
fn gzip_of_text_is_read_as_folded_stacks() {
    let err = decode(&gzip(b"hello, this is not a profile\n")).expect_err("text");
    assert_eq!(
        err.to_string(),
        "not a pprof profile nor folded stacks (line 1: no count after the stack: \
         `hello, this is not a profile`)"
    );
    let profile = decode(&gzip(b"main;work 3\n")).expect("folded stacks");
    assert_eq!(profile.total(0), 3);
}

#[test]
fn gzip_bomb_over_the_cap_is_refused() {
    let bomb = gzip(&vec![0u8; 64 << 20]);
    assert!(bomb.len() < 1 << 20, "the bomb is small compressed");
    let err = decode_with(
        &bomb,
        DecodeOptions {
            max_decompressed_bytes: 1 << 20,
            ..DecodeOptions::default()
        },
    )
    .expect_err("bomb");
    assert_eq!(
        err,
        ProfileError::TooLarge {
            limit_bytes: 1 << 20
        }
    );
    assert!(err.to_string().contains("1.00 MiB"), "{err}");
}

#[test]
fn raw_input_over_the_cap_is_refused() {
    let raw = valid_message().encode_to_vec();
    let err = decode_with(
        &raw,
        DecodeOptions {
            max_decompressed_bytes: 100,
            ..DecodeOptions::default()
        },
    )
    .expect_err("cap");
    assert_eq!(err, ProfileError::TooLarge { limit_bytes: 100 });
}

#[test]
fn dangling_location_id() {
    let mut m = valid_message();
    m.sample[0].location_id[0] = 999_999;
    let e = error_of(&m);
    assert!(
        e.contains("sample 0") && e.contains("location id 999999"),
        "{e}"
    );
}

#[test]
fn dangling_function_id() {
    let mut m = valid_message();
    m.location[3].line[0].function_id = 777_777;
    let e = error_of(&m);
    assert!(
        e.contains("location 4") && e.contains("function id 777777"),
        "{e}"
    );
}

#[test]
fn dangling_mapping_id() {
    let mut m = valid_message();
    m.location[0].mapping_id = 55;
    let e = error_of(&m);
    assert!(e.contains("mapping id 55"), "{e}");
}

#[test]
fn string_index_out_of_range() {
    let mut m = valid_message();
    m.function[0].name = 1_000_000;
    let e = error_of(&m);
    assert!(
        e.contains("function 1") && e.contains("string index 1000000"),
        "{e}"
    );
    let mut m = valid_message();
    m.sample_type[0].unit = -3;
    assert!(error_of(&m).contains("string index -3"));
}

#[test]
fn wrong_number_of_values() {
    let mut m = valid_message();
    m.sample[2].value.pop();
    let e = error_of(&m);
    assert!(
        e.contains("sample 2 has 1 values") && e.contains("2 sample types"),
        "{e}"
    );
}

#[test]
fn duplicate_and_zero_ids() {
    let mut m = valid_message();
    m.function[1].id = m.function[0].id + 1_000_000;
    m.function[2].id = m.function[1].id;
    assert!(error_of(&m).contains("duplicate function id"));
    let mut m = valid_message();
    m.mapping[0].id = 0;
    assert!(error_of(&m).contains("mapping has id 0"));
}

#[test]
fn first_string_must_be_empty() {
    let mut m = valid_message();
    m.string_table[0] = "x".into();
    assert!(error_of(&m).contains("entry 0"));
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..2048)) {
        let _ = decode(&bytes);
        let mut gz = vec![0x1f, 0x8b];
        gz.extend_from_slice(&bytes);
        let _ = decode(&gz);
    }

    #[test]
    fn mutated_profiles_never_panic(edits in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..16)) {
        let mut raw = valid_bytes().to_vec();
        for (at, byte) in edits {
            let i = at.index(raw.len());
            raw[i] = byte;
        }
        if let Ok(p) = decode(&raw) {
            // Whatever decodes must also be safe to aggregate.
            let view = profile_model::View::new(&p, &profile_model::ViewOptions::default());
            for t in 0..p.sample_types.len() {
                let _ = view.top(&p, t);
            }
            let tree = view.call_tree(&p);
            let _ = profile_model::fold::folded(&tree, &view.frames, 0);
        }
    }
}

/// One edit of a decoded message: which field (`kind`), which entry, what value.
fn edit_message(p: &mut proto::Profile, kind: u8, at: prop::sample::Index, v: i64) {
    let n = |len: usize| at.index(len.max(1));
    match kind % 12 {
        0 if !p.sample.is_empty() => {
            let s = n(p.sample.len());
            let values = &mut p.sample[s].value;
            let i = n(values.len());
            if let Some(x) = values.get_mut(i) {
                *x = v;
            }
        }
        1 if !p.sample.is_empty() => {
            let s = n(p.sample.len());
            let ids = &mut p.sample[s].location_id;
            let i = n(ids.len());
            if let Some(x) = ids.get_mut(i) {
                *x = v as u64;
            }
        }
        2 if !p.location.is_empty() => {
            let l = n(p.location.len());
            p.location[l].id = v as u64;
        }
        3 if !p.location.is_empty() => {
            let l = n(p.location.len());
            match p.location[l].line.first_mut() {
                Some(line) => line.function_id = v as u64,
                None => p.location[l].mapping_id = v as u64,
            }
        }
        4 if !p.function.is_empty() => {
            let f = n(p.function.len());
            p.function[f].name = v;
        }
        5 if !p.function.is_empty() => {
            let f = n(p.function.len());
            p.function[f].id = v as u64;
        }
        6 if !p.sample.is_empty() => {
            let s = n(p.sample.len());
            p.sample[s].label.push(proto::Label {
                key: v.rem_euclid(p.string_table.len() as i64 + 1),
                str: v.rem_euclid(3),
                num: v,
                num_unit: 0,
            });
        }
        7 => p.time_nanos = v,
        8 => p.duration_nanos = v,
        9 if !p.sample_type.is_empty() => {
            let t = n(p.sample_type.len());
            p.sample_type[t].r#type = v;
        }
        10 if !p.sample.is_empty() => {
            let s = p.sample[n(p.sample.len())].clone();
            p.sample.push(s);
        }
        11 if !p.string_table.is_empty() => {
            let i = n(p.string_table.len());
            p.string_table[i] = "x".repeat(v.rem_euclid(3) as usize);
        }
        _ => {}
    }
}

fn interesting() -> impl Strategy<Value = i64> {
    prop_oneof![
        Just(0),
        Just(1),
        Just(-1),
        Just(i64::MAX),
        Just(i64::MIN),
        0..64i64,
        any::<i64>(),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// Every reader of pprof bytes (decoding, indexing, `flint top`'s sum and the
    /// merge) accepts and refuses the same messages, and what they accept adds up
    /// the same: edits of ids, names, values, labels and types of a real profile.
    #[test]
    fn every_reader_takes_an_edited_profile_alike(
        edits in proptest::collection::vec((any::<u8>(), any::<prop::sample::Index>(), interesting()), 1..6)
    ) {
        use profile_model::merge::{Merger, Selection};
        use profile_model::topsum::TopSum;
        let mut message = valid_message();
        for (kind, at, v) in edits {
            edit_message(&mut message, kind, at, v);
        }
        let raw = message.encode_to_vec();
        let decoded = decode(&raw);
        let indexed = profile_model::codec::decode_without_stacks(&raw, DecodeOptions::default());
        let mut sum = TopSum::new();
        let summed = sum.add_pprof(&raw, 0, 1);
        let mut merger = Merger::new();
        let merged = merger.add_pprof("edited", &raw, Selection { sample_type: None, keep: None });
        let ok = [decoded.is_ok(), indexed.is_ok(), summed.is_ok(), merged.is_ok()];
        prop_assert!(ok.iter().all(|&o| o == ok[0]), "decode, index, top, merge: {ok:?} {:?}", decoded.as_ref().err());
        if let Ok(p) = decoded {
            let merged = merger.finish();
            for t in 0..p.sample_types.len() {
                prop_assert_eq!(merged.total(t), p.total(t));
            }
            if !p.sample_types.is_empty() {
                let view = profile_model::View::new(&p, &profile_model::ViewOptions::default());
                let mut from_top = TopSum::new();
                from_top.add(&view.top(&p, 0), &view.frames, 1);
                let rows = |s: TopSum| {
                    let (rows, total) = s.finish();
                    (rows.into_iter().map(|r| (r.name, r.flat, r.cum)).collect::<Vec<_>>(), total)
                };
                prop_assert_eq!(rows(sum), rows(from_top));
            }
        }
    }
}

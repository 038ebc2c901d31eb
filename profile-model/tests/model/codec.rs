//! Decoding real profiles and encoding them back.

use profile_model::codec::{decode, encode, encode_gzip, is_gzip};
use profile_model::export::to_profile;
use profile_model::{Profile, View, ViewOptions};

use super::{fixture, fixture_bytes};

#[test]
fn decode_encode_decode_is_lossless_for_every_fixture() {
    for name in super::GO_PROFILES {
        let first = fixture(name);
        let raw = encode(&first);
        assert!(!is_gzip(&raw));
        let second = decode(&raw).expect("re-decode raw");
        assert_eq!(first, second, "{name}: raw round trip");
        let third = decode(&encode_gzip(&first)).expect("re-decode gzip");
        assert_eq!(first, third, "{name}: gzip round trip");
    }
}

#[test]
fn raw_and_gzip_inputs_decode_alike() {
    let gz = fixture_bytes("heap.pb.gz");
    let mut raw = Vec::new();
    std::io::Read::read_to_end(&mut flate2::read::GzDecoder::new(gz.as_slice()), &mut raw)
        .expect("gunzip");
    assert_eq!(decode(&gz).expect("gzip"), decode(&raw).expect("raw"));
}

#[test]
fn go_cpu_profile_has_its_sample_types_and_default() {
    let p = fixture("cpu.pb.gz");
    assert_eq!(p.sample_type_names(), ["samples/count", "cpu/nanoseconds"]);
    assert_eq!(p.default_sample_index(), 1);
    assert_eq!(p.find_sample_type("samples"), Some(0));
    assert_eq!(p.find_sample_type("1"), Some(1));
    assert_eq!(p.find_sample_type("cpu/nanoseconds"), Some(1));
    assert_eq!(p.find_sample_type("2"), None);
    // samples × period = cpu for every sample of a Go CPU profile.
    assert_eq!(p.total(0) * p.period, p.total(1));
    let heap = fixture("heap.pb.gz");
    assert_eq!(heap.sample_types.len(), 4);
}

#[test]
fn exported_view_keeps_every_value_and_stack() {
    let p = fixture("cpu.pb.gz");
    let view = View::new(&p, &ViewOptions::default());
    let tree = view.call_tree(&p);
    let exported = to_profile(&tree, &view.frames, &p);
    let again = decode(&encode_gzip(&exported)).expect("exported profile decodes");
    assert_eq!(again.sample_type_names(), p.sample_type_names());
    for t in 0..2 {
        assert_eq!(again.total(t), p.total(t));
        let before = view.top(&p, t);
        let v2 = View::new(&again, &ViewOptions::default());
        let after = v2.top(&again, t);
        let named = |top: &profile_model::top::Top, frames: &profile_model::FrameTable| {
            let mut rows: Vec<(String, i64, i64)> = top
                .rows
                .iter()
                .map(|r| (frames.get(r.frame).name.clone(), r.flat, r.cum))
                .collect();
            rows.sort();
            rows
        };
        assert_eq!(named(&before, &view.frames), named(&after, &v2.frames));
    }
}

#[test]
fn wire_reader_and_prost_agree() {
    use profile_model::codec::{DecodeOptions, decode_message, from_proto};
    for name in ["cpu.pb.gz", "heap.pb.gz"] {
        let bytes = fixture_bytes(name);
        let via_prost =
            from_proto(decode_message(&bytes, DecodeOptions::default()).expect("message"))
                .expect("valid");
        assert_eq!(decode(&bytes).expect("decode"), via_prost, "{name}");
    }
}

#[test]
fn only_sample_type_keeps_that_column_and_every_stack() {
    let heap = fixture("heap.pb.gz");
    let names = heap.sample_type_names();
    let inuse = heap
        .find_sample_type("inuse_space")
        .expect("heap has inuse_space");
    let one = heap
        .clone()
        .only_sample_type(inuse)
        .expect("index in range");
    assert_eq!(one.sample_type_names(), vec![names[inuse].clone()]);
    assert_eq!(one.samples.values.len(), 1);
    assert_eq!(one.total(0), heap.total(inuse));
    assert_eq!(one.samples.stack_locations, heap.samples.stack_locations);
    assert_eq!(one.default_sample_index(), 0);
    assert!(heap.only_sample_type(names.len()).is_none());
}

#[test]
fn fast_encoding_is_the_same_message_as_prost_writes() {
    use prost::Message as _;
    for name in ["cpu.pb.gz", "heap.pb.gz", "cpu-1.pb.gz"] {
        let p = fixture(name);
        let bytes = encode(&p);
        let message = profile_model::proto::Profile::decode(bytes.as_slice()).expect("decodes");
        assert_eq!(message, profile_model::codec::to_proto(&p), "{name}");
    }
}

#[test]
fn strings_of_any_length_and_script_are_read_and_bad_utf8_is_shown_as_pprof_does() {
    use profile_model::proto;
    use prost::Message as _;
    // A 300-byte name has a two-byte length whose first byte is not UTF-8 on its
    // own; the multi-byte names must come through whole.
    let long = format!("crate::módulo::{}", "x".repeat(300));
    let names = ["", "main", "日本語::関数", long.as_str(), "último"];
    let message = proto::Profile {
        string_table: names.iter().map(|n| n.to_string()).collect(),
        function: (1..names.len() as u64)
            .map(|id| proto::Function {
                id,
                name: id as i64,
                ..Default::default()
            })
            .collect(),
        ..Default::default()
    };
    let mut bytes = message.encode_to_vec();
    /// The functions' names, as decoded.
    fn function_names(profile: &Profile) -> Vec<&str> {
        profile
            .functions
            .iter()
            .map(|f| profile.str(f.name))
            .collect()
    }
    let profile = decode(&bytes).expect("valid strings");
    assert_eq!(function_names(&profile), names[1..]);

    // The same message with one name's bytes made invalid UTF-8.
    let at = bytes
        .windows(3)
        .position(|w| w == "日".as_bytes())
        .expect("the name is in the message");
    bytes[at + 1] = b'A';
    // As `go tool pprof` reads it: each invalid sequence is U+FFFD, the rest kept.
    let profile = decode(&bytes).expect("invalid UTF-8 read");
    assert_eq!(
        function_names(&profile),
        [
            "main",
            "\u{fffd}A\u{fffd}本語::関数",
            long.as_str(),
            "último"
        ]
    );
    let kept = profile_model::codec::decode_without_stacks(&bytes, Default::default())
        .expect("indexed too");
    assert_eq!(kept.functions.len(), 0, "no stacks, no functions");
}

/// What a profile without stacks keeps, as text: header, mappings, and per sample its
/// labels and values.
fn kept_parts(p: &profile_model::Profile) -> Vec<String> {
    let mut parts = vec![
        format!("{:?}", p.sample_type_names()),
        format!(
            "{}/{} {} {} {} {}",
            p.str(p.period_type.kind),
            p.str(p.period_type.unit),
            p.period,
            p.time_nanos,
            p.duration_nanos,
            p.str(p.default_sample_type)
        ),
    ];
    parts.extend(p.comments.iter().map(|c| p.str(*c).to_string()));
    parts.extend(p.mappings.iter().map(|m| {
        format!(
            "{} {} {:x}",
            p.str(m.filename),
            p.str(m.build_id),
            m.memory_start
        )
    }));
    for i in 0..p.samples.len() {
        let labels: Vec<(&str, String)> = p.sample_labels(i).collect();
        let values: Vec<i64> = p.samples.values.iter().map(|c| c[i]).collect();
        parts.push(format!("{labels:?} {values:?}"));
    }
    parts
}

#[test]
fn without_stacks_keeps_the_header_labels_and_values_of_every_sample() {
    use profile_model::codec::{DecodeOptions, decode_without_stacks};
    for name in super::GO_PROFILES {
        let full = fixture(name);
        let light = decode_without_stacks(&fixture_bytes(name), DecodeOptions::default())
            .expect("valid fixture");
        assert_eq!(kept_parts(&light), kept_parts(&full), "{name}");
        assert!(light.locations.is_empty() && light.functions.is_empty());
        assert!(light.samples.stack_locations.is_empty());
        assert!(light.strings.len() < full.strings.len() / 2, "{name}");
        assert_eq!(light.label_sets.len(), full.label_sets.len(), "{name}");
    }
}

#[test]
fn without_stacks_refuses_what_decoding_refuses_alike() {
    use profile_model::codec::{DecodeOptions, decode_without_stacks};
    super::for_each_damaged(|bytes, decoded| {
        let light = decode_without_stacks(bytes, DecodeOptions::default());
        assert_eq!(decoded.err(), light.err(), "bytes {bytes:?}");
    });
}

#[test]
fn sparse_ids_decode_as_the_dense_ids_they_stand_for() {
    use prost::Message as _;
    // Go writes ids 1..n, which the reader turns into indices without a look-up; any
    // other numbering is looked up, and must give the same profile.
    let bytes = fixture_bytes("cpu.pb.gz");
    let dense = decode(&bytes).expect("dense");
    let mut m = profile_model::codec::decode_message(&bytes, Default::default()).expect("message");
    let sparse = |id: u64| if id == 0 { 0 } else { 1_000_003 - 7 * id };
    for mapping in &mut m.mapping {
        mapping.id = sparse(mapping.id);
    }
    for function in &mut m.function {
        function.id = sparse(function.id);
    }
    for location in &mut m.location {
        location.id = sparse(location.id);
        location.mapping_id = sparse(location.mapping_id);
        for line in &mut location.line {
            line.function_id = sparse(line.function_id);
        }
    }
    for sample in &mut m.sample {
        for id in &mut sample.location_id {
            *id = sparse(*id);
        }
    }
    assert_eq!(decode(&m.encode_to_vec()).expect("sparse"), dense);
}

#[test]
fn doc_url_is_a_string_table_index_as_pprof_writes_it() {
    // Written by Google's protobuf package from pprof's profile.proto
    // (tests/fixtures/writers/make.py), where doc_url is an int64 index.
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/fixtures/writers/doc_url.pb.gz");
    let bytes = std::fs::read(&path).expect("fixture");
    let p = decode(&bytes).expect("pprof reads it, and so does flint");
    assert_eq!(p.doc_url, "https://example.com/profiling/cpu.html");
    // Encoded back as an index, and read back the same.
    let again = decode(&encode(&p)).expect("round trip");
    assert_eq!(again.doc_url, p.doc_url);
    // A URL the string table does not hold (a merge keeps only the strings its tables
    // reach) joins the table.
    let mut moved = p.clone();
    moved.doc_url = "https://example.com/elsewhere".to_string();
    let out = decode(&encode(&moved)).expect("round trip");
    assert_eq!(out.doc_url, "https://example.com/elsewhere");
    assert_eq!(out.strings.len(), p.strings.len() + 1);
}

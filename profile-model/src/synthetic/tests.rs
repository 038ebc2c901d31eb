//! Unit tests: determinism, decodability and referential integrity.

use std::error::Error;
use std::io::Read;

use prost::Message;

use super::*;

type TestResult = Result<(), Box<dyn Error>>;

fn small(seed: u64) -> FleetParams {
    FleetParams {
        universe: UniverseParams {
            locations: 3000,
            functions: 800,
            binaries: 8,
            min_depth: 20,
            max_depth: 80,
            seed,
        },
        samples: 4000,
        time_nanos: 1_700_000_000_000_000_000,
        duration_nanos: 60_000_000_000,
    }
}

fn decode(gz: &[u8]) -> Result<Profile, Box<dyn Error>> {
    let mut raw = Vec::new();
    flate2::read::GzDecoder::new(gz).read_to_end(&mut raw)?;
    Ok(Profile::decode(raw.as_slice())?)
}

/// Checks that every id and string index in `p` resolves; returns the number
/// of distinct locations referenced by samples.
fn check_refs(p: &Profile) -> Result<usize, Box<dyn Error>> {
    let strings = p.string_table.len() as i64;
    assert_eq!(p.string_table.first().map(String::as_str), Some(""));
    let s_ok = |i: i64| (0..strings).contains(&i);
    for (i, m) in p.mapping.iter().enumerate() {
        assert_eq!(m.id, i as u64 + 1);
        assert!(s_ok(m.filename) && s_ok(m.build_id) && m.filename != 0);
        assert!(m.memory_start < m.memory_limit);
    }
    for (i, f) in p.function.iter().enumerate() {
        assert_eq!(f.id, i as u64 + 1);
        assert!(s_ok(f.name) && s_ok(f.system_name) && s_ok(f.filename) && f.name != 0);
    }
    for (i, l) in p.location.iter().enumerate() {
        assert_eq!(l.id, i as u64 + 1);
        let m = p
            .mapping
            .get(l.mapping_id as usize - 1)
            .ok_or("bad mapping id")?;
        assert!((m.memory_start..m.memory_limit).contains(&l.address));
        assert!(!l.line.is_empty() && l.line.len() <= 3);
        for line in &l.line {
            assert!(line.function_id >= 1 && line.function_id as usize <= p.function.len());
        }
    }
    for t in p.sample_type.iter().chain(&p.period_type) {
        assert!(s_ok(t.r#type) && s_ok(t.unit));
    }
    for c in &p.comment {
        assert!(s_ok(*c));
    }
    let mut used = vec![false; p.location.len()];
    for s in &p.sample {
        assert!(!s.location_id.is_empty());
        for &id in &s.location_id {
            assert!(id >= 1 && id as usize <= p.location.len());
            used[id as usize - 1] = true;
        }
        assert_eq!(s.value.len(), p.sample_type.len());
        for l in &s.label {
            assert!(s_ok(l.key) && s_ok(l.str) && s_ok(l.num_unit) && l.key != 0);
        }
    }
    Ok(used.iter().filter(|&&u| u).count())
}

#[test]
fn same_seed_gives_identical_bytes() -> TestResult {
    let a = encode_gz(&fleet_profile(&small(7))?)?;
    let b = encode_gz(&fleet_profile(&small(7))?)?;
    let c = encode_gz(&fleet_profile(&small(8))?)?;
    assert_eq!(a, b);
    assert_ne!(a.1, c.1);
    Ok(())
}

#[test]
fn fleet_decodes_with_requested_counts() -> TestResult {
    let params = small(42);
    let u = Universe::new(&params.universe)?;
    assert!(u.leaves() <= params.samples, "{} leaves", u.leaves());
    let (raw_len, gz) = encode_gz(&fleet_profile(&params)?)?;
    let p = decode(&gz)?;
    assert_eq!(prost::Message::encoded_len(&p), raw_len);
    assert_eq!(p.sample.len(), params.samples);
    assert_eq!(p.location.len(), params.universe.locations);
    assert_eq!(p.function.len(), params.universe.functions);
    assert_eq!(p.mapping.len(), params.universe.binaries);
    assert_eq!(p.time_nanos, params.time_nanos);
    assert_eq!(p.duration_nanos, params.duration_nanos);
    assert_eq!(p.period, PERIOD_NANOS);
    let st = |i: i64| p.string_table[i as usize].as_str();
    let types: Vec<_> = p
        .sample_type
        .iter()
        .map(|t| (st(t.r#type), st(t.unit)))
        .collect();
    assert_eq!(types, [("samples", "count"), ("cpu", "nanoseconds")]);
    let used = check_refs(&p)?;
    assert_eq!(used, p.location.len(), "every location is referenced");
    let mut funcs_used = vec![false; p.function.len()];
    for l in &p.location {
        for line in &l.line {
            funcs_used[line.function_id as usize - 1] = true;
        }
    }
    assert!(
        funcs_used.iter().all(|&u| u),
        "every function is referenced"
    );
    for s in &p.sample {
        assert!(s.location_id.len() <= params.universe.max_depth);
        assert_eq!(s.value[1], s.value[0] * PERIOD_NANOS);
        let keys: Vec<_> = s.label.iter().map(|l| st(l.key)).collect();
        assert_eq!(keys, ["pid", "endpoint"]);
    }
    // Random (non-covering) stacks honour the minimum depth.
    let deep = p
        .sample
        .iter()
        .filter(|s| s.location_id.len() >= params.universe.min_depth)
        .count();
    assert!(
        deep * 10 >= p.sample.len() * 9,
        "{deep} of {} deep enough",
        p.sample.len()
    );
    // Shared structure: few distinct roots.
    let mut roots: Vec<u64> = p
        .sample
        .iter()
        .filter_map(|s| s.location_id.last().copied())
        .collect();
    roots.sort_unstable();
    roots.dedup();
    assert!(roots.len() <= 8, "{} roots", roots.len());
    Ok(())
}

#[test]
fn series_profiles_are_consecutive_and_valid() -> TestResult {
    let u = Universe::new(&UniverseParams {
        locations: 2000,
        functions: 600,
        binaries: 8,
        min_depth: 10,
        max_depth: 40,
        seed: 3,
    })?;
    let sp = SeriesParams {
        samples: 300,
        start_nanos: 1_700_000_000_000_000_000,
        step_secs: 10,
        seed: 3,
    };
    for i in 0..3u64 {
        let p = series_profile(&u, &sp, i);
        assert_eq!(p.time_nanos, sp.start_nanos + i as i64 * 10_000_000_000);
        assert!(!p.sample.is_empty());
        check_refs(&p)?;
        let (_, gz) = encode_gz(&p)?;
        assert_eq!(decode(&gz)?, p);
        assert_eq!(encode_gz(&series_profile(&u, &sp, i))?.1, gz);
    }
    Ok(())
}

#[test]
fn rejects_bad_params() {
    let mut p = small(1);
    p.universe.functions = p.universe.locations + 1;
    assert!(fleet_profile(&p).is_err());
    let mut p = small(1);
    p.universe.min_depth = 90;
    assert!(fleet_profile(&p).is_err());
}

//! Profiles from writers other than Go's runtime read as `go tool pprof` reads them:
//! every golden file of tests/fixtures/writers/golden/ (written by goldens.sh there)
//! against flint's answer on the same profile, all mismatches reported at once.
//!
//! - `NAME.top.txt`                ← `flint top NAME.pb.gz`
//! - `NAME.sample_index=I.top.txt` ← `flint top NAME.pb.gz -s I`
//! - `NAME.lines.top.txt`          ← `flint top NAME.pb.gz --granularity line`
//! - `NAME.addresses.top.txt`      ← `flint top NAME.pb.gz --granularity address`
//! - `NAME.traces.txt`             ← `flint fold NAME.pb.gz`: the same stacks, values
//!   equal within what pprof's printing (`1.50s`, `4kB`) keeps of them.
//!
//! And every folder `sums/NAME/` summed, `flint top sums/NAME` against
//! `sums/NAME.top.txt`: `go tool pprof -top` of its profiles together.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use super::{fixtures, flint};

/// The profiles tests/fixtures/writers/make.py builds: each must have its goldens.
const HAND_BUILT: &[&str] = &[
    "doc_url",
    "system_name",
    "drop_frames",
    "sparse_ids",
    "inlined",
    "nameless",
    "mangled",
    "values",
    "labels",
    "default_sample_type",
    "rates",
];

/// What a golden file holds, told by its name.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
enum Kind {
    Top,
    SampleIndex(String),
    Lines,
    Addresses,
    Traces,
}

/// `NAME.KIND.txt` as (NAME, KIND).
fn parse_golden_name(file: &str) -> Option<(String, Kind)> {
    let stem = file.strip_suffix(".txt")?;
    if let Some(name) = stem.strip_suffix(".traces") {
        return Some((name.to_string(), Kind::Traces));
    }
    let stem = stem.strip_suffix(".top")?;
    if let Some(name) = stem.strip_suffix(".lines") {
        return Some((name.to_string(), Kind::Lines));
    }
    if let Some(name) = stem.strip_suffix(".addresses") {
        return Some((name.to_string(), Kind::Addresses));
    }
    if let Some((name, index)) = stem.rsplit_once(".sample_index=")
        && !index.is_empty()
        && index.bytes().all(|b| b.is_ascii_digit())
    {
        return Some((name.to_string(), Kind::SampleIndex(index.to_string())));
    }
    Some((stem.to_string(), Kind::Top))
}

/// Runs flint; its stdout, or why it failed.
fn run_flint(args: &[&str]) -> Result<String, String> {
    let out = flint(args);
    if !out.status.success() {
        let stderr = String::from_utf8_lossy(&out.stderr);
        return Err(format!(
            "flint {args:?} failed: {}",
            stderr.lines().next().unwrap_or("(no message)")
        ));
    }
    // pprof writes a name's bytes that are not UTF-8 as they are, flint writes U+FFFD:
    // both sides are read lossily.
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// The first line where `flint` and `pprof` differ, described; None when equal.
fn first_difference(flint: &str, pprof: &str) -> Option<String> {
    let a: Vec<&str> = flint.lines().collect();
    let e: Vec<&str> = pprof.lines().collect();
    if a == e {
        return None;
    }
    let first = a
        .iter()
        .zip(&e)
        .position(|(x, y)| x != y)
        .unwrap_or(a.len().min(e.len()));
    Some(format!(
        "line {first} (of {} vs {}):\n      flint: {:?}\n      pprof: {:?}",
        a.len(),
        e.len(),
        a.get(first),
        e.get(first)
    ))
}

/// A printed unit of pprof's (`measurement` package): its kind and size in the
/// kind's base unit (nanoseconds, bytes; `""` a plain number).
fn printed_unit(suffix: &str) -> Option<(&'static str, f64)> {
    Some(match suffix {
        "" => ("", 1.0),
        "ns" => ("time", 1.0),
        "us" => ("time", 1e3),
        "ms" => ("time", 1e6),
        "s" => ("time", 1e9),
        "hrs" => ("time", 3.6e12),
        "B" => ("bytes", 1.0),
        "kB" => ("bytes", 1024.0),
        "MB" => ("bytes", 1024.0 * 1024.0),
        "GB" => ("bytes", 1024.0 * 1024.0 * 1024.0),
        "TB" => ("bytes", 1024.0_f64.powi(4)),
        "PB" => ("bytes", 1024.0_f64.powi(5)),
        _ => return None,
    })
}

/// A sample type's unit as the profile names it: its kind and size, as pprof scales it.
fn profile_unit(unit: &str) -> (&'static str, f64) {
    match unit.to_ascii_lowercase().as_str() {
        "ns" | "nanosecond" | "nanoseconds" => ("time", 1.0),
        "us" | "μs" | "microsecond" | "microseconds" => ("time", 1e3),
        "ms" | "millisecond" | "milliseconds" => ("time", 1e6),
        "s" | "sec" | "second" | "seconds" => ("time", 1e9),
        "hr" | "hour" | "hours" => ("time", 3.6e12),
        "b" | "byte" | "bytes" => ("bytes", 1.0),
        "kb" | "kbyte" | "kilobyte" | "kilobytes" => ("bytes", 1024.0),
        "mb" | "mbyte" | "megabyte" | "megabytes" => ("bytes", 1024.0 * 1024.0),
        "gb" | "gbyte" | "gigabyte" | "gigabytes" => ("bytes", 1024.0 * 1024.0 * 1024.0),
        _ => ("", 1.0),
    }
}

/// A value as pprof's `-traces` prints it (`600ms`, `-1.50s`, `4kB`, `12`): its kind,
/// the value in the kind's base unit, and half the step of its last printed digit.
fn parse_printed_value(text: &str) -> Option<(&'static str, f64, f64)> {
    let split = text
        .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '-'))
        .unwrap_or(text.len());
    let (number, suffix) = text.split_at(split);
    let number: f64 = number.parse().ok()?;
    let (kind, size) = printed_unit(suffix)?;
    Some((kind, number * size, 0.005 * size))
}

/// The line between samples in pprof's `-traces`.
const SEPARATOR: &str = "-----------+-------------------------------------------------------";

/// One stack's value in `-traces`: summed over its samples, with the summed
/// printing error.
#[derive(Debug, Default, Clone, Copy)]
struct Traced {
    value: f64,
    error: f64,
}

/// Parses pprof's `-traces` into folded stacks (root first). A block holds label
/// lines (`%10s:  %s`), then `%10s   %s` of the value and the leaf, then callers
/// indented 13 spaces; inlined frames end in ` (inline)`, which folded stacks omit.
fn traces_as_folded(text: &str) -> Result<(BTreeMap<String, Traced>, &'static str), String> {
    let mut stacks: BTreeMap<String, Traced> = BTreeMap::new();
    let mut kinds = BTreeSet::new();
    let frame = |f: &str| f.strip_suffix(" (inline)").unwrap_or(f).to_string();
    let mut blocks = text.split(SEPARATOR);
    blocks.next(); // the header
    for block in blocks {
        let mut value = None;
        let mut frames = Vec::new();
        for line in block.lines().filter(|l| !l.trim().is_empty()) {
            if value.is_some() {
                let caller = line
                    .strip_prefix("             ")
                    .unwrap_or(line.trim_start());
                frames.push(frame(caller));
                continue;
            }
            // Before the value line: label lines, whose key ends in `:`.
            let t = line.trim_start();
            let Some((printed, leaf)) = t.split_once("   ") else {
                continue;
            };
            if let Some((kind, v, error)) = parse_printed_value(printed) {
                kinds.insert(kind);
                value = Some(Traced { value: v, error });
                frames.push(frame(leaf));
            } else if !printed.contains(':') {
                return Err(format!("unreadable -traces line {line:?}"));
            }
        }
        if let Some(v) = value {
            frames.reverse();
            let entry = stacks.entry(frames.join(";")).or_default();
            entry.value += v.value;
            entry.error += v.error;
        }
    }
    // A plain number (a count, or a time or size printed as 0) says nothing of the kind.
    kinds.remove("");
    let kind = match kinds.len() {
        0 => "",
        1 => kinds.into_iter().next().unwrap_or(""),
        _ => return Err(format!("-traces mixes units: {kinds:?}")),
    };
    Ok((stacks, kind))
}

/// `flint fold` against the golden `-traces`; None when they agree.
fn compare_traces(file: &str, golden: &str) -> Option<String> {
    let (expected, printed_kind) = match traces_as_folded(golden) {
        Ok(parsed) => parsed,
        Err(why) => return Some(why),
    };
    if expected.is_empty() && golden.matches(SEPARATOR).count() > 1 {
        return Some("the golden -traces parses into no stacks".to_string());
    }
    let folded = match run_flint(&["fold", file]) {
        Ok(out) => out,
        Err(why) => return Some(why),
    };
    let unit = run_flint(&["top", file, "--format", "json"])
        .ok()
        .and_then(|out| serde_json::from_str::<serde_json::Value>(&out).ok())
        .and_then(|json| json["unit"].as_str().map(str::to_string))
        .unwrap_or_default();
    let (kind, size) = profile_unit(&unit);
    if !printed_kind.is_empty() && kind != printed_kind {
        return Some(format!(
            "flint's unit {unit:?} is not of the kind pprof prints ({printed_kind})"
        ));
    }
    let mut actual: BTreeMap<String, i128> = BTreeMap::new();
    for line in folded.lines() {
        let parsed = line
            .rsplit_once(' ')
            .and_then(|(stack, v)| Some((stack, v.parse::<i128>().ok()?)));
        let Some((stack, v)) = parsed else {
            return Some(format!("unreadable flint fold line {line:?}"));
        };
        *actual.entry(stack.to_string()).or_insert(0) += v;
    }
    let keys: BTreeSet<&String> = actual.keys().chain(expected.keys()).collect();
    for key in keys {
        let f = actual.get(key).copied().unwrap_or(0);
        let p = expected.get(key).copied().unwrap_or_default();
        let fv = f as f64 * size;
        // Stacks whose values sum to zero: pprof prints them, flint may leave them out.
        if (fv - p.value).abs() > p.error + 1e-9 * p.value.abs() {
            let show = |present: bool, v: String| if present { v } else { "(absent)".into() };
            return Some(format!(
                "stack {key:?}:\n      flint: {} ({unit})\n      pprof: {} (in ns or B)",
                show(actual.contains_key(key), f.to_string()),
                show(expected.contains_key(key), p.value.to_string()),
            ));
        }
    }
    None
}

fn writers() -> PathBuf {
    fixtures().join("../writers")
}

#[test]
fn writer_sums_read_as_pprof_reads_them() {
    let dir = writers().join("sums");
    let mut mismatches = Vec::new();
    let mut checked = 0;
    for entry in std::fs::read_dir(&dir).expect("tests/fixtures/writers/sums") {
        let path = entry.expect("dir entry").path();
        if !path.is_dir() {
            continue;
        }
        let golden = path.with_extension("top.txt");
        let golden =
            String::from_utf8_lossy(&std::fs::read(&golden).expect("its golden")).into_owned();
        let folder = path.to_str().expect("a UTF-8 path");
        let difference = match run_flint(&["top", folder]) {
            Ok(out) => first_difference(&out, &golden),
            Err(why) => Some(why),
        };
        if let Some(d) = difference {
            mismatches.push(format!("{folder}: {d}"));
        }
        checked += 1;
    }
    assert!(checked >= 1, "no folder of profiles in {}", dir.display());
    assert!(mismatches.is_empty(), "{}", mismatches.join("\n"));
}

#[test]
fn writer_profiles_read_as_pprof_reads_them() {
    let dir = writers();
    let mut goldens: Vec<String> = std::fs::read_dir(dir.join("golden"))
        .expect("tests/fixtures/writers/golden")
        .map(|e| {
            e.expect("dir entry")
                .file_name()
                .to_string_lossy()
                .into_owned()
        })
        .filter(|n| n.ends_with(".txt"))
        .collect();
    goldens.sort();
    let mut mismatches = Vec::new();
    let mut checked: BTreeMap<String, BTreeSet<Kind>> = BTreeMap::new();
    for golden_name in &goldens {
        let Some((name, kind)) = parse_golden_name(golden_name) else {
            mismatches.push(format!("{golden_name}: not a golden file name"));
            continue;
        };
        let profile = dir.join(format!("{name}.pb.gz"));
        if !profile.exists() {
            mismatches.push(format!("{golden_name}: no profile {name}.pb.gz"));
            continue;
        }
        let file = profile.to_str().expect("a UTF-8 path");
        let golden = String::from_utf8_lossy(
            &std::fs::read(dir.join("golden").join(golden_name)).expect("golden file"),
        )
        .into_owned();
        let difference = match &kind {
            Kind::Traces => compare_traces(file, &golden),
            _ => {
                let mut args = vec!["top", file];
                match &kind {
                    Kind::SampleIndex(i) => args.extend(["-s", i.as_str()]),
                    Kind::Lines => args.extend(["--granularity", "line"]),
                    Kind::Addresses => args.extend(["--granularity", "address"]),
                    _ => {}
                }
                if golden.lines().count() < 5 {
                    Some("the golden file holds no rows".to_string())
                } else {
                    match run_flint(&args) {
                        Ok(out) => first_difference(&out, &golden),
                        Err(why) => Some(why),
                    }
                }
            }
        };
        if let Some(d) = difference {
            mismatches.push(format!("{name} {kind:?}: {d}"));
        }
        checked.entry(name).or_default().insert(kind);
    }
    // Never pass on an empty or half-written folder.
    for name in HAND_BUILT {
        let kinds = checked.get(*name).cloned().unwrap_or_default();
        for kind in [Kind::Top, Kind::Lines, Kind::Addresses, Kind::Traces] {
            assert!(
                kinds.contains(&kind),
                "{name}: no golden {kind:?} (run tests/fixtures/writers/make.py)"
            );
        }
        assert!(
            kinds.iter().any(|k| matches!(k, Kind::SampleIndex(_))),
            "{name}: no -sample_index golden"
        );
    }
    let total: usize = checked.values().map(BTreeSet::len).sum();
    assert!(
        total >= 6 * HAND_BUILT.len(),
        "only {total} goldens checked"
    );
    assert!(
        mismatches.is_empty(),
        "{} of {total} goldens differ from flint:\n{}",
        mismatches.len(),
        mismatches.join("\n")
    );
}

#[test]
fn traces_parse_with_units_labels_and_inline_marks() {
    let text = "File: app\n\
        -----------+-------------------------------------------------------\n\
        \x20   thread:  main\n\
        request_bytes:  4kB\n\
        \x20    1.50s   c (inline)\n\
        \x20            b\n\
        -----------+-------------------------------------------------------\n\
        \x20    -200ms   b\n\
        -----------+-------------------------------------------------------\n\
        \x20      700ms   c (inline)\n\
        \x20            b\n\
        -----------+-------------------------------------------------------\n";
    let (stacks, kind) = traces_as_folded(text).expect("parses");
    assert_eq!(kind, "time");
    assert_eq!(stacks.len(), 2, "{stacks:?}");
    assert!((stacks["b;c"].value - 2.2e9).abs() < 1.0);
    assert!((stacks["b;c"].error - 0.005e9 - 0.005e6).abs() < 1.0);
    assert!((stacks["b"].value + 2e8).abs() < 1.0);
    assert_eq!(parse_printed_value("4kB").map(|v| v.1), Some(4096.0));
    assert_eq!(parse_printed_value("12").map(|v| v.1), Some(12.0));
    assert_eq!(
        parse_golden_name("a-b.sample_index=2.top.txt"),
        Some(("a-b".into(), Kind::SampleIndex("2".into())))
    );
    assert_eq!(
        parse_golden_name("x.lines.top.txt"),
        Some(("x".into(), Kind::Lines))
    );
    assert_eq!(
        parse_golden_name("x.top.txt"),
        Some(("x".into(), Kind::Top))
    );
}

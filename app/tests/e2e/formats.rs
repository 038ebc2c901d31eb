//! Other profilers' files (folded stacks, V8 .cpuprofile, speedscope JSON) read by
//! content: `flint fold` of each equals the folded stacks of the tool that made it
//! (inferno, py-spy) or of speedscope's own importer (`tests/fixtures/*/regen.sh`);
//! the speedscope export reads back as it was written; bad input is one error line.

use std::collections::BTreeMap;
use std::path::PathBuf;

use super::{Scratch, fixtures, flint, flint_ok};

/// A fixture of another writer: `tests/fixtures/<path>`.
fn fixture(path: &str) -> String {
    fixtures()
        .join("..")
        .join(path)
        .to_str()
        .expect("a UTF-8 path")
        .to_string()
}

/// Folded stacks as stack → value, equal stacks summed, values scaled by `scale` (a
/// unit's change) and rounded.
fn folded(text: &str, scale: f64) -> BTreeMap<String, i64> {
    let mut stacks = BTreeMap::new();
    for line in text.lines() {
        let (stack, value) = line.rsplit_once(' ').expect("`stack value` line");
        let value: f64 = value.parse().expect("a number");
        *stacks.entry(stack.to_string()).or_insert(0.0) += value * scale;
    }
    stacks
        .into_iter()
        .map(|(s, v)| (s, v.round() as i64))
        .collect()
}

/// `flint fold FILE` equals `oracle` (the path of folded stacks), whose values are in
/// a unit `scale` times flint's. A sample without frames (py-spy's ` 4` for an idle
/// thread) has no folded line of flint's: it counts in the total only.
fn assert_folds_as(file: &str, oracle: &str, scale: f64) {
    let mut expected = folded(
        &std::fs::read_to_string(fixture(oracle)).expect("oracle"),
        scale,
    );
    expected.remove("");
    assert!(expected.len() >= 3, "{oracle} has stacks to compare");
    let actual = folded(&flint_ok(&["fold", &fixture(file)]), 1.0);
    assert_eq!(actual, expected, "flint fold {file} against {oracle}");
}

#[test]
fn inferno_collapse_perf_output_folds_back_to_itself() {
    assert_folds_as("inferno/perf.folded", "inferno/perf.folded", 1.0);
}

#[test]
fn py_spy_raw_output_folds_back_to_itself() {
    assert_folds_as("py-spy/raw.folded", "py-spy/raw.folded", 1.0);
}

#[test]
fn node_cpu_prof_folds_as_speedscope_reads_it() {
    assert_folds_as("node/cpu.cpuprofile", "node/cpu.folded", 1.0);
}

#[test]
fn speedscope_sample_files_fold_as_speedscope_reads_them() {
    for name in [
        "evented.speedscope",
        "sampled.speedscope",
        "two-profiles.speedscope",
    ] {
        assert_folds_as(
            &format!("speedscope/{name}.json"),
            &format!("speedscope/{name}.folded"),
            1.0,
        );
    }
    assert_folds_as(
        "speedscope/chrome-65.cpuprofile",
        "speedscope/chrome-65.folded",
        1.0,
    );
}

#[test]
fn py_spy_speedscope_folds_as_speedscope_reads_it_in_nanoseconds() {
    // py-spy's weights are fractions of seconds: flint keeps them as nanoseconds.
    assert_folds_as(
        "py-spy/cpu.speedscope.json",
        "py-spy/cpu.speedscope.folded",
        1e9,
    );
    let top = flint_ok(&["top", &fixture("py-spy/cpu.speedscope.json"), "-n", "1"]);
    assert!(top.contains("Type: wall"), "{top}");
}

#[test]
fn each_speedscope_profile_is_a_thread_label() {
    let file = fixture("speedscope/two-profiles.speedscope.json");
    let one = folded(&flint_ok(&["fold", &file, "--tag", "thread=^one$"]), 1.0);
    let both = folded(&flint_ok(&["fold", &file]), 1.0);
    assert_eq!(one.values().sum::<i64>() * 2, both.values().sum::<i64>());
    assert_eq!(one.len(), both.len());
}

#[test]
fn a_cpuprofile_has_its_duration_and_wall_time() {
    let top = flint_ok(&["top", &fixture("node/cpu.cpuprofile"), "-n", "2"]);
    assert!(top.contains("Type: wall"), "{top}");
    assert!(top.contains("Duration: 554.74ms"), "{top}");
    let lines: Vec<&str> = top.lines().collect();
    assert!(lines.iter().any(|l| l.ends_with("  fib")), "{top}");
}

#[test]
fn the_folded_unit_names_what_counts_measure() {
    let file = fixture("inferno/perf.folded");
    let samples = flint_ok(&["top", &file, "-n", "1"]);
    assert!(samples.contains("Type: samples"), "{samples}");
    let time = flint_ok(&["top", &file, "-n", "1", "--folded-unit", "nanoseconds"]);
    assert!(time.contains("Type: cpu"), "{time}");
    assert!(time.contains("of 277.28ms total"), "{time}");
}

#[test]
fn speedscope_reads_flints_speedscope_export_as_flint_folds_the_profile() {
    // flint-export.speedscope.json is `flint fold go/cpu.pb.gz --format speedscope`;
    // its .folded is what speedscope's importer makes of it.
    assert_folds_as(
        "go/cpu.pb.gz",
        "speedscope/flint-export.speedscope.folded",
        1.0,
    );
    let written = flint_ok(&["fold", &fixture("go/cpu.pb.gz"), "--format", "speedscope"]);
    let committed = std::fs::read_to_string(fixture("speedscope/flint-export.speedscope.json"))
        .expect("fixture");
    // The fixture was written by an earlier version: compare all but the exporter's.
    let exporter = regex::Regex::new(r#""exporter":"flint@[^"]*""#).expect("regex");
    let without_version = |s: &str| {
        exporter
            .replace_all(s, r#""exporter":"flint""#)
            .into_owned()
    };
    assert_eq!(without_version(&written), without_version(&committed));
}

#[test]
fn the_speedscope_export_reads_back_as_the_view_it_wrote() {
    let dir = Scratch::new("speedscope-export");
    let go = fixtures().join("cpu.pb.gz");
    let go = go.to_str().expect("a UTF-8 path");
    let json = flint_ok(&["fold", go, "--format", "speedscope", "--focus", "main"]);
    let parsed: serde_json::Value = serde_json::from_str(&json).expect("JSON");
    assert_eq!(
        parsed["$schema"],
        "https://www.speedscope.app/file-format-schema.json"
    );
    assert_eq!(parsed["profiles"][0]["type"], "sampled");
    assert_eq!(parsed["profiles"][0]["unit"], "nanoseconds");
    let path: PathBuf = dir.join("cpu.speedscope.json");
    std::fs::write(&path, &json).expect("written");
    let back = flint_ok(&["fold", path.to_str().expect("a UTF-8 path")]);
    let direct = flint_ok(&["fold", go, "--focus", "main"]);
    assert_eq!(folded(&back, 1.0), folded(&direct, 1.0));
}

/// `flint fold FILE` of `content` fails with exactly `error` (after the path).
fn assert_refused(content: &str, error: &str) {
    let dir = Scratch::new("formats-refused");
    let path = dir.join("input");
    std::fs::write(&path, content).expect("written");
    let path = path.to_str().expect("a UTF-8 path");
    let out = flint(&["fold", path]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert!(out.stdout.is_empty());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(stderr, format!("error: {path}: {error}\n"));
}

#[test]
fn bad_files_of_other_formats_are_one_error_line() {
    assert_refused(
        "a;b 1\na;b;c\n",
        "folded stacks, line 2: no count after the stack: `a;b;c`",
    );
    assert_refused(
        r#"{"nodes": [{"id": 1, "callFrame": {"functionName": "(root)"}, "children": [2]}],
            "samples": [1], "timeDeltas": [0]}"#,
        "V8 .cpuprofile: node 1 names node 2, which is not in nodes",
    );
    assert_refused(
        r#"{"nodes": [{"id": 1, "callFrame": {"functionName": "(root)"}}],
            "samples": [7], "timeDeltas": [0]}"#,
        "V8 .cpuprofile: a sample names node 7, which is not in nodes",
    );
    assert_refused(
        r#"{"nodes": [{"id": 1, "callFrame": {}}"#,
        "malformed JSON (EOF while parsing a list at line 1 column 37)",
    );
    assert_refused(
        r#"{"traceEvents": []}"#,
        "JSON that is neither a V8 .cpuprofile (nodes, samples, timeDeltas) nor a speedscope file (shared.frames, profiles)",
    );
    let speedscope =
        std::fs::read_to_string(fixture("speedscope/evented.speedscope.json")).expect("fixture");
    assert_refused(
        &speedscope.replacen("\"frame\": 1", "\"frame\": 9", 1),
        "speedscope file: profile 0 (simple.txt) names frame 9, but shared.frames has 4",
    );
}

#[test]
fn a_broken_file_in_a_folder_is_skipped_with_a_warning() {
    let dir = Scratch::new("formats-folder");
    std::fs::copy(fixture("inferno/perf.folded"), dir.join("a.txt")).expect("copied");
    std::fs::copy(fixture("py-spy/raw.folded"), dir.join("b.txt")).expect("copied");
    std::fs::write(dir.join("c.txt"), "main;work\n").expect("written");
    let d = dir.to_str().expect("a UTF-8 path");
    let out = flint(&["fold", d]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("c.txt: not a pprof profile nor folded stacks (line 1: no count"),
        "{stderr}"
    );
    let series = flint_ok(&["series", d, "--sum-by", "path"]);
    assert_eq!(series.lines().count(), 2, "{series}");
    assert!(series.contains("b.txt"), "{series}");
}

#[test]
fn a_cpuprofile_in_a_folder_begins_its_duration_before_it_was_written() {
    let dir = Scratch::new("formats-series");
    let path = dir.join("cpu.cpuprofile");
    std::fs::copy(fixture("node/cpu.cpuprofile"), &path).expect("copied");
    let written = std::time::UNIX_EPOCH + std::time::Duration::from_secs(1_796_000_000);
    std::fs::File::options()
        .write(true)
        .open(&path)
        .and_then(|f| f.set_modified(written))
        .expect("mtime set");
    let series = flint_ok(&["series", dir.to_str().expect("a UTF-8 path")]);
    // 554.74 ms (rounded from 554,741 µs) before 2026-11-30T00:53:20Z.
    assert!(
        series.starts_with("2026-11-30T00:53:19.445259Z"),
        "{series}"
    );
}

#[test]
fn a_cpuprofile_is_a_series_of_time_slices_that_add_up_to_its_total() {
    let file = fixture("node/cpu.cpuprofile");
    let total = super::top_total(&[&file]);
    let (points, series) = super::series_points(&file);
    // node --cpu-prof of about 0.6 s: 100 ms slices.
    assert!(points.len() >= 5, "{series}");
    assert_eq!(points.iter().map(|p| p.1).sum::<i64>(), total, "{series}");
    assert!(points.windows(2).all(|w| w[0].0 < w[1].0), "{series}");
}

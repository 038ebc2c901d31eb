//! `flint series` prints one line per profile and series, with the profile's totals.

use super::{fixtures, flint, flint_ok};

#[test]
fn one_line_per_profile_with_its_total() {
    let tsv = flint_ok(&[
        "series",
        "cpu-1.pb.gz",
        "cpu-2.pb.gz",
        "cpu-3.pb.gz",
        "--format",
        "tsv",
    ]);
    let lines: Vec<&str> = tsv.lines().collect();
    assert_eq!(lines[0], "time\tlabels\tvalue\tvalue_per_second");
    assert_eq!(lines.len(), 4, "{tsv}");
    let values: Vec<&str> = lines[1..]
        .iter()
        .map(|l| l.split('\t').nth(2).unwrap_or(""))
        .collect();
    // Totals of the three profiles, as `flint top` reports them.
    assert_eq!(values, ["2260000000", "2040000000", "1980000000"]);
    assert!(lines[1].starts_with("2026-11-30T12:39:12"), "{}", lines[1]);
}

#[test]
fn sum_by_and_query_select_series() {
    let tsv = flint_ok(&[
        "series",
        "cpu-3.pb.gz",
        "--sum-by",
        "endpoint",
        "--format",
        "tsv",
    ]);
    assert!(tsv.contains("{endpoint=\"/api/hash\"}"), "{tsv}");
    let hash = flint_ok(&[
        "series",
        "cpu-3.pb.gz",
        "--query",
        r#"process_cpu:cpu:nanoseconds:cpu:nanoseconds:delta{endpoint="/api/hash"}"#,
        "--format",
        "tsv",
    ]);
    let hash_value = hash
        .lines()
        .nth(1)
        .and_then(|l| l.split('\t').nth(2))
        .unwrap_or("");
    let by_endpoint = tsv
        .lines()
        .find(|l| l.contains("/api/hash"))
        .and_then(|l| l.split('\t').nth(2))
        .unwrap_or("-");
    assert_eq!(hash_value, by_endpoint);
}

#[test]
fn bad_queries_are_one_line_errors() {
    let out = flint(&["series", "cpu-1.pb.gz", "--query", "cpu{"]);
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.starts_with("error: profile type"), "{stderr}");
    let out = flint(&[
        "series",
        "cpu-1.pb.gz",
        "--query",
        "memory:inuse_space:bytes:space:bytes",
    ]);
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        stderr.trim_end(),
        "error: no profiles of type memory:inuse_space:bytes:space:bytes; the types here are \
         process_cpu:cpu:nanoseconds:cpu:nanoseconds:delta, \
         process_cpu:samples:count:cpu:nanoseconds:delta"
    );
    // The same for every command that takes a query: a type written without its
    // `:delta` is told apart from a selection that matches nothing.
    let cpu = "process_cpu:cpu:nanoseconds:cpu:nanoseconds";
    for command in ["series", "top", "fold"] {
        let out = flint(&[command, "cpu-1.pb.gz", "--query", cpu]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{command}");
        assert!(
            stderr.starts_with(&format!(
                "error: no profiles of type {cpu}; the types here are"
            )),
            "{command}: {stderr}"
        );
        let nothing = format!("{cpu}:delta{{comm=\"nosuch\"}}");
        let out = flint(&[command, "cpu-1.pb.gz", "--query", &nothing]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(
            stderr.trim_end(),
            format!("error: {nothing}: no data for this selection and range"),
            "{command}"
        );
    }
    assert!(fixtures().join("cpu-1.pb.gz").exists());
}

#[test]
fn text_gives_units_and_cores_and_no_rate_for_a_heap_snapshot() {
    let tsv = flint_ok(&["series", "cpu-1.pb.gz", "--format", "tsv"]);
    let rate: f64 = tsv
        .lines()
        .nth(1)
        .and_then(|l| l.split('\t').nth(3))
        .and_then(|r| r.parse().ok())
        .expect("a rate");
    let text = flint_ok(&["series", "cpu-1.pb.gz"]);
    let fields: Vec<&str> = text.split_whitespace().collect();
    // time, labels, value and its unit, rate and its unit.
    assert_eq!(fields[2..4], ["2.26", "s"], "{text}");
    assert_eq!(
        fields[4..6],
        [format!("{:.3}", rate / 1e9).as_str(), "cores"],
        "{text}"
    );

    let inuse = "memory:inuse_space:bytes:space:bytes";
    let text = flint_ok(&["series", "heap.pb.gz", "-q", inuse]);
    let fields: Vec<&str> = text.split_whitespace().collect();
    assert_eq!(
        fields[4..],
        ["-"],
        "per second means nothing for bytes in use: {text}"
    );
    let tsv = flint_ok(&["series", "heap.pb.gz", "-q", inuse, "--format", "tsv"]);
    let line = tsv.lines().nth(1).unwrap_or("");
    assert!(line.ends_with("\t-"), "no rate: {line:?}");
}

/// The value column of `flint series`'s tsv for `args`, one per line.
fn values(args: &[&str]) -> Vec<String> {
    let mut all = vec!["series"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["--format", "tsv"]);
    flint_ok(&all)
        .lines()
        .skip(1)
        .map(|l| l.split('\t').nth(2).unwrap_or("").to_string())
        .collect()
}

#[test]
fn without_a_query_the_type_is_the_one_pprof_shows() {
    // (fixture, the type `go tool pprof` shows, another type of it)
    for (file, shown, other) in [
        // default_sample_type (field 14) names the second of four types.
        // Without a duration no type is a delta, as Parca names them.
        (
            "../writers/default_sample_type.pb.gz",
            "memory:alloc_space:bytes:space:bytes",
            "memory:alloc_objects:count:space:bytes",
        ),
        // Else the last: a Go heap profile's bytes in use, not its first type.
        (
            "heap.pb.gz",
            "memory:inuse_space:bytes:space:bytes",
            "memory:alloc_objects:count:space:bytes",
        ),
        (
            "../writers/datadog-pprof-heap.pb.gz",
            "inuse_space:inuse_space:bytes:inuse_space:bytes",
            "inuse_space:inuse_objects:count:inuse_space:bytes",
        ),
        // A Node wall profile's wall time, not its sample count.
        (
            "../writers/node-pprof-wall.pb.gz",
            "wall:wall:microseconds:wall:microseconds:delta",
            "wall:sample:count:wall:microseconds:delta",
        ),
    ] {
        let default = values(&[file]);
        assert_eq!(default, values(&[file, "-q", shown]), "{file}");
        assert_ne!(default, values(&[file, "-q", other]), "{file}");
    }
}

#[test]
fn a_profile_shorter_than_its_period_has_no_rate() {
    // 1 ns of 10 ms CPU samples; a thread snapshot pypprof says lasted 1 ns.
    for file in [
        "../writers/rates.pb.gz",
        "../writers/python-pypprof-threads.pb.gz",
    ] {
        let tsv = flint_ok(&["series", file, "--format", "tsv"]);
        let line = tsv.lines().nth(1).unwrap_or("");
        assert!(line.ends_with("\t-"), "{file}: {line:?}");
        let text = flint_ok(&["series", file]);
        assert!(text.trim_end().ends_with(" -"), "{file}: {text}");
    }
    // Next to a profile of 10 s, each keeps its own: a rate and none.
    let tsv = flint_ok(&[
        "series",
        "cpu-1.pb.gz",
        "../writers/rates.pb.gz",
        "--format",
        "tsv",
    ]);
    let rates: Vec<&str> = tsv
        .lines()
        .skip(1)
        .filter_map(|l| l.split('\t').nth(3))
        .collect();
    assert_eq!(rates.len(), 2, "{tsv}");
    assert!(rates.contains(&"-"), "{tsv}");
    assert!(rates.iter().any(|r| r.parse::<f64>().is_ok()), "{tsv}");
}

#[test]
fn profiles_at_the_ends_of_time_are_read_and_merged() {
    // Times 64-bit nanoseconds can just hold (1677 and 2262), each with a duration
    // that runs past the end: every sum and difference of them is out of range.
    let dir = super::edited_copies("times", &["first", "last"], |i, profile| {
        profile.time_nanos = [i64::MIN + 1, i64::MAX - 1][i];
        profile.duration_nanos = i64::MAX;
    });
    let dir = dir.display().to_string();
    let tsv = flint_ok(&["series", &dir, "--format", "tsv", "--sum-by", "path"]);
    assert_eq!(tsv.lines().count(), 3, "{tsv}");
    assert!(tsv.contains("\n1677-09-21T00:12:43"), "{tsv}");
    assert!(tsv.contains("\n2262-04-11T23:47:16"), "{tsv}");
    // Both profiles merged: twice cpu-1's 2.26 s.
    let top = flint_ok(&["top", &dir]);
    assert!(top.contains("Total samples = 4.52s"), "{top}");
    let folded = flint_ok(&["fold", &dir]);
    assert!(!folded.is_empty());
    let _ = std::fs::remove_dir_all(&dir);
}

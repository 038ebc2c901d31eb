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
    assert!(line.ends_with('\t'), "no rate: {line:?}");
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
